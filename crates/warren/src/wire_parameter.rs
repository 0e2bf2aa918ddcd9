//! Query parameters as they arrive in a binary request (`warren_wire::QueryRequest`): typed
//! wire values back into engine values. Data values only: a node, rel or path is not a
//! parameter, and a DECIMAL must fit its precision.

use std::sync::Arc;

use warren_common::temporal::Interval;
use warren_common::value::{Decimal, StructValue, UnionValue, Value};
use warren_common::{Error, InternalId, Result};
use warren_wire::{DecodeError, WireValue};

/// Nesting deeper than this is refused (the wire decoder already limits it; this keeps the
/// recursion bounded for values built in memory too).
pub const PARAMETER_DEPTH_MAX: usize = 64;
/// DECIMAL's largest precision.
const DECIMAL_PRECISION_MAX: u8 = 38;

fn refused(message: String) -> Error {
    Error::Conversion(format!("malformed request: {message}"))
}

/// The parameters of a request, by name (a leading `$` is dropped, as in a JSON request).
pub fn parameters(
    parameters: &[warren_wire::Property],
) -> Result<std::collections::HashMap<String, Value>> {
    parameters
        .iter()
        .map(|p| {
            let value =
                parameter(&p.value).map_err(|e| refused(format!("parameter {}: {e}", p.name)))?;
            Ok((p.name.trim_start_matches('$').to_string(), value))
        })
        .collect()
}

/// One typed parameter value.
pub fn parameter(value: &WireValue) -> std::result::Result<Value, String> {
    value_at(value, 0)
}

fn value_at(value: &WireValue, depth: usize) -> std::result::Result<Value, String> {
    if depth > PARAMETER_DEPTH_MAX {
        return Err(format!("nested deeper than {PARAMETER_DEPTH_MAX}"));
    }
    if let Some(scalar) = scalar(value) {
        return Ok(scalar);
    }
    let nested = |v: &WireValue| value_at(v, depth + 1);
    Ok(match value {
        WireValue::Decimal(d) => Value::Decimal(Box::new(decimal(d)?)),
        WireValue::List(items) => Value::list(
            items
                .iter()
                .map(nested)
                .collect::<std::result::Result<_, _>>()?,
        ),
        WireValue::Struct(fields) => Value::Struct(Arc::new(StructValue {
            fields: fields
                .iter()
                .map(|f| Ok((Arc::from(f.name.as_str()), nested(&f.value)?)))
                .collect::<std::result::Result<_, String>>()?,
        })),
        WireValue::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|e| Ok((nested(&e.key)?, nested(&e.value)?)))
                .collect::<std::result::Result<Vec<_>, String>>()?
                .into(),
        ),
        WireValue::Union(u) => Value::Union(Arc::new(UnionValue {
            tag: Arc::from(u.tag.as_str()),
            value: nested(&u.value)?,
        })),
        WireValue::Node(_) | WireValue::Rel(_) | WireValue::Path(_) => {
            return Err("a node, rel or path cannot be a parameter".into())
        }
        _ => unreachable!("scalar wire values are mapped above"),
    })
}

