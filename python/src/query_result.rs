//! `warren._warren.QueryResult`: a statement's rows with a cursor. A read-only query's rows
//! stream from the engine in column batches as the cursor (or a conversion) asks for them, so
//! a big result is never held whole; a statement that writes arrives materialized.
//!
//! Kùzu holds every row at once, which gives it `get_num_tuples` and `reset_iterator` for free.
//! Here a streamed result counts the rows it has read, and reads ahead (keeping the rows for the
//! cursor) up to [`COUNT_READ_AHEAD_ROWS`] to find its end; only a longer result is counted by
//! running its query again over the same snapshot (one counting run that keeps no rows,
//! remembered). A reset starts over when rows were read.

use std::collections::VecDeque;

use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::{PyIndexError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use warren::column_batch::ColumnBatch;
use warren::Snapshot;
use warren_common::types::LogicalType;
use warren_common::Value;

use crate::arrow_export::ColumnAccumulator;
use crate::connection::runtime_error;
use crate::database::Shared;
use crate::to_python::{to_python, Lookup};
use crate::type_tree::{type_tree, TablesSeen};

/// Rows per batch the cursor pulls from a streaming result.
pub const CURSOR_BATCH_ROWS: usize = 2048;
/// Rows per batch a whole-result conversion pulls.
const CONVERSION_BATCH_ROWS: usize = 1 << 16;
/// The most rows `get_num_tuples` reads ahead (and keeps) to find a streamed result's end before
/// it counts by running the query again.
pub const COUNT_READ_AHEAD_ROWS: usize = 1 << 16;

/// A statement's complete result, as it leaves the engine.
#[derive(Debug)]
pub struct Materialized {
    pub columns: Vec<String>,
    pub types: Vec<LogicalType>,
    pub rows: Vec<Vec<Value>>,
    /// Resolves the nodes, rels and paths among the values.
    pub snapshot: Arc<Snapshot>,
    pub compile_ms: f64,
    pub execution_ms: f64,
}

/// A read-only statement's result, streamed: the engine's result and the first batch of rows
/// (read by `execute`, so that an error in the first rows surfaces there).
#[derive(Debug)]
pub struct Streamed {
    pub result: warren::QueryResult,
    pub first: Option<ColumnBatch>,
    pub compile_ms: f64,
    pub execution_ms: f64,
}

/// What `Connection.execute` hands over for each statement.
#[derive(Debug)]
pub enum Outcome {
    Materialized(Materialized),
    Streamed(Streamed),
}

/// The engine's result rows are read from, and where in it the reading is.
struct Stream {
    result: warren::QueryResult,
    /// The batch rows are read from and its next row.
    batch: Option<(ColumnBatch, usize)>,
    /// Batches read ahead of `batch` (by a count), in order.
    pending: VecDeque<ColumnBatch>,
    /// Rows taken from this stream (and handed to the cursor, or skipped to reach it).
    taken: usize,
    exhausted: bool,
    /// A whole-result conversion read it: the cursor needs a new run.
    spent: bool,
}

impl Stream {
    fn new(result: warren::QueryResult, first: Option<ColumnBatch>) -> Self {
        let exhausted = first.is_none();
        Self {
            result,
            batch: first.map(|b| (b, 0)),
            pending: VecDeque::new(),
            taken: 0,
            exhausted,
            spent: false,
        }
    }

    /// Whether a row is ready in the current batch, pulling the next batch if needed.
    fn ready(&mut self) -> warren::Result<bool> {
        loop {
            if let Some((batch, next)) = &self.batch {
                if *next < batch.len() {
                    return Ok(true);
                }
            }
            self.batch = None;
            if let Some(batch) = self.pending.pop_front() {
                self.batch = Some((batch, 0));
                continue;
            }
            if self.exhausted {
                return Ok(false);
            }
            match self.result.next_columns(CURSOR_BATCH_ROWS)? {
                Some(batch) => self.batch = Some((batch, 0)),
                None => self.exhausted = true,
            }
        }
    }

    /// Reads batches ahead, keeping them, until the result ends or `rows_max` rows were read;
    /// returns whether it ended.
    fn read_ahead(&mut self, rows_max: usize) -> warren::Result<bool> {
        let mut rows = 0;
        while !self.exhausted && rows < rows_max {
            match self.result.next_columns(CURSOR_BATCH_ROWS)? {
                Some(batch) => {
                    rows += batch.len();
                    self.pending.push_back(batch);
                }
                None => self.exhausted = true,
            }
        }
        Ok(self.exhausted)
    }

    /// The rows of the whole run, once it is exhausted: those taken, the rest of the current
    /// batch and the batches read ahead.
    fn total_rows(&self) -> usize {
        assert!(self.exhausted, "only an exhausted stream knows its total");
        let current = self
            .batch
            .as_ref()
            .map_or(0, |(batch, next)| batch.len() - next);
        self.taken + current + self.pending.iter().map(ColumnBatch::len).sum::<usize>()
    }

    /// Takes the next row (call after `ready` answered true).
    fn take(&mut self) -> Vec<Value> {
        let (batch, next) = self.batch.as_mut().expect("a ready row");
        *next += 1;
        self.taken += 1;
        batch.row(*next - 1)
    }
}

struct Inner {
    columns: Vec<String>,
    types: Vec<LogicalType>,
    snapshot: Arc<Snapshot>,
    compile_ms: f64,
    execution_ms: f64,
    /// Every row, for materialized results (and streamed ones once a conversion needed them).
    rows: Option<Vec<Vec<Value>>>,
    stream: Option<Stream>,
    /// Rows handed out by the cursor.
    cursor: usize,
    /// The number of rows, once known.
    count: Option<usize>,
}

impl Inner {
    /// The stream positioned at the cursor: started over when it is spent or past the cursor.
    fn stream_at_cursor(&mut self) -> warren::Result<&mut Stream> {
        let stream = self.stream.as_mut().expect("a streamed result");
        if stream.spent || stream.taken > self.cursor {
            let rerun = stream.result.rerun().expect("a streamed result reruns");
            *stream = Stream::new(rerun, None);
            stream.exhausted = false;
        }
        while stream.taken < self.cursor && stream.ready()? {
            stream.take();
        }
        Ok(stream)
    }

    /// Whether a row is ready without running the query (a row left in the current batch, or
    /// the end known); `None` when only running it can tell.
    fn ready_now(&self) -> Option<bool> {
        if let Some(rows) = &self.rows {
            return Some(self.cursor < rows.len());
        }
        let stream = self.stream.as_ref()?;
        if stream.spent || stream.taken != self.cursor {
            return None;
        }
        match &stream.batch {
            Some((batch, next)) if *next < batch.len() => Some(true),
            _ if stream.exhausted && stream.pending.is_empty() => Some(false),
            _ => None,
        }
    }

    fn has_next(&mut self) -> warren::Result<bool> {
        if let Some(rows) = &self.rows {
            return Ok(self.cursor < rows.len());
        }
        let cursor = self.cursor;
        let stream = self.stream_at_cursor()?;
        let ready = stream.ready()?;
        if !ready {
            self.count = Some(cursor);
        }
        Ok(ready)
    }

    /// The next row; `None` at the end.
    fn next_row(&mut self) -> warren::Result<Option<Vec<Value>>> {
        if !self.has_next()? {
            return Ok(None);
        }
        let row = match &self.rows {
            Some(rows) => rows[self.cursor].clone(),
            None => self.stream.as_mut().expect("a streamed result").take(),
        };
        self.cursor += 1;
        Ok(Some(row))
    }

    /// A result to read the whole result from, from its first row: the stream itself when
    /// nothing was read from it yet (the cursor will need a new run), else a new run.
    fn whole(&mut self) -> Option<(warren::QueryResult, Vec<ColumnBatch>)> {
        let stream = self.stream.as_mut()?;
        if stream.spent || stream.taken > 0 {
            return stream.result.rerun().map(|r| (r, Vec::new()));
        }
        let rerun = stream.result.rerun()?;
        stream.spent = true;
        let mut first: Vec<ColumnBatch> = stream
            .batch
            .take()
            .map(|(batch, _)| batch)
            .into_iter()
            .collect();
        first.extend(stream.pending.drain(..));
        Some((std::mem::replace(&mut stream.result, rerun), first))
    }

    /// Reads every row into `rows` (for the conversions that work on values).
    fn materialize(&mut self) -> warren::Result<&[Vec<Value>]> {
        if self.rows.is_none() {
            let (mut result, first) = self.whole().expect("a streamed result");
            let mut rows: Vec<Vec<Value>> = first
                .iter()
                .flat_map(|batch| (0..batch.len()).map(|r| batch.row(r)))
                .collect();
            rows.extend(result.collect_rows()?);
            self.count = Some(rows.len());
            self.rows = Some(rows);
        }
        Ok(self.rows.as_deref().expect("just materialized"))
    }

    fn count(&mut self) -> warren::Result<usize> {
        if let Some(rows) = &self.rows {
            return Ok(rows.len());
        }
        if let Some(count) = self.count {
            return Ok(count);
        }
        let stream = self.stream.as_mut().expect("a streamed result");
        if !stream.spent && stream.read_ahead(COUNT_READ_AHEAD_ROWS)? {
            let count = stream.total_rows();
            self.count = Some(count);
            return Ok(count);
        }
        let mut count = 0;
        let mut run = stream.result.rerun().expect("a streamed result reruns");
        while let Some(batch) = run.next_columns(CONVERSION_BATCH_ROWS)? {
            count += batch.len();
        }
        self.count = Some(count);
        Ok(count)
    }

    /// The whole result as Arrow chunks of `chunk_rows` rows (the remainder joining the last
    /// full chunk), or `None` when a column has no Arrow form here.
    fn arrow_chunks(
        &mut self,
        chunk_rows: usize,
    ) -> warren::Result<Option<Vec<Vec<arrow_array::ArrayRef>>>> {
        let types = self.types.clone();
        if !types.iter().all(crate::arrow_export::has_arrow_form) {
            return Ok(None);
        }
        let mut chunks = ChunkBuilder::new(&types, chunk_rows);
        if let Some(rows) = &self.rows {
            for part in rows.chunks(CONVERSION_BATCH_ROWS) {
                chunks.push(&ColumnBatch::from_rows(&types, part));
            }
        } else {
            let (mut result, first) = self.whole().expect("a streamed result");
            for batch in &first {
                chunks.push(batch);
            }
            while let Some(batch) = result.next_columns(CONVERSION_BATCH_ROWS)? {
                chunks.push(&batch);
            }
            self.count = Some(chunks.rows);
        }
        Ok(chunks.finish())
    }
}

/// Fills Arrow chunks of `chunk_rows` rows from column batches. A full chunk is kept open
/// until the next one fills, so that a last partial chunk joins it (as Kùzu's chunks do).
pub(crate) struct ChunkBuilder<'a> {
    types: &'a [LogicalType],
    chunk_rows: usize,
    done: Vec<Vec<ColumnAccumulator>>,
    full: Option<Vec<ColumnAccumulator>>,
    current: Vec<ColumnAccumulator>,
    pub(crate) rows: usize,
}

