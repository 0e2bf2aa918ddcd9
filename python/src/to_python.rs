//! Warren values as Python objects, the way Kùzu's Python package returns them: numbers as
//! `int`/`float`, DECIMAL as `decimal.Decimal`, temporal values as `datetime` objects, UUID as
//! `uuid.UUID`, BLOB as `bytes`, LIST as `list`, STRUCT and MAP as `dict`, UNION as its member,
//! and nodes, rels and paths as dicts keyed by `_id`, `_label`, `_src`, `_dst`, `_nodes`, `_rels`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDate, PyDateTime, PyDelta, PyDict, PyList, PyTzInfo};
use warren_common::ids::InternalId;
use warren_common::temporal::{civil_from_days, Interval, MICROS_PER_DAY, MICROS_PER_SECOND};
use warren_common::value::{GraphLookup, NodeValue, PathValue, RelValue};
use warren_common::Value;

/// The key of a node's or rel's id in its dict.
pub const ID: &str = "_id";
/// The key of a node's or rel's table name.
pub const LABEL: &str = "_label";
/// The key of a rel's source node id.
pub const SRC: &str = "_src";
/// The key of a rel's destination node id.
pub const DST: &str = "_dst";
/// The key of a path's (or recursive rel's) node list.
pub const NODES: &str = "_nodes";
/// The key of a path's (or recursive rel's) rel list.
pub const RELS: &str = "_rels";

/// How values are looked up and shaped: `graph` resolves the properties of nodes and rels;
/// with `tagged_unions`, a UNION value becomes a `(tag, value)` tuple (for building Arrow
/// unions) instead of its member's value.
#[derive(Clone, Copy)]
pub struct Lookup<'a> {
    pub graph: &'a dyn GraphLookup,
    pub tagged_unions: bool,
}

impl<'a> Lookup<'a> {
    /// Plain values, as `get_next` returns them.
    pub fn plain(graph: &'a dyn GraphLookup) -> Self {
        Self {
            graph,
            tagged_unions: false,
        }
    }
}

/// Converts one value.
pub fn to_python<'py>(
    py: Python<'py>,
    value: &Value,
    graph: Lookup<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Value::Int8(v) => v.into_pyobject(py)?.into_any(),
        Value::Int16(v) => v.into_pyobject(py)?.into_any(),
        Value::Int32(v) => v.into_pyobject(py)?.into_any(),
        Value::Int64(v) => v.into_pyobject(py)?.into_any(),
        Value::Int128(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt8(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt16(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt32(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt64(v) => v.into_pyobject(py)?.into_any(),
        Value::Float(v) => f64::from(*v).into_pyobject(py)?.into_any(),
        Value::Double(v) => v.into_pyobject(py)?.into_any(),
        Value::Decimal(d) => decimal(py, d.value, d.scale)?,
        Value::Date(days) => date(py, i64::from(*days))?.into_any(),
        Value::Timestamp(us) => timestamp(py, *us, false)?.into_any(),
        Value::TimestampTz(us) => timestamp(py, *us, true)?.into_any(),
        Value::TimestampNs(ns) => timestamp(py, ns.div_euclid(1000), false)?.into_any(),
        Value::TimestampMs(ms) => timestamp(py, ms.saturating_mul(1000), false)?.into_any(),
        Value::TimestampSec(s) => timestamp(py, s.saturating_mul(1_000_000), false)?.into_any(),
        Value::Interval(interval) => delta(py, *interval)?.into_any(),
        Value::String(s) => s.as_ref().into_pyobject(py)?.into_any(),
        Value::Blob(bytes) => PyBytes::new(py, bytes).into_any(),
        Value::Uuid(u) => uuid(py, *u)?,
        Value::List(values) => list(py, values, graph)?.into_any(),
        Value::Struct(s) => {
            let dict = PyDict::new(py);
            for (name, v) in &s.fields {
                dict.set_item(name.as_ref(), to_python(py, v, graph)?)?;
            }
            dict.into_any()
        }
        Value::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries.iter() {
                dict.set_item(to_python(py, k, graph)?, to_python(py, v, graph)?)?;
            }
            dict.into_any()
        }
        Value::Union(u) if graph.tagged_unions => {
            let value = to_python(py, &u.value, graph)?;
            pyo3::types::PyTuple::new(py, [u.tag.as_ref().into_pyobject(py)?.into_any(), value])?
                .into_any()
        }
        Value::Union(u) => to_python(py, &u.value, graph)?,
        Value::InternalId(id) => internal_id(py, *id)?.into_any(),
        Value::Node(node) => node_dict(py, node, graph)?.into_any(),
        Value::Rel(rel) => rel_dict(py, rel, graph)?.into_any(),
        Value::Path(path) => path_dict(py, path, graph)?.into_any(),
    })
}

/// A list of values.
pub fn list<'py>(
    py: Python<'py>,
    values: &[Value],
    graph: Lookup<'_>,
) -> PyResult<Bound<'py, PyList>> {
    let items = values
        .iter()
        .map(|v| to_python(py, v, graph))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `{"offset": o, "table": t}`, Kùzu's form of an internal id.
pub fn internal_id(py: Python<'_>, id: InternalId) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("offset", id.offset)?;
    dict.set_item("table", id.table)?;
    Ok(dict)
}

