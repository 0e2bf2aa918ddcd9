//! Developer tool: the commit path of `warren bench writes`' `commit-1` as a fixed number of
//! single-edge commits on one connection, for profilers that need a run whose work does not
//! depend on time: `valgrind --tool=callgrind --toggle-collect='*commit_edges*' commit_loop DB
//! COMMITS` counts the commits alone. DB (a Graph500 database) is written to: pass a copy.
use std::collections::HashMap;
use std::time::Instant;
use warren::{Connection, Database, DatabaseOptions, Value};

const EDGE_STATEMENT: &str =
    "MATCH (a:Person {ID: $a}), (b:Person {ID: $b}) CREATE (a)-[:Knows]->(b)";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    assert_eq!(args.len(), 3, "usage: commit_loop DB COMMITS");
    // No checkpoint at the end: the run is the commits alone.
    let options = DatabaseOptions {
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&args[1], options).unwrap();
    let commits: u64 = args[2].parse().unwrap();
    let mut conn = db.connect();
    let started = Instant::now();
    commit_edges(&mut conn, commits);
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!(
        "{commits} commits in {elapsed:.3} s: {:.0} commits/s",
        commits as f64 / elapsed
    );
}

/// Commits `commits` single edges between pseudo-random people (IDs below 2^17).
#[inline(never)]
fn commit_edges(conn: &mut Connection, commits: u64) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next_id = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        Value::Int64((state.wrapping_mul(0x2545_f491_4f6c_dd1d) % (1 << 17)) as i64)
    };
    for _ in 0..commits {
        let parameters =
            HashMap::from([("a".to_string(), next_id()), ("b".to_string(), next_id())]);
        conn.query_with(EDGE_STATEMENT, &parameters).unwrap();
    }
}
