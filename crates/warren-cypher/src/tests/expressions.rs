//! Expressions: precedence and associativity, literals, postfix operators, calls and the
//! keyword-led forms.

use super::{error_message, expr, render, rendered};
use crate::ast::{ExprKind, Literal, Quantifier};

#[test]
fn arithmetic_precedence() {
    assert_eq!(rendered("1 + 2 * 3"), "(+ 1 (* 2 3))");
    assert_eq!(rendered("(1 + 2) * 3"), "(* (+ 1 2) 3)");
    assert_eq!(rendered("1 - 2 - 3"), "(- (- 1 2) 3)");
    assert_eq!(rendered("8 / 4 % 3 * 2"), "(* (% (/ 8 4) 3) 2)");
    assert_eq!(rendered("2 ^ 3 ^ 2"), "(^ (^ 2 3) 2)");
    assert_eq!(rendered("2 * 3 ^ 2"), "(* 2 (^ 3 2))");
    assert_eq!(rendered("-2 ^ 2"), "(^ (- 2) 2)");
    assert_eq!(rendered("- -x"), "(- (- x))");
    assert_eq!(rendered("1 + -2"), "(+ 1 (- 2))");
    assert_eq!(rendered("+a.x"), "(+ (. a x))");
    assert_eq!(rendered("'a' || 'b' + 'c'"), "(+ (|| 'a' 'b') 'c')");
}

#[test]
fn boolean_precedence() {
    assert_eq!(rendered("NOT a = b AND c"), "(AND (NOT (= a b)) c)");
    assert_eq!(rendered("a.x IS NULL OR b"), "(OR (IS NULL (. a x)) b)");
    assert_eq!(rendered("a OR b XOR c AND d"), "(OR a (XOR b (AND c d)))");
    assert_eq!(rendered("a AND b OR c AND d"), "(OR (AND a b) (AND c d))");
    assert_eq!(rendered("NOT NOT a"), "(NOT (NOT a))");
    assert_eq!(rendered("NOT a OR b"), "(OR (NOT a) b)");
    assert_eq!(
        rendered("a < 1 AND NOT b >= 2"),
        "(AND (< a 1) (NOT (>= b 2)))"
    );
}

#[test]
fn predicates_bind_tighter_than_comparison() {
    assert_eq!(rendered("a IS NOT NULL = true"), "(= (IS NOT NULL a) true)");
    assert_eq!(rendered("x IN [1, 2] AND y"), "(AND (IN x [1, 2]) y)");
    assert_eq!(
        rendered("n.name STARTS WITH 'A'"),
        "(STARTS WITH (. n name) 'A')"
    );
    assert_eq!(
        rendered("n.name ENDS WITH 'z' OR n.name CONTAINS 'q'"),
        "(OR (ENDS WITH (. n name) 'z') (CONTAINS (. n name) 'q'))"
    );
    assert_eq!(rendered("a + b STARTS WITH c"), "(STARTS WITH (+ a b) c)");
    assert_eq!(rendered("name =~ 'Adam*'"), "(=~ name 'Adam*')");
    assert_eq!(rendered("a <> b"), "(<> a b)");
}

#[test]
fn bitwise_sits_between_predicates_and_addition() {
    assert_eq!(rendered("a | b & c << 1 + 2"), "(| a (& b (<< c (+ 1 2))))");
    assert_eq!(rendered("a = b | c"), "(= a (| b c))");
    assert_eq!(rendered("a >> 1 & 3"), "(& (>> a 1) 3)");
}

#[test]
fn comparisons_do_not_chain() {
    let message = error_message("RETURN a < b < c");
    assert!(
        message.starts_with("Invalid input <RETURN a < b <>:"),
        "{message}"
    );
    let message = error_message("RETURN a != b");
    assert!(
        message.contains("expected '<>' for inequality"),
        "{message}"
    );
}

