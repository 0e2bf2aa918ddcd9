//! `warren._warren.Connection`: runs statements with the GIL released; each statement's rows are
//! read to the end before `execute` returns (as Kùzu does), so errors surface there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use warren_common::{LogicalType, Value};

use crate::database::{ConnectionSlot, PyDatabase, Shared};
use crate::from_python::from_python;
use crate::query_result::{Materialized, Outcome, PyQueryResult, Streamed};
use crate::user_function::PyUserFunction;

/// A Warren error as Python's `RuntimeError` with Warren's (Kùzu's) message text.
pub fn runtime_error(error: warren::Error) -> PyErr {
    PyRuntimeError::new_err(error.to_string())
}

#[pyclass(name = "Connection", module = "warren._warren")]
pub struct PyConnection {
    slot: Arc<ConnectionSlot>,
    interrupt: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

#[pymethods]
impl PyConnection {
    #[new]
    fn new(database: &PyDatabase) -> PyResult<Self> {
        let (slot, shared) = database.connect()?;
        let interrupt = slot
            .lock()
            .expect("connection lock")
            .as_ref()
            .map(warren::Connection::interrupt_flag)
            .unwrap_or_default();
        Ok(Self {
            slot,
            interrupt,
            shared,
        })
    }

    /// Runs every statement of `query` with `parameters` and returns one result per statement.
    #[pyo3(signature = (query, parameters=None))]
    fn execute(
        &self,
        py: Python<'_>,
        query: &str,
        parameters: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyQueryResult>> {
        let parameters = convert_parameters(parameters)?;
        let slot = &self.slot;
        let results = py.detach(|| -> Result<Vec<Outcome>, PyErr> {
            let mut guard = slot.lock().expect("connection lock");
            let connection = guard.as_mut().ok_or_else(closed_error)?;
            run_script(connection, query, &parameters).map_err(runtime_error)
        });
        let results = results.map_err(|e| self.explain_closed(e))?;
        Ok(results
            .into_iter()
            .map(|m| PyQueryResult::new(m, self.shared.clone()))
            .collect())
    }

    /// The parse error of `query`, or `None` when it parses.
    fn check_syntax(&self, query: &str) -> Option<String> {
        warren_cypher::parse_script(query)
            .err()
            .map(|e| e.to_string())
    }

    /// Sets how many threads a query may use (0 keeps the default).
    fn set_max_threads(&self, py: Python<'_>, threads: i64) -> PyResult<()> {
        if threads <= 0 {
            return Ok(());
        }
        self.set(py, "threads", Value::Int64(threads))
    }

    /// Sets the query timeout in milliseconds (0 for none).
    fn set_timeout(&self, py: Python<'_>, milliseconds: i64) -> PyResult<()> {
        self.set(py, "timeout", Value::Int64(milliseconds.max(0)))
    }

    /// Defines the scalar function `name` calling `udf`, with its parameter and return types as
    /// Kùzu type names (the Python wrapper infers them from annotations).
    #[pyo3(signature = (name, udf, parameter_types, return_type, null_in_null_out, catch_exceptions))]
    fn create_function(
        &self,
        name: String,
        udf: &Bound<'_, PyAny>,
        parameter_types: Vec<String>,
        return_type: &str,
        null_in_null_out: bool,
        catch_exceptions: bool,
    ) -> PyResult<()> {
        let parse = |text: &str| {
            LogicalType::parse(text).map_err(|e| runtime_error(warren::Error::Catalog(e)))
        };
        let function = PyUserFunction {
            name,
            callable: udf.clone().unbind(),
            parameter_types: parameter_types
                .iter()
                .map(|t| parse(t))
                .collect::<PyResult<_>>()?,
            return_type: parse(return_type)?,
            null_in_null_out,
            catch_exceptions,
        };
        let function: Arc<dyn warren::UserFunction> = Arc::new(function);
        self.with_connection(udf.py(), |connection| connection.create_function(function))
    }

    /// Removes a function defined with `create_function`.
    fn remove_function(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with_connection(py, |connection| connection.remove_function(name))
    }

    /// Stops the query that is running on this connection, from any thread.
    fn interrupt(&self) {
        self.interrupt.store(true, Ordering::Relaxed);
    }

    /// Closes the connection; a second call does nothing. A running query is waited for, with
    /// the GIL released.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.slot.lock().expect("connection lock").take());
    }

