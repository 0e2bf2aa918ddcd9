//! proptest strategies for every wire type (tests only).

use proptest::collection::vec;
use proptest::prelude::*;

use crate::column::{BlobColumn, ColumnData, ListColumn, MapColumn, NullableColumn, StringColumn};
use crate::message::{Chunk, ErrorMessage, Header, Message, QueryRequest, Trailer, VERSION};
use crate::types::{Column, Field, WireType};
use crate::value::{
    Decimal, InternalId, Interval, MapEntry, Node, Path, Property, Rel, UnionValue, WireValue,
};

pub fn internal_id() -> impl Strategy<Value = InternalId> {
    (any::<u32>(), any::<u64>()).prop_map(|(table, offset)| InternalId { table, offset })
}

pub fn interval() -> impl Strategy<Value = Interval> {
    (any::<i32>(), any::<i32>(), any::<i64>()).prop_map(|(months, days, micros)| Interval {
        months,
        days,
        micros,
    })
}

fn text() -> impl Strategy<Value = String> {
    ".{0,12}"
}

fn scalar() -> impl Strategy<Value = WireValue> {
    prop_oneof![
        Just(WireValue::Null),
        any::<bool>().prop_map(WireValue::Bool),
        any::<i8>().prop_map(WireValue::Int8),
        any::<i16>().prop_map(WireValue::Int16),
        any::<i32>().prop_map(WireValue::Int32),
        any::<i64>().prop_map(WireValue::Int64),
        any::<i128>().prop_map(WireValue::Int128),
        any::<u8>().prop_map(WireValue::UInt8),
        any::<u16>().prop_map(WireValue::UInt16),
        any::<u32>().prop_map(WireValue::UInt32),
        any::<u64>().prop_map(WireValue::UInt64),
        any::<f32>().prop_map(WireValue::Float),
        any::<f64>().prop_map(WireValue::Double),
        (any::<i128>(), any::<u8>(), any::<u8>()).prop_map(|(value, precision, scale)| {
            WireValue::Decimal(Decimal {
                value,
                precision,
                scale,
            })
        }),
        any::<i32>().prop_map(WireValue::Date),
        any::<i64>().prop_map(WireValue::Timestamp),
        any::<i64>().prop_map(WireValue::TimestampNs),
        any::<i64>().prop_map(WireValue::TimestampMs),
        any::<i64>().prop_map(WireValue::TimestampSec),
        any::<i64>().prop_map(WireValue::TimestampTz),
        interval().prop_map(WireValue::Interval),
        text().prop_map(WireValue::String),
        vec(any::<u8>(), 0..8).prop_map(WireValue::Blob),
        any::<u128>().prop_map(WireValue::Uuid),
        internal_id().prop_map(WireValue::InternalId),
    ]
}

fn properties(value: BoxedStrategy<WireValue>) -> impl Strategy<Value = Vec<Property>> {
    vec(
        (text(), value).prop_map(|(name, value)| Property { name, value }),
        0..3,
    )
}

pub fn node() -> impl Strategy<Value = Node> {
    (internal_id(), text(), properties(scalar().boxed())).prop_map(|(id, label, properties)| Node {
        id,
        label,
        properties,
    })
}

pub fn rel() -> impl Strategy<Value = Rel> {
    (
        internal_id(),
        internal_id(),
        internal_id(),
        text(),
        properties(scalar().boxed()),
    )
        .prop_map(|(src, dst, id, label, properties)| Rel {
            src,
            dst,
            id,
            label,
            properties,
        })
}

pub fn path() -> impl Strategy<Value = Path> {
    (vec(node(), 0..3), vec(rel(), 0..3)).prop_map(|(nodes, rels)| Path { nodes, rels })
}

/// Any value, nested up to three levels.
pub fn value() -> impl Strategy<Value = WireValue> {
    let leaf = prop_oneof![
        8 => scalar(),
        1 => node().prop_map(WireValue::Node),
        1 => rel().prop_map(WireValue::Rel),
        1 => path().prop_map(WireValue::Path),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(WireValue::List),
            properties(inner.clone()).prop_map(WireValue::Struct),
            vec(
                (inner.clone(), inner.clone()).prop_map(|(key, value)| MapEntry { key, value }),
                0..3
            )
            .prop_map(WireValue::Map),
            (text(), inner)
                .prop_map(|(tag, value)| WireValue::Union(Box::new(UnionValue { tag, value }))),
        ]
    })
}

fn offsets_of(lengths: impl IntoIterator<Item = usize>) -> Vec<u32> {
    let mut offsets = vec![0u32];
    let mut end = 0u32;
    for len in lengths {
        end += len as u32;
        offsets.push(end);
    }
    offsets
}

fn bitmap(valid: &[bool]) -> Vec<u8> {
    let mut bytes = vec![0u8; valid.len().div_ceil(8)];
    for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
        bytes[i / 8] |= 1 << (i % 8);
    }
    bytes
}

const ROWS: usize = 40;

