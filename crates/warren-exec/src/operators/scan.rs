//! Node scans: every live node of some tables, or the node with a given primary key, each
//! bound into a slot of the input row and filtered before a row is produced.

use std::sync::Arc;

use warren_common::value::{NodeValue, Value};
use warren_common::{Result, TableId};
use warren_planner::expr::Expr;
use warren_storage::Snapshot;

use super::node_batches::{DecidedRun, ScanFilter};
use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;
use crate::eval::column_expr::ColumnPredicate;
use crate::eval::prefiltered_rows::PrefilteredCursor;
use crate::eval::Evaluator;

pub struct ScanNodes {
    input: BoxedOperator,
    tables: Vec<TableId>,
    slot: usize,
    /// The filter, with its conjuncts checked on raw INT64 columns before a row is built.
    filter: ScanFilter,
    /// The input row being expanded, the snapshot, the table index and the next offset.
    current: Option<(Row, Arc<Snapshot>, usize, u64)>,
    /// Where the scan of the current table is, when its prefilters resolved.
    cursor: PrefilteredCursor,
    /// A row a consumer gave back (`recycle`), whose buffer the next row reuses.
    spare: Option<Row>,
    /// The filter compiled for a table of the current input row (`eval::column_expr`):
    /// the table and the predicate, if the filter compiles there.
    compiled: Option<(TableId, Option<ColumnPredicate>)>,
    /// The compiled filter's answers for a run of consecutive rows.
    decided: DecidedRun,
}

impl ScanNodes {
    pub fn new(
        input: BoxedOperator,
        tables: Vec<TableId>,
        slot: usize,
        filter: Option<Expr>,
    ) -> Self {
        Self {
            input,
            tables,
            slot,
            filter: ScanFilter::new(slot, filter),
            current: None,
            cursor: PrefilteredCursor::default(),
            spare: None,
            compiled: None,
            decided: DecidedRun::default(),
        }
    }
}

impl Operator for ScanNodes {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some((row, snapshot, table_index, offset)) = &mut self.current {
                while *table_index < self.tables.len() {
                    let table_id = self.tables[*table_index];
                    let table = snapshot.node_table(table_id);
                    table.try_verify_deleted()?;
                    let evaluator = Evaluator::new(snapshot, ctx);
                    // Prefilters that decide the filter leave nothing to evaluate.
                    let (prefilters, filter) = self.filter.resolve(table_id, table)?;
                    // Resolved prefilters find the rows through the cursor; else (a delta,
                    // no prefilter, or past `u32` rows) each row is tested here.
                    let windowed =
                        !prefilters.is_empty() && table.num_rows() <= u64::from(u32::MAX);
                    if let Some(filter) = filter {
                        if self.compiled.as_ref().is_none_or(|(id, _)| *id != table_id) {
                            let compiled =
                                ColumnPredicate::compile(filter, self.slot, table_id, table)?;
                            self.compiled = Some((table_id, compiled));
                        }
                    }
                    let compiled = self.compiled.as_ref().and_then(|(_, p)| p.as_ref());
                    loop {
                        let node = if windowed {
                            let decided = filter.is_none();
                            match self.cursor.next_row(table, &prefilters, decided, ctx)? {
                                Some(node) => node,
                                None => break,
                            }
                        } else {
                            if *offset >= table.num_rows() {
                                break;
                            }
                            let node = *offset;
                            *offset += 1;
                            if table.is_deleted(node)
                                || !prefilters.iter().all(|p| p.passes(node as usize))
                            {
                                ctx.tick()?;
                                continue;
                            }
                            node
                        };
                        ctx.tick()?;
                        let decided = match compiled {
                            // Consecutive rows are decided a batch at a time.
                            Some(predicate) if !windowed => {
                                self.decided.of(predicate, (table_id, table), node, ctx)?
                            }
                            Some(predicate) => predicate.passes(table, node),
                            None => None,
                        };
                        if decided == Some(false) {
                            if !windowed && compiled.is_some() {
                                // The run's failing rows after this one are skipped at once.
                                *offset = self.decided.next_candidate(*offset);
                            }
                            continue;
                        }
                        row[self.slot] = Value::Node(NodeValue {
                            id: warren_common::InternalId::new(table_id, node),
                            projection: None,
                        });
                        if let (None, Some(filter)) = (decided, filter) {
                            if !evaluator.test(filter, row)? {
                                continue;
                            }
                        }
                        return Ok(Some(match self.spare.take() {
                            Some(mut spare) => {
                                spare.clone_from(row);
                                spare
                            }
                            None => row.clone(),
                        }));
                    }
                    self.cursor.restart();
                    *table_index += 1;
                    *offset = 0;
                }
                self.current = None;
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            self.current = Some((row, ctx.snapshot(), 0, 0));
            self.cursor.restart();
            // A new input row may see another snapshot: compile again.
            self.compiled = None;
            self.decided = DecidedRun::default();
        }
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }
}

pub struct LookupNode {
    input: BoxedOperator,
    tables: Vec<TableId>,
    key: Expr,
    slot: usize,
    filter: Option<Expr>,
    pending: Vec<Row>,
}

impl LookupNode {
    pub fn new(
        input: BoxedOperator,
        tables: Vec<TableId>,
        key: Expr,
        slot: usize,
        filter: Option<Expr>,
    ) -> Self {
        Self {
            input,
            tables,
            key,
            slot,
            filter,
            pending: Vec::new(),
        }
    }
}

impl Operator for LookupNode {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some(row) = self.pending.pop() {
                return Ok(Some(row));
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let snapshot = ctx.snapshot();
            let evaluator = Evaluator::new(&snapshot, ctx);
            let key = evaluator.eval(&self.key, &row)?;
            if key.is_null() {
                continue;
            }
            for &table_id in self.tables.iter().rev() {
                let table = snapshot.node_table(table_id);
                let key_type = snapshot.node_schema(table_id).primary_key().ty.clone();
                let Ok(key) = warren_common::cast::cast_value(&key, &key_type) else {
                    continue;
                };
                let Some(offset) = table.try_lookup(&key)? else {
                    continue;
                };
                let mut out = row.clone();
                out[self.slot] = Value::Node(NodeValue {
                    id: warren_common::InternalId::new(table_id, u64::from(offset)),
                    projection: None,
                });
                if let Some(filter) = &self.filter {
                    if !evaluator.test(filter, &out)? {
                        continue;
                    }
                }
                self.pending.push(out);
            }
        }
    }
}
