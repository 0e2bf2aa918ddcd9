//! The verdict on every statement, and how a run reports it: one `FAILED <file>:<line>:
//! <reason>` line per failure (with the expected and actual blocks when verbose), pass/fail
//! tallies for the summary lines, and a machine-readable JSON report.

use std::fs;
use std::path::Path;

use serde_json::json;

/// The verdict on one statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed(String),
    Skipped(String),
}

/// One statement's verdict and where it comes from.
#[derive(Clone, Debug)]
pub struct StatementRecord {
    /// The test file's display path.
    pub file: String,
    /// 1-based line of the `-STATEMENT`.
    pub line: usize,
    /// Listed as an active recursive statement.
    pub recursive: bool,
    pub status: Status,
    /// Expected and actual blocks, for failures.
    pub detail: Option<String>,
}

impl StatementRecord {
    /// The `FAILED` line for a failure, `None` otherwise.
    pub fn failure_line(&self) -> Option<String> {
        match &self.status {
            Status::Failed(reason) => Some(format!("FAILED {}:{}: {reason}", self.file, self.line)),
            _ => None,
        }
    }
}

/// Pass, fail and skip counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// Counts the records that `wanted` accepts.
pub fn tally<'a>(
    records: impl IntoIterator<Item = &'a StatementRecord>,
    wanted: impl Fn(&StatementRecord) -> bool,
) -> Tally {
    let mut tally = Tally::default();
    for record in records.into_iter().filter(|record| wanted(record)) {
        match record.status {
            Status::Passed => tally.passed += 1,
            Status::Failed(_) => tally.failed += 1,
            Status::Skipped(_) => tally.skipped += 1,
        }
    }
    tally
}

/// Prints a record's `FAILED` line (and its detail when `verbose`), if it failed.
pub fn print_failure(record: &StatementRecord, verbose: bool) {
    let Some(line) = record.failure_line() else {
        return;
    };
    println!("{line}");
    if verbose {
        if let Some(detail) = &record.detail {
            for text in detail.lines() {
                println!("    {text}");
            }
        }
    }
}

/// Writes every record to `path` as a JSON array of
/// `{file, line, recursive, status, reason}` objects.
pub fn write_json(path: &Path, records: &[StatementRecord]) -> std::io::Result<()> {
    let entries: Vec<serde_json::Value> = records
        .iter()
        .map(|record| {
            let (status, reason) = match &record.status {
                Status::Passed => ("passed", None),
                Status::Failed(reason) => ("failed", Some(reason.as_str())),
                Status::Skipped(reason) => ("skipped", Some(reason.as_str())),
            };
            json!({
                "file": record.file,
                "line": record.line,
                "recursive": record.recursive,
                "status": status,
                "reason": reason,
            })
        })
        .collect();
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let text = serde_json::to_string_pretty(&entries).map_err(std::io::Error::other)?;
    fs::write(path, text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: usize, recursive: bool, status: Status) -> StatementRecord {
        StatementRecord {
            file: "f.test".into(),
            line,
            recursive,
            status,
            detail: None,
        }
    }

    #[test]
    fn tallies_and_failure_lines() {
        let records = vec![
            record(1, true, Status::Passed),
            record(2, false, Status::Failed("expected 1 rows, got 0".into())),
            record(3, true, Status::Skipped("slow".into())),
        ];
        let all = tally(&records, |_| true);
        assert_eq!(
            all,
            Tally {
                passed: 1,
                failed: 1,
                skipped: 1
            }
        );
        assert_eq!(tally(&records, |r| r.recursive).failed, 0);
        assert_eq!(
            records[1].failure_line().unwrap(),
            "FAILED f.test:2: expected 1 rows, got 0"
        );
    }
}