impl<'a> ChunkBuilder<'a> {
    pub(crate) fn new(types: &'a [LogicalType], chunk_rows: usize) -> Self {
        assert!(chunk_rows > 0);
        Self {
            types,
            chunk_rows,
            done: Vec::new(),
            full: None,
            current: Self::empty(types),
            rows: 0,
        }
    }

    fn empty(types: &[LogicalType]) -> Vec<ColumnAccumulator> {
        types.iter().map(ColumnAccumulator::new).collect()
    }

    fn current_len(&self) -> usize {
        self.current.first().map_or(0, ColumnAccumulator::len)
    }

    pub(crate) fn push(&mut self, batch: &ColumnBatch) {
        let mut start = 0;
        while start < batch.len() {
            if self.current_len() == self.chunk_rows {
                let filled = std::mem::replace(&mut self.current, Self::empty(self.types));
                if let Some(previous) = self.full.replace(filled) {
                    self.done.push(previous);
                }
            }
            let end = batch
                .len()
                .min(start + self.chunk_rows - self.current_len());
            for (accumulator, vector) in self.current.iter_mut().zip(&batch.columns) {
                accumulator.append(vector, start..end);
            }
            self.rows += end - start;
            start = end;
        }
    }

    pub(crate) fn finish(mut self) -> Option<Vec<Vec<arrow_array::ArrayRef>>> {
        let last_rows = self.current_len();
        let mut last = self.current;
        if let Some(mut full) = self.full.take() {
            if last_rows == self.chunk_rows {
                self.done.push(full);
            } else {
                // A partial last chunk (or none) joins the full one before it.
                for (into, from) in full.iter_mut().zip(last) {
                    into.extend(from);
                }
                last = full;
            }
        }
        self.done.push(last);
        self.done
            .into_iter()
            .map(|chunk| {
                chunk
                    .into_iter()
                    .zip(self.types)
                    .map(|(accumulator, ty)| accumulator.finish(ty))
                    .collect::<Option<Vec<_>>>()
            })
            .collect()
    }
}