/// Copies the properties of a node or rel into `dict`, keeping only the projected ones when
/// the value carries a projection list.
fn add_properties(
    dict: &Bound<'_, PyDict>,
    id: InternalId,
    is_rel: bool,
    projection: Option<&Arc<Vec<Arc<str>>>>,
    graph: Lookup<'_>,
) -> PyResult<()> {
    let py = dict.py();
    for (name, value) in graph.graph.properties(id, is_rel) {
        if let Some(keep) = projection {
            if !keep.iter().any(|k| k.as_ref() == name.as_ref()) {
                continue;
            }
        }
        dict.set_item(name.as_ref(), to_python(py, &value, graph)?)?;
    }
    Ok(())
}

/// A node: `{_id, _label, property...}`.
pub fn node_dict<'py>(
    py: Python<'py>,
    node: &NodeValue,
    graph: Lookup<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(ID, internal_id(py, node.id)?)?;
    dict.set_item(LABEL, graph.graph.table_name(node.id.table))?;
    add_properties(&dict, node.id, false, node.projection.as_ref(), graph)?;
    Ok(dict)
}

/// A rel: `{_src, _dst, _label, _id, property...}`.
pub fn rel_dict<'py>(
    py: Python<'py>,
    rel: &RelValue,
    graph: Lookup<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let (src, dst) = graph.graph.rel_endpoints(rel.id);
    dict.set_item(SRC, internal_id(py, src)?)?;
    dict.set_item(DST, internal_id(py, dst)?)?;
    dict.set_item(LABEL, graph.graph.table_name(rel.id.table))?;
    dict.set_item(ID, internal_id(py, rel.id)?)?;
    add_properties(&dict, rel.id, true, rel.projection.as_ref(), graph)?;
    Ok(dict)
}

/// A path or recursive rel: `{_nodes: [...], _rels: [...]}`.
pub fn path_dict<'py>(
    py: Python<'py>,
    path: &PathValue,
    graph: Lookup<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let nodes = path
        .nodes
        .iter()
        .map(|n| node_dict(py, n, graph))
        .collect::<PyResult<Vec<_>>>()?;
    let rels = path
        .rels
        .iter()
        .map(|r| rel_dict(py, r, graph))
        .collect::<PyResult<Vec<_>>>()?;
    let dict = PyDict::new(py);
    dict.set_item(NODES, PyList::new(py, nodes)?)?;
    dict.set_item(RELS, PyList::new(py, rels)?)?;
    Ok(dict)
}

/// Days since the epoch as a `datetime.date`.
pub fn date(py: Python<'_>, days: i64) -> PyResult<Bound<'_, PyDate>> {
    let (year, month, day) = civil_from_days(days);
    let year = i32::try_from(year).map_err(|_| out_of_range("DATE"))?;
    PyDate::new(py, year, month as u8, day as u8)
}

/// Microseconds since the epoch as a `datetime.datetime`, in UTC when `utc` is set (TIMESTAMP
/// WITH TIME ZONE) and naive otherwise, as Kùzu returns them.
pub fn timestamp(py: Python<'_>, micros: i64, utc: bool) -> PyResult<Bound<'_, PyDateTime>> {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let in_day = micros.rem_euclid(MICROS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let year = i32::try_from(year).map_err(|_| out_of_range("TIMESTAMP"))?;
    let seconds = in_day / MICROS_PER_SECOND;
    let micro = (in_day % MICROS_PER_SECOND) as u32;
    let tz = if utc {
        Some(PyTzInfo::utc(py)?.to_owned())
    } else {
        None
    };
    PyDateTime::new(
        py,
        year,
        month as u8,
        day as u8,
        (seconds / 3600) as u8,
        ((seconds / 60) % 60) as u8,
        (seconds % 60) as u8,
        micro,
        tz.as_ref(),
    )
}

/// An INTERVAL as a `datetime.timedelta`; a month counts as 30 days, as in Kùzu.
pub fn delta(py: Python<'_>, interval: Interval) -> PyResult<Bound<'_, PyDelta>> {
    let days = i64::from(interval.months) * 30
        + i64::from(interval.days)
        + interval.micros.div_euclid(MICROS_PER_DAY);
    let rest = interval.micros.rem_euclid(MICROS_PER_DAY);
    let days = i32::try_from(days).map_err(|_| out_of_range("INTERVAL"))?;
    PyDelta::new(
        py,
        days,
        (rest / MICROS_PER_SECOND) as i32,
        (rest % MICROS_PER_SECOND) as i32,
        true,
    )
}

fn out_of_range(type_name: &str) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(format!(
        "Conversion exception: {type_name} value out of the range Python supports."
    ))
}

/// A class from a Python module, looked up once per interpreter.
fn cached_class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let class = cell.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import(module)?.getattr(name)?.unbind())
    })?;
    Ok(class.bind(py).clone())
}

/// `decimal.Decimal` from an unscaled integer and a scale.
fn decimal(py: Python<'_>, unscaled: i128, scale: u8) -> PyResult<Bound<'_, PyAny>> {
    static DECIMAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = cached_class(py, &DECIMAL, "decimal", "Decimal")?;
    let sign = i32::from(unscaled < 0);
    let digits: Vec<u32> = unscaled
        .unsigned_abs()
        .to_string()
        .bytes()
        .map(|b| u32::from(b - b'0'))
        .collect();
    let digits = pyo3::types::PyTuple::new(py, digits)?;
    class.call1(((sign, digits, -i32::from(scale)),))
}

/// `uuid.UUID` from its 128-bit value.
fn uuid(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    static UUID: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = cached_class(py, &UUID, "uuid", "UUID")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("int", value)?;
    class.call((), Some(&kwargs))
}
