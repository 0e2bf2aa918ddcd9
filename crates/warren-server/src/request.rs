//! Decoding a `POST /query` body: `{"query": "...", "parameters": {"name": value, ...}}`.
//! Never panics, whatever the bytes (a property test feeds it random input).

use std::collections::HashMap;

use serde_json::Value as Json;
use warren::{Error, Value};

/// Nesting deeper than this in a parameter is refused rather than recursed into.
pub const PARAMETER_DEPTH_MAX: usize = 64;

#[derive(Debug, PartialEq)]
pub struct QueryRequest {
    pub query: String,
    pub parameters: HashMap<String, Value>,
}

fn malformed(message: impl std::fmt::Display) -> Error {
    Error::Conversion(format!("malformed request: {message}"))
}

/// Decodes a request body.
pub fn decode(body: &[u8]) -> Result<QueryRequest, Error> {
    let json: Json = serde_json::from_slice(body).map_err(malformed)?;
    let Json::Object(mut fields) = json else {
        return Err(malformed("the body must be a JSON object"));
    };
    let query = match fields.remove("query") {
        Some(Json::String(query)) => query,
        Some(_) => return Err(malformed("\"query\" must be a string")),
        None => return Err(malformed("the body has no \"query\"")),
    };
    let mut parameters = HashMap::new();
    match fields.remove("parameters") {
        None | Some(Json::Null) => {}
        Some(Json::Object(map)) => {
            for (name, value) in map {
                let value = parameter(&value, 0)
                    .map_err(|e| malformed(format!("parameter {name}: {e}")))?;
                parameters.insert(name.trim_start_matches('$').to_string(), value);
            }
        }
        Some(_) => return Err(malformed("\"parameters\" must be an object")),
    }
    if let Some(name) = fields.keys().next() {
        return Err(malformed(format!("unknown field \"{name}\"")));
    }
    Ok(QueryRequest { query, parameters })
}

/// A JSON value as a Cypher value: integers as INT64 (UINT64 above its range), other numbers
/// as DOUBLE, arrays as lists, objects as structs.
pub fn parameter(json: &Json, depth: usize) -> Result<Value, String> {
    if depth > PARAMETER_DEPTH_MAX {
        return Err(format!("nested deeper than {PARAMETER_DEPTH_MAX}"));
    }
    Ok(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int64(i),
            (None, Some(u), _) => Value::UInt64(u),
            (None, None, Some(f)) => Value::Double(f),
            _ => return Err(format!("unsupported number {n}")),
        },
        Json::String(s) => Value::string(s.as_str()),
        Json::Array(items) => Value::list(
            items
                .iter()
                .map(|item| parameter(item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => {
            let fields = map
                .iter()
                .map(|(k, v)| Ok((k.as_str().into(), parameter(v, depth + 1)?)))
                .collect::<Result<Vec<_>, String>>()?;
            Value::Struct(std::sync::Arc::new(warren_common::value::StructValue {
                fields,
            }))
        }
    })
}
