//! Binary requests: typed parameters, every statement's result, and cancelling a query by id.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use warren::Value;
use warren_client::{Client, ClientError};
use warren_server::{open_database, Config, Server};
use warren_wire::{Message, Property, QueryRequest, WireValue};

/// A complete directed graph of this many nodes: the walks of up to 5 hops from one node number
/// 59^5 (7 * 10^8), each enumerated (the rel variable is bound): far longer than a test waits.
const NODES: i64 = 60;
const LONG_WALKS: &str = "MATCH (a:N {id: 0})-[e:E*1..5]->(b:N) RETURN sum(b.id)";

fn database(dir: &Path) {
    let db = open_database(dir, false).unwrap();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))".to_string(),
        "CREATE REL TABLE E(FROM N TO N)".to_string(),
        format!("UNWIND range(0, {}) AS i CREATE (:N {{id: i}})", NODES - 1),
        "MATCH (a:N), (b:N) WHERE a.id <> b.id CREATE (a)-[:E]->(b)".to_string(),
    ] {
        conn.query(&statement).unwrap();
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: warren::Database,
    server: Server,
}

fn start() -> Fixture {
    start_with(|_| {})
}

fn start_with(configure: impl FnOnce(&mut Config)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    database(&db_dir);
    let mut config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        ..Config::default()
    };
    configure(&mut config);
    let db = open_database(&db_dir, false).unwrap();
    let server = Server::start(&config, &db).unwrap();
    Fixture {
        _dir: dir,
        db,
        server,
    }
}

fn client(fixture: &Fixture) -> Client {
    Client::connect(&format!("http://{}", fixture.server.addr()), None).unwrap()
}

fn request(query: &str) -> QueryRequest {
    QueryRequest {
        query: query.into(),
        ..QueryRequest::default()
    }
}

/// Every chunk of the current result as rows of wire values.
fn rows(stream: &mut warren_client::ResultStream<'_>) -> Vec<Vec<WireValue>> {
    let mut columns: Vec<Vec<WireValue>> = vec![Vec::new(); stream.header.columns.len()];
    while let Some(chunk) = stream.next_chunk().unwrap() {
        let values = chunk_values(&chunk.data);
        columns[chunk.column as usize].extend(values);
    }
    let rows = columns.first().map_or(0, Vec::len);
    (0..rows)
        .map(|r| columns.iter().map(|c| c[r].clone()).collect())
        .collect()
}

/// The few chunk kinds these tests read, as values.
fn chunk_values(data: &warren_wire::ColumnData) -> Vec<WireValue> {
    use warren_wire::ColumnData;
    match data {
        ColumnData::Int64(values) => values.iter().map(|v| WireValue::Int64(*v)).collect(),
        ColumnData::Values(values) => values.clone(),
        ColumnData::String(column) => (0..column.offsets.len() - 1)
            .map(|i| {
                let range = column.offsets[i] as usize..column.offsets[i + 1] as usize;
                WireValue::String(column.text[range].to_string())
            })
            .collect(),
        other => panic!("unexpected chunk {other:?}"),
    }
}

#[test]
fn every_statement_answers_one_result_per_statement() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request(
        "CREATE NODE TABLE T(k STRING, PRIMARY KEY(k)); CREATE (:T {k: 'a'}); \
         MATCH (t:T) RETURN t.k; RETURN 1 AS one, 2 AS two",
    );
    request.every_statement = true;
    let mut stream = client.request_stream(&request).unwrap();
    assert_eq!(stream.results_left(), 3);
    let mut answers = Vec::new();
    loop {
        let names: Vec<String> = stream
            .header
            .columns
            .iter()
            .map(|c| c.name.clone())
            .collect();
        answers.push((names, rows(&mut stream)));
        if !stream.next_result().unwrap() {
            break;
        }
    }
    assert_eq!(answers.len(), 4);
    assert_eq!(answers[0].0, ["result"]);
    assert_eq!(
        answers[2],
        (
            vec!["t.k".to_string()],
            vec![vec![WireValue::String("a".into())]]
        )
    );
    assert_eq!(answers[3].1, [[WireValue::Int64(1), WireValue::Int64(2)]]);
    // The connection is reusable after the last result.
    let answer = client.query("RETURN 3", "{}").unwrap();
    assert_eq!(answer.trailer.rows, 1);
}

#[test]
fn a_later_statements_error_ends_the_stream_after_the_earlier_results() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request("RETURN 1; MATCH (x:Nope) RETURN x; RETURN 2");
    request.every_statement = true;
    let mut stream = client.request_stream(&request).unwrap();
    assert_eq!(rows(&mut stream), [[WireValue::Int64(1)]]);
    let error = stream.next_result().unwrap_err();
    let ClientError::Query { kind, message } = error else {
        panic!("expected the query's error, got {error:?}")
    };
    assert_eq!(kind, "Binder exception");
    assert!(message.contains("Nope"), "{message}");
}

