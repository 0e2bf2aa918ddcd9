//! Parser for Kùzu's end-to-end `.test` format (see `shared/conformance/kuzu/README.md`).
//!
//! A file is a header (`-DATASET`, `-SKIP...`, `-BUFFER_POOL_SIZE`), a `--` line, then cases:
//! `-CASE name`, `-LOG label`, `-STATEMENT query` (continuation lines appended as Kùzu does),
//! `-CHECK_ORDER`, and one or more expected-result blocks starting with `----`. Every line's
//! first whitespace-separated token decides its meaning; blank lines and `#` lines are
//! comments. Each parsed block remembers the lines it spans so that expectations can be
//! rewritten in place.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use crate::variables;

/// A whole `.test` file.
#[derive(Clone, Debug, Default)]
pub struct TestFile {
    /// `-DATASET <format> <name>` from the header, if any.
    pub dataset: Option<DatasetSpec>,
    /// An unconditional `-SKIP` before the first `-CASE`: the whole file is disabled.
    pub skipped: bool,
    /// Conditional skips (`-SKIP_WASM`, `-SKIP_IN_MEM`, ...) in the header.
    pub conditions: Vec<String>,
    pub cases: Vec<Case>,
}

/// The dataset a file runs on, as written after `-DATASET`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetSpec {
    /// `CSV`, `PARQUET`, ...
    pub format: String,
    /// The directory under `dataset/`, e.g. `tinysnb` or `demo-db/csv`.
    pub name: String,
    /// 1-based line of the `-DATASET` token.
    pub line: usize,
}

/// One `-CASE`: a sequence of statements that runs on its own fresh database.
#[derive(Clone, Debug, Default)]
pub struct Case {
    pub name: String,
    /// 1-based line of the `-CASE` token.
    pub line: usize,
    /// An unconditional `-SKIP` inside the case.
    pub skipped: bool,
    /// Conditional skips (`-SKIP_IN_MEM`, ...) inside the case.
    pub conditions: Vec<String>,
    pub statements: Vec<Statement>,
}

/// One `-STATEMENT` with its expected results.
#[derive(Clone, Debug, Default)]
pub struct Statement {
    /// 1-based line of the `-STATEMENT` token.
    pub line: usize,
    /// The latest `-LOG` label before the statement, if any.
    pub log: Option<String>,
    /// The query text, `-SET` variables filled in; `${KUZU_ROOT_DIRECTORY}` and
    /// `${DATABASE_PATH}` are left for the runner.
    pub query: String,
    pub check_order: bool,
    /// `-CHECK_COLUMN_NAMES`: the first expected row is the column names.
    pub check_column_names: bool,
    /// One block per result of a multi-statement query; the last applies to further results.
    pub blocks: Vec<Block>,
    /// 0-based index of the first line after the query text (where a missing block goes).
    pub text_end: usize,
}

/// An expected-result block and the lines it occupies in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub expected: Expected,
    /// 0-based line indices, from the `----` line to the block's last line (exclusive end).
    pub span: Range<usize>,
}

/// What one result must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// `---- ok`: success; the rows do not matter.
    Ok,
    /// `---- error`: failure with exactly this message (compared after right-trimming).
    Error(String),
    /// `---- error(regex)`: failure with a message the regex matches as a whole.
    ErrorRegex(String),
    /// `---- N`: exactly these rows.
    Rows(Vec<String>),
    /// `---- hash`: `count tuples hashed to digest`.
    Hash { count: usize, digest: String },
}

/// A line the parser could not make sense of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Header and body tokens that only tune Kùzu's own runner; they are accepted and ignored.
const IGNORED_TOKENS: &[&str] = &[
    "-BUFFER_POOL_SIZE",
    "-PARALLELISM",
    "-CHECK_PRECISION",
    "-CHECKPOINT_WAIT_TIMEOUT",
];

/// Whether `token` is a directive of the format (as opposed to query or result text).
fn is_directive(token: &str) -> bool {
    if token == "--" || token.starts_with("----") {
        return true;
    }
    let Some(name) = token.strip_prefix('-') else {
        return false;
    };
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// Whether a line continues the text of a statement or an error message: it is not blank,
/// not a comment and does not start with a directive.
fn is_continuation(line: &str) -> bool {
    match line.split_whitespace().next() {
        None => false,
        Some(first) => !first.starts_with('#') && !is_directive(first),
    }
}

/// Parses the text of a `.test` file.
pub fn parse(text: &str) -> Result<TestFile, ParseError> {
    Parser {
        lines: text.lines().collect(),
        ..Parser::default()
    }
    .run()
}

#[derive(Default)]
struct Parser<'a> {
    lines: Vec<&'a str>,
    file: TestFile,
    variables: BTreeMap<String, String>,
    log: Option<String>,
}

