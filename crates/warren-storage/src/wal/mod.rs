//! The write-ahead log: a file of checksummed frames, each an opaque transaction payload with
//! its LSN and transaction id, appended with group commit and read back by recovery. The byte
//! layout is in `docs/format/wal.md`; `format.rs` encodes it, `scan.rs` reads it back and
//! `commit_queue.rs` appends to it.
//!
//! The file is preallocated: zeros are written ahead of the frames (`space.rs`), so that a
//! commit's `fdatasync` has no file size to commit, and the log ends at the first frame that is
//! not valid, not at the file's end.
//!
//! Recovery returns the longest valid prefix of frames. A torn tail (an unfinished last write)
//! is zeroed when the log is opened for writing and ignored when it is only read; damage
//! followed by a later batch's valid frame is corruption, and opening fails rather than drop
//! committed frames. A log whose header names another database is refused.
//!
//! `reset` starts a fresh log after a checkpoint by writing a new file beside the old one and
//! renaming it over, so a crash leaves one or the other.

mod commit_queue;
mod format;
mod scan;
mod space;

#[cfg(test)]
mod crash_tests;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, MutexGuard};

use warren_common::{Error, Result};

use crate::io::{
    parent_dir, read_all, read_range, write_all_at, FileHandle, FileId, FileSystem, OpenMode,
};
pub use commit_queue::WalStats;
use commit_queue::{CommitQueue, QueueState};
use format::peek_frame;
use format::{decode_header, encode_header, Header};
pub use format::{
    DatabaseId, BATCH_FRAMES_MAX, FORMAT_VERSION, FRAME_HEADER_BYTES, HEADER_BYTES, LSN_MIN, MAGIC,
    PAYLOAD_BYTES_MAX,
};
use scan::{scan, scan_from, Scan, Start, Tail};
use space::{initial_allocation, write_zeros};
pub use space::{ALLOCATION_MIN_BYTES, EXTENSION_MAX_BYTES};

/// One committed frame, as recovery returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveredFrame {
    pub lsn: u64,
    pub txn_id: u64,
    pub payload: Vec<u8>,
}

/// Where a reading of a log stopped, so that the next reading reads only what was appended
/// since ([`Wal::read_after`]). The base LSN and checksum mode name the log: a checkpoint
/// replaces the log by one with a higher base LSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogCursor {
    pub base_lsn: u64,
    pub checksums: bool,
    /// The byte offset just past the last valid frame read.
    pub offset: u64,
    /// The LSN the next frame takes.
    pub next_lsn: u64,
    /// The first LSN of the batch of the last frame read (`None` when none was read).
    pub batch_first_lsn: Option<u64>,
}

/// What recovery found in a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The LSN the log's first frame has (or would have).
    pub base_lsn: u64,
    /// The committed frames, in LSN order (`base_lsn`, `base_lsn + 1`, ...).
    pub frames: Vec<RecoveredFrame>,
    /// Bytes of a torn tail after the last valid frame (up to the last byte that is not zero):
    /// zeroed by [`Wal::open`], ignored by [`Wal::read`]. 0 when only zeros follow the frames.
    pub tail_bytes: u64,
    /// Where the reading stopped: just past the last valid frame.
    pub cursor: LogCursor,
}

impl Recovered {
    /// The LSN the next frame takes.
    pub fn next_lsn(&self) -> u64 {
        self.base_lsn + self.frames.len() as u64
    }
}

/// An open write-ahead log, shared by the threads that commit to it.
pub struct Wal {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    database_id: DatabaseId,
    queue: CommitQueue,
}

impl fmt::Debug for Wal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wal")
            .field("path", &self.path)
            .field("last_lsn", &self.last_lsn())
            .finish_non_exhaustive()
    }
}

fn hex(id: &DatabaseId) -> String {
    id.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The path a new log is written at before it is renamed over `path`.
fn new_file_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".new");
    PathBuf::from(name)
}

/// Where a log file's frames end, and how many bytes of it are written (frames, then zeros).
#[derive(Clone, Copy, Debug)]
struct Extent {
    used: u64,
    allocated: u64,
}

