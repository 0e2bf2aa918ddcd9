//! Logical types: what a column, an expression or a value is. Names print as Kùzu prints them
//! (`INT64`, `STRING[]`, `STRUCT(a INT64)`, `RECURSIVE_REL`).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A named member of a struct or union type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: String,
    pub ty: LogicalType,
}

/// Serializes as its DDL text (`INT64[]`), which keeps the manifest readable.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum LogicalType {
    /// The type of an untyped NULL literal or an empty list's element: unifies with anything.
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
    /// Fixed-point: (precision, scale), stored as a scaled 128-bit integer.
    Decimal(u8, u8),
    /// An INT64 primary key filled from a per-table counter.
    Serial,
    /// Days since 1970-01-01.
    Date,
    /// Microseconds since the Unix epoch, UTC.
    Timestamp,
    TimestampNs,
    TimestampMs,
    TimestampSec,
    TimestampTz,
    Interval,
    String,
    Blob,
    Uuid,
    List(Arc<LogicalType>),
    /// A fixed-size list, `INT64[4]`.
    Array(Arc<LogicalType>, u32),
    Struct(Arc<Vec<Field>>),
    Map(Arc<LogicalType>, Arc<LogicalType>),
    Union(Arc<Vec<Field>>),
    InternalId,
    Node,
    Rel,
    /// A recursive rel variable or a named path: `{_NODES: [...], _RELS: [...]}`.
    RecursiveRel,
}

impl LogicalType {
    pub fn list(element: LogicalType) -> Self {
        LogicalType::List(Arc::new(element))
    }

    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            LogicalType::Int8
                | LogicalType::Int16
                | LogicalType::Int32
                | LogicalType::Int64
                | LogicalType::Int128
                | LogicalType::UInt8
                | LogicalType::UInt16
                | LogicalType::UInt32
                | LogicalType::UInt64
                | LogicalType::Serial
        )
    }

    pub fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self,
                LogicalType::Float | LogicalType::Double | LogicalType::Decimal(..)
            )
    }

    pub fn is_timestamp(&self) -> bool {
        matches!(
            self,
            LogicalType::Timestamp
                | LogicalType::TimestampNs
                | LogicalType::TimestampMs
                | LogicalType::TimestampSec
                | LogicalType::TimestampTz
        )
    }

    /// The element type of a LIST or ARRAY.
    pub fn element(&self) -> Option<&LogicalType> {
        match self {
            LogicalType::List(e) | LogicalType::Array(e, _) => Some(e),
            _ => None,
        }
    }

    pub fn struct_fields(&self) -> Option<&[Field]> {
        match self {
            LogicalType::Struct(fields) | LogicalType::Union(fields) => Some(fields),
            _ => None,
        }
    }

    /// Bytes per value for types stored in fixed-width columns; `None` for variable-size types.
    pub fn fixed_width(&self) -> Option<usize> {
        Some(match self {
            LogicalType::Bool | LogicalType::Int8 | LogicalType::UInt8 => 1,
            LogicalType::Int16 | LogicalType::UInt16 => 2,
            LogicalType::Int32 | LogicalType::UInt32 | LogicalType::Float | LogicalType::Date => 4,
            LogicalType::Int64
            | LogicalType::UInt64
            | LogicalType::Double
            | LogicalType::Serial
            | LogicalType::Timestamp
            | LogicalType::TimestampNs
            | LogicalType::TimestampMs
            | LogicalType::TimestampSec
            | LogicalType::TimestampTz => 8,
            LogicalType::Int128
            | LogicalType::Interval
            | LogicalType::Uuid
            | LogicalType::Decimal(..)
            | LogicalType::InternalId => 16,
            _ => return None,
        })
    }

    /// Parses a type name as written in DDL (`INT64`, `STRING[]`, `INT64[4]`,
    /// `STRUCT(a INT64, b STRING)`, `MAP(STRING, INT64)`, `UNION(a INT64)`), case-insensitively.
    pub fn parse(text: &str) -> Result<LogicalType, String> {
        let mut parser = TypeParser { text, position: 0 };
        let ty = parser.parse_type()?;
        parser.skip_spaces();
        if parser.position != text.len() {
            return Err(format!("Cannot parse data type {text}."));
        }
        Ok(ty)
    }
}

