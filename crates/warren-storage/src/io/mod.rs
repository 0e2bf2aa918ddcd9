//! The file I/O layer: the one door through which every file of a database directory (the
//! write-ahead log, segment files, the manifest, the lock) reaches the disk. [`FileSystem`] and
//! [`FileHandle`] name exactly the operations storage needs; [`RealFileSystem`] runs them on the
//! operating system and [`SimulatedFileSystem`] holds files in memory, tracks which bytes and
//! names are durable, and injects crashes and I/O faults so that tests can check what survives
//! them. Segment files are read through [`FileSystem::map`]: a memory map on the real file
//! system, so opening a database stays O(catalog).
//!
//! A write may be short (it writes a prefix and says how much): callers go through
//! [`write_all_at`], which loops. Errors are the project's [`Error::Io`], naming the file.

mod fault_plan;
mod file_map;
mod file_writer;
mod real;
mod simulated;

#[cfg(test)]
mod tests;

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use warren_common::{Error, Result};

pub use fault_plan::{FaultPlan, SeededRng, WriteFault};
pub use file_map::FileMap;
pub use file_writer::FileWriter;
pub use real::RealFileSystem;
pub use simulated::{SimulatedFileSystem, SimulatedStats};

/// Bytes in a disk sector: the unit a crash tears unsynced writes at.
pub const SECTOR_BYTES: u64 = 512;

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// An existing file, for reading only.
    Read,
    /// An existing file, for reading and writing.
    ReadWrite,
    /// A new file for reading and writing; fails when the path exists.
    CreateNew,
}

impl OpenMode {
    pub fn writable(self) -> bool {
        self != OpenMode::Read
    }
}

/// A directory of files: opening, naming and the durability of names.
pub trait FileSystem: Send + Sync + Debug {
    /// Opens the file at `path`.
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn FileHandle>>;
    /// Whether a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> Result<bool>;
    /// Atomically replaces `to` (if any) by `from`. Durable only after [`Self::sync_dir`].
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Removes the file at `path`. Durable only after [`Self::sync_dir`].
    fn remove(&self, path: &Path) -> Result<()>;
    /// Makes the entries of directory `dir` (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Creates directory `path` and its missing parents. Each new directory is an entry of its
    /// parent: durable only after a [`Self::sync_dir`] of the parent.
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> Result<bool>;
    /// The files (not directories) directly in directory `dir`, as `dir.join(name)`.
    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>>;
    /// The whole file at `path`, read-only: mapped (not read) on the real file system. The
    /// file must not change while mapped: only files written once and then only read (segment
    /// files) are mapped.
    fn map(&self, path: &Path) -> Result<Arc<FileMap>>;
    /// Takes the exclusive writer lock `path` (creating the lock file) without waiting:
    /// `None` when another holder has it. The lock lasts as long as the returned guard.
    fn try_lock(&self, path: &Path) -> Result<Option<FileLock>>;
    /// The identity of the file at `path` (one `stat`); `None` when no file is there or this
    /// file system cannot tell (then callers cannot skip opening the file).
    fn file_id(&self, path: &Path) -> Result<Option<FileId>> {
        let _ = path;
        Ok(None)
    }
}

/// A file's identity: its device and inode. A file kept open keeps its inode, so no other
/// file can take the number while it is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    pub device: u64,
    pub inode: u64,
}

/// A held lock (see [`FileSystem::try_lock`]), released on drop.
#[derive(Debug)]
pub struct FileLock {
    _guard: Box<dyn Debug + Send + Sync>,
}

impl FileLock {
    pub fn new(guard: Box<dyn Debug + Send + Sync>) -> Self {
        Self { _guard: guard }
    }
}

/// An open file. Every method takes `&self` so that one handle can be shared between threads.
pub trait FileHandle: Send + Sync + Debug {
    /// The path the file was opened under (for error messages).
    fn path(&self) -> &Path;
    /// The file's length in bytes.
    fn len(&self) -> Result<u64>;
    /// Whether the file holds no bytes.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Reads up to `buffer.len()` bytes at `offset`; returns how many (0 at end of file).
    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<usize>;
    /// Writes a prefix of `bytes` at `offset` and returns its length, which may be short.
    fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<usize>;
    /// Makes the file's data (and the size needed to read it) durable: `fdatasync`.
    fn sync_data(&self) -> Result<()>;
    /// Truncates or extends (with zeros) the file to `len` bytes. Durable after a sync.
    fn set_len(&self, len: u64) -> Result<()>;
    /// The open file's identity (see [`FileSystem::file_id`]); `None` when unknown.
    fn file_id(&self) -> Result<Option<FileId>> {
        Ok(None)
    }
    /// Asks that later writes bypass the page cache (`O_DIRECT`) and says whether they will.
    /// The caller must then write whole pages (4 KiB) at page offsets from page-aligned memory;
    /// a write the file system still refuses falls back to the page cache, so the answer is a
    /// hint, never a condition for correctness. The default: no bypass.
    fn bypass_page_cache(&self) -> bool {
        false
    }
}

/// Writes all of `bytes` at `offset`, looping over short writes.
pub fn write_all_at(file: &dyn FileHandle, offset: u64, bytes: &[u8]) -> Result<()> {
    let mut written = 0usize;
    while written < bytes.len() {
        let count = file.write_at(offset + written as u64, &bytes[written..])?;
        if count == 0 {
            return Err(Error::Io(format!(
                "{}: write returned 0 bytes at offset {}",
                file.path().display(),
                offset + written as u64
            )));
        }
        assert!(
            count <= bytes.len() - written,
            "a write reported more than it was given"
        );
        written += count;
    }
    Ok(())
}

/// Reads the whole file into memory. Its length, not any value read from it, sizes the buffer.
pub fn read_all(file: &dyn FileHandle) -> Result<Vec<u8>> {
    let len = file.len()?;
    let len = usize::try_from(len).map_err(|_| {
        Error::LimitExceeded(format!("{} is too large to read", file.path().display()))
    })?;
    read_range(file, 0, len)
}

/// Reads `len` bytes at `offset`, looping over short reads; fewer when the file ends first
/// (it shrank while being read: what exists is returned).
pub fn read_range(file: &dyn FileHandle, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut bytes = vec![0u8; len];
    let mut filled = 0usize;
    while filled < len {
        let count = file.read_at(offset + filled as u64, &mut bytes[filled..])?;
        if count == 0 {
            bytes.truncate(filled);
            break;
        }
        assert!(
            count <= len - filled,
            "a read reported more than it was given"
        );
        filled += count;
    }
    Ok(bytes)
}

/// The directory holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The error a failed operation on `path` reports.
pub(crate) fn io_error(path: &Path, error: std::io::Error) -> Error {
    Error::io(path.display(), error)
}
