//! A node scan's filter split into prefilters and the rest ([`ScanFilter`], which `ScanNodes`
//! uses too), and the live nodes of a node table that pass it, handed out in batches of
//! offsets for operators that read columns instead of rows (`FoldColumns`, `TopNodes`): the
//! prefilters' cursor finds candidates as `ScanNodes` does (on the query's threads where
//! prefilters skip rows), the rest of the filter is decided per node on the INT64 arrays
//! where it compiles (`eval::column_expr`) and evaluated on one reused row otherwise, and
//! an unfiltered table is cut into runs of consecutive rows, a list only where a run holds a
//! deleted row. Batches come in offset order.

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_planner::expr::{Expr, PropertyColumns};
use warren_storage::NodeTable;

use crate::context::ExecContext;
use crate::eval::column_expr::{ColumnPredicate, BATCH_TRUE, BATCH_UNDECIDED};
use crate::eval::prefilter::{
    collect_prefilters, filter_decided, is_conjunction_of_prefilters, resolve_prefilters,
    IntPrefilter, ResolvedPrefilter,
};
use crate::eval::prefiltered_rows::PrefilteredCursor;
use crate::eval::Evaluator;
use crate::recursive::morsels::for_each_morsel;

/// Offsets in one batch at most.
pub const BATCH_ROWS: usize = 4096;

/// The rows of one batch: consecutive live rows, or a list of live rows in order.
#[derive(Clone, Copy, Debug)]
pub enum Batch<'a> {
    Run { start: u64, end: u64 },
    Rows(&'a [u64]),
}

impl<'a> Batch<'a> {
    pub fn len(self) -> usize {
        match self {
            Batch::Run { start, end } => (end - start) as usize,
            Batch::Rows(rows) => rows.len(),
        }
    }

    /// The batch's first `count` rows.
    pub fn first(self, count: usize) -> Batch<'a> {
        assert!(count <= self.len(), "at most the batch's rows");
        match self {
            Batch::Run { start, .. } => Batch::Run {
                start,
                end: start + count as u64,
            },
            Batch::Rows(rows) => Batch::Rows(&rows[..count]),
        }
    }

    pub fn rows(self) -> impl Iterator<Item = u64> + 'a {
        let (run, rows) = match self {
            Batch::Run { start, end } => (start..end, &[][..]),
            Batch::Rows(rows) => (0..0, rows),
        };
        run.chain(rows.iter().copied())
    }
}

/// The columns of `properties` in `table` (`None`: no property, or one the table lacks, NULL
/// in every row); without a delta each stored column is verified whole before an operator
/// reads its arrays (a table with a delta is read through `try_value`, which checks blocks).
pub fn columns_in<'p>(
    table_id: TableId,
    table: &NodeTable,
    properties: impl Iterator<Item = Option<&'p PropertyColumns>>,
) -> Result<Vec<Option<usize>>> {
    let columns: Vec<Option<usize>> = properties
        .map(|property| property.and_then(|p| p.column(table_id)))
        .collect();
    if !table.has_delta() {
        for &column in columns.iter().flatten() {
            table.column(column).try_verify()?;
        }
    }
    Ok(columns)
}

/// Rows of a window from which a compiled filter decides it on the query's threads.
const PARALLEL_DECIDE_ROWS_MIN: usize = 4 * BATCH_ROWS;

/// The compiled filter's answer (`column_expr`'s batch codes) for each node of `window`, a
/// batch at a time, on the query's threads for a window of at least
/// [`PARALLEL_DECIDE_ROWS_MIN`] nodes (the batches are independent).
fn decide_window(
    predicate: &ColumnPredicate,
    table: &NodeTable,
    window: &[u32],
    ctx: &ExecContext,
) -> Result<Vec<u8>> {
    let mut codes = Vec::with_capacity(window.len());
    let mut batch_codes = Vec::new();
    if window.len() < PARALLEL_DECIDE_ROWS_MIN || ctx.threads() < 2 {
        for chunk in window.chunks(BATCH_ROWS) {
            predicate.decide_batch(table, chunk, &mut batch_codes);
            codes.extend_from_slice(&batch_codes);
        }
        return Ok(codes);
    }
    let mut decided: Vec<(usize, Vec<u8>)> = Vec::new();
    for_each_morsel(
        window.len(),
        BATCH_ROWS,
        ctx.threads(),
        &ctx.workers,
        &ctx.interrupt,
        |range| {
            let mut out = Vec::new();
            predicate.decide_batch(table, &window[range.clone()], &mut out);
            Ok((range.start, out))
        },
        |morsel| decided.push(morsel),
    )?;
    // Morsels finish in any order.
    decided.sort_unstable_by_key(|(start, _)| *start);
    for (_, batch) in decided {
        codes.extend_from_slice(&batch);
    }
    assert_eq!(codes.len(), window.len(), "a code per node");
    Ok(codes)
}

/// Rows of a table without prefilters that one window of a compiled filter covers.
const DECIDED_WINDOW_ROWS: u64 = 1 << 18;