impl From<LogicalType> for String {
    fn from(ty: LogicalType) -> String {
        ty.to_string()
    }
}

impl TryFrom<String> for LogicalType {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        LogicalType::parse(&text)
    }
}

struct TypeParser<'a> {
    text: &'a str,
    position: usize,
}

impl TypeParser<'_> {
    fn skip_spaces(&mut self) {
        while self.text[self.position..].starts_with(char::is_whitespace) {
            self.position += 1;
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.position..]
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_spaces();
        if self.rest().starts_with(token) {
            self.position += token.len();
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> String {
        self.skip_spaces();
        let length = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '`'))
            .unwrap_or(self.rest().len());
        let word = self.rest()[..length].trim_matches('`').to_string();
        self.position += length;
        word
    }

    fn parse_type(&mut self) -> Result<LogicalType, String> {
        let name = self.word().to_ascii_uppercase();
        let mut ty = match name.as_str() {
            "STRUCT" | "UNION" => {
                let fields = self.parse_fields()?;
                if name == "STRUCT" {
                    LogicalType::Struct(Arc::new(fields))
                } else {
                    LogicalType::Union(Arc::new(fields))
                }
            }
            "MAP" => {
                self.expect("(")?;
                let key = self.parse_type()?;
                self.expect(",")?;
                let value = self.parse_type()?;
                self.expect(")")?;
                LogicalType::Map(Arc::new(key), Arc::new(value))
            }
            "DECIMAL" | "NUMERIC" => self.parse_decimal()?,
            _ => simple_type(&name).ok_or_else(|| format!("Cannot parse data type {name}."))?,
        };
        loop {
            if self.eat("[") {
                self.skip_spaces();
                let digits: String = self
                    .rest()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                self.position += digits.len();
                self.expect("]")?;
                ty = if digits.is_empty() {
                    LogicalType::list(ty)
                } else {
                    let size = digits.parse::<u32>().map_err(|e| e.to_string())?;
                    LogicalType::Array(Arc::new(ty), size)
                };
            } else {
                return Ok(ty);
            }
        }
    }

    /// `DECIMAL` (18, 3) or `DECIMAL(precision, scale)` with 1 <= precision <= 38.
    fn parse_decimal(&mut self) -> Result<LogicalType, String> {
        if !self.eat("(") {
            return Ok(LogicalType::Decimal(18, 3));
        }
        let number = |parser: &mut Self| -> Result<u8, String> {
            let word = parser.word();
            word.parse::<u8>()
                .map_err(|_| format!("Cannot parse data type {}.", parser.text))
        };
        let precision = number(self)?;
        let scale = if self.eat(",") { number(self)? } else { 0 };
        self.expect(")")?;
        if precision == 0 || precision > 38 || scale > precision {
            return Err(format!(
                "Precision of DECIMAL must be between 1 and 38 and scale at most precision, got DECIMAL({precision}, {scale})."
            ));
        }
        Ok(LogicalType::Decimal(precision, scale))
    }

    fn parse_fields(&mut self) -> Result<Vec<Field>, String> {
        self.expect("(")?;
        let mut fields = Vec::new();
        loop {
            let name = self.word();
            if name.is_empty() {
                return Err(format!("Cannot parse data type {}.", self.text));
            }
            let ty = self.parse_type()?;
            fields.push(Field { name, ty });
            if self.eat(")") {
                return Ok(fields);
            }
            self.expect(",")?;
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("Cannot parse data type {}.", self.text))
        }
    }
}

