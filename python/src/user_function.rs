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
    fn invoke(&self, py: Python<'_>, args: &[Value]) -> PyResult<Value> {
        let lookup = Lookup::plain(&NoGraph);
        let args = args
            .iter()
            .map(|v| to_python(py, v, lookup))
            .collect::<PyResult<Vec<_>>>()?;
        let result = self.callable.bind(py).call1(PyTuple::new(py, args)?)?;
        from_python_as(&result, &self.return_type)
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
            Ok(value) => Ok(value),
            Err(_) if self.catch_exceptions => Ok(Value::Null),
            Err(error) => Err(Error::runtime(error.to_string())),
        })
    }
}
