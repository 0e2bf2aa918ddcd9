//! A database: either a directory on disk or in memory. It publishes immutable snapshots:
//! readers take the published one and never wait. One writer at a time holds the writer slot
//! ([`WriteLock`]) and builds on the latest snapshot. A commit of row changes appends one
//! frame to the write-ahead log under the slot, releases the slot, and waits for the log to be
//! durable (commits waiting together share one `fdatasync`: group commit); only then is its
//! snapshot published. DDL and COPY commit the same way, with a catalog change record that
//! names the segment files they wrote for the tables they replaced. A checkpoint folds the
//! deltas into new segment files without stopping readers or the writer, then swaps the
//! manifest and rebases the commits that came in meanwhile. See `docs/format/storage.md`.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

use warren_common::{Error, Result, Value};
use warren_storage::database_dir::{OpenMode, WAL};
use warren_storage::editor::Changes;
use warren_storage::io::{FileSystem, RealFileSystem};
use warren_storage::log_record::{fold_replaced, CatalogChange, LogRecord};
use warren_storage::wal::{HeldLog, LogCursor, RecoveredFrame, Wal};
use warren_storage::{DatabaseDir, Snapshot};

use crate::connection::Connection;

/// Kùzu's default `checkpoint_threshold`: a log larger than this is checkpointed.
pub const CHECKPOINT_THRESHOLD_BYTES_DEFAULT: u64 = 16 << 20;

/// A rel table whose delta holds more than this share of its stored rels (and at least
/// [`DELTA_CHANGES_MIN`] changes) is checkpointed too: traversals read the delta through a
/// merged CSR, and a large delta makes every first traversal after a commit longer.
pub const DELTA_SHARE_MAX: f64 = 0.05;
pub const DELTA_CHANGES_MIN: usize = 1 << 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseOptions {
    /// Open without writing: no lock, any number of reading processes may coexist with one
    /// writing process.
    pub read_only: bool,
    /// Open for writing if no other process writes, else for reading (the command line's
    /// mode: many `warren query` processes may read one database at once).
    pub write_if_free: bool,
    /// Checkpoint automatically when the log passes `checkpoint_threshold_bytes`.
    pub auto_checkpoint: bool,
    pub checkpoint_threshold_bytes: u64,
    /// Checkpoint when the last handle is dropped, so the next open replays nothing (Kùzu's
    /// `force_checkpoint_on_close`).
    pub checkpoint_on_close: bool,
    /// Whether the write-ahead log's frames carry checksums (Kùzu's `enable_checksums`). A
    /// log with frames written in the other mode is not replayed: the open fails.
    pub enable_checksums: bool,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        Self {
            read_only: false,
            write_if_free: false,
            auto_checkpoint: true,
            checkpoint_threshold_bytes: CHECKPOINT_THRESHOLD_BYTES_DEFAULT,
            checkpoint_on_close: true,
            enable_checksums: true,
        }
    }
}

/// A commit in the log after the last checkpoint: (LSN, transaction id, payload).
type LoggedCommit = (u64, u64, Arc<[u8]>);

/// The published (durable) snapshot and the last log sequence number it contains.
#[derive(Debug)]
struct Published {
    snapshot: Arc<Snapshot>,
    lsn: u64,
}

#[derive(Debug)]
struct WriterState {
    /// Whether a [`WriteLock`] is out.
    held: bool,
    /// The snapshot the next write builds on (published, or logged and about to be).
    latest: Arc<Snapshot>,
    /// The log sequence number of `latest`.
    latest_lsn: u64,
    /// Log records after the last checkpoint, for rebasing a background checkpoint.
    since_checkpoint: Vec<LoggedCommit>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    dir: Option<Mutex<DatabaseDir>>,
    wal: Option<Wal>,
    published: RwLock<Published>,
    writer: Mutex<WriterState>,
    writer_free: Condvar,
    /// Set when a write of the log or of the database directory failed (the disk's state is
    /// unknown from then on): the database refuses writes, readers go on.
    failure: Mutex<Option<String>>,
    read_only: bool,
    /// Why a database opened for writing is read-only (another process writes).
    read_only_reason: Option<String>,
    settings: DatabaseSettings,
    checkpoint_running: AtomicBool,
    /// The background checkpoint thread, if one was started.
    background: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Serializes checkpoints (explicit, background and on close). Never taken while holding
    /// the writer slot: a checkpoint takes the slot while holding this lock.
    checkpoint_lock: Mutex<()>,
    next_transaction: AtomicU64,
    /// In a process that reads a database another process writes: where its reading of the
    /// log stopped, just past the last frame the published snapshot holds (`None`: there was
    /// no log), so that a refresh reads only the frames appended since. `None` here for a
    /// database this process writes (or in memory).
    reader_cursor: Option<Mutex<Option<LogCursor>>>,
    /// The log that reading process keeps open between refreshes (`Wal::read_after_held`:
    /// while it is still the file at the log's path, a refresh is a `stat` and a `pread`);
    /// taken under `reader_cursor`'s lock.
    reader_log: Mutex<Option<HeldLog>>,
    /// The vector index graphs built from the tables (see `warren_exec::vector_index`).
    vector_indexes: Arc<warren_exec::vector_index::VectorIndexCache>,
    /// The int8 copies of stored vector blocks (see `warren_exec::vector_copy`).
    vector_copies: Arc<warren_exec::vector_copy::VectorCopyCache>,
    /// Idle one-source search states that queries reuse (bounded; see
    /// `warren_exec::recursive::state_pool`).
    search_states: Arc<warren_exec::recursive::state_pool::SearchStatePool>,
    /// Idle spreading activation states that queries reuse (bounded; see
    /// `warren_exec::recursive::spread`).
    spread_states: Arc<warren_exec::recursive::spread::SpreadStatePool>,
    /// The threads queries' parallel loops run on, kept between queries (see
    /// `warren_exec::workers`).
    workers: Arc<warren_exec::workers::WorkerPool>,
}

