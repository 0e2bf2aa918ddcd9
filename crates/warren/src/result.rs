//! Query results: column names and types, and rows that stream out of the operator tree in
//! batches (or were materialized, for statements that write). Values are printed with the
//! snapshot the query read, so node, rel and path values show their properties.

use std::sync::Arc;
use std::time::Duration;

use warren_common::format::to_kuzu_string;
use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::Result;
use warren_exec::recursive::counters::TraversalSummary;
use warren_exec::{BoxedOperator, ExecContext};
use warren_storage::Snapshot;

/// Where rows come from.
enum Rows {
    /// Pulled from a running operator tree; `slots` are the output columns' slots.
    Stream {
        root: BoxedOperator,
        ctx: Box<ExecContext>,
        slots: Vec<usize>,
    },
    Materialized(std::vec::IntoIter<Vec<Value>>),
}

pub struct QueryResult {
    columns: Vec<String>,
    types: Vec<LogicalType>,
    rows: Rows,
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
    pub(crate) fn streaming(
        columns: Vec<String>,
        types: Vec<LogicalType>,
        root: BoxedOperator,
        ctx: ExecContext,
        slots: Vec<usize>,
        snapshot: Arc<Snapshot>,
        compile_time: Duration,
    ) -> Self {
        Self {
            columns,
            types,
            rows: Rows::Stream {
                root,
                ctx: Box::new(ctx),
                slots,
            },
            snapshot,
            compile_time,
            execution_time: Duration::ZERO,
        }
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
            columns,
            types,
            rows: Rows::Materialized(rows.into_iter()),
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
        };
        self.execution_time += started.elapsed();
        Ok(row)
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

    /// Every remaining row. Rows held count against the query's memory limit.
    pub fn collect_rows(&mut self) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            if let Rows::Stream { ctx, .. } = &self.rows {
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
            Rows::Stream { ctx, .. } => ctx.memory.peak(),
            Rows::Materialized(_) => 0,
        }
    }

    /// What the query's recursive joins did (algorithm, k, per-level software counters), as far
    /// as the rows read so far required; complete once every row is read.
    pub fn traversals(&self) -> Vec<TraversalSummary> {
        match &self.rows {
            Rows::Stream { ctx, .. } => ctx.traversal_summaries(),
            Rows::Materialized(_) => Vec::new(),
        }
    }
}