#[test]
fn every_statement_needs_the_binary_answer() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request("RETURN 1");
    request.every_statement = true;
    let bytes = warren_wire::Encode::to_bytes(&request);
    let response = client
        .request(
            "POST",
            "/query",
            &[("Content-Type", warren_wire::CONTENT_TYPE)],
            &bytes,
        )
        .unwrap();
    assert_eq!(response.status, 400);
    let text = String::from_utf8(response.into_bytes().unwrap()).unwrap();
    assert!(text.contains("needs the binary answer"), "{text}");
}

/// Typed parameters come back as the embedded connection returns them.
#[test]
fn typed_parameters_round_trip_as_embedded() {
    let fixture = start();
    let mut client = client(&fixture);
    let graph = warren_common::value::NoGraph;
    let parameters: Vec<(&str, Value)> = vec![
        ("d", Value::Date(19_782)),
        ("ts", Value::Timestamp(1_709_251_200_123_456)),
        ("tz", Value::TimestampTz(1_709_251_200_000_001)),
        (
            "iv",
            Value::Interval(warren_common::temporal::Interval {
                months: 14,
                days: 2,
                micros: 3_600_000_000,
            }),
        ),
        ("u", Value::Uuid(0xa0ee_bc99_9c0b_4ef8_bb6d_6bb9_bd38_0a12)),
        (
            "dec",
            Value::Decimal(Box::new(warren_common::value::Decimal {
                value: -1225,
                precision: 10,
                scale: 2,
            })),
        ),
        ("b", Value::Blob(std::sync::Arc::from(&b"\x00\xaa\xff"[..]))),
        (
            "l",
            Value::list(vec![Value::Date(1), Value::Null, Value::Date(-1)]),
        ),
        (
            "st",
            Value::Struct(std::sync::Arc::new(warren_common::value::StructValue {
                fields: vec![
                    ("a".into(), Value::Uuid(7)),
                    ("b".into(), Value::list(vec![Value::Int64(1)])),
                ],
            })),
        ),
    ];
    let names: Vec<&str> = parameters.iter().map(|(n, _)| *n).collect();
    let query = format!(
        "RETURN {}",
        names
            .iter()
            .map(|n| format!("${n} AS {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut embedded = fixture.db.connect();
    let values: HashMap<String, Value> = parameters
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    let mut expected = embedded.query_with(&query, &values).unwrap();
    let expected_types: Vec<String> = expected
        .column_types()
        .iter()
        .map(ToString::to_string)
        .collect();
    let expected_row = expected.next_row().unwrap().unwrap();

    let mut request = request(&query);
    request.parameters = parameters
        .iter()
        .map(|(name, value)| Property {
            name: format!("${name}"),
            value: warren::wire::wire_value(value, &graph),
        })
        .collect();
    let answer = client
        .request_stream(&request)
        .map(|mut stream| {
            let types: Vec<String> = stream
                .header
                .columns
                .iter()
                .map(|c| c.ty.to_string())
                .collect();
            let mut chunks = Vec::new();
            while let Some(chunk) = stream.next_chunk().unwrap() {
                chunks.push(chunk);
            }
            (types, chunks)
        })
        .unwrap();
    assert_eq!(answer.0, expected_types);
    assert_eq!(
        expected_types,
        [
            "DATE",
            "TIMESTAMP",
            "TIMESTAMP_TZ",
            "INTERVAL",
            "UUID",
            "DECIMAL(10, 2)",
            "BLOB",
            "DATE[]",
            "STRUCT(a UUID, b INT64[])"
        ]
    );
    // Each column's chunk equals the embedded value encoded as the server encodes it.
    for (chunk, (value, ty)) in answer
        .1
        .iter()
        .zip(expected_row.iter().zip(expected.column_types()))
    {
        let encoded = warren::wire::chunk(ty, &[value], &graph);
        assert_eq!(chunk.data, encoded, "column {}", chunk.column);
    }
}

#[test]
fn graph_values_and_bad_decimals_are_refused_as_parameters() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request("RETURN $x");
    request.parameters = vec![Property {
        name: "x".into(),
        value: WireValue::Decimal(warren_wire::Decimal {
            value: 10_000,
            precision: 4,
            scale: 0,
        }),
    }];
    let error = client.request_stream(&request).unwrap_err();
    let ClientError::Status { status, text } = error else {
        panic!("expected a 400, got {error:?}")
    };
    assert_eq!(status, 400);
    assert!(
        text.contains("parameter x: 10000 has more than 4 digits"),
        "{text}"
    );
}

fn cancel_soon(fixture: &Fixture, id: u64, after: Duration) -> std::thread::JoinHandle<bool> {
    let url = format!("http://{}", fixture.server.addr());
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let mut client = Client::connect(&url, None).unwrap();
        // The query may not be registered yet on a slow machine: tries for up to 20 s (the
        // server's own timeout, 30 s, would end it otherwise).
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if client.cancel(id).unwrap() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    })
}