/// A handle to an open database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Database {
    inner: Arc<Inner>,
    /// Shared by the handles users hold (not by a background checkpoint's): when the last one
    /// goes, a running checkpoint is waited for, so the database is closed (its lock released)
    /// once the last handle is dropped.
    _user: Option<Arc<UserHandles>>,
}

#[derive(Debug)]
struct UserHandles {
    inner: Arc<Inner>,
}

impl Drop for UserHandles {
    fn drop(&mut self) {
        let running = self.inner.background.lock().expect("background").take();
        if let Some(thread) = running {
            let _ = thread.join();
        }
        let db = Database {
            inner: self.inner.clone(),
            _user: None,
        };
        if db
            .inner
            .settings
            .checkpoint_on_close
            .load(Ordering::Relaxed)
            && db.wal_frames() > 0
        {
            // A failed checkpoint leaves the log whole: the next open replays it.
            let _ = db.checkpoint();
        }
    }
}

/// The graph files `dir`'s manifest names, for the vector index cache to read at first use.
fn persisted_graphs(dir: &DatabaseDir) -> warren_exec::vector_index::PersistedGraphs {
    warren_exec::vector_index::PersistedGraphs {
        fs: dir.file_system(),
        files: dir
            .index_graphs()
            .iter()
            .map(|entry| {
                (
                    entry.table,
                    entry.name.clone(),
                    dir.path().join(&entry.file),
                )
            })
            .collect(),
    }
}

/// The settings of a database that a connection may change at run time (`CALL name=value`),
/// as Kùzu has them.
#[derive(Debug)]
struct DatabaseSettings {
    auto_checkpoint: AtomicBool,
    checkpoint_threshold_bytes: AtomicU64,
    checkpoint_on_close: AtomicBool,
}

/// The writer slot: while held, no other write starts. Released on drop.
#[derive(Debug)]
pub struct WriteLock {
    inner: Arc<Inner>,
    latest: Arc<Snapshot>,
}

impl WriteLock {
    /// The snapshot this write builds on.
    pub fn latest(&self) -> &Arc<Snapshot> {
        &self.latest
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let mut state = self.inner.writer.lock().expect("writer state");
        assert!(state.held, "writer slot released twice");
        state.held = false;
        drop(state);
        self.inner.writer_free.notify_one();
    }
}

