//! The quantized (2-bit, 4-bit and int8) copies of stored `FLOAT[n]` blocks ([`Int8Block`]) that the
//! vector top-k scan filters rows with (`docs/VECTORS.md`, "Exact brute force through a
//! quantized copy"), one database's worth, shared by its connections.
//!
//! A copy answers for one stored block only, and a stored block is never written: a committed
//! change goes to the table's delta, and a checkpoint or `COPY` writes a new block. So a copy
//! is keyed by a weak handle on its block ([`WeakBytes`]): while the handle names a live block
//! the copy is that block's, and when the block is dropped (its last table version gone) the
//! entry is dropped at the next lookup. The cache never keeps a block alive.
//!
//! A copy is built the second time a query asks for the same block (the first query scans the
//! FLOAT block, so a one-off query never pays the build), on the query's threads. Copies are
//! held within a byte bound ([`DEFAULT_LIMIT_BYTES`], `Int8Block::bytes`: about 255 bytes a row at
//! n = 128): the
//! least recently used copies are dropped to make room, and a block whose copy alone exceeds
//! the bound gets none (its queries scan the FLOAT block).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use warren_storage::buffer::WeakBytes;
use warren_storage::column::Column;
use warren_vector::quantized::Int8Block;

/// The default bound on the bytes of all copies: 1 GiB, the copies of about 4.2 million
/// `FLOAT[128]` rows.
pub const DEFAULT_LIMIT_BYTES: usize = 1 << 30;

/// What the cache has done since the database opened (for tests and benchmarks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorCopyStats {
    /// Copies built.
    pub built: u64,
    /// Scans answered through a copy.
    pub used: u64,
    /// Copies of live blocks held now, and the bytes of every copy held (a copy of a dropped
    /// block is released at the next lookup).
    pub copies: usize,
    pub bytes: usize,
    /// Wall time of the last build, in microseconds.
    pub last_build_us: u64,
}

/// The int8 copies of one database's stored vector blocks.
pub struct VectorCopyCache {
    state: Mutex<State>,
}

impl std::fmt::Debug for VectorCopyCache {
    /// The figures only (a copy is megabytes of codes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCopyCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for VectorCopyCache {
    fn default() -> Self {
        Self::with_limit(DEFAULT_LIMIT_BYTES)
    }
}

struct State {
    limit_bytes: usize,
    entries: Vec<Entry>,
    /// Counts lookups; an entry's `last_used` is the count at its last use.
    clock: u64,
    built: u64,
    used: u64,
    last_build_us: u64,
}

/// A block seen by a scan, with its copy once built.
struct Entry {
    block: WeakBytes,
    copy: Option<Arc<Int8Block>>,
    last_used: u64,
}

impl VectorCopyCache {
    /// A cache holding at most `limit_bytes` of copies (0: none are built).
    pub fn with_limit(limit_bytes: usize) -> Self {
        Self {
            state: Mutex::new(State {
                limit_bytes,
                entries: Vec::new(),
                clock: 0,
                built: 0,
                used: 0,
                last_build_us: 0,
            }),
        }
    }

    /// Sets the bound, dropping the least recently used copies until the rest fit.
    pub fn set_limit(&self, limit_bytes: usize) {
        let mut state = self.lock();
        state.limit_bytes = limit_bytes;
        state.make_room(0);
    }

    pub fn stats(&self) -> VectorCopyStats {
        let state = self.lock();
        VectorCopyStats {
            built: state.built,
            used: state.used,
            copies: state
                .entries
                .iter()
                .filter(|e| e.copy.is_some() && e.block.is_alive())
                .count(),
            bytes: state.held_bytes(),
            last_build_us: state.last_build_us,
        }
    }

