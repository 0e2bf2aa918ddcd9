//! Byte buffers that are either owned (built in memory) or mapped from a segment file. Both are
//! 8-byte aligned, so typed views (`&[u32]`, `&[i64]`, ...) are plain casts, never copies.

use std::fmt;
use std::sync::{Arc, Weak};

use bytemuck::Pod;

use crate::io::FileMap;
use crate::section_check::{ChecksumMismatch, SectionCheck};

/// A growable-once array of `u32` kept in 8-byte words, so that it becomes a [`Bytes`] without a
/// copy (large builds, such as a CSR of a billion entries, would otherwise need twice the memory
/// for a moment).
#[derive(Debug, Default)]
pub struct U32Words {
    words: Vec<u64>,
    len: usize,
}

impl U32Words {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(2)],
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u32] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u32] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }

    /// Keeps the first `len` values (the memory is kept too).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub fn into_bytes(self) -> Bytes {
        Bytes::from_words(self.words, self.len * 4)
    }
}

impl From<&[u32]> for U32Words {
    fn from(values: &[u32]) -> Self {
        let mut words = Self::zeroed(values.len());
        words.as_mut_slice().copy_from_slice(values);
        words
    }
}

/// An immutable, 8-byte-aligned byte buffer.
#[derive(Clone)]
pub struct Bytes {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    /// Owned words; `len` is the length in bytes (≤ words.len() * 8).
    Owned { words: Arc<Vec<u64>>, len: usize },
    /// A region of a mapped file; `offset` is a multiple of 8. Its blocks' checksums, if any,
    /// are verified when the blocks are first read.
    Mapped {
        map: Arc<FileMap>,
        offset: usize,
        len: usize,
        check: Option<Arc<SectionCheck>>,
    },
}

/// A weak handle on the memory behind a [`Bytes`]: it never keeps that memory alive, and
/// while it can be upgraded it names exactly the same bytes (the memory of a [`Bytes`] is
/// never written after it is made). Caches of things derived from a buffer key them by it.
#[derive(Clone, Debug)]
pub struct WeakBytes {
    inner: WeakInner,
}

#[derive(Clone, Debug)]
enum WeakInner {
    Owned {
        words: Weak<Vec<u64>>,
        len: usize,
    },
    Mapped {
        map: Weak<FileMap>,
        offset: usize,
        len: usize,
    },
}

impl WeakBytes {
    /// Whether the memory is still held by some [`Bytes`].
    pub fn is_alive(&self) -> bool {
        match &self.inner {
            WeakInner::Owned { words, .. } => words.strong_count() > 0,
            WeakInner::Mapped { map, .. } => map.strong_count() > 0,
        }
    }

    /// Whether `bytes` is the buffer this handle was taken from (the same memory, offset and
    /// length), and that memory is alive.
    pub fn is_of(&self, bytes: &Bytes) -> bool {
        // `bytes` holds a strong reference, so equal pointers name live memory.
        match (&self.inner, &bytes.inner) {
            (WeakInner::Owned { words, len }, Inner::Owned { words: w, len: l }) => {
                std::ptr::eq(words.as_ptr(), Arc::as_ptr(w)) && len == l
            }
            (
                WeakInner::Mapped { map, offset, len },
                Inner::Mapped {
                    map: m,
                    offset: o,
                    len: l,
                    ..
                },
            ) => std::ptr::eq(map.as_ptr(), Arc::as_ptr(m)) && offset == o && len == l,
            _ => false,
        }
    }
}

impl Bytes {
    /// A weak handle on this buffer's memory (see [`WeakBytes`]).
    pub fn downgrade(&self) -> WeakBytes {
        let inner = match &self.inner {
            Inner::Owned { words, len } => WeakInner::Owned {
                words: Arc::downgrade(words),
                len: *len,
            },
            Inner::Mapped {
                map, offset, len, ..
            } => WeakInner::Mapped {
                map: Arc::downgrade(map),
                offset: *offset,
                len: *len,
            },
        };
        WeakBytes { inner }
    }

    pub fn empty() -> Self {
        Self::from_words(Vec::new(), 0)
    }

