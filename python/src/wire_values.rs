//! A server's answer turned into the engine's own column batches and values, so that a remote
//! result goes through the same conversions (Python values, Arrow, Kùzu's printing) as an
//! embedded one. INT64, DOUBLE, BOOL and STRING chunks hand their buffers over as typed
//! vectors; other columns become values. Nodes and rels arrive with their labels and non-NULL
//! properties: [`WireGraph`] keeps them and answers the engine's graph lookups, filling the
//! NULL properties from the tables' schemas once they are known.

use std::collections::HashMap;
use std::sync::Arc;

use warren_common::column_batch::{ColumnBatch, ColumnVector};
use warren_common::ids::{InternalId, TableId};
use warren_common::temporal::Interval;
use warren_common::types::{Field, LogicalType};
use warren_common::value::{
    Decimal, GraphLookup, NodeValue, PathValue, RelValue, StructValue, UnionValue,
};
use warren_common::Value;
use warren_wire::{ColumnData, NullableColumn, WireType, WireValue};

/// The engine's type for a column's wire type.
pub fn logical_type(ty: &WireType) -> LogicalType {
    let fields = |fields: &[warren_wire::Field]| {
        fields
            .iter()
            .map(|f| Field {
                name: f.name.clone(),
                ty: logical_type(&f.ty),
            })
            .collect::<Vec<_>>()
            .into()
    };
    match ty {
        WireType::Any => LogicalType::Any,
        WireType::Bool => LogicalType::Bool,
        WireType::Int8 => LogicalType::Int8,
        WireType::Int16 => LogicalType::Int16,
        WireType::Int32 => LogicalType::Int32,
        WireType::Int64 => LogicalType::Int64,
        WireType::Int128 => LogicalType::Int128,
        WireType::UInt8 => LogicalType::UInt8,
        WireType::UInt16 => LogicalType::UInt16,
        WireType::UInt32 => LogicalType::UInt32,
        WireType::UInt64 => LogicalType::UInt64,
        WireType::Float => LogicalType::Float,
        WireType::Double => LogicalType::Double,
        WireType::Decimal { precision, scale } => LogicalType::Decimal(*precision, *scale),
        WireType::Serial => LogicalType::Serial,
        WireType::Date => LogicalType::Date,
        WireType::Timestamp => LogicalType::Timestamp,
        WireType::TimestampNs => LogicalType::TimestampNs,
        WireType::TimestampMs => LogicalType::TimestampMs,
        WireType::TimestampSec => LogicalType::TimestampSec,
        WireType::TimestampTz => LogicalType::TimestampTz,
        WireType::Interval => LogicalType::Interval,
        WireType::String => LogicalType::String,
        WireType::Blob => LogicalType::Blob,
        WireType::Uuid => LogicalType::Uuid,
        WireType::List(element) => LogicalType::List(Arc::new(logical_type(element))),
        WireType::Array(element, size) => {
            LogicalType::Array(Arc::new(logical_type(element)), *size)
        }
        WireType::Struct(f) => LogicalType::Struct(fields(f)),
        WireType::Map(key, value) => {
            LogicalType::Map(Arc::new(logical_type(key)), Arc::new(logical_type(value)))
        }
        WireType::Union(f) => LogicalType::Union(fields(f)),
        WireType::InternalId => LogicalType::InternalId,
        WireType::Node => LogicalType::Node,
        WireType::Rel => LogicalType::Rel,
        WireType::RecursiveRel => LogicalType::RecursiveRel,
    }
}

/// A stored rel as the wire carries it.
#[derive(Debug, Clone)]
struct WireRel {
    src: InternalId,
    dst: InternalId,
    properties: Vec<(Arc<str>, Value)>,
}

/// The nodes and rels a result has carried so far, and the schemas of their tables.
#[derive(Debug, Default)]
pub struct WireGraph {
    labels: HashMap<TableId, String>,
    nodes: HashMap<InternalId, Vec<(Arc<str>, Value)>>,
    rels: HashMap<InternalId, WireRel>,
    /// Label -> its properties (name, type) in schema order, once fetched.
    schemas: HashMap<String, Vec<(Arc<str>, LogicalType)>>,
}

