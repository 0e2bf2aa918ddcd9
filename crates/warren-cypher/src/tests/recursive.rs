//! The recursive part of relationship patterns: kinds, bounds as written, filters, projections.

use super::{error_message, patterns, render};
use crate::ast::{RecursiveKind, RecursiveSpec};

fn spec(detail: &str) -> RecursiveSpec {
    let mut parts = patterns(&format!("(a)-[{detail}]->(b)"));
    let (rel, _) = parts.remove(0).hops.remove(0);
    rel.recursive
        .unwrap_or_else(|| panic!("{detail}: not recursive"))
}

fn bounds(detail: &str) -> (Option<i64>, Option<i64>, bool) {
    let spec = spec(detail);
    (spec.lower, spec.upper, spec.has_range)
}

#[test]
fn bounds_are_recorded_as_written() {
    assert_eq!(bounds("*"), (None, None, false));
    assert_eq!(bounds("*2"), (Some(2), Some(2), false));
    assert_eq!(bounds("*2..3"), (Some(2), Some(3), true));
    assert_eq!(bounds("*..3"), (None, Some(3), true));
    assert_eq!(bounds("*2.."), (Some(2), None, true));
    assert_eq!(bounds("*.."), (None, None, true));
    assert_eq!(bounds("*0..0"), (Some(0), Some(0), true));
    assert_eq!(bounds("r:knows *1..2"), (Some(1), Some(2), true));
    assert_eq!(bounds("e:knows* 1 .. 2"), (Some(1), Some(2), true));
}

#[test]
fn kinds() {
    assert_eq!(spec("* SHORTEST 1..30").kind, RecursiveKind::Shortest);
    assert_eq!(spec("* ALL SHORTEST 1..5").kind, RecursiveKind::AllShortest);
    assert_eq!(spec("* TRAIL 2..3").kind, RecursiveKind::Trail);
    assert_eq!(spec("* ACYCLIC").kind, RecursiveKind::Acyclic);
    assert_eq!(spec("* WALK").kind, RecursiveKind::Walk);
    assert_eq!(spec("*").kind, RecursiveKind::Default);
    assert_eq!(
        spec("* WSHORTEST(weight)").kind,
        RecursiveKind::WeightedShortest("weight".into())
    );
    assert_eq!(
        spec("e* all wshortest(score)").kind,
        RecursiveKind::AllWeightedShortest("score".into())
    );
    assert_eq!(bounds("* SHORTEST 1..30"), (Some(1), Some(30), true));
}

#[test]
fn filters() {
    let filter = spec("* 1..2 (r, n | WHERE r.x > 1 AND n.y < 2)")
        .filter
        .expect("filter");
    assert_eq!(filter.rel_variable.as_deref(), Some("r"));
    assert_eq!(filter.node_variable.as_deref(), Some("n"));
    assert_eq!(
        render(&filter.where_clause.expect("WHERE")),
        "(AND (> (. r x) 1) (< (. n y) 2))"
    );
    assert!(filter.rel_projection.is_none() && filter.node_projection.is_none());

    let filter = spec("*2..2 (r, _ | WHERE offset(id(r)) > 0)")
        .filter
        .expect("filter");
    assert_eq!(
        (filter.rel_variable.as_deref(), filter.node_variable),
        (Some("r"), None)
    );

    let filter = spec("* (r,n | WHERE true)").filter.expect("filter");
    assert!(filter.where_clause.is_some());
    let filter = spec("*1..2 (r, n)").filter.expect("filter");
    assert!(filter.where_clause.is_none());
}

#[test]
fn projection_lists() {
    let spec = spec("*1..2 (r, n | WHERE r.x | {r.meetTime}, {n.ID, n.fName})");
    let filter = spec.filter.expect("filter");
    let rels = filter.rel_projection.expect("rel projection");
    let nodes = filter.node_projection.expect("node projection");
    assert_eq!(
        rels.iter().map(render).collect::<Vec<_>>(),
        ["(. r meetTime)"]
    );
    assert_eq!(
        nodes.iter().map(render).collect::<Vec<_>>(),
        ["(. n ID)", "(. n fName)"]
    );

    let filter = self::spec("*1..2 (r, n | {r.location, r.times}, {n.fName})")
        .filter
        .expect("f");
    assert!(filter.where_clause.is_none());
    assert_eq!(filter.rel_projection.map(|p| p.len()), Some(2));

    let filter = self::spec("* (r, n | WHERE n.x = 1 | {}, {})")
        .filter
        .expect("filter");
    assert_eq!(filter.rel_projection, Some(vec![]));
    assert_eq!(filter.node_projection, Some(vec![]));
}

#[test]
fn bar_in_a_filter_is_not_bitwise_or() {
    let message = error_message("MATCH (a)-[* (r, n | WHERE r.x | 1 = 1 | {}, {})]->(b) RETURN a");
    assert!(
        message.contains("expected '{' and the properties to keep"),
        "{message}"
    );
    let filter = spec("* (r, n | WHERE (r.x | 1) = 1)")
        .filter
        .expect("filter");
    assert_eq!(
        render(&filter.where_clause.expect("WHERE")),
        "(= (| (. r x) 1) 1)"
    );
}

#[test]
fn property_map_after_the_range() {
    let mut parts = patterns("(a)-[e:knows*1..2 {date: date(\"2021-06-30\")}]->(b)");
    let (rel, _) = parts.remove(0).hops.remove(0);
    assert_eq!(rel.properties[0].0, "date");
    assert!(rel.recursive.is_some());
    let mut parts = patterns("(a)-[:WORKED_WITH* {year: 1988}]->(b)");
    let (rel, _) = parts.remove(0).hops.remove(0);
    assert_eq!((rel.labels.len(), rel.properties.len()), (1, 1));
}

#[test]
fn nested_exists_in_a_filter() {
    let text = "MATCH (a:User)-[e:Follows* (r, n | WHERE EXISTS {MATCH (n)-[:LivesIn]->(:City \
                {name: \"Waterloo\"})})]->(b:User) RETURN b.name";
    super::statement(text);
}

#[test]
fn negative_and_malformed_bounds_are_errors() {
    let message = error_message("MATCH (a)-[:LIKES*-2]->(c) RETURN c");
    assert!(
        message.starts_with("Invalid input <MATCH (a)-[:LIKES*->:"),
        "{message}"
    );
    let message = error_message("MATCH (a)-[:LIKES..]->(c) RETURN c");
    assert!(
        message.starts_with("Invalid input <MATCH (a)-[:LIKES..>:"),
        "{message}"
    );
    error_message("MATCH (a)-[* ALL 1..2]->(c) RETURN c");
    error_message("MATCH (a)-[* WSHORTEST]->(c) RETURN c");
    error_message("MATCH (a)-[*1..99999999999999999999]->(c) RETURN c");
}
