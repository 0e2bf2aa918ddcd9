//! A database: either a directory on disk or in memory. It holds the current snapshot; every
//! committed change replaces it atomically (and, on disk, is made durable first). Writers are
//! serialized by a lock; readers never wait.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use warren_common::{Error, Result, TableId};
use warren_storage::{DatabaseDir, Snapshot};

use crate::connection::Connection;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatabaseOptions {
    /// Open without writing (a shared lock; several readers may coexist).
    pub read_only: bool,
}

#[derive(Debug)]
pub(crate) struct Inner {
    dir: Option<Mutex<DatabaseDir>>,
    snapshot: RwLock<Arc<Snapshot>>,
    /// Held while a change is persisted and published.
    writer: Mutex<()>,
    read_only: bool,
}

/// A handle to an open database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Database {
    inner: Arc<Inner>,
}

impl Database {
    /// Opens the database in directory `path`, creating it if needed.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, DatabaseOptions::default())
    }

    pub fn open_with(path: impl AsRef<Path>, options: DatabaseOptions) -> Result<Self> {
        let (dir, snapshot) = DatabaseDir::open(path.as_ref(), options.read_only)?;
        Ok(Self {
            inner: Arc::new(Inner {
                dir: Some(Mutex::new(dir)),
                snapshot: RwLock::new(Arc::new(snapshot)),
                writer: Mutex::new(()),
                read_only: options.read_only,
            }),
        })
    }

    /// A database that lives in memory only.
    pub fn in_memory() -> Self {
        Self {
            inner: Arc::new(Inner {
                dir: None,
                snapshot: RwLock::new(Arc::new(Snapshot::default())),
                writer: Mutex::new(()),
                read_only: false,
            }),
        }
    }

    pub fn connect(&self) -> Connection {
        Connection::new(self.clone())
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.inner.snapshot.read().expect("snapshot lock").clone()
    }

    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    /// Publishes `snapshot`, built from the snapshot of generation `base`: persists the changed
    /// tables (on disk) and swaps it in. Fails if another writer committed since `base`.
    pub(crate) fn commit(
        &self,
        base: u64,
        snapshot: Snapshot,
        changed: &BTreeSet<TableId>,
    ) -> Result<()> {
        if self.inner.read_only {
            return Err(Error::runtime(
                "Cannot execute write operations in a read-only database!",
            ));
        }
        let _writer = self.inner.writer.lock().expect("writer lock");
        let current = self.snapshot().generation();
        if current != base {
            return Err(Error::runtime(
                "Write-write conflict: another connection committed a change after this transaction started.",
            ));
        }
        if let Some(dir) = &self.inner.dir {
            dir.lock()
                .expect("directory lock")
                .commit(&snapshot, changed)?;
        }
        *self.inner.snapshot.write().expect("snapshot lock") = Arc::new(snapshot);
        Ok(())
    }
}
