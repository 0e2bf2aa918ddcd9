//! The byte layout of a write-ahead log file: the header and the frames, their encoding and their
//! validation. `docs/format/wal.md` documents the same layout. All integers are little-endian.
//! Decoding never panics and never allocates a size read from the file.

use warren_common::{Error, Result};

/// The 16 bytes that name the database a log belongs to.
pub type DatabaseId = [u8; 16];

pub const MAGIC: &[u8; 8] = b"WRNWAL\0\x01";
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of the file header.
pub const HEADER_BYTES: usize = 64;
/// Bytes of a frame before its payload.
pub const FRAME_HEADER_BYTES: usize = 32;
/// The largest payload one frame may carry (1 GiB).
pub const PAYLOAD_BYTES_MAX: usize = 1 << 30;
/// The most frames one group-commit batch (one write, one sync) holds.
pub const BATCH_FRAMES_MAX: u32 = 1 << 16;
/// LSN 0 means "no frame": logs number their frames from 1 or later.
pub const LSN_MIN: u64 = 1;

const HEADER_CHECKSUM_AT: usize = 60;
/// Header flag (bytes 40..44): the frames carry no checksum (`enable_checksums=false`).
const FLAG_UNCHECKSUMMED: u32 = 1;

/// The decoded header of a log file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub database_id: DatabaseId,
    /// The LSN of the first frame the file holds (or will hold).
    pub base_lsn: u64,
    /// Whether the frames carry a CRC-32 (always, unless the database was opened with
    /// `enable_checksums=false`).
    pub checksums: bool,
}

/// The fields of one frame, as written before its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub lsn: u64,
    pub txn_id: u64,
    /// The frame's position in the group-commit batch written with it (0 for the first).
    pub batch_index: u32,
    pub payload_bytes: u32,
}

impl FrameHeader {
    /// The LSN of the first frame of this frame's batch.
    pub fn batch_first_lsn(&self) -> u64 {
        self.lsn - u64::from(self.batch_index)
    }