/// A wire value that holds one scalar (every kind but DECIMAL, which has limits to check, and
/// the nested and graph kinds), as the engine's value; `None` for the others. The server's
/// parameters and the Python client's results share this mapping.
pub fn scalar(value: &WireValue) -> Option<Value> {
    Some(match value {
        WireValue::Null => Value::Null,
        WireValue::Bool(v) => Value::Bool(*v),
        WireValue::Int8(v) => Value::Int8(*v),
        WireValue::Int16(v) => Value::Int16(*v),
        WireValue::Int32(v) => Value::Int32(*v),
        WireValue::Int64(v) => Value::Int64(*v),
        WireValue::Int128(v) => Value::Int128(*v),
        WireValue::UInt8(v) => Value::UInt8(*v),
        WireValue::UInt16(v) => Value::UInt16(*v),
        WireValue::UInt32(v) => Value::UInt32(*v),
        WireValue::UInt64(v) => Value::UInt64(*v),
        WireValue::Float(v) => Value::Float(*v),
        WireValue::Double(v) => Value::Double(*v),
        WireValue::Date(v) => Value::Date(*v),
        WireValue::Timestamp(v) => Value::Timestamp(*v),
        WireValue::TimestampNs(v) => Value::TimestampNs(*v),
        WireValue::TimestampMs(v) => Value::TimestampMs(*v),
        WireValue::TimestampSec(v) => Value::TimestampSec(*v),
        WireValue::TimestampTz(v) => Value::TimestampTz(*v),
        WireValue::Interval(i) => Value::Interval(Interval {
            months: i.months,
            days: i.days,
            micros: i.micros,
        }),
        WireValue::String(s) => Value::string(s.as_str()),
        WireValue::Blob(b) => Value::Blob(Arc::from(b.as_slice())),
        WireValue::Uuid(v) => Value::Uuid(*v),
        WireValue::InternalId(id) => Value::InternalId(InternalId::new(id.table, id.offset)),
        WireValue::Decimal(_)
        | WireValue::List(_)
        | WireValue::Struct(_)
        | WireValue::Map(_)
        | WireValue::Union(_)
        | WireValue::Node(_)
        | WireValue::Rel(_)
        | WireValue::Path(_) => return None,
    })
}

/// A DECIMAL whose precision and scale are valid and whose value has at most `precision`
/// digits.
fn decimal(d: &warren_wire::Decimal) -> std::result::Result<Decimal, String> {
    if d.precision == 0 || d.precision > DECIMAL_PRECISION_MAX || d.scale > d.precision {
        return Err(format!(
            "DECIMAL({}, {}) is not a valid decimal type",
            d.precision, d.scale
        ));
    }
    let limit = 10i128.pow(u32::from(d.precision));
    if d.value <= -limit || d.value >= limit {
        return Err(format!("{} has more than {} digits", d.value, d.precision));
    }
    Ok(Decimal {
        value: d.value,
        precision: d.precision,
        scale: d.scale,
    })
}

/// A request body decoded, as the engine's error for a malformed one.
pub fn decode_request(body: &[u8]) -> Result<warren_wire::QueryRequest> {
    warren_wire::decode(body).map_err(|e: DecodeError| refused(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_come_back_as_they_were() {
        let graph = warren_common::value::NoGraph;
        let values = [
            Value::Date(19_000),
            Value::Timestamp(1_700_000_000_000_000),
            Value::Interval(Interval {
                months: 1,
                days: 2,
                micros: 3,
            }),
            Value::Uuid(0xA0EE_BC99),
            Value::Blob(Arc::from(&b"\x00\xff"[..])),
            Value::Decimal(Box::new(Decimal {
                value: 1225,
                precision: 10,
                scale: 2,
            })),
            Value::list(vec![Value::Int64(1), Value::Null]),
        ];
        for value in values {
            let wire = crate::wire::wire_value(&value, &graph);
            assert_eq!(parameter(&wire).unwrap(), value);
        }
    }

    #[test]
    fn invalid_decimals_and_graph_values_are_refused() {
        let bad = WireValue::Decimal(warren_wire::Decimal {
            value: 1000,
            precision: 3,
            scale: 0,
        });
        assert!(parameter(&bad).unwrap_err().contains("more than 3 digits"));
        let bad = WireValue::Decimal(warren_wire::Decimal {
            value: 1,
            precision: 39,
            scale: 0,
        });
        assert!(parameter(&bad).is_err());
        let node = WireValue::Node(warren_wire::Node {
            id: warren_wire::InternalId::default(),
            label: "P".into(),
            properties: Vec::new(),
        });
        assert!(parameter(&node)
            .unwrap_err()
            .contains("cannot be a parameter"));
    }
}
