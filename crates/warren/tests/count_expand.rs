//! Property tests of factorized counting: aggregations that only count a last hop's rows (and
//! so run as `CountExpand`, summing degrees) answer what the same pattern answers when the
//! aggregate reads a property of the hop's far node or rel (which keeps the rows), on random
//! graphs with two node tables, a rel table of two pairs, self loops and parallel rels, stored
//! in the delta, folded by a checkpoint, or both, with rels deleted in the delta. Counts of a
//! whole table or of a hop from one (`CountAll`, from the live counts) are checked the same
//! way, also after nodes are deleted with their rels.

use proptest::prelude::*;
use warren::{Connection, Database};

/// A random graph: P nodes 0..p, Q nodes 0..q, rels (from P, to, to a Q node?, deleted?).
#[derive(Clone, Debug)]
struct Graph {
    p: u32,
    q: u32,
    rels: Vec<(u32, u32, bool, bool)>,
}

/// How the rels are stored: all in the delta, folded by a checkpoint, or the first `split`
/// folded and the rest in the delta. Deletions always come after the last checkpoint.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Delta,
    Folded,
    Mixed { split: usize },
}

fn load(graph: &Graph, layout: Layout) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))",
        "CREATE NODE TABLE Q(ID INT64, PRIMARY KEY(ID))",
        "CREATE REL TABLE E(FROM P TO P, FROM P TO Q, eid INT64)",
    ] {
        conn.query(statement).unwrap();
    }
    let nodes = |table: &str, count: u32| -> Vec<String> {
        (0..count)
            .map(|i| format!("(:{table} {{ID: {i}}})"))
            .collect()
    };
    let mut all = nodes("P", graph.p);
    all.extend(nodes("Q", graph.q));
    conn.query(&format!("CREATE {}", all.join(", "))).unwrap();
    let split = match layout {
        Layout::Delta => 0,
        Layout::Folded => graph.rels.len(),
        Layout::Mixed { split } => split.min(graph.rels.len()),
    };
    for (eid, rel) in graph.rels.iter().enumerate() {
        create_rel(&mut conn, eid, *rel);
        if eid + 1 == split {
            conn.query("CHECKPOINT").unwrap();
        }
    }
    let deleted: Vec<String> = (0..graph.rels.len())
        .filter(|&eid| graph.rels[eid].3)
        .map(|eid| eid.to_string())
        .collect();
    conn.query(&format!(
        "MATCH ()-[r:E]->() WHERE r.eid IN [{}] DELETE r",
        deleted.join(",")
    ))
    .unwrap();
    conn
}

fn create_rel(conn: &mut Connection, eid: usize, (from, to, to_q, _): (u32, u32, bool, bool)) {
    let table = if to_q { "Q" } else { "P" };
    conn.query(&format!(
        "MATCH (a:P {{ID: {from}}}), (b:{table} {{ID: {to}}}) CREATE (a)-[:E {{eid: {eid}}}]->(b)"
    ))
    .unwrap();
}

fn graphs() -> impl Strategy<Value = Graph> {
    (1u32..6, 1u32..4).prop_flat_map(|(p, q)| {
        let rel = (0..p, 0..p.max(q), any::<bool>(), prop::bool::weighted(0.2));
        proptest::collection::vec(rel, 0..16).prop_map(move |rels| {
            let rels = rels
                .into_iter()
                .map(|(from, to, to_q, deleted)| {
                    let bound = if to_q { q } else { p };
                    (from, to % bound, to_q, deleted)
                })
                .collect();
            Graph { p, q, rels }
        })
    })
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Delta),
        Just(Layout::Folded),
        (0usize..16).prop_map(|split| Layout::Mixed { split }),
    ]
}

fn rows(conn: &mut Connection, query: &str) -> Vec<String> {
    let mut result = conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows = result
        .to_strings()
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    rows.sort();
    rows
}

fn plan(conn: &mut Connection, query: &str) -> String {
    rows(conn, &format!("EXPLAIN {query}")).join("\n")
}

