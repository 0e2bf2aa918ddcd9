//! Checking a statement's actual results against its expected blocks, as Kùzu's runner
//! does: result `i` is checked against block `i`, the last block against every further
//! result. Rows are compared as strings, both sides sorted as byte strings unless
//! `-CHECK_ORDER`. Errors are compared after right-trimming; `error(regex)` must match the
//! whole message. A mismatch yields a one-line reason.

use regex::Regex;

use crate::execute::{Actual, Outcome};
use crate::test_file::{Expected, Statement};

/// Longest reason printed for one failure, in characters.
pub const REASON_CHARS: usize = 200;

/// Why a statement failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// One line, at most [`REASON_CHARS`] characters.
    pub reason: String,
}

impl Mismatch {
    fn new(reason: String) -> Self {
        Self {
            reason: truncate(&reason.replace('\n', "\\n"), REASON_CHARS),
        }
    }
}

/// `text` cut to `max` characters, with `...` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{cut}...")
}

/// The expected block for result `index`: the block at that position, or the last one.
/// A statement without blocks expects success.
pub fn block_for(statement: &Statement, index: usize) -> &Expected {
    match statement.blocks.get(index).or(statement.blocks.last()) {
        Some(block) => &block.expected,
        None => &Expected::Ok,
    }
}

/// Checks every result of `outcome` against `statement`'s blocks.
pub fn check(statement: &Statement, outcome: &Outcome) -> Result<(), Mismatch> {
    let results = match outcome {
        Outcome::Results(results) => results,
        Outcome::Panic(message) => return Err(Mismatch::new(format!("panic: {message}"))),
    };
    for (index, actual) in results.iter().enumerate() {
        let expected = block_for(statement, index);
        if let Err(reason) = check_one(expected, actual, statement) {
            let reason = match results.len() {
                1 => reason,
                _ => format!("result {}: {reason}", index + 1),
            };
            return Err(Mismatch::new(reason));
        }
    }
    Ok(())
}

/// The rows of an actual result prepared for comparison: column names first with
/// `-CHECK_COLUMN_NAMES`, the rest sorted unless `-CHECK_ORDER`.
pub fn comparable_rows(columns: &[String], rows: &[String], statement: &Statement) -> Vec<String> {
    let mut rows = rows.to_vec();
    if !statement.check_order {
        rows.sort();
    }
    if statement.check_column_names {
        rows.insert(0, columns.join("|"));
    }
    rows
}

/// Expected rows prepared for comparison like [`comparable_rows`].
fn comparable_expected(expected: &[String], statement: &Statement) -> Vec<String> {
    let mut rows = expected.to_vec();
    let body = if statement.check_column_names && !rows.is_empty() {
        1
    } else {
        0
    };
    if !statement.check_order {
        rows[body..].sort();
    }
    rows
}

/// The MD5 digest (lowercase hex) of `rows`, each followed by a newline.
pub fn rows_digest(rows: &[String]) -> String {
    let mut context = md5::Context::new();
    for row in rows {
        context.consume(row.as_bytes());
        context.consume(b"\n");
    }
    format!("{:x}", context.compute())
}