#[pyclass(name = "QueryResult", module = "warren._warren")]
pub struct PyQueryResult {
    inner: Mutex<Inner>,
    shared: Arc<Shared>,
}

impl PyQueryResult {
    pub fn new(outcome: Outcome, shared: Arc<Shared>) -> Self {
        let inner = match outcome {
            Outcome::Materialized(m) => Inner {
                count: Some(m.rows.len()),
                columns: m.columns,
                types: m.types,
                snapshot: m.snapshot,
                compile_ms: m.compile_ms,
                execution_ms: m.execution_ms,
                rows: Some(m.rows),
                stream: None,
                cursor: 0,
            },
            Outcome::Streamed(s) => Inner {
                columns: s.result.column_names().to_vec(),
                types: s.result.column_types().to_vec(),
                snapshot: s.result.snapshot().clone(),
                compile_ms: s.compile_ms,
                execution_ms: s.execution_ms,
                rows: None,
                count: s.first.is_none().then_some(0),
                stream: Some(Stream::new(s.result, s.first)),
                cursor: 0,
            },
        };
        Self {
            inner: Mutex::new(inner),
            shared,
        }
    }

    fn check_open(&self) -> PyResult<()> {
        if self.shared.is_closed() {
            return Err(PyRuntimeError::new_err("the parent database is closed"));
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("query result lock")
    }

    /// Runs `f` on the result with the GIL released (it may run the query).
    fn with_inner<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Inner) -> warren::Result<T> + Send,
    ) -> PyResult<T> {
        self.check_open()?;
        py.detach(|| f(&mut self.lock())).map_err(runtime_error)
    }

    /// Every row (read whole first, for a streamed result).
    fn with_rows<'py, T>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&Inner, &[Vec<Value>]) -> PyResult<T>,
    ) -> PyResult<T> {
        self.with_inner(py, |inner| inner.materialize().map(|_| ()))?;
        let inner = self.lock();
        f(&inner, inner.rows.as_deref().expect("materialized"))
    }
}