/// (pattern, counted return items, the reference's return items reading properties).
const CASES: &[(&str, &str, &str)] = &[
    (
        "MATCH (a:P)-[:E]->(b:P)-[:E]->(c:P)",
        "count(*)",
        "count(c.ID)",
    ),
    (
        "MATCH (a:P)-[:E]->(b)-[:E]->(c:Q)",
        "a.ID, count(*)",
        "a.ID, count(c.ID)",
    ),
    (
        "MATCH (a:P)<-[:E]-(b:P)-[:E]-(c)",
        "count(c), count(*)",
        "count(c.ID), count(c.ID)",
    ),
    (
        "MATCH (a:P)-[:E]->(b:P)-[r:E]-(c)",
        "b.ID, count(r), count(a)",
        "b.ID, count(r.eid), count(r.eid)",
    ),
    (
        "MATCH (a:P {ID: 0})-[:E]-(b)-[:E]->(c)",
        "count(*)",
        "count(c.ID)",
    ),
    (
        "MATCH (a:Q)<-[e:E]-(c:P)",
        "a.ID, count(e)",
        "a.ID, count(e.eid)",
    ),
    ("MATCH (a:P)-[e:E]->(c:P)", "count(*)", "count(e.eid)"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn counted_hops_answer_what_the_rows_count(graph in graphs(), layout in layouts()) {
        let mut conn = load(&graph, layout);
        for (pattern, counted, reference) in CASES {
            let counted = format!("{pattern} RETURN {counted}");
            let reference = format!("{pattern} RETURN {reference}");
            let counted_plan = plan(&mut conn, &counted);
            // A hop from an unfiltered scan is counted from the rels' live counts (CountAll).
            prop_assert!(
                counted_plan.contains("CountExpand") || counted_plan.contains("CountAll"),
                "{counted}"
            );
            let reference_plan = plan(&mut conn, &reference);
            prop_assert!(!reference_plan.contains("CountExpand"), "{reference}");
            prop_assert!(!reference_plan.contains("CountAll"), "{reference}");
            prop_assert_eq!(
                rows(&mut conn, &counted),
                rows(&mut conn, &reference),
                "{} over {:?} stored {:?}",
                counted,
                graph,
                layout
            );
        }
    }
}

/// (counted statement, the reference reading properties, which keeps the rows).
const WHOLE_TABLE_CASES: &[(&str, &str)] = &[
    (
        "MATCH (a:P) RETURN count(*)",
        "MATCH (a:P) RETURN count(a.ID)",
    ),
    ("MATCH (a) RETURN count(a)", "MATCH (a) RETURN count(a.ID)"),
    (
        "MATCH (a:P)-[:E]->(c:P) RETURN count(*)",
        "MATCH (a:P)-[e:E]->(c:P) RETURN count(e.eid)",
    ),
    (
        "MATCH (a:P)-[:E]-(c) RETURN count(*)",
        "MATCH (a:P)-[e:E]-(c) RETURN count(e.eid)",
    ),
    (
        "MATCH (a:Q)<-[:E]-(c) RETURN count(*)",
        "MATCH (a:Q)<-[e:E]-(c) RETURN count(e.eid)",
    ),
    (
        "MATCH (a)-[:E]->(c:Q) RETURN count(*)",
        "MATCH (a)-[e:E]->(c:Q) RETURN count(e.eid)",
    ),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn whole_table_counts_answer_what_the_rows_count(
        graph in graphs(),
        layout in layouts(),
        deleted_node in proptest::option::of((0u32..6, any::<bool>())),
    ) {
        let mut conn = load(&graph, layout);
        if let Some((id, in_q)) = deleted_node {
            let table = if in_q { "Q" } else { "P" };
            conn.query(&format!("MATCH (a:{table} {{ID: {id}}}) DETACH DELETE a")).unwrap();
        }
        for (counted, reference) in WHOLE_TABLE_CASES {
            prop_assert!(plan(&mut conn, counted).contains("CountAll"), "{counted}");
            prop_assert!(!plan(&mut conn, reference).contains("CountAll"), "{reference}");
            prop_assert_eq!(
                rows(&mut conn, counted),
                rows(&mut conn, reference),
                "{} over {:?} stored {:?}, node deleted {:?}",
                counted,
                graph,
                layout,
                deleted_node
            );
        }
    }
}

#[test]
fn profile_shows_the_counted_hop_and_its_rows() {
    let graph = Graph {
        p: 3,
        q: 1,
        rels: vec![
            (0, 1, false, false),
            (0, 2, false, false),
            (1, 2, false, false),
            (1, 0, true, false),
            (2, 2, false, false),
            (2, 0, false, true),
        ],
    };
    let mut conn = load(&graph, Layout::Mixed { split: 3 });
    let query = "MATCH (a:P {ID: 0})-[:E]->(b)-[:E]->(c) RETURN count(*)";
    assert_eq!(rows(&mut conn, query), ["3"]);
    let profile = rows(&mut conn, &format!("PROFILE {query}")).join("\n");
    assert!(profile.contains("CountExpand"), "{profile}");
}
