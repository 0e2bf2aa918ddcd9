//! The server in-process over a small database, through warren-client's HTTP client.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use warren_client::Client;
use warren_server::{open_database, Config, Server};

/// A query that runs far longer than any test's timeout (10^10 cheap rows).
const SLOW: &str = "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y RETURN count(*)";

fn database(dir: &Path) {
    let db = open_database(dir, false).unwrap();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE Person(ID INT64, name STRING, PRIMARY KEY(ID))",
        "CREATE REL TABLE Knows(FROM Person TO Person)",
        "CREATE (:Person {ID: 1, name: 'a'}), (:Person {ID: 2}), (:Person {ID: 3, name: 'c'})",
        "MATCH (a:Person {ID: 1}), (b:Person {ID: 2}) CREATE (a)-[:Knows]->(b)",
    ] {
        conn.query(statement).unwrap();
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    server: Server,
}

fn start(configure: impl FnOnce(&mut Config)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    database(&db_dir);
    let mut config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        ..Config::default()
    };
    configure(&mut config);
    let db = open_database(&db_dir, config.read_only).unwrap();
    let server = Server::start(&config, &db).unwrap();
    Fixture { _dir: dir, server }
}

fn url(fixture: &Fixture) -> String {
    format!("http://{}", fixture.server.addr())
}

/// POSTs a JSON body to /query: (status, headers, body text).
fn post(client: &mut Client, body: &str) -> (u16, Vec<(String, String)>, String) {
    let response = client
        .request(
            "POST",
            "/query",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
        .unwrap();
    let status = response.status;
    let headers = response.headers.clone();
    let text = String::from_utf8(response.into_bytes().unwrap()).unwrap();
    (status, headers, text)
}

fn query_body(query: &str) -> String {
    format!("{{\"query\": {}}}", warren_client::json_string(query))
}

#[test]
fn json_answer_has_columns_types_rows_and_times() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let body = r#"{"query": "MATCH (a:Person) WHERE a.ID >= $low RETURN a.ID, a.name ORDER BY a.ID", "parameters": {"low": 2}}"#;
    let (status, _, text) = post(&mut client, body);
    assert_eq!(status, 200, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["columns"], serde_json::json!(["a.ID", "a.name"]));
    assert_eq!(json["types"], serde_json::json!(["INT64", "STRING"]));
    assert_eq!(json["rows"], serde_json::json!([[2, null], [3, "c"]]));
    assert!(json["compile_time_ms"].is_number() && json["execution_time_ms"].is_number());
    // The connection is kept alive: a second request on it.
    let (status, _, _) = post(&mut client, &query_body("RETURN 1"));
    assert_eq!(status, 200);
}

#[test]
fn binary_answer_decodes_through_the_client() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let answer = client
        .query("MATCH (a:Person) RETURN a.ID ORDER BY a.ID", "{}")
        .unwrap();
    assert_eq!(answer.header.columns[0].name, "a.ID");
    assert_eq!(answer.trailer.rows, 3);
    assert_eq!(
        answer.chunks[0].data,
        warren_wire::ColumnData::Int64(vec![1, 2, 3])
    );
    // A big result streams in many pieces and many chunks.
    let mut stream = client
        .query_stream("UNWIND range(1, 100000) AS x RETURN x", "{}")
        .unwrap();
    let mut rows = 0;
    while let Some(chunk) = stream.next_chunk().unwrap() {
        let warren_wire::ColumnData::Int64(values) = chunk.data else {
            panic!("expected INT64")
        };
        assert_eq!(values[0], chunk.first_row as i64 + 1);
        rows += values.len();
    }
    assert_eq!(rows, 100_000);
    assert_eq!(stream.trailer().unwrap().rows, 100_000);
}

#[test]
fn errors_are_the_command_line_text_with_a_4xx() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(&mut client, &query_body("MATCH (a:Nobody) RETURN a"));
    assert_eq!(status, 400);
    assert!(text.starts_with("Error: Binder exception: "), "{text}");
    let (status, _, text) = post(&mut client, &query_body("RETRN 1"));
    assert_eq!(status, 400);
    assert!(text.starts_with("Error: Parser exception: "), "{text}");
    for malformed in [
        "",
        "{",
        "[]",
        r#"{"query": 1}"#,
        r#"{"query": "RETURN 1", "x": 2}"#,
    ] {
        let (status, _, text) = post(&mut client, malformed);
        assert_eq!(status, 400, "{malformed}");
        assert!(
            text.starts_with("Error: Conversion exception: malformed request"),
            "{text}"
        );
    }
    let response = client.request("GET", "/nowhere", &[], b"").unwrap();
    assert_eq!(response.status, 404);
    drop(response.into_bytes());
    let response = client.request("GET", "/query", &[], b"").unwrap();
    assert_eq!(response.status, 405);
}