    /// Wraps owned words holding `len` meaningful bytes.
    pub fn from_words(words: Vec<u64>, len: usize) -> Self {
        assert!(len <= words.len() * 8, "byte length exceeds the words");
        Self {
            inner: Inner::Owned {
                words: Arc::new(words),
                len,
            },
        }
    }

    /// Copies a typed slice into a new owned buffer.
    pub fn from_slice<T: Pod>(values: &[T]) -> Self {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        Self::from_words(words, bytes.len())
    }

    /// Takes ownership of a typed vector without copying when it is made of 8-byte words,
    /// copying otherwise.
    pub fn from_vec<T: Pod>(values: Vec<T>) -> Self {
        if std::mem::size_of::<T>() == 8 {
            let len = values.len() * 8;
            let words: Vec<u64> = bytemuck::allocation::cast_vec(values);
            Self::from_words(words, len)
        } else {
            Self::from_slice(&values)
        }
    }

    /// A region of a mapped file. Panics if the region is out of bounds or misaligned: callers
    /// validate section tables before mapping.
    pub fn mapped(map: Arc<FileMap>, offset: usize, len: usize) -> Self {
        Self::mapped_checked(map, offset, len, None)
    }

    /// A region of a mapped file whose checksum is verified on first read.
    pub fn mapped_checked(
        map: Arc<FileMap>,
        offset: usize,
        len: usize,
        check: Option<Arc<SectionCheck>>,
    ) -> Self {
        assert!(
            offset.is_multiple_of(8),
            "mapped section is not 8-byte aligned"
        );
        assert!(offset + len <= map.len(), "mapped section exceeds the file");
        Self {
            inner: Inner::Mapped {
                map,
                offset,
                len,
                check,
            },
        }
    }

    /// The bytes, every block verified. A mismatch stops the process with the section's name:
    /// this is the backstop for reads that cannot return errors; engine paths that may meet
    /// damaged data verify first with [`Bytes::try_bytes`] or read through
    /// [`Bytes::try_range`], so that a query gets a `corrupt database` error instead.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self.try_bytes() {
            Ok(bytes) => bytes,
            Err(mismatch) => panic!("{mismatch}"),
        }
    }

    /// The bytes, every block verified (once per process).
    #[inline]
    pub fn try_bytes(&self) -> Result<&[u8], ChecksumMismatch> {
        let bytes = self.unverified();
        if let Some(check) = self.check() {
            check.verify_all(bytes)?;
        }
        Ok(bytes)
    }

    /// The bytes of `range`, only the blocks it touches verified.
    #[inline]
    pub fn try_range(&self, range: std::ops::Range<usize>) -> Result<&[u8], ChecksumMismatch> {
        let bytes = self.unverified();
        if let Some(check) = self.check() {
            check.verify_range(bytes, range.clone())?;
        }
        Ok(&bytes[range])
    }

    /// The section's checks, when it is a mapped section with checksums.
    #[inline]
    pub fn check(&self) -> Option<&SectionCheck> {
        match &self.inner {
            Inner::Mapped {
                check: Some(check), ..
            } => Some(check),
            _ => None,
        }
    }

    /// Whether no read needs a check any more (owned, or every block verified).
    #[inline]
    pub fn is_verified(&self) -> bool {
        self.check().is_none_or(SectionCheck::is_verified)
    }

    /// The bytes without verifying a mapped section's checksums: for readers that verify the
    /// blocks they use themselves ([`crate::adjacency::AdjacencyView`]).
    #[inline]
    pub fn unverified(&self) -> &[u8] {
        match &self.inner {
            Inner::Owned { words, len } => &bytemuck::cast_slice::<u64, u8>(words)[..*len],
            Inner::Mapped {
                map, offset, len, ..
            } => &map[*offset..*offset + *len],
        }
    }

    /// Verifies every block of a mapped section now: `Err` naming every damaged block
    /// (`warren check`).
    pub fn verify(&self) -> Result<(), String> {
        let (Err(_), Some(check)) = (self.try_bytes(), self.check()) else {
            return Ok(());
        };
        let damaged: Vec<String> = check
            .damaged_blocks(self.unverified())
            .into_iter()
            .map(|block| {
                let mismatch = ChecksumMismatch {
                    section: check.name().to_string(),
                    block,
                };
                mismatch.to_string()
            })
            .collect();
        Err(damaged.join("; "))
    }

    /// A typed view of the section, every block verified.
    pub fn try_cast<T: Pod>(&self) -> Result<&[T], ChecksumMismatch> {
        self.try_bytes().map(bytemuck::cast_slice)
    }

    /// A typed view without verifying (see [`Bytes::unverified`]).
    pub fn cast_unverified<T: Pod>(&self) -> &[T] {
        bytemuck::cast_slice(self.unverified())
    }

    /// A typed view. Panics if the length is not a multiple of the element size.
    pub fn cast<T: Pod>(&self) -> &[T] {
        bytemuck::cast_slice(self.as_bytes())
    }

    pub fn len(&self) -> usize {
        self.unverified().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Inner::Mapped { .. })
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Bytes({} bytes, {})",
            self.len(),
            if self.is_mapped() { "mapped" } else { "owned" }
        )
    }
}

