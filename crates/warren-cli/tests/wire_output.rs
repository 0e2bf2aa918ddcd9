//! `warren query --format bincode` writes the framed wire format: decoded with warren-wire's
//! decoder, every query's rows equal `--format json`'s (nodes, rels, paths, lists, structs,
//! NULLs, several chunks). And every format exits quietly when its reader closes the pipe.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Map, Value as Json};
use warren_wire::{ColumnData, Message, WireType, WireValue};

fn warren() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warren"))
}

fn create(db: &Path) {
    let database = warren::Database::open(db).unwrap();
    let mut conn = database.connect();
    for statement in [
        "CREATE NODE TABLE Person(ID INT64, name STRING, score DOUBLE, PRIMARY KEY(ID))",
        "CREATE REL TABLE Knows(FROM Person TO Person, since INT64)",
        "UNWIND range(0, 5) AS i CREATE (:Person {ID: i, name: 'p' + CAST(i AS STRING), score: i * 0.5})",
        "MATCH (a:Person), (b:Person) WHERE b.ID = a.ID + 1 CREATE (a)-[:Knows {since: a.ID * 10}]->(b)",
        "MATCH (a:Person {ID: 2}) SET a.name = NULL",
    ] {
        conn.query(statement).unwrap();
    }
}

fn query(db: &Path, text: &str, format: &str) -> Vec<u8> {
    let output = warren()
        .arg("query")
        .arg(db)
        .arg(text)
        .args(["--format", format])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{text}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

fn id(id: &warren_wire::InternalId) -> Json {
    Json::String(format!("{}:{}", id.table, id.offset))
}

fn properties(map: &mut Map<String, Json>, properties: &[warren_wire::Property]) {
    for property in properties {
        map.insert(property.name.clone(), value_json(&property.value));
    }
}

fn node_json(node: &warren_wire::Node) -> Json {
    let mut map = Map::new();
    map.insert("_ID".into(), id(&node.id));
    map.insert("_LABEL".into(), Json::String(node.label.clone()));
    properties(&mut map, &node.properties);
    Json::Object(map)
}

fn rel_json(rel: &warren_wire::Rel) -> Json {
    let mut map = Map::new();
    map.insert("_ID".into(), id(&rel.id));
    map.insert("_LABEL".into(), Json::String(rel.label.clone()));
    map.insert("_SRC".into(), id(&rel.src));
    map.insert("_DST".into(), id(&rel.dst));
    properties(&mut map, &rel.properties);
    Json::Object(map)
}

fn path_json(path: &warren_wire::Path) -> Json {
    json!({
        "_NODES": path.nodes.iter().map(node_json).collect::<Vec<_>>(),
        "_RELS": path.rels.iter().map(rel_json).collect::<Vec<_>>(),
    })
}

/// The JSON form of a row-wise value (the types these queries return).
fn value_json(value: &WireValue) -> Json {
    match value {
        WireValue::Null => Json::Null,
        WireValue::Bool(b) => json!(b),
        WireValue::Int64(v) => json!(v),
        WireValue::Int32(v) => json!(v),
        WireValue::Double(v) => json!(v),
        WireValue::String(s) => json!(s),
        WireValue::List(items) => Json::Array(items.iter().map(value_json).collect()),
        WireValue::Node(n) => node_json(n),
        WireValue::Rel(r) => rel_json(r),
        WireValue::Path(p) => path_json(p),
        other => panic!("no JSON form in this test for {other:?}"),
    }
}

/// Row `row` of a chunk as JSON.
fn cell(data: &ColumnData, ty: &WireType, row: usize) -> Json {
    match data {
        ColumnData::Null(_) => Json::Null,
        ColumnData::Nullable(c) if !c.is_valid(row) => Json::Null,
        ColumnData::Nullable(c) => cell(&c.values, ty, row),
        ColumnData::Bool(v) => json!(v[row]),
        ColumnData::Int32(v) => json!(v[row]),
        ColumnData::Int64(v) => json!(v[row]),
        ColumnData::Double(v) => json!(v[row]),
        ColumnData::String(c) => json!(c.get(row).unwrap()),
        ColumnData::List(c) => {
            let element = match ty {
                WireType::List(element) | WireType::Array(element, _) => element,
                other => panic!("a list chunk in a {other} column"),
            };
            let (start, end) = (c.offsets[row] as usize, c.offsets[row + 1] as usize);
            Json::Array((start..end).map(|i| cell(&c.values, element, i)).collect())
        }
        ColumnData::Struct(children) => {
            let WireType::Struct(fields) = ty else {
                panic!("a struct chunk in a {ty} column");
            };
            let map = fields
                .iter()
                .zip(children)
                .map(|(field, child)| (field.name.clone(), cell(child, &field.ty, row)))
                .collect();
            Json::Object(map)
        }
        ColumnData::Node(v) => node_json(&v[row]),
        ColumnData::Rel(v) => rel_json(&v[row]),
        ColumnData::Path(v) => path_json(&v[row]),
        ColumnData::Values(v) => value_json(&v[row]),
        other => panic!("no JSON form in this test for {other:?}"),
    }
}

/// Decodes a framed stream into `{"columns": [...], "rows": [[...]]}`.
fn decoded_json(bytes: &[u8]) -> Json {
    let messages = warren_wire::decode_frames(bytes).expect("the output decodes");
    let Some(Message::Header(header)) = messages.first() else {
        panic!("the stream does not start with a header");
    };
    let Some(Message::End(trailer)) = messages.last() else {
        panic!("the stream does not end with a trailer");
    };
    let mut columns: Vec<Vec<Json>> = vec![Vec::new(); header.columns.len()];
    for message in &messages[1..messages.len() - 1] {
        let Message::Chunk(chunk) = message else {
            panic!("unexpected message {message:?}");
        };
        let column = &mut columns[chunk.column as usize];
        assert_eq!(
            column.len() as u64,
            chunk.first_row,
            "chunks arrive in order"
        );
        let ty = &header.columns[chunk.column as usize].ty;
        column.extend((0..chunk.data.rows()).map(|row| cell(&chunk.data, ty, row)));
    }
    for column in &columns {
        assert_eq!(column.len() as u64, trailer.rows);
    }
    let rows: Vec<Json> = (0..trailer.rows as usize)
        .map(|row| Json::Array(columns.iter().map(|c| c[row].clone()).collect()))
        .collect();
    let names: Vec<&str> = header.columns.iter().map(|c| c.name.as_str()).collect();
    json!({ "columns": names, "rows": rows })
}

#[test]
fn bincode_output_decodes_to_the_json_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    create(&db);
    for text in [
        "MATCH (a:Person) RETURN a, a.ID, a.name, a.score ORDER BY a.ID",
        "MATCH (a:Person)-[r:Knows]->(b:Person) RETURN r, b.name ORDER BY a.ID",
        "MATCH p = (a:Person)-[:Knows*1..3]->(b:Person) WHERE a.ID = 0 RETURN p, length(p) ORDER BY b.ID",
        "MATCH (a:Person)-[r:Knows*1..2]->(b:Person) WHERE a.ID = 1 RETURN r, b ORDER BY b.ID",
        "UNWIND [1, NULL, 3] AS x RETURN x, [x, 2] AS l, NULL AS n, CASE WHEN x = 3 THEN 'three' END AS s",
        "RETURN [[1, 2], [], [3]] AS nested, {a: 1, b: 'x'} AS st, true AS t, NULL AS nothing",
        "UNWIND range(1, 5000) AS x RETURN x, x * 0.5 AS half, CASE WHEN x % 7 = 0 THEN NULL ELSE x END AS some",
        "MATCH (a:Person) WHERE a.ID > 100 RETURN a.ID",
    ] {
        let bytes = query(&db, text, "bincode");
        let from_json: Json = serde_json::from_slice(&query(&db, text, "json")).unwrap();
        assert_eq!(decoded_json(&bytes), from_json, "{text}");
    }
}

