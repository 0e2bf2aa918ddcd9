//! Decoding a `POST /query` body: JSON, `{"query": "...", "parameters": {"name": value, ...},
//! "query_id": n}`, or the binary `warren_wire::QueryRequest` (typed parameters, every
//! statement's result). Never panics, whatever the bytes (property tests feed both random
//! input).

use std::collections::HashMap;

use serde_json::Value as Json;
use warren::{Error, Value};

/// Nesting deeper than this in a parameter is refused rather than recursed into.
pub const PARAMETER_DEPTH_MAX: usize = 64;

#[derive(Debug, PartialEq)]
pub struct QueryRequest {
    pub query: String,
    pub parameters: HashMap<String, Value>,
    /// Answer `Results(n)` and every statement's result, not the last one's only.
    pub every_statement: bool,
    /// The id `POST /cancel` names the query by (0: none).
    pub query_id: u64,
}

/// Decodes a binary request body (`Content-Type: application/x-warren-bincode`).
pub fn decode_wire(body: &[u8]) -> Result<QueryRequest, Error> {
    let request = warren::wire_parameter::decode_request(body)?;
    Ok(QueryRequest {
        parameters: warren::wire_parameter::parameters(&request.parameters)?,
        query: request.query,
        every_statement: request.every_statement,
        query_id: request.query_id,
    })
}

/// Decodes a `POST /cancel` body: `{"query_id": n}`.
pub fn decode_cancel(body: &[u8]) -> Result<u64, Error> {
    let json: Json = serde_json::from_slice(body).map_err(malformed)?;
    match json.get("query_id").and_then(Json::as_u64) {
        Some(id) if id != 0 => Ok(id),
        _ => Err(malformed(
            "a cancel body is {\"query_id\": <a positive integer>}",
        )),
    }
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
    let query_id = match fields.remove("query_id") {
        None | Some(Json::Null) => 0,
        Some(id) => id
            .as_u64()
            .ok_or_else(|| malformed("\"query_id\" must be a non-negative integer"))?,
    };
    if let Some(name) = fields.keys().next() {
        return Err(malformed(format!("unknown field \"{name}\"")));
    }
    Ok(QueryRequest {
        query,
        parameters,
        every_statement: false,
        query_id,
    })
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