#[test]
fn a_token_is_required_when_configured() {
    let fixture = start(|config| config.token = Some("s3cret".into()));
    let mut anonymous = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(&mut anonymous, &query_body("RETURN 1"));
    assert_eq!(status, 401);
    assert!(text.starts_with("Error: Unauthorized"), "{text}");
    let response = anonymous.request("GET", "/metrics", &[], b"").unwrap();
    assert_eq!(response.status, 401);
    drop(response.into_bytes());
    let response = anonymous.request("GET", "/health", &[], b"").unwrap();
    assert_eq!(response.status, 200);
    drop(response.into_bytes());
    let mut wrong = Client::connect(&url(&fixture), Some("s3creT")).unwrap();
    assert_eq!(post(&mut wrong, &query_body("RETURN 1")).0, 401);
    let mut right = Client::connect(&url(&fixture), Some("s3cret")).unwrap();
    assert_eq!(post(&mut right, &query_body("RETURN 1")).0, 200);
}

#[test]
fn beyond_loopback_needs_a_token() {
    let config = Config {
        listen: "0.0.0.0:0".parse().unwrap(),
        ..Config::default()
    };
    let error = config.validate().unwrap_err();
    assert!(
        error.to_string().contains("without --token-file"),
        "{error}"
    );
    let config = Config {
        token: Some("t".into()),
        ..config
    };
    assert!(config.validate().is_ok());
}

#[test]
fn bodies_over_the_cap_get_413() {
    let fixture = start(|config| config.body_bytes_max = 64);
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let long = format!("RETURN '{}'", "x".repeat(100));
    let (status, _, text) = post(&mut client, &query_body(&long));
    assert_eq!(status, 413, "{text}");
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    assert_eq!(post(&mut client, &query_body("RETURN 1")).0, 200);
}

