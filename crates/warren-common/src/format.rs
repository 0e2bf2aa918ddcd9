//! Printing values exactly as Kùzu prints them: `True`/`False`, doubles with six decimals, NULL
//! as nothing, lists `[a,b]`, structs `{a: 1}`, maps `{k=v}`, nodes `{_ID: 0:1, _LABEL: person,
//! ...}`, rels `(0:0)-{_LABEL: knows, _ID: 3:0, ...}->(0:1)` and paths `{_NODES: [..], _RELS: [..]}`.

use std::fmt::Write;

use crate::temporal;
use crate::value::{GraphLookup, NodeValue, RelValue, Value};

/// Formats one value.
pub fn to_kuzu_string(value: &Value, graph: &dyn GraphLookup) -> String {
    let mut out = String::new();
    write_value(&mut out, value, graph);
    out
}

/// Appends one value to `out`.
pub fn write_value(out: &mut String, value: &Value, graph: &dyn GraphLookup) {
    match value {
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Int8(v) => push_display(out, v),
        Value::Int16(v) => push_display(out, v),
        Value::Int32(v) => push_display(out, v),
        Value::Int64(v) => push_display(out, v),
        Value::Int128(v) => push_display(out, v),
        Value::UInt8(v) => push_display(out, v),
        Value::UInt16(v) => push_display(out, v),
        Value::UInt32(v) => push_display(out, v),
        Value::UInt64(v) => push_display(out, v),
        Value::Float(v) => write_double(out, f64::from(*v)),
        Value::Double(v) => write_double(out, *v),
        Value::Decimal(d) => write_decimal(out, d),
        Value::Date(days) => out.push_str(&temporal::format_date(i64::from(*days))),
        Value::Timestamp(micros) => out.push_str(&temporal::format_timestamp(*micros)),
        Value::TimestampTz(micros) => {
            out.push_str(&temporal::format_timestamp(*micros));
            out.push_str("+00");
        }
        Value::TimestampNs(nanos) => out.push_str(&temporal::format_timestamp_ns(*nanos)),
        Value::TimestampMs(millis) => {
            out.push_str(&temporal::format_timestamp(millis.saturating_mul(1000)));
        }
        Value::TimestampSec(seconds) => {
            out.push_str(&temporal::format_timestamp(
                seconds.saturating_mul(1_000_000),
            ));
        }
        Value::Interval(interval) => out.push_str(&temporal::format_interval(*interval)),
        Value::String(s) => out.push_str(s),
        Value::Blob(bytes) => write_blob(out, bytes),
        Value::Uuid(u) => write_uuid(out, *u),
        Value::List(values) => {
            out.push('[');
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, v, graph);
            }
            out.push(']');
        }
        Value::Struct(s) => {
            out.push('{');
            for (i, (name, v)) in s.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push_str(": ");
                write_value(out, v, graph);
            }
            out.push('}');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, k, graph);
                out.push('=');
                write_value(out, v, graph);
            }
            out.push('}');
        }
        Value::Union(u) => write_value(out, &u.value, graph),
        Value::InternalId(id) => push_display(out, id),
        Value::Node(node) => write_node(out, node, graph),
        Value::Rel(rel) => write_rel(out, rel, graph),
        Value::Path(path) => {
            out.push_str("{_NODES: [");
            for (i, node) in path.nodes.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_node(out, node, graph);
            }
            out.push_str("], _RELS: [");
            for (i, rel) in path.rels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_rel(out, rel, graph);
            }
            out.push_str("]}");
        }
    }
}

fn push_display(out: &mut String, value: impl std::fmt::Display) {
    let _ = write!(out, "{value}");
}

/// A decimal prints all `scale` digits after the point.
fn write_decimal(out: &mut String, d: &crate::value::Decimal) {
    let negative = d.value < 0;
    let digits = d.value.unsigned_abs().to_string();
    let scale = usize::from(d.scale);
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (integer, fraction) = digits.split_at(digits.len() - scale);
    if negative {
        out.push('-');
    }
    out.push_str(integer);
    if scale > 0 {
        out.push('.');
        out.push_str(fraction);
    }
}

/// Doubles print with six decimals, as C++ `std::to_string` does.
pub fn write_double(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("nan");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "inf" } else { "-inf" });
    } else {
        let _ = write!(out, "{value:.6}");
    }
}

fn write_blob(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'\\' || b == b' ' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
}

fn write_uuid(out: &mut String, value: u128) {
    let hex = format!("{value:032x}");
    let _ = write!(
        out,
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
}

/// Writes the non-NULL properties of a node or rel, limited to its projection if it has one.
fn write_properties(
    out: &mut String,
    value_id: crate::InternalId,
    is_rel: bool,
    projection: Option<&crate::value::Projection>,
    graph: &dyn GraphLookup,
) {
    for (name, v) in graph.properties(value_id, is_rel) {
        if v.is_null() {
            continue;
        }
        if let Some(projection) = projection {
            if !projection.iter().any(|p| p.eq_ignore_ascii_case(&name)) {
                continue;
            }
        }
        out.push_str(", ");
        out.push_str(&name);
        out.push_str(": ");
        write_value(out, &v, graph);
    }
}

fn write_node(out: &mut String, node: &NodeValue, graph: &dyn GraphLookup) {
    let _ = write!(
        out,
        "{{_ID: {}, _LABEL: {}",
        node.id,
        graph.table_name(node.id.table)
    );
    write_properties(out, node.id, false, node.projection.as_ref(), graph);
    out.push('}');
}

fn write_rel(out: &mut String, rel: &RelValue, graph: &dyn GraphLookup) {
    let (src, dst) = graph.rel_endpoints(rel.id);
    let _ = write!(
        out,
        "({src})-{{_LABEL: {}, _ID: {}",
        graph.table_name(rel.id.table),
        rel.id
    );
    write_properties(out, rel.id, true, rel.projection.as_ref(), graph);
    let _ = write!(out, "}}->({dst})");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{NoGraph, StructValue};
    use std::sync::Arc;

    fn show(v: &Value) -> String {
        to_kuzu_string(v, &NoGraph)
    }

    #[test]
    fn prints_scalars_as_kuzu() {
        assert_eq!(show(&Value::Bool(true)), "True");
        assert_eq!(show(&Value::Double(5.0)), "5.000000");
        assert_eq!(show(&Value::Float(1.731)), "1.731000");
        assert_eq!(show(&Value::Null), "");
        assert_eq!(
            show(&Value::Uuid(0xa0eebc999c0b4ef8bb6d6bb9bd380a11)),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert_eq!(
            show(&Value::Blob(Arc::from(&b"\xAA\xABinteresting\x0B"[..]))),
            "\\xAA\\xABinteresting\\x0B"
        );
    }

    #[test]
    fn prints_nested_values() {
        let list = Value::list(vec![Value::Int64(20), Value::Null, Value::Int64(30)]);
        assert_eq!(show(&list), "[20,,30]");
        let s = Value::Struct(Arc::new(StructValue {
            fields: vec![
                ("a".into(), Value::Int64(1)),
                ("b".into(), Value::string("x")),
            ],
        }));
        assert_eq!(show(&s), "{a: 1, b: x}");
        let m = Value::Map(Arc::from(vec![(Value::string("a"), Value::string("b"))]));
        assert_eq!(show(&m), "{a=b}");
    }
}
