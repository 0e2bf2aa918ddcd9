//! A compact, type-directed binary encoding of single values, used for variable-size columns
//! (strings, blobs, lists, structs, maps, unions). The type is known from the schema, so the
//! encoding carries no type tags: little-endian fixed-size scalars, u32 lengths, and a one-byte
//! NULL flag before every nested element.

use std::sync::Arc;

use warren_common::temporal::Interval;
use warren_common::types::LogicalType;
use warren_common::value::{StructValue, UnionValue, Value};

/// Appends the encoding of a non-NULL `value` of type `ty`. The value must already have that
/// type (callers cast first); a mismatch is reported as an error, not written.
pub fn encode(out: &mut Vec<u8>, value: &Value, ty: &LogicalType) -> Result<(), String> {
    match (ty, value) {
        (LogicalType::String, Value::String(s)) => encode_bytes(out, s.as_bytes()),
        (LogicalType::Blob, Value::Blob(b)) => encode_bytes(out, b),
        (LogicalType::List(element), Value::List(values))
        | (LogicalType::Array(element, _), Value::List(values)) => {
            out.extend_from_slice(&(values.len() as u32).to_le_bytes());
            for v in values.iter() {
                encode_nullable(out, v, element)?;
            }
        }
        (LogicalType::Struct(fields), Value::Struct(s)) => {
            for field in fields.iter() {
                let v = s
                    .fields
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(&field.name))
                    .map(|(_, v)| v)
                    .unwrap_or(&Value::Null);
                encode_nullable(out, v, &field.ty)?;
            }
        }
        (LogicalType::Map(key, val), Value::Map(entries)) => {
            out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
            for (k, v) in entries.iter() {
                encode_nullable(out, k, key)?;
                encode_nullable(out, v, val)?;
            }
        }
        (LogicalType::Union(fields), Value::Union(u)) => {
            let tag = fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(&u.tag))
                .ok_or_else(|| format!("union tag {} is not a member of {ty}", u.tag))?;
            out.push(tag as u8);
            encode_nullable(out, &u.value, &fields[tag].ty)?;
        }
        _ => encode_fixed(out, value, ty)?,
    }
    Ok(())
}

fn encode_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Appends a NULL flag (0 = NULL) and, for a non-NULL value, its encoding.
pub fn encode_nullable(out: &mut Vec<u8>, value: &Value, ty: &LogicalType) -> Result<(), String> {
    if value.is_null() {
        out.push(0);
        Ok(())
    } else {
        out.push(1);
        encode(out, value, ty)
    }
}

