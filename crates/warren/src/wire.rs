//! Results as the binary wire format (`warren-wire`): a header with the columns' Kùzu types,
//! then, batch by batch, one chunk per column, then a trailer with the row count and times (or
//! an error message). Fixed-width columns become plain vectors that the encoder copies in bulk;
//! nodes, rels and paths carry their labels and properties, read through the snapshot.

use std::io::Write;

use warren_common::column_batch::{ColumnBatch, ColumnVector};
use warren_common::types::LogicalType;
use warren_common::value::{GraphLookup, NodeValue, Projection, RelValue, Value};
use warren_common::{Error, Result};
use warren_wire as wire;
use wire::{ColumnData, WireType, WireValue};

use crate::QueryResult;

/// Rows per chunk when streaming a result.
pub const CHUNK_ROWS: usize = warren_common::limits::BATCH_ROWS;

/// A column's wire type.
pub fn wire_type(ty: &LogicalType) -> WireType {
    let fields = |fields: &[warren_common::types::Field]| {
        fields
            .iter()
            .map(|f| wire::Field {
                name: f.name.clone(),
                ty: wire_type(&f.ty),
            })
            .collect()
    };
    match ty {
        LogicalType::Any => WireType::Any,
        LogicalType::Bool => WireType::Bool,
        LogicalType::Int8 => WireType::Int8,
        LogicalType::Int16 => WireType::Int16,
        LogicalType::Int32 => WireType::Int32,
        LogicalType::Int64 => WireType::Int64,
        LogicalType::Int128 => WireType::Int128,
        LogicalType::UInt8 => WireType::UInt8,
        LogicalType::UInt16 => WireType::UInt16,
        LogicalType::UInt32 => WireType::UInt32,
        LogicalType::UInt64 => WireType::UInt64,
        LogicalType::Float => WireType::Float,
        LogicalType::Double => WireType::Double,
        LogicalType::Decimal(precision, scale) => WireType::Decimal {
            precision: *precision,
            scale: *scale,
        },
        LogicalType::Serial => WireType::Serial,
        LogicalType::Date => WireType::Date,
        LogicalType::Timestamp => WireType::Timestamp,
        LogicalType::TimestampNs => WireType::TimestampNs,
        LogicalType::TimestampMs => WireType::TimestampMs,
        LogicalType::TimestampSec => WireType::TimestampSec,
        LogicalType::TimestampTz => WireType::TimestampTz,
        LogicalType::Interval => WireType::Interval,
        LogicalType::String => WireType::String,
        LogicalType::Blob => WireType::Blob,
        LogicalType::Uuid => WireType::Uuid,
        LogicalType::List(element) => WireType::List(Box::new(wire_type(element))),
        LogicalType::Array(element, size) => WireType::Array(Box::new(wire_type(element)), *size),
        LogicalType::Struct(f) => WireType::Struct(fields(f)),
        LogicalType::Map(key, value) => {
            WireType::Map(Box::new(wire_type(key)), Box::new(wire_type(value)))
        }
        LogicalType::Union(f) => WireType::Union(fields(f)),
        LogicalType::InternalId => WireType::InternalId,
        LogicalType::Node => WireType::Node,
        LogicalType::Rel => WireType::Rel,
        LogicalType::RecursiveRel => WireType::RecursiveRel,
    }
}

/// The header of a result.
pub fn header(names: &[String], types: &[LogicalType]) -> wire::Header {
    wire::Header {
        version: wire::VERSION,
        columns: names
            .iter()
            .zip(types)
            .map(|(name, ty)| wire::Column {
                name: name.clone(),
                ty: wire_type(ty),
            })
            .collect(),
    }
}

fn internal_id(id: warren_common::InternalId) -> wire::InternalId {
    wire::InternalId {
        table: id.table,
        offset: id.offset,
    }
}

fn properties(
    id: warren_common::InternalId,
    is_rel: bool,
    projection: Option<&Projection>,
    graph: &dyn GraphLookup,
) -> Vec<wire::Property> {
    graph
        .properties(id, is_rel)
        .into_iter()
        .filter(|(name, value)| {
            !value.is_null()
                && projection.is_none_or(|p| p.iter().any(|n| n.eq_ignore_ascii_case(name)))
        })
        .map(|(name, value)| wire::Property {
            name: name.to_string(),
            value: wire_value(&value, graph),
        })
        .collect()
}

