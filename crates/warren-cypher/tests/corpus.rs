//! Parses every statement of Kùzu's conformance files (`shared/conformance/kuzu`): each
//! `-STATEMENT` of every `.test` file and each line of every dataset's `schema.cypher` and
//! `copy.cypher`. A statement whose expected result is a `Parser exception` must fail to parse;
//! every other statement must parse, except the few out-of-scope ones in [`ALLOW_LIST`].

mod common;

use common::{corpus_cases, corpus_root, Case};
use warren_cypher::parse_script;

/// Statements Kùzu supports that Warren does not parse, matched by a (case-insensitive) piece
/// of their text, each with the reason.
const ALLOW_LIST: &[(&str, &str)] = &[(
    ") AS MATCH ",
    "CREATE TABLE ... AS query (create a table from a query) is out of scope",
)];

#[derive(Default)]
struct Tally {
    parsed: usize,
    expected_errors: usize,
    allow_listed: usize,
    allow_list_used: Vec<bool>,
    failures: Vec<String>,
}

#[test]
fn every_corpus_statement_parses() {
    let Some(root) = corpus_root() else {
        println!(
            "corpus: shared/conformance/kuzu not found next to the workspace; nothing to check"
        );
        return;
    };
    let cases = corpus_cases(&root);
    let mut tally = Tally {
        allow_list_used: vec![false; ALLOW_LIST.len()],
        ..Tally::default()
    };
    for case in &cases {
        check(case, &mut tally);
    }
    println!(
        "corpus: {} statements: {} parsed, {} failed as expected (Parser exception), {} allow-listed",
        cases.len(),
        tally.parsed,
        tally.expected_errors,
        tally.allow_listed
    );
    for (used, (piece, _)) in tally.allow_list_used.iter().zip(ALLOW_LIST) {
        assert!(
            used,
            "allow-list entry {piece:?} matches no statement; remove it"
        );
    }
    assert!(
        tally.failures.is_empty(),
        "{} failures:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}

fn check(case: &Case, tally: &mut Tally) {
    if let Some(index) = allow_list_entry(&case.text) {
        tally.allow_list_used[index] = true;
        tally.allow_listed += 1;
        return;
    }
    match (parse_script(&case.text), case.expects_parser_error) {
        (Ok(_), false) => tally.parsed += 1,
        (Err(_), true) => tally.expected_errors += 1,
        (Ok(_), true) => {
            tally.failures.push(format!(
                "{}: parsed but Kùzu rejects it: {}",
                case.origin, case.text
            ));
        }
        (Err(error), false) => {
            tally
                .failures
                .push(format!("{}: {}\n    {error}", case.origin, case.text));
        }
    }
}

fn allow_list_entry(text: &str) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    ALLOW_LIST
        .iter()
        .position(|(piece, _)| upper.contains(piece))
}
