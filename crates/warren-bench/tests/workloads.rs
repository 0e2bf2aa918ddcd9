//! Every `warren bench` workload, small: a Graph500 graph of scale 9 (and a small dense graph
//! for the sweep) is generated into a temporary folder and each workload runs through the
//! library entry point with 2 repeats; each must check its answer against the reference
//! implementation and write a report that reads back.

use std::path::{Path, PathBuf};

use warren_bench::generate::{generate, DatasetKind, GenerateOptions};
use warren_bench::report::{KSetting, Report};
use warren_bench::{BenchOptions, Workload};

fn generated(root: &Path, kind: DatasetKind, name: &str) -> PathBuf {
    let mut options = GenerateOptions::defaults(kind);
    options.scale = 9;
    options.nodes = 300;
    options.degree = 20;
    generate(&options, &root.join(name)).expect("generate").dir
}

fn options(root: &Path, workload: Workload, data: &Path) -> BenchOptions {
    let mut options = BenchOptions::new(
        workload,
        root.join("g9db"),
        root.join(format!("{workload}.json")),
    );
    options.dataset_dirs = vec![data.to_path_buf()];
    options.threads = Some(2);
    options.repeat = 2;
    options
}

fn run_checked(options: &BenchOptions) -> Report {
    let outcome =
        warren_bench::run(options).unwrap_or_else(|e| panic!("{}: {e}", options.workload));
    assert_eq!(outcome.mismatch, None, "{}", options.workload);
    let report = &outcome.report;
    assert!(
        report.answer_checked,
        "{}: {}",
        options.workload, report.check
    );
    let read = Report::read(&options.output).expect("the report reads back");
    assert_eq!(&read, report);
    assert_eq!(report.settings.repeat, 2);
    assert!(report.figures.peak_rss_bytes.unwrap_or(0) > 0);
    outcome.report
}

#[test]
fn every_workload_checks_its_answer() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let graph500 = generated(root, DatasetKind::Graph500, "g9");

    for workload in [
        Workload::Sp64,
        Workload::Sp1,
        Workload::AllSp,
        Workload::Varlen,
        Workload::Spread,
    ] {
        let report = run_checked(&options(root, workload, &graph500));
        let time = report.figures.time_s.as_ref().expect("timed");
        assert_eq!(time.samples.len(), 2);
        assert!(time.min > 0.0 && time.min <= time.median && time.median <= time.max);
        assert_eq!(report.dataset.name, "g9db");
        assert!(report.dataset.edges > 0);
    }
    // sp64 answers one row per source that reaches anything: some, at most 64.
    let sp64 = run_checked(&options(root, Workload::Sp64, &graph500));
    let rows = sp64.answer.as_array().expect("rows").len();
    assert!((1..=64).contains(&rows), "{rows}");

    let mut paths = options(root, Workload::Varlen, &graph500);
    paths.varlen.paths = true;
    paths.varlen.sources = 3;
    paths.varlen.destinations = 200;
    let report = run_checked(&paths);
    assert_eq!(report.settings.paths, Some(true));
    assert!(
        report.answer["paths"].as_u64().unwrap() > 0,
        "{}",
        report.answer
    );
    assert!(report.figures.paths_per_s.is_some());

    let mut settings = options(root, Workload::Sp1, &graph500);
    settings.k = KSetting::Fixed(2);
    settings.engine_settings = vec![("bfs_direction".into(), "top_down".into())];
    let report = run_checked(&settings);
    assert_eq!(report.settings.set["bfs_direction"], "top_down");
    assert_eq!(report.settings.k, KSetting::Fixed(2));

    let load = run_checked(&options(root, Workload::Load, &graph500));
    assert_eq!(load.answer["edges"].as_u64(), Some(sp64.dataset.edges));
    assert!(load.figures.edges_per_s.is_some());
}

#[test]
fn the_writes_workload_runs_every_scenario_and_checks_its_writes() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let graph500 = generated(root, DatasetKind::Graph500, "g9");
    let mut options = options(root, Workload::Writes, &graph500);
    options.quick = true;
    options.repeat = 1;
    let outcome = warren_bench::run(&options).unwrap_or_else(|e| panic!("writes: {e}"));
    assert_eq!(outcome.mismatch, None);
    let report = outcome.report;
    assert!(report.answer_checked, "{}", report.check);
    let names: Vec<&str> = report.runs.iter().map(|r| r.dataset.as_str()).collect();
    assert_eq!(
        names,
        [
            "commit-1",
            "commit-8",
            "commit-64",
            "batch",
            "mixed",
            "checkpoint",
            "recovery",
            "slowdown-1pct",
            "slowdown-5pct",
            "read-after-commit",
        ]
    );
    let commit = &report.runs[0].figures;
    assert!(commit.ops_per_s.is_some() && commit.latency_us_p99.is_some());
    assert!(report.runs[6].figures.time_s.is_some(), "recovery is timed");
    assert!(report.runs[7].figures.slowdown.is_some());
    assert_eq!(Report::read(&options.output).unwrap(), report);
    // The source database is left as it was: the scenarios wrote to a copy.
    let db = warren::Database::open(root.join("g9db")).unwrap();
    let edges = db
        .connect()
        .query("MATCH (a:Person)-[:Knows]->(b:Person) RETURN count(*)")
        .unwrap()
        .to_strings()
        .unwrap();
    assert_eq!(edges, vec![report.dataset.edges.to_string()]);
    let table = warren_bench::writes::table(&report);
    assert!(table.contains("commit-64"), "{table}");
}

#[test]
fn ksweep_on_two_datasets_draws_its_figure() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let graph500 = generated(root, DatasetKind::Graph500, "g9");
    let dense = generated(root, DatasetKind::Dense, "dense300");
    let mut sweep = options(root, Workload::Ksweep, &graph500);
    sweep.databases = vec![root.join("sweep-g9db"), root.join("sweep-densedb")];
    sweep.dataset_dirs = vec![graph500, dense];
    sweep.k_values = vec![1, 4, 64];
    sweep.plot = Some(root.join("ksweep.svg"));
    let outcome = warren_bench::run(&sweep).expect("ksweep");
    assert_eq!(outcome.mismatch, None);
    let report = &outcome.report;
    assert!(report.answer_checked, "{}", report.check);
    assert_eq!(report.runs.len(), 2 * 4, "3 fixed k and auto on 2 datasets");
    assert!(report.runs.iter().all(|r| r.answer_checked));
    assert_eq!(report.datasets.len(), 2);
    assert_eq!(report.ksweep.len(), 2);
    for summary in &report.ksweep {
        assert!([1, 4, 64].contains(&summary.best_k));
        assert!(summary.auto_over_best > 0.0);
    }
    let svg = std::fs::read_to_string(root.join("ksweep.svg")).expect("the SVG");
    assert!(svg.contains("sweep-g9db") && svg.contains("sweep-densedb"));
    assert!(outcome.notes.iter().any(|n| n.contains("ksweep.svg")));
}

#[test]
fn a_database_without_data_or_folder_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let options = BenchOptions::new(
        Workload::Sp1,
        temp.path().join("empty"),
        temp.path().join("out.json"),
    );
    let error = warren_bench::run(&options).unwrap_err().to_string();
    assert!(error.contains("--dataset"), "{error}");
    assert!(!temp.path().join("out.json").exists());
}
