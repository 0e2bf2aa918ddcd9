//! `warren._warren.RemoteResult`: a server's answer behind the same native methods as
//! `QueryResult`, so that the Python `QueryResult` (cursor, pandas, Arrow, polars, networkx)
//! serves both. Batches are pulled from the reader thread only when the cursor or a conversion
//! needs them, with the GIL released while waiting. The batches pulled stay until the result is
//! closed (as Kùzu keeps every row), so `reset_iterator` and the conversions need no new run,
//! up to [`RETAINED_BYTES_MAX`]: past it, the batches the cursor has left are dropped, so that
//! iterating a result of any size holds a bounded amount, and `reset_iterator` and the
//! whole-result conversions then raise (re-running the query could repeat a write).

use std::collections::BTreeSet;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::{PyIndexError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use warren_common::column_batch::ColumnBatch;
use warren_common::ids::TableId;
use warren_common::types::{Field, LogicalType};
use warren_common::Value;
use warren_wire::{Header, Trailer};

use crate::query_result::{type_name, ChunkBuilder};
use crate::remote::{Endpoint, Event, Failure};
use crate::to_python::{to_python, Lookup};
use crate::type_tree::{type_tree_with, TablesSeen};
use crate::wire_values::{logical_type, value_at, WireGraph};

/// Bytes of batches a result keeps behind its cursor (see the module's documentation).
pub const RETAINED_BYTES_MAX: usize = 32 << 20;

fn batch_bytes(batch: &ColumnBatch) -> usize {
    batch.columns.iter().map(|c| c.bytes()).sum()
}

struct Inner {
    columns: Vec<String>,
    types: Vec<LogicalType>,
    /// Every batch received so far (those dropped behind the cursor are left empty).
    batches: Vec<ColumnBatch>,
    retained_bytes: usize,
    /// Rows of the batches dropped behind the cursor.
    dropped_rows: usize,
    /// The reader thread's events, until the answer ended or failed.
    events: Option<Receiver<Event>>,
    /// An event received before the result was made (`execute` waits for the first).
    first: Option<Event>,
    trailer: Option<Trailer>,
    failure: Option<Failure>,
    graph: WireGraph,
    /// The cursor: the batch it is in and its row there.
    batch_index: usize,
    row_in_batch: usize,
}

impl Inner {
    /// Waits for the next batch; `false` at the end of the answer.
    fn pull(&mut self) -> Result<bool, Failure> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        let Some(events) = &self.events else {
            return Ok(false);
        };
        let event = match self.first.take() {
            Some(event) => Ok(event),
            None => events.recv(),
        };
        match event {
            Ok(Event::Batch(wire)) => {
                self.graph.merge(wire.graph);
                self.retained_bytes += batch_bytes(&wire.batch);
                self.batches.push(wire.batch);
                return Ok(true);
            }
            Ok(Event::End(trailer)) => self.trailer = Some(trailer),
            Ok(Event::Failed(failure)) => self.failure = Some(failure),
            Ok(Event::Header(_) | Event::Results(_)) => {
                self.failure = Some(Failure::Runtime(
                    "a second header in a remote result".into(),
                ));
            }
            Err(_) => {
                self.failure = Some(Failure::Runtime(
                    "the remote answer's reader stopped before its end".into(),
                ));
            }
        }
        self.events = None;
        match &self.failure {
            Some(failure) => Err(failure.clone()),
            None => Ok(false),
        }
    }

    fn pull_all(&mut self) -> Result<(), Failure> {
        while self.pull()? {}
        Ok(())
    }

    /// Reads the rest of the answer for a conversion that needs every row.
    fn whole(&mut self, what: &str) -> Result<(), Failure> {
        self.check_whole(what)?;
        self.pull_all()
    }

    /// Whether the cursor's row is in a received batch (moving to the next batch as needed).
    fn row_ready(&mut self) -> bool {
        while let Some(batch) = self.batches.get(self.batch_index) {
            if self.row_in_batch < batch.len() {
                return true;
            }
            self.batch_index += 1;
            self.row_in_batch = 0;
            if self.retained_bytes > RETAINED_BYTES_MAX {
                self.drop_behind_cursor();
            }
        }
        false
    }

    /// Drops the batches the cursor has left.
    fn drop_behind_cursor(&mut self) {
        let columns = self.types.len();
        for batch in &mut self.batches[..self.batch_index] {
            if batch.columns.len() == columns && !batch.is_empty() {
                self.retained_bytes -= batch_bytes(batch);
                self.dropped_rows += batch.len();
                *batch = ColumnBatch::new(Vec::new(), 0);
            }
        }
    }

    /// Fails when rows were dropped behind the cursor: `what` needs them.
    fn check_whole(&self, what: &str) -> Result<(), Failure> {
        if self.dropped_rows == 0 {
            return Ok(());
        }
        Err(Failure::Runtime(format!(
            "Runtime exception: {what} needs the rows this remote result dropped behind its \
             cursor (it keeps at most {} MiB of rows read); run the query again.",
            RETAINED_BYTES_MAX >> 20
        )))
    }

    fn has_next(&mut self) -> Result<bool, Failure> {
        while !self.row_ready() {
            if !self.pull()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn next_row(&mut self) -> Result<Option<Vec<Value>>, Failure> {
        if !self.has_next()? {
            return Ok(None);
        }
        let row = self.batches[self.batch_index].row(self.row_in_batch);
        self.row_in_batch += 1;
        Ok(Some(row))
    }

    fn rows(&self) -> usize {
        self.dropped_rows + self.retained_rows()
    }

    fn retained_rows(&self) -> usize {
        self.batches.iter().map(ColumnBatch::len).sum()
    }

    /// Column `index` of every row received.
    fn column(&self, index: usize) -> impl Iterator<Item = Value> + '_ {
        self.batches
            .iter()
            .flat_map(move |b| (0..b.len()).map(move |r| b.columns[index].value(r)))
    }

    fn trailer(&mut self) -> Result<Trailer, Failure> {
        self.pull_all()?;
        Ok(self
            .trailer
            .expect("an answer read to its end has its trailer"))
    }
}

#[pyclass(name = "RemoteResult", module = "warren._warren")]
pub struct PyRemoteResult {
    inner: Mutex<Inner>,
    endpoint: Arc<Endpoint>,
}

impl PyRemoteResult {
    /// A result whose header arrived; `first` is an event already taken from `events`.
    pub fn new(
        header: &Header,
        events: Receiver<Event>,
        first: Option<Event>,
        endpoint: Arc<Endpoint>,
    ) -> Self {
        let inner = Inner {
            columns: header.columns.iter().map(|c| c.name.clone()).collect(),
            types: header.columns.iter().map(|c| logical_type(&c.ty)).collect(),
            batches: Vec::new(),
            retained_bytes: 0,
            dropped_rows: 0,
            events: Some(events),
            first,
            trailer: None,
            failure: None,
            graph: WireGraph::default(),
            batch_index: 0,
            row_in_batch: 0,
        };
        Self {
            inner: Mutex::new(inner),
            endpoint,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("remote result lock")
    }

    /// Runs `f` on the result with the GIL released (it may wait for the network).
    fn with_inner<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Inner) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        py.detach(|| f(&mut self.lock()))
            .map_err(Failure::into_py_err)
    }

    /// Reads the whole answer, then fetches the schemas of the node and rel tables it carried
    /// (for their NULL properties), so that values convert as the embedded API converts them.
    fn whole(&self, py: Python<'_>, what: &str) -> PyResult<()> {
        self.with_inner(py, |inner| inner.whole(what))?;
        self.fetch_schemas(py)
    }

    /// Asks the server for the properties of every table seen without its schema.
    fn fetch_schemas(&self, py: Python<'_>) -> PyResult<()> {
        let labels = self.lock().graph.labels_without_schema();
        for label in labels {
            let properties = if label.contains(['\'', '\\']) {
                Vec::new()
            } else {
                let query = format!("CALL table_info('{label}') RETURN *");
                let answer = py
                    .detach(|| self.endpoint.query(&query))
                    .map_err(|e| self.endpoint.python_error(e))?;
                table_properties(&answer)
            };
            self.lock().graph.add_schema(label, properties);
        }
        Ok(())
    }

    fn check_index(&self, index: usize) -> PyResult<()> {
        if index >= self.lock().columns.len() {
            return Err(PyIndexError::new_err("column index out of range"));
        }
        Ok(())
    }

    fn rows_to_python<'py>(
        &self,
        py: Python<'py>,
        rows: &[Vec<Value>],
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.fetch_schemas(py)?;
        let inner = self.lock();
        let graph = Lookup::plain(&inner.graph);
        rows.iter()
            .map(|row| crate::to_python::list(py, row, graph))
            .collect()
    }
}