#[test]
fn a_running_query_stops_promptly_when_cancelled_by_id() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request(LONG_WALKS);
    request.query_id = 0x5eed_0001;
    let canceller = cancel_soon(&fixture, request.query_id, Duration::from_millis(500));
    let started = Instant::now();
    let error = client.request_stream(&request).unwrap_err();
    let elapsed = started.elapsed();
    assert!(canceller.join().unwrap(), "the cancel found no query");
    let ClientError::Status { status, text } = error else {
        panic!("expected the interrupt error, got {error:?}")
    };
    assert_eq!(status, 408);
    assert_eq!(
        text.trim_end(),
        "Error: Interrupted: the query was interrupted"
    );
    // The message says cancelled, not timed out (the server's own timeout, 30 s, says "exceeded
    // its timeout"); the bound leaves a busy machine room.
    assert!(elapsed < Duration::from_secs(25), "took {elapsed:?}");
    // The id is free again, and the query thread serves the next query.
    let mut again = self::request("RETURN 1");
    again.query_id = request.query_id;
    let mut stream = client.request_stream(&again).unwrap();
    assert_eq!(rows(&mut stream), [[WireValue::Int64(1)]]);
    assert!(!client.cancel(request.query_id).unwrap());
}

#[test]
fn a_cancel_between_statements_stops_the_rest() {
    let fixture = start();
    let mut client = client(&fixture);
    let mut request = request(&format!("RETURN 1; {LONG_WALKS}"));
    request.every_statement = true;
    request.query_id = 0x5eed_0002;
    let canceller = cancel_soon(&fixture, request.query_id, Duration::from_millis(500));
    let started = Instant::now();
    let mut stream = client.request_stream(&request).unwrap();
    assert_eq!(rows(&mut stream), [[WireValue::Int64(1)]]);
    // The second result's header comes at once; the interrupt ends its rows.
    assert!(stream.next_result().unwrap());
    let error = stream.next_chunk().unwrap_err();
    assert!(canceller.join().unwrap());
    assert!(
        matches!(&error, ClientError::Query { kind, message } if kind == "Interrupted"
            && message.contains("the query was interrupted")),
        "{error:?}"
    );
    // Cancelled, not timed out (the server's timeout is 30 s); room for a busy machine.
    assert!(started.elapsed() < Duration::from_secs(25));
}

#[test]
fn cancel_bodies_are_checked() {
    let fixture = start();
    let mut client = client(&fixture);
    let response = client
        .request("POST", "/cancel", &[], b"{\"query_id\": \"x\"}")
        .unwrap();
    assert_eq!(response.status, 400);
    let _ = response.into_bytes();
    assert!(!client.cancel(12345).unwrap());
}

#[test]
fn a_results_message_round_trips() {
    let bytes = warren_wire::Encode::to_bytes(&Message::Results(3));
    assert_eq!(bytes, [4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn light_queries_pass_heavy_ones_in_their_own_lane() {
    // One thread per lane: two heavy queries hold the heavy lane (one running, one queued)
    // while light ones keep being answered on the light lane. The heavy ones are cancelled at
    // the end; their timeout (120 s) is far beyond the light queries' bound (60 s), which is far
    // beyond what a busy machine takes for them.
    let fixture = start_with(|config| {
        config.threads = 1;
        config.heavy_threads = 1;
        config.timeout_ms = 120_000;
    });
    let heavy = |id: u64| {
        let url = format!("http://{}", fixture.server.addr());
        std::thread::spawn(move || {
            let mut client = Client::connect(&url, None).unwrap();
            let mut request = request(LONG_WALKS);
            request.query_id = id;
            client.request_stream(&request).map(|_| ()).unwrap_err()
        })
    };
    let first = heavy(0x1a0e_0001);
    let in_flight = &fixture.server.metrics().in_flight;
    while in_flight.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    // The first one, seen heavy on the light lane, was handed over: the next goes there at once.
    std::thread::sleep(Duration::from_millis(300));
    let second = heavy(0x1a0e_0002);
    std::thread::sleep(Duration::from_millis(300));
    let mut client = client(&fixture);
    let started = Instant::now();
    for i in 0..20 {
        let mut stream = client
            .request_stream(&self::request(&format!(
                "MATCH (a:N {{id: {i}}}) RETURN a.id"
            )))
            .unwrap();
        assert_eq!(rows(&mut stream), [[WireValue::Int64(i)]]);
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(60),
        "light queries took {elapsed:?}"
    );
    for id in [0x1a0e_0001, 0x1a0e_0002] {
        assert!(
            client.cancel(id).unwrap(),
            "heavy query {id:#x} is no longer in flight"
        );
    }
    for handle in [first, second] {
        let ClientError::Status { status, .. } = handle.join().unwrap() else {
            panic!("expected the interrupt error")
        };
        assert_eq!(status, 408);
    }
}
