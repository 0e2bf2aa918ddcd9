//! [`FileWriter`]: a [`std::io::Write`] over a [`FileHandle`] that appends from an offset, so
//! that writers built on `std::io` (a `BufWriter` writing a segment file) go through the I/O
//! layer and its fault injection.

use std::io::Write;

use super::FileHandle;

/// Writes sequentially into a file from a starting offset.
#[derive(Debug)]
pub struct FileWriter<'a> {
    file: &'a dyn FileHandle,
    offset: u64,
}

impl<'a> FileWriter<'a> {
    pub fn new(file: &'a dyn FileHandle, offset: u64) -> Self {
        Self { file, offset }
    }

    /// The offset the next write goes to.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl Write for FileWriter<'_> {
    /// One `write_at`: may be short, as `Write::write` may (`write_all` loops).
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let count = self
            .file
            .write_at(self.offset, bytes)
            .map_err(std::io::Error::other)?;
        self.offset += count as u64;
        Ok(count)
    }

    /// Writes are not buffered here; durability is [`FileHandle::sync_data`]'s business.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