    /// The copy of `column`'s `FLOAT[n]` block (`block`, `dim` values a row) for a scan, when
    /// there is one or this is the block's second request (then it is built here on up to
    /// `threads` threads); `None` when the scan should read the FLOAT block.
    pub fn copy_for(
        &self,
        column: &Column,
        block: &[f32],
        dim: usize,
        threads: usize,
    ) -> Option<Arc<Int8Block>> {
        let handle = column.vector_block_handle()?;
        if block.is_empty() || copy_bytes(block.len() / dim, dim) > self.lock().limit_bytes {
            return None;
        }
        {
            let mut state = self.lock();
            state.entries.retain(|entry| entry.block.is_alive());
            state.clock += 1;
            let now = state.clock;
            match state
                .entries
                .iter_mut()
                .find(|entry| column.has_vector_block(&entry.block))
            {
                Some(entry) => {
                    entry.last_used = now;
                    if let Some(copy) = &entry.copy {
                        let copy = copy.clone();
                        state.used += 1;
                        return Some(copy);
                    }
                }
                None => {
                    state.entries.push(Entry {
                        block: handle,
                        copy: None,
                        last_used: now,
                    });
                    return None;
                }
            }
        }
        // The second request: build outside the lock (a concurrent request may build it too;
        // the first stored wins).
        let started = Instant::now();
        let built = Arc::new(Int8Block::build_parallel(block, dim, threads));
        let elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let mut state = self.lock();
        state.make_room(built.bytes());
        if state.held_bytes() + built.bytes() > state.limit_bytes {
            return None;
        }
        let entry = state
            .entries
            .iter_mut()
            .find(|entry| column.has_vector_block(&entry.block))?;
        let copy = entry.copy.get_or_insert_with(|| built.clone()).clone();
        if Arc::ptr_eq(&copy, &built) {
            state.built += 1;
            state.last_build_us = elapsed_us;
        }
        state.used += 1;
        Some(copy)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    fn held_bytes(&self) -> usize {
        self.entries
            .iter()
            .filter_map(|entry| entry.copy.as_ref())
            .map(|copy| copy.bytes())
            .sum()
    }

    /// Drops copies of dead blocks, then the least recently used copies, until `extra` more
    /// bytes fit within the bound (or no copy is left).
    fn make_room(&mut self, extra: usize) {
        self.entries.retain(|entry| entry.block.is_alive());
        while self.held_bytes() + extra > self.limit_bytes {
            let oldest = self
                .entries
                .iter_mut()
                .filter(|entry| entry.copy.is_some())
                .min_by_key(|entry| entry.last_used);
            match oldest {
                Some(entry) => entry.copy = None,
                None => return,
            }
        }
    }
}

/// The bytes of the copy of `rows` rows of `dim` values (codes, three factors a row, the mean).
fn copy_bytes(rows: usize, dim: usize) -> usize {
    rows.saturating_mul(dim + 12)
        .saturating_add(dim.saturating_mul(4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_common::types::LogicalType;
    use warren_common::value::Value;

    fn float_column(rows: usize, dim: usize, seed: u32) -> Column {
        let values: Vec<Value> = (0..rows)
            .map(|row| {
                let elements: Vec<Value> = (0..dim)
                    .map(|i| Value::Float(((row * dim + i) as f32 + seed as f32).sin()))
                    .collect();
                Value::List(elements.into())
            })
            .collect();
        let ty = LogicalType::Array(std::sync::Arc::new(LogicalType::Float), dim as u32);
        Column::from_values(ty, &values).expect("a FLOAT[n] column")
    }

    /// The copy of 100 rows of FLOAT[8]: int8 codes and four factors a row (no 4-bit codes
    /// below 16 values), and the mean.
    const COPY_BYTES: usize = 100 * (8 + 16) + 8 * 4;

    #[test]
    fn builds_on_the_second_request_and_drops_with_the_block() {
        let cache = VectorCopyCache::default();
        let column = float_column(100, 8, 1);
        let (block, dim) = column.vector_f32().expect("a FLOAT block");
        assert!(cache.copy_for(&column, block, dim, 2).is_none());
        let copy = cache.copy_for(&column, block, dim, 2).expect("built");
        assert_eq!(copy.rows(), 100);
        assert!(Arc::ptr_eq(
            &copy,
            &cache.copy_for(&column, block, dim, 1).expect("kept")
        ));
        let stats = cache.stats();
        assert_eq!((stats.built, stats.used, stats.copies), (1, 2, 1));
        assert_eq!(stats.bytes, COPY_BYTES);
        drop(column);
        cache.set_limit(DEFAULT_LIMIT_BYTES);
        assert_eq!(cache.stats().copies, 0, "dropped with its block");
    }

    #[test]
    fn keeps_within_its_bound() {
        let cache = VectorCopyCache::with_limit(2 * COPY_BYTES);
        let columns: Vec<Column> = (0..3).map(|seed| float_column(100, 8, seed)).collect();
        for column in columns.iter().chain(&columns) {
            let (block, dim) = column.vector_f32().expect("a FLOAT block");
            cache.copy_for(column, block, dim, 1);
            cache.copy_for(column, block, dim, 1);
            assert!(cache.stats().bytes <= 2 * COPY_BYTES);
        }
        assert_eq!(cache.stats().copies, 2);
        cache.set_limit(0);
        assert_eq!(cache.stats().copies, 0);
        let (block, dim) = columns[0].vector_f32().expect("a FLOAT block");
        assert!(cache.copy_for(&columns[0], block, dim, 1).is_none());
    }
}