/// Writes a log file holding only `header` at `path` and makes its bytes durable.
fn write_empty_log(fs: &dyn FileSystem, path: &Path, header: &Header) -> Result<Extent> {
    write_log(fs, path, header, &[])
}

/// Writes a log file holding `header` and the encoded `frames`, followed by zeros up to its
/// preallocated size, at `path` (a new file: no byte of an earlier log is in it), durably.
fn write_log(fs: &dyn FileSystem, path: &Path, header: &Header, frames: &[u8]) -> Result<Extent> {
    if fs.exists(path)? {
        // The remains of an interrupted create or reset: never renamed, so never live.
        fs.remove(path)?;
    }
    let file = fs.open(path, OpenMode::CreateNew)?;
    write_all_at(file.as_ref(), 0, &encode_header(header))?;
    write_all_at(file.as_ref(), HEADER_BYTES as u64, frames)?;
    let used = (HEADER_BYTES + frames.len()) as u64;
    let allocated = initial_allocation(used);
    write_zeros(file.as_ref(), used, allocated)?;
    file.sync_data()?;
    Ok(Extent { used, allocated })
}

/// The error for a log whose header names another database.
fn foreign_log(path: &Path, found: &DatabaseId, expected: &DatabaseId) -> Error {
    Error::Corrupt(format!(
        "write-ahead log {} belongs to database {}, not to this database ({}); it will not be \
         replayed",
        path.display(),
        hex(found),
        hex(expected)
    ))
}

/// Reads and checks a log's header and frames.
fn read_log(file: &dyn FileHandle, database_id: &DatabaseId) -> Result<(Header, Vec<u8>)> {
    let bytes = read_all(file)?;
    let path = file.path().display().to_string();
    let header = decode_header(&bytes, &path)?;
    if header.database_id != *database_id {
        return Err(foreign_log(file.path(), &header.database_id, database_id));
    }
    Ok((header, bytes))
}

/// The recovered frames of a scan, or an error when committed frames are damaged. The scanned
/// bytes start at byte `bytes_at` of the file; `start` is where the scan began.
/// The committed frames of `file` (the log whose header is `header`) after `cursor`.
fn read_after_cursor(
    file: &dyn FileHandle,
    path: &Path,
    header: &Header,
    cursor: &LogCursor,
) -> Result<Recovered> {
    let start = Start {
        offset: 0,
        base_lsn: header.base_lsn,
        expected_lsn: cursor.next_lsn,
        previous_batch_first: cursor.batch_first_lsn,
    };
    let bytes = read_frames_settled(file, cursor.offset, start, header.checksums)?;
    let scan = scan_from(&bytes, start, header.checksums);
    recovered(path, header, &scan, cursor.offset, &start)
}

/// A log file opened for reading, with its header.
struct OpenedLog {
    file: Box<dyn FileHandle>,
    header: Header,
}

/// The log a reading process keeps open between refreshes ([`Wal::read_after_held`]).
#[derive(Debug)]
pub struct HeldLog {
    file: Box<dyn FileHandle>,
    header: Header,
    id: FileId,
}

fn recovered(
    path: &Path,
    header: &Header,
    scan: &Scan<'_>,
    bytes_at: u64,
    start: &Start,
) -> Result<Recovered> {
    if let Tail::Damaged {
        offset,
        lsn,
        later_offset,
        later_lsn,
    } = scan.tail
    {
        let offset = bytes_at + offset as u64;
        let later_offset = bytes_at + later_offset as u64;
        return Err(Error::Corrupt(format!(
            "write-ahead log {}: the frame of LSN {lsn} at byte {offset} is damaged, yet a \
             later committed frame (LSN {later_lsn} at byte {later_offset}) follows it; \
             committed transactions would be lost, so the log is not opened",
            path.display()
        )));
    }
    let frames: Vec<RecoveredFrame> = scan
        .frames
        .iter()
        .map(|(frame, payload)| RecoveredFrame {
            lsn: frame.lsn,
            txn_id: frame.txn_id,
            payload: payload.to_vec(),
        })
        .collect();
    let cursor = LogCursor {
        base_lsn: header.base_lsn,
        checksums: header.checksums,
        offset: bytes_at + scan.valid_end as u64,
        next_lsn: start.expected_lsn + frames.len() as u64,
        batch_first_lsn: scan
            .frames
            .last()
            .map(|(frame, _)| frame.batch_first_lsn())
            .or(start.previous_batch_first),
    };
    Ok(Recovered {
        base_lsn: header.base_lsn,
        frames,
        tail_bytes: match scan.tail {
            Tail::Torn { offset, end } => (end - offset) as u64,
            Tail::Clean | Tail::Damaged { .. } => 0,
        },
        cursor,
    })
}

