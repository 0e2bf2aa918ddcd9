//! Kùzu conformance: runs every active case of Kùzu's `.test` files from
//! `shared/conformance/kuzu` against Warren, prints one `FAILED <file>:<line>: <reason>` line
//! per failing statement and two summary lines, writes `target/conformance-report.json`, and
//! fails only when the pass counts fall below `conformance_baseline.txt`.
//!
//! Environment: `WARREN_CONFORMANCE_FILTER=<substring>` runs only the files whose path
//! contains it (the baseline is then not checked); `WARREN_CONFORMANCE_VERBOSE=1` prints the
//! expected and actual rows of every failure; `WARREN_CONFORMANCE_UPDATE_BASELINE=1` writes
//! the observed counts to the baseline file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use warren_tests::baseline::{self, Baseline};
use warren_tests::case_runner::{CaseEnv, RunSettings};
use warren_tests::dataset::DatasetDir;
use warren_tests::panic_capture;
use warren_tests::recursive_index::RecursiveIndex;
use warren_tests::report::{self, tally};
use warren_tests::skip_list::SkipList;
use warren_tests::suite::{self, SuiteConfig};

fn main() -> ExitCode {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.join("../../shared/conformance/kuzu");
    if !root.join("test_files").is_dir() {
        println!(
            "conformance: skipped, the Kùzu suite is not at {} in this checkout",
            root.display()
        );
        return ExitCode::SUCCESS;
    }
    let root = root.canonicalize().unwrap_or(root);
    let verbose = std::env::var("WARREN_CONFORMANCE_VERBOSE").is_ok_and(|v| v == "1");
    let filter = std::env::var("WARREN_CONFORMANCE_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    panic_capture::install(verbose);

    let skips = SkipList::read(&crate_dir.join("conformance_skips.txt")).expect("skip list");
    let recursive =
        RecursiveIndex::read(&root.join("recursive_statements.json")).expect("recursive index");
    let variables = [(
        "KUZU_ROOT_DIRECTORY".to_string(),
        root.display().to_string(),
    )]
    .into();
    let config = SuiteConfig {
        test_dir: root.join("test_files"),
        display_root: root.clone(),
        env: CaseEnv {
            dataset: None,
            dataset_dirs: vec![DatasetDir {
                datasets: root.join("dataset"),
                base: root.clone(),
            }],
            statement_dir: root.clone(),
            variables,
            settings: RunSettings::default(),
        },
        skips,
        recursive,
        filter: filter.clone(),
        verbose,
    };
    let run = suite::run_suite(&config);

    let report_path = target_dir().join("conformance-report.json");
    if let Err(error) = report::write_json(&report_path, &run.records) {
        println!(
            "conformance: cannot write {}: {error}",
            report_path.display()
        );
    }
    let recursive = tally(&run.records, |record| record.recursive);
    let all = tally(&run.records, |_| true);
    let ok = verdict(
        &run.parse_errors,
        filter.is_some(),
        crate_dir,
        recursive.passed,
        all.passed,
    );
    println!(
        "conformance recursive: {} passed, {} failed",
        recursive.passed, recursive.failed
    );
    println!(
        "conformance all: {} passed, {} failed, {} skipped",
        all.passed, all.failed, all.skipped
    );
    match ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// Whether the run is acceptable: every file parses and (unfiltered) the pass counts are at
/// least the baseline.
fn verdict(
    parse_errors: &[String],
    filtered: bool,
    crate_dir: &Path,
    recursive_passed: usize,
    all_passed: usize,
) -> bool {
    if !parse_errors.is_empty() {
        println!(
            "conformance: {} files do not parse (ERROR lines above)",
            parse_errors.len()
        );
        return false;
    }
    if filtered {
        println!("conformance: filtered run, baseline not checked");
        return true;
    }
    let observed = Baseline {
        counts: [
            ("recursive_passed".to_string(), recursive_passed),
            ("all_passed".to_string(), all_passed),
        ]
        .into(),
    };
    let path = crate_dir.join("conformance_baseline.txt");
    baseline::enforce(&path, &observed, "WARREN_CONFORMANCE_UPDATE_BASELINE")
}

/// The cargo target directory this test was built in.
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| tmp.to_path_buf())
}
