//! Warren's golden tests: the `.test` files under `tests/golden/` run like Kùzu's suite.
//! Datasets come from `tests/golden/datasets/<name>/` or, failing that, from the Kùzu
//! suite's `dataset/`; relative paths in statements are relative to `tests/golden/`.
//! Prints one `FAILED <file>:<line>: <reason>` line per failure and a summary line, writes
//! `target/golden-report.json`, and fails when the pass count falls below
//! `golden_baseline.txt` or a file does not parse.
//!
//! Environment: `WARREN_GOLDEN_FILTER=<substring>` runs only matching files (baseline not
//! checked); `WARREN_GOLDEN_VERBOSE=1` prints expected and actual rows of failures;
//! `WARREN_GOLDEN_REWRITE=1` rewrites the expected blocks of failing statements from Warren's
//! answers (review with `git diff`); `WARREN_GOLDEN_UPDATE_BASELINE=1` writes the observed
//! count to the baseline file.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use warren_tests::baseline::{self, Baseline};
use warren_tests::case_runner::{CaseEnv, RunSettings};
use warren_tests::dataset::DatasetDir;
use warren_tests::panic_capture;
use warren_tests::recursive_index::RecursiveIndex;
use warren_tests::report::{self, tally};
use warren_tests::rewrite;
use warren_tests::skip_list::SkipList;
use warren_tests::suite::{self, SuiteConfig, SuiteRun};

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value == "1")
}

fn main() -> ExitCode {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = crate_dir.join("golden");
    let kuzu = crate_dir.join("../../shared/conformance/kuzu");
    let kuzu = kuzu.canonicalize().unwrap_or(kuzu);
    let verbose = flag("WARREN_GOLDEN_VERBOSE");
    let filter = std::env::var("WARREN_GOLDEN_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    panic_capture::install(verbose);

    let variables = [(
        "KUZU_ROOT_DIRECTORY".to_string(),
        kuzu.display().to_string(),
    )]
    .into();
    let config = SuiteConfig {
        test_dir: golden.clone(),
        display_root: crate_dir.to_path_buf(),
        env: CaseEnv {
            dataset: None,
            dataset_dirs: vec![
                DatasetDir {
                    datasets: golden.join("datasets"),
                    base: golden.clone(),
                },
                DatasetDir {
                    datasets: kuzu.join("dataset"),
                    base: kuzu.clone(),
                },
            ],
            statement_dir: golden.clone(),
            variables,
            settings: RunSettings::default(),
        },
        skips: SkipList::default(),
        recursive: RecursiveIndex::default(),
        filter: filter.clone(),
        verbose,
    };
    let run = suite::run_suite(&config);

    let report_path = target_dir().join("golden-report.json");
    if let Err(error) = report::write_json(&report_path, &run.records) {
        println!("golden: cannot write {}: {error}", report_path.display());
    }
    let rewriting = flag("WARREN_GOLDEN_REWRITE");
    if rewriting {
        rewrite_files(&run);
    }
    let all = tally(&run.records, |_| true);
    let ok = verdict(
        &run,
        &kuzu,
        crate_dir,
        filter.is_some() || rewriting,
        all.passed,
    );
    println!(
        "golden all: {} passed, {} failed, {} skipped",
        all.passed, all.failed, all.skipped
    );
    match ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// Writes new expectations into every file with failing statements.
fn rewrite_files(run: &SuiteRun) {
    for file in &run.files {
        let Ok(parsed) = &file.parsed else { continue };
        if let Some(text) = rewrite::rewrite(&file.text, parsed, &file.cases) {
            match fs::write(&file.path, text) {
                Ok(()) => println!("golden: rewrote {}", file.name),
                Err(error) => println!("golden: cannot write {}: {error}", file.path.display()),
            }
        }
    }
}

/// Whether the run is acceptable: every file parses and the pass count is at least the
/// baseline (not checked for filtered or rewriting runs, or without the Kùzu datasets).
fn verdict(run: &SuiteRun, kuzu: &Path, crate_dir: &Path, partial: bool, passed: usize) -> bool {
    if !run.parse_errors.is_empty() {
        println!(
            "golden: {} files do not parse (ERROR lines above)",
            run.parse_errors.len()
        );
        return false;
    }
    if partial {
        println!("golden: filtered or rewriting run, baseline not checked");
        return true;
    }
    if !kuzu.join("dataset").is_dir() {
        println!(
            "golden: the Kùzu datasets are missing ({}), baseline not checked",
            kuzu.display()
        );
        return true;
    }
    let observed = Baseline {
        counts: [("passed".to_string(), passed)].into(),
    };
    let path = crate_dir.join("golden_baseline.txt");
    baseline::enforce(&path, &observed, "WARREN_GOLDEN_UPDATE_BASELINE")
}

/// The cargo target directory this test was built in.
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| tmp.to_path_buf())
}