#[test]
fn a_full_queue_gets_503_with_retry_after() {
    let fixture = start(|config| {
        config.threads = 1;
        config.queue = 0;
        config.timeout_ms = 5_000;
    });
    let address = url(&fixture);
    // With no queue, a request is refused whenever the thread is not waiting for one (also
    // between two jobs): the slow query retries until the thread takes it.
    let slow = std::thread::spawn(move || {
        let mut client = Client::connect(&address, None).unwrap();
        loop {
            let status = post(&mut client, &query_body(SLOW)).0;
            if status != 503 {
                return status;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    // Once the slow query holds the only thread (for its whole 5 s timeout), the next request
    // finds no room. No clock here: the loop ends at the first refusal, or when the slow query
    // has answered (then a refusal was missed, and the assertion below says so).
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, headers, text) = loop {
        let answer = post(&mut client, &query_body("RETURN 1"));
        if answer.0 != 200 || slow.is_finished() {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status, 503, "{text}");
    assert!(headers.iter().any(|(n, v)| n == "retry-after" && v == "1"));
    assert!(text.starts_with("Error: Overloaded"), "{text}");
    // The slow query ends with its timeout.
    assert_eq!(slow.join().unwrap(), 408);
    let metrics = client.request("GET", "/metrics", &[], b"").unwrap();
    let metrics = String::from_utf8(metrics.into_bytes().unwrap()).unwrap();
    assert!(
        metrics.contains("warren_requests_total{status=\"503\"} "),
        "{metrics}"
    );
    assert!(
        metrics.contains("warren_errors_total{kind=\"Overloaded\"} "),
        "{metrics}"
    );
    assert!(metrics.contains("warren_request_duration_seconds_bucket{le=\"+Inf\"}"));
    assert!(metrics.contains("warren_queue_depth 0"));
    assert!(metrics.contains("warren_requests_in_flight 1"), "{metrics}");
}

#[test]
fn connections_beyond_the_cap_get_503_and_are_closed() {
    let fixture = start(|config| config.connections_max = 1);
    let address = url(&fixture);
    let mut first = Client::connect(&address, None).unwrap();
    assert_eq!(post(&mut first, &query_body("RETURN 1")).0, 200);
    // The first connection is kept alive and holds the only slot.
    let mut second = Client::connect(&address, None).unwrap();
    let (status, headers, text) = post(&mut second, &query_body("RETURN 1"));
    assert_eq!(status, 503, "{text}");
    assert!(headers.iter().any(|(n, v)| n == "retry-after" && v == "1"));
    assert!(
        headers
            .iter()
            .any(|(n, v)| n == "connection" && v.eq_ignore_ascii_case("close")),
        "{headers:?}"
    );
    assert!(text.starts_with("Error: Overloaded"), "{text}");
    // Once the first connection closes, a new one is served.
    drop(first);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let mut third = Client::connect(&address, None).unwrap();
        let status = post(&mut third, &query_body("RETURN 1")).0;
        if status == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still {status}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_query_past_its_timeout_is_interrupted() {
    let fixture = start(|config| config.timeout_ms = 200);
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let started = std::time::Instant::now();
    let (status, _, text) = post(&mut client, &query_body(SLOW));
    assert_eq!(status, 408, "{text}");
    assert!(text.starts_with("Error: Interrupted"), "{text}");
    assert!(text.contains("exceeded its timeout"), "{text}");
    // Far sooner than the query (10^10 rows) would end; room for a busy machine.
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn files_outside_the_files_directory_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.csv");
    std::fs::write(&secret, "ID\n7\n").unwrap();
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("ok.csv"), "ID\n1\n2\n").unwrap();
    std::fs::create_dir(files.path().join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, files.path().join("link.csv")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), files.path().join("out")).unwrap();
    let files_dir = files.path().to_path_buf();
    let fixture = start(move |config| config.files = Some(files_dir));
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(
        &mut client,
        &query_body("LOAD FROM 'ok.csv' (header = true) RETURN count(*)"),
    );
    assert_eq!(status, 200, "{text}");
    let (status, _, text) = post(
        &mut client,
        &query_body("LOAD FROM 'sub/../ok.csv' (header = true) RETURN count(*)"),
    );
    assert_eq!(status, 200, "{text}");
    let secret = secret.display().to_string();
    let escapes = [
        format!("LOAD FROM '{secret}' (header = true) RETURN *"),
        "LOAD FROM '../secret.csv' (header = true) RETURN *".to_string(),
        format!(
            "LOAD FROM 'sub/../../{}/secret.csv' RETURN *",
            outside.path().file_name().unwrap().to_string_lossy()
        ),
        "LOAD FROM 'link.csv' (header = true) RETURN *".to_string(),
        "LOAD FROM 'out/secret.csv' (header = true) RETURN *".to_string(),
        "LOAD FROM '*.csv' RETURN *".to_string(),
        format!("COPY Person FROM '{secret}' (header = true)"),
        "COPY Person FROM ['ok.csv', '../secret.csv'] (header = true)".to_string(),
        "COPY (MATCH (a:Person) RETURN a.ID) TO '../written.csv'".to_string(),
        "COPY (MATCH (a:Person) RETURN a.ID) TO 'out/written.csv'".to_string(),
        "COPY (MATCH (a:Person) RETURN a.ID) TO 'link.csv'".to_string(),
        "COPY (MATCH (a:Person) RETURN a.ID) TO '/tmp/warren-written.csv'".to_string(),
        "CALL file_search_path = '/'".to_string(),
        "BEGIN TRANSACTION".to_string(),
    ];
    for query in &escapes {
        let (status, _, text) = post(&mut client, &query_body(query));
        assert_eq!(status, 400, "{query}: {text}");
        assert!(
            text.starts_with("Error: Binder exception: "),
            "{query}: {text}"
        );
        assert!(
            text.contains("--files directory") || text.contains("the server "),
            "{query}: {text}"
        );
    }
    assert!(!outside.path().join("written.csv").exists());
    // Inside the directory the statement reaches the engine (which has no COPY TO yet).
    let (_, _, text) = post(
        &mut client,
        &query_body("COPY (MATCH (a:Person) RETURN a.ID) TO 'written.csv'"),
    );
    assert!(!text.contains("--files directory"), "{text}");
}

#[test]
fn without_a_files_directory_file_statements_are_refused() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(&mut client, &query_body("LOAD FROM 'x.csv' RETURN *"));
    assert_eq!(status, 400);
    assert!(
        text.contains("needs the server's --files directory"),
        "{text}"
    );
}

#[test]
fn read_only_refuses_writes() {
    let fixture = start(|config| config.read_only = true);
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(&mut client, &query_body("CREATE (:Person {ID: 9})"));
    assert!((400..500).contains(&status), "{status} {text}");
    assert!(text.starts_with("Error: "), "{text}");
    let (status, _, text) = post(&mut client, &query_body("MATCH (a:Person) RETURN count(*)"));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("[3]"), "{text}");
}

#[test]
fn shutdown_drains_a_query_in_flight() {
    let fixture = start(|config| config.timeout_ms = 60_000);
    let address = url(&fixture);
    let query = std::thread::spawn(move || {
        let mut client = Client::connect(&address, None).unwrap();
        post(
            &mut client,
            &query_body("UNWIND range(1, 20000000) AS x RETURN count(*)"),
        )
    });
    // Shut down once the query is in flight (or, on a machine that ran it before this thread
    // looked, once it has answered: the wait must not outlast the query).
    let in_flight = &fixture.server.metrics().in_flight;
    while in_flight.load(std::sync::atomic::Ordering::Relaxed) == 0 && !query.is_finished() {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let Fixture { _dir, server } = fixture;
    let address = server.addr();
    server.shutdown();
    let (status, _, text) = query.join().unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("20000000"), "{text}");
    assert!(std::net::TcpStream::connect(address).is_err());
    let _ = std::io::stderr().flush();
}

/// Two kept-alive connections go to the two I/O threads (each to the one serving fewest):
/// a shutdown lets the query in flight on each finish and answer.
#[test]
fn shutdown_drains_every_io_threads_queries() {
    const CONNECTIONS: usize = warren_server::IO_THREADS;
    let fixture = start(|config| config.timeout_ms = 60_000);
    // Every connection is open and served before any slow query starts.
    let opened = std::sync::Arc::new(std::sync::Barrier::new(CONNECTIONS));
    let queries: Vec<_> = (0..CONNECTIONS)
        .map(|i| {
            let address = url(&fixture);
            let opened = opened.clone();
            std::thread::spawn(move || {
                let mut client = Client::connect(&address, None).unwrap();
                assert_eq!(post(&mut client, &query_body("RETURN 1")).0, 200);
                opened.wait();
                let rows = 20_000_000 + i;
                let answer = post(
                    &mut client,
                    &query_body(&format!("UNWIND range(1, {rows}) AS x RETURN count(*)")),
                );
                (rows, answer)
            })
        })
        .collect();
    // Until every query is in flight, or one has already answered (the wait must not outlast
    // the queries).
    let in_flight = &fixture.server.metrics().in_flight;
    while in_flight.load(std::sync::atomic::Ordering::Relaxed) < CONNECTIONS as i64
        && !queries.iter().any(std::thread::JoinHandle::is_finished)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let Fixture { _dir, server } = fixture;
    server.shutdown();
    for query in queries {
        let (rows, (status, _, text)) = query.join().unwrap();
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(&rows.to_string()), "{text}");
    }
}

