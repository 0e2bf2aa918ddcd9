//! `warren compare` on two small hand-written reports (verdicts, warnings, exit status with
//! and without `--fail-on-slower`), and `warren bench` end to end on a tiny generated graph.

use std::path::Path;
use std::process::{Command, Output};

fn warren(arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warren"))
        .args(arguments)
        .output()
        .expect("the warren binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A minimal report whose time samples are `times` and whose git revision is `rev`.
fn write_report(path: &Path, times: &[f64], rev: &str) {
    let sorted = {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted
    };
    let report = serde_json::json!({
        "schema": "warren-bench/1",
        "workload": "sp1",
        "query": "MATCH ...",
        "dataset": {"db": "/tmp/db", "dir": null, "name": "g", "nodes": 4, "edges": 5},
        "settings": {"threads": 2, "k": "auto", "set": {}, "repeat": times.len()},
        "machine": {"cpu": "cpu", "logical_cores": 2, "memory_bytes": 1024, "os": "linux",
                    "kernel": "6"},
        "git_rev": rev,
        "started_at": "2025-01-01T00:00:00Z",
        "answer": [[0, 3, 4]],
        "answer_checked": true,
        "check": "rows",
        "traversal": null,
        "figures": {
            "time_s": {"min": sorted[0], "median": sorted[sorted.len() / 2],
                       "max": sorted[sorted.len() - 1], "samples": times},
            "edges_per_s": null, "paths_per_s": null, "llc_loads_per_s": null,
            "peak_rss_bytes": 1000
        },
        "hardware_counters": "unavailable: test",
        "runs": []
    });
    std::fs::write(path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
}

#[test]
fn compare_prints_verdicts_and_fails_only_when_asked() {
    let temp = tempfile::tempdir().unwrap();
    let (fast, slow) = (temp.path().join("fast.json"), temp.path().join("slow.json"));
    write_report(&fast, &[1.00, 1.01, 0.99, 1.02, 0.98], "abc1234");
    write_report(&slow, &[1.50, 1.51, 1.49, 1.52, 1.48], "def5678");
    let (fast, slow) = (fast.to_str().unwrap(), slow.to_str().unwrap());

    let output = warren(&["compare", fast, slow]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        stdout.contains("time_s") && stdout.contains("slower"),
        "{stdout}"
    );
    assert!(stdout.contains("+50.0%"), "{stdout}");
    assert!(
        stdout.contains("warning: git revision differs: abc1234 -> def5678"),
        "{stdout}"
    );

    let failing = warren(&["compare", fast, slow, "--fail-on-slower"]);
    assert!(!failing.status.success());
    let stderr = text(&failing.stderr);
    assert!(
        stderr.starts_with("Error: ") && stderr.contains("time_s"),
        "{stderr}"
    );

    let improving = warren(&["compare", slow, fast, "--fail-on-slower"]);
    assert!(improving.status.success(), "{}", text(&improving.stderr));
    assert!(text(&improving.stdout).contains("faster"));

    let same = warren(&["compare", fast, fast]);
    assert!(text(&same.stdout).contains("no significant change"));
    assert!(!text(&same.stdout).contains("warning"));
}

#[test]
fn compare_rejects_files_that_are_not_reports() {
    let temp = tempfile::tempdir().unwrap();
    let bad = temp.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"x\"}").unwrap();
    let bad = bad.to_str().unwrap();
    let output = warren(&["compare", bad, bad]);
    assert!(!output.status.success());
    assert!(text(&output.stderr).starts_with("Error: "));
}

#[test]
fn bench_runs_a_workload_end_to_end() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("g8");
    let db = temp.path().join("g8db");
    let report = temp.path().join("sp1.json");
    let generated = warren(&[
        "generate",
        "graph500",
        "--scale",
        "8",
        "--out",
        data.to_str().unwrap(),
    ]);
    assert!(generated.status.success(), "{}", text(&generated.stderr));
    let output = warren(&[
        "bench",
        "sp1",
        "--db",
        db.to_str().unwrap(),
        "--dataset",
        data.to_str().unwrap(),
        "--threads",
        "2",
        "--repeat",
        "2",
        "--set",
        "prefetch_distance=4",
        "--output",
        report.to_str().unwrap(),
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("answer checked"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["answer_checked"], true);
    assert_eq!(json["settings"]["set"]["prefetch_distance"], "4");
    let again = warren(&[
        "compare",
        report.to_str().unwrap(),
        report.to_str().unwrap(),
    ]);
    assert!(again.status.success());

    let refused = warren(&[
        "bench",
        "sp1",
        "--db",
        db.to_str().unwrap(),
        "--repeat",
        "0",
        "--output",
        report.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("--repeat"));
}