impl WireGraph {
    /// Takes in what another graph (one batch's) carried.
    pub fn merge(&mut self, other: WireGraph) {
        self.labels.extend(other.labels);
        self.nodes.extend(other.nodes);
        self.rels.extend(other.rels);
    }

    /// The labels whose schemas are not known yet.
    pub fn labels_without_schema(&self) -> Vec<String> {
        let mut labels: Vec<String> = self
            .labels
            .values()
            .filter(|label| !self.schemas.contains_key(*label))
            .cloned()
            .collect();
        labels.sort();
        labels.dedup();
        labels
    }

    pub fn add_schema(&mut self, label: String, properties: Vec<(Arc<str>, LogicalType)>) {
        self.schemas.insert(label, properties);
    }

    /// The properties (name, type) of the table `table`, as far as known.
    pub fn schema(&self, table: TableId) -> Vec<(Arc<str>, LogicalType)> {
        self.labels
            .get(&table)
            .and_then(|label| self.schemas.get(label))
            .cloned()
            .unwrap_or_default()
    }

    fn id(id: warren_wire::InternalId) -> InternalId {
        InternalId {
            table: id.table,
            offset: id.offset,
        }
    }

    fn node(&mut self, node: &warren_wire::Node) -> NodeValue {
        let id = Self::id(node.id);
        self.labels.insert(id.table, node.label.clone());
        let properties = self.properties_of(&node.properties);
        self.nodes.insert(id, properties);
        NodeValue {
            id,
            projection: None,
        }
    }

    fn rel(&mut self, rel: &warren_wire::Rel) -> RelValue {
        let id = Self::id(rel.id);
        self.labels.insert(id.table, rel.label.clone());
        let properties = self.properties_of(&rel.properties);
        let stored = WireRel {
            src: Self::id(rel.src),
            dst: Self::id(rel.dst),
            properties,
        };
        self.rels.insert(id, stored);
        RelValue {
            id,
            projection: None,
        }
    }

    fn properties_of(&mut self, properties: &[warren_wire::Property]) -> Vec<(Arc<str>, Value)> {
        properties
            .iter()
            .map(|p| (Arc::from(p.name.as_str()), self.value(&p.value)))
            .collect()
    }

    /// One row-wise wire value.
    pub fn value(&mut self, value: &WireValue) -> Value {
        if let Some(scalar) = warren::wire_parameter::scalar(value) {
            return scalar;
        }
        match value {
            WireValue::Decimal(d) => Value::Decimal(Box::new(Decimal {
                value: d.value,
                precision: d.precision,
                scale: d.scale,
            })),
            WireValue::List(items) => Value::List(items.iter().map(|v| self.value(v)).collect()),
            WireValue::Struct(fields) => Value::Struct(Arc::new(StructValue {
                fields: self.properties_of(fields),
            })),
            WireValue::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|e| (self.value(&e.key), self.value(&e.value)))
                    .collect(),
            ),
            WireValue::Union(u) => Value::Union(Arc::new(UnionValue {
                tag: Arc::from(u.tag.as_str()),
                value: self.value(&u.value),
            })),
            WireValue::Node(node) => Value::Node(self.node(node)),
            WireValue::Rel(rel) => Value::Rel(self.rel(rel)),
            WireValue::Path(path) => Value::Path(Arc::new(self.path(path))),
            _ => unreachable!("scalar wire values are mapped above"),
        }
    }

    fn path(&mut self, path: &warren_wire::Path) -> PathValue {
        PathValue {
            nodes: path.nodes.iter().map(|n| self.node(n)).collect(),
            rels: path.rels.iter().map(|r| self.rel(r)).collect(),
        }
    }
}

impl GraphLookup for WireGraph {
    fn table_name(&self, table: TableId) -> String {
        self.labels
            .get(&table)
            .cloned()
            .unwrap_or_else(|| format!("table{table}"))
    }

