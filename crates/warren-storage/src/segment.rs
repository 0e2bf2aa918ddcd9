//! The segment file: one file holding the sections (byte arrays) of one table version, each
//! checksummed and 64-byte aligned so that it can be mapped and used in place. The byte layout
//! is documented in `docs/format/storage.md`.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use warren_common::{Error, Result};

use crate::buffer::{Bytes, SectionCheck};
use crate::io::{FileMap, FileSystem, FileWriter, OpenMode};

pub const MAGIC: &[u8; 8] = b"WRNSEG\0\x01";
pub const FORMAT_VERSION: u32 = 1;
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

/// Writes a new segment file through `fs` and makes its data durable (`fdatasync`) before
/// returning; its name becomes durable with a `sync_dir` of its directory (the caller's).
pub fn write_segment(fs: &dyn FileSystem, path: &Path, sections: &[SectionData<'_>]) -> Result<()> {
    let file = fs.open(path, OpenMode::CreateNew)?;
    let mut out = BufWriter::with_capacity(1 << 20, FileWriter::new(file.as_ref(), 0));
    let directory_end = HEADER_BYTES + sections.len() * ENTRY_BYTES;
    let mut header = [0u8; HEADER_BYTES];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    let mut directory = Vec::with_capacity(sections.len() * ENTRY_BYTES);
    let mut offset = align(directory_end);
    for section in sections {
        directory.extend_from_slice(&(section.tag as u32).to_le_bytes());
        directory.extend_from_slice(&section.index.to_le_bytes());
        directory.extend_from_slice(&(offset as u64).to_le_bytes());
        directory.extend_from_slice(&(section.bytes.len() as u64).to_le_bytes());
        directory.extend_from_slice(&crc32fast::hash(section.bytes).to_le_bytes());
        directory.extend_from_slice(&[0u8; 4]);
        offset = align(offset + section.bytes.len());
    }
    header[16..20].copy_from_slice(&crc32fast::hash(&directory).to_le_bytes());
    let write = |out: &mut BufWriter<FileWriter<'_>>, bytes: &[u8]| {
        out.write_all(bytes).map_err(|e| write_error(path, e))
    };
    write(&mut out, &header)?;
    write(&mut out, &directory)?;
    let mut position = directory_end;
    for section in sections {
        let start = align(position);
        write(&mut out, &vec![0u8; start - position])?;
        write(&mut out, section.bytes)?;
        position = start + section.bytes.len();
    }
    out.into_inner()
        .map_err(|e| write_error(path, e.into_error()))?;
    file.sync_data()
}

/// The project's error for a failed write through [`FileWriter`] (which wraps the I/O layer's
/// error, already naming the file, in a `std::io::Error`).
fn write_error(path: &Path, error: std::io::Error) -> Error {
    match error.into_inner() {
        Some(inner) => match inner.downcast::<Error>() {
            Ok(error) => *error,
            Err(other) => Error::Io(format!("{}: {other}", path.display())),
        },
        None => Error::Io(format!("{}: write failed", path.display())),
    }
}

/// A mapped segment file with a verified directory. Section checksums are verified when a
/// section is first read ([`Bytes::as_bytes`]) or by [`Segment::verify_all`], so opening reads
/// only the header and the directory.
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
        let version = u32::from_le_bytes(map[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(corrupt(&format!(
                "unsupported segment format version {version}"
            )));
        }
        let count = u32::from_le_bytes(map[12..16].try_into().expect("4 bytes")) as usize;
        let directory_end = HEADER_BYTES + count * ENTRY_BYTES;
        if count > SECTIONS_MAX || directory_end > map.len() {
            return Err(corrupt("section directory exceeds the file"));
        }
        let directory = &map[HEADER_BYTES..directory_end];
        let directory_crc = u32::from_le_bytes(map[16..20].try_into().expect("4 bytes"));
        if crc32fast::hash(directory) != directory_crc {
            return Err(corrupt("section directory checksum mismatch"));
        }
        let mut sections = HashMap::with_capacity(count);
        for entry in directory.chunks_exact(ENTRY_BYTES) {
            let field = |range: std::ops::Range<usize>| &entry[range];
            let tag = u32::from_le_bytes(field(0..4).try_into().expect("4 bytes"));
            let index = u32::from_le_bytes(field(4..8).try_into().expect("4 bytes"));
            let offset = u64::from_le_bytes(field(8..16).try_into().expect("8 bytes")) as usize;
            let length = u64::from_le_bytes(field(16..24).try_into().expect("8 bytes")) as usize;
            let crc = u32::from_le_bytes(field(24..28).try_into().expect("4 bytes"));
            let tag = SectionTag::from_u32(tag).ok_or_else(|| corrupt("unknown section tag"))?;
            let end = offset.checked_add(length).filter(|&end| end <= map.len());
            if end.is_none() || !offset.is_multiple_of(ALIGNMENT) {
                return Err(corrupt("section out of bounds or misaligned"));
            }
            let name = format!("{} section {tag:?} {index}", path.display());
            sections.insert(
                (tag, index),
                (offset, length, Arc::new(SectionCheck::new(name, crc))),
            );
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

    /// Verifies every section's checksum now (`warren check`).
    pub fn verify_all(&self) -> Result<()> {
        for (offset, length, check) in self.sections.values() {
            if !check.verify(&self.map[*offset..*offset + *length]) {
                return Err(Error::Corrupt(format!(
                    "checksum mismatch in {}",
                    check.name
                )));
            }
        }
        Ok(())
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
}