#[test]
fn a_query_whose_client_disconnects_is_interrupted() {
    // One query thread, and a timeout the test would notice: only the disconnect can free the
    // thread for the next query before the timeout (60 s; the bound below is half of it, far
    // above what a busy machine takes to see the disconnect).
    let fixture = start(|config| {
        config.threads = 1;
        config.timeout_ms = 60_000;
    });
    let body = query_body(SLOW);
    let mut gone = std::net::TcpStream::connect(fixture.server.addr()).unwrap();
    write!(
        gone,
        "POST /query HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The query is running once it has left the queue.
    let metrics = fixture.server.metrics().clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while metrics.in_flight.load(std::sync::atomic::Ordering::Relaxed) == 0
        || metrics
            .queue_depth
            .load(std::sync::atomic::Ordering::Relaxed)
            != 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the query never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let disconnected = std::time::Instant::now();
    drop(gone);
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let (status, _, text) = post(&mut client, &query_body("RETURN 7"));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains('7'), "{text}");
    let waited = disconnected.elapsed();
    assert!(
        waited < Duration::from_secs(30),
        "the next query waited {waited:?}"
    );
    let metrics = client.request("GET", "/metrics", &[], b"").unwrap();
    let metrics = String::from_utf8(metrics.into_bytes().unwrap()).unwrap();
    assert!(
        metrics.contains("warren_errors_total{kind=\"Disconnected\"} 1"),
        "{metrics}"
    );
}

