//! COPY of a rel table without properties reads files without quotes in parallel chunks, and
//! files with quotes with one reader. Both paths must build the same table: the same rels in
//! the same order in both directions, the same counts and sums, and the same first error.

use std::path::Path;

use proptest::prelude::*;
use warren::{Connection, Database};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A database with node keys `keys` and the rels of each CSV text in `copies`, copied in turn;
/// returns the connection, or the first COPY's error.
fn load(dir: &Path, keys: &[i64], copies: &[String]) -> Result<Connection, String> {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE N(k INT64, PRIMARY KEY(k))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM N TO N)").unwrap();
    let nodes: Vec<String> = keys.iter().map(i64::to_string).collect();
    let nodes = write(dir, "nodes.csv", &format!("{}\n", nodes.join("\n")));
    conn.query(&format!("COPY N FROM '{nodes}'")).unwrap();
    for (i, text) in copies.iter().enumerate() {
        let rels = write(dir, &format!("rels{i}.csv"), text);
        conn.query(&format!("COPY E FROM '{rels}'"))
            .map_err(|e| e.to_string())?;
    }
    Ok(conn)
}

fn strings(conn: &mut Connection, query: &str) -> Vec<String> {
    conn.query(query).unwrap().to_strings().unwrap()
}

/// Everything the tests compare: both directions' adjacency in stored order, counts and sums.
fn snapshot(conn: &mut Connection) -> Vec<Vec<String>> {
    [
        "MATCH (a:N)-[:E]->(b:N) RETURN a.k, b.k",
        "MATCH (a:N)<-[:E]-(b:N) RETURN a.k, b.k",
        "MATCH (a:N)-[e:E]->(b:N) RETURN count(*), sum(a.k), sum(b.k), sum(a.k * 7 + b.k)",
    ]
    .iter()
    .map(|q| strings(conn, q))
    .collect()
}

/// The rows as CSV, each field quoted when `quoted` (which sends COPY to the one-reader path).
fn csv(rows: &[(i64, i64)], quoted: bool) -> String {
    rows.iter()
        .map(|(a, b)| {
            if quoted {
                format!("\"{a}\",\"{b}\"\n")
            } else {
                format!("{a},{b}\n")
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn both_paths_build_the_same_table(
        dense in any::<bool>(),
        nodes in 1i64..40,
        batches in proptest::collection::vec(
            proptest::collection::vec((0i64..40, 0i64..40), 0..60), 1..3),
    ) {
        // Dense keys are found by subtraction, scattered ones through the index.
        let keys: Vec<i64> = (0..nodes).map(|i| if dense { i } else { (i * 37) % 101 - 50 }).collect();
        let rows: Vec<Vec<(i64, i64)>> = batches
            .iter()
            .map(|batch| batch.iter().map(|&(a, b)| (keys[(a % nodes) as usize], keys[(b % nodes) as usize])).collect())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let plain: Vec<String> = rows.iter().map(|r| csv(r, false)).collect();
        let quoted: Vec<String> = rows.iter().map(|r| csv(r, true)).collect();
        let mut parallel = load(dir.path(), &keys, &plain).unwrap();
        let mut one_reader = load(dir.path(), &keys, &quoted).unwrap();
        prop_assert_eq!(snapshot(&mut parallel), snapshot(&mut one_reader));
    }
}

#[test]
fn a_missing_key_is_reported_at_the_same_line_by_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let keys = [0, 1, 2];
    let mut rows = vec![(0, 1); 5];
    rows.push((2, 9));
    rows.push((7, 0));
    let plain = load(dir.path(), &keys, &[csv(&rows, false)]).err().unwrap();
    let quoted = load(dir.path(), &keys, &[csv(&rows, true)]).err().unwrap();
    assert!(
        plain.contains("rels0.csv:6: Unable to find primary key value 9."),
        "{plain}"
    );
    assert_eq!(plain, quoted);
}

/// Files larger than one chunk (16 MiB) are read by several workers; the table is the one the
/// one-reader path builds.
#[test]
fn files_of_several_chunks_give_the_one_reader_table() {
    let nodes = 5000i64;
    let keys: Vec<i64> = (0..nodes).collect();
    let mut state = 12345u64;
    let rows: Vec<(i64, i64)> = (0..1_800_000)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = (state >> 33) as i64 % nodes;
            let b = (state >> 13) as i64 % nodes;
            (a, b)
        })
        .collect();
    let plain = csv(&rows, false);
    assert!(plain.len() > 16 << 20, "{} bytes", plain.len());
    let dir = tempfile::tempdir().unwrap();
    let mut parallel = load(dir.path(), &keys, &[plain]).unwrap();
    let mut one_reader = load(dir.path(), &keys, &[csv(&rows, true)]).unwrap();
    let totals = "MATCH (a:N)-[e:E]->(b:N) RETURN count(*), sum(a.k), sum(b.k * 3)";
    assert_eq!(
        strings(&mut parallel, totals),
        strings(&mut one_reader, totals)
    );
    for key in [0, 17, 4999] {
        for query in [
            format!("MATCH (a:N)-[:E]->(b:N) WHERE a.k = {key} RETURN b.k"),
            format!("MATCH (a:N)<-[:E]-(b:N) WHERE a.k = {key} RETURN b.k"),
        ] {
            let found = strings(&mut parallel, &query);
            assert!(!found.is_empty());
            assert_eq!(found, strings(&mut one_reader, &query), "{query}");
        }
    }
}

/// A file may end its lines with `\n`, `\r\n` or a lone `\r` (the CSV reader accepts all
/// three): the parallel path bounds a chunk's rows by all of them and builds the one-reader
/// table (a lone `\r` once made a worker overrun its chunk's slots and the COPY hang).
#[test]
fn every_kind_of_line_break_gives_the_one_reader_table() {
    let keys: Vec<i64> = (0..7).collect();
    let rows: Vec<(i64, i64)> = (0..40).map(|i| (i % 7, (i * 3 + 1) % 7)).collect();
    let breaks = ["\r", "\n", "\r\n", "\r"];
    let text = |quoted: bool| -> String {
        rows.iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let line = if quoted {
                    format!("\"{a}\",\"{b}\"")
                } else {
                    format!("{a},{b}")
                };
                line + breaks[i % breaks.len()]
            })
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut parallel = load(dir.path(), &keys, &[text(false)]).unwrap();
    let mut one_reader = load(dir.path(), &keys, &[text(true)]).unwrap();
    let count = strings(&mut parallel, "MATCH (a:N)-[:E]->(b:N) RETURN count(*)");
    assert_eq!(count, vec!["40".to_string()]);
    assert_eq!(snapshot(&mut parallel), snapshot(&mut one_reader));
}
