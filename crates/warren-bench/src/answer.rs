//! A workload's answer: read from the engine's rows, compared with the reference's, and
//! recorded in the report as JSON.

use serde_json::Value as Json;
use warren::{QueryResult, Value};

use crate::error::{BenchError, BenchResult};

/// What a benchmark query answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Rows of integers (sp64, sp1: `a.ID, count(*), sum(length(p))` per source).
    Rows(Vec<Vec<i128>>),
    /// One integer (`count(*)`).
    Count(i128),
    /// Paths streamed out (`RETURN r`): how many, and their lengths (rels) summed.
    Paths { paths: u128, length_sum: u128 },
    /// What a COPY loaded: nodes and edges, and their IDs summed.
    Load {
        nodes: u64,
        node_id_sum: i128,
        edges: u64,
        from_id_sum: i128,
        to_id_sum: i128,
    },
}

/// How to read a query's rows into an [`Answer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerShape {
    /// Every row, every column an integer.
    Rows,
    /// One row of one integer.
    Count,
    /// Every row one recursive rel (a path value); rows are counted, not kept.
    Paths,
}

impl Answer {
    /// How many paths the answer counts (varlen), for `paths_per_s`.
    pub fn path_count(&self) -> Option<u128> {
        match self {
            Answer::Count(count) => u128::try_from(*count).ok(),
            Answer::Paths { paths, .. } => Some(*paths),
            Answer::Rows(_) | Answer::Load { .. } => None,
        }
    }

    /// The answer as report JSON: numbers where they fit 64 bits, decimal strings otherwise.
    pub fn to_json(&self) -> Json {
        match self {
            Answer::Rows(rows) => Json::Array(
                rows.iter()
                    .map(|row| Json::Array(row.iter().map(|&v| integer(v)).collect()))
                    .collect(),
            ),
            Answer::Count(count) => integer(*count),
            Answer::Paths { paths, length_sum } => serde_json::json!({
                "paths": unsigned(*paths),
                "length_sum": unsigned(*length_sum),
            }),
            Answer::Load {
                nodes,
                node_id_sum,
                edges,
                from_id_sum,
                to_id_sum,
            } => serde_json::json!({
                "nodes": nodes,
                "node_id_sum": integer(*node_id_sum),
                "edges": edges,
                "from_id_sum": integer(*from_id_sum),
                "to_id_sum": integer(*to_id_sum),
            }),
        }
    }
}

fn integer(value: i128) -> Json {
    match i64::try_from(value) {
        Ok(small) => Json::from(small),
        Err(_) => Json::String(value.to_string()),
    }
}

fn unsigned(value: u128) -> Json {
    match u64::try_from(value) {
        Ok(small) => Json::from(small),
        Err(_) => Json::String(value.to_string()),
    }
}

/// Reads every row of `result` in the given shape.
pub fn read_answer(result: &mut QueryResult, shape: AnswerShape) -> BenchResult<Answer> {
    match shape {
        AnswerShape::Rows => {
            let mut rows = Vec::new();
            while let Some(row) = result.next_row()? {
                rows.push(
                    row.iter()
                        .map(as_integer)
                        .collect::<BenchResult<Vec<_>>>()?,
                );
            }
            Ok(Answer::Rows(rows))
        }
        AnswerShape::Count => {
            let rows = result.collect_rows()?;
            match rows.as_slice() {
                [row] if row.len() == 1 => Ok(Answer::Count(as_integer(&row[0])?)),
                _ => Err(BenchError::Result(format!(
                    "expected one row of one count, got {} rows",
                    rows.len()
                ))),
            }
        }
        AnswerShape::Paths => {
            let (mut paths, mut length_sum) = (0u128, 0u128);
            while let Some(row) = result.next_row()? {
                let [Value::Path(path)] = row.as_slice() else {
                    return Err(BenchError::Result(format!(
                        "expected one recursive rel per row, got {row:?}"
                    )));
                };
                paths += 1;
                length_sum += path.rels.len() as u128;
            }
            Ok(Answer::Paths { paths, length_sum })
        }
    }
}

fn as_integer(value: &Value) -> BenchResult<i128> {
    value
        .as_i128()
        .ok_or_else(|| BenchError::Result(format!("expected an integer, got {value:?}")))
}

/// Runs `query` and reads every row in the given shape (for untimed, auxiliary queries).
pub fn query_answer(
    conn: &mut warren::Connection,
    query: &str,
    shape: AnswerShape,
) -> BenchResult<Answer> {
    let mut result = conn.query(query)?;
    read_answer(&mut result, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> warren::Connection {
        let db = warren::Database::in_memory();
        let mut conn = db.connect();
        conn.query(
            "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID)); \
             CREATE REL TABLE Knows(FROM Person TO Person); \
             CREATE (:Person {ID: 0})-[:Knows]->(:Person {ID: 1}); \
             MATCH (a:Person {ID: 1}) CREATE (a)-[:Knows]->(:Person {ID: 2})",
        )
        .unwrap();
        conn
    }

    #[test]
    fn reads_rows_counts_and_paths() {
        let mut conn = tiny();
        let rows = query_answer(
            &mut conn,
            "MATCH (a:Person) RETURN a.ID, a.ID * 2 ORDER BY a.ID",
            AnswerShape::Rows,
        )
        .unwrap();
        assert_eq!(rows, Answer::Rows(vec![vec![0, 0], vec![1, 2], vec![2, 4]]));
        let count = query_answer(
            &mut conn,
            "MATCH (a:Person) RETURN count(*)",
            AnswerShape::Count,
        )
        .unwrap();
        assert_eq!(count, Answer::Count(3));
        let paths = query_answer(
            &mut conn,
            "MATCH (a:Person)-[r:Knows*1..2]->(b:Person) WHERE a.ID = 0 RETURN r",
            AnswerShape::Paths,
        )
        .unwrap();
        assert_eq!(
            paths,
            Answer::Paths {
                paths: 2,
                length_sum: 3
            }
        );
        assert_eq!(paths.path_count(), Some(2));
    }

    #[test]
    fn wrong_shapes_are_errors() {
        let mut conn = tiny();
        let many = query_answer(
            &mut conn,
            "MATCH (a:Person) RETURN a.ID",
            AnswerShape::Count,
        );
        assert!(matches!(many, Err(BenchError::Result(_))));
        let text = query_answer(&mut conn, "RETURN 'x'", AnswerShape::Rows);
        assert!(matches!(text, Err(BenchError::Result(_))));
        let not_path = query_answer(&mut conn, "RETURN 1", AnswerShape::Paths);
        assert!(matches!(not_path, Err(BenchError::Result(_))));
    }

    #[test]
    fn json_keeps_large_numbers_exact() {
        assert_eq!(Answer::Count(5).to_json(), serde_json::json!(5));
        let huge = i128::from(i64::MAX) + 1;
        assert_eq!(
            Answer::Count(huge).to_json(),
            serde_json::json!(huge.to_string())
        );
        let rows = Answer::Rows(vec![vec![0, 3, 4]]).to_json();
        assert_eq!(rows, serde_json::json!([[0, 3, 4]]));
        let paths = Answer::Paths {
            paths: 2,
            length_sum: 3,
        };
        assert_eq!(paths.to_json()["length_sum"], 3);
    }
}
