//! Differential test against Kùzu 0.11.3: replays the random graphs and recursive queries
//! recorded by `bench/peers/kuzu_differential.py` and requires Warren's rows to equal Kùzu's
//! (including which path SHORTEST picks among ties). Large answers compare by count and MD5.
//! The recording script leaves out the query classes where Kùzu contradicts itself (ACYCLIC,
//! lower bound 0 on cycles, node filters with SHORTEST or with counting); its module doc says
//! why. Those classes are covered by the brute-force property tests and the conformance suite.

use serde_json::Value as Json;
use warren::{Connection, Database};

fn load(graph: &Json) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM P TO P, eid INT64, w INT64)")
        .unwrap();
    let nodes = graph["nodes"].as_u64().unwrap();
    for i in 0..nodes {
        conn.query(&format!("CREATE (:P {{ID: {i}}})")).unwrap();
    }
    for (i, rel) in graph["rels"].as_array().unwrap().iter().enumerate() {
        let (f, t, w) = (
            rel[0].as_u64().unwrap(),
            rel[1].as_u64().unwrap(),
            rel[2].as_i64().unwrap(),
        );
        conn.query(&format!(
            "MATCH (a:P {{ID: {f}}}), (b:P {{ID: {t}}}) CREATE (a)-[:E {{eid: {i}, w: {w}}}]->(b)"
        ))
        .unwrap();
    }
    conn
}

fn md5_of(rows: &[String]) -> String {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    format!("{:x}", md5::compute(text.as_bytes()))
}

#[test]
fn warren_answers_like_kuzu_on_random_graphs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/kuzu_differential.json"
    );
    let data: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in data["cases"].as_array().unwrap() {
        let mut conn = load(&case["graph"]);
        for answer in case["answers"].as_array().unwrap() {
            let query = answer["query"].as_str().unwrap();
            checked += 1;
            let got = conn.query(query).and_then(|mut r| r.to_strings());
            let verdict = match (got, answer.get("error")) {
                (Err(e), Some(expected)) if e.to_string() == expected.as_str().unwrap() => Ok(()),
                (Err(e), _) => Err(format!("error {e}")),
                (Ok(_), Some(expected)) => Err(format!("expected error {expected}")),
                (Ok(mut rows), None) => {
                    rows.sort();
                    if let Some(expected) = answer.get("rows") {
                        let expected: Vec<String> = expected
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| r.as_str().unwrap().to_string())
                            .collect();
                        if rows == expected {
                            Ok(())
                        } else {
                            Err(format!("expected {expected:?}\n   got {rows:?}"))
                        }
                    } else {
                        let count = answer["count"].as_u64().unwrap() as usize;
                        let digest = answer["md5"].as_str().unwrap();
                        if rows.len() == count && md5_of(&rows) == digest {
                            Ok(())
                        } else {
                            Err(format!(
                                "expected {count} rows (md5 {digest}), got {} rows",
                                rows.len()
                            ))
                        }
                    }
                }
            };
            if let Err(reason) = verdict {
                failures.push(format!("graph {}\n  {query}\n  {reason}", case["graph"]));
            }
        }
    }
    for failure in failures.iter().take(usize::MAX) {
        eprintln!("MISMATCH {failure}");
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} queries differ from Kùzu",
        failures.len()
    );
}
