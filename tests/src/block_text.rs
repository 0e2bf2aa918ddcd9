//! Expected blocks and actual results written in the `.test` notation (`---- 3` and rows,
//! `---- error` and the message, ...), for verbose failure output and for rewriting
//! expectations.

use crate::compare::{comparable_rows, rows_digest};
use crate::execute::Actual;
use crate::test_file::{Expected, Statement};

/// The lines of an expected block.
pub fn expected_lines(expected: &Expected) -> Vec<String> {
    match expected {
        Expected::Ok => vec!["---- ok".into()],
        Expected::Error(message) => with_header("---- error", message.lines()),
        Expected::ErrorRegex(pattern) => with_header("---- error(regex)", pattern.lines()),
        Expected::Rows(rows) => with_header(&format!("---- {}", rows.len()), rows.iter()),
        Expected::Hash { count, digest } => {
            vec![
                "---- hash".into(),
                format!("{count} tuples hashed to {digest}"),
            ]
        }
    }
}

/// The lines of a block that `actual` satisfies, in the form of `like` where that form can
/// express it (`ok` stays `ok`, `hash` stays `hash`); rows are sorted unless `-CHECK_ORDER`.
pub fn actual_lines(actual: &Actual, statement: &Statement, like: &Expected) -> Vec<String> {
    match (actual, like) {
        (Actual::Error(message), _) => with_header("---- error", message.trim_end().lines()),
        (Actual::Rows { .. }, Expected::Ok) => vec!["---- ok".into()],
        (Actual::Rows { columns, rows }, Expected::Hash { .. }) => {
            let rows = comparable_rows(columns, rows, statement);
            let digest = rows_digest(&rows);
            expected_lines(&Expected::Hash {
                count: rows.len(),
                digest,
            })
        }
        (Actual::Rows { columns, rows }, _) => {
            expected_lines(&Expected::Rows(comparable_rows(columns, rows, statement)))
        }
    }
}

fn with_header<T: AsRef<str>>(header: &str, lines: impl Iterator<Item = T>) -> Vec<String> {
    std::iter::once(header.to_string())
        .chain(lines.map(|line| line.as_ref().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rows_sorted_and_errors() {
        let statement = Statement::default();
        let actual = Actual::Rows {
            columns: vec![],
            rows: vec!["b".into(), "a".into()],
        };
        let lines = actual_lines(&actual, &statement, &Expected::Rows(vec![]));
        assert_eq!(lines, vec!["---- 2", "a", "b"]);
        let lines = actual_lines(&Actual::Error("x\ny ".into()), &statement, &Expected::Ok);
        assert_eq!(lines, vec!["---- error", "x", "y"]);
    }
}
