//! Group commit: committers queue their encoded frames; one of them, the leader, takes every
//! frame queued so far, appends them with one write and makes them durable with one
//! `sync_data`, while the others wait. Frames that queue during that sync form the next batch.
//! A leader that finds fewer frames queued than its predecessor wrote waits up to
//! [`GATHER_WAIT_MAX`] for as many (the committers of the last batch are likely about to queue
//! again), so that batches do not alternate between one frame and the rest; a lone committer
//! (last batch of one frame) never waits.
//! The file is preallocated (`space.rs`): when less than half an extension of room is left after
//! a batch, its leader fills the next extension with zeros and syncs them once its batch's
//! committers are released, so commits overwrite allocated blocks.
//! A failed write or sync is never retried (after `EIO` the kernel may have dropped the data):
//! the queue enters a failed state and refuses every later commit.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use warren_common::{Error, Result};

use super::format::{encode_frame, FrameHeader, BATCH_FRAMES_MAX, PAYLOAD_BYTES_MAX};
use super::space::{extension_needed, write_zeros};
use crate::io::{write_all_at, FileHandle};

/// The longest a leader waits for the committers of the last batch to queue again.
pub const GATHER_WAIT_MAX: Duration = Duration::from_micros(150);

/// Counts of the work a log has done since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Frames made durable.
    pub frames: u64,
    /// Batches written, each with one write and one `sync_data`.
    pub syncs: u64,
    /// Bytes of frames made durable.
    pub bytes: u64,
    /// Extensions of the preallocated file (zeros written and synced).
    pub extensions: u64,
}

/// The mutable state of a log, behind the queue's mutex.
#[derive(Debug)]
pub(super) struct QueueState {
    pub file: Arc<dyn FileHandle>,
    pub base_lsn: u64,
    /// The LSN the next commit takes.
    pub next_lsn: u64,
    /// The last LSN known durable (`base_lsn - 1` when none).
    pub durable_lsn: u64,
    /// Bytes of the file that hold the header and durable frames.
    pub end_bytes: u64,
    /// Bytes of the file written (frames, then zeros): at least `end_bytes`.
    pub allocated_bytes: u64,
    /// Whether frames carry checksums (the log header says).
    pub checksums: bool,
    /// Encoded frames waiting for the next leader.
    pending: Vec<u8>,
    pending_frames: u32,
    leader_active: bool,
    /// A leader is waiting for frames: appends wake it.
    gathering: bool,
    /// Frames in the last batch written (what the next leader waits for, up to a limit).
    last_batch_frames: u32,
    /// Set once a write or sync fails; every later commit returns it.
    pub failure: Option<Error>,
    pub stats: WalStats,
}

impl QueueState {
    pub fn new(
        file: Arc<dyn FileHandle>,
        base_lsn: u64,
        next_lsn: u64,
        end_bytes: u64,
        allocated_bytes: u64,
        checksums: bool,
    ) -> Self {
        assert!(next_lsn >= base_lsn && base_lsn >= 1);
        assert!(allocated_bytes >= end_bytes, "the frames lie in the file");
        Self {
            file,
            base_lsn,
            next_lsn,
            durable_lsn: next_lsn - 1,
            end_bytes,
            allocated_bytes,
            checksums,
            pending: Vec::new(),
            pending_frames: 0,
            leader_active: false,
            gathering: false,
            last_batch_frames: 0,
            failure: None,
            stats: WalStats::default(),
        }
    }

    pub fn check_failure(&self) -> Result<()> {
        self.failure
            .as_ref()
            .map_or(Ok(()), |error| Err(error.clone()))
    }

    /// Whether no frame is being written, nor queued to be (a failed log writes no more).
    pub fn is_quiet(&self) -> bool {
        !self.leader_active && (self.pending_frames == 0 || self.failure.is_some())
    }

    fn enqueue(&mut self, txn_id: u64, payload: &[u8]) -> u64 {
        assert!(self.pending_frames < BATCH_FRAMES_MAX);
        let lsn = self.next_lsn;
        let header = FrameHeader {
            lsn,
            txn_id,
            batch_index: self.pending_frames,
            payload_bytes: u32::try_from(payload.len()).expect("payload size was checked"),
        };
        encode_frame(&mut self.pending, &header, payload, self.checksums);
        self.pending_frames += 1;
        self.next_lsn += 1;
        lsn
    }
}

/// The queue of a log: its state and the condition committers wait on.
#[derive(Debug)]
pub(super) struct CommitQueue {
    state: Mutex<QueueState>,
    changed: Condvar,
    /// What a gathering leader waits on (only it: appends do not wake every waiter).
    queued: Condvar,
    /// What appends to a full queue wait on (only they: a leader taking the queue does not
    /// wake the committers waiting for durability, which would find their frame not yet
    /// durable and wait again).
    room: Condvar,
    path: PathBuf,
}

/// Refuses a payload over [`PAYLOAD_BYTES_MAX`] (the log stays usable).
pub(super) fn check_payload_size(bytes: usize) -> Result<()> {
    if bytes > PAYLOAD_BYTES_MAX {
        return Err(Error::LimitExceeded(format!(
            "a write-ahead log frame holds at most {PAYLOAD_BYTES_MAX} bytes, not {bytes}"
        )));
    }
    Ok(())
}

/// The error of a log that could not be made durable.
fn read_only_error(path: &Path, cause: &Error) -> Error {
    Error::Io(format!(
        "the write-ahead log {} could not be made durable ({cause}); the database is now \
         read-only",
        path.display()
    ))
}

