//! The native part of Warren's Python package (`warren._warren`): a database, connections that
//! run queries with the GIL released, and results materialized as Kùzu materializes them. The
//! pure-Python package `warren` wraps these classes in Kùzu's API shape.

mod arrow_export;
mod connection;
mod database;
mod from_python;
mod query_result;
mod remote;
mod remote_result;
mod to_python;
mod type_tree;
mod user_function;
mod wire_values;

use pyo3::prelude::*;

pub use connection::PyConnection;
pub use database::PyDatabase;
pub use query_result::PyQueryResult;

/// The version of the segment file format this build reads and writes.
const STORAGE_VERSION: u32 = warren_storage::segment::FORMAT_VERSION;

/// The names that the statements of `query` read a table (a data frame) from.
#[pyfunction]
fn table_sources(query: &str) -> Vec<String> {
    connection::table_sources(query)
}

#[pymodule]
fn _warren(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyDatabase>()?;
    module.add_class::<PyConnection>()?;
    module.add_class::<PyQueryResult>()?;
    module.add_class::<remote::PyRemoteConnection>()?;
    module.add_class::<remote_result::PyRemoteResult>()?;
    module.add_function(wrap_pyfunction!(table_sources, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("storage_version", STORAGE_VERSION)?;
    module.add("ID", to_python::ID)?;
    module.add("LABEL", to_python::LABEL)?;
    module.add("SRC", to_python::SRC)?;
    module.add("DST", to_python::DST)?;
    module.add("NODES", to_python::NODES)?;
    module.add("RELS", to_python::RELS)?;
    Ok(())
}
