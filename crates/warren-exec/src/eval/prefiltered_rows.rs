//! The rows of a node table that pass a filter's prefilters: the skip loop over the first
//! prefilter's column (log 233), and the same loop on the query's threads for a large table,
//! in row order, when the prefilters alone decide the filter (logs 234 and 238).

use std::ops::Range;

use warren_common::Result;
use warren_storage::NodeTable;

use super::prefilter::{next_candidate, ResolvedPrefilter};
use crate::context::ExecContext;
use crate::recursive::morsels::for_each_morsel;

/// Rows of a table from which its prefiltered rows are found on the query's threads: 8 MB of
/// an INT64 column, a few milliseconds of one thread's scan, against the tens of microseconds
/// a parallel loop costs.
pub const PARALLEL_PREFILTER_ROWS_MIN: u32 = 1 << 20;
/// Rows per morsel of a parallel prefiltered scan.
const PREFILTER_MORSEL_ROWS: usize = 1 << 16;

/// Calls `each` with every live row of `rows` (offsets in the table) that passes the
/// prefilters `resolved`, in order. Rows failing the first prefilter are skipped a chunk at a
/// time, by the prefiltered column loop, instead of one check per row.
pub fn prefiltered_rows(
    data: &NodeTable,
    resolved: &[ResolvedPrefilter<'_>],
    rows: Range<u32>,
    mut each: impl FnMut(u32) -> Result<()>,
) -> Result<()> {
    let mut next = rows.start;
    while next < rows.end {
        match next_candidate(resolved, next as usize..rows.end as usize) {
            Ok(row) => next = row as u32,
            Err(chunk_end) => {
                next = chunk_end as u32;
                continue;
            }
        }
        let offset = next;
        next += 1;
        if data.is_deleted(u64::from(offset)) || !resolved.iter().all(|p| p.passes(offset as usize))
        {
            continue;
        }
        each(offset)?;
    }
    Ok(())
}

/// [`prefiltered_rows`] of `rows` as a list in row order, found in morsels on the query's
/// threads (the caller checked that the prefilters decide the filter: nothing is evaluated
/// per row).
pub fn prefiltered_rows_in_parallel(
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
