//! Lane words of the bit-parallel multi-source BFS: one bit per source of a sweep, stored as an
//! 8-, 16-, 32- or 64-bit atomic per node. A narrower word holds fewer sources but makes the
//! per-node state smaller (3 words per node), so more of it stays in the cache. The kernels
//! compute on `u64`; a word widens on load and narrows on store (its lanes never exceed its
//! bits). Large word arrays are mapped on their own and advised onto huge pages where the
//! platform allows it: a sweep reads them at random, and 4 KiB pages add a page walk to most
//! reads once the arrays outgrow the TLB's reach (`docs/OPTIMIZATION_LOG.md`).

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// One node's lanes for one sweep.
pub trait LaneWord: Send + Sync + Sized + 'static {
    /// Sources the word carries.
    const LANES: usize;
    fn zero() -> Self;
    fn get(&self) -> u64;
    fn set(&self, bits: u64);
    /// ORs `bits` in; returns the word before.
    fn or(&self, bits: u64) -> u64;
}

macro_rules! lane_word {
    ($atomic:ty, $int:ty) => {
        impl LaneWord for $atomic {
            const LANES: usize = <$int>::BITS as usize;

            #[inline(always)]
            fn zero() -> Self {
                <$atomic>::new(0)
            }

            #[inline(always)]
            fn get(&self) -> u64 {
                u64::from(self.load(Ordering::Relaxed))
            }

            #[inline(always)]
            fn set(&self, bits: u64) {
                debug_assert!(bits >> (Self::LANES - 1) >> 1 == 0, "bits beyond the word");
                self.store(bits as $int, Ordering::Relaxed);
            }

            #[inline(always)]
            fn or(&self, bits: u64) -> u64 {
                debug_assert!(bits >> (Self::LANES - 1) >> 1 == 0, "bits beyond the word");
                u64::from(self.fetch_or(bits as $int, Ordering::Relaxed))
            }
        }
    };
}

lane_word!(AtomicU8, u8);
lane_word!(AtomicU16, u16);
lane_word!(AtomicU32, u32);
lane_word!(AtomicU64, u64);

/// The word with a bit for each of the first `lanes` lanes.
pub fn full_word(lanes: usize) -> u64 {
    assert!((1..=64).contains(&lanes), "a sweep has 1 to 64 lanes");
    u64::MAX >> (64 - lanes)
}

/// The narrowest word width (8, 16, 32 or 64 bits) that holds `lanes` lanes.
pub fn word_bits(lanes: usize) -> usize {
    assert!((1..=64).contains(&lanes), "a sweep has 1 to 64 lanes");
    lanes.next_power_of_two().max(8)
}

/// Bytes of a sweep's state per node with words of `bits` bits: `seen` and two frontier
/// buffers.
pub fn state_bytes_per_node(bits: usize) -> u64 {
    3 * (bits as u64 / 8)
}

/// Arrays at least this large are mapped on their own and advised onto huge pages.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// `n` zeroed lane words. Large arrays get their own anonymous mapping (zeroed by the kernel,
/// so nothing is written up front), advised onto transparent huge pages before first touch;
/// small ones, or where mapping fails, live in a `Vec`.
pub fn words<W: LaneWord>(n: usize) -> WordArray<W> {
    let bytes = n * std::mem::size_of::<W>();
    if bytes >= 2 * HUGE_PAGE_BYTES {
        if let Some(mapped) = Mapping::zeroed(bytes) {
            return WordArray {
                len: n,
                storage: Storage::Mapped(mapped),
            };
        }
    }
    WordArray {
        len: n,
        storage: Storage::Heap((0..n).map(|_| W::zero()).collect()),
    }
}

/// A fixed-length array of lane words (see [`words`]).
pub struct WordArray<W> {
    len: usize,
    storage: Storage<W>,
}

enum Storage<W> {
    Heap(Vec<W>),
    Mapped(Mapping),
}

impl<W: LaneWord> std::ops::Deref for WordArray<W> {
    type Target = [W];

    fn deref(&self) -> &[W] {
        match &self.storage {
            Storage::Heap(words) => words,
            // SAFETY: the mapping holds at least `len` words, is page-aligned (so aligned for
            // W), zero-filled by the kernel (zero is a valid atomic integer) and lives as long
            // as `self`; atomics allow shared access.
            Storage::Mapped(mapping) => unsafe {
                std::slice::from_raw_parts(mapping.address.cast::<W>(), self.len)
            },
        }
    }
}

/// An anonymous, private, read-write mapping, unmapped on drop.
struct Mapping {
    address: *mut u8,
    bytes: usize,
}

// SAFETY: the mapping is plain memory owned by this value; the words in it are atomics.
unsafe impl Send for Mapping {}
// SAFETY: as above; shared access goes through atomic words only.
unsafe impl Sync for Mapping {}

impl Mapping {
    #[cfg(target_os = "linux")]
    fn zeroed(bytes: usize) -> Option<Self> {
        // SAFETY: a fresh anonymous mapping touches no existing memory; failure is checked.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the range is the mapping just made. The advice is a hint: a refusal changes
        // nothing but speed, so its result is ignored.
        unsafe {
            libc::madvise(address, bytes, libc::MADV_HUGEPAGE);
        }
        Some(Self {
            address: address.cast(),
            bytes,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn zeroed(_bytes: usize) -> Option<Self> {
        None
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the range is this value's own mapping, and no reference into it outlives
        // `self` (WordArray's slices borrow it).
        unsafe {
            libc::munmap(self.address.cast(), self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<W: LaneWord>() {
        let word = W::zero();
        let top = 1u64 << (W::LANES - 1);
        assert_eq!(word.or(1), 0);
        assert_eq!(word.or(top), 1);
        assert_eq!(word.get(), 1 | top);
        word.set(full_word(W::LANES));
        assert_eq!(word.get(), full_word(W::LANES));
        word.set(0);
        assert_eq!(word.get(), 0);
    }

    #[test]
    fn every_width_keeps_its_lanes() {
        round_trip::<AtomicU8>();
        round_trip::<AtomicU16>();
        round_trip::<AtomicU32>();
        round_trip::<AtomicU64>();
    }

    #[test]
    fn widths_and_masks() {
        assert_eq!(word_bits(1), 8);
        assert_eq!(word_bits(8), 8);
        assert_eq!(word_bits(9), 16);
        assert_eq!(word_bits(33), 64);
        assert_eq!(word_bits(64), 64);
        assert_eq!(full_word(64), u64::MAX);
        assert_eq!(full_word(3), 0b111);
        assert_eq!(state_bytes_per_node(64), 24);
        assert_eq!(state_bytes_per_node(8), 3);
    }

    #[test]
    fn small_and_mapped_arrays_are_zeroed_and_writable() {
        for n in [0, 5, 3 << 20] {
            let words = words::<AtomicU32>(n);
            assert_eq!(words.len(), n);
            assert!(words.iter().all(|w| w.get() == 0));
            if let Some(last) = words.last() {
                last.set(7);
                assert_eq!(words[n - 1].get(), 7);
            }
        }
    }
}
