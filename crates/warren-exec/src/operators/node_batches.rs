//! A node scan's filter split into prefilters and the rest ([`ScanFilter`], which `ScanNodes`
//! uses too), and the live nodes of a node table that pass it, handed out in batches of
//! offsets for operators that read columns instead of rows (`FoldColumns`, `TopNodes`): the
//! prefilters' cursor finds candidates as `ScanNodes` does (on the query's threads where
//! prefilters skip rows), the rest of the filter is evaluated per node on one reused row, and
//! an unfiltered table is cut into runs of consecutive rows, a list only where a run holds a
//! deleted row. Batches come in offset order.

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_planner::expr::{Expr, PropertyColumns};
use warren_storage::NodeTable;

use crate::context::ExecContext;
use crate::eval::prefilter::{
    collect_prefilters, filter_decided, is_conjunction_of_prefilters, resolve_prefilters,
    IntPrefilter, ResolvedPrefilter,
};
use crate::eval::prefiltered_rows::PrefilteredCursor;
use crate::eval::Evaluator;

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
            for chunk in window.chunks(BATCH_ROWS) {
                batch.clear();
                match filter {
                    None => batch.extend(chunk.iter().map(|&node| u64::from(node))),
                    Some(filter) => {
                        for &node in chunk {
                            ctx.tick()?;
                            row[self.slot] = Value::Node(NodeValue {
                                id: InternalId::new(table_id, u64::from(node)),
                                projection: None,
                            });
                            if evaluator.test(filter, &row)? {
                                batch.push(u64::from(node));
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
