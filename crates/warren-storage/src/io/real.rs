//! [`RealFileSystem`]: the I/O layer over the operating system (`pread`, `pwrite`, `fdatasync`,
//! `rename`, and `fsync` of a directory).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use warren_common::Result;

use super::{io_error, FileHandle, FileSystem, OpenMode};

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