/// A chunk of one of the fixed-width or flat kinds.
fn flat_chunk() -> impl Strategy<Value = ColumnData> {
    prop_oneof![
        (0u64..1000).prop_map(ColumnData::Null),
        vec(any::<bool>(), 0..ROWS).prop_map(ColumnData::Bool),
        vec(any::<i8>(), 0..ROWS).prop_map(ColumnData::Int8),
        vec(any::<i16>(), 0..ROWS).prop_map(ColumnData::Int16),
        vec(any::<i32>(), 0..ROWS).prop_map(ColumnData::Int32),
        vec(any::<i64>(), 0..ROWS).prop_map(ColumnData::Int64),
        vec(any::<i128>(), 0..ROWS).prop_map(ColumnData::Int128),
        vec(any::<u8>(), 0..ROWS).prop_map(ColumnData::UInt8),
        vec(any::<u16>(), 0..ROWS).prop_map(ColumnData::UInt16),
        vec(any::<u32>(), 0..ROWS).prop_map(ColumnData::UInt32),
        vec(any::<u64>(), 0..ROWS).prop_map(ColumnData::UInt64),
        vec(any::<u128>(), 0..ROWS).prop_map(ColumnData::UInt128),
        vec(any::<f32>(), 0..ROWS).prop_map(ColumnData::Float),
        vec(any::<f64>(), 0..ROWS).prop_map(ColumnData::Double),
        vec(interval(), 0..ROWS).prop_map(ColumnData::Interval),
        vec(internal_id(), 0..ROWS).prop_map(ColumnData::InternalId),
        vec(text(), 0..ROWS).prop_map(|strings| ColumnData::String(StringColumn::from_strs(
            strings.iter().map(String::as_str)
        ))),
        vec(vec(any::<u8>(), 0..6), 0..ROWS).prop_map(|blobs| {
            let mut column = BlobColumn::default();
            blobs.iter().for_each(|b| column.push(b));
            ColumnData::Blob(column)
        }),
        vec(node(), 0..6).prop_map(ColumnData::Node),
        vec(rel(), 0..6).prop_map(ColumnData::Rel),
        vec(path(), 0..4).prop_map(ColumnData::Path),
        vec(value(), 0..6).prop_map(ColumnData::Values),
    ]
}

/// Any chunk, nested kinds included (lists, maps, structs and nullable columns of chunks).
pub fn chunk() -> impl Strategy<Value = ColumnData> {
    prop_oneof![
        4 => flat_chunk(),
        1 => vec(vec(any::<i64>(), 0..4), 0..ROWS).prop_map(|lists| {
            let offsets = offsets_of(lists.iter().map(Vec::len));
            let values = Box::new(ColumnData::Int64(lists.concat()));
            ColumnData::List(ListColumn { offsets, values })
        }),
        1 => vec(vec((text(), any::<f64>()), 0..3), 0..ROWS).prop_map(|maps| {
            let offsets = offsets_of(maps.iter().map(Vec::len));
            let entries: Vec<&(String, f64)> = maps.iter().flatten().collect();
            let keys = StringColumn::from_strs(entries.iter().map(|e| e.0.as_str()));
            ColumnData::Map(MapColumn {
                offsets,
                keys: Box::new(ColumnData::String(keys)),
                values: Box::new(ColumnData::Double(entries.iter().map(|e| e.1).collect())),
            })
        }),
        1 => vec((any::<i32>(), text()), 0..ROWS).prop_map(|rows| {
            ColumnData::Struct(vec![
                ColumnData::Int32(rows.iter().map(|r| r.0).collect()),
                ColumnData::String(StringColumn::from_strs(rows.iter().map(|r| r.1.as_str()))),
            ])
        }),
        1 => vec(proptest::option::of(any::<i64>()), 0..ROWS).prop_map(|rows| {
            let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
            ColumnData::Nullable(NullableColumn {
                valid: bitmap(&valid),
                values: Box::new(ColumnData::Int64(
                    rows.iter().map(|r| r.unwrap_or_default()).collect(),
                )),
            })
        }),
    ]
}

pub fn wire_type() -> impl Strategy<Value = WireType> {
    let leaf = prop_oneof![
        Just(WireType::Any),
        Just(WireType::Bool),
        Just(WireType::Int64),
        Just(WireType::UInt8),
        Just(WireType::Double),
        (any::<u8>(), any::<u8>())
            .prop_map(|(precision, scale)| WireType::Decimal { precision, scale }),
        Just(WireType::Date),
        Just(WireType::TimestampNs),
        Just(WireType::Interval),
        Just(WireType::String),
        Just(WireType::Uuid),
        Just(WireType::InternalId),
        Just(WireType::Node),
        Just(WireType::Rel),
        Just(WireType::RecursiveRel),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        let fields = vec(
            (text(), inner.clone()).prop_map(|(name, ty)| Field { name, ty }),
            0..3,
        )
        .boxed();
        prop_oneof![
            inner.clone().prop_map(|t| WireType::List(Box::new(t))),
            (inner.clone(), any::<u32>()).prop_map(|(t, n)| WireType::Array(Box::new(t), n)),
            fields.clone().prop_map(WireType::Struct),
            (inner.clone(), inner).prop_map(|(k, v)| WireType::Map(Box::new(k), Box::new(v))),
            fields.prop_map(WireType::Union),
        ]
    })
}

pub fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        vec(
            (text(), wire_type()).prop_map(|(name, ty)| Column { name, ty }),
            0..4
        )
        .prop_map(|columns| Message::Header(Header {
            version: VERSION,
            columns
        })),
        (any::<u32>(), any::<u64>(), chunk()).prop_map(|(column, first_row, data)| {
            Message::Chunk(Chunk {
                column,
                first_row,
                data,
            })
        }),
        (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(rows, c, e)| {
            Message::End(Trailer {
                rows,
                compile_time_us: c,
                execution_time_us: e,
            })
        }),
        (text(), text()).prop_map(|(kind, message)| Message::Error(ErrorMessage { kind, message })),
        any::<u64>().prop_map(Message::Results),
    ]
}

pub fn request() -> impl Strategy<Value = QueryRequest> {
    (
        text(),
        vec(
            (text(), value()).prop_map(|(name, value)| Property { name, value }),
            0..4,
        ),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(query, parameters, every_statement, query_id)| QueryRequest {
                query,
                parameters,
                every_statement,
                query_id,
            },
        )
}
