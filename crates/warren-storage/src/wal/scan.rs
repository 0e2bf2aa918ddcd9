//! Recovery's reading of a log file: the longest valid prefix of frames, and what follows it.
//!
//! Frames are written one group-commit batch at a time, and a batch is written only after the
//! previous one is durable. So a crash can damage only the last batch, and damage followed by a
//! valid frame of a *later* batch is damage to committed data. Each frame records its position
//! in its batch, which tells the two apart: a valid frame after the damage whose batch starts
//! at or before the damaged LSN was written by the same (unfinished) write; one whose batch
//! starts after it proves that the damaged frame had been made durable.

use super::format::{decode_frame, peek_lsn, FrameHeader, FRAME_HEADER_BYTES, HEADER_BYTES};

/// What follows the valid prefix of frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Only zeros (or nothing) follow the last valid frame.
    Clean,
    /// The bytes from `offset` to `end` (just past the last byte that is not zero) hold no
    /// frame of a later batch: an unfinished write.
    Torn { offset: usize, end: usize },
    /// The frame expected at `offset` (LSN `lsn`) is invalid, yet a valid frame of a later
    /// batch (LSN `later_lsn`) lies at `later_offset`: committed data is damaged.
    Damaged {
        offset: usize,
        lsn: u64,
        later_offset: usize,
        later_lsn: u64,
    },
}

/// The valid frames of a log file, in LSN order, and what follows them.
#[derive(Debug)]
pub struct Scan<'a> {
    pub frames: Vec<(FrameHeader, &'a [u8])>,
    /// The byte offset just past the last valid frame.
    pub valid_end: usize,
    pub tail: Tail,
}

/// Where a scan starts reading frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// The byte offset (in the bytes scanned) of the first frame to read.
    pub offset: usize,
    /// The LSN of the log's first frame.
    pub base_lsn: u64,
    /// The LSN the first frame read must have.
    pub expected_lsn: u64,
    /// The first LSN of the batch of the frame before `offset` (`None` when there is none):
    /// a scan resumed in the middle of a batch continues it.
    pub previous_batch_first: Option<u64>,
}

/// Reads the frames of `file` (the whole file, header included) whose first LSN is `base_lsn`
/// (`checksums`: whether its frames carry checksums).
pub fn scan(file: &[u8], base_lsn: u64, checksums: bool) -> Scan<'_> {
    assert!(file.len() >= HEADER_BYTES, "the header was checked first");
    let start = Start {
        offset: HEADER_BYTES,
        base_lsn,
        expected_lsn: base_lsn,
        previous_batch_first: None,
    };
    scan_from(file, start, checksums)
}

/// Reads the frames of `bytes` from `start` on: `bytes` is a whole log file or the part of one
/// after an earlier scan's valid end (offsets in the result are into `bytes`).
pub fn scan_from(bytes: &[u8], start: Start, checksums: bool) -> Scan<'_> {
    assert!(
        start.offset <= bytes.len(),
        "a scan starts inside its bytes"
    );
    let mut frames: Vec<(FrameHeader, &[u8])> = Vec::new();
    let mut offset = start.offset;
    let mut expected_lsn = start.expected_lsn;
    let mut previous_batch_first = start.previous_batch_first;
    while let Some((header, payload)) = decode_frame(&bytes[offset..], checksums) {
        if !follows(previous_batch_first, &header, expected_lsn, start.base_lsn) {
            break;
        }
        frames.push((header, payload));
        previous_batch_first = Some(header.batch_first_lsn());
        offset += header.frame_bytes();
        expected_lsn += 1;
    }
    let tail = match written_end(bytes, offset) {
        None => Tail::Clean,
        Some(end) => match later_batch_frame(bytes, offset, end, expected_lsn, checksums) {
            None => Tail::Torn { offset, end },
            Some((later_offset, later_lsn)) => Tail::Damaged {
                offset,
                lsn: expected_lsn,
                later_offset,
                later_lsn,
            },
        },
    };
    Scan {
        frames,
        valid_end: offset,
        tail,
    }
}

/// Whether a checksummed frame `header` continues the sequence after a frame of the batch
/// starting at `previous_batch_first`.
fn follows(
    previous_batch_first: Option<u64>,
    header: &FrameHeader,
    expected_lsn: u64,
    base_lsn: u64,
) -> bool {
    if header.lsn != expected_lsn || header.batch_first_lsn() < base_lsn {
        return false;
    }
    // A frame that is not first in its batch continues the batch of the frame before it.
    header.batch_index == 0 || previous_batch_first == Some(header.batch_first_lsn())
}

/// Just past the last byte from `from` on that is not zero; `None` when all are zero.
pub fn written_end(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    // Whole words from the end first: a preallocated file ends in megabytes of zeros.
    let mut end = rest.len();
    while end >= 8 && rest[end - 8..end] == [0u8; 8] {
        end -= 8;
    }
    rest[..end]
        .iter()
        .rposition(|&byte| byte != 0)
        .map(|at| from + at + 1)
}

/// The first valid frame starting in `from..end` that belongs to a batch starting after
/// `damaged_lsn`, as (offset, LSN). A frame's LSN is not zero, so no frame starts at or after
/// `end`, the end of the bytes written. Only candidates whose LSN could fit in the rest of the
/// file are checksummed, so this is a linear scan of cheap comparisons.
fn later_batch_frame(
    file: &[u8],
    from: usize,
    end: usize,
    damaged_lsn: u64,
    checksums: bool,
) -> Option<(usize, u64)> {
    let frames_max = ((file.len() - from) / FRAME_HEADER_BYTES) as u64;
    let last_start = file.len().checked_sub(FRAME_HEADER_BYTES)?.min(end - 1);
    (from..=last_start).find_map(|offset| {
        let lsn = peek_lsn(&file[offset..])?;
        if lsn <= damaged_lsn || lsn > damaged_lsn.saturating_add(frames_max) {
            return None;
        }
        let (header, _) = decode_frame(&file[offset..], checksums)?;
        (header.batch_first_lsn() > damaged_lsn).then_some((offset, header.lsn))
    })
}
