//! The segment file: one file holding the sections (byte arrays) of one table version, each
//! 64-byte aligned so that it can be mapped and used in place, with a crc32 per block of
//! 2^[`BLOCK_SHIFT`] bytes so that readers verify only the blocks they touch. The byte layout
//! is documented in `docs/format/storage.md`; version 1 files (one crc32 per section) still
//! read.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use warren_common::{Error, Result};

use crate::buffer::Bytes;
use crate::io::{write_all_at, FileHandle, FileMap, FileSystem, OpenMode};
use crate::section_check::{
    block_checksums, SectionCheck, BLOCK_SHIFT, BLOCK_SHIFT_MAX, BLOCK_SHIFT_MIN,
};

pub const MAGIC: &[u8; 8] = b"WRNSEG\0\x01";
/// The version written: 2 (per-block checksums). Version 1 (one checksum per section) reads.
pub const FORMAT_VERSION: u32 = 2;
const FORMAT_VERSION_WHOLE_SECTION: u32 = 1;
const HEADER_BYTES: usize = 64;
const ENTRY_BYTES: usize = 32;
const ALIGNMENT: usize = 64;
/// Sanity bound on the number of sections (a table with thousands of columns stays far below).
const SECTIONS_MAX: usize = 1 << 20;

/// What a section holds; the `index` beside it numbers columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SectionTag {
    ColumnValues = 1,
    ColumnData = 2,
    ColumnNulls = 3,
    /// The contiguous elements of a vector column (`FLOAT[n]`, `DOUBLE[n]`).
    VectorValues = 4,
    /// The element-null bitmap of a vector column (only when an element is NULL).
    VectorElementNulls = 5,
    PrimaryKeySlots = 10,
    Deleted = 11,
    RelSources = 20,
    RelTargets = 21,
    ForwardOffsets = 22,
    ForwardNeighbours = 23,
    ForwardRels = 24,
    BackwardOffsets = 25,
    BackwardNeighbours = 26,
    BackwardRels = 27,
}

impl SectionTag {
    fn from_u32(value: u32) -> Option<Self> {
        use SectionTag::*;
        Some(match value {
            1 => ColumnValues,
            2 => ColumnData,
            3 => ColumnNulls,
            4 => VectorValues,
            5 => VectorElementNulls,
            10 => PrimaryKeySlots,
            11 => Deleted,
            20 => RelSources,
            21 => RelTargets,
            22 => ForwardOffsets,
            23 => ForwardNeighbours,
            24 => ForwardRels,
            25 => BackwardOffsets,
            26 => BackwardNeighbours,
            27 => BackwardRels,
            _ => return None,
        })
    }
}

/// A section to write: its tag, index and bytes.
pub struct SectionData<'a> {
    pub tag: SectionTag,
    pub index: u32,
    pub bytes: &'a [u8],
}

fn align(offset: usize) -> usize {
    offset.div_ceil(ALIGNMENT) * ALIGNMENT
}

/// Segments whose sections hold at least this many bytes are written by several threads, in
/// whole pages ([`Placement::Paged`]): below it one thread writes in file order (and the
/// simulated file system's tests replay).
const LARGE_SEGMENT_BYTES: usize = 64 << 20;
/// The page a [`Placement::Paged`] segment aligns its sections, writes and buffers to: the
/// alignment `O_DIRECT` asks of a file system with blocks of at most 4 KiB.
const PAGE_BYTES: usize = 4096;
/// The most threads that write one segment.
const WRITE_THREADS_MAX: usize = 4;
/// The piece of a section that a writer checksums and writes at a time: whole checksum blocks.
const PIECE_BYTES: usize = 16 << 20;
const _: () = assert!(PIECE_BYTES.is_multiple_of(1 << BLOCK_SHIFT));
const _: () = assert!(PIECE_BYTES.is_multiple_of(PAGE_BYTES));