    /// The carried (non-NULL) properties, in schema order with the NULL ones when the table's
    /// schema is known.
    fn properties(&self, id: InternalId, is_rel: bool) -> Vec<(Arc<str>, Value)> {
        let carried = if is_rel {
            self.rels.get(&id).map(|r| r.properties.as_slice())
        } else {
            self.nodes.get(&id).map(Vec::as_slice)
        }
        .unwrap_or_default();
        let Some(schema) = self
            .labels
            .get(&id.table)
            .and_then(|label| self.schemas.get(label))
        else {
            return carried.to_vec();
        };
        schema
            .iter()
            .map(|(name, _)| {
                let value = carried
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or(Value::Null, |(_, v)| v.clone());
                (name.clone(), value)
            })
            .collect()
    }

    fn rel_endpoints(&self, id: InternalId) -> (InternalId, InternalId) {
        self.rels.get(&id).map_or((id, id), |r| (r.src, r.dst))
    }
}

fn interval(i: warren_wire::Interval) -> Interval {
    Interval {
        months: i.months,
        days: i.days,
        micros: i.micros,
    }
}

/// A chunk that does not fit its column's type or its batch's rows.
fn malformed(what: &str) -> String {
    format!("a malformed chunk: {what}")
}

fn at<T: Copy>(values: &[T], row: usize) -> Result<T, String> {
    values
        .get(row)
        .copied()
        .ok_or_else(|| malformed("a row out of range"))
}

/// The validity bitmap as one flag per row; `None` when every row is valid.
fn validity(valid: &NullableColumn, rows: usize) -> Option<Vec<bool>> {
    let flags: Vec<bool> = (0..rows).map(|r| valid.is_valid(r)).collect();
    flags.iter().any(|v| !v).then_some(flags)
}

