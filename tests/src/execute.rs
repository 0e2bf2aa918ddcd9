//! Running one `-STATEMENT` on a connection and capturing what happened.
//!
//! A statement may hold several `;`-separated queries. Like Kùzu, the text is parsed as a
//! whole (a syntax error anywhere is the single result), then the queries run in order, one
//! result each, and the first failing query ends the chain with its error. (This is what
//! `Connection::query_script` does, except that it would drop the results before a failure,
//! which the expected blocks still describe.) Rows are pulled to the end, so runtime errors
//! of streaming queries surface here. A panic is caught and reported as such.

use std::collections::HashMap;

use warren::Connection;

use crate::panic_capture;

/// The result of one query of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actual {
    /// Success: the column names and every row as Kùzu prints it (`value|value|...`).
    Rows {
        columns: Vec<String>,
        rows: Vec<String>,
    },
    /// Failure: the error's text, e.g. `Binder exception: ...`.
    Error(String),
}

/// What running a statement produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// One result per query that ran.
    Results(Vec<Actual>),
    /// Warren panicked; the text names the message and location.
    Panic(String),
}

/// Runs `text` on `conn`, catching panics.
pub fn run(conn: &mut Connection, text: &str) -> Outcome {
    match panic_capture::capture(|| run_queries(conn, text)) {
        Ok(results) => Outcome::Results(results),
        Err(description) => Outcome::Panic(description),
    }
}

fn run_queries(conn: &mut Connection, text: &str) -> Vec<Actual> {
    let statements = match warren_cypher::parse_script(text) {
        Ok(statements) => statements,
        Err(error) => return vec![Actual::Error(error.to_string())],
    };
    if statements.is_empty() {
        // Let the connection word the "empty query" error.
        return vec![collect(conn.query(text))];
    }
    let parameters = HashMap::new();
    let mut results = Vec::with_capacity(statements.len());
    for statement in &statements {
        let actual = collect(conn.execute(statement, &parameters));
        let failed = matches!(actual, Actual::Error(_));
        results.push(actual);
        if failed {
            break;
        }
    }
    results
}

fn collect(result: warren::Result<warren::QueryResult>) -> Actual {
    let rows = result.and_then(|mut result| {
        let columns = result.column_names().to_vec();
        result.to_strings().map(|rows| (columns, rows))
    });
    match rows {
        Ok((columns, rows)) => Actual::Rows { columns, rows },
        Err(error) => Actual::Error(error.to_string()),
    }
}
