//! Column types as nested Python tuples, from which the Python side builds exact Arrow types:
//! a scalar is its name (`"INT64"`), and nested types are `("LIST", child)`,
//! `("ARRAY", child, size)`, `("DECIMAL", precision, scale)`, `("STRUCT", fields)`,
//! `("UNION", fields)`, `("MAP", key, value)`, `("NODE", fields)`, `("REL", fields)` and
//! `("RECURSIVE_REL", node, rel)`, where `fields` is a list of `(name, child)`. A node or rel
//! type lists the properties of every table its column's values come from.

use std::collections::BTreeSet;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;
use warren::Snapshot;
use warren_common::ids::TableId;
use warren_common::types::{Field, LogicalType};
use warren_common::value::GraphLookup;
use warren_common::Value;

/// The node and rel tables that a column's values refer to.
#[derive(Debug, Default)]
pub struct TablesSeen {
    nodes: BTreeSet<TableId>,
    rels: BTreeSet<TableId>,
}

impl TablesSeen {
    /// Walks `value`, nested values included.
    pub fn add(&mut self, value: &Value) {
        match value {
            Value::Node(node) => {
                self.nodes.insert(node.id.table);
            }
            Value::Rel(rel) => {
                self.rels.insert(rel.id.table);
            }
            Value::Path(path) => {
                path.nodes.iter().for_each(|n| {
                    self.nodes.insert(n.id.table);
                });
                path.rels.iter().for_each(|r| {
                    self.rels.insert(r.id.table);
                });
            }
            Value::List(items) => items.iter().for_each(|v| self.add(v)),
            Value::Struct(s) => s.fields.iter().for_each(|(_, v)| self.add(v)),
            Value::Map(entries) => entries.iter().for_each(|(k, v)| {
                self.add(k);
                self.add(v);
            }),
            Value::Union(u) => self.add(&u.value),
            _ => {}
        }
    }
}

/// The properties, in first-seen order, of the tables named by `tables`.
fn properties(snapshot: &Snapshot, tables: &BTreeSet<TableId>, rels: bool) -> Vec<Field> {
    let mut fields: Vec<Field> = Vec::new();
    for &table in tables {
        let name = snapshot.table_name(table);
        let catalog = snapshot.catalog();
        let props = if rels {
            catalog.rel_table(&name).map(|t| &t.properties)
        } else {
            catalog.node_table(&name).map(|t| &t.properties)
        };
        for property in props.into_iter().flatten() {
            if !fields.iter().any(|f| f.name == property.name) {
                fields.push(Field {
                    name: property.name.clone(),
                    ty: property.ty.clone(),
                });
            }
        }
    }
    fields
}

/// The tree of `ty` for a column whose values refer to the tables in `seen`.
pub fn type_tree<'py>(
    py: Python<'py>,
    ty: &LogicalType,
    seen: &TablesSeen,
    snapshot: &Snapshot,
) -> PyResult<Bound<'py, PyAny>> {
    type_tree_with(py, ty, seen, &|tables, rels| {
        properties(snapshot, tables, rels)
    })
}

/// The properties of the node (or, with `rels`, rel) tables named, in first-seen order.
pub type PropertiesOf<'a> = dyn Fn(&BTreeSet<TableId>, bool) -> Vec<Field> + 'a;

/// [`type_tree`] with the tables' properties from `properties_of` (a remote result knows them
/// from the server's `table_info`).
pub fn type_tree_with<'py>(
    py: Python<'py>,
    ty: &LogicalType,
    seen: &TablesSeen,
    properties_of: &PropertiesOf<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let tree = |t: &LogicalType| type_tree_with(py, t, seen, properties_of);
    let fields = |fs: &[Field]| -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        fs.iter()
            .map(|f| Ok((f.name.clone(), tree(&f.ty)?)))
            .collect()
    };
    let tuple = |items: Vec<Bound<'py, PyAny>>| -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, items)?.into_any())
    };
    let name = |n: &str| n.into_bound_py_any(py);
    match ty {
        LogicalType::List(child) => tuple(vec![name("LIST")?, tree(child)?]),
        LogicalType::Array(child, size) => tuple(vec![
            name("ARRAY")?,
            tree(child)?,
            size.into_bound_py_any(py)?,
        ]),
        LogicalType::Decimal(precision, scale) => tuple(vec![
            name("DECIMAL")?,
            precision.into_bound_py_any(py)?,
            scale.into_bound_py_any(py)?,
        ]),
        LogicalType::Struct(fs) => tuple(vec![name("STRUCT")?, fields(fs)?.into_bound_py_any(py)?]),
        LogicalType::Union(fs) => tuple(vec![name("UNION")?, fields(fs)?.into_bound_py_any(py)?]),
        LogicalType::Map(key, value) => tuple(vec![name("MAP")?, tree(key)?, tree(value)?]),
        LogicalType::Node => {
            let props = properties_of(&seen.nodes, false);
            tuple(vec![name("NODE")?, fields(&props)?.into_bound_py_any(py)?])
        }
        LogicalType::Rel => {
            let props = properties_of(&seen.rels, true);
            tuple(vec![name("REL")?, fields(&props)?.into_bound_py_any(py)?])
        }
        LogicalType::RecursiveRel => tuple(vec![
            name("RECURSIVE_REL")?,
            tree(&LogicalType::Node)?,
            tree(&LogicalType::Rel)?,
        ]),
        other => name(&crate::query_result::type_name(other)),
    }
}
