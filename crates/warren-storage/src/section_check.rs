//! What a mapped section's checksums are and which of its blocks have been verified. Opening a
//! database maps its segment files without reading them; a reader verifies only the blocks it
//! touches, the first time it touches them (one crc32 per block, [`BLOCK_SHIFT`]), and a
//! per-section bitmap remembers the verified blocks so that each is checked once per process.
//! Once every block is verified, one flag ends all further checks (the fast path that warm
//! traversal loops take). Segments of format version 1 have one checksum per section: they read
//! as a section of one block.
//!
//! A mismatch is data, not a bug: it is returned as [`ChecksumMismatch`] (and remembered, so a
//! damaged block fails fast on the next touch), and readers turn it into a query's
//! `corrupt database` error. [`CorruptionSlot`] is where a traversal, whose loops cannot return
//! errors, records the first mismatch it met.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use warren_common::Error;

use crate::io::FileMap;

/// Blocks are 2^BLOCK_SHIFT bytes (256 KiB): small enough that the first touch of one node's
/// entries costs tens of microseconds, large enough that a 10 GiB section has 40k checksums
/// (160 KiB, read only as far as blocks are used).
pub const BLOCK_SHIFT: u32 = 18;
/// The largest block shift a segment may declare (a block of 1 GiB).
pub const BLOCK_SHIFT_MAX: u32 = 30;
/// The smallest (a block of 4 KiB).
pub const BLOCK_SHIFT_MIN: u32 = 12;
/// Once readers have verified 1/ESCALATE_DIVISOR of a section's blocks one by one, the reader
/// that crosses the mark verifies the rest at once: a traversal that reaches that much of the
/// graph reads nearly all of it, and its next views can then skip the checks altogether
/// (per-node checks cost more than the checksums; see docs/OPTIMIZATION_LOG.md).
const ESCALATE_DIVISOR: usize = 8;
/// Sections of fewer blocks are not escalated for being widely read (their blocks are verified
/// as touched).
const ESCALATE_BLOCKS_MIN: usize = 16;
/// Once at most this many of a section's blocks remain unverified, the next reader verifies
/// them (at most 512 KiB, once): a block that readers rarely touch (an offsets array's last
/// block holds the last node's end alone) would otherwise keep every view of the section on
/// the checked path for good (docs/OPTIMIZATION_LOG.md, entries 204 and 261: a rule of an
/// eighth of the blocks left sections of fewer than 16 blocks checked when one was untouched,
/// at a quarter of a small SHORTEST query's time).
const FINISH_BLOCKS: usize = 2;
/// Blocks a thread takes at once from an escalated section's shared cursor (2 MiB of 256 KiB
/// blocks).
const ESCALATION_CHUNK_BLOCKS: usize = 8;
/// An escalation with at least this many bytes left to verify runs on several threads (the
/// reader's and helpers it starts): 16 MiB take a few milliseconds to verify, against tens of
/// microseconds (up to about 2 ms on a guest whose idle vCPU halts) to start a thread.
const PARALLEL_ESCALATION_BYTES_MIN: usize = 16 << 20;
/// The most threads an escalation runs on, the reader's included.
const ESCALATION_THREADS_MAX: usize = 4;

/// A block whose bytes do not match their checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecksumMismatch {
    /// The section, as the segment names it (file, tag, index).
    pub section: String,
    pub block: usize,
}

impl fmt::Display for ChecksumMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "corrupt database: checksum mismatch in {} block {}",
            self.section, self.block
        )
    }
}

impl From<ChecksumMismatch> for Error {
    fn from(mismatch: ChecksumMismatch) -> Self {
        Error::Corrupt(mismatch.to_string())
    }
}

/// Where a section's expected checksums are.
#[derive(Debug)]
enum Expected {
    /// Format version 1: one checksum over the whole section (one block).
    Whole(u32),
    /// Format version 2: `count` little-endian crc32s at `offset` in the mapped file, one per
    /// block, themselves covered by `list_crc` (from the verified directory).
    Blocks {
        map: Arc<FileMap>,
        offset: usize,
        count: usize,
        list_crc: u32,
        list_ok: OnceLock<bool>,
    },
}

