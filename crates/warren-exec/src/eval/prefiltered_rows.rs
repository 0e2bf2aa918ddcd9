//! The rows of a node table that pass a filter's prefilters, handed out by
//! [`PrefilteredCursor`] a window at a time to every filtered scan (`ScanNodes`, the columnar
//! scan, the recursive join's node masks): found a chunk of rows at a time, each prefilter
//! ANDing its pass bits into the chunk's words (log 240), and on the query's threads for a
//! large table, in row order, when the prefilters alone decide the filter (logs 234, 238,
//! 239).

use std::ops::Range;

use warren_common::Result;
use warren_storage::NodeTable;

use super::prefilter::ResolvedPrefilter;
use crate::context::ExecContext;
use crate::recursive::morsels::for_each_morsel;

/// Rows of a table from which its prefiltered rows are found on the query's threads: 8 MB of
/// an INT64 column, a few milliseconds of one thread's scan, against the tens of microseconds
/// a parallel loop costs.
const PARALLEL_PREFILTER_ROWS_MIN: u32 = 1 << 20;
/// Rows per morsel of a parallel prefiltered scan.
const PREFILTER_MORSEL_ROWS: usize = 1 << 16;
/// Rows whose pass bits the prefilters compute together (a multiple of 64).
const PASS_CHUNK_ROWS: usize = 1024;

/// Calls `each` with every live row of `rows` (offsets in the table) that passes the
/// prefilters `resolved`, in order: per chunk of `PASS_CHUNK_ROWS` rows (aligned to 64
/// rows), every prefilter ANDs its pass bits into the chunk's words, then the rows whose bit
/// is left are tested for deletion. Without prefilters, every live row.
fn prefiltered_rows(
    data: &NodeTable,
    resolved: &[ResolvedPrefilter<'_>],
    rows: Range<u32>,
    mut each: impl FnMut(u32) -> Result<()>,
) -> Result<()> {
    let (first, end) = (rows.start as usize, rows.end as usize);
    let mut words = [0u64; PASS_CHUNK_ROWS / 64];
    let mut start = first - first % 64;
    while start < end {
        let chunk_end = (start + PASS_CHUNK_ROWS).min(end);
        let words = &mut words[..(chunk_end - start).div_ceil(64)];
        words.fill(u64::MAX);
        if start < first {
            words[0] = u64::MAX << (first - start);
        }
        for prefilter in resolved {
            prefilter.and_pass_bits(start..chunk_end, words);
        }
        for (index, &word) in words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let row = start + index * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if row >= chunk_end {
                    break;
                }
                if !data.is_deleted(row as u64) {
                    each(row as u32)?;
                }
            }
        }
        start = chunk_end;
    }
    Ok(())
}

