//! [`SimulatedFileSystem`]: files held in memory for tests. For every file it keeps the bytes a
//! reader sees now and the bytes that are durable (made so by `sync_data`), and the writes in
//! between; for the directory it keeps the names visible now and the names made durable by
//! `sync_dir`. A crash keeps the durable state plus an arbitrary (seeded) subset of the unsynced
//! writes, torn at [`SECTOR_BYTES`] granularity, and a prefix of the unsynced directory changes:
//! a file created or renamed but not yet made durable by a `sync_dir` of its directory may
//! vanish (or keep its old name), and a removed one may come back. A directory is such an entry
//! too: one created but not made durable by a `sync_dir` of its parent may vanish at a crash,
//! with every file in it (a directory without a parent, `/`, is durable). The [`FaultPlan`]
//! adds failing syncs, failing writes, short writes, `EIO` at any chosen operation, crashes at
//! a chosen operation, and read faults: `EIO` on a read, short reads, and a bit flipped in the
//! bytes a read returns. All state lives in the value (no globals), so tests run in parallel.

use std::collections::{BTreeMap, BTreeSet};
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
    /// Reads: `read_at` calls and maps (the clock of the plan's read faults).
    pub reads: u64,
    /// Reads failed or bit-flipped by the plan.
    pub injected_read_faults: u64,
}

/// An in-memory file system with durability tracking and fault injection. Clones share files.
#[derive(Clone, Debug)]
pub struct SimulatedFileSystem {
    disk: Arc<Mutex<Disk>>,
    /// For a process's view ([`SimulatedFileSystem::process`]): the crash count when it was
    /// taken. Once the machine crashed again, every operation through it fails: the process
    /// died with the machine, and none of its threads may touch the disk the machine reboots
    /// with. `None` for the test's own view, which outlives crashes.
    boot: Option<u64>,
}

#[derive(Clone, Debug)]
struct Disk {
    /// Ordered by number: a crash tears the files' pending writes in this order, drawing from
    /// `rng`, so one seed gives one outcome (a std `HashMap` visited them in a random order).
    inodes: BTreeMap<u64, Inode>,
    next_inode: u64,
    /// The names a process sees now.
    names: BTreeMap<PathBuf, u64>,
    /// The names that survive a crash.
    durable_names: BTreeMap<PathBuf, u64>,
    /// Directory changes not yet made durable, in the order they happened.
    pending_dir_changes: Vec<DirChange>,
    /// The directories a process sees now.
    dirs: BTreeSet<PathBuf>,
    /// The directories that survive a crash.
    durable_dirs: BTreeSet<PathBuf>,
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

#[derive(Clone, Debug, Default)]
struct Inode {
    current: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<PendingChange>,
}

#[derive(Clone, Debug)]
enum PendingChange {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

#[derive(Clone, Debug)]
enum DirChange {
    Link { path: PathBuf, inode: u64 },
    MakeDir { path: PathBuf },
    Unlink { path: PathBuf },
    Rename { from: PathBuf, to: PathBuf },
}

impl DirChange {
    fn is_in(&self, dir: &Path) -> bool {
        match self {
            DirChange::Link { path, .. }
            | DirChange::Unlink { path }
            | DirChange::MakeDir { path } => parent_dir(path) == dir,
            DirChange::Rename { from, to } => parent_dir(from) == dir && parent_dir(to) == dir,
        }
    }

    fn apply(&self, names: &mut BTreeMap<PathBuf, u64>, dirs: &mut BTreeSet<PathBuf>) {
        match self {
            DirChange::MakeDir { path } => {
                dirs.insert(path.clone());
            }
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

    /// Counts a read of `path`; fails it with `EIO` when the plan says so, and says whether
    /// its bytes get a bit flipped.
    fn begin_read(&mut self, path: &Path) -> Result<bool> {
        self.stats.reads += 1;
        if self.plan.read_failure_at == Some(self.stats.reads) {
            self.stats.injected_read_faults += 1;
            self.fault_path = Some(path.to_path_buf());
            return Err(io_error(path, os_error(libc::EIO)));
        }
        let flip = self.plan.bit_flip_at_read == Some(self.stats.reads);
        if flip {
            self.stats.injected_read_faults += 1;
            self.fault_path = Some(path.to_path_buf());
        }
        Ok(flip)
    }

    /// Flips one seeded bit of `bytes` (none when empty).
    fn flip_a_bit(&mut self, bytes: &mut [u8]) {
        if bytes.is_empty() {
            return;
        }
        let bit = self.rng.range_inclusive(0, bytes.len() as u64 * 8 - 1);
        bytes[(bit / 8) as usize] ^= 1 << (bit % 8);
    }

    fn read(&mut self, handle: &SimulatedFile, offset: u64, buffer: &mut [u8]) -> Result<usize> {
        self.inode(handle)?;
        let flip = self.begin_read(&handle.path)?;
        let short = self.plan.short_reads;
        let (start, available) = {
            let current = &self.inode(handle)?.current;
            let start = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(current.len());
            (start, buffer.len().min(current.len() - start))
        };
        let count = if short && available > 1 {
            self.rng.range_inclusive(1, available as u64 - 1) as usize
        } else {
            available
        };
        let current = &self.inode(handle)?.current;
        buffer[..count].copy_from_slice(&current[start..start + count]);
        if flip {
            self.flip_a_bit(&mut buffer[..count]);
        }
        Ok(count)
    }

    /// Creates the directories of `path` that are missing: each is durable once its parent
    /// is synced (one without a parent at once).
    fn make_dirs(&mut self, path: &Path) {
        let missing: Vec<PathBuf> = path
            .ancestors()
            .filter(|dir| !dir.as_os_str().is_empty() && !self.dirs.contains(*dir))
            .map(Path::to_path_buf)
            .collect();
        for dir in missing.into_iter().rev() {
            self.dirs.insert(dir.clone());
            if dir.parent().is_none() {
                self.durable_dirs.insert(dir);
            } else {
                self.pending_dir_changes
                    .push(DirChange::MakeDir { path: dir });
            }
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
            change.apply(&mut self.durable_names, &mut self.durable_dirs);
        }
        self.pending_dir_changes.clear();
        // Files in a directory that vanished vanish with it.
        let durable_dirs = &self.durable_dirs;
        let lost: Vec<PathBuf> = self
            .dirs
            .iter()
            .filter(|dir| !durable_dirs.contains(*dir))
            .cloned()
            .collect();
        self.durable_names
            .retain(|name, _| !lost.iter().any(|dir| name.starts_with(dir)));
        self.dirs = self.durable_dirs.clone();
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
            DirChange::Link { .. } | DirChange::MakeDir { .. } => {
                unreachable!("links and directories are made by create and create_dir_all")
            }
        };
        if !self.names.contains_key(source) {
            return Err(io_error(source, os_error(libc::ENOENT)));
        }
        change.apply(&mut self.names, &mut self.dirs);
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
            change.apply(&mut self.durable_names, &mut self.durable_dirs);
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
            inodes: BTreeMap::new(),
            next_inode: 1,
            names: BTreeMap::new(),
            durable_names: BTreeMap::new(),
            pending_dir_changes: Vec::new(),
            dirs: BTreeSet::new(),
            durable_dirs: BTreeSet::new(),
            locks: BTreeSet::new(),
            plan,
            rng,
            stats: SimulatedStats::default(),
            generation: 0,
            fault_path: None,
        };
        Self {
            disk: Arc::new(Mutex::new(disk)),
            boot: None,
        }
    }

