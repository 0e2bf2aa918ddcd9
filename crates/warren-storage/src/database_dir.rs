//! The database directory: a manifest naming the catalog and one segment file per table, the
//! write-ahead log (`warren.wal`), a lock file, and the `data/` folder. A checkpoint writes new
//! segment files beside the old ones, makes them durable, then atomically replaces the manifest
//! (which records the last log sequence number the segments contain), so a crash at any moment
//! leaves either the old or the new database. A DDL or `COPY` transaction writes the tables
//! it replaces to segment files too, but names them in a log record (`crate::log_record`);
//! the next checkpoint's manifest names them. Files that neither the manifest nor a log
//! record after its checkpoint names are removed once a writer has replayed the log.
//!
//! Every file operation goes through the I/O layer ([`crate::io::FileSystem`]): the real file
//! system in production, a simulated one that injects crashes and faults in tests.
//!
//! One process writes (it holds the lock file exclusively); any number of processes read
//! without a lock: they map the files the manifest names, and retry if a concurrent checkpoint
//! replaced them in between.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};

use crate::catalog::{Catalog, NodeTableSchema, RelTableSchema};
use crate::io::{self, parent_dir, read_all, write_all_at, FileLock, FileSystem, RealFileSystem};
use crate::node_table::NodeTable;
use crate::rel_table::RelTable;
use crate::snapshot::{Snapshot, TableData};
use crate::table_files;

const MANIFEST: &str = "warren.manifest";
/// The write-ahead log's file name in the database directory.
pub const WAL: &str = "warren.wal";
const MANIFEST_TEMP: &str = "warren.manifest.tmp";
/// The last line of a manifest: this prefix and the CRC-32 (8 hex digits) of the bytes before
/// the line, so that a damaged manifest (or a bad read of it) is refused, never misread.
const MANIFEST_CHECKSUM_PREFIX: &str = "#crc32 ";
const LOCK: &str = "warren.lock";
const DATA: &str = "data";
const FORMAT: &str = "warren-database";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    format_version: u32,
    generation: u64,
    /// Names this database; its write-ahead log carries the same id.
    #[serde(default)]
    database_id: String,
    /// The last log sequence number whose changes the segments contain.
    #[serde(default)]
    checkpoint_lsn: u64,
    catalog: Catalog,
    tables: Vec<TableEntry>,
    /// The persisted graphs of vector indexes (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    vector_indexes: Vec<IndexGraphEntry>,
}

/// The file holding the persisted graph of one vector index (its bytes are the engine's:
/// `docs/format/vector_index.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexGraphEntry {
    pub table: TableId,
    /// The index's name as the catalog spells it.
    pub name: String,
    /// Path relative to the database directory.
    pub file: String,
}

impl IndexGraphEntry {
    fn is_for(&self, table: TableId, name: &str) -> bool {
        self.table == table && self.name.eq_ignore_ascii_case(name)
    }
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
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    read_only: bool,
    /// Table files of the committed manifest, by table id.
    files: BTreeMap<TableId, TableEntry>,
    /// Vector index graph files of the committed manifest.
    graphs: Vec<IndexGraphEntry>,
    /// Tables replaced by catalog changes logged after the manifest's checkpoint, by log
    /// sequence number: their segment file, or `None` for an empty table that has none.
    logged: BTreeMap<u64, BTreeMap<TableId, Option<String>>>,
    /// Segment files written and not yet named by a manifest or a log record: kept from
    /// removal until then.
    unnamed: BTreeSet<String>,
    database_id: [u8; 16],
    checkpoint_lsn: u64,
    /// Set when a manifest swap failed: the manifest on disk may then be the new one while
    /// `files` names the old one's files, so nothing is written or removed any more.
    swap_failure: Option<String>,
    /// Held exclusively by the writing process; readers hold none.
    _lock: Option<FileLock>,
}

/// Segment files written by [`DatabaseDir::write_tables`], not yet named by the manifest.
#[derive(Debug, Default)]
pub struct PendingTables {
    files: BTreeMap<TableId, String>,
    graphs: Vec<IndexGraphEntry>,
}