/// Reads the torn tail `valid_end..end` again before it is zeroed: a read that returned wrong
/// bytes (a flipped bit) would otherwise make committed frames look torn and zeroing would lose
/// them. Bytes that differ between the two reads are an I/O error.
fn confirm_tail(file: &dyn FileHandle, first: &[u8], valid_end: usize, end: usize) -> Result<()> {
    let again = read_range(file, valid_end as u64, end - valid_end)?;
    if again != first[valid_end..end] {
        return Err(Error::Io(format!(
            "write-ahead log {}: the bytes after byte {valid_end} read differently twice (a \
             device or read error); the log is not opened, so that nothing is cut off",
            file.path().display()
        )));
    }
    Ok(())
}

/// A whole log file's scan and the start it began at.
fn scan_file<'a>(bytes: &'a [u8], header: &Header) -> (Scan<'a>, Start) {
    let scan = scan(bytes, header.base_lsn, header.checksums);
    let start = Start {
        offset: HEADER_BYTES,
        base_lsn: header.base_lsn,
        expected_lsn: header.base_lsn,
        previous_batch_first: None,
    };
    (scan, start)
}

/// The bytes a reading of the log reads at least (and then twice as many each time more are
/// needed): a small first read keeps an incremental reading O(appended).
const READ_WINDOW_MIN: usize = 8 << 10;

/// Reads `file` from `offset` on (where the frames that `start` describes begin) until the
/// bytes read hold every frame there is to find, without relying on the file's length (it is
/// preallocated): reading stops at the end of the file, or once the bytes after the last valid
/// frame are zeros or a damaged frame, or a torn tail whose written bytes end before the last
/// window read.
fn read_frames(
    file: &dyn FileHandle,
    offset: u64,
    start: Start,
    checksums: bool,
) -> Result<Vec<u8>> {
    assert_eq!(
        start.offset, 0,
        "the bytes read begin at the first frame to scan"
    );
    let mut bytes = Vec::new();
    let mut window = READ_WINDOW_MIN;
    // Where the scan of the bytes read so far stopped: each window's frames are scanned once.
    let mut resume = start;
    loop {
        if !read_more(file, offset, &mut bytes, window)? {
            return Ok(bytes);
        }
        match more_needed(&bytes, window, &mut resume, checksums) {
            None => return Ok(bytes),
            Some(at_least) => window = (window * 2).max(at_least),
        }
    }
}

/// Appends the `window` bytes of `file` that follow the `bytes` read from `offset` on; `false`
/// when the file ended first (what exists was appended).
fn read_more(
    file: &dyn FileHandle,
    offset: u64,
    bytes: &mut Vec<u8>,
    window: usize,
) -> Result<bool> {
    let from = bytes.len();
    bytes.resize(from + window, 0);
    let mut filled = from;
    while filled < bytes.len() {
        let count = file.read_at(offset + filled as u64, &mut bytes[filled..])?;
        if count == 0 {
            bytes.truncate(filled);
            return Ok(false);
        }
        filled += count;
    }
    Ok(true)
}

