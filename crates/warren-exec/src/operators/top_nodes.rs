//! `ORDER BY` node properties `LIMIT k` over a node scan, chosen from the columns
//! (`Plan::TopNodes`): the passing nodes come a batch of offsets at a time (`node_batches`),
//! each node's sort keys are read from the stored columns (through `try_value`, which reads a
//! delta's updates), and a heap of at most `skip + limit` keeps the nodes a stable sort would
//! put first, ordered as `TopN` orders rows (the keys, NULL largest, each key ascending or
//! descending, then arrival in scan order). A row (the node in its slot) is made only for a
//! node that enters the heap. For one INT64 key without NULLs, the raw values decide which
//! nodes are offered: none of a run whose best key (a SIMD pass) cannot beat the heap's last,
//! and of the others only those that beat it and are among the batch's own first `skip +
//! limit` (so a batch costs O(its rows) even when every node would enter, as in keys that
//! rise with the offsets under `DESC`).

use std::collections::BinaryHeap;
use std::sync::Arc;

use warren_common::value::{NodeValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_planner::expr::{Expr, PropertyColumns};
use warren_storage::NodeTable;

use super::node_batches::{columns_in, Batch, ScanFilter};
use super::order::{kept_rows, Ranked};
use super::{row_bytes, Operator, Row};
use crate::context::ExecContext;
use crate::eval::extremes::{extreme_kernel, Extreme};
use crate::eval::Evaluator;

pub struct TopNodes {
    tables: Vec<TableId>,
    slot: usize,
    scan: ScanFilter,
    keys: Vec<(PropertyColumns, bool)>,
    skip: Option<Expr>,
    limit: Expr,
    width: usize,
    output: Option<std::vec::IntoIter<Row>>,
}

impl TopNodes {
    pub fn new(
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
        keys: Vec<(PropertyColumns, bool)>,
        skip: Option<Expr>,
        limit: Expr,
        width: usize,
    ) -> Self {
        assert!(slot < width, "the node's slot is in the row");
        assert!(!keys.is_empty(), "an order needs a key");
        Self {
            tables,
            slot,
            scan: ScanFilter::new(slot, filter),
            keys,
            skip,
            limit,
            width,
            output: None,
        }
    }

    fn select(&self, ctx: &ExecContext) -> Result<Vec<Row>> {
        let Some((skip, kept)) = kept_rows(self.skip.as_ref(), &self.limit, ctx)? else {
            return Ok(Vec::new());
        };
        let descending: Arc<[bool]> = self.keys.iter().map(|(_, d)| *d).collect();
        let snapshot = ctx.snapshot();
        let evaluator = Evaluator::new(&snapshot, ctx);
        let mut kept_nodes = Kept {
            heap: BinaryHeap::new(),
            kept,
            descending,
            bar: None,
        };
        let mut arrival = 0u64;
        // A batch's raw keys that may enter, with their places in the batch.
        let mut candidates: Vec<(i64, u32)> = Vec::new();
        for &table_id in &self.tables {
            let table = snapshot.node_table(table_id);
            let properties = self.keys.iter().map(|(property, _)| Some(property));
            let columns = columns_in(table_id, table, properties)?;
            let raw = self.raw_int64_key(table, &columns);
            let keys_of = |node: u64| -> Result<Vec<Value>> {
                columns
                    .iter()
                    .map(|column| match column {
                        Some(column) => Ok(table.try_value(node, *column)?),
                        None => Ok(Value::Null),
                    })
                    .collect()
            };
            let mut rank = |batch: Batch<'_>| -> Result<()> {
                let first = arrival;
                arrival += batch.len() as u64;
                let node_at = |index: usize| match batch {
                    Batch::Run { start, .. } => start + index as u64,
                    Batch::Rows(rows) => rows[index],
                };
                let Some(values) = raw else {
                    for (index, node) in batch.rows().enumerate() {
                        let arrived = first + index as u64;
                        kept_nodes.offer(keys_of(node)?, arrived, ctx, || {
                            self.node_row(table_id, node)
                        })?;
                    }
                    return Ok(());
                };
                let descending = kept_nodes.descending[0];
                if let (Batch::Run { start, end }, Some(bar)) = (batch, kept_nodes.bar) {
                    // The run's best key first (a SIMD pass): once the heap is full, most runs
                    // hold no node that enters.
                    if !beats(
                        best_of(&values[start as usize..end as usize], descending),
                        bar,
                        descending,
                    ) {
                        return Ok(());
                    }
                }
                candidates.clear();
                for (index, node) in batch.rows().enumerate() {
                    let value = values[node as usize];
                    if kept_nodes
                        .bar
                        .is_none_or(|bar| beats(value, bar, descending))
                    {
                        candidates.push((value, index as u32));
                    }
                }
                // Only the batch's own first `kept` can enter: each of the others has `kept`
                // nodes of the batch sorted before it (a better key, or the same key earlier).
                if candidates.len() > kept_nodes.kept {
                    let order = |a: &(i64, u32), b: &(i64, u32)| {
                        let by_key = if descending {
                            b.0.cmp(&a.0)
                        } else {
                            a.0.cmp(&b.0)
                        };
                        by_key.then(a.1.cmp(&b.1))
                    };
                    candidates.select_nth_unstable_by(kept_nodes.kept - 1, order);
                    candidates.truncate(kept_nodes.kept);
                    candidates.sort_unstable_by_key(|&(_, index)| index);
                }
                for &(value, index) in candidates.iter() {
                    if kept_nodes
                        .bar
                        .is_some_and(|bar| !beats(value, bar, descending))
                    {
                        continue;
                    }
                    let node = node_at(index as usize);
                    let arrived = first + u64::from(index);
                    kept_nodes.offer(vec![Value::Int64(value)], arrived, ctx, || {
                        self.node_row(table_id, node)
                    })?;
                }
                Ok(())
            };
            self.scan
                .for_each_batch(table_id, table, &evaluator, self.width, ctx, &mut rank)?;
        }
        let heap = kept_nodes.heap;
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        Ok(heap
            .into_sorted_vec()
            .into_iter()
            .skip(skip)
            .map(|ranked| ranked.row)
            .collect())
    }

    /// The raw values of the only key, when it is a stored INT64 (or SERIAL) column without
    /// NULLs in a table without a delta (its values are then `Value::Int64` of these).
    fn raw_int64_key<'t>(
        &self,
        table: &'t NodeTable,
        columns: &[Option<usize>],
    ) -> Option<&'t [i64]> {
        let [Some(column)] = columns else {
            return None;
        };
        if table.has_delta() {
            return None;
        }
        let stored = table.column(*column);
        if stored.has_nulls() {
            return None;
        }
        stored.int64_values()
    }

    fn node_row(&self, table: TableId, node: u64) -> Row {
        let mut row = vec![Value::Null; self.width];
        row[self.slot] = Value::Node(NodeValue {
            id: InternalId::new(table, node),
            projection: None,
        });
        row
    }
}