impl PendingTables {
    /// The files written, by table, relative to the database directory.
    pub fn files(&self) -> &BTreeMap<TableId, String> {
        &self.files
    }
}

/// How a process opens a database directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Take the writer lock; fail if another process holds it.
    Write,
    /// Read without a lock; writes are refused.
    Read,
    /// Take the writer lock if it is free, else open for reading.
    WriteIfFree,
}

/// How long opening waits for a lock that is held, before calling the database in use.
const LOCK_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// How often a reader retries loading a manifest whose files a checkpoint just replaced.
const LOAD_ATTEMPTS_MAX: u32 = 100;

/// A fresh random id for a new database (from the OS's random source, else time and pid).
fn new_database_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    let random = File::open("/dev/urandom").and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut id)
    });
    if random.is_err() || id == [0; 16] {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos());
        id = (nanos ^ (u128::from(std::process::id()) << 64) | 1).to_le_bytes();
    }
    id
}

fn id_to_hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The JSON of a manifest file, its checksum line checked. A manifest written before there
/// was a checksum line is taken as it is (its JSON must still parse whole).
fn manifest_json<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a [u8]> {
    let Some(line) = bytes
        .strip_suffix(b"\n")
        .and_then(|body| body.iter().rposition(|&b| b == b'\n'))
        .map(|at| at + 1)
        .filter(|&at| bytes[at..].starts_with(MANIFEST_CHECKSUM_PREFIX.as_bytes()))
    else {
        return Ok(bytes);
    };
    let digits = &bytes[line + MANIFEST_CHECKSUM_PREFIX.len()..bytes.len() - 1];
    let expected = std::str::from_utf8(digits)
        .ok()
        .filter(|text| text.len() == 8)
        .and_then(|text| u32::from_str_radix(text, 16).ok());
    let json = &bytes[..line];
    if expected != Some(crc32fast::hash(json)) {
        return Err(Error::Corrupt(format!(
            "{}: the manifest's checksum does not match its contents (the file is damaged or \
             was read wrongly)",
            path.display()
        )));
    }
    Ok(json)
}