#[pymethods]
impl PyQueryResult {
    fn has_next(&self, py: Python<'_>) -> PyResult<bool> {
        self.check_open()?;
        if let Some(ready) = self.lock().ready_now() {
            return Ok(ready);
        }
        self.with_inner(py, Inner::has_next)
    }

    /// The next row as a list; an error past the end.
    fn get_next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_open()?;
        // A row of the current batch is taken without releasing the GIL.
        let ready = {
            let mut inner = self.lock();
            match inner.ready_now() {
                Some(true) => inner.next_row().map_err(runtime_error)?,
                _ => None,
            }
        };
        let row = match ready {
            Some(row) => Some(row),
            None => self.with_inner(py, Inner::next_row)?,
        };
        let Some(row) = row else {
            return Err(PyRuntimeError::new_err(
                "Runtime exception: No more tuples in the query result.",
            ));
        };
        let inner = self.lock();
        crate::to_python::list(py, &row, Lookup::plain(inner.snapshot.as_ref()))
    }

    /// Up to `count` next rows (all remaining ones when `count` is `None`), read in batches.
    #[pyo3(signature = (count=None))]
    fn get_n<'py>(
        &self,
        py: Python<'py>,
        count: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let mut out = Vec::new();
        let mut left = count.unwrap_or(usize::MAX);
        while left > 0 {
            let want = left.min(CURSOR_BATCH_ROWS);
            let rows = self.with_inner(py, |inner| {
                let mut rows = Vec::with_capacity(want);
                while rows.len() < want {
                    match inner.next_row()? {
                        Some(row) => rows.push(row),
                        None => break,
                    }
                }
                Ok(rows)
            })?;
            let inner = self.lock();
            let graph = Lookup::plain(inner.snapshot.as_ref());
            for row in &rows {
                out.push(crate::to_python::list(py, row, graph)?);
            }
            if rows.len() < want {
                break;
            }
            left -= want;
        }
        Ok(out)
    }

    /// The values of column `index` in every row, whatever the cursor's position; with
    /// `tagged_unions`, UNION values are `(tag, value)` tuples.
    #[pyo3(signature = (index, tagged_unions=false))]
    fn column_values<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        tagged_unions: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_index(index)?;
        self.with_rows(py, |inner, rows| {
            let graph = Lookup {
                graph: inner.snapshot.as_ref(),
                tagged_unions,
            };
            let values = rows
                .iter()
                .map(|row| to_python(py, &row[index], graph))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, values)
        })
    }

    /// The type of column `index` as a nested tuple (see `type_tree`), for building Arrow types.
    fn column_type_tree<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        self.check_index(index)?;
        self.with_rows(py, |inner, rows| {
            let mut seen = TablesSeen::default();
            for row in rows {
                seen.add(&row[index]);
            }
            type_tree(py, &inner.types[index], &seen, &inner.snapshot)
        })
    }

    /// Column `index` of every row as a pyarrow array built in Rust and passed through the Arrow
    /// C data interface, or `None` when its type takes the row path.
    fn column_arrow<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_index(index)?;
        self.with_rows(py, |inner, rows| {
            let values: Vec<&Value> = rows.iter().map(|row| &row[index]).collect();
            match crate::arrow_export::column_array(&inner.types[index], &values) {
                Some(array) => crate::arrow_export::to_pyarrow(py, &array).map(Some),
                None => Ok(None),
            }
        })
    }

    /// Every row as Arrow chunks of `chunk_size` rows (one chunk when `None`), each a list of
    /// pyarrow arrays built from the column batches without Python values; `None` when a
    /// column's type takes the row path.
    #[pyo3(signature = (chunk_size=None))]
    fn arrow_chunks<'py>(
        &self,
        py: Python<'py>,
        chunk_size: Option<usize>,
    ) -> PyResult<Option<Vec<Vec<Bound<'py, PyAny>>>>> {
        let chunk_rows = chunk_size.filter(|&c| c > 0).unwrap_or(usize::MAX);
        let Some(chunks) = self.with_inner(py, |inner| inner.arrow_chunks(chunk_rows))? else {
            return Ok(None);
        };
        chunks
            .iter()
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|array| crate::arrow_export::to_pyarrow(py, array))
                    .collect()
            })
            .collect::<PyResult<_>>()
            .map(Some)
    }

    /// Value `column` of row `row` as Kùzu prints it.
    fn format_value(&self, py: Python<'_>, row: usize, column: usize) -> PyResult<String> {
        self.with_rows(py, |inner, rows| {
            let value = rows
                .get(row)
                .and_then(|r| r.get(column))
                .ok_or_else(|| PyIndexError::new_err("no such value"))?;
            Ok(warren_common::format::to_kuzu_string(
                value,
                inner.snapshot.as_ref(),
            ))
        })
    }

    fn reset_iterator(&self) -> PyResult<()> {
        self.check_open()?;
        self.lock().cursor = 0;
        Ok(())
    }

    fn get_column_names(&self) -> Vec<String> {
        self.lock().columns.clone()
    }

    /// Column types as Kùzu names them (`INT64`, `STRING[]`, `NODE`, ...).
    fn get_column_data_types(&self) -> Vec<String> {
        self.lock().types.iter().map(type_name).collect()
    }

    /// The number of rows. A streamed result not yet read to its end reads ahead (keeping the
    /// rows) up to `COUNT_READ_AHEAD_ROWS` rows to find its end; a longer one counts its rows
    /// by running the query once more (without keeping rows). The count is remembered.
    fn get_num_tuples(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_inner(py, Inner::count)
    }

    fn get_compiling_time(&self) -> f64 {
        self.lock().compile_ms
    }

    fn get_execution_time(&self) -> f64 {
        self.lock().execution_ms
    }
}

impl PyQueryResult {
    fn check_index(&self, index: usize) -> PyResult<()> {
        if index >= self.lock().columns.len() {
            return Err(PyIndexError::new_err("column index out of range"));
        }
        Ok(())
    }
}

/// A type's name as Kùzu prints it in result schemas.
pub fn type_name(ty: &LogicalType) -> String {
    match ty {
        LogicalType::Serial => "SERIAL".into(),
        other => other.to_string(),
    }
}
