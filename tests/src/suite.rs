//! Running a directory of `.test` files: find them, parse them, run every active case and
//! judge every statement. A file with an unconditional `-SKIP` header and a case with `-SKIP`
//! are not run and their statements are not counted. Conditional skips (`-SKIP_WASM`,
//! `-SKIP_IN_MEM`, `-SKIP_VECTOR_CAPACITY_TESTS`, `-SKIP_NODE_GROUP_SIZE_TESTS`, ...) depend on
//! how Kùzu was built or run; Warren has no such variants, so those cases run. (The one
//! `-SKIP_IN_MEM` case needs `${DATABASE_PATH}`, a directory for files; each case gets a fresh
//! scratch directory for it.)

use std::fs;
use std::path::{Path, PathBuf};

use crate::block_text::{actual_lines, expected_lines};
use crate::case_runner::{self, CaseEnv, CaseRun, StatementRun};
use crate::compare::{self, block_for};
use crate::execute::Outcome;
use crate::recursive_index::RecursiveIndex;
use crate::report::{self, StatementRecord, Status};
use crate::skip_list::SkipList;
use crate::test_file::{self, Expected, ParseError, Statement, TestFile};

/// What to run and how.
#[derive(Clone, Debug)]
pub struct SuiteConfig {
    /// Searched recursively for `*.test` files.
    pub test_dir: PathBuf,
    /// Display paths (`FAILED <file>:<line>`) are relative to this directory.
    pub display_root: PathBuf,
    /// The environment of every case; its `dataset` is replaced by each file's.
    pub env: CaseEnv,
    pub skips: SkipList,
    pub recursive: RecursiveIndex,
    /// Only files whose display path contains this.
    pub filter: Option<String>,
    /// Print the expected and actual blocks of every failure.
    pub verbose: bool,
}

/// One file's run: its text, how it parsed, and the runs of its active cases.
#[derive(Debug)]
pub struct FileRun {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    pub parsed: Result<TestFile, ParseError>,
    /// `(case index, run)` for every case that ran.
    pub cases: Vec<(usize, CaseRun)>,
}

/// The outcome of a whole suite.
#[derive(Debug, Default)]
pub struct SuiteRun {
    pub files: Vec<FileRun>,
    pub records: Vec<StatementRecord>,
    /// Files that do not parse (a problem of the runner or of the file).
    pub parse_errors: Vec<String>,
    /// Distinct errors of datasets that did not load (a problem of Warren; the cases still
    /// run).
    pub dataset_errors: Vec<String>,
}

/// Every `*.test` file under `dir`, sorted by path.
pub fn test_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|entry| entry.ok().map(|entry| entry.path())) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "test") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Runs every file of the suite, printing failures as they are found.
pub fn run_suite(config: &SuiteConfig) -> SuiteRun {
    let mut suite = SuiteRun::default();
    for path in test_files(&config.test_dir) {
        let name = path
            .strip_prefix(&config.display_root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if config
            .filter
            .as_ref()
            .is_some_and(|filter| !name.contains(filter.as_str()))
        {
            continue;
        }
        let file = run_file(config, name, path, &mut suite);
        suite.files.push(file);
    }
    suite
}

fn run_file(config: &SuiteConfig, name: String, path: PathBuf, suite: &mut SuiteRun) -> FileRun {
    let text = fs::read_to_string(&path).unwrap_or_default();
    let parsed = test_file::parse(&text);
    let mut run = FileRun {
        name,
        path,
        text: text.clone(),
        parsed: Ok(TestFile::default()),
        cases: vec![],
    };
    let file = match parsed {
        Ok(file) => file,
        Err(error) => {
            let message = format!(
                "ERROR {}:{}: cannot parse: {}",
                run.name, error.line, error.message
            );
            println!("{message}");
            suite.parse_errors.push(message);
            run.parsed = Err(error);
            return run;
        }
    };
    if !file.skipped {
        let env = CaseEnv {
            dataset: file.dataset.clone(),
            ..config.env.clone()
        };
        for (index, case) in file
            .cases
            .iter()
            .enumerate()
            .filter(|(_, case)| !case.skipped)
        {
            let skips: Vec<Option<String>> = case
                .statements
                .iter()
                .map(|statement| {
                    config
                        .skips
                        .reason(&run.name, statement.line)
                        .map(String::from)
                })
                .collect();
            let case_run = case_runner::run_case(case, &skips, &env);
            if let Some(error) = &case_run.dataset_error {
                // Printed once per distinct error: every case of a file reloads the dataset.
                if !suite.dataset_errors.contains(error) {
                    println!("ERROR {}:{}: dataset: {error}", run.name, case.line);
                    suite.dataset_errors.push(error.clone());
                }
            }
            for (statement, statement_run) in case.statements.iter().zip(&case_run.statements) {
                let record = judge(config, &run.name, statement, statement_run);
                report::print_failure(&record, config.verbose);
                suite.records.push(record);
            }
            run.cases.push((index, case_run));
        }
    }
    run.parsed = Ok(file);
    run
}

/// The verdict on one statement.
fn judge(
    config: &SuiteConfig,
    file: &str,
    statement: &Statement,
    run: &StatementRun,
) -> StatementRecord {
    let mut detail = None;
    let status = match run {
        StatementRun::Skipped(reason) => Status::Skipped(reason.clone()),
        StatementRun::Hung(waited) => Status::Failed(format!(
            "timeout: no answer after {}s, case abandoned",
            waited.as_secs()
        )),
        StatementRun::Abandoned => {
            Status::Failed("not run: an earlier statement of the case hung".into())
        }
        StatementRun::Ran { outcome, .. } => match compare::check(statement, outcome) {
            Ok(()) => Status::Passed,
            Err(mismatch) => {
                detail = Some(describe(statement, outcome));
                Status::Failed(mismatch.reason)
            }
        },
    };
    let recursive = config.recursive.contains(file, statement.line);
    StatementRecord {
        file: file.to_string(),
        line: statement.line,
        recursive,
        status,
        detail,
    }
}

/// The query, the expected blocks and the actual results, for verbose output.
fn describe(statement: &Statement, outcome: &Outcome) -> String {
    let mut lines = vec![
        format!("query: {}", statement.query.trim_end()),
        "expected:".into(),
    ];
    for block in &statement.blocks {
        lines.extend(
            expected_lines(&block.expected)
                .into_iter()
                .map(|line| format!("  {line}")),
        );
    }
    lines.push("actual:".into());
    match outcome {
        Outcome::Panic(message) => lines.push(format!("  panic: {message}")),
        Outcome::Results(results) => {
            let rows_form = Expected::Rows(Vec::new());
            for (index, actual) in results.iter().enumerate() {
                let expected = block_for(statement, index);
                let like = match expected {
                    Expected::Hash { .. } => expected,
                    _ => &rows_form,
                };
                let rendered = actual_lines(actual, statement, like);
                lines.extend(rendered.into_iter().map(|line| format!("  {line}")));
            }
        }
    }
    lines.join("\n")
}