/// A bitmap over rows (used for NULLs and deletions): bit i set means row i is flagged.
#[derive(Clone, Debug)]
pub struct Bitmap {
    bytes: Bytes,
    len: usize,
}

impl Bitmap {
    pub fn from_bits(bits: &[bool]) -> Self {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &bit) in bits.iter().enumerate() {
            if bit {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        let byte_len = words.len() * 8;
        Self {
            bytes: Bytes::from_words(words, byte_len),
            len: bits.len(),
        }
    }

    pub fn from_bytes(bytes: Bytes, len: usize) -> Self {
        assert!(bytes.len() * 8 >= len, "bitmap shorter than its row count");
        Self { bytes, len }
    }

    pub fn get(&self, i: usize) -> bool {
        if i >= self.len {
            return false;
        }
        let words: &[u64] = self.bytes.cast();
        words[i / 64] >> (i % 64) & 1 == 1
    }

    /// [`Bitmap::get`], verifying only the block holding the bit.
    pub fn try_get(&self, i: usize) -> Result<bool, ChecksumMismatch> {
        if i >= self.len {
            return Ok(false);
        }
        let word = i / 64 * 8;
        let bytes = self.bytes.try_range(word..word + 8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")) >> (i % 64) & 1 == 1)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn count_ones(&self) -> usize {
        let words: &[u64] = self.bytes.cast();
        words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether no bit of `range` (clipped to the bitmap's length) is set.
    pub fn none_in(&self, range: std::ops::Range<usize>) -> bool {
        let end = range.end.min(self.len);
        if range.start >= end {
            return true;
        }
        let words: &[u64] = self.bytes.cast();
        let (first, last) = (range.start / 64, (end - 1) / 64);
        (first..=last).all(|index| {
            let mut word = words[index];
            if index == first {
                word &= u64::MAX << (range.start % 64);
            }
            if index == last && !end.is_multiple_of(64) {
                word &= u64::MAX >> (64 - end % 64);
            }
            word == 0
        })
    }

    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    pub fn to_bits(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.get(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_views_round_trip() {
        let bytes = Bytes::from_slice(&[1u32, 2, 3]);
        assert_eq!(bytes.cast::<u32>(), &[1, 2, 3]);
        let bytes = Bytes::from_vec(vec![5i64, -1]);
        assert_eq!(bytes.cast::<i64>(), &[5, -1]);
    }

    #[test]
    fn none_in_tests_the_bits_of_a_range_only() {
        let mut bits = vec![false; 200];
        bits[70] = true;
        bits[199] = true;
        let bitmap = Bitmap::from_bits(&bits);
        for (range, none) in [
            (0..70, true),
            (0..71, false),
            (70..71, false),
            (71..199, true),
            (71..200, false),
            (64..70, true),
            (150..150, true),
            (199..300, false),
            (200..300, true),
        ] {
            assert_eq!(bitmap.none_in(range.clone()), none, "{range:?}");
            assert_eq!(none, !range.clone().any(|i| bitmap.get(i)), "{range:?}");
        }
    }

    #[test]
    fn bitmap_flags_rows() {
        let bitmap = Bitmap::from_bits(&[true, false, true]);
        assert!(bitmap.get(0) && !bitmap.get(1) && bitmap.get(2) && !bitmap.get(99));
        assert_eq!(bitmap.count_ones(), 2);
    }
}
