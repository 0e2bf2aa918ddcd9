//! `warren serve` as a child process: its JSON and binary answers equal `warren query`'s
//! `--format json` and `--format bincode` output, and SIGTERM drains a query in flight
//! before the process exits 0.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use warren_client::Client;

fn warren(arguments: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warren"))
        .args(arguments)
        .output()
        .expect("the warren binary runs")
}

fn load(db: &Path) {
    let script = db.with_extension("cypher");
    std::fs::write(
        &script,
        "CREATE NODE TABLE Person(ID INT64, name STRING, age INT64, PRIMARY KEY(ID));\n\
         CREATE REL TABLE Knows(FROM Person TO Person, since INT64);\n\
         CREATE (:Person {ID: 1, name: 'Ann', age: 30}), (:Person {ID: 2, name: 'Bob'}), (:Person {ID: 3, age: 5});\n\
         MATCH (a:Person {ID: 1}), (b:Person {ID: 2}) CREATE (a)-[:Knows {since: 2020}]->(b);\n\
         MATCH (a:Person {ID: 2}), (b:Person {ID: 3}) CREATE (a)-[:Knows]->(b);\n",
    )
    .unwrap();
    let output = warren(&["run", db.to_str().unwrap(), script.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Starts `warren serve DB` on a free loopback port; returns the child and its URL.
fn serve(db: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warren"))
        .args([
            "serve",
            db.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--threads",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("warren serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    // Keep reading stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in stdout.lines() {});
    (child, url)
}

const QUERIES: [&str; 6] = [
    "MATCH (a:Person) RETURN a.ID, a.name, a.age ORDER BY a.ID",
    "MATCH (a:Person) RETURN a ORDER BY a.ID",
    "MATCH (a:Person)-[r:Knows]->(b:Person) RETURN a.ID, r, b.ID ORDER BY a.ID",
    "MATCH p = (a:Person {ID: 1})-[:Knows*1..2]->(b:Person) RETURN p, length(p) ORDER BY length(p)",
    "RETURN NULL AS n, [1, NULL] AS l, {x: 1, y: 'z'} AS s",
    "MATCH (a:Person) WHERE a.ID > 100 RETURN a.ID",
];

#[test]
fn answers_equal_warren_query_and_sigterm_drains() {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    load(&db);
    let (mut child, url) = serve(&db);
    let mut client = Client::connect(&url, None).unwrap();
    for query in QUERIES {
        // JSON: the rows equal `warren query --format json`'s.
        let expected = warren(&["query", db.to_str().unwrap(), query, "--format", "json"]);
        assert!(
            expected.status.success(),
            "{}",
            String::from_utf8_lossy(&expected.stderr)
        );
        let expected: serde_json::Value = serde_json::from_slice(&expected.stdout).unwrap();
        let body = format!("{{\"query\": {}}}", warren_client::json_string(query));
        let response = client
            .request("POST", "/query", &[], body.as_bytes())
            .unwrap();
        assert_eq!(response.status, 200);
        let got: serde_json::Value =
            serde_json::from_slice(&response.into_bytes().unwrap()).unwrap();
        assert_eq!(got["columns"], expected["columns"], "{query}");
        assert_eq!(got["rows"], expected["rows"], "{query}");
        // Binary: the messages equal `warren query --format bincode`'s, times aside.
        let expected = warren(&["query", db.to_str().unwrap(), query, "--format", "bincode"]);
        assert!(expected.status.success());
        let expected = warren_wire::decode_frames(&expected.stdout).unwrap();
        let answer = client.query(query, "{}").unwrap();
        let warren_wire::Message::Header(header) = &expected[0] else {
            panic!("no header")
        };
        assert_eq!(&answer.header, header, "{query}");
        let chunks: Vec<_> = expected[1..expected.len() - 1]
            .iter()
            .map(|m| match m {
                warren_wire::Message::Chunk(chunk) => chunk.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(answer.chunks, chunks, "{query}");
        let Some(warren_wire::Message::End(trailer)) = expected.last() else {
            panic!("no trailer")
        };
        assert_eq!(answer.trailer.rows, trailer.rows);
    }
    // A parse error: the same line as the command line's standard error.
    let expected = warren(&["query", db.to_str().unwrap(), "RETURN (1"]);
    let expected = String::from_utf8(expected.stderr).unwrap();
    let response = client
        .request("POST", "/query", &[], br#"{"query": "RETURN (1"}"#)
        .unwrap();
    assert_eq!(response.status, 400);
    let got = String::from_utf8(response.into_bytes().unwrap()).unwrap();
    assert_eq!(got.trim_end(), expected.trim_end());

    // SIGTERM while a query runs: the query completes, then the process exits 0.
    let slow_url = url.clone();
    let slow = std::thread::spawn(move || {
        let mut client = Client::connect(&slow_url, None).unwrap();
        let body = r#"{"query": "UNWIND range(1, 20000000) AS x RETURN count(*)"}"#;
        let response = client
            .request("POST", "/query", &[], body.as_bytes())
            .unwrap();
        (
            response.status,
            String::from_utf8(response.into_bytes().unwrap()).unwrap(),
        )
    });
    // SIGTERM once the query is in flight (the /metrics request itself is the other one), or
    // once it has answered on a machine that ran it before this thread looked: the wait must
    // not outlast the query.
    while !slow.is_finished() {
        let response = client.request("GET", "/metrics", &[], b"").unwrap();
        let metrics = String::from_utf8(response.into_bytes().unwrap()).unwrap();
        if metrics.contains("warren_requests_in_flight 2") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let (status, text) = slow.join().unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("20000000"), "{text}");
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn serve_refuses_a_public_address_without_a_token() {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    let output = warren(&["serve", db.to_str().unwrap(), "--listen", "0.0.0.0:0"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("Error: Runtime exception: refusing to listen"),
        "{stderr}"
    );
}

/// `warren bench serve --quick` over a tiny generated graph: every workload answers, the
/// report has the overhead and one step per workload, and `warren compare` reads it.
#[test]
fn bench_serve_quick_runs_every_workload() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("g8");
    let db = temp.path().join("g8db");
    let report = temp.path().join("serve.json");
    let generated = warren(&[
        "generate",
        "graph500",
        "--scale",
        "8",
        "--out",
        data.to_str().unwrap(),
    ]);
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let output = warren(&[
        "bench",
        "serve",
        "--db",
        db.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
        "--quick",
        "--rate",
        "200",
        "--overload",
        "--output",
        report.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("overhead for a one-row result"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["workload"], "serve");
    let steps = json["answer"]["steps"].as_array().unwrap();
    let names: Vec<&str> = steps
        .iter()
        .map(|s| s["workload"].as_str().unwrap())
        .collect();
    // Each workload's step, then the mix's queries within it (those it sent).
    assert_eq!(
        names[..5],
        ["point", "neighbours", "twohop", "shortest", "mix"]
    );
    let parts = ["mix/point", "mix/neighbours", "mix/twohop", "mix/shortest"];
    assert!(names.len() > 6, "{names:?}");
    assert!(names[5..].iter().all(|n| parts.contains(n)), "{names:?}");
    let mix_ok: u64 = steps[5..].iter().map(|s| s["ok"].as_u64().unwrap()).sum();
    assert_eq!(mix_ok, steps[4]["ok"].as_u64().unwrap());
    let embedded: Vec<&str> = json["answer"]["embedded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["query"].as_str().unwrap())
        .collect();
    assert_eq!(embedded, ["point", "neighbours", "twohop", "shortest"]);
    assert!(
        stdout.contains("embedded, one thread, random ids"),
        "{stdout}"
    );
    for step in steps {
        assert!(step["ok"].as_u64().unwrap() > 0, "{step}");
        assert_eq!(step["errors"], 0, "{step}");
    }
    assert!(json["answer"]["server_us_p50"].as_u64().unwrap() > 0);
    // The overload run: before, at twice the rate, after; the phases' requests all accounted.
    let overload = &json["answer"]["overload"];
    assert_eq!(overload["knee"], 200.0, "{overload}");
    let phases = overload["phases"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|s| s["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["before", "overload", "after"]);
    for phase in phases {
        let counted: u64 = ["ok", "errors", "rejected_503", "unsent"]
            .iter()
            .map(|k| phase[k].as_u64().unwrap())
            .sum();
        assert_eq!(counted, phase["requests"].as_u64().unwrap(), "{phase}");
        assert!(phase["ok"].as_u64().unwrap() > 0, "{phase}");
    }
    assert!(
        overload["rss_peak_bytes"].as_u64().unwrap()
            >= overload["rss_before_bytes"].as_u64().unwrap()
    );
    assert!(
        stdout.contains("overload at twice the knee (400/s, knee 200/s)"),
        "{stdout}"
    );
    let compared = warren(&[
        "compare",
        report.to_str().unwrap(),
        report.to_str().unwrap(),
    ]);
    assert!(
        compared.status.success(),
        "{}",
        String::from_utf8_lossy(&compared.stderr)
    );
}

/// Starts `warren shell --server URL` with `input` as its whole standard input.
fn remote_shell(url: &str, input: &[u8]) -> Child {
    use std::io::Write;
    let mut shell = Command::new(env!("CARGO_BIN_EXE_warren"))
        .args(["shell", "--server", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    shell.stdin.take().unwrap().write_all(input).unwrap();
    shell
}

/// `warren shell --server URL` sends each statement to the server and prints its rows as the
/// local shell does (`:mode` included), or the server's error line.
#[test]
fn shell_over_a_server() {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    load(&db);
    let (mut server, url) = serve(&db);
    let shell = remote_shell(
        &url,
        b"MATCH (a:Person)\nWHERE a.ID < 3 RETURN a.ID, a.name ORDER BY a.ID;\n:mode csv\nMATCH (a:Person) WHERE a.ID = 2 RETURN a.name;\nMATCH (a:Nobody) RETURN a;\n:quit\n",
    );
    let output = shell.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("│ a.ID  │ a.name │\n│ INT64 │ STRING │\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("│ 1     │ Ann    │\n│ 2     │ Bob    │\n"),
        "{stdout}"
    );
    assert!(stdout.contains("(2 tuples)\n"), "{stdout}");
    assert!(stdout.contains("a.name\nBob\n"), "{stdout}");
    assert!(stderr.contains("Error: Binder exception: "), "{stderr}");
    server.kill().unwrap();
    let _ = server.wait();
}

/// The server's requests in flight (this /metrics request is one) and its interrupted queries.
fn server_activity(client: &mut Client) -> (u64, u64) {
    let response = client.request("GET", "/metrics", &[], b"").unwrap();
    let metrics = String::from_utf8(response.into_bytes().unwrap()).unwrap();
    let value = |prefix: &str| {
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(prefix))
            .map_or(0, |n| n.trim().parse().unwrap())
    };
    (
        value("warren_requests_in_flight "),
        value("warren_errors_total{kind=\"Interrupted\"} "),
    )
}

/// Ctrl-C (SIGINT) in `warren shell --server URL` while a statement runs asks the server to
/// stop it: the shell prints the server's interrupt error and goes on to the next input.
#[test]
fn ctrl_c_in_a_remote_shell_stops_the_statement_on_the_server() {
    use std::time::Instant;
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    load(&db);
    let (mut server, url) = serve(&db);
    // About 10^12 rows: far longer than the test's deadline unless it is cancelled.
    let mut shell = remote_shell(
        &url,
        b"UNWIND range(1, 1000000) AS x UNWIND range(1, 1000000) AS y RETURN count(*);\n\
          MATCH (a:Person) WHERE a.ID = 2 RETURN a.name;\n:quit\n",
    );
    let mut metrics_client = Client::connect(&url, None).unwrap();
    let started = Instant::now();
    let mut signalled: Option<Instant> = None;
    // Signal only once the statement is in flight on the server: the shell sent it, so its
    // Ctrl-C handler is installed (a signal before that would kill the shell). Signal again
    // only if the first cancel found no query (one not yet registered) and the statement still
    // runs after a long while: a signal while the second statement runs would stop it.
    while shell.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the shell did not stop its statement"
        );
        let (in_flight, interrupted) = server_activity(&mut metrics_client);
        let may_signal = signalled.is_none_or(|at| at.elapsed() > Duration::from_secs(10));
        if in_flight == 2 && interrupted == 0 && may_signal {
            // SAFETY: signals a child process this test started and has not yet reaped.
            unsafe { libc::kill(shell.id() as libc::pid_t, libc::SIGINT) };
            signalled = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = shell.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("Error: Interrupted: the query was interrupted"),
        "{stderr}"
    );
    assert!(stdout.contains("│ Bob    │"), "{stdout}");
    server.kill().unwrap();
    let _ = server.wait();
}