/// Appends a fixed-width scalar in its column layout (the same bytes a fixed column stores).
pub fn encode_fixed(out: &mut Vec<u8>, value: &Value, ty: &LogicalType) -> Result<(), String> {
    match (ty, value) {
        (LogicalType::Bool, Value::Bool(b)) => out.push(u8::from(*b)),
        (LogicalType::Int8, Value::Int8(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Int16, Value::Int16(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Int32, Value::Int32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Int64 | LogicalType::Serial, Value::Int64(v)) => {
            out.extend_from_slice(&v.to_le_bytes());
        }
        (LogicalType::Int128, Value::Int128(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Decimal(precision, scale), Value::Decimal(d))
            if d.precision == *precision && d.scale == *scale =>
        {
            out.extend_from_slice(&d.value.to_le_bytes());
        }
        (LogicalType::UInt8, Value::UInt8(v)) => out.push(*v),
        (LogicalType::UInt16, Value::UInt16(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::UInt32, Value::UInt32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::UInt64, Value::UInt64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Float, Value::Float(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Double, Value::Double(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Date, Value::Date(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (LogicalType::Timestamp, Value::Timestamp(v))
        | (LogicalType::TimestampNs, Value::TimestampNs(v))
        | (LogicalType::TimestampMs, Value::TimestampMs(v))
        | (LogicalType::TimestampSec, Value::TimestampSec(v))
        | (LogicalType::TimestampTz, Value::TimestampTz(v)) => {
            out.extend_from_slice(&v.to_le_bytes());
        }
        (LogicalType::Interval, Value::Interval(i)) => {
            out.extend_from_slice(&i.months.to_le_bytes());
            out.extend_from_slice(&i.days.to_le_bytes());
            out.extend_from_slice(&i.micros.to_le_bytes());
        }
        (LogicalType::Uuid, Value::Uuid(u)) => out.extend_from_slice(&u.to_le_bytes()),
        (LogicalType::InternalId, Value::InternalId(id)) => {
            out.extend_from_slice(&u64::from(id.table).to_le_bytes());
            out.extend_from_slice(&id.offset.to_le_bytes());
        }
        _ => return Err(format!("value {value:?} does not have type {ty}")),
    }
    Ok(())
}

/// A cursor over encoded bytes. Every read is bounds-checked: encoded data comes from disk.
pub struct Decoder<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], String> {
        let end = self
            .position
            .checked_add(count)
            .filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| "encoded value is truncated".to_string())?;
        let slice = &self.bytes[self.position..end];
        self.position = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Whether every byte was read.
    pub fn is_at_end(&self) -> bool {
        self.position == self.bytes.len()
    }

    /// The next `count` bytes, as they are.
    pub fn read_bytes(&mut self, count: usize) -> Result<&'a [u8], String> {
        self.take(count)
    }

    /// Every byte not read yet (and nothing left to read afterwards).
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.bytes[self.position..];
        self.position = self.bytes.len();
        rest
    }

    pub fn read_u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    pub fn read_u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn read_u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn length(&mut self) -> Result<usize, String> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    /// Decodes one non-NULL value of type `ty`.
    pub fn decode(&mut self, ty: &LogicalType) -> Result<Value, String> {
        Ok(match ty {
            LogicalType::String => {
                let length = self.length()?;
                let text = std::str::from_utf8(self.take(length)?).map_err(|e| e.to_string())?;
                Value::String(text.into())
            }
            LogicalType::Blob => {
                let length = self.length()?;
                Value::Blob(self.take(length)?.into())
            }
            LogicalType::List(element) | LogicalType::Array(element, _) => {
                let count = self.length()?;
                let mut values = Vec::with_capacity(count.min(1 << 16));
                for _ in 0..count {
                    values.push(self.decode_nullable(element)?);
                }
                Value::List(values.into())
            }
            LogicalType::Struct(fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for field in fields.iter() {
                    values.push((
                        Arc::from(field.name.as_str()),
                        self.decode_nullable(&field.ty)?,
                    ));
                }
                Value::Struct(Arc::new(StructValue { fields: values }))
            }
            LogicalType::Map(key, val) => {
                let count = self.length()?;
                let mut entries = Vec::with_capacity(count.min(1 << 16));
                for _ in 0..count {
                    entries.push((self.decode_nullable(key)?, self.decode_nullable(val)?));
                }
                Value::Map(entries.into())
            }
            LogicalType::Union(fields) => {
                let tag = self.array::<1>()?[0] as usize;
                let field = fields.get(tag).ok_or("union tag out of range")?;
                let value = self.decode_nullable(&field.ty)?;
                Value::Union(Arc::new(UnionValue {
                    tag: field.name.as_str().into(),
                    value,
                }))
            }
            _ => self.decode_fixed(ty)?,
        })
    }

    /// Decodes a NULL flag and, when not NULL, the value after it.
    pub fn decode_nullable(&mut self, ty: &LogicalType) -> Result<Value, String> {
        match self.array::<1>()?[0] {
            0 => Ok(Value::Null),
            _ => self.decode(ty),
        }
    }

    /// Decodes a fixed-width scalar.
    pub fn decode_fixed(&mut self, ty: &LogicalType) -> Result<Value, String> {
        Ok(match ty {
            LogicalType::Bool => Value::Bool(self.array::<1>()?[0] != 0),
            LogicalType::Int8 => Value::Int8(i8::from_le_bytes(self.array()?)),
            LogicalType::Int16 => Value::Int16(i16::from_le_bytes(self.array()?)),
            LogicalType::Int32 => Value::Int32(i32::from_le_bytes(self.array()?)),
            LogicalType::Int64 | LogicalType::Serial => {
                Value::Int64(i64::from_le_bytes(self.array()?))
            }
            LogicalType::Int128 => Value::Int128(i128::from_le_bytes(self.array()?)),
            LogicalType::Decimal(precision, scale) => {
                Value::Decimal(Box::new(warren_common::value::Decimal {
                    value: i128::from_le_bytes(self.array()?),
                    precision: *precision,
                    scale: *scale,
                }))
            }
            LogicalType::UInt8 => Value::UInt8(self.array::<1>()?[0]),
            LogicalType::UInt16 => Value::UInt16(u16::from_le_bytes(self.array()?)),
            LogicalType::UInt32 => Value::UInt32(u32::from_le_bytes(self.array()?)),
            LogicalType::UInt64 => Value::UInt64(u64::from_le_bytes(self.array()?)),
            LogicalType::Float => Value::Float(f32::from_le_bytes(self.array()?)),
            LogicalType::Double => Value::Double(f64::from_le_bytes(self.array()?)),
            LogicalType::Date => Value::Date(i32::from_le_bytes(self.array()?)),
            LogicalType::Timestamp => Value::Timestamp(i64::from_le_bytes(self.array()?)),
            LogicalType::TimestampNs => Value::TimestampNs(i64::from_le_bytes(self.array()?)),
            LogicalType::TimestampMs => Value::TimestampMs(i64::from_le_bytes(self.array()?)),
            LogicalType::TimestampSec => Value::TimestampSec(i64::from_le_bytes(self.array()?)),
            LogicalType::TimestampTz => Value::TimestampTz(i64::from_le_bytes(self.array()?)),
            LogicalType::Interval => {
                let months = i32::from_le_bytes(self.array()?);
                let days = i32::from_le_bytes(self.array()?);
                let micros = i64::from_le_bytes(self.array()?);
                Value::Interval(Interval {
                    months,
                    days,
                    micros,
                })
            }
            LogicalType::Uuid => Value::Uuid(u128::from_le_bytes(self.array()?)),
            LogicalType::InternalId => {
                let table = u64::from_le_bytes(self.array()?);
                let offset = u64::from_le_bytes(self.array()?);
                let table = u32::try_from(table).map_err(|e| e.to_string())?;
                Value::InternalId(warren_common::InternalId::new(table, offset))
            }
            _ => return Err(format!("type {ty} has no fixed-width encoding")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_values_round_trip() {
        let ty = LogicalType::parse(
            "STRUCT(a INT64[], b MAP(STRING, INT64), c UNION(x INT64, y STRING))",
        )
        .unwrap();
        let value = Value::Struct(Arc::new(StructValue {
            fields: vec![
                ("a".into(), Value::list(vec![Value::Int64(1), Value::Null])),
                (
                    "b".into(),
                    Value::Map(vec![(Value::string("k"), Value::Int64(2))].into()),
                ),
                (
                    "c".into(),
                    Value::Union(Arc::new(UnionValue {
                        tag: "y".into(),
                        value: Value::string("z"),
                    })),
                ),
            ],
        }));
        let mut bytes = Vec::new();
        encode(&mut bytes, &value, &ty).unwrap();
        let decoded = Decoder::new(&bytes).decode(&ty).unwrap();
        assert_eq!(format!("{decoded:?}"), format!("{value:?}"));
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut bytes = Vec::new();
        encode(&mut bytes, &Value::string("hello"), &LogicalType::String).unwrap();
        bytes.pop();
        assert!(Decoder::new(&bytes).decode(&LogicalType::String).is_err());
    }
}
