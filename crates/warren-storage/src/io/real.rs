//! [`RealFileSystem`]: the I/O layer over the operating system (`pread`, `pwrite`, `fdatasync`,
//! `rename`, `fsync` of a directory, `mmap` for reading segment files, `flock` for the writer
//! lock).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memmap2::Mmap;
use warren_common::Result;

use super::{io_error, FileHandle, FileId, FileLock, FileMap, FileSystem, OpenMode};

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFileSystem;

impl FileSystem for RealFileSystem {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn FileHandle>> {
        let mut options = OpenOptions::new();
        options.read(true).write(mode.writable());
        if mode == OpenMode::CreateNew {
            options.create_new(true);
        }
        let file = options.open(path).map_err(|e| io_error(path, e))?;
        Ok(Box::new(RealFile {
            file,
            path: path.to_path_buf(),
            direct: AtomicBool::new(false),
        }))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        path.try_exists().map_err(|e| io_error(path, e))
    }

    fn file_id(&self, path: &Path) -> Result<Option<FileId>> {
        match fs::metadata(path) {
            Ok(metadata) => Ok(Some(id_of(&metadata))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(path, e)),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| io_error(from, e))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| io_error(path, e))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error(dir, e))
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        fs::create_dir_all(path).map_err(|e| io_error(path, e))
    }

    fn is_dir(&self, path: &Path) -> Result<bool> {
        Ok(path.is_dir())
    }

    fn list_dir(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
            let entry = entry.map_err(|e| io_error(dir, e))?;
            let kind = entry.file_type().map_err(|e| io_error(&entry.path(), e))?;
            if !kind.is_dir() {
                files.push(entry.path());
            }
        }
        Ok(files)
    }

    fn map(&self, path: &Path) -> Result<Arc<FileMap>> {
        let file = File::open(path).map_err(|e| io_error(path, e))?;
        // SAFETY: only segment files are mapped, and they are written once and never modified
        // in place; the database directory lock keeps other Warren processes from deleting
        // them while mapped (and a deleted file stays mapped until unmapped).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| io_error(path, e))?;
        Ok(Arc::new(FileMap::mapped(map)))
    }

    fn try_lock(&self, path: &Path) -> Result<Option<FileLock>> {
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_error(path, e))?;
        match flock_exclusive(&file) {
            Ok(()) => Ok(Some(FileLock::new(Box::new(file)))),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(io_error(path, e)),
        }
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: released when the file is closed.
fn flock_exclusive(file: &File) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor this process owns; no memory is shared.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn id_of(metadata: &fs::Metadata) -> FileId {
    FileId {
        device: metadata.dev(),
        inode: metadata.ino(),
    }
}

/// An open operating-system file.
#[derive(Debug)]
struct RealFile {
    file: File,
    path: PathBuf,
    /// Whether the descriptor has `O_DIRECT` set ([`FileHandle::bypass_page_cache`]).
    direct: AtomicBool,
}

impl RealFile {
    /// Sets or clears `O_DIRECT` on the descriptor; false when the file system refuses.
    fn set_direct(&self, on: bool) -> bool {
        use std::os::unix::io::AsRawFd;
        let fd = self.file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this handle owns; it reads and sets status flags only.
        let changed = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            let wanted = if on {
                flags | libc::O_DIRECT
            } else {
                flags & !libc::O_DIRECT
            };
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, wanted) == 0
        };
        if changed {
            self.direct.store(on, Ordering::Relaxed);
        }
        changed
    }
}

impl FileHandle for RealFile {
    fn path(&self) -> &Path {
        &self.path
    }

    fn len(&self) -> Result<u64> {
        let metadata = self.file.metadata().map_err(|e| io_error(&self.path, e))?;
        Ok(metadata.len())
    }

    fn file_id(&self) -> Result<Option<FileId>> {
        let metadata = self.file.metadata().map_err(|e| io_error(&self.path, e))?;
        Ok(Some(id_of(&metadata)))
    }

    fn read_at(&self, offset: u64, buffer: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read_at(buffer, offset) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                result => return result.map_err(|e| io_error(&self.path, e)),
            }
        }
    }

    fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<usize> {
        loop {
            match self.file.write_at(bytes, offset) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A file system that accepted O_DIRECT but not this write's alignment (a
                // device with blocks over 4 KiB): go on through the page cache.
                Err(e)
                    if e.raw_os_error() == Some(libc::EINVAL)
                        && self.direct.load(Ordering::Relaxed)
                        && self.set_direct(false) =>
                {
                    continue
                }
                result => return result.map_err(|e| io_error(&self.path, e)),
            }
        }
    }

    fn bypass_page_cache(&self) -> bool {
        self.set_direct(true)
    }

    fn sync_data(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| io_error(&self.path, e))
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.file.set_len(len).map_err(|e| io_error(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_bypasses_the_page_cache_still_takes_an_unaligned_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("direct");
        let file = RealFileSystem.open(&path, OpenMode::CreateNew).unwrap();
        let page = memmap2::MmapMut::map_anon(4096).unwrap();
        let bypassed = file.bypass_page_cache();
        crate::io::write_all_at(file.as_ref(), 0, &page).unwrap();
        // Unaligned in offset, length and memory: refused by O_DIRECT, taken by the fallback.
        crate::io::write_all_at(file.as_ref(), 4097, b"abc").unwrap();
        file.sync_data().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 4100, "bypass granted: {bypassed}");
        assert_eq!(&bytes[4097..], b"abc");
        assert!(bytes[..4097].iter().all(|&b| b == 0));
    }
}