/// [`read_frames`], read a second time when the bytes show damage followed by a later batch's
/// frame: windows read while the writer wrote one batch and then the next can show the first
/// unfinished and the next already written. Damage that a second reading shows again is real.
fn read_frames_settled(
    file: &dyn FileHandle,
    offset: u64,
    start: Start,
    checksums: bool,
) -> Result<Vec<u8>> {
    let bytes = read_frames(file, offset, start, checksums)?;
    if matches!(
        scan_from(&bytes, start, checksums).tail,
        Tail::Damaged { .. }
    ) {
        return read_frames(file, offset, start, checksums);
    }
    Ok(bytes)
}

/// How many more bytes (at least) a reading must read before its scan can end, or `None` when
/// it can end now; `last_window` is the size of the last read. The scan goes on from `resume`,
/// which it moves past the valid frames it finds.
fn more_needed(
    bytes: &[u8],
    last_window: usize,
    resume: &mut Start,
    checksums: bool,
) -> Option<usize> {
    let scan = scan_from(bytes, *resume, checksums);
    let expected_lsn = resume.expected_lsn + scan.frames.len() as u64;
    *resume = Start {
        offset: scan.valid_end,
        expected_lsn,
        previous_batch_first: scan
            .frames
            .last()
            .map(|(frame, _)| frame.batch_first_lsn())
            .or(resume.previous_batch_first),
        ..*resume
    };
    let rest = &bytes[scan.valid_end..];
    if rest.len() < FRAME_HEADER_BYTES {
        return Some(FRAME_HEADER_BYTES - rest.len());
    }
    match peek_frame(rest) {
        Some((lsn, frame_bytes)) if lsn == expected_lsn && frame_bytes > rest.len() => {
            Some(frame_bytes - rest.len())
        }
        _ => match scan.tail {
            Tail::Torn { end, .. } if end > bytes.len() - last_window => Some(1),
            Tail::Clean | Tail::Torn { .. } | Tail::Damaged { .. } => None,
        },
    }
}

/// Reads and checks the header of an open log file (its first [`HEADER_BYTES`] bytes only).
fn read_header(file: &dyn FileHandle, path: &Path) -> Result<Header> {
    let header = read_range(file, 0, HEADER_BYTES)?;
    decode_header(&header, &path.display().to_string())
}

/// [`read_header`], refusing a log whose header names another database than `database_id`.
fn read_own_header(file: &dyn FileHandle, path: &Path, database_id: &DatabaseId) -> Result<Header> {
    let header = read_header(file, path)?;
    if header.database_id != *database_id {
        return Err(foreign_log(path, &header.database_id, database_id));
    }
    Ok(header)
}

impl Wal {
    /// Creates an empty log at `path` (which must not exist) whose first frame will have LSN
    /// `base_lsn`. The file appears whole or not at all.
    pub fn create(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        database_id: DatabaseId,
        base_lsn: u64,
    ) -> Result<Wal> {
        Self::create_with(fs, path, database_id, base_lsn, true)
    }

    /// [`Wal::create`], with frames that carry no checksum unless `checksums` (Kùzu's
    /// `enable_checksums=false`: a torn frame can then only be told by its structure).
    pub fn create_with(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        database_id: DatabaseId,
        base_lsn: u64,
        checksums: bool,
    ) -> Result<Wal> {
        if base_lsn < LSN_MIN {
            return Err(Error::internal(
                "a write-ahead log's base LSN must be at least 1",
            ));
        }
        if fs.exists(path)? {
            return Err(Error::Io(format!(
                "write-ahead log {} already exists",
                path.display()
            )));
        }
        let header = Header {
            database_id,
            base_lsn,
            checksums,
        };
        let (file, extent) = Self::install(fs.as_ref(), path, &header)?;
        let state = QueueState::new(
            file,
            base_lsn,
            base_lsn,
            extent.used,
            extent.allocated,
            checksums,
        );
        Ok(Self::from_state(fs, path, database_id, state))
    }

