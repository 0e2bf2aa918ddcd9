//! COPY of rels finds each endpoint's node by its primary key: by subtraction when the INT64
//! keys are consecutive in row order, through the hash index otherwise, and generically for
//! other key types. Every path must find the same nodes and reject unknown keys with the line.

use std::path::Path;

use warren::{Connection, Database};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn setup(key_type: &str, keys: &[&str]) -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query(&format!(
        "CREATE NODE TABLE N(k {key_type}, PRIMARY KEY(k))"
    ))
    .unwrap();
    conn.query("CREATE REL TABLE E(FROM N TO N, w INT64)")
        .unwrap();
    let nodes = write(dir.path(), "nodes.csv", &format!("{}\n", keys.join("\n")));
    conn.query(&format!("COPY N FROM '{nodes}'")).unwrap();
    (dir, conn)
}

fn copy_rels(dir: &Path, conn: &mut Connection, rows: &str) -> Result<(), String> {
    let rels = write(dir, "rels.csv", rows);
    conn.query(&format!("COPY E FROM '{rels}'"))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn pairs(conn: &mut Connection) -> Vec<String> {
    let mut result = conn
        .query("MATCH (a:N)-[e:E]->(b:N) RETURN a.k, b.k, e.w ORDER BY e.w")
        .unwrap();
    result.to_strings().unwrap()
}

#[test]
fn consecutive_int64_keys_are_found_by_offset() {
    let (dir, mut conn) = setup("INT64", &["-2", "-1", "0", "1"]);
    copy_rels(dir.path(), &mut conn, "-2,1,1\n1,-2,2\n0,0,3\n").unwrap();
    assert_eq!(pairs(&mut conn), vec!["-2|1|1", "1|-2|2", "0|0|3"]);
    for (bad, line) in [("2", 2), ("-3", 2)] {
        let error = copy_rels(dir.path(), &mut conn, &format!("0,1,4\n{bad},0,5\n")).unwrap_err();
        assert!(
            error.contains(&format!(
                "rels.csv:{line}: Unable to find primary key value {bad}."
            )),
            "{error}"
        );
    }
    // The failed COPYs kept nothing.
    assert_eq!(pairs(&mut conn).len(), 3);
}

#[test]
fn scattered_int64_keys_go_through_the_index() {
    let (dir, mut conn) = setup("INT64", &["9", "1", "5"]);
    copy_rels(dir.path(), &mut conn, "1,9,1\n5,1,2\n9,5,3\n").unwrap();
    assert_eq!(pairs(&mut conn), vec!["1|9|1", "5|1|2", "9|5|3"]);
    let error = copy_rels(dir.path(), &mut conn, "1,2,4\n").unwrap_err();
    assert!(
        error.contains("rels.csv:1: Unable to find primary key value 2."),
        "{error}"
    );
}

#[test]
fn string_keys_use_the_generic_lookup() {
    let (dir, mut conn) = setup("STRING", &["a", "b", "c"]);
    copy_rels(dir.path(), &mut conn, "a,c,1\nc,b,2\n").unwrap();
    assert_eq!(pairs(&mut conn), vec!["a|c|1", "c|b|2"]);
    let error = copy_rels(dir.path(), &mut conn, "a,z,3\n").unwrap_err();
    assert!(
        error.contains("rels.csv:1: Unable to find primary key value z."),
        "{error}"
    );
}
