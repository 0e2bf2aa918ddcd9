//! Values as JSON: numbers as numbers (128-bit integers beyond 64 bits as strings), temporal
//! values and UUIDs as their printed text, lists as arrays, structs and maps as objects, and
//! nodes, rels and paths as objects with `_ID`, `_LABEL`, `_SRC`, `_DST`, `_NODES`, `_RELS`.

use serde_json::{json, Map, Value as Json};
use warren_common::format::to_kuzu_string;
use warren_common::value::{GraphLookup, NodeValue, RelValue, Value};

fn properties(
    map: &mut Map<String, Json>,
    id: warren_common::InternalId,
    is_rel: bool,
    projection: Option<&warren_common::value::Projection>,
    graph: &dyn GraphLookup,
) {
    for (name, value) in graph.properties(id, is_rel) {
        if value.is_null() {
            continue;
        }
        if projection.is_some_and(|p| !p.iter().any(|n| n.eq_ignore_ascii_case(&name))) {
            continue;
        }
        map.insert(name.to_string(), to_json(&value, graph));
    }
}

fn node(node: &NodeValue, graph: &dyn GraphLookup) -> Json {
    let mut map = Map::new();
    map.insert("_ID".into(), Json::String(node.id.to_string()));
    map.insert(
        "_LABEL".into(),
        Json::String(graph.table_name(node.id.table)),
    );
    properties(&mut map, node.id, false, node.projection.as_ref(), graph);
    Json::Object(map)
}

fn rel(rel: &RelValue, graph: &dyn GraphLookup) -> Json {
    let (src, dst) = graph.rel_endpoints(rel.id);
    let mut map = Map::new();
    map.insert("_ID".into(), Json::String(rel.id.to_string()));
    map.insert(
        "_LABEL".into(),
        Json::String(graph.table_name(rel.id.table)),
    );
    map.insert("_SRC".into(), Json::String(src.to_string()));
    map.insert("_DST".into(), Json::String(dst.to_string()));
    properties(&mut map, rel.id, true, rel.projection.as_ref(), graph);
    Json::Object(map)
}

/// Converts one value.
pub fn to_json(value: &Value, graph: &dyn GraphLookup) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Float(_) | Value::Double(_) => {
            let v = value.as_f64().unwrap_or(f64::NAN);
            serde_json::Number::from_f64(v)
                .map_or_else(|| Json::String(v.to_string()), Json::Number)
        }
        Value::String(s) => Json::String(s.to_string()),
        Value::List(items) => Json::Array(items.iter().map(|v| to_json(v, graph)).collect()),
        Value::Struct(s) => Json::Object(
            s.fields
                .iter()
                .map(|(n, v)| (n.to_string(), to_json(v, graph)))
                .collect(),
        ),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (to_kuzu_string(k, graph), to_json(v, graph)))
                .collect(),
        ),
        Value::Union(u) => to_json(&u.value, graph),
        Value::Node(n) => node(n, graph),
        Value::Rel(r) => rel(r, graph),
        Value::Path(path) => json!({
            "_NODES": path.nodes.iter().map(|n| node(n, graph)).collect::<Vec<_>>(),
            "_RELS": path.rels.iter().map(|r| rel(r, graph)).collect::<Vec<_>>(),
        }),
        other => match other.as_i128() {
            Some(v) => match i64::try_from(v) {
                Ok(small) => Json::from(small),
                Err(_) => match u64::try_from(v) {
                    Ok(unsigned) => Json::from(unsigned),
                    Err(_) => Json::String(v.to_string()),
                },
            },
            None => Json::String(to_kuzu_string(other, graph)),
        },
    }
}