    #[getter]
    fn is_closed(&self) -> bool {
        self.slot.lock().expect("connection lock").is_none()
    }
}

impl PyConnection {
    fn set(&self, py: Python<'_>, name: &str, value: Value) -> PyResult<()> {
        self.with_connection(py, |connection| connection.set(name, value))
    }

    /// Runs `f` on the open connection. The lock is waited for with the GIL released: a query
    /// that holds it may be calling a Python user function, which needs the GIL.
    fn with_connection<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut warren::Connection) -> warren::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut guard = self.slot.lock().expect("connection lock");
            let connection = guard.as_mut().ok_or_else(closed_error)?;
            f(connection).map_err(runtime_error)
        })
    }

    /// A closed connection whose database was closed reports the database as closed.
    fn explain_closed(&self, error: PyErr) -> PyErr {
        if self.shared.is_closed() {
            PyRuntimeError::new_err("Database is closed")
        } else {
            error
        }
    }
}

fn closed_error() -> PyErr {
    PyRuntimeError::new_err("Connection is closed.")
}

/// The parameters dict as Warren values; Kùzu's errors for a non-dict or a non-string name.
pub(crate) fn convert_parameters(
    parameters: Option<&Bound<'_, PyAny>>,
) -> PyResult<HashMap<String, Value>> {
    let Some(parameters) = parameters.filter(|p| !p.is_none()) else {
        return Ok(HashMap::new());
    };
    let dict = parameters
        .cast::<PyDict>()
        .map_err(|_| PyRuntimeError::new_err("Parameters must be a dict"))?;
    let mut values = HashMap::with_capacity(dict.len());
    for (name, value) in dict.iter() {
        if !name.is_instance_of::<PyString>() {
            return Err(PyRuntimeError::new_err(format!(
                "Parameter name must be of type string but got {}",
                name.get_type().str()?
            )));
        }
        values.insert(name.extract::<String>()?, from_python(&value)?);
    }
    Ok(values)
}

/// Runs each statement of `text` in turn. Every statement but the last is read to its end
/// (a later one may depend on its writes); the last one, when it is a read-only query, streams:
/// its first batch is read here, so that an error in its first rows surfaces at `execute`.
fn run_script(
    connection: &mut warren::Connection,
    text: &str,
    parameters: &HashMap<String, Value>,
) -> warren::Result<Vec<Outcome>> {
    let statements = warren_cypher::parse_script(text)?;
    if statements.is_empty() {
        return Err(warren::Error::runtime(
            "Connection Exception: Query is empty.",
        ));
    }
    let mut results = Vec::with_capacity(statements.len());
    for (index, statement) in statements.iter().enumerate() {
        let started = Instant::now();
        let mut result = connection.execute(statement, parameters)?;
        let compile_ms = result.compile_time().as_secs_f64() * 1e3;
        if index + 1 == statements.len() && result.can_rerun() {
            let first = result.next_columns(crate::query_result::CURSOR_BATCH_ROWS)?;
            results.push(Outcome::Streamed(Streamed {
                result,
                first,
                compile_ms,
                execution_ms: started.elapsed().as_secs_f64() * 1e3 - compile_ms,
            }));
            continue;
        }
        let rows = result.collect_rows()?;
        results.push(Outcome::Materialized(Materialized {
            columns: result.column_names().to_vec(),
            types: result.column_types().to_vec(),
            rows,
            snapshot: result.snapshot().clone(),
            compile_ms: result.compile_time().as_secs_f64() * 1e3,
            execution_ms: started.elapsed().as_secs_f64() * 1e3 - compile_ms,
        }));
    }
    Ok(results)
}

/// The names that `LOAD FROM name` and `COPY t FROM name` read a table from, in `text`'s
/// statements (empty when the text does not parse; running it reports the error).
pub fn table_sources(text: &str) -> Vec<String> {
    use warren_cypher::ast::{Clause, Query, Statement};
    let Ok(statements) = warren_cypher::parse_script(text) else {
        return Vec::new();
    };
    let from_query = |query: &Query| -> Vec<String> {
        query
            .parts
            .iter()
            .flat_map(|part| &part.clauses)
            .filter_map(|clause| match clause {
                Clause::LoadFrom(load) => load.parameter.clone(),
                _ => None,
            })
            .collect()
    };
    statements
        .iter()
        .flat_map(|statement| match statement {
            Statement::Query(query) => from_query(query),
            Statement::CopyFromQuery { query, .. } => from_query(query),
            _ => Vec::new(),
        })
        .collect()
}
