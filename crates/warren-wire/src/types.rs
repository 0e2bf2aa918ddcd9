//! The result header's types: a column's Kùzu type with its structure (element types, fields).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A column's logical type, as Kùzu names it. The chunk kind that carries each type is given in
/// `docs/format/wire.md` (for example DATE travels as an `Int32` chunk of days since 1970-01-01).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub enum WireType {
    /// Untyped: NULL literals, empty lists' elements, mixed columns (`Values` chunks).
    Any,
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Int128,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float,
    Double,
    /// Fixed point: the unscaled value travels as an `Int128` chunk.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Serial,
    /// Days since 1970-01-01 (`Int32` chunks).
    Date,
    /// Microseconds since the epoch, UTC (`Int64` chunks), and its unit variants.
    Timestamp,
    TimestampNs,
    TimestampMs,
    TimestampSec,
    TimestampTz,
    Interval,
    String,
    Blob,
    /// 128 bits (`UInt128` chunks).
    Uuid,
    List(
        #[cfg_attr(
            any(test, feature = "wincode"),
            wincode(with = "crate::wincode_support::Boxed<WireType>")
        )]
        Box<WireType>,
    ),
    /// A fixed-size list `T[n]` (`List` chunks).
    Array(
        #[cfg_attr(
            any(test, feature = "wincode"),
            wincode(with = "crate::wincode_support::Boxed<WireType>")
        )]
        Box<WireType>,
        u32,
    ),
    Struct(Vec<Field>),
    Map(
        #[cfg_attr(
            any(test, feature = "wincode"),
            wincode(with = "crate::wincode_support::Boxed<WireType>")
        )]
        Box<WireType>,
        #[cfg_attr(
            any(test, feature = "wincode"),
            wincode(with = "crate::wincode_support::Boxed<WireType>")
        )]
        Box<WireType>,
    ),
    Union(Vec<Field>),
    InternalId,
    Node,
    Rel,
    RecursiveRel,
}

/// A named member of a STRUCT or UNION type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Field {
    pub name: String,
    pub ty: WireType,
}

/// One result column.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Column {
    pub name: String,
    pub ty: WireType,
}

impl WireType {
    fn simple_name(&self) -> Option<&'static str> {
        Some(match self {
            WireType::Any => "ANY",
            WireType::Bool => "BOOL",
            WireType::Int8 => "INT8",
            WireType::Int16 => "INT16",
            WireType::Int32 => "INT32",
            WireType::Int64 => "INT64",
            WireType::Int128 => "INT128",
            WireType::UInt8 => "UINT8",
            WireType::UInt16 => "UINT16",
            WireType::UInt32 => "UINT32",
            WireType::UInt64 => "UINT64",
            WireType::Float => "FLOAT",
            WireType::Double => "DOUBLE",
            WireType::Serial => "SERIAL",
            WireType::Date => "DATE",
            WireType::Timestamp => "TIMESTAMP",
            WireType::TimestampNs => "TIMESTAMP_NS",
            WireType::TimestampMs => "TIMESTAMP_MS",
            WireType::TimestampSec => "TIMESTAMP_SEC",
            WireType::TimestampTz => "TIMESTAMP_TZ",
            WireType::Interval => "INTERVAL",
            WireType::String => "STRING",
            WireType::Blob => "BLOB",
            WireType::Uuid => "UUID",
            WireType::InternalId => "INTERNAL_ID",
            WireType::Node => "NODE",
            WireType::Rel => "REL",
            WireType::RecursiveRel => "RECURSIVE_REL",
            _ => return None,
        })
    }
}

fn write_fields(f: &mut fmt::Formatter<'_>, keyword: &str, fields: &[Field]) -> fmt::Result {
    write!(f, "{keyword}(")?;
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{} {}", field.name, field.ty)?;
    }
    f.write_str(")")
}

/// Kùzu's type name: `INT64`, `STRING[]`, `INT64[3]`, `STRUCT(a INT64)`, `MAP(STRING, INT64)`.
impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.simple_name() {
            return f.write_str(name);
        }
        match self {
            WireType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            WireType::List(element) => write!(f, "{element}[]"),
            WireType::Array(element, size) => write!(f, "{element}[{size}]"),
            WireType::Map(key, value) => write!(f, "MAP({key}, {value})"),
            WireType::Struct(fields) => write_fields(f, "STRUCT", fields),
            WireType::Union(fields) => write_fields(f, "UNION", fields),
            _ => unreachable!("simple names are handled above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kuzu_names() {
        let list = WireType::List(Box::new(WireType::Int64));
        assert_eq!(list.to_string(), "INT64[]");
        let map = WireType::Map(Box::new(WireType::String), Box::new(list));
        assert_eq!(map.to_string(), "MAP(STRING, INT64[])");
        let fields = vec![Field {
            name: "a".into(),
            ty: WireType::Date,
        }];
        assert_eq!(WireType::Struct(fields).to_string(), "STRUCT(a DATE)");
        assert_eq!(WireType::RecursiveRel.to_string(), "RECURSIVE_REL");
    }
}