/// The checksums of one mapped section and which of its blocks are verified.
#[derive(Debug)]
pub struct SectionCheck {
    /// What the section is, for the error message.
    name: String,
    len: usize,
    block_bytes: usize,
    expected: Expected,
    verified: Box<[AtomicU64]>,
    failed: Box<[AtomicU64]>,
    /// Blocks not yet verified.
    remaining: AtomicUsize,
    all_verified: AtomicBool,
    /// Whether a reader has taken on verifying the whole section (see [`ESCALATE_DIVISOR`]).
    escalated: AtomicBool,
    /// The next block of an escalated section that no thread has taken yet.
    escalation_cursor: AtomicUsize,
}

impl SectionCheck {
    /// A version-1 section of `len` bytes with one checksum.
    pub fn whole(name: String, len: usize, crc: u32) -> Self {
        Self::new(name, len, len.max(1), Expected::Whole(crc))
    }

    /// A version-2 section of `len` bytes in blocks of `1 << block_shift` bytes, whose block
    /// checksums are the `len.div_ceil(block bytes)` u32s at `table_offset` of `map`, covered
    /// by `list_crc`. The caller has checked that the table lies within the map.
    pub fn blocks(
        name: String,
        len: usize,
        block_shift: u32,
        map: Arc<FileMap>,
        table_offset: usize,
        list_crc: u32,
    ) -> Self {
        assert!((BLOCK_SHIFT_MIN..=BLOCK_SHIFT_MAX).contains(&block_shift));
        let block_bytes = 1usize << block_shift;
        let count = block_count(len, block_bytes);
        assert!(
            table_offset + count * 4 <= map.len(),
            "checksum table exceeds the file"
        );
        let expected = Expected::Blocks {
            map,
            offset: table_offset,
            count,
            list_crc,
            list_ok: OnceLock::new(),
        };
        Self::new(name, len, block_bytes, expected)
    }