    /// The view of one process that uses the file system from now on (a database opened
    /// on it): after the next crash every operation through it fails, as the process would
    /// have died with the machine, so that a thread of it still running (a background
    /// checkpoint) cannot write to the disk the machine reboots with.
    pub fn process(&self) -> SimulatedFileSystem {
        SimulatedFileSystem {
            disk: Arc::clone(&self.disk),
            boot: Some(self.lock().stats.crashes),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        // A panicking test thread must not hide the disk from the threads that check it.
        self.disk
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The disk for an operation on `path`, or the crash's error for a process that died in
    /// a crash.
    fn disk_for(&self, path: &Path) -> Result<MutexGuard<'_, Disk>> {
        let disk = self.lock();
        match self.boot {
            Some(boot) if boot != disk.stats.crashes => Err(crash_error(path)),
            _ => Ok(disk),
        }
    }

    /// Crashes the machine now: every file keeps its durable bytes plus a seeded subset of its
    /// unsynced writes (torn at sector granularity); handles opened before fail from now on.
    pub fn crash(&self) {
        self.lock().crash();
    }

    /// An independent copy of this file system as it is now (its files, names, pending
    /// changes, fault plan and counters): tests run an operation on the copy first to learn,
    /// say, how many reads it makes. Locks are not copied.
    pub fn fork(&self) -> SimulatedFileSystem {
        let mut disk = self.lock().clone();
        disk.locks.clear();
        Self {
            disk: Arc::new(Mutex::new(disk)),
            boot: None,
        }
    }

    /// Replaces the fault plan and reseeds the random generator from the plan's seed, so that
    /// what happens from here on depends on that seed alone (and not on the random numbers
    /// drawn before); counters keep counting.
    pub fn set_faults(&self, plan: FaultPlan) {
        let mut disk = self.lock();
        disk.rng = SeededRng::new(plan.seed);
        disk.plan = plan;
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
        let mut disk = self.disk_for(path)?;
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
        let disk = self.disk_for(path)?;
        Ok(disk.names.keys().any(|name| name.starts_with(path))
            || disk.dirs.iter().any(|dir| dir.starts_with(path)))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let change = DirChange::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
        };
        self.disk_for(from)?.change_dir(from, change)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        let change = DirChange::Unlink {
            path: path.to_path_buf(),
        };
        self.disk_for(path)?.change_dir(path, change)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.disk_for(dir)?.sync_dir(dir)
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut disk = self.disk_for(path)?;
        if disk.names.contains_key(path) {
            return Err(io_error(path, os_error(libc::EEXIST)));
        }
        disk.make_dirs(path);
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> Result<bool> {
        let disk = self.disk_for(path)?;
        Ok(disk.dirs.contains(path)
            || disk
                .names
                .keys()
                .any(|name| name != path && name.starts_with(path)))
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let disk = self.disk_for(dir)?;
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
        let mut disk = self.disk_for(path)?;
        let number = *disk
            .names
            .get(path)
            .ok_or_else(|| io_error(path, os_error(libc::ENOENT)))?;
        let flip = disk.begin_read(path)?;
        let mut bytes = disk.inodes[&number].current.clone();
        if flip {
            disk.flip_a_bit(&mut bytes);
        }
        Ok(Arc::new(FileMap::copied(&bytes)))
    }

    fn try_lock(&self, path: &Path) -> Result<Option<FileLock>> {
        if !self.disk_for(path)?.locks.insert(path.to_path_buf()) {
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
        self.lock().read(self, offset, buffer)
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
