//! The preallocated space of a log file: the file is zero-filled (with written zeros, so its
//! blocks are allocated) ahead of its frames, so that a commit overwrites blocks that already
//! exist and its `fdatasync` flushes data only, with no file size or allocation to commit.
//! This module says how far ahead the file is filled, and writes the zeros.

use warren_common::Result;

use crate::io::{write_all_at, FileHandle};

/// The least a log file is filled to (header included): a fresh log's size.
pub const ALLOCATION_MIN_BYTES: u64 = 1 << 20;
/// The most one extension adds.
pub const EXTENSION_MAX_BYTES: u64 = 16 << 20;
/// The zeros written per `write_at` while filling.
const ZEROS_PER_WRITE: usize = 1 << 20;

/// The bytes to allocate for a log whose frames end at `used_bytes`: [`ALLOCATION_MIN_BYTES`]
/// when the frames fill at most half of it, else an extension's worth past the frames.
pub fn initial_allocation(used_bytes: u64) -> u64 {
    if used_bytes <= ALLOCATION_MIN_BYTES / 2 {
        ALLOCATION_MIN_BYTES
    } else {
        used_bytes + extension_bytes(used_bytes)
    }
}

/// How much an extension of a file of `allocated_bytes` adds: as much again (so a small log
/// stays small), between [`ALLOCATION_MIN_BYTES`] and [`EXTENSION_MAX_BYTES`].
pub fn extension_bytes(allocated_bytes: u64) -> u64 {
    allocated_bytes.clamp(ALLOCATION_MIN_BYTES, EXTENSION_MAX_BYTES)
}

/// The size to extend a file of `allocated_bytes` to once its frames end at `used_bytes`, or
/// `None` while at least half an extension of room is left.
pub fn extension_needed(used_bytes: u64, allocated_bytes: u64) -> Option<u64> {
    let extension = extension_bytes(allocated_bytes);
    let room = allocated_bytes.saturating_sub(used_bytes);
    (room < extension / 2).then(|| allocated_bytes.max(used_bytes) + extension)
}

/// Writes zeros over `from..to` of `file` (not synced: the caller syncs).
pub fn write_zeros(file: &dyn FileHandle, from: u64, to: u64) -> Result<()> {
    assert!(from <= to, "zeros are written over a range");
    let zeros = vec![0u8; ZEROS_PER_WRITE.min((to - from) as usize)];
    let mut at = from;
    while at < to {
        let count = zeros.len().min((to - at) as usize);
        write_all_at(file, at, &zeros[..count])?;
        at += count as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_fresh_log_is_one_minimum_allocation() {
        assert_eq!(initial_allocation(64), ALLOCATION_MIN_BYTES);
        assert_eq!(initial_allocation(3 * MIB), 6 * MIB);
        assert_eq!(initial_allocation(100 * MIB), 116 * MIB);
    }

    #[test]
    fn extensions_double_up_to_their_limit_and_wait_for_half_an_extension() {
        assert_eq!(extension_needed(0, MIB), None);
        assert_eq!(extension_needed(MIB / 2, MIB), None);
        assert_eq!(extension_needed(MIB / 2 + 1, MIB), Some(2 * MIB));
        assert_eq!(extension_needed(7 * MIB, 8 * MIB), Some(16 * MIB));
        assert_eq!(extension_needed(40 * MIB, 48 * MIB), None);
        assert_eq!(extension_needed(41 * MIB, 48 * MIB), Some(64 * MIB));
        // Frames written past the allocation (one batch larger than the room): fill past them.
        assert_eq!(extension_needed(5 * MIB, 4 * MIB), Some(9 * MIB));
    }
}
