//! Runs a [`ColumnarPlan`]: walks node offsets (and each node's CSR entries) into id vectors,
//! a batch at a time, then gathers every output column for the batch.

use std::ops::Range;

use warren_common::column_batch::{ColumnBatch, ColumnVector, VectorBuilder};
use warren_common::value::{NodeValue, RelValue, Value};
use warren_common::{InternalId, Result, TableId};
use warren_storage::Snapshot;

use super::gather::gather_property;
use super::{Bound, ColumnarPlan, ExpandSpec, Output};
use crate::context::ExecContext;
use crate::eval::column_expr::ColumnPredicate;
use crate::eval::prefilter::{
    collect_prefilters, filter_decided, is_conjunction_of_prefilters, resolve_prefilters,
    IntPrefilter, ResolvedPrefilter,
};
use crate::eval::prefiltered_rows::PrefilteredCursor;
use crate::eval::Evaluator;
use crate::operators::node_batches::DecidedRun;
use warren_planner::expr::{BinaryOp, Expr};
use warren_planner::plan::Step;

/// Batches smaller than this gather their columns on one thread.
const PARALLEL_GATHER_ROWS_MIN: usize = 16_384;

/// The ids of a batch's rows. Rows `[previous run's end, run.end)` share a source table and
/// a step.
#[derive(Default)]
struct Ids {
    source: Vec<u64>,
    rel: Vec<u64>,
    target: Vec<u64>,
    runs: Vec<Run>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Run {
    end: usize,
    source_table: TableId,
    step: usize,
}

impl Ids {
    fn len(&self) -> usize {
        self.source.len()
    }

    /// Closes the rows pushed since the last run into a run of `source_table` and `step`.
    fn close_run(&mut self, source_table: TableId, step: usize) {
        let end = self.len();
        match self.runs.last_mut() {
            Some(last) if last.source_table == source_table && last.step == step => last.end = end,
            Some(last) if last.end == end => {}
            _ => self.runs.push(Run {
                end,
                source_table,
                step,
            }),
        }
    }
}

/// Where the entries of the node being expanded are read from.
enum Entries {
    /// A range of the (delta-free) stored CSR.
    Stored(Range<usize>),
    /// The node's live entries read from the segment and the delta (in rel order).
    Merged(Vec<(u32, u32)>, usize),
}

/// The node being expanded: its table, offset, and position in its steps and entries.
struct Expanding {
    table: TableId,
    node: u64,
    step: usize,
    entries: Option<Entries>,
}

pub struct ColumnarScan {
    plan: ColumnarPlan,
    prefilters: Vec<IntPrefilter>,
    /// Whether the source filters are exactly the conjunction of `prefilters`.
    conjunction: bool,
    /// Where the scan of the current table is, when its prefilters resolved (`next_node` then
    /// stays at the table's start until the cursor ends).
    cursor: PrefilteredCursor,
    table_index: usize,
    next_node: u64,
    expanding: Option<Expanding>,
    /// The row the filters read (NULL except for the bound variables).
    scratch: Vec<Value>,
    /// Batches made in parallel and not handed out yet, in row order.
    ready: std::collections::VecDeque<ColumnBatch>,
    /// Whether the stored tables the scan reads have been verified (on its first batch).
    verified: bool,
    /// The source filters' conjunction (`None` without filters), and, for the table being
    /// scanned, that conjunction compiled on its INT64 arrays where it compiles
    /// (`eval::column_expr`), with its answers for a run of rows.
    conjunction_expr: Option<Expr>,
    compiled: Option<(TableId, Option<ColumnPredicate>)>,
    decided: DecidedRun,
}

impl ColumnarScan {
    pub fn new(plan: ColumnarPlan) -> Self {
        let mut prefilters = Vec::new();
        for filter in &plan.source_filters {
            collect_prefilters(filter, plan.source_slot, &mut prefilters);
        }
        let conjunction = plan
            .source_filters
            .iter()
            .all(|filter| is_conjunction_of_prefilters(filter, plan.source_slot));
        let scratch = vec![Value::Null; plan.width];
        let conjunction_expr = plan
            .source_filters
            .iter()
            .cloned()
            .reduce(|all, filter| Expr::Binary(BinaryOp::And, Box::new(all), Box::new(filter)));
        Self {
            plan,
            prefilters,
            conjunction,
            cursor: PrefilteredCursor::default(),
            table_index: 0,
            next_node: 0,
            expanding: None,
            scratch,
            ready: std::collections::VecDeque::new(),
            verified: false,
            conjunction_expr,
            compiled: None,
            decided: DecidedRun::default(),
        }
    }