/// A node with its label and non-NULL properties.
pub fn node(node: &NodeValue, graph: &dyn GraphLookup) -> wire::Node {
    wire::Node {
        id: internal_id(node.id),
        label: graph.table_name(node.id.table),
        properties: properties(node.id, false, node.projection.as_ref(), graph),
    }
}

/// A rel with its endpoints, label and non-NULL properties.
pub fn rel(rel: &RelValue, graph: &dyn GraphLookup) -> wire::Rel {
    let (src, dst) = graph.rel_endpoints(rel.id);
    wire::Rel {
        src: internal_id(src),
        dst: internal_id(dst),
        id: internal_id(rel.id),
        label: graph.table_name(rel.id.table),
        properties: properties(rel.id, true, rel.projection.as_ref(), graph),
    }
}

fn path(path: &warren_common::value::PathValue, graph: &dyn GraphLookup) -> wire::Path {
    wire::Path {
        nodes: path.nodes.iter().map(|n| node(n, graph)).collect(),
        rels: path.rels.iter().map(|r| rel(r, graph)).collect(),
    }
}

/// One value, row-wise.
pub fn wire_value(value: &Value, graph: &dyn GraphLookup) -> WireValue {
    match value {
        Value::Null => WireValue::Null,
        Value::Bool(v) => WireValue::Bool(*v),
        Value::Int8(v) => WireValue::Int8(*v),
        Value::Int16(v) => WireValue::Int16(*v),
        Value::Int32(v) => WireValue::Int32(*v),
        Value::Int64(v) => WireValue::Int64(*v),
        Value::Int128(v) => WireValue::Int128(*v),
        Value::UInt8(v) => WireValue::UInt8(*v),
        Value::UInt16(v) => WireValue::UInt16(*v),
        Value::UInt32(v) => WireValue::UInt32(*v),
        Value::UInt64(v) => WireValue::UInt64(*v),
        Value::Float(v) => WireValue::Float(*v),
        Value::Double(v) => WireValue::Double(*v),
        Value::Decimal(d) => WireValue::Decimal(wire::Decimal {
            value: d.value,
            precision: d.precision,
            scale: d.scale,
        }),
        Value::Date(v) => WireValue::Date(*v),
        Value::Timestamp(v) => WireValue::Timestamp(*v),
        Value::TimestampNs(v) => WireValue::TimestampNs(*v),
        Value::TimestampMs(v) => WireValue::TimestampMs(*v),
        Value::TimestampSec(v) => WireValue::TimestampSec(*v),
        Value::TimestampTz(v) => WireValue::TimestampTz(*v),
        Value::Interval(i) => WireValue::Interval(interval(i)),
        Value::String(s) => WireValue::String(s.to_string()),
        Value::Blob(b) => WireValue::Blob(b.to_vec()),
        Value::Uuid(v) => WireValue::Uuid(*v),
        Value::List(items) => WireValue::List(items.iter().map(|v| wire_value(v, graph)).collect()),
        Value::Struct(s) => WireValue::Struct(
            s.fields
                .iter()
                .map(|(name, v)| wire::Property {
                    name: name.to_string(),
                    value: wire_value(v, graph),
                })
                .collect(),
        ),
        Value::Map(entries) => WireValue::Map(
            entries
                .iter()
                .map(|(k, v)| wire::MapEntry {
                    key: wire_value(k, graph),
                    value: wire_value(v, graph),
                })
                .collect(),
        ),
        Value::Union(u) => WireValue::Union(Box::new(wire::UnionValue {
            tag: u.tag.to_string(),
            value: wire_value(&u.value, graph),
        })),
        Value::InternalId(id) => WireValue::InternalId(internal_id(*id)),
        Value::Node(n) => WireValue::Node(node(n, graph)),
        Value::Rel(r) => WireValue::Rel(rel(r, graph)),
        Value::Path(p) => WireValue::Path(path(p, graph)),
    }
}

fn interval(i: &warren_common::temporal::Interval) -> wire::Interval {
    wire::Interval {
        months: i.months,
        days: i.days,
        micros: i.micros,
    }
}