impl<'a> Parser<'a> {
    fn run(mut self) -> Result<TestFile, ParseError> {
        let mut index = 0;
        while index < self.lines.len() {
            index = self.line(index)?;
        }
        Ok(self.file)
    }

    fn error(&self, index: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            line: index + 1,
            message: message.into(),
        }
    }

    fn case(&mut self, index: usize, token: &str) -> Result<&mut Case, ParseError> {
        let error = self.error(index, format!("{token} outside of a -CASE"));
        self.file.cases.last_mut().ok_or(error)
    }

    fn statement(&mut self, index: usize, token: &str) -> Result<&mut Statement, ParseError> {
        let error = self.error(index, format!("{token} without a preceding -STATEMENT"));
        let case = self.case(index, token)?;
        case.statements.last_mut().ok_or(error)
    }

    /// Handles the line at `index`; returns the index of the next unread line.
    fn line(&mut self, index: usize) -> Result<usize, ParseError> {
        let line = self.lines[index];
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            return Ok(index + 1);
        };
        if first.starts_with('#') || first == "--" {
            return Ok(index + 1);
        }
        let rest = tokens[1..].join(" ");
        match first {
            "-DATASET" => {
                let [_, format, name @ ..] = tokens.as_slice() else {
                    return Err(self.error(index, "-DATASET needs a format and a name"));
                };
                self.file.dataset = Some(DatasetSpec {
                    format: format.to_string(),
                    name: name.join(" "),
                    line: index + 1,
                });
            }
            "-SKIP" => match self.file.cases.last_mut() {
                Some(case) => case.skipped = true,
                None => self.file.skipped = true,
            },
            token if token.starts_with("-SKIP_") => match self.file.cases.last_mut() {
                Some(case) => case.conditions.push(token.to_string()),
                None => self.file.conditions.push(token.to_string()),
            },
            token if IGNORED_TOKENS.contains(&token) => {}
            "-CASE" => {
                self.log = None;
                self.file.cases.push(Case {
                    name: rest,
                    line: index + 1,
                    ..Case::default()
                });
            }
            "-LOG" => self.log = Some(rest),
            "-SET" => self.set(index, &tokens)?,
            "-STATEMENT" => return self.statement_text(index, rest),
            "-CHECK_ORDER" => self.statement_option(index, first)?.check_order = true,
            "-CHECK_COLUMN_NAMES" => {
                self.statement_option(index, first)?.check_column_names = true;
            }
            "----" => return self.block(index, &tokens),
            token if is_directive(token) => {
                return Err(self.error(index, format!("unsupported directive {token}")));
            }
            _ => return Err(self.error(index, format!("unexpected line: {line}"))),
        }
        Ok(index + 1)
    }

    /// The statement an option line (`-CHECK_ORDER`) belongs to. Until the statement has a
    /// block, the option counts as part of its text region, so a block added later goes
    /// after it.
    fn statement_option(
        &mut self,
        index: usize,
        token: &str,
    ) -> Result<&mut Statement, ParseError> {
        let statement = self.statement(index, token)?;
        if statement.blocks.is_empty() {
            statement.text_end = index + 1;
        }
        Ok(statement)
    }

    /// `-SET NAME ARANGE low high` defines `${NAME}` as the list `[low,...,high]`.
    fn set(&mut self, index: usize, tokens: &[&str]) -> Result<(), ParseError> {
        let [_, name, "ARANGE", low, high] = tokens else {
            return Err(self.error(index, "only -SET NAME ARANGE low high is supported"));
        };
        let (Ok(low), Ok(high)) = (low.parse::<i64>(), high.parse::<i64>()) else {
            return Err(self.error(index, "ARANGE bounds must be integers"));
        };
        let items: Vec<String> = (low..=high).map(|value| value.to_string()).collect();
        self.variables
            .insert(name.to_string(), format!("[{}]", items.join(",")));
        Ok(())
    }

    /// A `-STATEMENT`: the words after the token joined by single spaces, then every
    /// continuation line as written, each followed by a space (what Kùzu's parser does, so
    /// positions in parser errors match).
    fn statement_text(&mut self, index: usize, first: String) -> Result<usize, ParseError> {
        let mut query = first;
        let mut next = index + 1;
        while next < self.lines.len() && is_continuation(self.lines[next]) {
            query.push_str(self.lines[next]);
            query.push(' ');
            next += 1;
        }
        let query = variables::substitute(&query, &self.variables);
        let log = self.log.clone();
        let case = self.case(index, "-STATEMENT")?;
        let statement = Statement {
            line: index + 1,
            log,
            query,
            text_end: next,
            ..Statement::default()
        };
        case.statements.push(statement);
        Ok(next)
    }

    /// A `----` block; returns the index after its last line.
    fn block(&mut self, index: usize, tokens: &[&str]) -> Result<usize, ParseError> {
        let kind = tokens.get(1).copied().unwrap_or("");
        let (expected, end) = match kind {
            "ok" => (Expected::Ok, index + 1),
            "error" | "error(regex)" => {
                let mut end = index + 1;
                while end < self.lines.len() && is_continuation(self.lines[end]) {
                    end += 1;
                }
                let message = self.lines[index + 1..end].join("\n");
                match kind {
                    "error" => (Expected::Error(message), end),
                    _ => (Expected::ErrorRegex(message), end),
                }
            }
            "hash" => {
                let line = self.lines.get(index + 1).copied().unwrap_or("");
                let words: Vec<&str> = line.split_whitespace().collect();
                let ["tuples", "hashed", "to", digest] = words.get(1..).unwrap_or(&[]) else {
                    return Err(self.error(index + 1, "expected `N tuples hashed to <md5>`"));
                };
                let Ok(count) = words[0].parse() else {
                    return Err(self.error(index + 1, "bad tuple count"));
                };
                (
                    Expected::Hash {
                        count,
                        digest: digest.to_ascii_lowercase(),
                    },
                    index + 2,
                )
            }
            count => {
                let Ok(count) = count.parse::<usize>() else {
                    return Err(self.error(index, format!("unsupported result block `{kind}`")));
                };
                let end = index + 1 + count;
                if end > self.lines.len() {
                    return Err(self.error(index, format!("expected {count} rows after ----")));
                }
                let rows: Vec<String> = self.lines[index + 1..end]
                    .iter()
                    .map(|row| row.to_string())
                    .collect();
                if rows.first().is_some_and(|row| row.starts_with("<FILE>:")) {
                    return Err(self.error(index + 1, "answer files (<FILE>:) are not supported"));
                }
                (Expected::Rows(rows), end)
            }
        };
        let block = Block {
            expected,
            span: index..end,
        };
        self.statement(index, "----")?.blocks.push(block);
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_header_cases_and_blocks() {
        let text = "-DATASET CSV tinysnb\n\n--\n\n-CASE A\n-LOG first\n-STATEMENT  MATCH (a)\n   \
                    RETURN a;\n---- 2\nx\n\n-STATEMENT RETURN 1; RETURN 2\n-CHECK_ORDER\n---- ok\n\
                    ---- error\nBinder exception: bad\nsecond line\n\n-CASE B\n-SKIP\n\
                    -STATEMENT RETURN 1\n---- hash\n1 tuples hashed to ABC\n";
        let file = parse(text).unwrap();
        assert_eq!(file.dataset.as_ref().unwrap().name, "tinysnb");
        assert_eq!(file.cases.len(), 2);
        let first = &file.cases[0].statements[0];
        assert_eq!(first.query, "MATCH (a)   RETURN a; ");
        assert_eq!(first.line, 7);
        assert_eq!(first.log.as_deref(), Some("first"));
        assert_eq!(
            first.blocks[0].expected,
            Expected::Rows(vec!["x".into(), String::new()])
        );
        assert_eq!(first.blocks[0].span, 8..11);
        let second = &file.cases[0].statements[1];
        assert!(second.check_order);
        assert_eq!(second.blocks.len(), 2);
        assert_eq!(
            second.blocks[1].expected,
            Expected::Error("Binder exception: bad\nsecond line".into())
        );
        assert!(file.cases[1].skipped);
        let hash = &file.cases[1].statements[0].blocks[0].expected;
        assert_eq!(
            hash,
            &Expected::Hash {
                count: 1,
                digest: "abc".into()
            }
        );
    }

    #[test]
    fn header_skip_and_arange() {
        let text = "-DATASET CSV empty\n-SKIP\n--\n-CASE A\n-SKIP_IN_MEM\n-SET L ARANGE 1 3\n\
                    -STATEMENT UNWIND ${L} AS x RETURN x\n---- 0\n";
        let file = parse(text).unwrap();
        assert!(file.skipped);
        assert_eq!(file.cases[0].conditions, vec!["-SKIP_IN_MEM".to_string()]);
        assert_eq!(
            file.cases[0].statements[0].query,
            "UNWIND [1,2,3] AS x RETURN x"
        );
    }

    #[test]
    fn rejects_unknown_directives() {
        let error = parse("--\n-CASE A\n-LOOP i 1 2\n").unwrap_err();
        assert_eq!(error.line, 3);
    }
}
