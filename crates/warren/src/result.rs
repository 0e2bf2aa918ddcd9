//! Query results: column names and types, and rows that stream out of the operator tree in
//! batches (or were materialized, for statements that write). Values are printed with the
//! snapshot the query read, so node, rel and path values show their properties.

use std::sync::Arc;
use std::time::Duration;

use warren_common::column_batch::{ColumnBatch, ColumnVector};
use warren_common::format::to_kuzu_string;
use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::Result;
use warren_exec::columnar::{ColumnarPlan, ColumnarScan};
use warren_exec::recursive::counters::TraversalSummary;
use warren_exec::{BoxedOperator, ExecContext, ExecSettings, Interrupt};
use warren_planner::plan::QueryPlan;
use warren_storage::Snapshot;

/// Where rows come from.
enum Rows {
    /// Pulled from a running operator tree; `slots` are the output columns' slots.
    Stream {
        root: BoxedOperator,
        ctx: Box<ExecContext>,
        slots: Vec<usize>,
    },
    /// Pulled from a columnar scan, in batches; `pending` is the batch rows are read from one
    /// at a time, with its next row.
    Columnar {
        scan: Box<ColumnarScan>,
        ctx: Box<ExecContext>,
        pending: Option<(ColumnBatch, usize)>,
    },
    Materialized(std::vec::IntoIter<Vec<Value>>),
}

/// What a streaming result needs to run its query again over the same snapshot.
struct Rerun {
    plan: Arc<QueryPlan>,
    settings: ExecSettings,
    interrupt: Interrupt,
}

pub struct QueryResult {
    /// Shared by reruns; slices keep the result as small as it was before `graph_columns`.
    columns: Arc<[String]>,
    types: Arc<[LogicalType]>,
    /// The columns whose values may hold nodes or rels (verified before they are handed out).
    graph_columns: Box<[usize]>,
    rows: Rows,
    rerun: Option<Rerun>,
    snapshot: Arc<Snapshot>,
    compile_time: Duration,
    execution_time: Duration,
}

impl std::fmt::Debug for QueryResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryResult")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

impl QueryResult {
    /// A read-only query's result, streamed from `plan` run over `ctx`'s snapshot: by the
    /// columnar path when the plan's shape allows it, by the row operators otherwise.
    pub(crate) fn streaming(
        plan: Arc<QueryPlan>,
        ctx: ExecContext,
        snapshot: Arc<Snapshot>,
        compile_time: Duration,
        columnar: bool,
    ) -> Self {
        let columns = plan.columns.iter().map(|(name, ..)| name.clone()).collect();
        let types: Arc<[LogicalType]> = plan.columns.iter().map(|(_, _, ty)| ty.clone()).collect();
        let rerun = Rerun {
            plan: plan.clone(),
            settings: ctx.settings.clone(),
            interrupt: ctx.interrupt.clone(),
        };
        Self {
            columns,
            graph_columns: graph_columns(&types),
            types,
            rows: stream_rows(&plan, ctx, columnar),
            rerun: Some(rerun),
            snapshot,
            compile_time,
            execution_time: Duration::ZERO,
        }
    }

    /// Whether the query's plan is of the heavy class (a recursive join, a scan of whole node
    /// tables, rows expanded over more than one hop, ...: `warren_planner::cost`), decided
    /// before it runs; false for statements that wrote (they ran when they were executed).
    pub fn is_heavy(&self) -> bool {
        self.rerun
            .as_ref()
            .is_some_and(|rerun| warren_planner::cost::is_heavy(&rerun.plan.plan))
    }

    /// Whether [`QueryResult::rerun`] can run the query again (read-only queries).
    pub fn can_rerun(&self) -> bool {
        self.rerun.is_some()
    }

    /// A new result running the same read-only query over the same snapshot from its first
    /// row, or `None` for a result that was materialized (a statement that writes). Functions
    /// such as `rand()` give new values.
    pub fn rerun(&self) -> Option<QueryResult> {
        let rerun = self.rerun.as_ref()?;
        let ctx = ExecContext::new(
            self.snapshot.clone(),
            rerun.settings.clone(),
            rerun.interrupt.clone(),
        );
        let columnar = matches!(self.rows, Rows::Columnar { .. });
        Some(Self {
            columns: self.columns.clone(),
            types: self.types.clone(),
            graph_columns: self.graph_columns.clone(),
            rows: stream_rows(&rerun.plan, ctx, columnar),
            rerun: Some(Rerun {
                plan: rerun.plan.clone(),
                settings: rerun.settings.clone(),
                interrupt: rerun.interrupt.clone(),
            }),
            snapshot: self.snapshot.clone(),
            compile_time: self.compile_time,
            execution_time: Duration::ZERO,
        })
    }