#[test]
fn literals() {
    assert_eq!(rendered("NULL"), "NULL");
    assert_eq!(rendered("true"), "true");
    assert_eq!(rendered("FaLsE"), "false");
    assert_eq!(rendered("12"), "12");
    assert_eq!(rendered("1.5"), "1.5");
    assert_eq!(rendered(".5"), "0.5");
    assert_eq!(rendered("1e3"), "1000.0");
    assert_eq!(rendered("\"a\\tb\""), "'a\tb'");
    assert_eq!(rendered("$name"), "$name");
    assert_eq!(rendered("$1"), "$1");
    let big = expr("18446744073709551616");
    assert_eq!(
        big.kind,
        ExprKind::Literal(Literal::Integer(18_446_744_073_709_551_616))
    );
}

#[test]
fn lists_and_maps() {
    assert_eq!(rendered("[]"), "[]");
    assert_eq!(rendered("[1, 'a', [2]]"), "[1, 'a', [2]]");
    assert_eq!(rendered("[1,,3]"), "[1, NULL, 3]");
    assert_eq!(rendered("[1,]"), "[1, NULL]");
    assert_eq!(rendered("{}"), "{}");
    assert_eq!(
        rendered("{a: 1, `b c`: 2, 'd': 3, count: 4}"),
        "{a: 1, b c: 2, d: 3, count: 4}"
    );
    assert_eq!(rendered("[x IN l, y]"), "[(IN x l), y]");
}

#[test]
fn postfix_operators() {
    assert_eq!(rendered("a.b.c"), "(. (. a b) c)");
    assert_eq!(rendered("n.count"), "(. n count)");
    assert_eq!(rendered("n.`odd name`"), "(. n odd name)");
    assert_eq!(rendered("n.fName"), "(. n fName)");
    assert_eq!(rendered("l[1]"), "(index l 1)");
    assert_eq!(rendered("l[1..2]"), "(slice l 1 2)");
    assert_eq!(rendered("l[..2]"), "(slice l _ 2)");
    assert_eq!(rendered("l[1..]"), "(slice l 1 _)");
    assert_eq!(rendered("l[1:3]"), "(slice l 1 3)");
    assert_eq!(
        rendered("(rels(p)[1]).since"),
        "(. (index rels(p) 1) since)"
    );
    assert_eq!(rendered("-l[0].x"), "(- (. (index l 0) x))");
    assert_eq!(rendered("n.*"), "n.*");
}

#[test]
fn function_calls() {
    assert_eq!(rendered("count(*)"), "count(*)");
    assert_eq!(rendered("COUNT(DISTINCT t)"), "COUNT(DISTINCT t)");
    assert_eq!(rendered("f()"), "f()");
    assert_eq!(rendered("label(n)"), "label(n)");
    assert_eq!(rendered("offset(id(r))"), "offset(id(r))");
    assert_eq!(
        rendered("properties(nodes(p), 'name')"),
        "properties(nodes(p), 'name')"
    );
    assert_eq!(rendered("union_value(a := 1)"), "union_value(a := 1)");
    assert_eq!(rendered("contains('abc', 'b')"), "contains('abc', 'b')");
}

#[test]
fn lambdas() {
    assert_eq!(
        rendered("list_transform(l, x -> x + 1)"),
        "list_transform(l, (\\x (+ x 1)))"
    );
    assert_eq!(
        rendered("list_transform(l, x->label(x))"),
        "list_transform(l, (\\x label(x)))"
    );
    assert_eq!(
        rendered("list_reduce(l, (x, y) -> x + y)"),
        "list_reduce(l, (\\x,y (+ x y)))"
    );
    assert_eq!(
        rendered("list_filter(l, x->x STARTS WITH '12')"),
        "list_filter(l, (\\x (STARTS WITH x '12')))"
    );
    assert_eq!(rendered("f((x) + 1)"), "f((+ x 1))");
}

