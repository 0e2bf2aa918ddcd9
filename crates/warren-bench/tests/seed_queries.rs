//! The mission's seed queries (and variants) on a generated Graph500 graph give exactly the
//! answers Kùzu 0.11.3 gave on the same files, recorded once by `bench/peers/kuzu_seed.py` into
//! `tests/data/kuzu_seed_graph500_s14.json` (so this test needs no Kùzu). Runs with 1 and 2
//! threads.

use serde_json::Value as Json;
use warren::{Database, Value};
use warren_bench::generate::{generate, DatasetKind, GenerateOptions};

#[test]
fn seed_queries_match_kuzu() {
    let golden: Json = serde_json::from_str(include_str!("data/kuzu_seed_graph500_s14.json"))
        .expect("golden JSON");
    let dataset = &golden["dataset"];
    let mut options = GenerateOptions::defaults(DatasetKind::Graph500);
    options.scale = dataset["scale"].as_u64().unwrap() as u32;
    options.seed = dataset["seed"].as_u64().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = generate(&options, &dir.path().join("graph")).unwrap();
    let db = Database::in_memory();
    let mut conn = db.connect();
    for script in [files.schema_path(), files.copy_path()] {
        let text = std::fs::read_to_string(script).unwrap();
        for statement in text.lines().filter(|l| !l.trim().is_empty()) {
            conn.query(statement)
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    }
    for threads in [1, 2] {
        conn.set("threads", Value::Int64(threads)).unwrap();
        for entry in golden["queries"].as_array().unwrap() {
            let query = entry["query"].as_str().unwrap();
            let expected: Vec<&str> = entry["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            let rows = conn
                .query(query)
                .and_then(|mut r| r.to_strings())
                .unwrap_or_else(|e| panic!("{query}: {e}"));
            assert_eq!(rows, expected, "{query} with {threads} threads");
        }
    }
}