/// How many expected rows have no counterpart: by position with `-CHECK_ORDER`, else as
/// multisets (both sides are sorted).
fn differing(want: &[String], got: &[String], ordered: bool) -> usize {
    if ordered {
        return want
            .iter()
            .zip(got)
            .filter(|(want, got)| want != got)
            .count();
    }
    let (mut i, mut j, mut matched) = (0, 0, 0);
    while i < want.len() && j < got.len() {
        match want[i].cmp(&got[j]) {
            std::cmp::Ordering::Equal => {
                matched += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    want.len() - matched
}

fn check_one(expected: &Expected, actual: &Actual, statement: &Statement) -> Result<(), String> {
    match (expected, actual) {
        (Expected::Ok, Actual::Rows { .. }) => Ok(()),
        (Expected::Error(want), Actual::Error(got)) => {
            if want.trim_end() == got.trim_end() {
                return Ok(());
            }
            let (want_lines, got_lines): (Vec<&str>, Vec<&str>) = (
                want.trim_end().lines().collect(),
                got.trim_end().lines().collect(),
            );
            let line = (0..)
                .find(|&i| want_lines.get(i) != got_lines.get(i))
                .unwrap_or(0);
            if line == 0 {
                return Err(format!(
                    "expected error \"{}\", got \"{got}\"",
                    truncate(want, 80)
                ));
            }
            let quote = |text: Option<&&str>| match text {
                Some(text) => format!("\"{}\"", truncate(text, 80)),
                None => "nothing".to_string(),
            };
            Err(format!(
                "error differs at line {}: expected {}, got {}",
                line + 1,
                quote(want_lines.get(line)),
                quote(got_lines.get(line))
            ))
        }
        (Expected::ErrorRegex(pattern), Actual::Error(got)) => {
            let regex = Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|error| format!("bad expected regex: {error}"))?;
            match regex.is_match(got.trim_end()) {
                true => Ok(()),
                false => Err(format!(
                    "error does not match /{}/: \"{got}\"",
                    truncate(pattern, 60)
                )),
            }
        }
        (Expected::Error(want) | Expected::ErrorRegex(want), Actual::Rows { rows, .. }) => {
            Err(format!(
                "expected error \"{}\", got {} rows",
                truncate(want, 120),
                rows.len()
            ))
        }
        (_, Actual::Error(got)) => Err(format!("error: {got}")),
        (Expected::Rows(want), Actual::Rows { columns, rows }) => {
            let got = comparable_rows(columns, rows, statement);
            let want = comparable_expected(want, statement);
            if want.len() != got.len() {
                return Err(format!("expected {} rows, got {}", want.len(), got.len()));
            }
            match want.iter().zip(&got).find(|(want, got)| want != got) {
                None => Ok(()),
                Some((first_want, first_got)) => Err(format!(
                    "{} of {} rows differ, first: expected \"{}\", got \"{}\"",
                    differing(&want, &got, statement.check_order),
                    want.len(),
                    truncate(first_want, 80),
                    truncate(first_got, 80)
                )),
            }
        }
        (Expected::Hash { count, digest }, Actual::Rows { columns, rows }) => {
            let got = comparable_rows(columns, rows, statement);
            if got.len() != *count {
                return Err(format!("expected {count} rows, got {} (hashed)", got.len()));
            }
            match rows_digest(&got) == *digest {
                true => Ok(()),
                false => Err(format!("hash of {count} rows differs")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_file::Block;

    fn statement(blocks: Vec<Expected>) -> Statement {
        let blocks = blocks
            .into_iter()
            .map(|expected| Block {
                expected,
                span: 0..0,
            })
            .collect();
        Statement {
            blocks,
            ..Statement::default()
        }
    }

    fn rows(rows: &[&str]) -> Actual {
        Actual::Rows {
            columns: vec![],
            rows: rows.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn rows_compare_unordered() {
        let s = statement(vec![Expected::Rows(vec!["b".into(), "a".into()])]);
        assert!(check(&s, &Outcome::Results(vec![rows(&["a", "b"])])).is_ok());
        let error = check(&s, &Outcome::Results(vec![rows(&["a"])])).unwrap_err();
        assert_eq!(error.reason, "expected 2 rows, got 1");
        let error = check(&s, &Outcome::Results(vec![rows(&["b", "c"])])).unwrap_err();
        assert_eq!(
            error.reason,
            "1 of 2 rows differ, first: expected \"a\", got \"b\""
        );
    }

    #[test]
    fn last_block_applies_to_further_results() {
        let s = statement(vec![Expected::Rows(vec!["1".into()]), Expected::Ok]);
        let outcome = Outcome::Results(vec![rows(&["1"]), rows(&[]), rows(&["x"])]);
        assert!(check(&s, &outcome).is_ok());
    }

    #[test]
    fn errors_and_regexes() {
        let s = statement(vec![Expected::Error("Binder exception: x".into())]);
        let outcome = Outcome::Results(vec![Actual::Error("Binder exception: x  ".into())]);
        assert!(check(&s, &outcome).is_ok());
        let s = statement(vec![Expected::ErrorRegex(
            "Copy exception: .*a.csv:3: .*".into(),
        )]);
        let outcome = Outcome::Results(vec![Actual::Error(
            "Copy exception: /x/a.csv:3: bad".into(),
        )]);
        assert!(check(&s, &outcome).is_ok());
        let reason = check(&s, &Outcome::Results(vec![rows(&[])]))
            .unwrap_err()
            .reason;
        assert!(reason.starts_with("expected error"));
        let s = statement(vec![Expected::Error(
            "E: x\nActual: (A)\nExpected: (B)".into(),
        )]);
        let outcome = Outcome::Results(vec![Actual::Error("E: x\nActual: (A)".into())]);
        let reason = check(&s, &outcome).unwrap_err().reason;
        assert_eq!(
            reason,
            "error differs at line 3: expected \"Expected: (B)\", got nothing"
        );
    }

    #[test]
    fn hashes_sorted_rows() {
        let digest = rows_digest(&["3".to_string()]);
        let s = statement(vec![Expected::Hash { count: 1, digest }]);
        assert!(check(&s, &Outcome::Results(vec![rows(&["3"])])).is_ok());
        assert_eq!(rows_digest(&[]), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