#[test]
fn a_failing_query_sends_an_error_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    create(&db);
    let output = warren()
        .arg("query")
        .arg(&db)
        .arg("UNWIND [1, 0] AS x RETURN 10 / x")
        .args(["--format", "bincode"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let messages = warren_wire::decode_frames(&output.stdout).unwrap();
    assert!(matches!(messages.first(), Some(Message::Header(_))));
    let Some(Message::Error(error)) = messages.last() else {
        panic!("the stream does not end with an error: {messages:?}");
    };
    assert_eq!(error.kind, "Runtime exception");
    assert!(
        error.message.contains("Divide by zero"),
        "{}",
        error.message
    );
}

/// `warren query ... | head -c N`: the reader closes the pipe after a few bytes.
fn closes_quietly(db: &Path, format: &str) {
    let mut child = warren()
        .arg("query")
        .arg(db)
        .arg("UNWIND range(1, 300000) AS x RETURN x, 'some text to fill the pipe' AS t")
        .args(["--format", format, "--max-rows", "300000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{format}: {status}, stderr: {stderr}");
    assert_eq!(stderr, "", "{format}");
}

#[test]
fn every_format_exits_quietly_when_the_pipe_closes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    create(&db);
    for format in ["csv", "json", "table", "box", "markdown", "bincode"] {
        closes_quietly(&db, format);
    }
}

#[test]
fn bench_wire_runs_without_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("wire.json");
    let output = warren()
        .args(["bench", "wire", "--quick", "--repeat", "1", "--output"])
        .arg(&report)
        .env("WARREN_WIRE_PEER", dir.path().join("no-peer"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("enc/memcpy"), "{stdout}");
    let json: Json = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["workload"], "wire");
    let missing = warren()
        .args(["bench", "sp64", "--output"])
        .arg(dir.path().join("sp64.json"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--db"));
}
