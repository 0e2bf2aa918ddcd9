//! Python callables as Warren user functions (`Connection.create_function`). A query calls
//! them with the GIL released, so each call attaches to the interpreter, converts the row's
//! arguments to Python objects and the result back to the declared return type.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use warren::{Error, LogicalType, Result, Value};
use warren_common::value::NoGraph;

use crate::from_python::from_python_as;
use crate::to_python::{to_python, Lookup};

/// A Python callable with the types it was declared (or inferred) to take and return.
#[derive(Debug)]
pub struct PyUserFunction {
    pub name: String,
    pub callable: Py<PyAny>,
    pub parameter_types: Vec<LogicalType>,
    pub return_type: LogicalType,
    /// Kùzu's `default_null_handling`: a NULL argument gives NULL without a call.
    pub null_in_null_out: bool,
    /// Kùzu's `catch_exceptions`: an exception raised by the callable gives NULL.
    pub catch_exceptions: bool,
}

impl PyUserFunction {
    /// Calls the callable; `Ok(Err(_))` is an exception it raised, `Err(_)` a failure to
    /// convert its arguments or result.
    fn invoke(&self, py: Python<'_>, args: &[Value]) -> PyResult<PyResult<Value>> {
        let lookup = Lookup::plain(&NoGraph);
        let args = args
            .iter()
            .map(|v| to_python(py, v, lookup))
            .collect::<PyResult<Vec<_>>>()?;
        let args = PyTuple::new(py, args)?;
        Ok(match self.callable.bind(py).call1(args) {
            Ok(result) => Ok(from_python_as(&result, &self.return_type)?),
            Err(raised) => Err(raised),
        })
    }
}

/// A conversion error raised by `from_python` or `to_python` (a `RuntimeError` carrying Kùzu's
/// message) as the Warren error it names.
fn conversion_error(py: Python<'_>, error: &PyErr) -> Error {
    let message = error.value(py).to_string();
    match message.strip_prefix("Conversion exception: ") {
        Some(rest) => Error::Conversion(rest.to_string()),
        None => Error::runtime(
            message
                .trim_start_matches("Runtime exception: ")
                .to_string(),
        ),
    }
}

impl warren::UserFunction for PyUserFunction {
    fn name(&self) -> &str {
        &self.name
    }

    fn parameter_types(&self) -> &[LogicalType] {
        &self.parameter_types
    }

    fn return_type(&self) -> &LogicalType {
        &self.return_type
    }

    fn null_in_null_out(&self) -> bool {
        self.null_in_null_out
    }

    fn call(&self, args: &[Value]) -> Result<Value> {
        Python::attach(|py| match self.invoke(py, args) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) if self.catch_exceptions => Ok(Value::Null),
            Ok(Err(raised)) => Err(Error::runtime(raised.to_string())),
            Err(error) => Err(conversion_error(py, &error)),
        })
    }
}