    /// Whether rows come from the columnar path.
    pub fn is_columnar(&self) -> bool {
        matches!(self.rows, Rows::Columnar { .. })
    }

    pub(crate) fn materialized(
        columns: Vec<String>,
        types: Vec<LogicalType>,
        rows: Vec<Vec<Value>>,
        snapshot: Arc<Snapshot>,
        compile_time: Duration,
        execution_time: Duration,
    ) -> Self {
        Self {
            columns: columns.into(),
            graph_columns: graph_columns(&types),
            types: types.into(),
            rows: Rows::Materialized(rows.into_iter()),
            rerun: None,
            snapshot,
            compile_time,
            execution_time,
        }
    }

    /// A one-column, one-row result carrying a message (DDL, COPY).
    pub(crate) fn message(text: String, snapshot: Arc<Snapshot>, time: Duration) -> Self {
        Self::materialized(
            vec!["result".into()],
            vec![LogicalType::String],
            vec![vec![Value::string(text)]],
            snapshot,
            Duration::ZERO,
            time,
        )
    }

    /// A `result` column of one row per line (COPY's answer with its warnings count).
    pub(crate) fn messages(lines: Vec<String>, snapshot: Arc<Snapshot>, time: Duration) -> Self {
        Self::materialized(
            vec!["result".into()],
            vec![LogicalType::String],
            lines.into_iter().map(|l| vec![Value::string(l)]).collect(),
            snapshot,
            Duration::ZERO,
            time,
        )
    }

    pub(crate) fn empty(snapshot: Arc<Snapshot>) -> Self {
        Self::materialized(
            Vec::new(),
            Vec::new(),
            Vec::new(),
            snapshot,
            Duration::ZERO,
            Duration::ZERO,
        )
    }

    pub fn column_names(&self) -> &[String] {
        &self.columns
    }

    pub fn column_types(&self) -> &[LogicalType] {
        &self.types
    }

    /// The snapshot the rows refer to (for printing nodes, rels and paths).
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// Time spent producing the rows pulled so far.
    pub fn execution_time(&self) -> Duration {
        self.execution_time
    }

    /// The next row, or `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        let started = std::time::Instant::now();
        let row = match &mut self.rows {
            Rows::Materialized(rows) => rows.next(),
            Rows::Stream { root, ctx, slots } => root
                .next(ctx)?
                .map(|row| slots.iter().map(|&s| row[s].clone()).collect()),
            Rows::Columnar { scan, ctx, pending } => {
                if pending
                    .as_ref()
                    .is_none_or(|(batch, next)| *next >= batch.len())
                {
                    *pending = scan
                        .next_batch(ctx, warren_common::limits::BATCH_ROWS)?
                        .map(|batch| (batch, 0));
                }
                pending.as_mut().map(|(batch, next)| {
                    *next += 1;
                    batch.row(*next - 1)
                })
            }
        };
        if let Some(row) = &row {
            self.verify_graph_values(row)?;
        }
        self.execution_time += started.elapsed();
        Ok(row)
    }

    /// [`QueryResult::verify_graph_values`] for a batch, column by column (only vectors of
    /// values can hold nodes and rels).
    fn verify_graph_vectors(&self, batch: &ColumnBatch) -> Result<()> {
        for &column in &self.graph_columns {
            if let ColumnVector::Values(values) = &batch.columns[column] {
                for value in values {
                    self.snapshot.verify_value(value)?;
                }
            }
        }
        Ok(())
    }

    /// Verifies the blocks that printing the row's nodes and rels reads, so that a damaged
    /// block is this query's error rather than a panic while the row is printed or converted
    /// (`GraphLookup` cannot return errors).
    fn verify_graph_values(&self, row: &[Value]) -> Result<()> {
        for &column in &self.graph_columns {
            self.snapshot.verify_value(&row[column])?;
        }
        Ok(())
    }

    /// Up to `max` rows; an empty vector at the end.
    pub fn next_batch(&mut self, max: usize) -> Result<Vec<Vec<Value>>> {
        let mut batch = Vec::with_capacity(max.min(warren_common::limits::BATCH_ROWS));
        while batch.len() < max {
            match self.next_row()? {
                Some(row) => batch.push(row),
                None => break,
            }
        }
        Ok(batch)
    }

    /// Up to `rows_max` next rows as one column batch (typed vectors for INT64, DOUBLE, BOOL and
    /// STRING columns); `None` at the end. Reading a result batch by batch holds one batch at a
    /// time: the columnar path builds batches directly, the row path from its rows.
    pub fn next_columns(&mut self, rows_max: usize) -> Result<Option<ColumnBatch>> {
        assert!(rows_max > 0, "a batch holds at least one row");
        if let Rows::Columnar { scan, ctx, pending } = &mut self.rows {
            // Rows left in a batch that `next_row` started on go first, as they are.
            if let Some((batch, next)) = pending.take().filter(|(b, n)| *n < b.len()) {
                let end = batch.len().min(next + rows_max);
                let rows: Vec<Vec<Value>> = (next..end).map(|r| batch.row(r)).collect();
                if end < batch.len() {
                    *pending = Some((batch, end));
                }
                return Ok(Some(ColumnBatch::from_rows(&self.types, &rows)));
            }
            let started = std::time::Instant::now();
            let batch = scan.next_batch(ctx, rows_max)?;
            self.execution_time += started.elapsed();
            if let Some(batch) = &batch {
                self.verify_graph_vectors(batch)?;
            }
            return Ok(batch);
        }
        let rows = self.next_batch(rows_max)?;
        Ok((!rows.is_empty()).then(|| ColumnBatch::from_rows(&self.types, &rows)))
    }

    /// Every remaining row. Rows held count against the query's memory limit.
    pub fn collect_rows(&mut self) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            if let Rows::Stream { ctx, .. } | Rows::Columnar { ctx, .. } = &self.rows {
                ctx.memory
                    .reserve((row.len() * 48 + 24) as u64, "the collected result")?;
            }
            rows.push(row);
        }
        Ok(rows)
    }

    /// A value as Kùzu prints it.
    pub fn format(&self, value: &Value) -> String {
        to_kuzu_string(value, self.snapshot.as_ref())
    }

    /// Every remaining row, each as `value|value|...` (the form Kùzu's tests use).
    pub fn to_strings(&mut self) -> Result<Vec<String>> {
        let rows = self.collect_rows()?;
        Ok(rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| self.format(v))
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect())
    }

    /// Peak bytes held by the query's materializing operators.
    pub fn peak_memory(&self) -> u64 {
        match &self.rows {
            Rows::Stream { ctx, .. } | Rows::Columnar { ctx, .. } => ctx.memory.peak(),
            Rows::Materialized(_) => 0,
        }
    }

    /// What the query's recursive joins did (algorithm, k, per-level software counters), as far
    /// as the rows read so far required; complete once every row is read.
    pub fn traversals(&self) -> Vec<TraversalSummary> {
        match &self.rows {
            Rows::Stream { ctx, .. } | Rows::Columnar { ctx, .. } => ctx.traversal_summaries(),
            Rows::Materialized(_) => Vec::new(),
        }
    }
}