/// The (name, type) of each property in a `CALL table_info(...)` answer (columns 1 and 2).
fn table_properties(answer: &warren_client::Answer) -> Vec<(Arc<str>, LogicalType)> {
    let mut graph = WireGraph::default();
    let mut names = Vec::new();
    let mut types = Vec::new();
    for chunk in &answer.chunks {
        let into = match chunk.column {
            1 => &mut names,
            2 => &mut types,
            _ => continue,
        };
        for row in 0..chunk.data.rows() {
            if let Ok(Value::String(text)) =
                value_at(&chunk.data, &LogicalType::String, row, &mut graph)
            {
                into.push(text);
            }
        }
    }
    names
        .into_iter()
        .zip(types)
        .map(|(name, ty)| (name, LogicalType::parse(&ty).unwrap_or(LogicalType::Any)))
        .collect()
}

/// The node and rel tables the values of a column refer to.
fn tables_seen(values: impl Iterator<Item = Value>) -> TablesSeen {
    let mut seen = TablesSeen::default();
    for value in values {
        seen.add(&value);
    }
    seen
}

/// The properties of `tables` (in table order, each name once), from the schemas fetched.
fn properties_of(graph: &WireGraph, tables: &BTreeSet<TableId>) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    for &table in tables {
        for (name, ty) in graph.schema(table) {
            if !fields.iter().any(|f| f.name == name.as_ref()) {
                fields.push(Field {
                    name: name.to_string(),
                    ty,
                });
            }
        }
    }
    fields
}

