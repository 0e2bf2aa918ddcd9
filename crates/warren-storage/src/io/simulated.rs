//! [`SimulatedFileSystem`]: files held in memory for tests. For every file it keeps the bytes a
//! reader sees now and the bytes that are durable (made so by `sync_data`), and the writes in
//! between; for the directory it keeps the names visible now and the names made durable by
//! `sync_dir`. A crash keeps the durable state plus an arbitrary (seeded) subset of the unsynced
//! writes, torn at [`SECTOR_BYTES`] granularity, and a prefix of the unsynced directory changes:
//! a file created or renamed but not yet made durable by a `sync_dir` of its directory may
//! vanish (or keep its old name), and a removed one may come back. Directories themselves are
//! durable from their creation. The [`FaultPlan`] adds failing syncs, failing writes, short
//! writes, `EIO` at any chosen operation and crashes at a chosen operation. All state lives in
//! the value (no globals), so tests run in parallel.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use warren_common::{Error, Result};

use super::fault_plan::SeededRng;
use super::{
    io_error, parent_dir, FaultPlan, FileHandle, FileLock, FileMap, FileSystem, OpenMode,
    SECTOR_BYTES,
};

/// Counts of what the simulated file system was asked to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimulatedStats {
    /// `sync_data` calls, failed ones included.
    pub syncs: u64,
    /// `write_at` calls, failed and short ones included.
    pub writes: u64,
    /// `sync_dir` calls.
    pub dir_syncs: u64,
    /// Crashes so far.
    pub crashes: u64,
    /// Mutating operations (the clock of [`FaultPlan::crash_at_operation`]).
    pub operations: u64,
    /// Operations failed with `EIO` by [`FaultPlan::eio_at_operation`].
    pub injected_eio: u64,
}

/// An in-memory file system with durability tracking and fault injection. Clones share files.
#[derive(Clone, Debug)]
pub struct SimulatedFileSystem {
    disk: Arc<Mutex<Disk>>,
}

#[derive(Debug)]
struct Disk {
    inodes: HashMap<u64, Inode>,
    next_inode: u64,
    /// The names a process sees now.
    names: BTreeMap<PathBuf, u64>,
    /// The names that survive a crash.
    durable_names: BTreeMap<PathBuf, u64>,
    /// Directory changes not yet made durable, in the order they happened.
    pending_dir_changes: Vec<DirChange>,
    /// Directories (durable from their creation).
    dirs: BTreeSet<PathBuf>,
    /// Writer locks held now (a crash ends the process that held them only when its handles
    /// are dropped, as the tests do).
    locks: BTreeSet<PathBuf>,
    plan: FaultPlan,
    rng: SeededRng,
    stats: SimulatedStats,
    /// Bumped by every crash: handles opened before it fail.
    generation: u64,
    /// The path of the last operation the plan crashed or failed with `EIO`.
    fault_path: Option<PathBuf>,
}

#[derive(Debug, Default)]
struct Inode {
    current: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<PendingChange>,
}

#[derive(Debug)]
enum PendingChange {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug)]
enum DirChange {
    Link { path: PathBuf, inode: u64 },
    Unlink { path: PathBuf },
    Rename { from: PathBuf, to: PathBuf },
}

impl DirChange {
    fn is_in(&self, dir: &Path) -> bool {
        match self {
            DirChange::Link { path, .. } | DirChange::Unlink { path } => parent_dir(path) == dir,
            DirChange::Rename { from, to } => parent_dir(from) == dir && parent_dir(to) == dir,
        }
    }

    fn apply(&self, names: &mut BTreeMap<PathBuf, u64>) {
        match self {
            DirChange::Link { path, inode } => {
                names.insert(path.clone(), *inode);
            }
            DirChange::Unlink { path } => {
                names.remove(path);
            }
            DirChange::Rename { from, to } => {
                if let Some(inode) = names.remove(from) {
                    names.insert(to.clone(), inode);
                }
            }
        }
    }
}

fn os_error(code: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(code)
}

fn crash_error(path: &Path) -> Error {
    Error::Io(format!(
        "{}: the simulated machine crashed (handle opened before the crash)",
        path.display()
    ))
}

/// Writes `bytes` at `offset` of `image`, extending it with zeros as needed.
fn write_into(image: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = usize::try_from(offset).expect("simulated files fit in memory");
    let end = start + bytes.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(bytes);
}