/// The `warren_inline_total` counts: (answered, handed over).
fn inline_counts(client: &mut Client) -> (u64, u64) {
    let metrics = client.request("GET", "/metrics", &[], b"").unwrap();
    let metrics = String::from_utf8(metrics.into_bytes().unwrap()).unwrap();
    let count = |outcome: &str| {
        let prefix = format!("warren_inline_total{{outcome=\"{outcome}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {metrics}"))
            .parse()
            .unwrap()
    };
    (count("answered"), count("handed_over"))
}

/// Sends `body` until an I/O thread answers it (a query thread learns it small when it also
/// ran quickly, which a cold connection or a busy machine may prevent a few times); returns
/// the inline counts after.
fn until_inline(client: &mut Client, body: &str) -> (u64, u64) {
    let before = inline_counts(client).0;
    for _ in 0..50 {
        let (status, _, text) = post(client, body);
        assert_eq!(status, 200, "{text}");
        let counts = inline_counts(client);
        if counts.0 > before {
            return counts;
        }
    }
    panic!("{body} was never answered by an I/O thread");
}

#[test]
fn a_small_query_seen_before_is_answered_while_the_query_threads_are_busy() {
    // The slow query holds the only query thread until it is cancelled below; its timeout
    // (10 s) only bounds a try whose small query was handed over and waits for it.
    let fixture = start(|config| {
        config.threads = 1;
        config.timeout_ms = 10_000;
    });
    let address = url(&fixture);
    let mut client = Client::connect(&address, None).unwrap();
    let small = query_body("MATCH (a:Person {ID: 3}) RETURN a.name");
    let (status, _, first) = post(&mut client, &small);
    assert_eq!(status, 200, "{first}");
    // A try handed over (this thread descheduled past the budget on a busy machine) waits
    // for the slow query instead: then the scenario is tried again.
    for slow_id in [0x51_0001, 0x51_0002, 0x51_0003] {
        let (answered, handed_over) = until_inline(&mut client, &small);
        let address = address.clone();
        let slow = std::thread::spawn(move || {
            let mut client = Client::connect(&address, None).unwrap();
            let body = format!(
                "{{\"query\": {}, \"query_id\": {slow_id}}}",
                warren_client::json_string(SLOW)
            );
            post(&mut client, &body).0
        });
        std::thread::sleep(Duration::from_millis(300));
        // The only query thread is busy with the slow query: the I/O thread answers it (the
        // inline counts say so: no clock, which a busy machine would stretch).
        let (status, headers, text) = post(&mut client, &small);
        assert_eq!(status, 200, "{text}");
        let json =
            |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["rows"].clone();
        assert_eq!(json(&text), serde_json::json!([["c"]]));
        assert_eq!(json(&text), json(&first));
        if inline_counts(&mut client) == (answered, handed_over + 1) {
            assert_eq!(slow.join().unwrap(), 408);
            continue;
        }
        assert!(!slow.is_finished(), "the slow query should still run");
        assert!(headers
            .iter()
            .any(|(n, v)| n == "content-type" && v == "application/json"));
        assert_eq!(inline_counts(&mut client), (answered + 1, handed_over));
        assert!(
            client.cancel(slow_id).unwrap(),
            "the slow query is still running"
        );
        assert_eq!(slow.join().unwrap(), 408);
        return;
    }
    panic!("the I/O thread handed the small query over three times");
}