#[test]
fn casts() {
    assert_eq!(rendered("CAST(x AS INT64)"), "(CAST x INT64)");
    assert_eq!(
        rendered("cast(x AS STRUCT(a INT64, b STRING[]))"),
        "(CAST x STRUCT(a INT64, b STRING[]))"
    );
    assert_eq!(rendered("CAST(id, \"INT64\")"), "(CAST id INT64)");
    assert_eq!(
        rendered("cast([1,2,3], 'INT32[]')"),
        "(CAST [1, 2, 3] INT32[])"
    );
}

#[test]
fn case_expressions() {
    let ExprKind::Case {
        operand,
        whens,
        otherwise,
    } = expr("CASE WHEN a < 1 THEN 'x' END").kind
    else {
        panic!("not a CASE");
    };
    assert!(operand.is_none() && otherwise.is_none());
    assert_eq!(render(&whens[0].0), "(< a 1)");
    let ExprKind::Case {
        operand,
        whens,
        otherwise,
    } = expr("CASE n.x WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'c' END").kind
    else {
        panic!("not a CASE");
    };
    assert_eq!(render(&operand.expect("operand")), "(. n x)");
    assert_eq!(whens.len(), 2);
    assert_eq!(render(&otherwise.expect("else")), "'c'");
}

#[test]
fn subqueries() {
    let ExprKind::Exists(subquery) =
        expr("EXISTS { MATCH (a)-[:Follows*3..3]->(b:User) WHERE EXISTS {MATCH (b)-->(c)} }").kind
    else {
        panic!("not EXISTS");
    };
    assert_eq!(subquery.patterns.len(), 1);
    let inner = subquery.where_clause.expect("WHERE");
    assert!(matches!(inner.kind, ExprKind::Exists(_)));
    let ExprKind::CountSubquery(subquery) = expr("COUNT { MATCH (a)-[]->(b) }").kind else {
        panic!("not COUNT");
    };
    assert!(subquery.where_clause.is_none());
}

#[test]
fn pattern_predicates_read_as_exists() {
    let ExprKind::Unary(_, operand) = expr("NOT (n1)-[]->()").kind else {
        panic!("not NOT");
    };
    let ExprKind::Exists(subquery) = operand.kind else {
        panic!("not a pattern predicate");
    };
    assert_eq!(subquery.patterns[0].hops.len(), 1);
    assert_eq!(rendered("(a) - 1"), "(- a 1)");
    assert_eq!(rendered("(a) < -1"), "(< a (- 1))");
    assert_eq!(rendered("(a)--1"), "(- a (- 1))");
    assert_eq!(rendered("a<-1"), "(< a (- 1))");
    assert_eq!(rendered("a<--1"), "(< a (- (- 1)))");
}

#[test]
fn comprehensions_and_quantifiers() {
    let ExprKind::ListComprehension {
        variable,
        list,
        where_clause,
        map,
    } = expr("[x IN l WHERE x > 1 | x * 2]").kind
    else {
        panic!("not a comprehension");
    };
    assert_eq!(variable, "x");
    assert_eq!(render(&list), "l");
    assert_eq!(render(&where_clause.expect("WHERE")), "(> x 1)");
    assert_eq!(render(&map.expect("map")), "(* x 2)");
    let ExprKind::Quantifier {
        kind, predicate, ..
    } = expr("all(x IN [1, 2] WHERE x > 0)").kind
    else {
        panic!("not a quantifier");
    };
    assert_eq!(
        (kind, render(&predicate)),
        (Quantifier::All, "(> x 0)".to_string())
    );
    assert!(matches!(
        expr("none(y IN l WHERE y)").kind,
        ExprKind::Quantifier { .. }
    ));
    assert_eq!(rendered("any(l)"), "any(l)");
}

#[test]
fn keywords_as_names() {
    assert_eq!(
        rendered("n.order + n.desc + n.limit"),
        "(+ (+ (. n order) (. n desc)) (. n limit))"
    );
    assert_eq!(rendered("count"), "count");
    assert_eq!(rendered("`order`"), "order");
}