fn set_len_of(image: &mut Vec<u8>, len: u64) {
    image.resize(
        usize::try_from(len).expect("simulated files fit in memory"),
        0,
    );
}

/// Applies the parts of `change` that a crash kept: each sector-aligned piece of a write, and a
/// length change, survives or not by a coin toss.
fn apply_torn(image: &mut Vec<u8>, change: &PendingChange, rng: &mut SeededRng) {
    match change {
        PendingChange::Write { offset, bytes } => {
            let end = offset + bytes.len() as u64;
            let mut start = *offset;
            while start < end {
                let piece_end = end.min((start / SECTOR_BYTES + 1) * SECTOR_BYTES);
                if rng.coin() {
                    let from = (start - offset) as usize;
                    let to = (piece_end - offset) as usize;
                    write_into(image, start, &bytes[from..to]);
                }
                start = piece_end;
            }
        }
        PendingChange::SetLen(len) => {
            if rng.coin() {
                set_len_of(image, *len);
            }
        }
    }
}

fn apply_whole(image: &mut Vec<u8>, change: &PendingChange) {
    match change {
        PendingChange::Write { offset, bytes } => write_into(image, *offset, bytes),
        PendingChange::SetLen(len) => set_len_of(image, *len),
    }
}

/// What the plan does to an operation that goes ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Injected {
    Nothing,
    /// The operation fails with `EIO` (see [`FaultPlan::eio_at_operation`]).
    Eio,
}

impl Disk {
    /// Counts a mutating operation; crashes instead of it when the plan says so, and says
    /// whether it fails with `EIO`.
    fn begin_mutation(&mut self, path: &Path) -> Result<Injected> {
        self.stats.operations += 1;
        if self.plan.crash_at_operation == Some(self.stats.operations) {
            self.fault_path = Some(path.to_path_buf());
            self.crash();
            return Err(crash_error(path));
        }
        if self.plan.eio_at_operation == Some(self.stats.operations) {
            self.stats.injected_eio += 1;
            self.fault_path = Some(path.to_path_buf());
            return Ok(Injected::Eio);
        }
        Ok(Injected::Nothing)
    }

    /// Counts a mutating operation that, when the plan says so, fails with `EIO` having done
    /// nothing.
    fn begin_or_fail(&mut self, path: &Path) -> Result<()> {
        match self.begin_mutation(path)? {
            Injected::Nothing => Ok(()),
            Injected::Eio => Err(io_error(path, os_error(libc::EIO))),
        }
    }

    fn crash(&mut self) {
        for inode in self.inodes.values_mut() {
            let mut image = std::mem::take(&mut inode.durable);
            for change in &inode.pending {
                apply_torn(&mut image, change, &mut self.rng);
            }
            inode.pending.clear();
            inode.current = image.clone();
            inode.durable = image;
        }
        let kept = self
            .rng
            .range_inclusive(0, self.pending_dir_changes.len() as u64) as usize;
        for change in &self.pending_dir_changes[..kept] {
            change.apply(&mut self.durable_names);
        }
        self.pending_dir_changes.clear();
        self.names = self.durable_names.clone();
        let names = &self.names;
        self.inodes
            .retain(|number, _| names.values().any(|named| named == number));
        self.generation += 1;
        self.stats.crashes += 1;
    }

    /// The inode of a handle, or an error when the handle predates a crash.
    fn inode(&mut self, handle: &SimulatedFile) -> Result<&mut Inode> {
        if handle.generation != self.generation {
            return Err(crash_error(&handle.path));
        }
        Ok(self
            .inodes
            .get_mut(&handle.inode)
            .expect("a live handle's inode exists"))
    }

    fn write(&mut self, handle: &SimulatedFile, offset: u64, bytes: &[u8]) -> Result<usize> {
        self.inode(handle)?;
        self.begin_or_fail(&handle.path)?;
        self.stats.writes += 1;
        if let Some((at, fault)) = self.plan.write_failure_at {
            if at == self.stats.writes {
                return Err(io_error(&handle.path, fault.os_error()));
            }
        }
        let count = if self.plan.short_writes && bytes.len() > 1 {
            self.rng.range_inclusive(1, bytes.len() as u64 - 1) as usize
        } else {
            bytes.len()
        };
        let inode = self.inode(handle)?;
        write_into(&mut inode.current, offset, &bytes[..count]);
        inode.pending.push(PendingChange::Write {
            offset,
            bytes: bytes[..count].to_vec(),
        });
        Ok(count)
    }