/// The nodes kept so far: a heap of at most `kept`, its last (the first to go) on top.
struct Kept {
    heap: BinaryHeap<Ranked>,
    kept: usize,
    descending: Arc<[bool]>,
    /// The last node's key when the heap is full and that key is an INT64: an INT64 key
    /// arriving later enters only if it [`beats`] it. `None` while the heap has room or the
    /// last key is of another type (the full comparison decides).
    bar: Option<i64>,
}

impl Kept {
    /// Keeps the node with `keys` that arrived `arrival`-th if a stable sort puts it before
    /// the last kept one (or there is room); `row` makes its row.
    fn offer(
        &mut self,
        keys: Vec<Value>,
        arrival: u64,
        ctx: &ExecContext,
        row: impl FnOnce() -> Row,
    ) -> Result<()> {
        let mut ranked = Ranked {
            keys,
            descending: self.descending.clone(),
            arrival,
            row: Vec::new(),
        };
        let full = self.heap.len() == self.kept;
        if full && self.heap.peek().is_none_or(|last| ranked >= *last) {
            return Ok(());
        }
        ranked.row = row();
        if full {
            *self.heap.peek_mut().expect("a full heap has a last") = ranked;
        } else {
            ctx.memory.reserve(
                row_bytes(&ranked.row) + ranked.keys.len() as u64 * 32,
                "ORDER BY",
            )?;
            self.heap.push(ranked);
        }
        self.bar = match self.heap.peek() {
            Some(last) if self.heap.len() == self.kept => match last.keys[0] {
                Value::Int64(key) => Some(key),
                _ => None,
            },
            _ => None,
        };
        Ok(())
    }
}

/// The key of `values` (not empty) that sorts first.
fn best_of(values: &[i64], descending: bool) -> i64 {
    let extreme = if descending {
        Extreme::Greatest
    } else {
        Extreme::Least
    };
    extreme_kernel(extreme)(values)
}

/// Whether INT64 key `value` sorts strictly before `bar` (a tie loses: the node holding `bar`
/// arrived earlier).
fn beats(value: i64, bar: i64, descending: bool) -> bool {
    if descending {
        value > bar
    } else {
        value < bar
    }
}

impl Operator for TopNodes {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if self.output.is_none() {
            let rows = self.select(ctx)?;
            self.output = Some(rows.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}
