//! Row-wise values: the members of node and rel properties, of `Values` chunks (mixed or
//! untyped columns, unions), and of the paths, nodes and rels that chunks carry one per row.

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// A node's or rel's table and offset (Kùzu prints it `table:offset`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct InternalId {
    pub table: u32,
    pub offset: u64,
}

/// A calendar interval. `repr(C)` without padding: a slice of them is 16 bytes per value in
/// bincode's layout and in memory alike, so an `Interval` chunk is copied in bulk.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, Pod, Zeroable,
)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

/// A fixed-point number: `value / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Decimal {
    pub value: i128,
    pub precision: u8,
    pub scale: u8,
}

/// A named value: a property of a node or rel, a field of a struct.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Property {
    pub name: String,
    pub value: WireValue,
}

/// One entry of a MAP value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct MapEntry {
    pub key: WireValue,
    pub value: WireValue,
}

/// A UNION value: the member's name and its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct UnionValue {
    pub tag: String,
    pub value: WireValue,
}

/// A node with its label and its non-NULL properties in schema order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Node {
    pub id: InternalId,
    pub label: String,
    pub properties: Vec<Property>,
}

/// A rel with its endpoints, label and non-NULL properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Rel {
    pub src: InternalId,
    pub dst: InternalId,
    pub id: InternalId,
    pub label: String,
    pub properties: Vec<Property>,
}

/// A path or a recursive rel: for a named path every node, endpoints included; for a recursive
/// rel variable the intermediate nodes only (as Kùzu prints them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Path {
    pub nodes: Vec<Node>,
    pub rels: Vec<Rel>,
}

/// One value of any type. Variant order is part of the format (bincode writes the index as u32).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub enum WireValue {
    #[default]
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Int128(i128),
    UInt8(u8),
    UInt16(u16),
    UInt32(u32),
    UInt64(u64),
    Float(f32),
    Double(f64),
    Decimal(Decimal),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the epoch, UTC.
    Timestamp(i64),
    TimestampNs(i64),
    TimestampMs(i64),
    TimestampSec(i64),
    TimestampTz(i64),
    Interval(Interval),
    String(String),
    Blob(Vec<u8>),
    Uuid(u128),
    List(Vec<WireValue>),
    Struct(Vec<Property>),
    Map(Vec<MapEntry>),
    Union(
        #[cfg_attr(
            any(test, feature = "wincode"),
            wincode(with = "crate::wincode_support::Boxed<UnionValue>")
        )]
        Box<UnionValue>,
    ),
    InternalId(InternalId),
    Node(Node),
    Rel(Rel),
    Path(Path),
}