    /// Verifies every stored block of what the scan reads whole arrays of (the scanned tables'
    /// deletion bitmaps, the expanded rel tables' CSRs, the gathered property columns): a
    /// damaged block is a `corrupt database` error before any row is read. Filters read
    /// values one by one, verifying their blocks as they go.
    fn verify_stored(&self, snapshot: &Snapshot) -> Result<()> {
        let no_pairs = Vec::new();
        let (pairs, targets) = match &self.plan.expand {
            Some(expand) => (
                expand.steps.iter().map(|s| s.pair).collect(),
                expand.target_tables.clone(),
            ),
            None => (no_pairs, Vec::new()),
        };
        for &table in self.plan.tables.iter().chain(&targets) {
            snapshot.node_table(table).try_verify_deleted()?;
        }
        for &pair in &pairs {
            snapshot.rel_table(pair).try_verify_adjacency()?;
        }
        for output in &self.plan.outputs {
            let Output::Property { of, property, .. } = output else {
                continue;
            };
            let tables = match of {
                Bound::Source => &self.plan.tables,
                Bound::Target => &targets,
                Bound::Rel => &pairs,
            };
            for &table in tables {
                let Some(column) = property.column(table) else {
                    continue;
                };
                if *of == Bound::Rel {
                    snapshot.rel_table(table).columns()[column].try_verify()?;
                } else {
                    snapshot.node_table(table).column(column).try_verify()?;
                }
            }
        }
        Ok(())
    }

    /// The next batch of at most `rows_max` rows (at least one), or `None` at the end.
    pub fn next_batch(
        &mut self,
        ctx: &ExecContext,
        rows_max: usize,
    ) -> Result<Option<ColumnBatch>> {
        assert!(rows_max > 0, "a batch holds at least one row");
        if let Some(batch) = self.ready.pop_front() {
            return Ok(Some(batch));
        }
        ctx.interrupt.check()?;
        let snapshot = ctx.snapshot();
        if !self.verified {
            self.verify_stored(&snapshot)?;
            self.verified = true;
        }
        if let Some(batch) = self.parallel_batches(&snapshot, ctx.settings.threads, rows_max) {
            return Ok(Some(batch));
        }
        let mut ids = Ids::default();
        self.fill(&snapshot, ctx, rows_max, &mut ids)?;
        if ids.len() == 0 {
            return Ok(None);
        }
        let columns = self.gather_all(&snapshot, &ids, ctx.settings.threads);
        Ok(Some(ColumnBatch::new(columns, ids.len())))
    }

