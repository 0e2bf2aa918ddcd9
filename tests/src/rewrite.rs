//! Regenerating expectations from actual results (`WARREN_GOLDEN_REWRITE=1`). Only the
//! blocks of statements that failed change; every other byte of the file stays as it was, so
//! the new expectations can be reviewed with `git diff`. A failing statement's blocks are
//! replaced by one block per result (trailing repeats dropped, since the last block applies to
//! further results), keeping the form of the old block where it still fits (`ok`, `hash`).
//! A statement written without any block gets one (its rows). Statements that panicked, hung
//! or were skipped keep their blocks.

use crate::block_text::actual_lines;
use crate::case_runner::{CaseRun, StatementRun};
use crate::compare::{self, block_for};
use crate::execute::{Actual, Outcome};
use crate::test_file::{Expected, Statement, TestFile};

/// `text` (the file `file` was parsed from) with the expectations of every failing statement
/// replaced by what `runs` produced; `None` when nothing changes.
pub fn rewrite(text: &str, file: &TestFile, runs: &[(usize, CaseRun)]) -> Option<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    let mut edits: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
    for (case_index, run) in runs {
        let case = &file.cases[*case_index];
        for (statement, statement_run) in case.statements.iter().zip(&run.statements) {
            let StatementRun::Ran {
                outcome: Outcome::Results(results),
                ..
            } = statement_run
            else {
                continue;
            };
            let outcome = Outcome::Results(results.clone());
            if !statement.blocks.is_empty() && compare::check(statement, &outcome).is_ok() {
                continue;
            }
            edits.push((region(statement), new_blocks(statement, results)));
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    for (range, blocks) in edits {
        let end = range.end.min(lines.len());
        let mut replacement: Vec<String> = blocks
            .into_iter()
            .map(|line| format!("{line}{newline}"))
            .collect();
        if end == lines.len() && !text.ends_with('\n') && end > range.start {
            // The old block ended the file without a final newline; so does the new one.
            if let Some(last) = replacement.last_mut() {
                last.truncate(last.len() - newline.len());
            }
        }
        if range.start == lines.len() && !text.is_empty() && !text.ends_with('\n') {
            if let Some(last) = lines.last_mut() {
                last.push_str(newline);
            }
        }
        lines.splice(range.start..end, replacement);
    }
    Some(lines.concat())
}

/// The lines that hold `statement`'s blocks (an empty range after its text if it has none).
fn region(statement: &Statement) -> std::ops::Range<usize> {
    match (statement.blocks.first(), statement.blocks.last()) {
        (Some(first), Some(last)) => first.span.start..last.span.end,
        _ => statement.text_end..statement.text_end,
    }
}

/// The lines of the blocks that describe `results`. A statement written without blocks
/// gets its rows.
fn new_blocks(statement: &Statement, results: &[Actual]) -> Vec<String> {
    let rows_form = Expected::Rows(Vec::new());
    let like = |index| match statement.blocks.is_empty() {
        true => &rows_form,
        false => block_for(statement, index),
    };
    let mut blocks: Vec<Vec<String>> = results
        .iter()
        .enumerate()
        .map(|(index, actual)| actual_lines(actual, statement, like(index)))
        .collect();
    while blocks.len() > 1 && blocks[blocks.len() - 1] == blocks[blocks.len() - 2] {
        blocks.pop();
    }
    blocks.concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_file::parse;
    use std::time::Duration;

    fn ran(results: Vec<Actual>) -> StatementRun {
        StatementRun::Ran {
            outcome: Outcome::Results(results),
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn rewrites_only_failing_blocks() {
        let text = "--\n-CASE A\n# keep\n-STATEMENT RETURN 1\n---- 1\n2\n\n-STATEMENT RETURN 3\n\
                    ---- ok\n-STATEMENT RETURN x\n---- 0\n";
        let file = parse(text).unwrap();
        let rows = |r: &str| Actual::Rows {
            columns: vec![],
            rows: vec![r.to_string()],
        };
        let run = CaseRun {
            dataset_error: None,
            statements: vec![
                ran(vec![rows("1")]),
                ran(vec![rows("3")]),
                ran(vec![Actual::Error("Binder exception: no x".into())]),
            ],
        };
        let new = rewrite(text, &file, &[(0, run)]).unwrap();
        assert_eq!(
            new,
            "--\n-CASE A\n# keep\n-STATEMENT RETURN 1\n---- 1\n1\n\n-STATEMENT RETURN 3\n\
             ---- ok\n-STATEMENT RETURN x\n---- error\nBinder exception: no x\n"
        );
    }

    #[test]
    fn adds_missing_blocks_and_collapses_repeats() {
        let text = "--\n-CASE A\n-STATEMENT RETURN 1; RETURN 1\n\n-STATEMENT RETURN 2";
        let file = parse(text).unwrap();
        let rows = || Actual::Rows {
            columns: vec![],
            rows: vec!["1".to_string()],
        };
        let run = CaseRun {
            dataset_error: None,
            statements: vec![
                ran(vec![rows(), rows()]),
                ran(vec![Actual::Error("E".into())]),
            ],
        };
        let new = rewrite(text, &file, &[(0, run)]).unwrap();
        assert_eq!(
            new,
            "--\n-CASE A\n-STATEMENT RETURN 1; RETURN 1\n---- 1\n1\n\n-STATEMENT RETURN 2\n\
             ---- error\nE\n"
        );
    }
}
