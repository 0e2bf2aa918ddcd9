//! Node and relationship patterns, directions, labels, named paths.

use super::{patterns, render};
use crate::ast::{Direction, PatternPart};

fn single(pattern: &str) -> PatternPart {
    let mut parts = patterns(pattern);
    assert_eq!(parts.len(), 1, "{pattern}");
    parts.remove(0)
}

#[test]
fn node_patterns() {
    let part = single("(v:Label1:Label2 {k: 1 + 1, name: 'x'})");
    assert_eq!(part.start.variable.as_deref(), Some("v"));
    assert_eq!(part.start.labels, ["Label1", "Label2"]);
    assert_eq!(part.start.properties.len(), 2);
    assert_eq!(render(&part.start.properties[0].1), "(+ 1 1)");
    assert_eq!(single("(v:A|B)").start.labels, ["A", "B"]);
    let empty = single("()").start;
    assert!(empty.variable.is_none() && empty.labels.is_empty() && empty.properties.is_empty());
    let anonymous = single("(:L)").start;
    assert_eq!(
        (anonymous.variable, anonymous.labels),
        (None, vec!["L".to_string()])
    );
    assert_eq!(single("(n2 :L5)").start.labels, ["L5"]);
    assert_eq!(single("({ID: 1})").start.properties[0].0, "ID");
    assert_eq!(single("(s:`Single`)").start.labels, ["Single"]);
    assert_eq!(single("(a:order)").start.labels, ["order"]);
}

fn directions(pattern: &str) -> Vec<Direction> {
    single(pattern)
        .hops
        .iter()
        .map(|(rel, _)| rel.direction)
        .collect()
}

#[test]
fn relationship_directions() {
    use Direction::*;
    assert_eq!(directions("(a)-[r:T {k: v}]->(b)"), [Right]);
    assert_eq!(directions("(a)<-[r]-(b)"), [Left]);
    assert_eq!(directions("(a)-[r]-(b)"), [Both]);
    assert_eq!(directions("(a)-->(b)"), [Right]);
    assert_eq!(directions("(a)<--(b)"), [Left]);
    assert_eq!(directions("(a)--(b)"), [Both]);
    assert_eq!(
        directions("(a)-[]->(b)<-[]-(c)-[]-(d)"),
        [Right, Left, Both]
    );
    assert_eq!(directions("(a) - [r] -> (b)"), [Right]);
    assert_eq!(directions("(a)-[r]- >(b)"), [Right]);
}

#[test]
fn relationship_details() {
    let part = single("(a)-[r:T {k: 1}]->(b)");
    let (rel, end) = &part.hops[0];
    assert_eq!(rel.variable.as_deref(), Some("r"));
    assert_eq!(rel.labels, ["T"]);
    assert_eq!(rel.properties[0].0, "k");
    assert!(rel.recursive.is_none());
    assert_eq!(end.variable.as_deref(), Some("b"));
    assert_eq!(single("()-[:a|:b|c]->()").hops[0].0.labels, ["a", "b", "c"]);
    assert_eq!(single("()-[:a|b]-()").hops[0].0.labels, ["a", "b"]);
    let bare = &single("()-[]-()").hops[0].0;
    assert!(bare.variable.is_none() && bare.labels.is_empty());
}

#[test]
fn named_paths_and_several_parts() {
    let part = single("p = (a)-[e*]->(b)");
    assert_eq!(part.path_variable.as_deref(), Some("p"));
    assert_eq!(part.start.variable.as_deref(), Some("a"));
    let parts = patterns("(a), p=(b)-[]->(c), (d)");
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1].path_variable.as_deref(), Some("p"));
}