impl CommitQueue {
    pub fn new(state: QueueState, path: PathBuf) -> Self {
        Self {
            state: Mutex::new(state),
            changed: Condvar::new(),
            queued: Condvar::new(),
            room: Condvar::new(),
            path,
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, QueueState> {
        // Only a bug panics while holding the lock; the state it protects stays consistent.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, QueueState>) -> MutexGuard<'a, QueueState> {
        self.changed
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The state once no frame is queued or being written (new commits wait on the lock).
    pub fn lock_quiet(&self) -> MutexGuard<'_, QueueState> {
        let mut state = self.lock();
        while !state.is_quiet() {
            state = self.wait(state);
        }
        state
    }

    /// Marks the log failed: it refuses every later commit.
    pub fn fail(&self, state: &mut QueueState, cause: &Error) -> Error {
        let error = read_only_error(&self.path, cause);
        state.failure = Some(error.clone());
        self.changed.notify_all();
        self.room.notify_all();
        error
    }

    /// Appends one frame and returns its LSN once it is durable.
    pub fn commit(&self, txn_id: u64, payload: &[u8]) -> Result<u64> {
        let lsn = self.append(txn_id, payload)?;
        self.wait_durable(lsn)?;
        Ok(lsn)
    }

    /// Queues one frame and returns its LSN at once, before it is durable. Frames are written
    /// in the order of these calls, so a caller that orders its commits (the database's
    /// writer slot) calls this under its own lock and [`CommitQueue::wait_durable`] after.
    pub fn append(&self, txn_id: u64, payload: &[u8]) -> Result<u64> {
        check_payload_size(payload.len())?;
        let mut state = self.lock();
        while state.failure.is_none() && state.pending_frames >= BATCH_FRAMES_MAX {
            state = self
                .room
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.check_failure()?;
        let lsn = state.enqueue(txn_id, payload);
        if state.gathering {
            self.queued.notify_one();
        }
        Ok(lsn)
    }

    /// Returns once every frame up to `lsn` is durable, leading a batch write and sync if no
    /// other committer is; an error if the log failed first.
    pub fn wait_durable(&self, lsn: u64) -> Result<()> {
        let mut state = self.lock();
        assert!(lsn < state.next_lsn, "waiting for a frame never appended");
        loop {
            if state.durable_lsn >= lsn {
                return Ok(());
            }
            state.check_failure()?;
            state = if state.leader_active {
                self.wait(state)
            } else {
                self.lead(state)
            };
        }
    }

    /// Waits (up to [`GATHER_WAIT_MAX`]) until as many frames are queued as the last batch held.
    fn gather<'a>(&'a self, mut state: MutexGuard<'a, QueueState>) -> MutexGuard<'a, QueueState> {
        let wanted = state.last_batch_frames.min(BATCH_FRAMES_MAX);
        let deadline = Instant::now() + GATHER_WAIT_MAX;
        while state.pending_frames < wanted {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            state.gathering = true;
            state = self
                .queued
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        state.gathering = false;
        state
    }

    /// Writes and syncs every queued frame as one batch, with the lock released meanwhile.
    fn lead<'a>(&'a self, mut state: MutexGuard<'a, QueueState>) -> MutexGuard<'a, QueueState> {
        assert!(!state.leader_active && state.pending_frames > 0);
        state.leader_active = true;
        state = self.gather(state);
        let batch = std::mem::take(&mut state.pending);
        let frames = std::mem::take(&mut state.pending_frames);
        let last_lsn = state.next_lsn - 1;
        let file = Arc::clone(&state.file);
        let offset = state.end_bytes;
        drop(state);
        // Waiters for a full queue may proceed now that it is empty.
        self.room.notify_all();

        let result = write_all_at(file.as_ref(), offset, &batch).and_then(|()| file.sync_data());

        let mut state = self.lock();
        match result {
            Ok(()) => {
                assert_eq!(state.durable_lsn + u64::from(frames), last_lsn);
                state.durable_lsn = last_lsn;
                state.last_batch_frames = frames;
                state.end_bytes += batch.len() as u64;
                state.allocated_bytes = state.allocated_bytes.max(state.end_bytes);
                state.stats.frames += u64::from(frames);
                state.stats.syncs += 1;
                state.stats.bytes += batch.len() as u64;
                self.changed.notify_all();
                state = self.extend_if_needed(state);
            }
            Err(cause) => {
                self.fail(&mut state, &cause);
            }
        }
        state.leader_active = false;
        self.changed.notify_all();
        state
    }

    /// Fills the next extension of the file with zeros and syncs it when the room left is
    /// short, while the leader still holds the file (the next batch waits). A failure makes the
    /// log read-only, as a failed batch does: the kernel may have dropped pages a later batch
    /// would overwrite.
    fn extend_if_needed<'a>(
        &'a self,
        state: MutexGuard<'a, QueueState>,
    ) -> MutexGuard<'a, QueueState> {
        assert!(state.leader_active, "only a leader extends the file");
        let Some(to) = extension_needed(state.end_bytes, state.allocated_bytes) else {
            return state;
        };
        let from = state.allocated_bytes;
        let file = Arc::clone(&state.file);
        drop(state);
        let result = write_zeros(file.as_ref(), from, to).and_then(|()| file.sync_data());
        let mut state = self.lock();
        match result {
            Ok(()) => {
                state.allocated_bytes = to;
                state.stats.extensions += 1;
            }
            Err(cause) => {
                self.fail(&mut state, &cause);
            }
        }
        state
    }
}
