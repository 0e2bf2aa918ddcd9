//! `warren._warren.QueryResult`: a statement's rows, read to the end, with a cursor.

use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use warren::Snapshot;
use warren_common::types::LogicalType;
use warren_common::Value;

use crate::database::Shared;
use crate::to_python::{to_python, Lookup};
use crate::type_tree::{type_tree, TablesSeen};

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

#[pyclass(name = "QueryResult", module = "warren._warren")]
pub struct PyQueryResult {
    result: Materialized,
    cursor: usize,
    shared: Arc<Shared>,
}

impl PyQueryResult {
    pub fn new(result: Materialized, shared: Arc<Shared>) -> Self {
        Self {
            result,
            cursor: 0,
            shared,
        }
    }

    fn check_open(&self) -> PyResult<()> {
        if self.shared.is_closed() {
            return Err(PyRuntimeError::new_err("the parent database is closed"));
        }
        Ok(())
    }

    /// The rows `[start, end)` as Python lists.
    fn rows_as_lists<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        end: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let graph = Lookup::plain(self.result.snapshot.as_ref());
        self.result.rows[start..end]
            .iter()
            .map(|row| crate::to_python::list(py, row, graph))
            .collect()
    }
}

#[pymethods]
impl PyQueryResult {
    fn has_next(&self) -> PyResult<bool> {
        self.check_open()?;
        Ok(self.cursor < self.result.rows.len())
    }

    /// The next row as a list; an error past the end.
    fn get_next<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_open()?;
        if self.cursor >= self.result.rows.len() {
            return Err(PyRuntimeError::new_err(
                "Runtime exception: No more tuples in the query result.",
            ));
        }
        let row = self.rows_as_lists(py, self.cursor, self.cursor + 1)?;
        self.cursor += 1;
        Ok(row.into_iter().next().expect("one row"))
    }

    /// Up to `count` next rows (all remaining ones when `count` is `None`).
    #[pyo3(signature = (count=None))]
    fn get_n<'py>(
        &mut self,
        py: Python<'py>,
        count: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.check_open()?;
        let remaining = self.result.rows.len() - self.cursor;
        let end = self.cursor + count.unwrap_or(remaining).min(remaining);
        let rows = self.rows_as_lists(py, self.cursor, end)?;
        self.cursor = end;
        Ok(rows)
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
        self.check_open()?;
        if index >= self.result.columns.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "column index out of range",
            ));
        }
        let graph = Lookup {
            graph: self.result.snapshot.as_ref(),
            tagged_unions,
        };
        let values = self
            .result
            .rows
            .iter()
            .map(|row| to_python(py, &row[index], graph))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, values)
    }

    /// The type of column `index` as a nested tuple (see `type_tree`), for building Arrow types.
    fn column_type_tree<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let ty =
            self.result.types.get(index).ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err("column index out of range")
            })?;
        let mut seen = TablesSeen::default();
        for row in &self.result.rows {
            seen.add(&row[index]);
        }
        type_tree(py, ty, &seen, &self.result.snapshot)
    }

    /// Column `index` of every row as a pyarrow array built in Rust and passed through the Arrow
    /// C data interface, or `None` when its type takes the row path.
    fn column_arrow<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_open()?;
        let ty =
            self.result.types.get(index).ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err("column index out of range")
            })?;
        let values: Vec<&Value> = self.result.rows.iter().map(|row| &row[index]).collect();
        match crate::arrow_export::column_array(ty, &values) {
            Some(array) => crate::arrow_export::to_pyarrow(py, &array).map(Some),
            None => Ok(None),
        }
    }

    /// Value `column` of row `row` as Kùzu prints it.
    fn format_value(&self, row: usize, column: usize) -> PyResult<String> {
        let value = self
            .result
            .rows
            .get(row)
            .and_then(|r| r.get(column))
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("no such value"))?;
        Ok(warren_common::format::to_kuzu_string(
            value,
            self.result.snapshot.as_ref(),
        ))
    }

    fn reset_iterator(&mut self) -> PyResult<()> {
        self.check_open()?;
        self.cursor = 0;
        Ok(())
    }

    fn get_column_names(&self) -> Vec<String> {
        self.result.columns.clone()
    }

    /// Column types as Kùzu names them (`INT64`, `STRING[]`, `NODE`, ...).
    fn get_column_data_types(&self) -> Vec<String> {
        self.result.types.iter().map(type_name).collect()
    }

    fn get_num_tuples(&self) -> usize {
        self.result.rows.len()
    }

    fn get_compiling_time(&self) -> f64 {
        self.result.compile_ms
    }

    fn get_execution_time(&self) -> f64 {
        self.result.execution_ms
    }
}

/// A type's name as Kùzu prints it in result schemas.
pub fn type_name(ty: &LogicalType) -> String {
    match ty {
        LogicalType::Serial => "SERIAL".into(),
        other => other.to_string(),
    }
}