/// The live rows of `rows` (a window of `table`) that the compiled `predicate` passes or
/// cannot decide (`true`: the evaluator decides), in order: listed and decided in morsels on
/// the query's threads.
fn decided_candidates(
    predicate: &ColumnPredicate,
    table: &NodeTable,
    rows: std::ops::Range<u64>,
    ctx: &ExecContext,
) -> Result<Vec<(u32, bool)>> {
    let first = rows.start;
    let mut morsels: Vec<(u64, Vec<(u32, bool)>)> = Vec::new();
    for_each_morsel(
        (rows.end - rows.start) as usize,
        PARALLEL_DECIDE_ROWS_MIN,
        ctx.threads(),
        &ctx.workers,
        &ctx.interrupt,
        |range| {
            let (start, end) = (first + range.start as u64, first + range.end as u64);
            // A table with a compiled filter has no delta: its offsets fit `u32`.
            let nodes: Vec<u32> = (start..end)
                .filter(|&row| !table.is_deleted(row))
                .map(|row| u32::try_from(row).expect("a u32 offset"))
                .collect();
            let (mut found, mut codes) = (Vec::new(), Vec::new());
            for chunk in nodes.chunks(BATCH_ROWS) {
                predicate.decide_batch(table, chunk, &mut codes);
                for (&node, &code) in chunk.iter().zip(&codes) {
                    match code {
                        BATCH_TRUE => found.push((node, false)),
                        BATCH_UNDECIDED => found.push((node, true)),
                        _ => {}
                    }
                }
            }
            Ok((start, found))
        },
        |morsel| morsels.push(morsel),
    )?;
    // Morsels finish in any order.
    morsels.sort_unstable_by_key(|(start, _)| *start);
    Ok(morsels.into_iter().flat_map(|(_, found)| found).collect())
}

/// A compiled filter's answers for the rows `start..start + codes.len()` of one table. Each run
/// after the first of a table covers twice the rows of the one before, from [`BATCH_ROWS`] up
/// to [`DECIDED_WINDOW_ROWS`] (a scan stopped by a `LIMIT` decides little; a whole scan
/// decides in windows long enough for the query's threads, `decide_window`).
#[derive(Default)]
pub struct DecidedRun {
    table: Option<TableId>,
    start: u64,
    codes: Vec<u8>,
    rows: Vec<u32>,
    /// Rows the next run covers.
    window: u64,
}

impl DecidedRun {
    /// Whether `node` of `table` passes the compiled `predicate` (`None`: the evaluator
    /// decides), deciding the next run of rows from `node` on when `node` is past the run.
    pub fn of(
        &mut self,
        predicate: &ColumnPredicate,
        (id, table): (TableId, &NodeTable),
        node: u64,
        ctx: &ExecContext,
    ) -> Result<Option<bool>> {
        let inside = self.table == Some(id)
            && node >= self.start
            && node < self.start + self.codes.len() as u64;
        if !inside {
            self.window = if self.table == Some(id) {
                (self.window * 2).clamp(BATCH_ROWS as u64, DECIDED_WINDOW_ROWS)
            } else {
                BATCH_ROWS as u64
            };
            let end = (node + self.window).min(table.num_rows());
            self.rows.clear();
            // A table with a compiled filter has no delta, so its rows fit `u32` offsets
            // (`NODE_TABLE_ROWS_MAX`).
            self.rows
                .extend((node..end).map(|row| u32::try_from(row).expect("a u32 offset")));
            self.codes = decide_window(predicate, table, &self.rows, ctx)?;
            (self.table, self.start) = (Some(id), node);
        }
        Ok(match self.codes[(node - self.start) as usize] {
            BATCH_TRUE => Some(true),
            BATCH_UNDECIDED => None,
            _ => Some(false),
        })
    }

    /// The first row from `row` on that the run does not answer as failing: `row` itself when
    /// the run does not cover it, the run's end when every row left in it fails.
    pub fn next_candidate(&self, row: u64) -> u64 {
        let end = self.start + self.codes.len() as u64;
        if row < self.start || row >= end {
            return row;
        }
        let left = &self.codes[(row - self.start) as usize..];
        let skipped = left
            .iter()
            .position(|&code| code == BATCH_TRUE || code == BATCH_UNDECIDED)
            .unwrap_or(left.len());
        row + skipped as u64
    }
}

/// A scan's filter over the node in `slot`, split as `ScanNodes` splits it: conjuncts tested on
/// raw INT64 columns, and whether they are the whole filter.
pub struct ScanFilter {
    slot: usize,
    filter: Option<Expr>,
    prefilters: Vec<IntPrefilter>,
    conjunction: bool,
}

impl ScanFilter {
    pub fn new(slot: usize, filter: Option<Expr>) -> Self {
        let mut prefilters = Vec::new();
        let mut conjunction = false;
        if let Some(filter) = &filter {
            collect_prefilters(filter, slot, &mut prefilters);
            conjunction = is_conjunction_of_prefilters(filter, slot);
        }
        Self {
            slot,
            filter,
            prefilters,
            conjunction,
        }
    }

