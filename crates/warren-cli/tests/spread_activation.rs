//! `warren query` with `CALL spread_activation(...)`: the in-query form over a database on
//! disk, with threads, as CSV; a bad argument is one `Error:` line and a failing exit status.

use std::path::Path;
use std::process::Command;

fn warren() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warren"))
}

fn create(db: &Path) {
    let database = warren::Database::open(db).unwrap();
    let mut conn = database.connect();
    for statement in [
        "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID))",
        "CREATE REL TABLE Knows(FROM Person TO Person, w DOUBLE)",
        "UNWIND range(0, 4) AS i CREATE (:Person {ID: i})",
        "MATCH (a:Person), (b:Person) WHERE b.ID = a.ID + 1 CREATE (a)-[:Knows {w: 0.5}]->(b)",
        "CHECKPOINT",
    ] {
        conn.query(statement).unwrap();
    }
}

#[test]
fn in_query_spread_from_the_command_line() {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    create(&db);
    let output = warren()
        .arg("query")
        .arg(&db)
        .arg(
            "MATCH (p:Person) WHERE p.ID < 2 WITH collect(p) AS seeds \
             CALL spread_activation('Knows', seeds, weight := 'w', decay := 1.0, max_hops := 2) \
             RETURN node.ID, activation, hops",
        )
        .args(["--format", "csv", "--threads", "2"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // Seeds 0 and 1 (1.0 each); 1 also receives 0.5 from 0; 2 gets 0.5 (from 1 at hop 1) and
    // 0.25 (from 1's hop-1 arrival at hop 2); 3 gets 0.25 at hop 2.
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "node.ID,activation,hops\n1,1.500000,0\n0,1.000000,0\n2,0.750000,1\n3,0.250000,2\n"
    );
}

#[test]
fn a_bad_argument_is_an_error_line() {
    let temp = tempfile::tempdir().unwrap();
    let db = temp.path().join("db");
    create(&db);
    let output = warren()
        .arg("query")
        .arg(&db)
        .arg("CALL spread_activation('Knows', [], direction := 'sideways') RETURN *")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("Error: Binder exception: direction must be 'out', 'in' or 'both', not 'sideways' (line 1, column 50)."),
        "{stderr}"
    );
}