/// Where a segment's sections go and how they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// Every section at the next 64-byte boundary, written from its own bytes (through the
    /// page cache): small segments, where a page of padding per section would be a large share.
    Packed,
    /// Every section at the next page boundary, written in whole pages from a page-aligned
    /// staging buffer, so that the file can bypass the page cache (`O_DIRECT`): a large
    /// segment is written once to the disk instead of copied into the page cache first, which
    /// on a machine whose free memory is cold costs several times the disk's own time
    /// (optimization log 212).
    Paged,
}

impl Placement {
    fn alignment(self) -> usize {
        match self {
            Placement::Packed => ALIGNMENT,
            Placement::Paged => PAGE_BYTES,
        }
    }
}

/// Writes a new segment file through `fs` and makes its data durable (`fdatasync`) before
/// returning; its name becomes durable with a `sync_dir` of its directory (the caller's). The
/// sections are written first, in pieces that checksum and write on one or more threads
/// ([`write_sections`]); the header, directory and checksum table, which need every checksum,
/// last. The alignment gaps between sections read as zeros (a [`Placement::Packed`] segment
/// never writes them). A segment of [`LARGE_SEGMENT_BYTES`] or more is [`Placement::Paged`]
/// and asks its file to bypass the page cache.
pub fn write_segment(fs: &dyn FileSystem, path: &Path, sections: &[SectionData<'_>]) -> Result<()> {
    let total: usize = sections.iter().map(|s| s.bytes.len()).sum();
    if total >= LARGE_SEGMENT_BYTES {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(WRITE_THREADS_MAX);
        write_segment_with(fs, path, sections, threads, Placement::Paged)
    } else {
        write_segment_with(fs, path, sections, 1, Placement::Packed)
    }
}

/// [`write_segment`] with `threads` writers and the given placement.
fn write_segment_with(
    fs: &dyn FileSystem,
    path: &Path,
    sections: &[SectionData<'_>],
    threads: usize,
    placement: Placement,
) -> Result<()> {
    let file = fs.open(path, OpenMode::CreateNew)?;
    let layout = SegmentLayout::of(sections, placement);
    if placement == Placement::Paged {
        // Whether or not the file system grants it, the paged writes below are valid.
        let _ = file.bypass_page_cache();
    }
    let checksums = write_sections(file.as_ref(), sections, &layout, threads, placement)?;
    let head = head_bytes(path, sections, &layout, &checksums)?;
    match placement {
        Placement::Packed => {
            write_all_at(file.as_ref(), 0, &head)?;
            // An empty last section starts after an alignment gap that nothing wrote: the
            // file must reach it.
            let written = layout.written_end(sections).max(head.len());
            if written < layout.file_end(sections) {
                file.set_len(layout.file_end(sections) as u64)?;
            }
        }
        Placement::Paged => {
            let mut staging = PageBuffer::new(layout.data_start)?;
            write_paged(file.as_ref(), 0, &head, &mut staging)?;
            // The last section's last page may reach past the file's end, and an empty last
            // section starts after a gap nothing wrote.
            file.set_len(layout.file_end(sections) as u64)?;
        }
    }
    file.sync_data()
}

/// A page-aligned buffer of whole pages (an anonymous mapping), which a file that bypasses
/// the page cache can be written from.
struct PageBuffer {
    pages: memmap2::MmapMut,
}

impl PageBuffer {
    /// A buffer of at least `len` bytes (at least one page).
    fn new(len: usize) -> Result<Self> {
        let pages = memmap2::MmapMut::map_anon(len.max(1).next_multiple_of(PAGE_BYTES))
            .map_err(|e| Error::Io(format!("cannot map a write buffer of {len} bytes: {e}")))?;
        Ok(Self { pages })
    }
}

/// Writes `bytes` at `offset` (a page boundary) in whole pages through `staging`: copied,
/// then zero-padded to the next page boundary. Returns the block checksums of `bytes`, taken
/// from the copy while it is in the cache.
fn write_paged(
    file: &dyn FileHandle,
    offset: usize,
    bytes: &[u8],
    staging: &mut PageBuffer,
) -> Result<Vec<u32>> {
    assert!(
        offset.is_multiple_of(PAGE_BYTES),
        "a paged write starts on a page"
    );
    let padded = bytes.len().next_multiple_of(PAGE_BYTES);
    assert!(
        padded <= staging.pages.len(),
        "the staging buffer holds the write"
    );
    let buffer = &mut staging.pages[..padded];
    buffer[..bytes.len()].copy_from_slice(bytes);
    buffer[bytes.len()..].fill(0);
    let checksums = block_checksums(&buffer[..bytes.len()], BLOCK_SHIFT);
    write_all_at(file, offset as u64, buffer)?;
    Ok(checksums)
}

/// Where a segment's parts go: the checksum table, then each section at the placement's
/// alignment.
struct SegmentLayout {
    directory_end: usize,
    table_offset: usize,
    /// Where the sections begin: the end of the head (header, directory, checksum table)
    /// rounded up to the placement's alignment.
    data_start: usize,
    section_offsets: Vec<usize>,
}

impl SegmentLayout {
    fn of(sections: &[SectionData<'_>], placement: Placement) -> Self {
        let aligned = |offset: usize| offset.next_multiple_of(placement.alignment());
        let directory_end = HEADER_BYTES + sections.len() * ENTRY_BYTES;
        let table_offset = align(directory_end);
        let blocks: usize = sections
            .iter()
            .map(|s| s.bytes.len().div_ceil(1 << BLOCK_SHIFT))
            .sum();
        let data_start = aligned(table_offset + blocks * 4);
        let mut offset = data_start;
        let section_offsets = sections
            .iter()
            .map(|section| {
                let start = offset;
                offset = aligned(offset + section.bytes.len());
                start
            })
            .collect();
        Self {
            directory_end,
            table_offset,
            data_start,
            section_offsets,
        }
    }

    /// The end of the file: the end of its last section (the start of the gap after the table
    /// when there is none).
    fn file_end(&self, sections: &[SectionData<'_>]) -> usize {
        let last = self.section_offsets.last().zip(sections.last());
        last.map_or(self.table_offset, |(&offset, section)| {
            offset + section.bytes.len()
        })
    }

    /// The end of the last section byte written.
    fn written_end(&self, sections: &[SectionData<'_>]) -> usize {
        let ends = self.section_offsets.iter().zip(sections);
        ends.filter(|(_, section)| !section.bytes.is_empty())
            .map(|(&offset, section)| offset + section.bytes.len())
            .max()
            .unwrap_or(0)
    }
}

/// One piece of a section: `section`'s bytes `range`, written at `file_offset`.
struct Piece {
    section: usize,
    range: std::ops::Range<usize>,
    file_offset: usize,
}

/// Writes every section at its offset in pieces of [`PIECE_BYTES`], `threads` pieces at a
/// time (a [`Placement::Paged`] piece through its writer's page-aligned staging buffer);
/// returns each section's block checksums. The first failing piece's error is returned.
fn write_sections(
    file: &dyn FileHandle,
    sections: &[SectionData<'_>],
    layout: &SegmentLayout,
    threads: usize,
    placement: Placement,
) -> Result<Vec<Vec<u32>>> {
    assert!(threads >= 1, "a segment needs a writer");
    let pieces: Vec<Piece> = sections
        .iter()
        .zip(&layout.section_offsets)
        .enumerate()
        .flat_map(|(section, (data, &offset))| {
            (0..data.bytes.len())
                .step_by(PIECE_BYTES)
                .map(move |start| Piece {
                    section,
                    range: start..(start + PIECE_BYTES).min(data.bytes.len()),
                    file_offset: offset + start,
                })
        })
        .collect();
    let results: Vec<OnceLock<Result<Vec<u32>>>> = pieces.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut buffers = Vec::with_capacity(threads);
    for _ in 0..threads {
        buffers.push(match placement {
            Placement::Packed => None,
            Placement::Paged => Some(PageBuffer::new(PIECE_BYTES)?),
        });
    }
    let work = |mut staging: Option<PageBuffer>| loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= pieces.len() || failed.load(Ordering::Relaxed) {
            break;
        }
        let piece = &pieces[index];
        let bytes = &sections[piece.section].bytes[piece.range.clone()];
        let outcome = match staging.as_mut() {
            None => {
                let checksums = block_checksums(bytes, BLOCK_SHIFT);
                write_all_at(file, piece.file_offset as u64, bytes).map(|()| checksums)
            }
            Some(staging) => write_paged(file, piece.file_offset, bytes, staging),
        };
        failed.fetch_or(outcome.is_err(), Ordering::Relaxed);
        assert!(
            results[index].set(outcome).is_ok(),
            "each piece is written once"
        );
    };
    if threads == 1 {
        work(buffers.pop().expect("one buffer per writer"));
    } else {
        let work = &work;
        std::thread::scope(|scope| {
            for staging in buffers {
                scope.spawn(move || work(staging));
            }
        });
    }
    let mut checksums: Vec<Vec<u32>> = vec![Vec::new(); sections.len()];
    for (piece, result) in pieces.iter().zip(results) {
        match result.into_inner() {
            Some(outcome) => checksums[piece.section].extend(outcome?),
            None => {
                assert!(failed.load(Ordering::Relaxed), "a piece was skipped");
            }
        }
    }
    Ok(checksums)
}

/// The segment's first bytes: header, directory, the gap to the checksum table, the table.
fn head_bytes(
    path: &Path,
    sections: &[SectionData<'_>],
    layout: &SegmentLayout,
    checksums: &[Vec<u32>],
) -> Result<Vec<u8>> {
    let table: Vec<u8> = checksums
        .iter()
        .flatten()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    let mut header = [0u8; HEADER_BYTES];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    header[20..24].copy_from_slice(&BLOCK_SHIFT.to_le_bytes());
    header[24..32].copy_from_slice(&(layout.table_offset as u64).to_le_bytes());
    header[32..40].copy_from_slice(&(table.len() as u64).to_le_bytes());
    let mut directory = Vec::with_capacity(sections.len() * ENTRY_BYTES);
    let mut first_block = 0usize;
    let entries = sections.iter().zip(checksums).zip(&layout.section_offsets);
    for ((section, blocks), &offset) in entries {
        let list: Vec<u8> = blocks.iter().flat_map(|c| c.to_le_bytes()).collect();
        directory.extend_from_slice(&(section.tag as u32).to_le_bytes());
        directory.extend_from_slice(&section.index.to_le_bytes());
        directory.extend_from_slice(&(offset as u64).to_le_bytes());
        directory.extend_from_slice(&(section.bytes.len() as u64).to_le_bytes());
        directory.extend_from_slice(&crc32fast::hash(&list).to_le_bytes());
        let first = u32::try_from(first_block).map_err(|_| {
            Error::LimitExceeded(format!(
                "{}: more than 2^32 checksum blocks",
                path.display()
            ))
        })?;
        directory.extend_from_slice(&first.to_le_bytes());
        first_block += blocks.len();
    }
    let directory_crc = directory_checksum(&header, &directory);
    header[16..20].copy_from_slice(&directory_crc.to_le_bytes());
    let mut head = Vec::with_capacity(layout.table_offset + table.len());
    head.extend_from_slice(&header);
    head.extend_from_slice(&directory);
    assert_eq!(
        head.len(),
        layout.directory_end,
        "the directory has one entry per section"
    );
    head.resize(layout.table_offset, 0);
    head.extend_from_slice(&table);
    Ok(head)
}

/// The directory checksum of version 2: the header after the checksum field, then the
/// directory (version 1 covers the directory alone).
fn directory_checksum(header: &[u8], directory: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header[20..HEADER_BYTES]);
    hasher.update(directory);
    hasher.finalize()
}

/// Where a version-2 segment keeps its block checksums.
struct BlockLayout {
    shift: u32,
    table_offset: usize,
    /// Checksums in the table.
    table_entries: usize,
}

impl BlockLayout {
    /// The layout a (verified) header declares; `None` if it is out of bounds.
    fn read(map: &[u8]) -> Option<Self> {
        let shift = u32::from_le_bytes(map[20..24].try_into().expect("4 bytes"));
        let table_offset = u64::from_le_bytes(map[24..32].try_into().expect("8 bytes"));
        let table_bytes = u64::from_le_bytes(map[32..40].try_into().expect("8 bytes"));
        let table_offset = usize::try_from(table_offset).ok()?;
        let table_bytes = usize::try_from(table_bytes).ok()?;
        let in_file = table_offset.checked_add(table_bytes)? <= map.len();
        let valid = (BLOCK_SHIFT_MIN..=BLOCK_SHIFT_MAX).contains(&shift)
            && in_file
            && table_bytes.is_multiple_of(4);
        valid.then_some(Self {
            shift,
            table_offset,
            table_entries: table_bytes / 4,
        })
    }

    /// The file offset of the checksums of a section of `length` bytes whose first block is
    /// entry `first_block`; `None` if they would run past the table.
    fn section_table(&self, first_block: usize, length: usize) -> Option<usize> {
        let blocks = length.div_ceil(1 << self.shift);
        (first_block.checked_add(blocks)? <= self.table_entries)
            .then_some(self.table_offset + first_block * 4)
    }
}

/// A mapped segment file with a verified directory. Section checksums are verified when a
/// block is first read ([`Bytes::try_range`], [`Bytes::as_bytes`]) or by
/// [`Segment::verify_all`], so opening reads only the header and the directory.
#[derive(Debug)]
pub struct Segment {
    map: Arc<FileMap>,
    sections: HashMap<(SectionTag, u32), (usize, usize, Arc<SectionCheck>)>,
}

impl Segment {
    /// Maps the segment at `path` through `fs` and verifies its header and directory.
    pub fn open(fs: &dyn FileSystem, path: &Path) -> Result<Self> {
        let corrupt = |why: &str| Error::Corrupt(format!("{}: {why}", path.display()));
        let map = fs.map(path)?;
        if map.len() < HEADER_BYTES || &map[..8] != MAGIC {
            return Err(corrupt("not a Warren segment file"));
        }
        let word = |range: std::ops::Range<usize>| {
            u32::from_le_bytes(map[range].try_into().expect("4 bytes"))
        };
        let version = word(8..12);
        if version != FORMAT_VERSION && version != FORMAT_VERSION_WHOLE_SECTION {
            return Err(corrupt(&format!(
                "unsupported segment format version {version}"
            )));
        }
        let count = word(12..16) as usize;
        let directory_end = HEADER_BYTES + count * ENTRY_BYTES;
        if count > SECTIONS_MAX || directory_end > map.len() {
            return Err(corrupt("section directory exceeds the file"));
        }
        let directory = &map[HEADER_BYTES..directory_end];
        let directory_crc = match version {
            FORMAT_VERSION_WHOLE_SECTION => crc32fast::hash(directory),
            _ => directory_checksum(&map[..HEADER_BYTES], directory),
        };
        if directory_crc != word(16..20) {
            return Err(corrupt("section directory checksum mismatch"));
        }
        let layout = if version == FORMAT_VERSION {
            Some(BlockLayout::read(&map).ok_or_else(|| corrupt("checksum table malformed"))?)
        } else {
            None
        };
        let mut sections = HashMap::with_capacity(count);
        for entry in directory.chunks_exact(ENTRY_BYTES) {
            let field = |range: std::ops::Range<usize>| &entry[range];
            let tag = u32::from_le_bytes(field(0..4).try_into().expect("4 bytes"));
            let index = u32::from_le_bytes(field(4..8).try_into().expect("4 bytes"));
            let offset = u64::from_le_bytes(field(8..16).try_into().expect("8 bytes")) as usize;
            let length = u64::from_le_bytes(field(16..24).try_into().expect("8 bytes")) as usize;
            let crc = u32::from_le_bytes(field(24..28).try_into().expect("4 bytes"));
            let first_block = u32::from_le_bytes(field(28..32).try_into().expect("4 bytes"));
            let tag = SectionTag::from_u32(tag).ok_or_else(|| corrupt("unknown section tag"))?;
            let end = offset.checked_add(length).filter(|&end| end <= map.len());
            if end.is_none() || !offset.is_multiple_of(ALIGNMENT) {
                return Err(corrupt("section out of bounds or misaligned"));
            }
            let name = format!("{} section {tag:?} {index}", path.display());
            let check = match &layout {
                None => SectionCheck::whole(name, length, crc),
                Some(layout) => {
                    let table_offset = layout
                        .section_table(first_block as usize, length)
                        .ok_or_else(|| corrupt("section checksums exceed the checksum table"))?;
                    SectionCheck::blocks(name, length, layout.shift, map.clone(), table_offset, crc)
                }
            };
            sections.insert((tag, index), (offset, length, Arc::new(check)));
        }
        Ok(Self { map, sections })
    }

    /// The bytes of a section, or `None` if the segment has no such section.
    pub fn section(&self, tag: SectionTag, index: u32) -> Option<Bytes> {
        let (offset, length, check) = self.sections.get(&(tag, index))?;
        Some(Bytes::mapped_checked(
            self.map.clone(),
            *offset,
            *length,
            Some(check.clone()),
        ))
    }

    /// Verifies every section's checksums now: the first mismatch.
    pub fn verify_all(&self) -> Result<()> {
        for (offset, length, check) in self.sections.values() {
            check.verify_all(&self.map[*offset..*offset + *length])?;
        }
        Ok(())
    }

    /// Every damaged block, as `corrupt database: checksum mismatch in <section> block N`
    /// messages, in file order (`warren check`).
    pub fn damaged_blocks(&self) -> Vec<String> {
        let mut sections: Vec<_> = self.sections.values().collect();
        sections.sort_by_key(|(offset, ..)| *offset);
        let mut damaged = Vec::new();
        for (offset, length, check) in sections {
            for block in check.damaged_blocks(&self.map[*offset..*offset + *length]) {
                let mismatch = crate::section_check::ChecksumMismatch {
                    section: check.name().to_string(),
                    block,
                };
                damaged.push(mismatch.to_string());
            }
        }
        damaged
    }

    /// The number of sections.
    pub fn num_sections(&self) -> usize {
        self.sections.len()
    }

    /// The bytes of a section that must exist.
    pub fn required(&self, tag: SectionTag, index: u32) -> Result<Bytes> {
        self.section(tag, index)
            .ok_or_else(|| Error::Corrupt(format!("segment lacks section {tag:?} {index}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::RealFileSystem;

    #[test]
    fn sections_round_trip_and_corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.seg");
        let numbers: Vec<u8> = (0..100u32).flat_map(|i| i.to_le_bytes()).collect();
        write_segment(
            &RealFileSystem,
            &path,
            &[
                SectionData {
                    tag: SectionTag::RelSources,
                    index: 0,
                    bytes: &numbers,
                },
                SectionData {
                    tag: SectionTag::ColumnValues,
                    index: 3,
                    bytes: b"abc",
                },
            ],
        )
        .unwrap();
        let segment = Segment::open(&RealFileSystem, &path).unwrap();
        assert_eq!(
            segment
                .required(SectionTag::RelSources, 0)
                .unwrap()
                .cast::<u32>()[99],
            99
        );
        assert_eq!(
            segment
                .section(SectionTag::ColumnValues, 3)
                .unwrap()
                .as_bytes(),
            b"abc"
        );
        assert!(segment.section(SectionTag::ColumnValues, 4).is_none());
        drop(segment);

        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        // Opening reads only the directory; the damage is found when the section is used.
        let segment = Segment::open(&RealFileSystem, &path).unwrap();
        let error = segment.verify_all().unwrap_err().to_string();
        assert!(error.contains("checksum"), "{error}");
        let damaged = segment.section(SectionTag::ColumnValues, 3).unwrap();
        assert!(damaged.verify().is_err());
        assert!(segment
            .section(SectionTag::RelSources, 0)
            .unwrap()
            .verify()
            .is_ok());
    }

    /// A version-1 segment (one checksum per section), as written before per-block checksums.
    fn version_one(section: &[u8]) -> Vec<u8> {
        let mut entry = Vec::new();
        entry.extend_from_slice(&(SectionTag::ColumnValues as u32).to_le_bytes());
        entry.extend_from_slice(&0u32.to_le_bytes());
        entry.extend_from_slice(&128u64.to_le_bytes());
        entry.extend_from_slice(&(section.len() as u64).to_le_bytes());
        entry.extend_from_slice(&crc32fast::hash(section).to_le_bytes());
        entry.extend_from_slice(&[0u8; 4]);
        let mut file = vec![0u8; 128];
        file[..8].copy_from_slice(MAGIC);
        file[8..12].copy_from_slice(&1u32.to_le_bytes());
        file[12..16].copy_from_slice(&1u32.to_le_bytes());
        file[16..20].copy_from_slice(&crc32fast::hash(&entry).to_le_bytes());
        file[64..96].copy_from_slice(&entry);
        file.extend_from_slice(section);
        file
    }

    #[test]
    fn pieces_written_by_several_threads_give_the_one_thread_file() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..2 * PIECE_BYTES + 1000)
            .map(|i| (i % 251) as u8)
            .collect();
        let small = [7u8; 12];
        let sections = [
            SectionData {
                tag: SectionTag::RelSources,
                index: 0,
                bytes: &small,
            },
            SectionData {
                tag: SectionTag::ForwardNeighbours,
                index: 0,
                bytes: &big,
            },
            SectionData {
                tag: SectionTag::ForwardRels,
                index: 0,
                bytes: &[],
            },
        ];
        for placement in [Placement::Packed, Placement::Paged] {
            let files: Vec<Vec<u8>> = [1, 3]
                .into_iter()
                .map(|threads| {
                    let path = dir.path().join(format!("t{threads}-{placement:?}.seg"));
                    write_segment_with(&RealFileSystem, &path, &sections, threads, placement)
                        .unwrap();
                    let segment = Segment::open(&RealFileSystem, &path).unwrap();
                    segment.verify_all().unwrap();
                    let read = segment.required(SectionTag::ForwardNeighbours, 0).unwrap();
                    assert_eq!(read.try_bytes().unwrap(), &big[..]);
                    let read = segment.required(SectionTag::RelSources, 0).unwrap();
                    assert_eq!(read.try_bytes().unwrap(), &small[..]);
                    let empty = segment.required(SectionTag::ForwardRels, 0).unwrap();
                    assert!(empty.try_bytes().unwrap().is_empty());
                    std::fs::read(&path).unwrap()
                })
                .collect();
            assert_eq!(files[0], files[1], "{placement:?}");
            let layout = SegmentLayout::of(&sections, placement);
            assert_eq!(files[0].len(), layout.file_end(&sections));
            assert!(layout.written_end(&sections) < layout.file_end(&sections));
            let alignment = placement.alignment();
            assert!(layout.data_start.is_multiple_of(alignment));
            assert!(layout
                .section_offsets
                .iter()
                .all(|offset| offset.is_multiple_of(alignment)));
        }
    }

    #[test]
    fn a_paged_segment_reads_like_a_packed_one_through_the_simulated_file_system() {
        let fs = crate::io::SimulatedFileSystem::new(crate::io::FaultPlan::default());
        fs.create_dir_all(Path::new("db")).unwrap();
        let values: Vec<u8> = (0..3 * PAGE_BYTES + 5).map(|i| (i % 249) as u8).collect();
        let sections = [
            SectionData {
                tag: SectionTag::ColumnValues,
                index: 0,
                bytes: &values,
            },
            SectionData {
                tag: SectionTag::ColumnValues,
                index: 1,
                bytes: b"tail",
            },
        ];
        for placement in [Placement::Packed, Placement::Paged] {
            let path = std::path::PathBuf::from(format!("db/{placement:?}.seg"));
            write_segment_with(&fs, &path, &sections, 2, placement).unwrap();
            let segment = Segment::open(&fs, &path).unwrap();
            segment.verify_all().unwrap();
            let first = segment.required(SectionTag::ColumnValues, 0).unwrap();
            assert_eq!(first.try_bytes().unwrap(), &values[..]);
            let last = segment.required(SectionTag::ColumnValues, 1).unwrap();
            assert_eq!(last.try_bytes().unwrap(), b"tail");
            let layout = SegmentLayout::of(&sections, placement);
            let file = fs.open(&path, OpenMode::Read).unwrap();
            assert_eq!(file.len().unwrap(), layout.file_end(&sections) as u64);
        }
    }

    #[test]
    fn version_one_segments_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.seg");
        let section: Vec<u8> = (0..5000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut file = version_one(&section);
        std::fs::write(&path, &file).unwrap();
        let segment = Segment::open(&RealFileSystem, &path).unwrap();
        let bytes = segment.required(SectionTag::ColumnValues, 0).unwrap();
        assert_eq!(bytes.try_range(400..404).unwrap(), &100u32.to_le_bytes());
        assert!(bytes.is_verified(), "a version-1 section is one block");
        drop((segment, bytes));
        let last = file.len() - 1;
        file[last] ^= 1;
        std::fs::write(&path, &file).unwrap();
        let segment = Segment::open(&RealFileSystem, &path).unwrap();
        let error = segment
            .required(SectionTag::ColumnValues, 0)
            .unwrap()
            .try_range(0..4)
            .unwrap_err();
        assert!(
            error.to_string().ends_with("ColumnValues 0 block 0"),
            "{error}"
        );
        assert_eq!(segment.damaged_blocks().len(), 1);
    }

    #[test]
    fn a_large_section_is_verified_block_by_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.seg");
        let block = 1usize << BLOCK_SHIFT;
        let values: Vec<u8> = (0..3 * block + 100).map(|i| (i % 253) as u8).collect();
        let section = [SectionData {
            tag: SectionTag::ForwardNeighbours,
            index: 0,
            bytes: &values,
        }];
        write_segment(&RealFileSystem, &path, &section).unwrap();
        let mut file = std::fs::read(&path).unwrap();
        let at = file.len() - values.len() + 2 * block + 7;
        file[at] ^= 1;
        std::fs::write(&path, &file).unwrap();
        let segment = Segment::open(&RealFileSystem, &path).unwrap();
        let bytes = segment.required(SectionTag::ForwardNeighbours, 0).unwrap();
        bytes.try_range(0..block + 1).unwrap();
        bytes.try_range(3 * block..3 * block + 100).unwrap();
        let error = bytes.try_range(2 * block + 5..2 * block + 6).unwrap_err();
        assert!(
            error.to_string().ends_with("ForwardNeighbours 0 block 2"),
            "{error}"
        );
        assert!(!bytes.is_verified());
        let damaged = segment.damaged_blocks();
        assert_eq!(damaged.len(), 1);
        assert!(damaged[0].ends_with("block 2"), "{damaged:?}");
        assert!(bytes.verify().unwrap_err().contains("block 2"));
    }
}
