//! Syntax errors: Kùzu's message format with the offending token and its position, and the
//! nesting limit that turns deep input into an error instead of a stack overflow.

use warren_common::error::Position;
use warren_common::limits::NESTING_DEPTH_MAX;
use warren_common::Error;

use super::{error_message, full_error_message};
use crate::{parse_script, parse_statement};

fn position(text: &str) -> Position {
    match parse_statement(text) {
        Err(Error::Syntax { position, .. }) => position,
        other => panic!("{text}: expected a syntax error, got {other:?}"),
    }
}

#[test]
fn golden_messages() {
    let cases = [
        (
            "MATCH (n $",
            "Invalid input <MATCH (n $>: expected a parameter name after '$' (line: 1, offset: 9)",
        ),
        (
            "MATCH (n $param) RETURN n;",
            "Invalid input <MATCH (n $>: expected a label, a property map or ')' (line: 1, offset: 9)",
        ),
        (
            "MATCH ()-[r:FOO $param]->() RETURN r;",
            "Invalid input <MATCH ()-[r:FOO $>: expected '|', '*', a property map or ']' \
             (line: 1, offset: 16)",
        ),
        (
            "MATCH (a:A)            MATCH (a)-[:LIKES..]->(c) RETURN c.name;",
            "Invalid input <MATCH (a:A)            MATCH (a)-[:LIKES..>: expected '|', '*', a \
             property map or ']' (line: 1, offset: 40)",
        ),
        (
            "MATCH (a:A)           MATCH (a)-[:LIKES*-2]->(c) RETURN c.name;",
            "Invalid input <MATCH (a:A)           MATCH (a)-[:LIKES*->: expected a range such as \
             1..3, a property map or ']' (line: 1, offset: 40)",
        ),
        (
            "MATCH (n)\nRETURN n +",
            "Invalid input <MATCH (n) RETURN n +>: expected an expression (line: 2, offset: 10)",
        ),
        (
            "MATCH (n) RETRUN n",
            "Invalid input <MATCH (n) RETRUN>: expected a clause or the end of the statement \
             (line: 1, offset: 10)",
        ),
        (
            "MATCH (n:) RETURN n",
            "Invalid input <MATCH (n:)>: expected a node label after ':' (line: 1, offset: 9)",
        ),
        (
            "MATCH (a)-[r:]->(b) RETURN a",
            "Invalid input <MATCH (a)-[r:]>: expected a relationship type after ':' \
             (line: 1, offset: 13)",
        ),
        ("MATCH a RETURN a", "Invalid input <MATCH a>: expected a node pattern (line: 1, offset: 6)"),
        (
            "RETURN 'abc",
            "Invalid input <RETURN 'abc>: expected a closing quote to end the string \
             (line: 1, offset: 7)",
        ),
        (
            "RETURN 170141183460469231731687303715884105728",
            "Invalid input <RETURN 170141183460469231731687303715884105728>: expected an integer \
             that fits in 128 bits (line: 1, offset: 7)",
        ),
        (
            "",
            "Invalid input <>: expected a statement such as MATCH, RETURN or CREATE \
             (line: 1, offset: 0)",
        ),
        (
            "MATCH (a)<-[r]->(b) RETURN a",
            "Invalid input <MATCH (a)<-[r]->>: expected '-' (a relationship cannot point both \
             ways) (line: 1, offset: 14)",
        ),
        (
            "RETURN 1 +\r\n\n   * 2",
            "Invalid input <RETURN 1 +     *>: expected an expression (line: 3, offset: 3)",
        ),
        (
            "RETURN 1 RETURN 2",
            "Invalid input <RETURN 1 RETURN>: expected a clause or the end of the statement \
             (line: 1, offset: 9)",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error_message(text), expected, "{text:?}");
    }
}

#[test]
fn messages_quote_the_statement_and_point_at_the_token() {
    let message = full_error_message("MATCH (a:A)\n MATCH (a)-[:LIKES..]->(c)\n RETURN c.name;");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines[0],
        "Invalid input <MATCH (a:A)  MATCH (a)-[:LIKES..>: expected '|', '*', a property map or ']' \
         (line: 2, offset: 18)"
    );
    assert_eq!(
        lines[1],
        "\"MATCH (a:A)  MATCH (a)-[:LIKES..]->(c)  RETURN c.name\""
    );
    // The carets sit under `..` in the quoted line.
    assert_eq!(lines[2], format!("{}^^", " ".repeat(31)));
    assert_eq!(&lines[1][31..33], "..");
}

#[test]
fn positions_are_one_based() {
    assert_eq!(
        position("MATCH (n $"),
        Position {
            line: 1,
            column: 10
        }
    );
    assert_eq!(
        position("MATCH (n)\n  RETURN ]"),
        Position {
            line: 2,
            column: 10
        }
    );
    assert_eq!(
        position("RETURN 'é' + $"),
        Position {
            line: 1,
            column: 14
        }
    );
}

