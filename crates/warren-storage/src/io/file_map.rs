//! [`FileMap`]: the read-only bytes of a whole file as the I/O layer hands them to readers. On
//! the real file system it is a memory map (opening a database reads no file data: pages come
//! in when a section is first used); on the simulated one it is a copy of the bytes a reader
//! sees now. Both start 8-byte aligned, so typed views of sections are plain casts.

use std::fmt;
use std::ops::Deref;

use memmap2::Mmap;

/// The bytes of one file, mapped or copied.
pub struct FileMap {
    inner: Inner,
}

enum Inner {
    Mapped(Mmap),
    /// Words so that the start is 8-byte aligned; `len` bytes of them are the file.
    Copied {
        words: Vec<u64>,
        len: usize,
    },
}

impl FileMap {
    pub(crate) fn mapped(map: Mmap) -> Self {
        Self {
            inner: Inner::Mapped(map),
        }
    }

    /// Copies `bytes` into an aligned buffer.
    pub fn copied(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self {
            inner: Inner::Copied {
                words,
                len: bytes.len(),
            },
        }
    }
}

impl Deref for FileMap {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Mapped(map) => map,
            Inner::Copied { words, len } => &bytemuck::cast_slice::<u64, u8>(words)[..*len],
        }
    }
}

impl fmt::Debug for FileMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.inner {
            Inner::Mapped(_) => "mapped",
            Inner::Copied { .. } => "copied",
        };
        write!(f, "FileMap({kind}, {} bytes)", self.len())
    }
}