    /// Pushes the ids of up to `rows_max` rows.
    fn fill(
        &mut self,
        snapshot: &Snapshot,
        ctx: &ExecContext,
        rows_max: usize,
        ids: &mut Ids,
    ) -> Result<()> {
        // The scan's prefilters resolved against the table being scanned.
        let mut resolved: Option<(TableId, Vec<ResolvedPrefilter<'_>>)> = None;
        while ids.len() < rows_max {
            if self.expanding.is_some() {
                self.expand(snapshot, ctx, rows_max, ids)?;
                continue;
            }
            let Some(&table_id) = self.plan.tables.get(self.table_index) else {
                return Ok(());
            };
            let table = snapshot.node_table(table_id);
            if resolved.as_ref().is_none_or(|(t, _)| *t != table_id) {
                let prefilters = resolve_prefilters(&self.prefilters, table_id, table)?;
                resolved = Some((table_id, prefilters));
            }
            let prefilters = &resolved.as_ref().expect("just resolved").1;
            let decided = filter_decided(self.conjunction, self.prefilters.len(), prefilters);
            let Some(node) = self.next_live_row(table, prefilters, decided, ctx)? else {
                self.table_index += 1;
                self.next_node = 0;
                continue;
            };
            if !decided && !self.source_passes(snapshot, ctx, table_id, node)? {
                continue;
            }
            if self.plan.expand.is_some() {
                self.expanding = Some(Expanding {
                    table: table_id,
                    node,
                    step: 0,
                    entries: None,
                });
            } else {
                ids.source.push(node);
                ids.close_run(table_id, 0);
            }
        }
        Ok(())
    }

    /// The next live row of `table` that passes the prefilters `resolved`, or `None` at the
    /// table's end: through the prefilters' cursor when they resolved (windows of rows found
    /// together, on the query's threads when they decide the filters: `decided`), else row by
    /// row from `next_node`.
    fn next_live_row(
        &mut self,
        table: &warren_storage::NodeTable,
        resolved: &[ResolvedPrefilter<'_>],
        decided: bool,
        ctx: &ExecContext,
    ) -> Result<Option<u64>> {
        let rows = table.num_rows();
        if !resolved.is_empty() && rows <= u64::from(u32::MAX) {
            let node = self.cursor.next_row(table, resolved, decided, ctx)?;
            if node.is_some() {
                ctx.tick()?;
            } else {
                self.cursor.restart();
            }
            return Ok(node);
        }
        while self.next_node < rows {
            let node = self.next_node;
            self.next_node += 1;
            ctx.tick()?;
            if !table.is_deleted(node) && resolved.iter().all(|p| p.passes(node as usize)) {
                return Ok(Some(node));
            }
        }
        Ok(None)
    }

    fn source_passes(
        &mut self,
        snapshot: &Snapshot,
        ctx: &ExecContext,
        table_id: TableId,
        node: u64,
    ) -> Result<bool> {
        let Some(conjunction) = &self.conjunction_expr else {
            return Ok(true);
        };
        // The filters are TRUE together exactly when their conjunction is; where the compiled
        // conjunction cannot decide, the evaluator tests them one by one as before.
        let table = snapshot.node_table(table_id);
        if self.compiled.as_ref().is_none_or(|(id, _)| *id != table_id) {
            let compiled =
                ColumnPredicate::compile(conjunction, self.plan.source_slot, table_id, table)?;
            self.compiled = Some((table_id, compiled));
        }
        if let Some((_, Some(predicate))) = &self.compiled {
            let resolved = &self.prefilters;
            // Consecutive rows are decided a batch at a time; rows found through the
            // prefilters' cursor one by one.
            let decided = if resolved.is_empty() {
                self.decided.of(predicate, (table_id, table), node, ctx)?
            } else {
                predicate.passes(table, node)
            };
            if let Some(passes) = decided {
                return Ok(passes);
            }
        }
        self.scratch[self.plan.source_slot] = node_value(table_id, node);
        // As in the row path, the expansion's slots are NULL when the scan's filters run.
        if let Some(expand) = &self.plan.expand {
            self.scratch[expand.target_slot] = Value::Null;
            if let Some(slot) = expand.rel_slot {
                self.scratch[slot] = Value::Null;
            }
        }
        let evaluator = Evaluator::new(snapshot, ctx);
        for filter in &self.plan.source_filters {
            if !evaluator.test(filter, &self.scratch)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Pushes entries of the node being expanded, moving to its next step when one is done.
    fn expand(
        &mut self,
        snapshot: &Snapshot,
        ctx: &ExecContext,
        rows_max: usize,
        ids: &mut Ids,
    ) -> Result<()> {
        let expand = self.plan.expand.as_ref().expect("an expanding plan");
        let current = self.expanding.as_mut().expect("a node being expanded");
        let Some(step) = expand.steps.get(current.step) else {
            self.expanding = None;
            return Ok(());
        };
        let (start, end) = snapshot.pair_ends(step.pair, step.direction);
        if start != current.table
            || current.node > u64::from(u32::MAX)
            || !expand.target_tables.contains(&end)
        {
            current.step += 1;
            return Ok(());
        }
        let rel_table = snapshot.rel_table(step.pair);
        let node = current.node as u32;
        let entries = current.entries.get_or_insert_with(|| {
            if rel_table.has_delta() {
                Entries::Merged(rel_table.entries(node, step.direction), 0)
            } else {
                Entries::Stored(rel_table.stored_csr(step.direction).range(node))
            }
        });
        let room = rows_max - ids.len();
        let merged: (Vec<u32>, Vec<u32>);
        let (neighbours, rels, finished): (&[u32], &[u32], bool) = match entries {
            Entries::Stored(range) => {
                let take = range.start..range.end.min(range.start + room);
                range.start = take.end;
                let csr = rel_table.stored_csr(step.direction);
                (
                    &csr.neighbours()[take.clone()],
                    &csr.rel_ids()[take],
                    range.start >= range.end,
                )
            }
            Entries::Merged(list, position) => {
                let take = *position..list.len().min(*position + room);
                *position = take.end;
                merged = list[take].iter().copied().unzip();
                (&merged.0, &merged.1, *position == list.len())
            }
        };
        let source = (current.table, current.node);
        let step_index = current.step;
        if finished {
            current.step += 1;
            current.entries = None;
        }
        let target = EntryTarget {
            source,
            pair: step.pair,
            end,
            step: step_index,
        };
        push_entries(
            expand,
            self.plan.source_slot,
            &mut self.scratch,
            &Evaluator::new(snapshot, ctx),
            target,
            neighbours,
            rels,
            ids,
        )
    }

    /// The next `rows_max` rows or so as one batch per thread, each thread walking its own
    /// range of source nodes and gathering its own columns; the first batch is returned, the
    /// others queued in order. `None` (nothing done) unless the plan is a plain one-hop
    /// expansion (one table, one step, no filter) over stored data, at a node boundary, with a
    /// range big enough to share.
    fn parallel_batches(
        &mut self,
        snapshot: &Snapshot,
        threads: usize,
        rows_max: usize,
    ) -> Option<ColumnBatch> {
        let expand = self.plan.expand.as_ref()?;
        let &[table_id] = self.plan.tables.as_slice() else {
            return None;
        };
        let &[step] = expand.steps.as_slice() else {
            return None;
        };
        if threads < 2
            || self.expanding.is_some()
            || self.table_index != 0
            || !self.plan.source_filters.is_empty()
            || !expand.filters.is_empty()
        {
            return None;
        }
        let table = snapshot.node_table(table_id);
        let rel_table = snapshot.rel_table(step.pair);
        let (start, end) = snapshot.pair_ends(step.pair, step.direction);
        if table.has_delta()
            || rel_table.has_delta()
            || start != table_id
            || !expand.target_tables.contains(&end)
        {
            return None;
        }
        let csr = rel_table.stored_csr(step.direction);
        let offsets = csr.offsets();
        // Nodes `[first, last)`: whole adjacency lists, at most `rows_max` entries in all.
        let first = self.next_node as usize;
        let nodes = (table.num_rows() as usize).min(offsets.len().saturating_sub(1));
        if first >= nodes {
            return None;
        }
        let limit = offsets[first] + rows_max as u64;
        let last = first + offsets[first..=nodes].partition_point(|&o| o <= limit) - 1;
        let rows = (offsets[last] - offsets[first]) as usize;
        if last <= first + 1 || rows < PARALLEL_GATHER_ROWS_MIN {
            return None;
        }
        // Split points by entry count, so that each thread gets about the same rows.
        let mut bounds = vec![first];
        for part in 1..threads {
            let target = offsets[first] + (rows * part / threads) as u64;
            let at = first + offsets[first..last].partition_point(|&o| o < target);
            if at > *bounds.last().expect("bounds start with first") && at < last {
                bounds.push(at);
            }
        }
        bounds.push(last);
        let walk = |range: Range<usize>| -> Ids {
            let mut ids = Ids::default();
            for node in range {
                if table.is_deleted(node as u64) {
                    continue;
                }
                let entries = csr.range(node as u32);
                ids.source
                    .resize(ids.source.len() + entries.len(), node as u64);
                ids.target.extend(
                    csr.neighbours()[entries.clone()]
                        .iter()
                        .map(|&n| u64::from(n)),
                );
                if expand.rel_read {
                    ids.rel
                        .extend(csr.rel_ids()[entries].iter().map(|&r| u64::from(r)));
                }
            }
            ids.close_run(table_id, 0);
            ids
        };
        let this = &*self;
        let mut batches: Vec<ColumnBatch> = std::thread::scope(|scope| {
            let workers: Vec<_> = bounds
                .windows(2)
                .map(|pair| {
                    let range = pair[0]..pair[1];
                    scope.spawn(move || {
                        let ids = walk(range);
                        let columns = this
                            .plan
                            .outputs
                            .iter()
                            .map(|output| this.gather(snapshot, output, &ids))
                            .collect();
                        ColumnBatch::new(columns, ids.len())
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("a scan thread panicked"))
                .collect()
        });
        self.next_node = last as u64;
        batches.retain(|b| !b.is_empty());
        let mut batches = batches.into_iter();
        let first_batch = batches.next();
        self.ready.extend(batches);
        // Every node of the range had no live entry: go on from `last`.
        first_batch.or_else(|| self.parallel_batches(snapshot, threads, rows_max))
    }

    /// Every output column of the batch: the columns split among up to `threads` threads
    /// when the batch is big enough to pay for them.
    fn gather_all(&self, snapshot: &Snapshot, ids: &Ids, threads: usize) -> Vec<ColumnVector> {
        let outputs = &self.plan.outputs;
        let threads = threads.min(outputs.len());
        if threads < 2 || ids.len() < PARALLEL_GATHER_ROWS_MIN {
            return outputs
                .iter()
                .map(|output| self.gather(snapshot, output, ids))
                .collect();
        }
        let per_thread = outputs.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = outputs
                .chunks(per_thread)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|output| self.gather(snapshot, output, ids))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| part.join().expect("a gather thread panicked"))
                .collect()
        })
    }

    fn gather(&self, snapshot: &Snapshot, output: &Output, ids: &Ids) -> ColumnVector {
        let (of, ty) = match output {
            Output::Property { of, ty, .. } | Output::Variable { of, ty } => (*of, ty),
        };
        let mut builder = VectorBuilder::new(ty, ids.len());
        let mut start = 0;
        for run in &ids.runs {
            let (table, rows) = match of {
                Bound::Source => (run.source_table, &ids.source[start..run.end]),
                Bound::Rel | Bound::Target => {
                    let expand = self.plan.expand.as_ref().expect("an expanding plan");
                    let step = expand.steps[run.step];
                    if of == Bound::Rel {
                        (step.pair, &ids.rel[start..run.end])
                    } else {
                        (end_table(snapshot, step), &ids.target[start..run.end])
                    }
                }
            };
            match output {
                Output::Property { property, .. } => gather_property(
                    &mut builder,
                    snapshot,
                    of == Bound::Rel,
                    table,
                    property.column(table),
                    rows,
                )
                .expect("the scan verified its columns when it started"),
                Output::Variable { .. } => {
                    for &row in rows {
                        let id = InternalId::new(table, row);
                        builder.push(&if of == Bound::Rel {
                            Value::Rel(RelValue {
                                id,
                                projection: None,
                            })
                        } else {
                            Value::Node(NodeValue {
                                id,
                                projection: None,
                            })
                        });
                    }
                }
            }
            start = run.end;
        }
        builder.finish()
    }
}

/// The node table a step reaches.
fn end_table(snapshot: &Snapshot, step: Step) -> TableId {
    snapshot.pair_ends(step.pair, step.direction).1
}

/// Where a slice of entries comes from and goes to.
#[derive(Clone, Copy)]
struct EntryTarget {
    source: (TableId, u64),
    pair: TableId,
    end: TableId,
    step: usize,
}

/// Pushes the entries (`neighbours[i]` over rel `rels[i]`) that pass the expansion's filters.
#[allow(clippy::too_many_arguments)]
fn push_entries(
    expand: &ExpandSpec,
    source_slot: usize,
    scratch: &mut [Value],
    evaluator: &Evaluator<'_>,
    target: EntryTarget,
    neighbours: &[u32],
    rels: &[u32],
    ids: &mut Ids,
) -> Result<()> {
    debug_assert_eq!(neighbours.len(), rels.len());
    let (source_table, source) = target.source;
    if expand.filters.is_empty() {
        ids.source
            .resize(ids.source.len() + neighbours.len(), source);
        ids.target.extend(neighbours.iter().map(|&n| u64::from(n)));
        if expand.rel_read {
            ids.rel.extend(rels.iter().map(|&r| u64::from(r)));
        }
    } else {
        scratch[source_slot] = node_value(source_table, source);
        for (&neighbour, &rel) in neighbours.iter().zip(rels) {
            if let Some(slot) = expand.rel_slot {
                scratch[slot] = Value::Rel(RelValue {
                    id: InternalId::new(target.pair, u64::from(rel)),
                    projection: None,
                });
            }
            scratch[expand.target_slot] = node_value(target.end, u64::from(neighbour));
            let mut passes = true;
            for filter in &expand.filters {
                if !evaluator.test(filter, scratch)? {
                    passes = false;
                    break;
                }
            }
            if passes {
                ids.source.push(source);
                ids.target.push(u64::from(neighbour));
                ids.rel.push(u64::from(rel));
            }
        }
    }
    ids.close_run(source_table, target.step);
    Ok(())
}

fn node_value(table: TableId, offset: u64) -> Value {
    Value::Node(NodeValue {
        id: InternalId::new(table, offset),
        projection: None,
    })
}