impl Database {
    /// Opens the database in directory `path`, creating it if needed.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, DatabaseOptions::default())
    }

    pub fn open_with(path: impl AsRef<Path>, options: DatabaseOptions) -> Result<Self> {
        Self::open_with_file_system(path, options, Arc::new(RealFileSystem))
    }

    /// Opens a database whose every file (log, segments, manifest, lock) goes through `fs`:
    /// tests pass a simulated file system that injects faults and crashes.
    pub fn open_with_file_system(
        path: impl AsRef<Path>,
        options: DatabaseOptions,
        fs: Arc<dyn FileSystem>,
    ) -> Result<Self> {
        let path = path.as_ref();
        let mode = match (options.read_only, options.write_if_free) {
            (true, _) => OpenMode::Read,
            (false, true) => OpenMode::WriteIfFree,
            (false, false) => OpenMode::Write,
        };
        let (mut dir, snapshot) = DatabaseDir::open_on(fs.clone(), path, mode)?;
        let mut reader_cursor = None;
        let (wal, snapshot, lsn, since_checkpoint) = if dir.is_read_only() {
            let (snapshot, lsn, cursor) = read_committed(&mut dir, snapshot, &fs)?;
            reader_cursor = Some(cursor);
            (None, snapshot, lsn, Vec::new())
        } else {
            let (wal, snapshot, lsn, frames) =
                recover(&mut dir, snapshot, &fs, options.enable_checksums)?;
            // The remains of interrupted commits and checkpoints: files neither the manifest
            // nor a replayed log record names.
            dir.remove_unreferenced()?;
            (Some(wal), snapshot, lsn, frames)
        };
        let read_only = dir.is_read_only();
        let read_only_reason = (read_only && !options.read_only).then(|| {
            format!(
                "database {} is open for writing in another process; this process reads only",
                path.display()
            )
        });
        Ok(Self::assemble(
            Some(dir),
            wal,
            snapshot,
            lsn,
            since_checkpoint,
            read_only,
            read_only_reason,
            options,
            reader_cursor,
        ))
    }

    /// A database that lives in memory only.
    pub fn in_memory() -> Self {
        Self::assemble(
            None,
            None,
            Snapshot::default(),
            0,
            Vec::new(),
            false,
            None,
            DatabaseOptions::default(),
            None,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        dir: Option<DatabaseDir>,
        wal: Option<Wal>,
        snapshot: Snapshot,
        lsn: u64,
        since_checkpoint: Vec<LoggedCommit>,
        read_only: bool,
        read_only_reason: Option<String>,
        options: DatabaseOptions,
        reader_cursor: Option<Option<LogCursor>>,
    ) -> Self {
        let snapshot = Arc::new(snapshot);
        let vector_indexes = Arc::new(warren_exec::vector_index::VectorIndexCache::default());
        if let Some(dir) = &dir {
            vector_indexes.set_persisted(persisted_graphs(dir));
        }
        let inner = Arc::new(Inner {
            dir: dir.map(Mutex::new),
            wal,
            published: RwLock::new(Published {
                snapshot: snapshot.clone(),
                lsn,
            }),
            writer: Mutex::new(WriterState {
                held: false,
                latest: snapshot,
                latest_lsn: lsn,
                since_checkpoint,
            }),
            writer_free: Condvar::new(),
            failure: Mutex::new(None),
            read_only,
            read_only_reason,
            settings: DatabaseSettings {
                auto_checkpoint: AtomicBool::new(options.auto_checkpoint),
                checkpoint_threshold_bytes: AtomicU64::new(options.checkpoint_threshold_bytes),
                checkpoint_on_close: AtomicBool::new(options.checkpoint_on_close),
            },
            checkpoint_running: AtomicBool::new(false),
            background: Mutex::new(None),
            checkpoint_lock: Mutex::new(()),
            next_transaction: AtomicU64::new(1),
            reader_cursor: reader_cursor.map(Mutex::new),
            reader_log: Mutex::new(None),
            vector_indexes,
            vector_copies: Arc::default(),
            search_states: Arc::default(),
            spread_states: Arc::default(),
            workers: Arc::default(),
        });
        Self {
            _user: Some(Arc::new(UserHandles {
                inner: inner.clone(),
            })),
            inner,
        }
    }

    pub fn connect(&self) -> Connection {
        Connection::new(self.clone())
    }

    /// The published snapshot: every acknowledged commit, nothing that is not yet durable. In a
    /// process that reads a database another process writes, it first takes in what was
    /// committed since (each statement sees the database as of its start).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        if self.inner.reader_cursor.is_some() {
            self.refresh_reader();
        }
        self.inner
            .published
            .read()
            .expect("published snapshot")
            .snapshot
            .clone()
    }

    /// The vector index graphs queries of this database share.
    pub(crate) fn vector_indexes(&self) -> Arc<warren_exec::vector_index::VectorIndexCache> {
        self.inner.vector_indexes.clone()
    }

    /// The int8 copies of vector blocks queries of this database share.
    pub(crate) fn vector_copies(&self) -> Arc<warren_exec::vector_copy::VectorCopyCache> {
        self.inner.vector_copies.clone()
    }

    /// The one-source search states queries of this database share.
    pub(crate) fn search_states(&self) -> Arc<warren_exec::recursive::state_pool::SearchStatePool> {
        self.inner.search_states.clone()
    }

    /// The spreading activation states queries of this database share.
    pub(crate) fn spread_states(&self) -> Arc<warren_exec::recursive::spread::SpreadStatePool> {
        self.inner.spread_states.clone()
    }

    /// The worker threads queries of this database run their parallel loops on.
    pub(crate) fn workers(&self) -> Arc<warren_exec::workers::WorkerPool> {
        self.inner.workers.clone()
    }

    /// What the vector index graphs cost since the database opened: how many were built from
    /// their column, read from their file, brought up to date, and which files were unusable.
    pub fn vector_index_stats(&self) -> warren_exec::vector_index::VectorIndexStats {
        self.inner.vector_indexes.stats_snapshot()
    }

    /// What the int8 copies of vector blocks cost since the database opened (copies built,
    /// scans answered through one, bytes held).
    pub fn vector_copy_stats(&self) -> warren_exec::vector_copy::VectorCopyStats {
        self.inner.vector_copies.stats()
    }

    /// Bounds the bytes of the int8 copies of vector blocks (default
    /// `warren_exec::vector_copy::DEFAULT_LIMIT_BYTES`; 0 builds none, so every top-k cosine
    /// scan reads the FLOAT block).
    pub fn set_vector_copy_limit(&self, bytes: usize) {
        self.inner.vector_copies.set_limit(bytes);
    }

    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    /// Bytes of the write-ahead log that hold its header and frames (its used length, not the
    /// preallocated file's): for a reading process, up to where its last refresh read (0 in
    /// memory, or when there is no log).
    pub fn wal_bytes(&self) -> u64 {
        if let Some(wal) = &self.inner.wal {
            return wal.size_bytes();
        }
        self.inner.reader_cursor.as_ref().map_or(0, |cursor| {
            let cursor = cursor.lock().expect("reader cursor");
            cursor.map_or(0, |cursor| cursor.offset)
        })
    }

    /// Commits in the log after the last checkpoint.
    fn wal_frames(&self) -> usize {
        self.inner
            .writer
            .lock()
            .expect("writer state")
            .since_checkpoint
            .len()
    }

    /// A database setting (`auto_checkpoint`, `checkpoint_threshold`,
    /// `force_checkpoint_on_close`), or `None` for other names.
    pub fn setting(&self, name: &str) -> Option<Value> {
        let settings = &self.inner.settings;
        Some(match name.to_ascii_lowercase().as_str() {
            "auto_checkpoint" => Value::Bool(settings.auto_checkpoint.load(Ordering::Relaxed)),
            "checkpoint_threshold" => Value::Int64(
                i64::try_from(settings.checkpoint_threshold_bytes.load(Ordering::Relaxed))
                    .unwrap_or(i64::MAX),
            ),
            "force_checkpoint_on_close" => {
                Value::Bool(settings.checkpoint_on_close.load(Ordering::Relaxed))
            }
            _ => return None,
        })
    }

    /// Sets a database setting; `None` when `name` is not one (a connection setting, then).
    pub fn set_setting(&self, name: &str, value: &Value) -> Option<Result<()>> {
        let settings = &self.inner.settings;
        let flag = |target: &AtomicBool| match value.as_bool() {
            Some(on) => {
                target.store(on, Ordering::Relaxed);
                Ok(())
            }
            None => Err(Error::binder(format!("{name} must be a BOOL."))),
        };
        Some(match name.to_ascii_lowercase().as_str() {
            "auto_checkpoint" => flag(&settings.auto_checkpoint),
            "force_checkpoint_on_close" => flag(&settings.checkpoint_on_close),
            "checkpoint_threshold" => match value.as_i64().filter(|&v| v >= 0) {
                Some(bytes) => {
                    settings
                        .checkpoint_threshold_bytes
                        .store(bytes as u64, Ordering::Relaxed);
                    Ok(())
                }
                None => Err(Error::binder(
                    "checkpoint_threshold must be a non-negative INT64 (bytes).",
                )),
            },
            _ => return None,
        })
    }

    fn check_writable(&self) -> Result<()> {
        if self.inner.read_only {
            let message = match &self.inner.read_only_reason {
                Some(reason) => format!("Cannot execute write operations: {reason}."),
                None => "Cannot execute write operations in a read-only database!".into(),
            };
            return Err(Error::runtime(message));
        }
        if let Some(failure) = self.inner.failure.lock().expect("failure state").as_ref() {
            return Err(Error::runtime(format!(
                "Cannot execute write operations: the database is read-only after a failed write to its files ({failure})."
            )));
        }
        Ok(())
    }

    /// Takes the writer slot, waiting for the current writer to finish.
    pub fn begin_write(&self) -> Result<WriteLock> {
        self.check_writable()?;
        let mut state = self.inner.writer.lock().expect("writer state");
        while state.held {
            state = self.inner.writer_free.wait(state).expect("writer state");
        }
        // Again: the writer waited for may have failed, leaving the disk ahead of this
        // process's state (a manifest swapped, its log not yet reset); nothing may follow it.
        if let Err(error) = self.check_writable() {
            drop(state);
            self.inner.writer_free.notify_one();
            return Err(error);
        }
        state.held = true;
        Ok(WriteLock {
            inner: self.inner.clone(),
            latest: state.latest.clone(),
        })
    }

    /// Commits `snapshot`, built on `lock.latest()` with `changes`, through the log (durable
    /// before this returns): row changes as a row record; DDL, COPY and ALTER as a catalog
    /// change, after the tables they replaced are written to segment files.
    pub fn commit(&self, lock: WriteLock, snapshot: Snapshot, changes: Changes) -> Result<()> {
        assert!(
            Arc::ptr_eq(&lock.inner, &self.inner),
            "a lock of another database"
        );
        self.check_writable()?;
        if changes.is_empty() {
            return Ok(());
        }
        let (snapshot, record) = if changes.structural || !changes.replaced.is_empty() {
            self.catalog_change(snapshot, &changes)?
        } else {
            (snapshot, LogRecord::Rows(changes.rows))
        };
        self.log_and_publish(lock, Arc::new(snapshot), &record)
    }

    /// A DDL, COPY or ALTER transaction as a log record: the tables it replaced are folded and
    /// those holding rows written to new segment files (durable, named by no manifest yet),
    /// which the record names. The snapshot returned holds the folded tables.
    fn catalog_change(
        &self,
        snapshot: Snapshot,
        changes: &Changes,
    ) -> Result<(Snapshot, LogRecord)> {
        let (snapshot, with_rows) = fold_replaced(snapshot, &changes.replaced)?;
        let files = match &self.inner.dir {
            Some(dir) if self.inner.wal.is_some() => dir
                .lock()
                .expect("directory lock")
                .write_tables(&snapshot, &with_rows)
                .map_err(|e| self.fail(e))?
                .files()
                .clone(),
            _ => Default::default(),
        };
        let change = CatalogChange::new(&snapshot, &changes.replaced, &files, &changes.rows);
        Ok((snapshot, LogRecord::Catalog(change)))
    }

    /// Appends `record` (which made `snapshot` from `lock.latest()`) to the log under the
    /// writer slot, releases the slot, waits until the record is durable (group commit) and
    /// publishes the snapshot.
    fn log_and_publish(
        &self,
        lock: WriteLock,
        snapshot: Arc<Snapshot>,
        record: &LogRecord,
    ) -> Result<()> {
        let Some(wal) = &self.inner.wal else {
            let mut state = self.inner.writer.lock().expect("writer state");
            state.latest = snapshot.clone();
            state.latest_lsn += 1;
            let lsn = state.latest_lsn;
            drop(state);
            drop(lock);
            self.publish(snapshot, lsn);
            return Ok(());
        };
        // Row changes are encoded with the catalog they were made against (a catalog change
        // carries its own).
        let payload: Arc<[u8]> = record.encode(lock.latest().catalog())?.into();
        let transaction = self.inner.next_transaction.fetch_add(1, Ordering::Relaxed);
        let lsn = {
            let mut state = self.inner.writer.lock().expect("writer state");
            let lsn = wal
                .append(transaction, &payload)
                .map_err(|e| self.fail(e))?;
            if let (LogRecord::Catalog(change), Some(dir)) = (record, &self.inner.dir) {
                dir.lock()
                    .expect("directory lock")
                    .note_logged(lsn, change.files());
            }
            state.latest = snapshot.clone();
            state.latest_lsn = lsn;
            state.since_checkpoint.push((lsn, transaction, payload));
            lsn
        };
        drop(lock);
        wal.wait_durable(lsn).map_err(|e| self.fail(e))?;
        self.publish(snapshot, lsn);
        self.maybe_checkpoint_in_background();
        Ok(())
    }

    /// Records a failed write of the log or of the directory (segments, manifest): the
    /// database refuses writes from now on. An fsync that failed may have dropped the data it
    /// was to make durable while the page cache still shows it, and a manifest swap that
    /// failed may or may not have happened: no later write may build on either.
    fn fail(&self, error: Error) -> Error {
        let mut failure = self.inner.failure.lock().expect("failure state");
        if failure.is_none() {
            *failure = Some(error.to_string());
        }
        error
    }

    /// A reading process: replays the frames appended to the log since the last refresh
    /// (reading only those bytes), or, after a checkpoint replaced the log, reads the new
    /// manifest and its log, and publishes the result. A failed refresh keeps the published
    /// snapshot, which stays consistent, only older; the next statement tries again.
    fn refresh_reader(&self) {
        let (Some(cursor), Some(dir)) = (&self.inner.reader_cursor, &self.inner.dir) else {
            return;
        };
        let mut cursor = cursor.lock().expect("reader cursor");
        let mut dir = dir.lock().expect("directory lock");
        let fs = dir.file_system();
        let log = dir.path().join(WAL);
        let (published, lsn) = {
            let published = self.inner.published.read().expect("published snapshot");
            (published.snapshot.clone(), published.lsn)
        };
        let mut held = self.inner.reader_log.lock().expect("reader log");
        let appended = match &*cursor {
            Some(at) => {
                match Wal::read_after_held(fs.as_ref(), &log, dir.database_id(), at, &mut held) {
                    Ok(appended) => appended,
                    Err(_) => return,
                }
            }
            // There was no log: there is nothing new unless one appeared.
            None if !matches!(fs.exists(&log), Ok(true)) => return,
            None => None,
        };
        // The log was replaced by a checkpoint: the manifest is read again.
        let reloaded = appended.is_none();
        let refreshed = match appended {
            Some(appended) if appended.frames.is_empty() => {
                *cursor = Some(appended.cursor);
                return;
            }
            Some(appended) => {
                let at = appended.cursor;
                replay(
                    (*published).clone(),
                    lsn,
                    logged(appended.frames),
                    &mut dir,
                    &log,
                )
                .map(|(snapshot, lsn, _)| (snapshot, lsn, Some(at)))
            }
            None => dir
                .reload()
                .and_then(|snapshot| read_committed(&mut dir, snapshot, &fs)),
        };
        if let Ok((snapshot, lsn, at)) = refreshed {
            *cursor = at;
            if reloaded {
                self.inner
                    .vector_indexes
                    .set_persisted(persisted_graphs(&dir));
            }
            self.publish_read(Arc::new(snapshot), lsn);
        }
    }

    /// Publishes what a reading process read (a checkpoint's manifest may carry an LSN equal
    /// to the published one with a different layout: the newer read wins).
    fn publish_read(&self, snapshot: Arc<Snapshot>, lsn: u64) {
        let mut published = self.inner.published.write().expect("published snapshot");
        *published = Published { snapshot, lsn };
    }

    /// Makes `snapshot` (containing every change up to `lsn`) visible, unless a later one is.
    fn publish(&self, snapshot: Arc<Snapshot>, lsn: u64) {
        let mut published = self.inner.published.write().expect("published snapshot");
        if lsn >= published.lsn {
            *published = Published { snapshot, lsn };
        }
    }

    /// Whether the log has grown past `checkpoint_threshold` or a delta past
    /// [`DELTA_SHARE_MAX`] of its table, with `auto_checkpoint` on.
    fn needs_checkpoint(&self) -> bool {
        let settings = &self.inner.settings;
        if !settings.auto_checkpoint.load(Ordering::Relaxed) {
            return false;
        }
        let threshold = settings.checkpoint_threshold_bytes.load(Ordering::Relaxed);
        self.wal_bytes() >= threshold || self.delta_is_large()
    }

    /// Starts a background checkpoint when the log or a delta has grown past its threshold.
    /// The checkpoint thread starts another when commits made while it ran (which found it
    /// running and started none) left the thresholds exceeded: each further round needs a
    /// commit made during the previous one, so an idle database never loops.
    fn maybe_checkpoint_in_background(&self) {
        if !self.needs_checkpoint() {
            return;
        }
        if self.inner.checkpoint_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let db = Database {
            inner: self.inner.clone(),
            _user: None,
        };
        let thread = std::thread::spawn(move || db.run_background_checkpoints());
        let previous = self
            .inner
            .background
            .lock()
            .expect("background")
            .replace(thread);
        if let Some(previous) = previous {
            // It finished or is finishing: `checkpoint_running` was clear.
            let _ = previous.join();
        }
    }

    /// The body of the background checkpoint thread; entered with `checkpoint_running` set.
    fn run_background_checkpoints(&self) {
        loop {
            let outcome = self.checkpoint();
            self.inner
                .checkpoint_running
                .store(false, Ordering::Release);
            if let Err(error) = outcome {
                eprintln!("warren: background checkpoint failed: {error}");
                return;
            }
            // A commit that saw `checkpoint_running` set before the store above published its
            // frame before looking, so it is counted here.
            let again = self.wal_frames() > 0 && self.needs_checkpoint();
            if !again || self.inner.checkpoint_running.swap(true, Ordering::AcqRel) {
                return;
            }
        }
    }

    /// Waits until no background checkpoint runs (one started meanwhile is waited for too).
    pub fn wait_for_background_checkpoint(&self) {
        loop {
            let running = self.inner.background.lock().expect("background").take();
            match running {
                Some(thread) => {
                    let _ = thread.join();
                }
                None => return,
            }
        }
    }

    /// Whether some rel table's delta passed [`DELTA_SHARE_MAX`] of its stored rels.
    fn delta_is_large(&self) -> bool {
        let snapshot = self.snapshot();
        snapshot.tables().values().any(|table| match table {
            warren_storage::TableData::Rel(rels) => {
                let changes = rels.delta().changes();
                changes >= DELTA_CHANGES_MIN
                    && changes as f64 > DELTA_SHARE_MAX * rels.num_stored_rows() as f64
            }
            warren_storage::TableData::Node(_) => false,
        })
    }

    /// `CHECKPOINT`: folds every delta into new segment files and recycles the log. The fold
    /// and the file writes run while readers and the writer go on; only the manifest swap and
    /// the rebase of commits made meanwhile hold the writer slot.
    pub fn checkpoint(&self) -> Result<()> {
        self.check_writable()?;
        let (Some(dir), Some(wal)) = (&self.inner.dir, &self.inner.wal) else {
            return self.fold_in_memory();
        };
        let _checkpoint = self.inner.checkpoint_lock.lock().expect("checkpoint lock");
        // Again: a checkpoint that waited for the lock may follow one that failed, and after
        // a failure the disk may hold a manifest this process's state does not know of.
        self.check_writable()?;
        let (base, base_lsn) = {
            let state = self.inner.writer.lock().expect("writer state");
            (state.latest.clone(), state.latest_lsn)
        };
        if base_lsn <= dir.lock().expect("directory lock").checkpoint_lsn() {
            // Nothing was logged since the last checkpoint.
            return Ok(());
        }
        // Only durable commits are folded.
        wal.wait_durable(base_lsn).map_err(|e| self.fail(e))?;
        let (folded, folded_ids) = base.folded()?;
        let files = {
            let mut dir = dir.lock().expect("directory lock");
            // Tables with deltas, and empty ones that logged DDL created without a file.
            let mut changed: BTreeSet<_> = folded_ids.into_iter().collect();
            changed.extend(dir.unfiled(&folded, base_lsn));
            let mut files = dir
                .write_tables(&folded, &changed)
                .map_err(|e| self.fail(e))?;
            self.write_index_graphs(&mut dir, &folded, &changed, &mut files)?;
            files
        };
        let lock = self.begin_write()?;
        let mut state = self.inner.writer.lock().expect("writer state");
        wal.wait_durable(state.latest_lsn)
            .map_err(|e| self.fail(e))?;
        let later: Vec<LoggedCommit> = state
            .since_checkpoint
            .iter()
            .filter(|(lsn, ..)| *lsn > base_lsn)
            .cloned()
            .collect();
        let generation = state.latest.generation();
        let rebased = {
            let mut dir = dir.lock().expect("directory lock");
            let (rebased, _, _) = replay(
                folded.clone(),
                base_lsn,
                later.iter().cloned(),
                &mut dir,
                wal.path(),
            )?;
            // The manifest holds the database as of `base_lsn`; the commits after it stay in
            // the log.
            dir.swap_manifest(&folded.with_generation(generation), files, base_lsn)
                .map_err(|e| self.fail(e))?;
            self.inner
                .vector_indexes
                .set_persisted(persisted_graphs(&dir));
            rebased
        };
        let rebased = Arc::new(rebased.with_generation(generation));
        let frames: Vec<(u64, u64, &[u8])> =
            later.iter().map(|(l, t, p)| (*l, *t, &p[..])).collect();
        wal.reset(base_lsn + 1, &frames).map_err(|e| self.fail(e))?;
        state.latest = rebased.clone();
        state.since_checkpoint = later;
        let lsn = state.latest_lsn;
        drop(state);
        self.publish(rebased, lsn);
        drop(lock);
        // The checkpoint is durable: files a failed removal leaves are removed at the next
        // writer's open.
        let _ = dir.lock().expect("directory lock").remove_unreferenced();
        Ok(())
    }
}

