//! `warren._warren.Database`: an open database and the connections made to it, so that closing
//! the database closes them too (and releases the directory's lock at once).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// A connection slot: `None` once the connection or its database is closed.
pub type ConnectionSlot = Mutex<Option<warren::Connection>>;

/// What a database shares with its connections and results.
#[derive(Debug, Default)]
pub struct Shared {
    closed: AtomicBool,
    connections: Mutex<Vec<Weak<ConnectionSlot>>>,
}

impl Shared {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Registers a connection so that closing the database closes it.
    fn register(&self, slot: &Arc<ConnectionSlot>) {
        let mut connections = self.connections.lock().expect("connections lock");
        connections.retain(|weak| weak.strong_count() > 0);
        connections.push(Arc::downgrade(slot));
    }

    /// Marks the database closed and drops every connection's handle to it.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let connections = std::mem::take(&mut *self.connections.lock().expect("connections lock"));
        for slot in connections.iter().filter_map(Weak::upgrade) {
            slot.lock().expect("connection lock").take();
        }
    }
}

#[pyclass(name = "Database", module = "warren._warren")]
pub struct PyDatabase {
    db: Mutex<Option<warren::Database>>,
    shared: Arc<Shared>,
}

#[pymethods]
impl PyDatabase {
    /// Opens (creating if needed) the database directory at `path`, or an in-memory database
    /// when `path` is `None`, empty or `:memory:`.
    #[new]
    #[pyo3(signature = (path=None, read_only=false, auto_checkpoint=true, checkpoint_threshold=-1, enable_checksums=true))]
    fn new(
        py: Python<'_>,
        path: Option<String>,
        read_only: bool,
        auto_checkpoint: bool,
        checkpoint_threshold: i64,
        enable_checksums: bool,
    ) -> PyResult<Self> {
        let in_memory = matches!(path.as_deref(), None | Some("") | Some(":memory:"));
        let db = if in_memory {
            if read_only {
                return Err(PyRuntimeError::new_err(
                    "Cannot open an in-memory database under READ ONLY mode.",
                ));
            }
            warren::Database::in_memory()
        } else {
            let path = path.unwrap_or_default();
            let mut options = warren::DatabaseOptions {
                read_only,
                auto_checkpoint,
                enable_checksums,
                ..warren::DatabaseOptions::default()
            };
            // Kùzu's -1 means "the default threshold".
            if let Ok(bytes) = u64::try_from(checkpoint_threshold) {
                options.checkpoint_threshold_bytes = bytes;
            }
            py.detach(|| warren::Database::open_with(&path, options))
                .map_err(crate::connection::runtime_error)?
        };
        // An in-memory database has no log to checkpoint, but reports the settings as given.
        let settings = [
            (
                "auto_checkpoint",
                Some(warren::Value::Bool(auto_checkpoint)),
            ),
            (
                "checkpoint_threshold",
                (checkpoint_threshold >= 0).then_some(warren::Value::Int64(checkpoint_threshold)),
            ),
        ];
        for (name, value) in settings {
            if let Some(value) = value {
                if let Some(result) = db.set_setting(name, &value) {
                    result.map_err(crate::connection::runtime_error)?;
                }
            }
        }
        Ok(Self {
            db: Mutex::new(Some(db)),
            shared: Arc::new(Shared::default()),
        })
    }

    /// Closes the database and every connection to it; a second call does nothing. A query
    /// running on one of its connections is waited for, with the GIL released.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            self.shared.close();
            self.db.lock().expect("database lock").take();
        });
    }

    #[getter]
    fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    #[getter]
    fn is_read_only(&self) -> bool {
        self.database().is_ok_and(|db| db.is_read_only())
    }
}

impl PyDatabase {
    /// The open database, or the error Kùzu gives for a closed one.
    fn database(&self) -> PyResult<warren::Database> {
        self.db
            .lock()
            .expect("database lock")
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("Database is closed"))
    }

    /// A new connection slot, registered with this database.
    pub fn connect(&self) -> PyResult<(Arc<ConnectionSlot>, Arc<Shared>)> {
        let connection = self.database()?.connect();
        let slot = Arc::new(Mutex::new(Some(connection)));
        self.shared.register(&slot);
        Ok((slot, self.shared.clone()))
    }
}