#[test]
fn a_small_text_whose_answer_grows_or_slows_is_handed_to_the_query_threads() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let rows = "UNWIND range(1, $n) AS x RETURN x";
    let count = "UNWIND range(1, $n) AS x WITH x WHERE x < 0 RETURN count(*)";
    let body = |query: &str, n: u64| {
        format!(
            "{{\"query\": {}, \"parameters\": {{\"n\": {n}}}}}",
            warren_client::json_string(query)
        )
    };
    let answer = |client: &mut Client, query: &str, n: u64| {
        let (status, _, text) = post(client, &body(query, n));
        assert_eq!(status, 200, "{text}");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["rows"].clone()
    };
    // Each text is learned small (the last request answered by an I/O thread), then sent
    // with a parameter that makes it large or slow. (A small one may also be handed over
    // when this thread is descheduled past the budget, so only these counts are exact.)
    let (answered, handed_over) = until_inline(&mut client, &body(rows, 1));
    // Larger than one piece: handed over, and the whole answer comes from a query thread.
    let many = answer(&mut client, rows, 50_000);
    let many = many.as_array().unwrap();
    assert_eq!(many.len(), 50_000);
    assert_eq!(many[49_999], serde_json::json!([50_000]));
    assert_eq!(inline_counts(&mut client), (answered, handed_over + 1));
    // Forgotten: a query thread answers it next, nothing is tried on the I/O thread.
    assert_eq!(answer(&mut client, rows, 1), serde_json::json!([[1]]));
    assert_eq!(inline_counts(&mut client), (answered, handed_over + 1));
    // Longer than the budget: handed over, and answered in full.
    let (answered, handed_over) = until_inline(&mut client, &body(count, 1));
    assert_eq!(
        answer(&mut client, count, 20_000_000),
        serde_json::json!([[0]])
    );
    assert_eq!(inline_counts(&mut client), (answered, handed_over + 1));
    assert_eq!(answer(&mut client, count, 1), serde_json::json!([[0]]));
    assert_eq!(inline_counts(&mut client), (answered, handed_over + 1));
}

#[test]
fn a_binary_answer_from_the_io_thread_decodes_through_the_client() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let before = inline_counts(&mut client).0;
    for _ in 0..50 {
        let answer = client
            .query("UNWIND range(1, $n) AS x RETURN x", r#"{"n": 3}"#)
            .unwrap();
        assert_eq!(answer.header.columns[0].name, "x");
        assert_eq!(answer.trailer.rows, 3);
        assert_eq!(
            answer.chunks[0].data,
            warren_wire::ColumnData::Int64(vec![1, 2, 3])
        );
        if inline_counts(&mut client).0 > before {
            return;
        }
    }
    panic!("the query was never answered by an I/O thread");
}

#[test]
fn a_script_of_several_statements_is_never_tried_on_the_io_thread() {
    let fixture = start(|_| {});
    let mut client = Client::connect(&url(&fixture), None).unwrap();
    let script = query_body("RETURN 1; RETURN 2");
    for _ in 0..5 {
        let (status, _, text) = post(&mut client, &script);
        assert_eq!(status, 200, "{text}");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["rows"], serde_json::json!([[2]]));
    }
    assert_eq!(inline_counts(&mut client), (0, 0));
}

#[test]
fn the_io_spin_window_is_bounded_and_answers_are_the_same_with_or_without_it() {
    let config = Config {
        io_spin_us: warren_server::spin::SPIN_US_MAX + 1,
        ..Config::default()
    };
    let error = config.validate().unwrap_err();
    assert!(error.to_string().contains("--io-spin-us"), "{error}");
    for window in [0, warren_server::spin::SPIN_US_MAX] {
        let fixture = start(|config| config.io_spin_us = window);
        // Keep-alive round trips (answered inline and by the query threads), a second
        // connection, and a streamed answer: each finds its thread spinning or parked.
        let mut first = Client::connect(&url(&fixture), None).unwrap();
        let mut second = Client::connect(&url(&fixture), None).unwrap();
        for round in 0..20 {
            let client = if round % 3 == 0 {
                &mut second
            } else {
                &mut first
            };
            let (status, _, text) = post(
                client,
                &query_body("MATCH (a:Person) WHERE a.ID = 1 RETURN a.name"),
            );
            assert_eq!(status, 200, "{text}");
            assert!(text.contains("\"a\""), "{text}");
        }
        let (status, _, text) = post(
            &mut first,
            &query_body("UNWIND range(1, 5000) AS x RETURN x"),
        );
        assert_eq!(status, 200);
        assert!(text.contains("[5000]"), "{text}");
        drop((first, second));
        let spins = fixture.server.spins();
        let counted = spins.woken.load(std::sync::atomic::Ordering::Relaxed)
            + spins.expired.load(std::sync::atomic::Ordering::Relaxed);
        if window == 0 {
            assert_eq!(counted, 0, "a zero window never spins");
        }
    }
}