#[test]
fn script_errors_quote_the_failing_statement() {
    let Err(Error::Syntax { message, position }) =
        parse_script("RETURN 1;\nMATCH (n $x) RETURN n;")
    else {
        panic!("expected a syntax error");
    };
    assert_eq!(
        message.lines().next().unwrap(),
        "Invalid input <MATCH (n $>: expected a label, a property map or ')' (line: 2, offset: 9)"
    );
    assert_eq!(
        position,
        Position {
            line: 2,
            column: 10
        }
    );
}

#[test]
fn out_of_scope_statements_are_syntax_errors() {
    for text in [
        "CREATE MACRO m(x) AS x + 1",
        "ALTER TABLE T MODIFY x INT64",
        "INSTALL json",
        "RETURN a != b",
        "RETURN a < b < c",
        "MATCH (a) RETURN NOT",
        "MATCH (a) WHERE a = NOT b RETURN a",
        "RETURN CASE END",
        "RETURN [1, 2",
        "RETURN {a 1}",
        "RETURN f(a",
        "MATCH (a)-[*1..2 (r, n | WHERE)]->(b) RETURN a",
        "COPY T FROM 'x' (HEADER true)",
        "CREATE NODE TABLE T(a INT64",
        "CREATE REL TABLE R(a INT64)",
        "MATCH (a) HINT a JOIN RETURN a",
        "RETURN 1 UNION",
    ] {
        assert!(
            matches!(parse_statement(text), Err(Error::Syntax { .. })),
            "{text}"
        );
    }
}

/// `open` repeated `depth` times, then `middle`, then `close` repeated `depth` times.
fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!(
        "RETURN {}{middle}{}",
        open.repeat(depth),
        close.repeat(depth)
    )
}

#[test]
fn nesting_within_the_limit_parses() {
    // An atom inside brackets costs two to four levels (see `Parser::primary`), so a quarter of
    // the limit is reachable by every construct.
    let depth = NESTING_DEPTH_MAX / 4;
    let cases = [
        ("(", ")"),
        ("[", "]"),
        ("f(", ")"),
        ("{a: ", "}"),
        ("-", ""),
        ("NOT ", ""),
        ("[x IN ", "]"),
        ("CASE WHEN ", " THEN 1 END"),
        ("EXISTS { MATCH (a {x: ", "}) }"),
    ];
    for (open, close) in cases {
        let text = nested(open, "1", close, depth / 3);
        assert!(
            parse_statement(&text).is_ok(),
            "{open}...{close} at depth {}",
            depth / 3
        );
    }
    for (open, close) in [("(", ")"), ("-", ""), ("NOT ", ""), ("1 + (", ")")] {
        let text = nested(open, "1", close, depth);
        assert!(
            parse_statement(&text).is_ok(),
            "{open}...{close} at depth {depth}"
        );
    }
}

#[test]
fn nesting_beyond_the_limit_is_an_error() {
    let depth = 20_000;
    let cases = [
        ("(", ")"),
        ("[", "]"),
        ("f(", ")"),
        ("{a: ", "}"),
        ("-", ""),
        ("NOT ", ""),
        ("EXISTS { MATCH (a {x: ", "}) }"),
        ("[x IN ", "]"),
        ("CASE WHEN ", " THEN 1 END"),
        ("(a)-[* (r, n | WHERE ", ")]->(b)"),
        ("(a)-->({x: ", "})"),
    ];
    for (open, close) in cases {
        let message = error_message(&nested(open, "1", close, depth));
        assert!(
            message.contains("levels of nesting"),
            "{open}...{close}: {message}"
        );
    }
    let hint = format!(
        "MATCH (a) HINT {}a{} RETURN a",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    assert!(error_message(&hint).contains("levels of nesting"));
    let explain = format!("{}RETURN 1", "EXPLAIN ".repeat(depth));
    assert!(error_message(&explain).contains("levels of nesting"));
}

#[test]
fn backtracking_stays_fast_on_nested_guesses() {
    // Each `[x IN` is first read as a comprehension and, at the `,`, re-read as a list; each
    // `(` before `--` is first read as a pattern. Without memoizing failed guesses, both are
    // exponential in the depth.
    let depth = 40;
    let lists = format!("RETURN {}1{}", "[x IN ".repeat(depth), ", y]".repeat(depth));
    assert!(parse_statement(&lists).is_ok());
    let patterns = format!("RETURN {}1{}", "({a: ".repeat(depth), "})--1".repeat(depth));
    assert!(parse_statement(&patterns).is_ok());
}