    /// Opens the log at `path` for appending: returns its committed frames, having zeroed a
    /// torn tail and made the rest durable.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        database_id: DatabaseId,
    ) -> Result<(Wal, Recovered)> {
        let file: Arc<dyn FileHandle> = Arc::from(fs.open(path, OpenMode::ReadWrite)?);
        let (header, bytes) = read_log(file.as_ref(), &database_id)?;
        let (scan, start) = scan_file(&bytes, &header);
        let recovered = recovered(path, &header, &scan, 0, &start)?;
        if let Tail::Torn { offset, end } = scan.tail {
            // Zeroed, not cut off: the file keeps its allocated blocks. A shorter batch
            // written here later must not leave a valid-looking frame of the torn one behind.
            confirm_tail(file.as_ref(), &bytes, offset, end)?;
            write_zeros(file.as_ref(), offset as u64, end as u64)?;
        }
        // The frames may have been read from the page cache of a process that died before its
        // sync: make them durable before anyone acts on them. The zeroing must be durable too
        // before frames are written where the tail was, or a crash could bring old frames
        // back behind the new ones.
        file.sync_data()?;
        let stale = new_file_path(path);
        if fs.exists(&stale)? {
            fs.remove(&stale)?;
        }
        let next_lsn = recovered.next_lsn();
        let state = QueueState::new(
            file,
            header.base_lsn,
            next_lsn,
            scan.valid_end as u64,
            bytes.len() as u64,
            header.checksums,
        );
        Ok((Self::from_state(fs, path, database_id, state), recovered))
    }

    /// Reads the committed frames of the log at `path` without changing the file. A torn tail
    /// is taken for frames not yet committed (another process may be appending them now).
    pub fn read(fs: &dyn FileSystem, path: &Path, database_id: DatabaseId) -> Result<Recovered> {
        let file = fs.open(path, OpenMode::Read)?;
        let header = read_own_header(file.as_ref(), path, &database_id)?;
        let start = Start {
            offset: 0,
            base_lsn: header.base_lsn,
            expected_lsn: header.base_lsn,
            previous_batch_first: None,
        };
        let at = HEADER_BYTES as u64;
        let bytes = read_frames_settled(file.as_ref(), at, start, header.checksums)?;
        let scan = scan_from(&bytes, start, header.checksums);
        recovered(path, &header, &scan, at, &start)
    }

    /// Reads the committed frames appended to the log at `path` since a reading stopped at
    /// `cursor` (reading only the header and the bytes after the cursor), as [`Wal::read`]
    /// does. `None` when the log at `path` is not the one `cursor` is in (a checkpoint
    /// replaced it, or it is gone): the caller reads the database afresh.
    pub fn read_after(
        fs: &dyn FileSystem,
        path: &Path,
        database_id: DatabaseId,
        cursor: &LogCursor,
    ) -> Result<Option<Recovered>> {
        Ok(Self::open_and_read_after(fs, path, database_id, cursor)?
            .map(|(recovered, _)| recovered))
    }

    /// [`Wal::read_after`] keeping the log open in `held` between calls. While the file at
    /// `path` is the one held (same device and inode: a checkpoint renames a new log over
    /// the path, never rewrites a log's header in place, and the held descriptor keeps the
    /// old inode's number from being reused), a call costs one `stat` of the path and the
    /// read of the bytes after the cursor (a `pread`), instead of opening, stating, reading
    /// the header and closing as well. Otherwise it opens the path as `read_after` does and
    /// holds that file when it is the cursor's log; `held` is emptied when the answer is
    /// `None` (the caller reads the database afresh) or an error.
    pub fn read_after_held(
        fs: &dyn FileSystem,
        path: &Path,
        database_id: DatabaseId,
        cursor: &LogCursor,
        held: &mut Option<HeldLog>,
    ) -> Result<Option<Recovered>> {
        let answer = Self::read_after_held_inner(fs, path, database_id, cursor, held);
        if !matches!(answer, Ok(Some(_))) {
            *held = None;
        }
        answer
    }

    fn read_after_held_inner(
        fs: &dyn FileSystem,
        path: &Path,
        database_id: DatabaseId,
        cursor: &LogCursor,
        held: &mut Option<HeldLog>,
    ) -> Result<Option<Recovered>> {
        if let Some(log) = held.as_ref() {
            let same_log =
                log.header.base_lsn == cursor.base_lsn && log.header.checksums == cursor.checksums;
            if same_log && fs.file_id(path)? == Some(log.id) {
                return read_after_cursor(log.file.as_ref(), path, &log.header, cursor).map(Some);
            }
        }
        *held = None;
        let Some((recovered, OpenedLog { file, header })) =
            Self::open_and_read_after(fs, path, database_id, cursor)?
        else {
            return Ok(None);
        };
        if let Some(id) = file.file_id()? {
            *held = Some(HeldLog { file, header, id });
        }
        Ok(Some(recovered))
    }

    /// [`Wal::read_after`], with the file it opened and its header.
    fn open_and_read_after(
        fs: &dyn FileSystem,
        path: &Path,
        database_id: DatabaseId,
        cursor: &LogCursor,
    ) -> Result<Option<(Recovered, OpenedLog)>> {
        let file = match fs.open(path, OpenMode::Read) {
            Ok(file) => file,
            Err(_) if !fs.exists(path)? => return Ok(None),
            Err(error) => return Err(error),
        };
        let length = file.len()?;
        let header = read_own_header(file.as_ref(), path, &database_id)?;
        let same_log = header.base_lsn == cursor.base_lsn && header.checksums == cursor.checksums;
        if !same_log || length < cursor.offset || cursor.offset < HEADER_BYTES as u64 {
            return Ok(None);
        }
        let recovered = read_after_cursor(file.as_ref(), path, &header, cursor)?;
        Ok(Some((recovered, OpenedLog { file, header })))
    }

    fn from_state(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        database_id: DatabaseId,
        state: QueueState,
    ) -> Wal {
        Wal {
            fs,
            path: path.to_path_buf(),
            database_id,
            queue: CommitQueue::new(state, path.to_path_buf()),
        }
    }

    /// Writes an empty log beside `path`, renames it over `path` and makes the name durable.
    fn install(
        fs: &dyn FileSystem,
        path: &Path,
        header: &Header,
    ) -> Result<(Arc<dyn FileHandle>, Extent)> {
        let new_path = new_file_path(path);
        let extent = write_empty_log(fs, &new_path, header)?;
        Ok((Self::rename_into_place(fs, &new_path, path)?, extent))
    }

    fn rename_into_place(
        fs: &dyn FileSystem,
        new_path: &Path,
        path: &Path,
    ) -> Result<Arc<dyn FileHandle>> {
        fs.rename(new_path, path)?;
        fs.sync_dir(&parent_dir(path))?;
        Ok(Arc::from(fs.open(path, OpenMode::ReadWrite)?))
    }

    /// Appends a frame holding `payload` for transaction `txn_id` and returns its LSN once the
    /// frame is durable. Concurrent commits share one write and one sync. After a failed write
    /// or sync this and every later commit fails: the database is read-only from then on.
    pub fn commit(&self, txn_id: u64, payload: &[u8]) -> Result<u64> {
        self.queue.commit(txn_id, payload)
    }

    /// Queues a frame and returns its LSN before it is durable; see [`Wal::wait_durable`].
    /// Frames are written in the order of these calls.
    pub fn append(&self, txn_id: u64, payload: &[u8]) -> Result<u64> {
        self.queue.append(txn_id, payload)
    }

    /// Returns once every frame up to `lsn` is durable (group commit: one committer writes and
    /// syncs everything queued, the others wait), or an error if the log failed.
    pub fn wait_durable(&self, lsn: u64) -> Result<()> {
        self.queue.wait_durable(lsn)
    }

    /// Replaces the log by one whose first frame has LSN `base_lsn` and that holds `kept`,
    /// the frames (LSN, transaction id, payload) after a checkpoint's LSN, which must be
    /// `base_lsn`, `base_lsn + 1`, ... up to the last LSN queued: called once a checkpoint
    /// holds every earlier frame. Waits for commits in flight; a crash during the reset leaves
    /// the old log or the new one, each holding every kept frame.
    pub fn reset(&self, base_lsn: u64, kept: &[(u64, u64, &[u8])]) -> Result<()> {
        self.replace(base_lsn, kept, None)
    }

    /// [`Wal::reset`], the new log's frames checksummed as `mode` says (unchanged if `None`).
    fn replace(&self, base_lsn: u64, kept: &[(u64, u64, &[u8])], mode: Option<bool>) -> Result<()> {
        let mut state = self.queue.lock_quiet();
        state.check_failure()?;
        if mode.is_some_and(|checksums| checksums != state.checksums)
            && state.next_lsn != state.base_lsn
        {
            return Err(Error::internal(
                "a write-ahead log that holds frames cannot change its checksum mode",
            ));
        }
        let next_lsn = base_lsn + kept.len() as u64;
        let consecutive = kept
            .iter()
            .enumerate()
            .all(|(i, (lsn, ..))| *lsn == base_lsn + i as u64);
        let keeps_all = kept.is_empty() || next_lsn == state.next_lsn;
        if base_lsn < LSN_MIN || !consecutive || !keeps_all || next_lsn < state.next_lsn {
            return Err(Error::internal(format!(
                "resetting the write-ahead log to LSN {base_lsn} with {} frames would lose or \
                 reuse LSNs (next is {})",
                kept.len(),
                state.next_lsn
            )));
        }
        let checksums = mode.unwrap_or(state.checksums);
        let header = Header {
            database_id: self.database_id,
            base_lsn,
            checksums,
        };
        let mut frames = Vec::new();
        for (index, (lsn, txn_id, payload)) in kept.iter().enumerate() {
            let frame = format::FrameHeader {
                lsn: *lsn,
                txn_id: *txn_id,
                batch_index: u32::try_from(index).expect("kept frames fit in a batch"),
                payload_bytes: u32::try_from(payload.len()).expect("payload was checked"),
            };
            format::encode_frame(&mut frames, &frame, payload, checksums);
        }
        // A failure before the rename leaves the old log whole and in use.
        let new_path = new_file_path(&self.path);
        let extent = write_log(self.fs.as_ref(), &new_path, &header, &frames)?;
        match Self::rename_into_place(self.fs.as_ref(), &new_path, &self.path) {
            Ok(file) => {
                let stats = state.stats;
                *state = QueueState::new(
                    file,
                    base_lsn,
                    next_lsn,
                    extent.used,
                    extent.allocated,
                    checksums,
                );
                state.stats = stats;
                Ok(())
            }
            // Which file the name holds is unknown now: appending to either could lose frames.
            Err(cause) => Err(self.queue.fail(&mut state, &cause)),
        }
    }

    /// Whether the log's frames carry checksums.
    pub fn checksums(&self) -> bool {
        self.state().checksums
    }

    /// Starts a fresh log whose frames carry checksums or not, as `checksums` says. Only a log
    /// that holds no frame can change: frames are read back in the mode they were written in.
    pub fn change_checksums(&self, checksums: bool) -> Result<()> {
        let next_lsn = {
            let state = self.queue.lock_quiet();
            if state.checksums == checksums {
                return Ok(());
            }
            state.next_lsn
        };
        // `replace` checks again, under the lock, that the log still holds no frame.
        self.replace(next_lsn, &[], Some(checksums))
    }

    fn state(&self) -> MutexGuard<'_, QueueState> {
        self.queue.lock()
    }

    /// Bytes of the log file that hold its header and durable frames (its used length, not the
    /// preallocated one).
    pub fn size_bytes(&self) -> u64 {
        self.state().end_bytes
    }

    /// Bytes of the log file written: its frames and the zeros preallocated after them.
    pub fn allocated_bytes(&self) -> u64 {
        self.state().allocated_bytes
    }

    /// The LSN of the last durable frame (`base_lsn - 1` when the log holds none).
    pub fn last_lsn(&self) -> u64 {
        self.state().durable_lsn
    }

    /// The LSN the log's first frame has.
    pub fn base_lsn(&self) -> u64 {
        self.state().base_lsn
    }

    pub fn stats(&self) -> WalStats {
        self.state().stats
    }

    /// Whether the log has failed and refuses commits.
    pub fn is_failed(&self) -> bool {
        self.state().failure.is_some()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