/// The columns of `types` whose values may hold nodes or rels, however nested.
fn graph_columns(types: &[LogicalType]) -> Box<[usize]> {
    (0..types.len())
        .filter(|&i| may_hold_graph_values(&types[i]))
        .collect()
}

fn may_hold_graph_values(ty: &LogicalType) -> bool {
    match ty {
        LogicalType::Node | LogicalType::Rel | LogicalType::RecursiveRel | LogicalType::Any => true,
        LogicalType::List(inner) | LogicalType::Array(inner, _) => may_hold_graph_values(inner),
        LogicalType::Map(key, value) => may_hold_graph_values(key) || may_hold_graph_values(value),
        LogicalType::Struct(fields) | LogicalType::Union(fields) => {
            fields.iter().any(|field| may_hold_graph_values(&field.ty))
        }
        _ => false,
    }
}

/// The rows of `plan` run over `ctx`: columnar when allowed and the plan's shape has a
/// columnar form.
fn stream_rows(plan: &QueryPlan, ctx: ExecContext, columnar: bool) -> Rows {
    if let Some(columnar) = ColumnarPlan::recognize(plan).filter(|_| columnar) {
        return Rows::Columnar {
            scan: Box::new(ColumnarScan::new(columnar)),
            ctx: Box::new(ctx),
            pending: None,
        };
    }
    Rows::Stream {
        root: warren_exec::build(&plan.plan, plan.slots, None),
        ctx: Box::new(ctx),
        slots: plan.columns.iter().map(|(_, slot, _)| *slot).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use warren_common::types::{Field, LogicalType};

    use super::graph_columns;

    #[test]
    fn graph_columns_are_those_that_may_hold_nodes_or_rels() {
        let field = |ty: LogicalType| Field {
            name: "f".into(),
            ty,
        };
        let types = [
            LogicalType::Int64,
            LogicalType::Node,
            LogicalType::list(LogicalType::Rel),
            LogicalType::Struct(Arc::new(vec![field(LogicalType::String)])),
            LogicalType::Map(
                Arc::new(LogicalType::String),
                Arc::new(LogicalType::RecursiveRel),
            ),
            LogicalType::Any,
            LogicalType::Union(Arc::new(vec![field(LogicalType::Node)])),
            LogicalType::list(LogicalType::Double),
        ];
        assert_eq!(&*graph_columns(&types), &[1, 2, 4, 5, 6]);
    }
}