fn simple_type(name: &str) -> Option<LogicalType> {
    Some(match name {
        "BOOL" | "BOOLEAN" => LogicalType::Bool,
        "INT8" => LogicalType::Int8,
        "INT16" => LogicalType::Int16,
        "INT32" | "INT" => LogicalType::Int32,
        "INT64" => LogicalType::Int64,
        "INT128" => LogicalType::Int128,
        "UINT8" => LogicalType::UInt8,
        "UINT16" => LogicalType::UInt16,
        "UINT32" => LogicalType::UInt32,
        "UINT64" => LogicalType::UInt64,
        "FLOAT" | "FLOAT4" | "REAL" => LogicalType::Float,
        "DOUBLE" | "FLOAT8" => LogicalType::Double,
        "SERIAL" => LogicalType::Serial,
        "DATE" => LogicalType::Date,
        "TIMESTAMP" => LogicalType::Timestamp,
        "TIMESTAMP_NS" => LogicalType::TimestampNs,
        "TIMESTAMP_MS" => LogicalType::TimestampMs,
        "TIMESTAMP_SEC" => LogicalType::TimestampSec,
        "TIMESTAMP_TZ" => LogicalType::TimestampTz,
        "INTERVAL" => LogicalType::Interval,
        "STRING" => LogicalType::String,
        "BLOB" | "BYTEA" => LogicalType::Blob,
        "UUID" => LogicalType::Uuid,
        "INTERNAL_ID" => LogicalType::InternalId,
        "NODE" => LogicalType::Node,
        "REL" => LogicalType::Rel,
        "RECURSIVE_REL" => LogicalType::RecursiveRel,
        _ => return None,
    })
}

impl fmt::Display for LogicalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            LogicalType::Any => "ANY",
            LogicalType::Bool => "BOOL",
            LogicalType::Int8 => "INT8",
            LogicalType::Int16 => "INT16",
            LogicalType::Int32 => "INT32",
            LogicalType::Int64 => "INT64",
            LogicalType::Int128 => "INT128",
            LogicalType::UInt8 => "UINT8",
            LogicalType::UInt16 => "UINT16",
            LogicalType::UInt32 => "UINT32",
            LogicalType::UInt64 => "UINT64",
            LogicalType::Float => "FLOAT",
            LogicalType::Double => "DOUBLE",
            LogicalType::Serial => "SERIAL",
            LogicalType::Date => "DATE",
            LogicalType::Timestamp => "TIMESTAMP",
            LogicalType::TimestampNs => "TIMESTAMP_NS",
            LogicalType::TimestampMs => "TIMESTAMP_MS",
            LogicalType::TimestampSec => "TIMESTAMP_SEC",
            LogicalType::TimestampTz => "TIMESTAMP_TZ",
            LogicalType::Interval => "INTERVAL",
            LogicalType::String => "STRING",
            LogicalType::Blob => "BLOB",
            LogicalType::Uuid => "UUID",
            LogicalType::InternalId => "INTERNAL_ID",
            LogicalType::Node => "NODE",
            LogicalType::Rel => "REL",
            LogicalType::RecursiveRel => "RECURSIVE_REL",
            LogicalType::Decimal(precision, scale) => {
                return write!(f, "DECIMAL({precision}, {scale})")
            }
            LogicalType::List(element) => return write!(f, "{element}[]"),
            LogicalType::Array(element, size) => return write!(f, "{element}[{size}]"),
            LogicalType::Map(key, value) => return write!(f, "MAP({key}, {value})"),
            LogicalType::Struct(fields) | LogicalType::Union(fields) => {
                let keyword = if matches!(self, LogicalType::Struct(_)) {
                    "STRUCT"
                } else {
                    "UNION"
                };
                write!(f, "{keyword}(")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{} {}", field.name, field.ty)?;
                }
                return write!(f, ")");
            }
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_nested_types() {
        for text in [
            "INT64",
            "STRING[]",
            "INT64[][]",
            "INT64[4]",
            "STRUCT(revenue INT16, location STRING[], stock STRUCT(price INT64[], volume INT64))",
            "MAP(STRING, INT64)",
            "UNION(price FLOAT, movein DATE, note STRING)",
            "DECIMAL(38, 4)",
        ] {
            assert_eq!(LogicalType::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(LogicalType::parse("BoOLEAN").unwrap(), LogicalType::Bool);
        assert_eq!(LogicalType::parse("bytea").unwrap(), LogicalType::Blob);
        assert!(LogicalType::parse("NOPE").is_err());
    }
}
