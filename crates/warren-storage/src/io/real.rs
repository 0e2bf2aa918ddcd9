//! [`RealFileSystem`]: the I/O layer over the operating system (`pread`, `pwrite`, `fdatasync`,
//! `rename`, `fsync` of a directory, `mmap` for reading segment files, `flock` for the writer
//! lock).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
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
                result => return result.map_err(|e| io_error(&self.path, e)),
            }
        }
    }

    fn sync_data(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| io_error(&self.path, e))
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.file.set_len(len).map_err(|e| io_error(&self.path, e))
    }
}