/// [`prefiltered_rows`] of `rows` as a list in row order, found in morsels on the query's
/// threads (the caller checked that the prefilters decide the filter: nothing is evaluated
/// per row).
fn prefiltered_rows_in_parallel(
    data: &NodeTable,
    resolved: &[ResolvedPrefilter<'_>],
    rows: Range<u32>,
    ctx: &ExecContext,
) -> Result<Vec<u32>> {
    let first = rows.start;
    let mut morsels: Vec<(u32, Vec<u32>)> = Vec::new();
    for_each_morsel(
        rows.len(),
        PREFILTER_MORSEL_ROWS,
        ctx.threads(),
        &ctx.workers,
        &ctx.interrupt,
        |range| {
            let range = first + range.start as u32..first + range.end as u32;
            let mut found = Vec::new();
            prefiltered_rows(data, resolved, range.clone(), |offset| {
                found.push(offset);
                Ok(())
            })?;
            Ok((range.start, found))
        },
        |morsel| morsels.push(morsel),
    )?;
    // Morsels finish in any order; each one's rows are in order.
    morsels.sort_unstable_by_key(|(start, _)| *start);
    let mut found = Vec::with_capacity(morsels.iter().map(|(_, rows)| rows.len()).sum());
    for (_, rows) in morsels {
        found.extend_from_slice(&rows);
    }
    debug_assert!(found.windows(2).all(|pair| pair[0] < pair[1]));
    Ok(found)
}

/// Rows a scan on one thread looks at per window (the rows passing are held until returned).
const SEQUENTIAL_WINDOW_ROWS: u64 = 1 << 16;
/// Rows a scan on the query's threads looks at per window: at most 4 MiB of offsets held.
const PARALLEL_WINDOW_ROWS: u64 = 1 << 20;

/// A scan's position in one table's rows that pass its prefilters, found a window at a time
/// (so a `LIMIT` stops after one window): on the query's threads for a table of at least
/// [`PARALLEL_PREFILTER_ROWS_MIN`] rows whose prefilters decide the filter, else on the calling
/// thread. [`PrefilteredCursor::restart`] before another table, or the same one again.
#[derive(Debug, Default)]
pub struct PrefilteredCursor {
    /// The passing rows of the last window, in order.
    found: Vec<u32>,
    /// The next of `found` to return.
    next: usize,
    /// The first row no window has looked at yet.
    scanned: u64,
}

impl PrefilteredCursor {
    /// Back to the first row (of the same or another table).
    pub fn restart(&mut self) {
        self.found.clear();
        self.next = 0;
        self.scanned = 0;
    }

    /// The next live row of `data` that passes `resolved`, or `None` at the table's end.
    /// `decided`: the prefilters alone decide the scan's filter (no row is evaluated), so a
    /// large table's windows may be found on the query's threads. The table's offsets fit in
    /// `u32` (the caller checked).
    pub fn next_row(
        &mut self,
        data: &NodeTable,
        resolved: &[ResolvedPrefilter<'_>],
        decided: bool,
        ctx: &ExecContext,
    ) -> Result<Option<u64>> {
        if self.next == self.found.len() && !self.fill(data, resolved, decided, ctx)? {
            return Ok(None);
        }
        let row = self.found[self.next];
        self.next += 1;
        Ok(Some(u64::from(row)))
    }

    /// The rows [`PrefilteredCursor::next_row`] would return next, as many as the current
    /// window holds (at least one), all taken at once; empty at the table's end.
    pub fn next_rows(
        &mut self,
        data: &NodeTable,
        resolved: &[ResolvedPrefilter<'_>],
        decided: bool,
        ctx: &ExecContext,
    ) -> Result<&[u32]> {
        if self.next == self.found.len() && !self.fill(data, resolved, decided, ctx)? {
            return Ok(&[]);
        }
        let first = std::mem::replace(&mut self.next, self.found.len());
        Ok(&self.found[first..])
    }

    /// Finds the passing rows of the next windows until one has some; false at the table's
    /// end.
    fn fill(
        &mut self,
        data: &NodeTable,
        resolved: &[ResolvedPrefilter<'_>],
        decided: bool,
        ctx: &ExecContext,
    ) -> Result<bool> {
        let rows = data.num_rows();
        assert!(rows <= u64::from(u32::MAX), "row offsets fit in u32");
        loop {
            if self.next < self.found.len() {
                return Ok(true);
            }
            if self.scanned >= rows {
                return Ok(false);
            }
            ctx.interrupt.check()?;
            let parallel =
                decided && ctx.threads() > 1 && rows >= u64::from(PARALLEL_PREFILTER_ROWS_MIN);
            let window = if parallel {
                PARALLEL_WINDOW_ROWS
            } else {
                SEQUENTIAL_WINDOW_ROWS
            };
            let end = (self.scanned + window).min(rows);
            let range = self.scanned as u32..end as u32;
            if parallel {
                self.found = prefiltered_rows_in_parallel(data, resolved, range, ctx)?;
            } else {
                let found = &mut self.found;
                found.clear();
                prefiltered_rows(data, resolved, range, |row| {
                    found.push(row);
                    Ok(())
                })?;
            }
            self.next = 0;
            self.scanned = end;
        }
    }
}