    fn sync(&mut self, handle: &SimulatedFile) -> Result<()> {
        self.inode(handle)?;
        let injected = self.begin_mutation(&handle.path)?;
        self.stats.syncs += 1;
        let fails =
            injected == Injected::Eio || self.plan.sync_failure_at == Some(self.stats.syncs);
        let inode = self.inode(handle)?;
        let pending = std::mem::take(&mut inode.pending);
        if fails {
            // The writes are lost to the disk, though the page cache still shows them.
            return Err(io_error(&handle.path, os_error(libc::EIO)));
        }
        for change in &pending {
            apply_whole(&mut inode.durable, change);
        }
        debug_assert_eq!(inode.durable, inode.current);
        Ok(())
    }

    fn set_len(&mut self, handle: &SimulatedFile, len: u64) -> Result<()> {
        self.inode(handle)?;
        self.begin_or_fail(&handle.path)?;
        let inode = self.inode(handle)?;
        set_len_of(&mut inode.current, len);
        inode.pending.push(PendingChange::SetLen(len));
        Ok(())
    }

    fn create(&mut self, path: &Path) -> Result<u64> {
        self.begin_or_fail(path)?;
        if self.names.contains_key(path) {
            return Err(io_error(path, os_error(libc::EEXIST)));
        }
        let number = self.next_inode;
        self.next_inode += 1;
        self.inodes.insert(number, Inode::default());
        self.names.insert(path.to_path_buf(), number);
        self.pending_dir_changes.push(DirChange::Link {
            path: path.to_path_buf(),
            inode: number,
        });
        Ok(number)
    }

    fn change_dir(&mut self, path: &Path, change: DirChange) -> Result<()> {
        self.begin_or_fail(path)?;
        let source = match &change {
            DirChange::Unlink { path } | DirChange::Rename { from: path, .. } => path,
            DirChange::Link { .. } => unreachable!("links are made by create"),
        };
        if !self.names.contains_key(source) {
            return Err(io_error(source, os_error(libc::ENOENT)));
        }
        change.apply(&mut self.names);
        self.pending_dir_changes.push(change);
        Ok(())
    }

    fn sync_dir(&mut self, dir: &Path) -> Result<()> {
        let injected = self.begin_mutation(dir)?;
        self.stats.dir_syncs += 1;
        if injected == Injected::Eio {
            // Whether the changes reached the disk is unknown: they stay pending, and a crash
            // keeps any prefix of them.
            return Err(io_error(dir, os_error(libc::EIO)));
        }
        let (synced, pending): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_dir_changes)
            .into_iter()
            .partition(|change| change.is_in(dir));
        for change in &synced {
            change.apply(&mut self.durable_names);
        }
        self.pending_dir_changes = pending;
        Ok(())
    }
}