    fn new(name: String, len: usize, block_bytes: usize, expected: Expected) -> Self {
        let count = block_count(len, block_bytes);
        let words = count.div_ceil(64);
        Self {
            name,
            len,
            block_bytes,
            expected,
            verified: (0..words).map(|_| AtomicU64::new(0)).collect(),
            failed: (0..words).map(|_| AtomicU64::new(0)).collect(),
            remaining: AtomicUsize::new(count),
            all_verified: AtomicBool::new(count == 0),
            escalated: AtomicBool::new(false),
            escalation_cursor: AtomicUsize::new(0),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn num_blocks(&self) -> usize {
        block_count(self.len, self.block_bytes)
    }

    /// Whether every block has been verified (no check is needed any more).
    #[inline]
    pub fn is_verified(&self) -> bool {
        self.all_verified.load(Ordering::Acquire)
    }

    /// Verifies the blocks of `bytes` (the section) that `range` touches.
    #[inline]
    pub fn verify_range(&self, bytes: &[u8], range: Range<usize>) -> Result<(), ChecksumMismatch> {
        if self.is_verified() || range.is_empty() {
            return Ok(());
        }
        self.verify_blocks(
            bytes,
            range.start / self.block_bytes..=(range.end - 1) / self.block_bytes,
        )?;
        self.escalate_if_widely_read(bytes);
        Ok(())
    }

    /// Verifies every remaining block once readers have verified a large share of them one by
    /// one (once per section; a damaged block found here is left for its reader to meet). With
    /// [`PARALLEL_ESCALATION_BYTES_MIN`] or more left, helper threads verify beside the reader
    /// (the first query over a large graph escalates sections of hundreds of MB: the 248 MB of
    /// scale 22's out-neighbours took 40 ms on one thread).
    fn escalate_if_widely_read(&self, bytes: &[u8]) {
        let blocks = self.num_blocks();
        let remaining = self.remaining.load(Ordering::Relaxed);
        let verified = blocks - remaining;
        let widely_read = blocks >= ESCALATE_BLOCKS_MIN && verified * ESCALATE_DIVISOR >= blocks;
        let nearly_done = remaining <= FINISH_BLOCKS;
        if !(widely_read || nearly_done) || self.escalated.swap(true, Ordering::AcqRel) {
            return;
        }
        let threads = escalation_threads(remaining.saturating_mul(self.block_bytes));
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|| self.verify_escalated_chunks(bytes));
            }
            self.verify_escalated_chunks(bytes);
        });
    }

    /// Takes chunks of [`ESCALATION_CHUNK_BLOCKS`] from the escalation's cursor and verifies
    /// them until no block is left untaken.
    fn verify_escalated_chunks(&self, bytes: &[u8]) {
        let blocks = self.num_blocks();
        loop {
            let start = self
                .escalation_cursor
                .fetch_add(ESCALATION_CHUNK_BLOCKS, Ordering::Relaxed);
            if start >= blocks {
                return;
            }
            for block in start..(start + ESCALATION_CHUNK_BLOCKS).min(blocks) {
                let _ = self.verify_block(bytes, block);
            }
        }
    }

    /// Verifies every block of `bytes` (the section); the first mismatch is returned.
    pub fn verify_all(&self, bytes: &[u8]) -> Result<(), ChecksumMismatch> {
        if self.is_verified() || self.num_blocks() == 0 {
            return Ok(());
        }
        self.verify_blocks(bytes, 0..=self.num_blocks() - 1)
    }

    /// Every block that does not match its checksum (`warren check`).
    pub fn damaged_blocks(&self, bytes: &[u8]) -> Vec<usize> {
        (0..self.num_blocks())
            .filter(|&block| self.verify_block(bytes, block).is_err())
            .collect()
    }

    #[inline(never)]
    fn verify_blocks(
        &self,
        bytes: &[u8],
        blocks: std::ops::RangeInclusive<usize>,
    ) -> Result<(), ChecksumMismatch> {
        blocks
            .into_iter()
            .try_for_each(|block| self.verify_block(bytes, block))
    }

    fn verify_block(&self, bytes: &[u8], block: usize) -> Result<(), ChecksumMismatch> {
        assert_eq!(
            bytes.len(),
            self.len,
            "verified bytes are not the section's"
        );
        assert!(block < self.num_blocks(), "block beyond the section");
        let (word, bit) = (block / 64, 1u64 << (block % 64));
        if self.verified[word].load(Ordering::Acquire) & bit != 0 {
            return Ok(());
        }
        let mismatch = || ChecksumMismatch {
            section: self.name.clone(),
            block,
        };
        if self.failed[word].load(Ordering::Relaxed) & bit != 0 {
            return Err(mismatch());
        }
        let start = block * self.block_bytes;
        let end = (start + self.block_bytes).min(self.len);
        let matches = self
            .expected_crc(block)
            .is_some_and(|crc| crc32fast::hash(&bytes[start..end]) == crc);
        if !matches {
            self.failed[word].fetch_or(bit, Ordering::Relaxed);
            return Err(mismatch());
        }
        let before = self.verified[word].fetch_or(bit, Ordering::AcqRel);
        if before & bit == 0 && self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.all_verified.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// The expected checksum of `block`; `None` when the checksum table itself is damaged.
    fn expected_crc(&self, block: usize) -> Option<u32> {
        match &self.expected {
            Expected::Whole(crc) => Some(*crc),
            Expected::Blocks {
                map,
                offset,
                count,
                list_crc,
                list_ok,
            } => {
                let list = &map[*offset..*offset + count * 4];
                if !*list_ok.get_or_init(|| crc32fast::hash(list) == *list_crc) {
                    return None;
                }
                let at = block * 4;
                Some(u32::from_le_bytes(
                    list[at..at + 4].try_into().expect("4 bytes"),
                ))
            }
        }
    }
}

/// Threads (the reader's included) for an escalation with `unverified_bytes` left to verify.
fn escalation_threads(unverified_bytes: usize) -> usize {
    if unverified_bytes < PARALLEL_ESCALATION_BYTES_MIN {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, ESCALATION_THREADS_MAX)
}

