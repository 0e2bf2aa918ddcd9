//! The database directory: a manifest naming the catalog and one segment file per table, a lock
//! file, and the `data/` folder. A commit writes new segment files beside the old ones, makes
//! them durable, then atomically replaces the manifest, so a crash at any moment leaves either
//! the old or the new database. Files no manifest names are removed when the database opens.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};

use crate::catalog::Catalog;
use crate::snapshot::{Snapshot, TableData};
use crate::table_files;

const MANIFEST: &str = "warren.manifest";
const MANIFEST_TEMP: &str = "warren.manifest.tmp";
const LOCK: &str = "warren.lock";
const DATA: &str = "data";
const FORMAT: &str = "warren-database";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    generation: u64,
    catalog: Catalog,
    tables: Vec<TableEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TableEntry {
    id: TableId,
    /// Path relative to the database directory.
    file: String,
    rows: u64,
    #[serde(default)]
    next_serial: i64,
}

/// An open database directory, holding its lock for as long as it lives.
#[derive(Debug)]
pub struct DatabaseDir {
    path: PathBuf,
    read_only: bool,
    /// Table files of the committed manifest, by table id.
    files: BTreeMap<TableId, TableEntry>,
    _lock: File,
}

fn lock_file(file: &File, exclusive: bool) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let operation = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    } | libc::LOCK_NB;
    // SAFETY: flock on a file descriptor this process owns; no memory is shared.
    let result = unsafe { libc::flock(file.as_raw_fd(), operation) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// How long opening waits for a lock that is held, before calling the database in use.
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the lock, retrying for [`LOCK_GRACE`]: a child process that another thread of this
/// process is spawning holds a copy of every descriptor from fork to exec (close-on-exec closes
/// them only then), so a database closed and reopened at that moment finds its own lock
/// briefly held. A lock held by another process for longer still fails.
fn lock_with_grace(file: &File, exclusive: bool) -> std::io::Result<()> {
    let started = std::time::Instant::now();
    loop {
        match lock_file(file, exclusive) {
            Err(error)
                if error.kind() == std::io::ErrorKind::WouldBlock
                    && started.elapsed() < LOCK_GRACE =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return result,
        }
    }
}

fn sync_dir(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(path.display(), e))
}