impl SimulatedFileSystem {
    /// An empty file system that injects the faults of `plan`.
    pub fn new(plan: FaultPlan) -> Self {
        let rng = SeededRng::new(plan.seed);
        let disk = Disk {
            inodes: HashMap::new(),
            next_inode: 1,
            names: BTreeMap::new(),
            durable_names: BTreeMap::new(),
            pending_dir_changes: Vec::new(),
            dirs: BTreeSet::new(),
            locks: BTreeSet::new(),
            plan,
            rng,
            stats: SimulatedStats::default(),
            generation: 0,
            fault_path: None,
        };
        Self {
            disk: Arc::new(Mutex::new(disk)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        // A panicking test thread must not hide the disk from the threads that check it.
        self.disk
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Crashes the machine now: every file keeps its durable bytes plus a seeded subset of its
    /// unsynced writes (torn at sector granularity); handles opened before fail from now on.
    pub fn crash(&self) {
        self.lock().crash();
    }

    /// Replaces the fault plan (the random generator keeps its state; counters keep counting).
    pub fn set_faults(&self, plan: FaultPlan) {
        self.lock().plan = plan;
    }

    pub fn stats(&self) -> SimulatedStats {
        self.lock().stats
    }

    /// The path (a file, or a directory for `sync_dir`) of the last operation that the plan
    /// crashed or failed with `EIO`: tests report where their faults landed.
    pub fn fault_path(&self) -> Option<PathBuf> {
        self.lock().fault_path.clone()
    }

    /// The bytes a reader of `path` sees now.
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let disk = self.lock();
        let number = disk.names.get(path)?;
        Some(disk.inodes[number].current.clone())
    }

    /// The bytes of `path` that are durable (what a crash with no unsynced writes leaves).
    pub fn durable_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let disk = self.lock();
        let number = disk.names.get(path)?;
        Some(disk.inodes[number].durable.clone())
    }
}

impl FileSystem for SimulatedFileSystem {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn FileHandle>> {
        let mut disk = self.lock();
        let inode = if mode == OpenMode::CreateNew {
            disk.create(path)?
        } else {
            *disk
                .names
                .get(path)
                .ok_or_else(|| io_error(path, os_error(libc::ENOENT)))?
        };
        Ok(Box::new(SimulatedFile {
            disk: Arc::clone(&self.disk),
            inode,
            generation: disk.generation,
            path: path.to_path_buf(),
            writable: mode.writable(),
        }))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let disk = self.lock();
        Ok(disk.names.keys().any(|name| name.starts_with(path))
            || disk.dirs.iter().any(|dir| dir.starts_with(path)))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let change = DirChange::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
        };
        self.lock().change_dir(from, change)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        let change = DirChange::Unlink {
            path: path.to_path_buf(),
        };
        self.lock().change_dir(path, change)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.lock().sync_dir(dir)
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut disk = self.lock();
        if disk.names.contains_key(path) {
            return Err(io_error(path, os_error(libc::EEXIST)));
        }
        for ancestor in path.ancestors() {
            if !ancestor.as_os_str().is_empty() {
                disk.dirs.insert(ancestor.to_path_buf());
            }
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> Result<bool> {
        let disk = self.lock();
        Ok(disk.dirs.contains(path)
            || disk
                .names
                .keys()
                .any(|name| name != path && name.starts_with(path)))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let disk = self.lock();
        if !disk.dirs.contains(dir) {
            return Err(io_error(dir, os_error(libc::ENOENT)));
        }
        Ok(disk
            .names
            .keys()
            .filter(|name| parent_dir(name) == dir)
            .cloned()
            .collect())
    }

    fn map(&self, path: &Path) -> Result<Arc<FileMap>> {
        let disk = self.lock();
        let number = disk
            .names
            .get(path)
            .ok_or_else(|| io_error(path, os_error(libc::ENOENT)))?;
        Ok(Arc::new(FileMap::copied(&disk.inodes[number].current)))
    }

    fn try_lock(&self, path: &Path) -> Result<Option<FileLock>> {
        if !self.lock().locks.insert(path.to_path_buf()) {
            return Ok(None);
        }
        let guard = SimulatedLock {
            disk: Arc::clone(&self.disk),
            path: path.to_path_buf(),
        };
        Ok(Some(FileLock::new(Box::new(guard))))
    }
}

/// A writer lock of the simulated file system, released on drop.
#[derive(Debug)]
struct SimulatedLock {
    disk: Arc<Mutex<Disk>>,
    path: PathBuf,
}

impl Drop for SimulatedLock {
    fn drop(&mut self) {
        let mut disk = self
            .disk
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        disk.locks.remove(&self.path);
    }
}

/// An open simulated file: an inode number valid until the next crash.
#[derive(Debug)]
struct SimulatedFile {
    disk: Arc<Mutex<Disk>>,
    inode: u64,
    generation: u64,
    path: PathBuf,
    writable: bool,
}

impl SimulatedFile {
    fn lock(&self) -> MutexGuard<'_, Disk> {
        self.disk
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn check_writable(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(io_error(&self.path, os_error(libc::EBADF)))
        }
    }
}

impl FileHandle for SimulatedFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn len(&self) -> Result<u64> {
        let mut disk = self.lock();
        Ok(disk.inode(self)?.current.len() as u64)
    }

    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<usize> {
        let mut disk = self.lock();
        let current = &disk.inode(self)?.current;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(current.len());
        let count = buffer.len().min(current.len() - start);
        buffer[..count].copy_from_slice(&current[start..start + count]);
        Ok(count)
    }

    fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<usize> {
        self.check_writable()?;
        self.lock().write(self, offset, bytes)
    }

    fn sync_data(&self) -> Result<()> {
        let latency = self.lock().plan.sync_latency;
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        self.lock().sync(self)
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.check_writable()?;
        self.lock().set_len(self, len)
    }
}