fn id_from_hex(text: &str) -> Option<[u8; 16]> {
    if text.len() != 32 {
        return None;
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(id)
}

/// Takes the lock, retrying for [`LOCK_GRACE`]: a child process that another thread of this
/// process is spawning holds a copy of every descriptor from fork to exec (close-on-exec closes
/// them only then), so a database closed and reopened at that moment finds its own lock
/// briefly held. A lock held by another process for longer still fails.
/// `None` when the lock stayed held.
fn lock_with_grace(fs: &dyn FileSystem, path: &Path) -> Result<Option<FileLock>> {
    lock_within(fs, path, LOCK_GRACE)
}

/// Takes the lock, retrying every 5 ms for `grace`; `None` when it stayed held that long.
fn lock_within(
    fs: &dyn FileSystem,
    path: &Path,
    grace: std::time::Duration,
) -> Result<Option<FileLock>> {
    let started = std::time::Instant::now();
    loop {
        match fs.try_lock(path)? {
            None if started.elapsed() < grace => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return Ok(result),
        }
    }
}

impl DatabaseDir {
    /// Opens (creating if needed) the database at `path` and returns it with its snapshot.
    pub fn open(path: &Path, read_only: bool) -> Result<(Self, Snapshot)> {
        let mode = if read_only {
            OpenMode::Read
        } else {
            OpenMode::Write
        };
        Self::open_mode(path, mode)
    }

    /// Opens the database at `path` in `mode`. A writer creates it if it does not exist.
    pub fn open_mode(path: &Path, mode: OpenMode) -> Result<(Self, Snapshot)> {
        Self::open_on(Arc::new(RealFileSystem), path, mode)
    }

    /// Opens the database at `path` in `mode`, doing all its file I/O through `fs`.
    pub fn open_on(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        mode: OpenMode,
    ) -> Result<(Self, Snapshot)> {
        if !fs.exists(path)? {
            if mode == OpenMode::Read {
                return Err(Error::Io(format!(
                    "database {} does not exist",
                    path.display()
                )));
            }
            Self::create_dirs(fs.as_ref(), path)?;
        }
        if !fs.is_dir(path)? {
            return Err(Error::Io(format!("{} is not a directory", path.display())));
        }
        let lock = match mode {
            OpenMode::Read => None,
            OpenMode::Write => Some(Self::writer_lock(fs.as_ref(), path)?),
            OpenMode::WriteIfFree => Self::writer_lock(fs.as_ref(), path).ok(),
        };
        let read_only = lock.is_none();
        let mut dir = Self {
            fs,
            path: path.to_path_buf(),
            read_only,
            files: BTreeMap::new(),
            graphs: Vec::new(),
            logged: BTreeMap::new(),
            unnamed: BTreeSet::new(),
            database_id: [0; 16],
            checkpoint_lsn: 0,
            swap_failure: None,
            _lock: lock,
        };
        let snapshot = dir.load_retrying()?;
        if !read_only && dir.database_id == [0; 16] {
            // A new database (or one from before ids existed): name it durably before any log
            // is written for it. (Leftover files are removed by the writer once it has
            // replayed the log, which may name some.)
            dir.database_id = new_database_id();
            let checkpoint_lsn = dir.checkpoint_lsn;
            dir.commit(&snapshot, &BTreeSet::new(), checkpoint_lsn)?;
        }
        Ok((dir, snapshot))
    }

    /// Creates the database directory and its `data/` folder (and missing parents), and makes
    /// every new name durable (the first commit's acknowledgement must not depend on an
    /// unsynced directory entry): each new directory's parent is synced, deepest first.
    fn create_dirs(fs: &dyn FileSystem, path: &Path) -> Result<()> {
        let data = path.join(DATA);
        let mut created = Vec::new();
        for dir in data.ancestors() {
            if dir.as_os_str().is_empty() || fs.is_dir(dir)? {
                break;
            }
            created.push(dir.to_path_buf());
        }
        fs.create_dir_all(&data)?;
        let mut synced: BTreeSet<PathBuf> = BTreeSet::new();
        for dir in [data.as_path(), path]
            .into_iter()
            .chain(created.iter().map(PathBuf::as_path))
        {
            let parent = parent_dir(dir);
            if synced.insert(parent.clone()) {
                fs.sync_dir(&parent)?;
            }
        }
        Ok(())
    }

    fn writer_lock(fs: &dyn FileSystem, path: &Path) -> Result<FileLock> {
        let lock_path = path.join(LOCK);
        lock_with_grace(fs, &lock_path)?.ok_or_else(|| {
            Error::Io(format!(
                "Could not set lock on file : {} (database {} is in use by another process)",
                lock_path.display(),
                path.display()
            ))
        })
    }

    /// Loads the manifest and its tables; a reader retries when a concurrent checkpoint
    /// removed a file between reading the manifest and mapping it.
    fn load_retrying(&mut self) -> Result<Snapshot> {
        let mut attempts = 0;
        loop {
            match self.load() {
                Err(Error::Io(_)) if self.read_only && attempts < LOAD_ATTEMPTS_MAX => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                result => return result,
            }
        }
    }

    /// The file system every file of this database goes through.
    pub fn file_system(&self) -> Arc<dyn FileSystem> {
        self.fs.clone()
    }

    /// Whether this process opened the database without the writer lock.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The id naming this database (and its log).
    pub fn database_id(&self) -> [u8; 16] {
        self.database_id
    }

    /// The last log sequence number the segments contain.
    pub fn checkpoint_lsn(&self) -> u64 {
        self.checkpoint_lsn
    }

    /// Re-reads the manifest (a reader whose log no longer continues it).
    pub fn reload(&mut self) -> Result<Snapshot> {
        self.load_retrying()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&mut self) -> Result<Snapshot> {
        let manifest_path = self.path.join(MANIFEST);
        if !self.fs.exists(&manifest_path)? {
            return Ok(Snapshot::default());
        }
        // The manifest holds the catalog and one entry per table: reading it is O(catalog).
        let file = self.fs.open(&manifest_path, io::OpenMode::Read)?;
        let bytes = read_all(file.as_ref())?;
        let json = manifest_json(&bytes, &manifest_path)?;
        let manifest: Manifest = serde_json::from_slice(json)
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
        self.checkpoint_lsn = manifest.checkpoint_lsn;
        self.graphs = manifest.vector_indexes;
        if !manifest.database_id.is_empty() {
            self.database_id = id_from_hex(&manifest.database_id).ok_or_else(|| {
                Error::Corrupt(format!("{}: invalid database id", manifest_path.display()))
            })?;
        }
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
            let table = self.load_node_table(schema, &e.file, e.rows, e.next_serial)?;
            tables.insert(schema.id, TableData::Node(Arc::new(table)));
        }
        for schema in catalog.rel_tables() {
            for pair in &schema.pairs {
                let e = entry(pair.id)?;
                let from_rows = entry(pair.from)?.rows;
                let to_rows = entry(pair.to)?.rows;
                let table = self.load_rel_table(schema, &e.file, e.rows, from_rows, to_rows)?;
                tables.insert(pair.id, TableData::Rel(Arc::new(table)));
            }
        }
        Ok(tables)
    }

    /// Maps the node table in segment file `file` (relative to the directory).
    pub fn load_node_table(
        &self,
        schema: &NodeTableSchema,
        file: &str,
        rows: u64,
        next_serial: i64,
    ) -> Result<NodeTable> {
        let types: Vec<LogicalType> = schema.properties.iter().map(|p| p.ty.clone()).collect();
        table_files::read_node_table(
            self.fs.as_ref(),
            &self.segment_path(file)?,
            &types,
            rows,
            schema.primary_key,
            next_serial,
        )
    }

    /// Maps the rel pair in segment file `file` (relative to the directory).
    pub fn load_rel_table(
        &self,
        schema: &RelTableSchema,
        file: &str,
        rows: u64,
        from_rows: u64,
        to_rows: u64,
    ) -> Result<RelTable> {
        let types: Vec<LogicalType> = schema.properties.iter().map(|p| p.ty.clone()).collect();
        table_files::read_rel_table(
            self.fs.as_ref(),
            &self.segment_path(file)?,
            &types,
            rows,
            from_rows,
            to_rows,
        )
    }

    /// The path of a segment file named in the manifest or the log: a file in `data/`.
    fn segment_path(&self, file: &str) -> Result<PathBuf> {
        let name = file.strip_prefix(&format!("{DATA}/")).unwrap_or_default();
        let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != "..";
        if !plain {
            return Err(Error::Corrupt(format!(
                "{}: segment file {file:?} is not in {DATA}/",
                self.path.display()
            )));
        }
        Ok(self.path.join(file))
    }

    /// Persists `snapshot` (which must hold no deltas): writes the tables in `changed` to new
    /// segment files, then swaps the manifest, recording that the segments contain every
    /// change up to log sequence number `checkpoint_lsn`. On error the directory holds the
    /// previous database or, when the error came after the manifest's rename (its directory
    /// sync failed), possibly the new one: the caller must not go on writing as if either.
    /// Used to write a new database's first manifest; commits go through the log, and
    /// checkpoints through [`DatabaseDir::write_tables`] and [`DatabaseDir::swap_manifest`].
    fn commit(
        &mut self,
        snapshot: &Snapshot,
        changed: &BTreeSet<TableId>,
        checkpoint_lsn: u64,
    ) -> Result<()> {
        let pending = self.write_tables(snapshot, changed)?;
        self.swap_manifest(snapshot, pending, checkpoint_lsn)?;
        // The commit is durable: files left behind by a failed removal are removed at the
        // next writer's open.
        let _ = self.remove_unreferenced();
        Ok(())
    }

    /// Writes the tables in `changed` (which must hold no deltas) to new segment files and
    /// makes them durable; nothing refers to them until [`DatabaseDir::swap_manifest`].
    pub fn write_tables(
        &mut self,
        snapshot: &Snapshot,
        changed: &BTreeSet<TableId>,
    ) -> Result<PendingTables> {
        self.check_writable()?;
        let generation = snapshot.generation();
        let mut files = BTreeMap::new();
        for &id in changed {
            let Some(data) = snapshot.tables().get(&id) else {
                continue;
            };
            let name = format!("{DATA}/t{id}-g{generation}.seg");
            assert!(
                self.files.values().all(|entry| entry.file != name),
                "a new segment file would replace one the manifest names"
            );
            assert!(
                !self.logged_files().contains(name.as_str()),
                "a new segment file would replace one a log record names"
            );
            let path = self.path.join(&name);
            if self.fs.exists(&path)? {
                // The remains of an interrupted commit of the same generation.
                self.fs.remove(&path)?;
            }
            let fs = self.fs.as_ref();
            match data {
                TableData::Node(t) => {
                    assert!(!t.has_delta(), "a checkpoint writes folded tables");
                    table_files::write_node_table(fs, &path, t)?;
                }
                TableData::Rel(t) => {
                    assert!(!t.has_delta(), "a checkpoint writes folded tables");
                    table_files::write_rel_table(fs, &path, t)?;
                }
            }
            self.unnamed.insert(name.clone());
            files.insert(id, name);
        }
        // The new files' names must be durable before a manifest or a log record names them.
        self.fs.sync_dir(&self.path.join(DATA))?;
        Ok(PendingTables {
            files,
            graphs: Vec::new(),
        })
    }

    /// Writes `bytes`, the graph of vector index `name` of `table` as of `snapshot`'s
    /// generation, to a new file in `data/` and makes it and its name durable; `pending`'s
    /// manifest will name it (until then nothing does, and a crash leaves a file the next open
    /// removes).
    pub fn write_index_graph(
        &mut self,
        pending: &mut PendingTables,
        generation: u64,
        table: TableId,
        name: &str,
        bytes: &[u8],
    ) -> Result<()> {
        self.check_writable()?;
        let file = graph_file_name(table, generation, name);
        assert!(
            self.graphs.iter().all(|entry| entry.file != file),
            "a new graph file would replace one the manifest names"
        );
        let path = self.path.join(&file);
        if self.fs.exists(&path)? {
            // The remains of an interrupted checkpoint of the same generation.
            self.fs.remove(&path)?;
        }
        let handle = self.fs.open(&path, io::OpenMode::CreateNew)?;
        write_all_at(handle.as_ref(), 0, bytes)?;
        handle.sync_data()?;
        drop(handle);
        self.fs.sync_dir(&self.path.join(DATA))?;
        self.unnamed.insert(file.clone());
        pending.graphs.retain(|entry| !entry.is_for(table, name));
        pending.graphs.push(IndexGraphEntry {
            table,
            name: name.to_string(),
            file,
        });
        Ok(())
    }

    /// The graph file the committed manifest names for vector index `name` of `table`.
    pub fn index_graph(&self, table: TableId, name: &str) -> Option<PathBuf> {
        let entry = self.graphs.iter().find(|entry| entry.is_for(table, name))?;
        self.segment_path(&entry.file).ok()
    }

    /// Every graph file the committed manifest names.
    pub fn index_graphs(&self) -> &[IndexGraphEntry] {
        &self.graphs
    }

    /// Records that the log record at `lsn` names `files` (a table's segment file, or `None`
    /// for an empty table): they are kept until a checkpoint's manifest names them instead.
    pub fn note_logged(&mut self, lsn: u64, files: BTreeMap<TableId, Option<String>>) {
        if lsn <= self.checkpoint_lsn || files.is_empty() {
            return;
        }
        for file in files.values().flatten() {
            self.unnamed.remove(file);
        }
        self.logged.insert(lsn, files);
    }

    /// The tables of `snapshot` (the database as of log sequence number `lsn`) that have no
    /// segment file: empty tables created or altered by a logged catalog change. A checkpoint
    /// writes them.
    pub fn unfiled(&self, snapshot: &Snapshot, lsn: u64) -> BTreeSet<TableId> {
        snapshot
            .tables()
            .keys()
            .copied()
            .filter(|&id| self.file_as_of(id, lsn).is_none())
            .collect()
    }

    /// The segment file holding table `id` as of log sequence number `lsn`: the latest log
    /// record up to `lsn` that replaced it decides, else the manifest.
    fn file_as_of(&self, id: TableId, lsn: u64) -> Option<String> {
        let logged = self
            .logged
            .range(..=lsn)
            .rev()
            .find_map(|(_, files)| files.get(&id));
        match logged {
            Some(file) => file.clone(),
            None => self.files.get(&id).map(|entry| entry.file.clone()),
        }
    }

    fn logged_files(&self) -> BTreeSet<&str> {
        self.logged
            .values()
            .flat_map(BTreeMap::values)
            .flatten()
            .map(String::as_str)
            .collect()
    }

    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::runtime(
                "Cannot execute write operations in a read-only database!",
            ));
        }
        if let Some(failure) = &self.swap_failure {
            return Err(Error::Io(format!(
                "{}: a manifest swap failed ({failure}); reopen the database",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Atomically replaces the manifest: `snapshot`'s catalog (the database as of
    /// `checkpoint_lsn`, folded), the files of `pending` for the tables written, and for the
    /// others the file a log record up to `checkpoint_lsn` or the current manifest names.
    pub fn swap_manifest(
        &mut self,
        snapshot: &Snapshot,
        pending: PendingTables,
        checkpoint_lsn: u64,
    ) -> Result<()> {
        self.check_writable()?;
        let mut files = BTreeMap::new();
        for (&id, data) in snapshot.tables() {
            let (rows, next_serial) = match data {
                TableData::Node(t) => (t.num_stored_rows(), t.next_serial()),
                TableData::Rel(t) => (t.num_stored_rows(), 0),
            };
            let file = match pending.files.get(&id) {
                Some(name) => name.clone(),
                None => self
                    .file_as_of(id, checkpoint_lsn)
                    .ok_or_else(|| Error::internal(format!("table {id} has no segment file")))?,
            };
            let entry = TableEntry {
                id,
                file,
                rows,
                next_serial,
            };
            files.insert(id, entry);
        }
        let graphs = self.graphs_after(snapshot, &pending);
        let manifest = Manifest {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            generation: snapshot.generation(),
            database_id: id_to_hex(&self.database_id),
            checkpoint_lsn,
            catalog: snapshot.catalog().clone(),
            tables: files.values().cloned().collect(),
            vector_indexes: graphs.clone(),
        };
        if let Err(error) = self.write_manifest(&manifest) {
            self.swap_failure = Some(error.to_string());
            return Err(error);
        }
        self.files = files;
        self.graphs = graphs;
        self.checkpoint_lsn = checkpoint_lsn;
        self.logged = self.logged.split_off(&(checkpoint_lsn + 1));
        for name in pending.files.values() {
            self.unnamed.remove(name);
        }
        for entry in &pending.graphs {
            self.unnamed.remove(&entry.file);
        }
        Ok(())
    }

    /// The graph files a new manifest names: those just written, and the current ones of
    /// indexes `snapshot`'s catalog still holds (a dropped index's file is left unnamed, and
    /// removed).
    fn graphs_after(&self, snapshot: &Snapshot, pending: &PendingTables) -> Vec<IndexGraphEntry> {
        let defined = snapshot.catalog().vector_indexes();
        let exists = |entry: &IndexGraphEntry| {
            defined
                .iter()
                .any(|index| entry.is_for(index.table, &index.name))
        };
        let rewritten = |entry: &IndexGraphEntry| {
            pending
                .graphs
                .iter()
                .any(|p| p.is_for(entry.table, &entry.name))
        };
        let mut graphs: Vec<IndexGraphEntry> = self
            .graphs
            .iter()
            .filter(|entry| exists(entry) && !rewritten(entry))
            .cloned()
            .collect();
        graphs.extend(pending.graphs.iter().filter(|entry| exists(entry)).cloned());
        graphs.sort_by(|a, b| (a.table, &a.name).cmp(&(b.table, &b.name)));
        graphs
    }

    /// Deletes files the manifest no longer names (readers that mapped them keep them alive).
    pub fn remove_unreferenced(&self) -> Result<()> {
        self.check_writable()?;
        self.remove_unreferenced_files()
    }

    /// The commit point: the new manifest is written to a temporary file and made durable,
    /// then renamed over the old one (atomic: a reader or a crash sees one or the other), and
    /// the directory is synced so that the rename itself survives a crash.
    fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        let temp = self.path.join(MANIFEST_TEMP);
        let mut text =
            serde_json::to_string_pretty(manifest).map_err(|e| Error::internal(e.to_string()))?;
        text.push('\n');
        let checksum = crc32fast::hash(text.as_bytes());
        text.push_str(&format!("{MANIFEST_CHECKSUM_PREFIX}{checksum:08x}\n"));
        if self.fs.exists(&temp)? {
            self.fs.remove(&temp)?;
        }
        let file = self.fs.open(&temp, io::OpenMode::CreateNew)?;
        write_all_at(file.as_ref(), 0, text.as_bytes())?;
        file.sync_data()?;
        drop(file);
        self.fs.rename(&temp, &self.path.join(MANIFEST))?;
        self.fs.sync_dir(&self.path)
    }

    /// Deletes segment files and a leftover temporary manifest that neither the manifest nor a
    /// log record after its checkpoint names (and that no commit is writing): the remains of
    /// older generations and of interrupted commits.
    fn remove_unreferenced_files(&self) -> Result<()> {
        let mut referenced: BTreeSet<&str> = self.files.values().map(|t| t.file.as_str()).collect();
        referenced.extend(self.graphs.iter().map(|g| g.file.as_str()));
        referenced.extend(self.logged_files());
        referenced.extend(self.unnamed.iter().map(String::as_str));
        let data = self.path.join(DATA);
        self.fs.create_dir_all(&data)?;
        for path in self.fs.list_dir(&data)? {
            let file_name = path.file_name().unwrap_or_default().to_string_lossy();
            let name = format!("{DATA}/{file_name}");
            if !referenced.contains(name.as_str()) {
                self.fs.remove(&path)?;
            }
        }
        let temp = self.path.join(MANIFEST_TEMP);
        if self.fs.exists(&temp)? {
            self.fs.remove(&temp)?;
        }
        Ok(())
    }
}

/// The name of a graph file: `data/t<table>-g<generation>-<index>.hnsw`, the index name
/// lower-cased, with every byte other than an ASCII letter, digit or `_` written as `%xx`.
fn graph_file_name(table: TableId, generation: u64, name: &str) -> String {
    let mut plain = String::with_capacity(name.len());
    for byte in name.to_lowercase().bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' {
            plain.push(char::from(byte));
        } else {
            plain.push_str(&format!("%{byte:02x}"));
        }
    }
    format!("{DATA}/t{table}-g{generation}-{plain}.hnsw")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_file_names_are_plain_and_distinct() {
        assert_eq!(graph_file_name(3, 7, "Doc_Emb"), "data/t3-g7-doc_emb.hnsw");
        assert_eq!(graph_file_name(3, 7, "a/b.c"), "data/t3-g7-a%2fb%2ec.hnsw");
        assert_ne!(graph_file_name(3, 7, "a%2f"), graph_file_name(3, 7, "a/"));
    }

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

    /// The waiting itself, with a grace far longer than the release takes on a busy machine
    /// (with `LOCK_GRACE`, a releasing thread scheduled late would make this test fail).
    #[test]
    fn a_lock_released_within_the_grace_period_is_taken() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("lock");
        let held = RealFileSystem
            .try_lock(&path)
            .unwrap()
            .expect("a free lock");
        let release = std::thread::spawn(move || {
            std::thread::sleep(LOCK_GRACE / 5);
            drop(held);
        });
        let taken = lock_within(&RealFileSystem, &path, std::time::Duration::from_secs(60));
        assert!(taken.unwrap().is_some(), "the released lock was not taken");
        release.join().unwrap();
    }
}