#[pymethods]
impl PyRemoteResult {
    fn has_next(&self, py: Python<'_>) -> PyResult<bool> {
        if self.lock().row_ready() {
            return Ok(true);
        }
        self.with_inner(py, Inner::has_next)
    }

    /// The next row as a list; an error past the end.
    fn get_next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let ready = {
            let mut inner = self.lock();
            if inner.row_ready() {
                inner.next_row().map_err(Failure::into_py_err)?
            } else {
                None
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
        let mut rows = self.rows_to_python(py, &[row])?;
        Ok(rows.pop().expect("one row"))
    }

    /// Up to `count` next rows (all remaining ones when `count` is `None`).
    #[pyo3(signature = (count=None))]
    fn get_n<'py>(
        &self,
        py: Python<'py>,
        count: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let mut out = Vec::new();
        let mut left = count.unwrap_or(usize::MAX);
        while left > 0 {
            let want = left.min(crate::query_result::CURSOR_BATCH_ROWS);
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
            let done = rows.len() < want;
            out.extend(self.rows_to_python(py, &rows)?);
            if done {
                break;
            }
            left -= want;
        }
        Ok(out)
    }

    /// The values of column `index` in every row, whatever the cursor's position.
    #[pyo3(signature = (index, tagged_unions=false))]
    fn column_values<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        tagged_unions: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_index(index)?;
        self.whole(py, "converting a column")?;
        let inner = self.lock();
        let graph = Lookup {
            graph: &inner.graph,
            tagged_unions,
        };
        let values = inner
            .column(index)
            .map(|v| to_python(py, &v, graph))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, values)
    }

    /// The type of column `index` as a nested tuple, for building Arrow types.
    fn column_type_tree<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        self.check_index(index)?;
        self.whole(py, "converting a column")?;
        let inner = self.lock();
        let seen = tables_seen(inner.column(index));
        let graph = &inner.graph;
        type_tree_with(py, &inner.types[index], &seen, &|tables, _| {
            properties_of(graph, tables)
        })
    }

    /// Column `index` as a pyarrow array built in Rust, or `None` when its type takes the row
    /// path.
    fn column_arrow<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_index(index)?;
        self.whole(py, "converting a column")?;
        let inner = self.lock();
        let values: Vec<Value> = inner.column(index).collect();
        let refs: Vec<&Value> = values.iter().collect();
        match crate::arrow_export::column_array(&inner.types[index], &refs) {
            Some(array) => crate::arrow_export::to_pyarrow(py, &array).map(Some),
            None => Ok(None),
        }
    }

    /// Every row as Arrow chunks of `chunk_size` rows (one chunk when `None`), built from the
    /// column batches (typed vectors move into Arrow buffers); `None` when a column's type
    /// takes the row path.
    #[pyo3(signature = (chunk_size=None))]
    fn arrow_chunks<'py>(
        &self,
        py: Python<'py>,
        chunk_size: Option<usize>,
    ) -> PyResult<Option<Vec<Vec<Bound<'py, PyAny>>>>> {
        let chunk_rows = chunk_size.filter(|&c| c > 0).unwrap_or(usize::MAX);
        let chunks = self.with_inner(py, |inner| {
            inner.whole("converting the result")?;
            if !inner.types.iter().all(crate::arrow_export::has_arrow_form) {
                return Ok(None);
            }
            let mut builder = ChunkBuilder::new(&inner.types, chunk_rows);
            for batch in &inner.batches {
                builder.push(batch);
            }
            Ok(builder.finish())
        })?;
        let Some(chunks) = chunks else {
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
        self.check_index(column)?;
        self.whole(py, "formatting a value")?;
        let inner = self.lock();
        let value = inner
            .column(column)
            .nth(row)
            .ok_or_else(|| PyIndexError::new_err("no such value"))?;
        Ok(warren_common::format::to_kuzu_string(&value, &inner.graph))
    }

    /// The rows received from the server so far (read ahead of the cursor or not).
    fn received_rows(&self) -> usize {
        self.lock().rows()
    }

    /// The bytes of the batches kept.
    fn retained_bytes(&self) -> usize {
        self.lock().retained_bytes
    }

    /// Moves the cursor back to the first row; an error when rows behind it were dropped.
    fn reset_iterator(&self) -> PyResult<()> {
        let mut inner = self.lock();
        inner
            .check_whole("reset_iterator")
            .map_err(Failure::into_py_err)?;
        inner.batch_index = 0;
        inner.row_in_batch = 0;
        Ok(())
    }

    fn get_column_names(&self) -> Vec<String> {
        self.lock().columns.clone()
    }

    /// Column types as Kùzu names them (`INT64`, `STRING[]`, `NODE`, ...).
    fn get_column_data_types(&self) -> Vec<String> {
        self.lock().types.iter().map(type_name).collect()
    }

    /// The number of rows (reads the rest of the answer).
    fn get_num_tuples(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_inner(py, |inner| {
            inner.pull_all()?;
            Ok(inner.rows())
        })
    }

    /// The server's compile time in milliseconds (it comes with the answer's end).
    fn get_compiling_time(&self, py: Python<'_>) -> PyResult<f64> {
        let trailer = self.with_inner(py, Inner::trailer)?;
        Ok(trailer.compile_time_us as f64 / 1000.0)
    }

    /// The server's execution time in milliseconds (it comes with the answer's end).
    fn get_execution_time(&self, py: Python<'_>) -> PyResult<f64> {
        let trailer = self.with_inner(py, Inner::trailer)?;
        Ok(trailer.execution_time_us as f64 / 1000.0)
    }
}