impl DatabaseDir {
    /// Opens (creating if needed) the database at `path` and returns it with its snapshot.
    pub fn open(path: &Path, read_only: bool) -> Result<(Self, Snapshot)> {
        if !path.exists() {
            if read_only {
                return Err(Error::Io(format!(
                    "database {} does not exist",
                    path.display()
                )));
            }
            fs::create_dir_all(path.join(DATA)).map_err(|e| Error::io(path.display(), e))?;
        }
        if !path.is_dir() {
            return Err(Error::Io(format!("{} is not a directory", path.display())));
        }
        let lock = OpenOptions::new()
            .create(!read_only)
            .read(true)
            .write(!read_only)
            .truncate(false)
            .open(path.join(LOCK))
            .map_err(|e| Error::io(path.join(LOCK).display(), e))?;
        lock_with_grace(&lock, !read_only).map_err(|_| {
            Error::Io(format!(
                "Could not set lock on file : {} (database {} is in use by another process)",
                path.join(LOCK).display(),
                path.display()
            ))
        })?;
        let mut dir = Self {
            path: path.to_path_buf(),
            read_only,
            files: BTreeMap::new(),
            _lock: lock,
        };
        let snapshot = dir.load()?;
        if !read_only {
            dir.remove_unreferenced_files()?;
        }
        Ok((dir, snapshot))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&mut self) -> Result<Snapshot> {
        let manifest_path = self.path.join(MANIFEST);
        if !manifest_path.exists() {
            return Ok(Snapshot::default());
        }
        let text = fs::read_to_string(&manifest_path)
            .map_err(|e| Error::io(manifest_path.display(), e))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| Error::Corrupt(format!("{}: {e}", manifest_path.display())))?;
        if manifest.format != FORMAT || manifest.format_version != FORMAT_VERSION {
            return Err(Error::Corrupt(format!(
                "{}: unsupported format {} version {}",
                manifest_path.display(),
                manifest.format,
                manifest.format_version
            )));
        }
        let entries: BTreeMap<TableId, TableEntry> =
            manifest.tables.iter().map(|t| (t.id, t.clone())).collect();
        let tables = self.load_tables(&manifest.catalog, &entries)?;
        self.files = entries;
        Ok(Snapshot::new(manifest.catalog, tables, manifest.generation))
    }

    fn load_tables(
        &self,
        catalog: &Catalog,
        entries: &BTreeMap<TableId, TableEntry>,
    ) -> Result<BTreeMap<TableId, TableData>> {
        let entry = |id: TableId| {
            entries
                .get(&id)
                .ok_or_else(|| Error::Corrupt(format!("manifest lacks table {id}")))
        };
        let mut tables = BTreeMap::new();
        for schema in catalog.node_tables() {
            let e = entry(schema.id)?;
            let types: Vec<LogicalType> = schema.properties.iter().map(|p| p.ty.clone()).collect();
            let table = table_files::read_node_table(
                &self.path.join(&e.file),
                &types,
                e.rows,
                schema.primary_key,
                e.next_serial,
            )?;
            tables.insert(schema.id, TableData::Node(Arc::new(table)));
        }
        for schema in catalog.rel_tables() {
            let types: Vec<LogicalType> = schema.properties.iter().map(|p| p.ty.clone()).collect();
            for pair in &schema.pairs {
                let e = entry(pair.id)?;
                let from_rows = entry(pair.from)?.rows;
                let to_rows = entry(pair.to)?.rows;
                let table = table_files::read_rel_table(
                    &self.path.join(&e.file),
                    &types,
                    e.rows,
                    from_rows,
                    to_rows,
                )?;
                tables.insert(pair.id, TableData::Rel(Arc::new(table)));
            }
        }
        Ok(tables)
    }

    /// Persists `snapshot`: writes the tables in `changed` to new segment files, then swaps the
    /// manifest. On error the directory still holds the previous database.
    pub fn commit(&mut self, snapshot: &Snapshot, changed: &BTreeSet<TableId>) -> Result<()> {
        if self.read_only {
            return Err(Error::runtime(
                "Cannot execute write operations in a read-only database!",
            ));
        }
        let generation = snapshot.generation();
        let mut files = BTreeMap::new();
        for (&id, data) in snapshot.tables() {
            let (rows, next_serial) = match data {
                TableData::Node(t) => (t.num_rows(), t.next_serial()),
                TableData::Rel(t) => (t.num_rows(), 0),
            };
            let file = match self.files.get(&id) {
                Some(existing) if !changed.contains(&id) => existing.file.clone(),
                _ => {
                    let name = format!("{DATA}/t{id}-g{generation}.seg");
                    let path = self.path.join(&name);
                    match data {
                        TableData::Node(t) => table_files::write_node_table(&path, t)?,
                        TableData::Rel(t) => table_files::write_rel_table(&path, t)?,
                    }
                    name
                }
            };
            files.insert(
                id,
                TableEntry {
                    id,
                    file,
                    rows,
                    next_serial,
                },
            );
        }
        sync_dir(&self.path.join(DATA))?;
        let manifest = Manifest {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            generation,
            catalog: snapshot.catalog().clone(),
            tables: files.values().cloned().collect(),
        };
        self.write_manifest(&manifest)?;
        self.files = files;
        self.remove_unreferenced_files()
    }

    fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        let temp = self.path.join(MANIFEST_TEMP);
        let text =
            serde_json::to_string_pretty(manifest).map_err(|e| Error::internal(e.to_string()))?;
        let mut file = File::create(&temp).map_err(|e| Error::io(temp.display(), e))?;
        file.write_all(text.as_bytes())
            .map_err(|e| Error::io(temp.display(), e))?;
        file.sync_all().map_err(|e| Error::io(temp.display(), e))?;
        drop(file);
        fs::rename(&temp, self.path.join(MANIFEST)).map_err(|e| Error::io(temp.display(), e))?;
        sync_dir(&self.path)
    }

    /// Deletes segment files and a leftover temporary manifest that the manifest does not name:
    /// the remains of older generations and of interrupted commits.
    fn remove_unreferenced_files(&self) -> Result<()> {
        let referenced: BTreeSet<&str> = self.files.values().map(|t| t.file.as_str()).collect();
        let data = self.path.join(DATA);
        fs::create_dir_all(&data).map_err(|e| Error::io(data.display(), e))?;
        let entries = fs::read_dir(&data).map_err(|e| Error::io(data.display(), e))?;
        for entry in entries.flatten() {
            let name = format!("{DATA}/{}", entry.file_name().to_string_lossy());
            if !referenced.contains(name.as_str()) {
                fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path().display(), e))?;
            }
        }
        let temp = self.path.join(MANIFEST_TEMP);
        if temp.exists() {
            fs::remove_file(&temp).map_err(|e| Error::io(temp.display(), e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_keeps_others_out_and_a_released_one_does_not() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("db");
        let (first, _) = DatabaseDir::open(&path, false).unwrap();
        let started = std::time::Instant::now();
        let error = DatabaseDir::open(&path, false).unwrap_err().to_string();
        assert!(error.contains("is in use by another process"), "{error}");
        assert!(started.elapsed() >= LOCK_GRACE);
        drop(first);
        DatabaseDir::open(&path, false).unwrap();
    }

    #[test]
    fn a_lock_released_within_the_grace_period_is_taken() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("db");
        let (first, _) = DatabaseDir::open(&path, false).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(LOCK_GRACE / 5);
            drop(first);
        });
        DatabaseDir::open(&path, false).unwrap();
        release.join().unwrap();
    }
}
