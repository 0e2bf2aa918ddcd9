//! Spans: byte ranges with 1-based line and column of their start.

use super::{clauses, expr, match_clause};
use crate::ast::{Clause, ExprKind, Span};

#[test]
fn expression_spans() {
    let sum = expr("1 + a.x * 2");
    assert_eq!(
        sum.span,
        Span {
            start: 7,
            end: 18,
            line: 1,
            column: 8
        }
    );
    let ExprKind::Binary(_, _, product) = sum.kind else {
        panic!("not binary")
    };
    assert_eq!(
        (product.span.start, product.span.end, product.span.column),
        (11, 18, 12)
    );
}

#[test]
fn multi_line_spans() {
    let text = "MATCH (a)\n  -[r:T*1..2]->(b)\nWHERE a.x = 1\nRETURN a";
    let clause = match_clause(text);
    assert_eq!(clause.span.line, 1);
    let (rel, node) = &clause.patterns[0].hops[0];
    assert_eq!((rel.span.line, rel.span.column), (2, 3));
    assert_eq!(&text[rel.span.start..rel.span.end], "-[r:T*1..2]->");
    let recursive = rel.recursive.as_ref().expect("recursive");
    assert_eq!(&text[recursive.span.start..recursive.span.end], "*1..2");
    assert_eq!((node.span.line, node.span.column), (2, 16));
    let condition = clause.where_clause.expect("WHERE");
    assert_eq!((condition.span.line, condition.span.column), (3, 7));
    let found = clauses(text);
    let Clause::Return(projection) = &found[1] else {
        panic!("not RETURN")
    };
    assert_eq!((projection.span.line, projection.span.column), (4, 1));
}

#[test]
fn columns_count_characters() {
    let text = "RETURN 'ééé' + x";
    let ExprKind::Binary(_, left, right) = expr("'ééé' + x").kind else {
        panic!("not binary")
    };
    assert_eq!((left.span.column, right.span.column), (8, 16));
    assert_eq!(&text[right.span.start..right.span.end], "x");
}