/// One batch of chunks (one per column, `rows` rows each) as a column batch.
pub fn column_batch(
    chunks: Vec<ColumnData>,
    types: &[LogicalType],
    rows: usize,
    graph: &mut WireGraph,
) -> Result<ColumnBatch, String> {
    assert_eq!(chunks.len(), types.len(), "one chunk per column");
    let columns = chunks
        .into_iter()
        .zip(types)
        .map(|(data, ty)| {
            if data.rows() != rows {
                return Err(malformed("columns of different lengths"));
            }
            column_vector(data, ty, rows, graph)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ColumnBatch::new(columns, rows))
}

/// A chunk as a column vector: the engine's typed vectors take the chunk's buffers.
fn column_vector(
    data: ColumnData,
    ty: &LogicalType,
    rows: usize,
    graph: &mut WireGraph,
) -> Result<ColumnVector, String> {
    let (values, validity) = match data {
        ColumnData::Nullable(nullable) => {
            let flags = validity(&nullable, rows);
            (*nullable.values, flags)
        }
        other => (other, None),
    };
    let typed = |ty: &LogicalType| matches!(ty, LogicalType::Int64 | LogicalType::Serial);
    Ok(match (values, ty) {
        (ColumnData::Int64(values), t) if typed(t) => ColumnVector::Int64 { values, validity },
        (ColumnData::Double(values), LogicalType::Double) => {
            ColumnVector::Double { values, validity }
        }
        (ColumnData::Bool(values), LogicalType::Bool) => ColumnVector::Bool { values, validity },
        (ColumnData::String(s), LogicalType::String) if s.text.len() <= i32::MAX as usize => {
            let offsets = s.offsets.iter().map(|&o| o as i32).collect();
            ColumnVector::String {
                offsets,
                data: s.text.into_bytes(),
                validity,
            }
        }
        (values, ty) => {
            let mut out = Vec::with_capacity(rows);
            for row in 0..rows {
                let valid = validity.as_ref().is_none_or(|v| v[row]);
                out.push(if valid {
                    value_at(&values, ty, row, graph)?
                } else {
                    Value::Null
                });
            }
            ColumnVector::Values(out)
        }
    })
}

/// The child type of a LIST or ARRAY type.
fn element(ty: &LogicalType) -> &LogicalType {
    match ty {
        LogicalType::List(e) | LogicalType::Array(e, _) => e,
        _ => &LogicalType::Any,
    }
}

/// The rows `offsets[row]..offsets[row + 1]` of a list or map chunk.
fn range(offsets: &[u32], row: usize) -> Result<std::ops::Range<usize>, String> {
    let start = at(offsets, row)? as usize;
    let end = at(offsets, row + 1)? as usize;
    if start > end {
        return Err(malformed("decreasing offsets"));
    }
    Ok(start..end)
}

/// Row `row` of a chunk as a value of type `ty` (the type says how to read the chunk: DATE
/// travels as `Int32`, DECIMAL as `Int128`, UUID as `UInt128`, ...).
pub fn value_at(
    data: &ColumnData,
    ty: &LogicalType,
    row: usize,
    graph: &mut WireGraph,
) -> Result<Value, String> {
    use LogicalType as T;
    Ok(match data {
        ColumnData::Null(_) => Value::Null,
        ColumnData::Nullable(n) if !n.is_valid(row) => Value::Null,
        ColumnData::Nullable(n) => value_at(&n.values, ty, row, graph)?,
        ColumnData::Bool(v) => Value::Bool(at(v, row)?),
        ColumnData::Int8(v) => Value::Int8(at(v, row)?),
        ColumnData::Int16(v) => Value::Int16(at(v, row)?),
        ColumnData::Int32(v) if *ty == T::Date => Value::Date(at(v, row)?),
        ColumnData::Int32(v) => Value::Int32(at(v, row)?),
        ColumnData::Int64(v) => {
            let x = at(v, row)?;
            match ty {
                T::Timestamp => Value::Timestamp(x),
                T::TimestampTz => Value::TimestampTz(x),
                T::TimestampNs => Value::TimestampNs(x),
                T::TimestampMs => Value::TimestampMs(x),
                T::TimestampSec => Value::TimestampSec(x),
                _ => Value::Int64(x),
            }
        }
        ColumnData::Int128(v) => match ty {
            T::Decimal(precision, scale) => Value::Decimal(Box::new(Decimal {
                value: at(v, row)?,
                precision: *precision,
                scale: *scale,
            })),
            _ => Value::Int128(at(v, row)?),
        },
        ColumnData::UInt8(v) => Value::UInt8(at(v, row)?),
        ColumnData::UInt16(v) => Value::UInt16(at(v, row)?),
        ColumnData::UInt32(v) => Value::UInt32(at(v, row)?),
        ColumnData::UInt64(v) => Value::UInt64(at(v, row)?),
        ColumnData::UInt128(v) => Value::Uuid(at(v, row)?),
        ColumnData::Float(v) => Value::Float(at(v, row)?),
        ColumnData::Double(v) => Value::Double(at(v, row)?),
        ColumnData::Interval(v) => Value::Interval(interval(at(v, row)?)),
        ColumnData::InternalId(v) => Value::InternalId(WireGraph::id(at(v, row)?)),
        ColumnData::String(s) => Value::String(Arc::from(
            s.get(row)
                .ok_or_else(|| malformed("a string out of range"))?,
        )),
        ColumnData::Blob(b) => Value::Blob(Arc::from(
            b.get(row).ok_or_else(|| malformed("a blob out of range"))?,
        )),
        ColumnData::List(list) => {
            let child = element(ty);
            let items = range(&list.offsets, row)?
                .map(|i| value_at(&list.values, child, i, graph))
                .collect::<Result<Vec<_>, String>>()?;
            Value::List(items.into())
        }
        ColumnData::Struct(children) => struct_at(children, ty, row, graph)?,
        ColumnData::Map(map) => {
            let (key_type, value_type) = match ty {
                T::Map(k, v) => (k.as_ref(), v.as_ref()),
                _ => (&T::Any, &T::Any),
            };
            let entries = range(&map.offsets, row)?
                .map(|i| {
                    Ok((
                        value_at(&map.keys, key_type, i, graph)?,
                        value_at(&map.values, value_type, i, graph)?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Value::Map(entries.into())
        }
        ColumnData::Node(v) => Value::Node(graph.node(row_of(v, row)?)),
        ColumnData::Rel(v) => Value::Rel(graph.rel(row_of(v, row)?)),
        ColumnData::Path(v) => Value::Path(Arc::new(graph.path(row_of(v, row)?))),
        ColumnData::Values(v) => graph.value(row_of(v, row)?),
    })
}

fn row_of<T>(values: &[T], row: usize) -> Result<&T, String> {
    values
        .get(row)
        .ok_or_else(|| malformed("a row out of range"))
}

fn struct_at(
    children: &[ColumnData],
    ty: &LogicalType,
    row: usize,
    graph: &mut WireGraph,
) -> Result<Value, String> {
    let LogicalType::Struct(fields) = ty else {
        return Err(malformed("a struct chunk in a column of another type"));
    };
    if fields.len() != children.len() {
        return Err(malformed("a struct chunk with another number of fields"));
    }
    let values = fields
        .iter()
        .zip(children)
        .map(|(field, child)| {
            Ok((
                Arc::from(field.name.as_str()),
                value_at(child, &field.ty, row, graph)?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Value::Struct(Arc::new(StructValue { fields: values })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_wire::StringColumn;

    #[test]
    fn typed_chunks_keep_their_buffers_and_nulls() {
        let types = [LogicalType::Int64, LogicalType::String, LogicalType::Date];
        let strings = ColumnData::Nullable(NullableColumn {
            valid: vec![0b01],
            values: Box::new(ColumnData::String(StringColumn::from_strs(["ab", ""]))),
        });
        let chunks = vec![
            ColumnData::Int64(vec![1, 2]),
            strings,
            ColumnData::Int32(vec![0, 1]),
        ];
        let mut graph = WireGraph::default();
        let batch = column_batch(chunks, &types, 2, &mut graph).unwrap();
        assert!(matches!(batch.columns[0], ColumnVector::Int64 { .. }));
        assert!(matches!(batch.columns[1], ColumnVector::String { .. }));
        assert_eq!(batch.row(0)[1].as_str(), Some("ab"));
        assert!(batch.row(1)[1].is_null());
        assert!(matches!(batch.row(1)[2], Value::Date(1)));
    }

    #[test]
    fn a_chunk_of_another_length_is_refused() {
        let types = [LogicalType::Int64, LogicalType::Int64];
        let chunks = vec![ColumnData::Int64(vec![1, 2]), ColumnData::Int64(vec![1])];
        let error = column_batch(chunks, &types, 2, &mut WireGraph::default()).unwrap_err();
        assert!(error.contains("different lengths"), "{error}");
    }

    #[test]
    fn nodes_get_their_null_properties_from_the_schema() {
        let mut graph = WireGraph::default();
        let node = warren_wire::Node {
            id: warren_wire::InternalId {
                table: 0,
                offset: 3,
            },
            label: "P".into(),
            properties: vec![warren_wire::Property {
                name: "ID".into(),
                value: WireValue::Int64(3),
            }],
        };
        let Value::Node(value) = graph.value(&WireValue::Node(node)) else {
            panic!("a node")
        };
        assert_eq!(graph.properties(value.id, false).len(), 1);
        assert_eq!(graph.labels_without_schema(), vec!["P".to_string()]);
        graph.add_schema(
            "P".into(),
            vec![
                (Arc::from("ID"), LogicalType::Int64),
                (Arc::from("name"), LogicalType::String),
            ],
        );
        let properties = graph.properties(value.id, false);
        assert_eq!(properties.len(), 2);
        assert!(properties[1].1.is_null());
        assert_eq!(graph.table_name(0), "P");
    }
}