impl Database {
    /// Writes the graph of every vector index of `folded` whose table a checkpoint rewrites
    /// (`changed`) or that has no graph file yet, when the graph is held in memory or
    /// persisted: brought up to date with `folded` first. An index whose graph was never built
    /// gets no file (its first query after an open builds it).
    fn write_index_graphs(
        &self,
        dir: &mut DatabaseDir,
        folded: &Snapshot,
        changed: &BTreeSet<warren_common::TableId>,
        files: &mut warren_storage::database_dir::PendingTables,
    ) -> Result<()> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cache = &self.inner.vector_indexes;
        for index in folded.catalog().vector_indexes() {
            if !changed.contains(&index.table)
                && dir.index_graph(index.table, &index.name).is_some()
            {
                continue;
            }
            let (column, dimension) =
                warren_exec::vector_index::column_of(folded.catalog(), index)?;
            let table = folded.node_table(index.table);
            let Some(built) = cache.current(index, table, column, dimension, threads)? else {
                continue;
            };
            let bytes = warren_exec::vector_index_file::encode(&built, index.table);
            dir.write_index_graph(files, folded.generation(), index.table, &index.name, &bytes)
                .map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    /// `CHECKPOINT` of an in-memory database: the deltas are folded into new in-memory tables.
    fn fold_in_memory(&self) -> Result<()> {
        let lock = self.begin_write()?;
        let (folded, _) = lock.latest().folded()?;
        let folded = Arc::new(folded);
        let mut state = self.inner.writer.lock().expect("writer state");
        state.latest = folded.clone();
        let lsn = state.latest_lsn;
        drop(state);
        self.publish(folded, lsn);
        drop(lock);
        Ok(())
    }
}

/// Opens (or creates) the log of a database opened for writing and replays the committed
/// transactions after the manifest's checkpoint: the recovered snapshot, its last log sequence
/// number, and the replayed records.
#[allow(clippy::type_complexity)]
fn recover(
    dir: &mut DatabaseDir,
    snapshot: Snapshot,
    fs: &Arc<dyn FileSystem>,
    checksums: bool,
) -> Result<(Wal, Snapshot, u64, Vec<LoggedCommit>)> {
    let path = dir.path().join(WAL);
    let checkpoint_lsn = dir.checkpoint_lsn();
    if !fs.exists(&path)? {
        let wal = Wal::create_with(
            fs.clone(),
            &path,
            dir.database_id(),
            checkpoint_lsn + 1,
            checksums,
        )?;
        return Ok((wal, snapshot, checkpoint_lsn, Vec::new()));
    }
    let (wal, recovered) = Wal::open(fs.clone(), &path, dir.database_id())?;
    if wal.checksums() != checksums {
        if recovered
            .frames
            .iter()
            .any(|frame| frame.lsn > checkpoint_lsn)
        {
            return Err(checksum_mode_mismatch(&path, wal.checksums()));
        }
        // Nothing to replay: the next frames are written in the mode asked for.
        wal.change_checksums(checksums)?;
    }
    let (snapshot, lsn, records) = replay(
        snapshot,
        checkpoint_lsn,
        logged(recovered.frames),
        dir,
        &path,
    )?;
    if wal.last_lsn() < checkpoint_lsn {
        // The log was recycled before this checkpoint: continue the sequence after it.
        wal.reset(checkpoint_lsn + 1, &[])?;
    }
    Ok((wal, snapshot, lsn, records))
}

/// The error of an open whose `enable_checksums` differs from the mode of the log it would
/// replay.
fn checksum_mode_mismatch(path: &Path, written_with: bool) -> Error {
    Error::Runtime(format!(
        "the write-ahead log {} holds transactions written with enable_checksums={written_with}, \
         but the database is being opened with enable_checksums={}; open it with \
         enable_checksums={written_with} (a checkpoint then empties the log)",
        path.display(),
        !written_with
    ))
}

/// A log's committed frames as the commits a database keeps after a checkpoint.
fn logged(frames: Vec<RecoveredFrame>) -> impl Iterator<Item = LoggedCommit> {
    frames
        .into_iter()
        .map(|frame| (frame.lsn, frame.txn_id, Arc::from(frame.payload)))
}

/// Applies the commits after `after_lsn` to `snapshot` in log order (recovery, a reader's
/// open, a checkpoint's rebase), each decoded with the catalog as of its place in the log:
/// the snapshot, its last LSN, and the commits applied. The commits must follow each other
/// without a gap; a gap means committed transactions are missing from `log`. `dir` maps the
/// segment files that catalog changes name, and learns which ones they are.
fn replay(
    snapshot: Snapshot,
    after_lsn: u64,
    commits: impl Iterator<Item = LoggedCommit>,
    dir: &mut DatabaseDir,
    log: &Path,
) -> Result<(Snapshot, u64, Vec<LoggedCommit>)> {
    let mut snapshot = snapshot;
    let mut lsn = after_lsn;
    let mut applied = Vec::new();
    for commit in commits.filter(|(lsn, ..)| *lsn > after_lsn) {
        if commit.0 != lsn + 1 {
            return Err(Error::Corrupt(format!(
                "{}: log sequence number {} follows {lsn}: committed transactions are missing",
                log.display(),
                commit.0
            )));
        }
        let record = LogRecord::decode(&commit.2, snapshot.catalog())?;
        // Applying reads the changed tables' stored arrays whole: verify them first, so that
        // a damaged block fails the open with its name instead of stopping the process.
        record.verify_tables(&snapshot)?;
        snapshot = record.apply(&snapshot, dir)?;
        if let LogRecord::Catalog(change) = &record {
            dir.note_logged(commit.0, change.files());
        }
        lsn = commit.0;
        applied.push(commit);
    }
    Ok((snapshot, lsn, applied))
}

/// A reader's view: the manifest's tables plus the committed transactions in the log, read
/// without truncating anything (the writing process may be appending right now), and where
/// the reading of the log stopped (`None`: there is no log).
fn read_committed(
    dir: &mut DatabaseDir,
    snapshot: Snapshot,
    fs: &Arc<dyn FileSystem>,
) -> Result<(Snapshot, u64, Option<LogCursor>)> {
    const ATTEMPTS_MAX: u32 = 100;
    let path = dir.path().join(WAL);
    let mut snapshot = snapshot;
    for _ in 0..ATTEMPTS_MAX {
        let checkpoint_lsn = dir.checkpoint_lsn();
        if !fs.exists(&path)? {
            return Ok((snapshot, checkpoint_lsn, None));
        }
        let recovered = Wal::read(fs.as_ref(), &path, dir.database_id())?;
        let cursor = recovered.cursor;
        if recovered.base_lsn > checkpoint_lsn + 1 {
            // A checkpoint recycled the log after this manifest was read: read the new one.
            snapshot = dir.reload()?;
            continue;
        }
        let frames = logged(recovered.frames);
        match replay(snapshot.clone(), checkpoint_lsn, frames, dir, &path) {
            // A checkpoint that came after the log was read may have removed a file a record
            // named (its manifest names a newer one): read the new manifest. Without a new
            // checkpoint the error is the file's own.
            Err(Error::Io(message)) => {
                snapshot = dir.reload()?;
                if dir.checkpoint_lsn() == checkpoint_lsn {
                    return Err(Error::Io(message));
                }
                continue;
            }
            Ok((snapshot, lsn, _)) => return Ok((snapshot, lsn, Some(cursor))),
            Err(error) => return Err(error),
        }
    }
    Err(Error::Io(format!(
        "{}: the database kept changing while it was opened for reading",
        dir.path().display()
    )))
}