    pub fn frame_bytes(&self) -> usize {
        FRAME_HEADER_BYTES + self.payload_bytes as usize
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

pub fn encode_header(header: &Header) -> [u8; HEADER_BYTES] {
    assert!(header.base_lsn >= LSN_MIN, "LSN 0 is reserved");
    let mut bytes = [0u8; HEADER_BYTES];
    bytes[0..8].copy_from_slice(MAGIC);
    bytes[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes[12..16].copy_from_slice(&(HEADER_BYTES as u32).to_le_bytes());
    bytes[16..32].copy_from_slice(&header.database_id);
    bytes[32..40].copy_from_slice(&header.base_lsn.to_le_bytes());
    let flags = if header.checksums {
        0
    } else {
        FLAG_UNCHECKSUMMED
    };
    bytes[40..44].copy_from_slice(&flags.to_le_bytes());
    let checksum = crc32fast::hash(&bytes[..HEADER_CHECKSUM_AT]);
    bytes[HEADER_CHECKSUM_AT..].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Decodes and checks the header at the start of `file` (the whole file's bytes).
pub fn decode_header(file: &[u8], path: &str) -> Result<Header> {
    let corrupt = |what: &str| Error::Corrupt(format!("write-ahead log {path}: {what}"));
    if file.len() < HEADER_BYTES {
        return Err(corrupt("the file is shorter than its header"));
    }
    let bytes = &file[..HEADER_BYTES];
    if &bytes[0..8] != MAGIC {
        return Err(corrupt("not a write-ahead log (bad magic)"));
    }
    let checksum = crc32fast::hash(&bytes[..HEADER_CHECKSUM_AT]);
    if read_u32(bytes, HEADER_CHECKSUM_AT) != checksum {
        return Err(corrupt("the header checksum does not match"));
    }
    let version = read_u32(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(corrupt(&format!(
            "format version {version} is not supported (expected {FORMAT_VERSION})"
        )));
    }
    let flags = read_u32(bytes, 40);
    if read_u32(bytes, 12) as usize != HEADER_BYTES
        || flags & !FLAG_UNCHECKSUMMED != 0
        || bytes[44..HEADER_CHECKSUM_AT] != [0; 16]
    {
        return Err(corrupt("the header's reserved fields are not as written"));
    }
    let base_lsn = read_u64(bytes, 32);
    if base_lsn < LSN_MIN {
        return Err(corrupt("the base LSN is 0"));
    }
    let database_id = bytes[16..32].try_into().expect("16 bytes");
    Ok(Header {
        database_id,
        base_lsn,
        checksums: flags & FLAG_UNCHECKSUMMED == 0,
    })
}

fn frame_checksum(header_fields: &[u8], payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(header_fields);
    hasher.update(payload);
    hasher.finalize()
}

/// Appends the encoding of one frame to `out`; its checksum field is 0 without `checksums`.
pub fn encode_frame(out: &mut Vec<u8>, header: &FrameHeader, payload: &[u8], checksums: bool) {
    assert_eq!(header.payload_bytes as usize, payload.len());
    assert!(payload.len() <= PAYLOAD_BYTES_MAX);
    assert!(header.batch_index < BATCH_FRAMES_MAX);
    assert!(header.lsn >= LSN_MIN + u64::from(header.batch_index));
    let start = out.len();
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&header.payload_bytes.to_le_bytes());
    out.extend_from_slice(&header.lsn.to_le_bytes());
    out.extend_from_slice(&header.txn_id.to_le_bytes());
    out.extend_from_slice(&header.batch_index.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    debug_assert_eq!(out.len() - start, FRAME_HEADER_BYTES);
    if checksums {
        let checksum = frame_checksum(&out[start + 4..], payload);
        out[start..start + 4].copy_from_slice(&checksum.to_le_bytes());
    }
    out.extend_from_slice(payload);
}

/// The frame at the start of `bytes` if it is whole and its checksum matches (without
/// `checksums`: if its checksum field is 0), with its payload. Says nothing about whether its
/// LSN is the one expected: the caller checks.
pub fn decode_frame(bytes: &[u8], checksums: bool) -> Option<(FrameHeader, &[u8])> {
    if bytes.len() < FRAME_HEADER_BYTES {
        return None;
    }
    let payload_bytes = read_u32(bytes, 4);
    let header = FrameHeader {
        payload_bytes,
        lsn: read_u64(bytes, 8),
        txn_id: read_u64(bytes, 16),
        batch_index: read_u32(bytes, 24),
    };
    let plausible = payload_bytes as usize <= PAYLOAD_BYTES_MAX
        && header.batch_index < BATCH_FRAMES_MAX
        && header.lsn >= LSN_MIN + u64::from(header.batch_index)
        && read_u32(bytes, 28) == 0
        && header.frame_bytes() <= bytes.len();
    if !plausible {
        return None;
    }
    let payload = &bytes[FRAME_HEADER_BYTES..header.frame_bytes()];
    let checksum = if checksums {
        frame_checksum(&bytes[4..FRAME_HEADER_BYTES], payload)
    } else {
        0
    };
    (read_u32(bytes, 0) == checksum).then_some((header, payload))
}

/// The LSN and size of the frame whose header starts `bytes`, from its header's fields alone
/// (its payload may not have been read yet): `None` when there is no whole frame header or
/// its fields are not plausible.
pub fn peek_frame(bytes: &[u8]) -> Option<(u64, usize)> {
    if bytes.len() < FRAME_HEADER_BYTES {
        return None;
    }
    let payload_bytes = read_u32(bytes, 4) as usize;
    let lsn = read_u64(bytes, 8);
    let plausible =
        payload_bytes <= PAYLOAD_BYTES_MAX && lsn >= LSN_MIN && read_u32(bytes, 28) == 0;
    plausible.then_some((lsn, FRAME_HEADER_BYTES + payload_bytes))
}

/// The LSN field of a would-be frame at the start of `bytes`, read without any check.
pub fn peek_lsn(bytes: &[u8]) -> Option<u64> {
    (bytes.len() >= FRAME_HEADER_BYTES).then(|| read_u64(bytes, 8))
}