/// A fixed-width chunk: each non-NULL value must match `pick`, NULL rows hold the default.
fn fixed<T: Default>(values: &[&Value], pick: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    let mut out = Vec::with_capacity(values.len());
    for value in values {
        match value {
            Value::Null => out.push(T::default()),
            other => out.push(pick(other)?),
        }
    }
    Some(out)
}

/// Offsets of the lists (or maps) in `values` (a NULL row is empty), and their items.
fn offsets_and_items<'a, T: 'a>(
    values: &[&'a Value],
    items: impl Fn(&'a Value) -> Option<&'a [T]>,
) -> Option<(Vec<u32>, Vec<&'a T>)> {
    let mut offsets = Vec::with_capacity(values.len() + 1);
    offsets.push(0u32);
    let mut all = Vec::new();
    for value in values {
        if !value.is_null() {
            all.extend(items(value)?);
        }
        offsets.push(u32::try_from(all.len()).ok()?);
    }
    Some((offsets, all))
}

/// A chunk of `values` in the kind `ty` calls for, or `None` when a value does not fit it.
fn typed(ty: &LogicalType, values: &[&Value], graph: &dyn GraphLookup) -> Option<ColumnData> {
    Some(match ty {
        LogicalType::Bool => ColumnData::Bool(fixed(values, |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        })?),
        LogicalType::Int8 => ColumnData::Int8(fixed(values, |v| match v {
            Value::Int8(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Int16 => ColumnData::Int16(fixed(values, |v| match v {
            Value::Int16(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Int32 => ColumnData::Int32(fixed(values, |v| match v {
            Value::Int32(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Date => ColumnData::Int32(fixed(values, |v| match v {
            Value::Date(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Int64 | LogicalType::Serial => {
            ColumnData::Int64(fixed(values, |v| match v {
                Value::Int64(x) => Some(*x),
                _ => None,
            })?)
        }
        LogicalType::Timestamp
        | LogicalType::TimestampNs
        | LogicalType::TimestampMs
        | LogicalType::TimestampSec
        | LogicalType::TimestampTz => ColumnData::Int64(fixed(values, |v| match v {
            Value::Timestamp(x)
            | Value::TimestampNs(x)
            | Value::TimestampMs(x)
            | Value::TimestampSec(x)
            | Value::TimestampTz(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Int128 => ColumnData::Int128(fixed(values, |v| match v {
            Value::Int128(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Decimal(..) => ColumnData::Int128(fixed(values, |v| match v {
            Value::Decimal(d) => Some(d.value),
            _ => None,
        })?),
        LogicalType::UInt8 => ColumnData::UInt8(fixed(values, |v| match v {
            Value::UInt8(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::UInt16 => ColumnData::UInt16(fixed(values, |v| match v {
            Value::UInt16(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::UInt32 => ColumnData::UInt32(fixed(values, |v| match v {
            Value::UInt32(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::UInt64 => ColumnData::UInt64(fixed(values, |v| match v {
            Value::UInt64(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Uuid => ColumnData::UInt128(fixed(values, |v| match v {
            Value::Uuid(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Float => ColumnData::Float(fixed(values, |v| match v {
            Value::Float(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Double => ColumnData::Double(fixed(values, |v| match v {
            Value::Double(x) => Some(*x),
            _ => None,
        })?),
        LogicalType::Interval => ColumnData::Interval(fixed(values, |v| match v {
            Value::Interval(i) => Some(interval(i)),
            _ => None,
        })?),
        LogicalType::InternalId => ColumnData::InternalId(fixed(values, |v| match v {
            Value::InternalId(id) => Some(internal_id(*id)),
            _ => None,
        })?),
        _ => return nested(ty, values, graph),
    })
}

/// Variable-width and nested kinds.
fn nested(ty: &LogicalType, values: &[&Value], graph: &dyn GraphLookup) -> Option<ColumnData> {
    Some(match ty {
        LogicalType::String => {
            let mut column = wire::StringColumn::default();
            for value in values {
                match value {
                    Value::Null => column.push(""),
                    Value::String(s) => column.push(s),
                    _ => return None,
                }
            }
            ColumnData::String(column)
        }
        LogicalType::Blob => {
            let mut column = wire::BlobColumn::default();
            for value in values {
                match value {
                    Value::Null => column.push(&[]),
                    Value::Blob(b) => column.push(b),
                    _ => return None,
                }
            }
            ColumnData::Blob(column)
        }
        LogicalType::List(element) | LogicalType::Array(element, _) => {
            let (offsets, items) = offsets_and_items(values, |v| match v {
                Value::List(items) => Some(&items[..]),
                _ => None,
            })?;
            ColumnData::List(wire::ListColumn {
                offsets,
                values: Box::new(chunk(element, &items, graph)),
            })
        }
        LogicalType::Map(key, value) => {
            let (offsets, entries) = offsets_and_items(values, |v| match v {
                Value::Map(entries) => Some(&entries[..]),
                _ => None,
            })?;
            let keys: Vec<&Value> = entries.iter().map(|(k, _)| k).collect();
            let items: Vec<&Value> = entries.iter().map(|(_, v)| v).collect();
            ColumnData::Map(wire::MapColumn {
                offsets,
                keys: Box::new(chunk(key, &keys, graph)),
                values: Box::new(chunk(value, &items, graph)),
            })
        }
        LogicalType::Struct(fields) => struct_chunk(fields, values, graph)?,
        LogicalType::Node => ColumnData::Node(row_wise(values, |v| match v {
            Value::Node(n) => Some(node(n, graph)),
            _ => None,
        })?),
        LogicalType::Rel => ColumnData::Rel(row_wise(values, |v| match v {
            Value::Rel(r) => Some(rel(r, graph)),
            _ => None,
        })?),
        LogicalType::RecursiveRel => ColumnData::Path(row_wise(values, |v| match v {
            Value::Path(p) => Some(path(p, graph)),
            _ => None,
        })?),
        _ => return None,
    })
}

/// Nodes, rels, paths: NULL rows hold an empty placeholder (the bitmap says they are NULL).
fn row_wise<T>(values: &[&Value], pick: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>>
where
    T: Placeholder,
{
    values
        .iter()
        .map(|v| match v {
            Value::Null => Some(T::placeholder()),
            other => pick(other),
        })
        .collect()
}

trait Placeholder {
    fn placeholder() -> Self;
}

impl Placeholder for wire::Node {
    fn placeholder() -> Self {
        wire::Node {
            id: wire::InternalId::default(),
            label: String::new(),
            properties: Vec::new(),
        }
    }
}

impl Placeholder for wire::Rel {
    fn placeholder() -> Self {
        wire::Rel {
            src: wire::InternalId::default(),
            dst: wire::InternalId::default(),
            id: wire::InternalId::default(),
            label: String::new(),
            properties: Vec::new(),
        }
    }
}

impl Placeholder for wire::Path {
    fn placeholder() -> Self {
        wire::Path {
            nodes: Vec::new(),
            rels: Vec::new(),
        }
    }
}

fn struct_chunk(
    fields: &[warren_common::types::Field],
    values: &[&Value],
    graph: &dyn GraphLookup,
) -> Option<ColumnData> {
    const NULL: Value = Value::Null;
    let mut children = Vec::with_capacity(fields.len());
    for (index, field) in fields.iter().enumerate() {
        let mut column = Vec::with_capacity(values.len());
        for value in values {
            match value {
                Value::Null => column.push(&NULL),
                Value::Struct(s) => {
                    let (name, v) = s.fields.get(index)?;
                    if !name.eq_ignore_ascii_case(&field.name) {
                        return None;
                    }
                    column.push(v);
                }
                _ => return None,
            }
        }
        children.push(chunk(&field.ty, &column, graph));
    }
    Some(ColumnData::Struct(children))
}

fn validity(values: &[&Value]) -> Vec<u8> {
    let mut bitmap = vec![0u8; values.len().div_ceil(8)];
    for (i, value) in values.iter().enumerate() {
        if !value.is_null() {
            bitmap[i / 8] |= 1 << (i % 8);
        }
    }
    bitmap
}

/// The chunk of `values`, a column of type `ty`: NULL-only columns are `Null(n)`, columns with
/// some NULLs are `Nullable`, values that do not fit the type travel row-wise as `Values`.
pub fn chunk(ty: &LogicalType, values: &[&Value], graph: &dyn GraphLookup) -> ColumnData {
    let nulls = values.iter().filter(|v| v.is_null()).count();
    if nulls == values.len() && nulls > 0 {
        return ColumnData::Null(nulls as u64);
    }
    match typed(ty, values, graph) {
        Some(data) if nulls == 0 => data,
        Some(data) => ColumnData::Nullable(wire::NullableColumn {
            valid: validity(values),
            values: Box::new(data),
        }),
        None => ColumnData::Values(values.iter().map(|v| wire_value(v, graph)).collect()),
    }
}

/// The chunks of a batch of rows, one per column.
pub fn batch_chunks(
    types: &[LogicalType],
    rows: &[Vec<Value>],
    graph: &dyn GraphLookup,
) -> Vec<ColumnData> {
    let mut column: Vec<&Value> = Vec::with_capacity(rows.len());
    types
        .iter()
        .enumerate()
        .map(|(index, ty)| {
            column.clear();
            column.extend(rows.iter().map(|row| &row[index]));
            chunk(ty, &column, graph)
        })
        .collect()
}

fn io(error: std::io::Error) -> Error {
    Error::Io(error.to_string())
}

/// The chunk of one column of a batch: typed vectors (INT64, DOUBLE, BOOL, STRING) move into
/// their wire vectors without a `Value` per row; other columns go through [`chunk`].
pub fn vector_chunk(ty: &LogicalType, vector: ColumnVector, graph: &dyn GraphLookup) -> ColumnData {
    let rows = vector.len();
    let (data, valid) = match vector {
        ColumnVector::Int64 { values, validity } => (ColumnData::Int64(values), validity),
        ColumnVector::Double { values, validity } => (ColumnData::Double(values), validity),
        ColumnVector::Bool { values, validity } => (ColumnData::Bool(values), validity),
        ColumnVector::String {
            offsets,
            data,
            validity,
        } => {
            let offsets = offsets.iter().map(|&o| o as u32).collect();
            let text = String::from_utf8(data).expect("a STRING vector is built from &str");
            (
                ColumnData::String(wire::StringColumn { offsets, text }),
                validity,
            )
        }
        ColumnVector::Values(values) => {
            let values: Vec<&Value> = values.iter().collect();
            return chunk(ty, &values, graph);
        }
    };
    let Some(valid) = valid else {
        return data;
    };
    let nulls = valid.iter().filter(|v| !**v).count();
    if nulls == 0 {
        return data;
    }
    if nulls == rows {
        return ColumnData::Null(rows as u64);
    }
    let mut bitmap = vec![0u8; rows.div_ceil(8)];
    for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        bitmap[i / 8] |= 1 << (i % 8);
    }
    ColumnData::Nullable(wire::NullableColumn {
        valid: bitmap,
        values: Box::new(data),
    })
}

/// Streams every remaining row of `result` to `out` as frames: the header, chunks of up to
/// [`CHUNK_ROWS`] rows per column, then the trailer. An engine error midway is sent as an
/// error message and returned. Returns the rows written.
pub fn write_result(result: &mut QueryResult, out: &mut dyn Write) -> Result<u64> {
    let first = result.next_columns(CHUNK_ROWS);
    write_result_from(result, first, out)
}

/// [`write_result`] for a caller that already pulled the first batch (a server that must know
/// whether the query fails before it answers with a status).
pub fn write_result_from(
    result: &mut QueryResult,
    first: Result<Option<ColumnBatch>>,
    out: &mut dyn Write,
) -> Result<u64> {
    let header = header(result.column_names(), result.column_types());
    wire::write_frame(&mut *out, &wire::Message::Header(header)).map_err(io)?;
    let types = result.column_types().to_vec();
    let mut rows_sent = 0u64;
    let mut next = Some(first);
    loop {
        let pulled = next
            .take()
            .unwrap_or_else(|| result.next_columns(CHUNK_ROWS));
        let batch = match pulled {
            Ok(Some(batch)) => batch,
            Ok(None) => break,
            Err(error) => {
                let message = wire::Message::Error(wire::ErrorMessage {
                    kind: error.kind().to_string(),
                    message: error.to_string(),
                });
                wire::write_frame(&mut *out, &message).map_err(io)?;
                return Err(error);
            }
        };
        let rows = batch.len() as u64;
        let graph = result.snapshot().clone();
        for (column, (ty, vector)) in types.iter().zip(batch.columns).enumerate() {
            let chunk = wire::Chunk {
                column: column as u32,
                first_row: rows_sent,
                data: vector_chunk(ty, vector, graph.as_ref()),
            };
            wire::write_frame(&mut *out, &wire::Message::Chunk(chunk)).map_err(io)?;
        }
        rows_sent += rows;
    }
    let trailer = wire::Trailer {
        rows: rows_sent,
        compile_time_us: result.compile_time().as_micros() as u64,
        execution_time_us: result.execution_time().as_micros() as u64,
    };
    wire::write_frame(&mut *out, &wire::Message::End(trailer)).map_err(io)?;
    Ok(rows_sent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_common::value::NoGraph;

    /// A typed vector becomes the same chunk as the values it holds: no NULLs, some NULLs,
    /// only NULLs, for each typed vector kind, and a `Values` fallback.
    #[test]
    fn vector_chunks_equal_value_chunks() {
        let columns: Vec<(LogicalType, Vec<Value>)> = vec![
            (LogicalType::Int64, vec![Value::Int64(1), Value::Int64(-7)]),
            (
                LogicalType::Int64,
                vec![Value::Null, Value::Int64(3), Value::Null],
            ),
            (LogicalType::Double, vec![Value::Double(0.5), Value::Null]),
            (
                LogicalType::Bool,
                vec![Value::Bool(true), Value::Bool(false)],
            ),
            (
                LogicalType::String,
                vec![Value::string("ab"), Value::Null, Value::string("cdé")],
            ),
            (LogicalType::String, vec![Value::Null, Value::Null]),
            (LogicalType::Int32, vec![Value::Int32(4), Value::Null]),
        ];
        for (ty, values) in columns {
            let rows: Vec<Vec<Value>> = values.iter().map(|v| vec![v.clone()]).collect();
            let batch = ColumnBatch::from_rows(std::slice::from_ref(&ty), &rows);
            let vector = batch.columns.into_iter().next().expect("one column");
            let refs: Vec<&Value> = values.iter().collect();
            assert_eq!(
                vector_chunk(&ty, vector, &NoGraph),
                chunk(&ty, &refs, &NoGraph),
                "{ty} {values:?}"
            );
        }
    }

    #[test]
    fn fixed_width_columns_with_and_without_nulls() {
        let values = [Value::Int64(1), Value::Int64(2)];
        let refs: Vec<&Value> = values.iter().collect();
        assert_eq!(
            chunk(&LogicalType::Int64, &refs, &NoGraph),
            ColumnData::Int64(vec![1, 2])
        );
        let values = [Value::Int64(1), Value::Null, Value::Int64(3)];
        let refs: Vec<&Value> = values.iter().collect();
        let ColumnData::Nullable(column) = chunk(&LogicalType::Int64, &refs, &NoGraph) else {
            panic!("expected a nullable chunk");
        };
        assert_eq!(column.valid, vec![0b101]);
        assert_eq!(*column.values, ColumnData::Int64(vec![1, 0, 3]));
    }

    #[test]
    fn mismatched_values_travel_row_wise() {
        let values = [Value::Int64(1), Value::string("x")];
        let refs: Vec<&Value> = values.iter().collect();
        let data = chunk(&LogicalType::Any, &refs, &NoGraph);
        assert_eq!(
            data,
            ColumnData::Values(vec![WireValue::Int64(1), WireValue::String("x".into())])
        );
        let nulls = [Value::Null, Value::Null];
        let refs: Vec<&Value> = nulls.iter().collect();
        assert_eq!(
            chunk(&LogicalType::Int64, &refs, &NoGraph),
            ColumnData::Null(2)
        );
    }

    #[test]
    fn lists_flatten_into_offsets_and_a_child_chunk() {
        let values = [
            Value::list(vec![Value::Int64(1), Value::Int64(2)]),
            Value::Null,
            Value::list(vec![Value::Int64(3)]),
        ];
        let refs: Vec<&Value> = values.iter().collect();
        let ty = LogicalType::list(LogicalType::Int64);
        let ColumnData::Nullable(column) = chunk(&ty, &refs, &NoGraph) else {
            panic!("expected a nullable chunk");
        };
        let ColumnData::List(list) = *column.values else {
            panic!("expected a list chunk");
        };
        assert_eq!(list.offsets, vec![0, 2, 2, 3]);
        assert_eq!(*list.values, ColumnData::Int64(vec![1, 2, 3]));
    }
}