fn block_count(len: usize, block_bytes: usize) -> usize {
    len.div_ceil(block_bytes)
}

/// The crc32 of each `1 << block_shift`-byte block of `bytes` (the last may be shorter).
pub fn block_checksums(bytes: &[u8], block_shift: u32) -> Vec<u32> {
    bytes
        .chunks(1 << block_shift)
        .map(crc32fast::hash)
        .collect()
}

/// The first checksum mismatch a traversal met, kept for the query to return: traversal loops
/// read adjacency through infallible views, which record a mismatch here and read the damaged
/// node as having no entries; the operator returns the error when the traversal ends.
#[derive(Debug, Default)]
pub struct CorruptionSlot {
    first: OnceLock<ChecksumMismatch>,
}

impl CorruptionSlot {
    pub fn record(&self, mismatch: ChecksumMismatch) {
        let _ = self.first.set(mismatch);
    }

    /// The first recorded mismatch, if any.
    pub fn first(&self) -> Option<ChecksumMismatch> {
        self.first.get().cloned()
    }

    /// `Err` with the first recorded mismatch, if any.
    pub fn check(&self) -> warren_common::Result<()> {
        match self.first.get() {
            Some(mismatch) => Err(mismatch.clone().into()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    /// A check of `bytes` by blocks of the smallest size, its block checksums in a table of
    /// their own (as a segment stores them).
    fn checked_by_blocks(bytes: &[u8]) -> SectionCheck {
        let table: Vec<u8> = block_checksums(bytes, BLOCK_SHIFT_MIN)
            .iter()
            .flat_map(|crc| crc.to_le_bytes())
            .collect();
        let list_crc = crc32fast::hash(&table);
        let map = Arc::new(FileMap::copied(&table));
        SectionCheck::blocks("s".into(), bytes.len(), BLOCK_SHIFT_MIN, map, 0, list_crc)
    }

    #[test]
    fn a_whole_section_is_one_block() {
        let bytes = section(1000);
        let check = SectionCheck::whole("s".into(), bytes.len(), crc32fast::hash(&bytes));
        assert_eq!(check.num_blocks(), 1);
        assert!(!check.is_verified());
        check.verify_range(&bytes, 10..20).unwrap();
        assert!(check.is_verified());
    }

    #[test]
    fn only_touched_blocks_are_verified_and_a_damaged_one_is_reported() {
        let mut bytes = section(5 << BLOCK_SHIFT_MIN);
        let check = checked_by_blocks(&bytes);
        bytes[(3 << BLOCK_SHIFT_MIN) + 5] ^= 1;
        check
            .verify_range(&bytes, 0..(2 << BLOCK_SHIFT_MIN))
            .unwrap();
        let error = check.verify_range(&bytes, (3 << BLOCK_SHIFT_MIN)..(3 << BLOCK_SHIFT_MIN) + 1);
        assert_eq!(
            error.unwrap_err().to_string(),
            "corrupt database: checksum mismatch in s block 3"
        );
        // The damaged block fails again (remembered), the others still read.
        assert!(check
            .verify_range(
                &bytes,
                (3 << BLOCK_SHIFT_MIN) + 9..(3 << BLOCK_SHIFT_MIN) + 10
            )
            .is_err());
        check
            .verify_range(&bytes, (4 << BLOCK_SHIFT_MIN)..bytes.len())
            .unwrap();
        assert!(!check.is_verified());
        assert_eq!(check.damaged_blocks(&bytes), vec![3]);
        bytes[(3 << BLOCK_SHIFT_MIN) + 5] ^= 1;
        assert!(
            check.verify_all(&bytes).is_err(),
            "a failure is remembered for the process"
        );
    }

    #[test]
    fn every_block_verified_turns_checks_off() {
        let bytes = section(5 << BLOCK_SHIFT_MIN);
        let check = checked_by_blocks(&bytes);
        check.verify_range(&bytes, 0..1).unwrap();
        check
            .verify_range(&bytes, bytes.len() - 1..bytes.len())
            .unwrap();
        assert!(!check.is_verified());
        check.verify_all(&bytes).unwrap();
        assert!(check.is_verified());
    }

    #[test]
    fn a_section_read_all_but_a_rare_block_is_finished_by_the_next_read() {
        // Nine blocks, as an offsets array whose last block holds the last node's end alone.
        let bytes = section((8 << BLOCK_SHIFT_MIN) + 8);
        let check = checked_by_blocks(&bytes);
        assert_eq!(check.num_blocks(), 9);
        check
            .verify_range(&bytes, 0..(6 << BLOCK_SHIFT_MIN))
            .unwrap();
        assert!(!check.is_verified(), "three blocks left");
        check
            .verify_range(&bytes, (6 << BLOCK_SHIFT_MIN)..(6 << BLOCK_SHIFT_MIN) + 8)
            .unwrap();
        assert!(
            check.is_verified(),
            "the eighth and ninth blocks verified with the seventh"
        );
    }

    #[test]
    fn a_small_section_with_an_untouched_block_is_finished() {
        // Two blocks (scale 16's offsets), of which readers touch the first alone.
        let bytes = section((1 << BLOCK_SHIFT_MIN) + 8);
        let check = checked_by_blocks(&bytes);
        assert_eq!(check.num_blocks(), 2);
        check.verify_range(&bytes, 0..64).unwrap();
        assert!(check.is_verified());
    }

    #[test]
    fn reading_an_eighth_of_a_large_section_verifies_the_rest() {
        let bytes = section(64 << BLOCK_SHIFT_MIN);
        let check = checked_by_blocks(&bytes);
        check
            .verify_range(&bytes, 0..(7 << BLOCK_SHIFT_MIN))
            .unwrap();
        assert!(!check.is_verified());
        check
            .verify_range(&bytes, (7 << BLOCK_SHIFT_MIN)..(8 << BLOCK_SHIFT_MIN))
            .unwrap();
        assert!(check.is_verified());
        assert!(check.escalation_cursor.load(Ordering::Relaxed) >= check.num_blocks());
    }

    #[test]
    fn an_escalation_shares_its_blocks_among_threads_and_verifies_each() {
        // Four threads draining one cursor (as an escalation's helpers do) verify every block.
        let bytes = section(512 << BLOCK_SHIFT_MIN);
        let check = checked_by_blocks(&bytes);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| check.verify_escalated_chunks(&bytes));
            }
        });
        assert!(check.is_verified());
        assert_eq!(check.remaining.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn escalations_start_helpers_only_past_the_threshold() {
        assert_eq!(escalation_threads(PARALLEL_ESCALATION_BYTES_MIN - 1), 1);
        let threads = escalation_threads(PARALLEL_ESCALATION_BYTES_MIN);
        assert!((1..=ESCALATION_THREADS_MAX).contains(&threads));
    }

    #[test]
    fn a_damaged_checksum_table_fails_every_block() {
        let bytes = section(2 << BLOCK_SHIFT_MIN);
        let table: Vec<u8> = block_checksums(&bytes, BLOCK_SHIFT_MIN)
            .iter()
            .flat_map(|crc| crc.to_le_bytes())
            .collect();
        let list_crc = crc32fast::hash(&table) ^ 1;
        let map = Arc::new(FileMap::copied(&table));
        let check =
            SectionCheck::blocks("s".into(), bytes.len(), BLOCK_SHIFT_MIN, map, 0, list_crc);
        assert_eq!(check.damaged_blocks(&bytes), vec![0, 1]);
    }

    #[test]
    fn the_slot_keeps_the_first_mismatch() {
        let slot = CorruptionSlot::default();
        slot.check().unwrap();
        slot.record(ChecksumMismatch {
            section: "a".into(),
            block: 1,
        });
        slot.record(ChecksumMismatch {
            section: "b".into(),
            block: 2,
        });
        let error = slot.check().unwrap_err().to_string();
        assert!(error.contains("in a block 1"), "{error}");
    }
}