    /// The prefilters resolved on `table`'s columns, and what is left of the filter to evaluate
    /// per node (`None` when the prefilters decide it, or there is no filter). A table with a
    /// delta resolves none: its rows get the whole filter.
    pub fn resolve<'t>(
        &self,
        table_id: TableId,
        table: &'t NodeTable,
    ) -> Result<(Vec<ResolvedPrefilter<'t>>, Option<&Expr>)> {
        let prefilters = resolve_prefilters(&self.prefilters, table_id, table)?;
        let decided = filter_decided(self.conjunction, self.prefilters.len(), &prefilters);
        let filter = self.filter.as_ref().filter(|_| !decided);
        Ok((prefilters, filter))
    }

    /// Calls `each` with the passing live nodes of `table`, a batch at a time, in order; the
    /// filter is evaluated on rows of `width` slots with the node in the scan's slot.
    pub fn for_each_batch(
        &self,
        table_id: TableId,
        table: &NodeTable,
        evaluator: &Evaluator<'_>,
        width: usize,
        ctx: &ExecContext,
        each: &mut dyn FnMut(Batch<'_>) -> Result<()>,
    ) -> Result<()> {
        table.try_verify_deleted()?;
        let (prefilters, filter) = self.resolve(table_id, table)?;
        let mut batch: Vec<u64> = Vec::with_capacity(BATCH_ROWS);
        if filter.is_none() && prefilters.is_empty() && !table.has_delta() {
            // Every live row: runs of consecutive rows where none is deleted.
            let (rows, deleted) = (table.num_rows(), table.deleted());
            let mut start = 0;
            while start < rows {
                let end = (start + BATCH_ROWS as u64).min(rows);
                if deleted.is_none_or(|bits| bits.none_in(start as usize..end as usize)) {
                    each(Batch::Run { start, end })?;
                } else {
                    batch.clear();
                    batch.extend((start..end).filter(|&row| !table.is_deleted(row)));
                    each(Batch::Rows(&batch))?;
                }
                ctx.interrupt.check()?;
                start = end;
            }
            return Ok(());
        }
        let mut row = vec![Value::Null; width];
        // The filter on the INT64 arrays where it compiles (the evaluator decides the rest).
        let compiled = match filter {
            Some(filter) => ColumnPredicate::compile(filter, self.slot, table_id, table)?,
            None => None,
        };
        // The evaluator's test of `filter` at `node`, on the reused row.
        let mut evaluate = |filter: &Expr, node: u64| -> Result<bool> {
            ctx.tick()?;
            row[self.slot] = Value::Node(NodeValue {
                id: InternalId::new(table_id, node),
                projection: None,
            });
            evaluator.test(filter, &row)
        };
        if let (Some(filter), Some(predicate), true) = (filter, &compiled, prefilters.is_empty()) {
            // Nothing to skip by prefilters: windows of rows listed and decided together on the
            // query's threads, the evaluator deciding only what the compiled filter cannot.
            let rows = table.num_rows();
            let mut start = 0;
            while start < rows {
                let end = (start + DECIDED_WINDOW_ROWS).min(rows);
                let candidates = decided_candidates(predicate, table, start..end, ctx)?;
                for chunk in candidates.chunks(BATCH_ROWS) {
                    batch.clear();
                    for &(node, undecided) in chunk {
                        let node = u64::from(node);
                        if !undecided || evaluate(filter, node)? {
                            batch.push(node);
                        }
                    }
                    if !batch.is_empty() {
                        each(Batch::Rows(&batch))?;
                    }
                    ctx.interrupt.check()?;
                }
                ctx.interrupt.check()?;
                start = end;
            }
            return Ok(());
        }
        let mut cursor = PrefilteredCursor::default();
        // Windows found on the query's threads pay for their lists' fresh pages: worth it
        // where prefilters skip most rows (log 247).
        let parallel = filter.is_none() && !prefilters.is_empty();
        loop {
            // A node table's offsets fit in u32 (`NODE_TABLE_ROWS_MAX`), as the cursor needs.
            let window = cursor.next_rows(table, &prefilters, parallel, ctx)?;
            if window.is_empty() {
                return Ok(());
            }
            let decided = match &compiled {
                Some(predicate) => Some(decide_window(predicate, table, window, ctx)?),
                None => None,
            };
            for (index, chunk) in window.chunks(BATCH_ROWS).enumerate() {
                batch.clear();
                match filter {
                    None => batch.extend(chunk.iter().map(|&node| u64::from(node))),
                    Some(filter) => {
                        for (i, &node) in chunk.iter().enumerate() {
                            let node = u64::from(node);
                            // Undecided unless the compiled filter decided it.
                            let code = decided
                                .as_ref()
                                .map_or(BATCH_UNDECIDED, |codes| codes[index * BATCH_ROWS + i]);
                            let passes = match code {
                                BATCH_TRUE => true,
                                BATCH_UNDECIDED => evaluate(filter, node)?,
                                _ => false,
                            };
                            if passes {
                                batch.push(node);
                            }
                        }
                    }
                }
                each(Batch::Rows(&batch))?;
                ctx.interrupt.check()?;
            }
        }
    }
}
