//! `COPY ... (IGNORE_ERRORS=true)` through the command line: the bad rows of a CSV file are
//! skipped and listed by `show_warnings()` with their file, line and text, the good rows are
//! copied, and `clear_warnings()` empties the list. Without IGNORE_ERRORS the same file fails
//! the COPY with its `file:line`, a non-zero exit status, and nothing copied.

use std::path::Path;
use std::process::{Command, Output};

fn warren(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warren"))
        .args(args)
        .output()
        .expect("warren runs")
}

fn query(db: &Path, text: &str) -> String {
    let output = warren(&["query", db.to_str().unwrap(), text, "--format", "csv"]);
    assert!(
        output.status.success(),
        "{text}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn ignore_errors_skips_bad_rows_and_lists_them_as_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("people.csv");
    std::fs::write(&csv, "id,age\n1,30\n2,abc\n1,40\n,50\n3,60,70\n4,20\n").unwrap();
    let db = dir.path().join("db");
    let script = dir.path().join("load.cypher");
    std::fs::write(
        &script,
        format!(
            "CREATE NODE TABLE P(id INT64, age INT32, PRIMARY KEY(id));\n\
             COPY P FROM '{}' (HEADER=true, IGNORE_ERRORS=true);\n\
             CALL show_warnings() RETURN line_number, message, skipped_line_or_record;\n",
            csv.display()
        ),
    )
    .unwrap();
    let output = warren(&["run", db.to_str().unwrap(), script.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(printed.contains("2 tuples have been copied to the P table."));
    assert!(printed.contains("4 warnings encountered during copy."));
    for expected in [
        "Could not convert \"abc\" to INT32.",
        "Found duplicated primary key value 1,",
        "Found NULL, which violates the non-null constraint",
        "expected 2 values per row, but found 3",
        "3,60,70",
    ] {
        assert!(printed.contains(expected), "{expected} in {printed}");
    }
    assert_eq!(
        query(&db, "MATCH (p:P) RETURN p.id, p.age ORDER BY p.id"),
        "p.id,p.age\n1,30\n4,20\n"
    );
    // Warnings belong to a connection: a new process starts with none.
    assert_eq!(
        query(&db, "CALL show_warnings() RETURN count(*)"),
        "count(*)\n0\n"
    );
}

#[test]
fn without_ignore_errors_the_first_bad_row_fails_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("people.csv");
    std::fs::write(&csv, "id,age\n1,30\n2,abc\n4,20\n").unwrap();
    let db = dir.path().join("db");
    query(
        &db,
        "CREATE NODE TABLE P(id INT64, age INT32, PRIMARY KEY(id))",
    );
    let copy = format!("COPY P FROM '{}' (HEADER=true)", csv.display());
    let output = warren(&["query", db.to_str().unwrap(), &copy]);
    assert!(!output.status.success());
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.contains(&format!("{}:3: Cast failed.", csv.display())),
        "{error}"
    );
    assert_eq!(query(&db, "MATCH (p:P) RETURN count(*)"), "count(*)\n0\n");
}

#[test]
fn clear_warnings_empties_the_list_and_warning_limit_bounds_it() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("keys.csv");
    std::fs::write(&csv, "1\n1\n1\n1\n").unwrap();
    let db = dir.path().join("db");
    let script = dir.path().join("load.cypher");
    std::fs::write(
        &script,
        format!(
            "CREATE NODE TABLE K(id INT64, PRIMARY KEY(id));\n\
             CALL warning_limit=2;\n\
             COPY K FROM '{0}' (IGNORE_ERRORS=true);\n\
             CALL show_warnings() RETURN count(*) AS kept;\n\
             CALL clear_warnings();\n\
             CALL show_warnings() RETURN count(*) AS cleared;\n",
            csv.display()
        ),
    )
    .unwrap();
    let output = warren(&["run", db.to_str().unwrap(), script.to_str().unwrap()]);
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        printed.contains("3 warnings encountered during copy."),
        "{printed}"
    );
    // The value is two lines below its column's header (a rule line between them).
    let lines: Vec<&str> = printed.lines().collect();
    let count_of = |label: &str| {
        let header = lines
            .iter()
            .position(|line| line.trim_matches(['|', ' ']) == label)?;
        Some(lines.get(header + 2)?.trim_matches(['|', ' ']).to_string())
    };
    assert_eq!(count_of("kept").as_deref(), Some("2"), "{printed}");
    assert_eq!(count_of("cleared").as_deref(), Some("0"), "{printed}");
}
