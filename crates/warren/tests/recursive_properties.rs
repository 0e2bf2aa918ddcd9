//! Property tests: every recursive mode (walks, TRAIL, ACYCLIC, SHORTEST, ALL SHORTEST, weighted
//! SHORTEST), every direction, bounds including 0, recursive filters, path and counting output,
//! on random small graphs with self loops, parallel edges, cycles and isolated nodes, compared
//! with a brute-force reference that enumerates every walk. Each graph runs under several engine
//! configurations (1, 2 and 8 threads, several k, tiny morsels, each optimization on and off).
//! Each graph is stored in one of several layouts: all in the delta of committed writes, folded
//! by a checkpoint, or partly folded with more rels, nodes and deletions in the delta (rels and
//! nodes inserted and deleted again leave tombstones that no answer may show).

use std::collections::BTreeMap;

use proptest::prelude::*;
use warren::{Connection, Database, Value};

/// A random graph: `nodes` nodes with IDs 0..nodes, rels (from, to, weight) in creation order.
#[derive(Clone, Debug)]
struct Graph {
    nodes: u32,
    rels: Vec<(u32, u32, i64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Right,
    Left,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Walk,
    Trail,
    Acyclic,
    Shortest,
    AllShortest,
}

/// A walk: (destination, rel ids in order, intermediate node ids).
type Walk = (u32, Vec<usize>, Vec<u32>);

/// Filters every query may carry: rels with weight > `min_weight`, intermediate nodes != `banned`.
#[derive(Clone, Copy, Debug)]
struct Filter {
    min_weight: Option<i64>,
    banned: Option<u32>,
}

impl Graph {
    /// (neighbour, rel id) steps from `node` in `direction`, in rel order (forward before backward).
    fn steps(&self, node: u32, direction: Direction) -> Vec<(u32, usize)> {
        let mut out = Vec::new();
        if direction != Direction::Left {
            out.extend(
                self.rels
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.0 == node)
                    .map(|(i, r)| (r.1, i)),
            );
        }
        if direction != Direction::Right {
            out.extend(
                self.rels
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.1 == node)
                    .map(|(i, r)| (r.0, i)),
            );
        }
        out
    }

    /// Every walk of `lower..=upper` hops from `source` passing the filter, by exhaustive search.
    fn walks(
        &self,
        source: u32,
        lower: u32,
        upper: u32,
        direction: Direction,
        filter: Filter,
    ) -> Vec<Walk> {
        let mut out = Vec::new();
        let mut nodes = vec![source];
        let mut rels = Vec::new();
        self.extend(
            &mut nodes, &mut rels, lower, upper, direction, filter, &mut out,
        );
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn extend(
        &self,
        nodes: &mut Vec<u32>,
        rels: &mut Vec<usize>,
        lower: u32,
        upper: u32,
        direction: Direction,
        filter: Filter,
        out: &mut Vec<Walk>,
    ) {
        let depth = rels.len() as u32;
        let last = *nodes.last().expect("non-empty");
        if depth >= lower {
            let intermediate = if nodes.len() > 2 {
                nodes[1..nodes.len() - 1].to_vec()
            } else {
                Vec::new()
            };
            out.push((last, rels.clone(), intermediate));
        }
        if depth == upper || (depth > 0 && filter.banned == Some(last)) {
            return;
        }
        for (next, rel) in self.steps(last, direction) {
            if filter.min_weight.is_some_and(|w| self.rels[rel].2 <= w) {
                continue;
            }
            nodes.push(next);
            rels.push(rel);
            self.extend(nodes, rels, lower, upper, direction, filter, out);
            nodes.pop();
            rels.pop();
        }
    }
}

fn is_trail(walk: &Walk) -> bool {
    let mut rels = walk.1.clone();
    rels.sort_unstable();
    rels.windows(2).all(|w| w[0] != w[1])
}

fn is_acyclic(walk: &Walk) -> bool {
    let mut nodes = walk.2.clone();
    nodes.sort_unstable();
    nodes.windows(2).all(|w| w[0] != w[1])
}

/// The reference answer as sorted rows `destination|[rel ids]`.
fn reference(
    graph: &Graph,
    source: u32,
    kind: Kind,
    lower: u32,
    upper: u32,
    direction: Direction,
    filter: Filter,
) -> Vec<String> {
    let walks = graph.walks(source, lower, upper, direction, filter);
    let selected: Vec<Walk> = match kind {
        Kind::Walk => walks,
        Kind::Trail => walks.into_iter().filter(is_trail).collect(),
        Kind::Acyclic => walks.into_iter().filter(is_acyclic).collect(),
        Kind::Shortest | Kind::AllShortest => {
            let mut shortest: BTreeMap<u32, usize> = BTreeMap::new();
            for walk in walks.iter().filter(|w| w.0 != source) {
                let entry = shortest.entry(walk.0).or_insert(usize::MAX);
                *entry = (*entry).min(walk.1.len());
            }
            walks
                .into_iter()
                .filter(|w| w.0 != source && shortest.get(&w.0) == Some(&w.1.len()))
                .collect()
        }
    };
    let mut rows: Vec<String> = selected
        .iter()
        .map(|(d, rels, _)| format!("{d}|{rels:?}").replace(' ', ""))
        .collect();
    rows.sort();
    rows
}

/// How a graph's rels end up stored: the delta of committed writes over the CSR, the CSR
/// itself (after a checkpoint), or a mix with tombstones.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Every rel committed after the last checkpoint: read through the delta.
    Delta,
    /// Every rel folded into the CSR by a checkpoint.
    Folded,
    /// The first `split` rels folded, the rest in the delta; rels and a node inserted and
    /// deleted again before (`junk_folded`) or after the checkpoint.
    Mixed { split: usize, junk_folded: bool },
}

fn load(graph: &Graph, layout: Layout) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM P TO P, eid INT64, w INT64)")
        .unwrap();
    let nodes: Vec<String> = (0..graph.nodes)
        .map(|i| format!("(:P {{ID: {i}}})"))
        .collect();
    conn.query(&format!("CREATE {}", nodes.join(", "))).unwrap();
    let rels: Vec<(usize, &(u32, u32, i64))> = graph.rels.iter().enumerate().collect();
    match layout {
        Layout::Delta => create_rels(&mut conn, &rels),
        Layout::Folded => {
            create_rels(&mut conn, &rels);
            conn.query("CHECKPOINT").unwrap();
        }
        Layout::Mixed { split, junk_folded } => {
            let split = split.min(rels.len());
            create_rels(&mut conn, &rels[..split]);
            if junk_folded {
                add_junk(&mut conn, graph);
                conn.query("CHECKPOINT").unwrap();
                create_rels(&mut conn, &rels[split..]);
                delete_junk(&mut conn);
            } else {
                conn.query("CHECKPOINT").unwrap();
                add_junk(&mut conn, graph);
                create_rels(&mut conn, &rels[split..]);
                delete_junk(&mut conn);
            }
        }
    }
    conn
}

fn create_rels(conn: &mut Connection, rels: &[(usize, &(u32, u32, i64))]) {
    if rels.is_empty() {
        return;
    }
    let rels: Vec<String> = rels
        .iter()
        .map(|(i, (f, t, w))| format!("[{f},{t},{i},{w}]"))
        .collect();
    conn.query(&format!(
        "UNWIND [{}] AS r MATCH (a:P {{ID: r[1]}}), (b:P {{ID: r[2]}}) CREATE (a)-[:E {{eid: r[3], w: r[4]}}]->(b)",
        rels.join(",")
    ))
    .unwrap();
}

/// Rels (eid >= 1000) between the graph's nodes and a node (ID 100) linked both ways.
fn add_junk(conn: &mut Connection, graph: &Graph) {
    conn.query("CREATE (:P {ID: 100})").unwrap();
    for node in 0..graph.nodes {
        conn.query(&format!(
            "MATCH (a:P {{ID: {node}}}), (j:P {{ID: 100}}) CREATE (a)-[:E {{eid: {}, w: 9}}]->(j), (j)-[:E {{eid: {}, w: 9}}]->(a), (a)-[:E {{eid: {}, w: 9}}]->(a)",
            1000 + 3 * node,
            1001 + 3 * node,
            1002 + 3 * node
        ))
        .unwrap();
    }
}

fn delete_junk(conn: &mut Connection) {
    conn.query(
        "MATCH (a:P)-[r:E]->(b:P) WHERE r.eid >= 1000 AND a.ID <> 100 AND b.ID <> 100 DELETE r",
    )
    .unwrap();
    conn.query("MATCH (j:P {ID: 100}) DETACH DELETE j").unwrap();
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Delta),
        Just(Layout::Folded),
        (0usize..14, proptest::bool::ANY)
            .prop_map(|(split, junk_folded)| Layout::Mixed { split, junk_folded }),
    ]
}

fn pattern(kind: Kind, lower: u32, upper: u32, direction: Direction, filter: Filter) -> String {
    let kind = match kind {
        Kind::Walk => "",
        Kind::Trail => " TRAIL",
        Kind::Acyclic => " ACYCLIC",
        Kind::Shortest => " SHORTEST",
        Kind::AllShortest => " ALL SHORTEST",
    };
    let mut predicates = Vec::new();
    if let Some(w) = filter.min_weight {
        predicates.push(format!("r.w > {w}"));
    }
    if let Some(b) = filter.banned {
        predicates.push(format!("n.ID <> {b}"));
    }
    let filter = if predicates.is_empty() {
        String::new()
    } else {
        format!(" (r, n | WHERE {})", predicates.join(" AND "))
    };
    let rel = format!("[e:E*{kind} {lower}..{upper}{filter}]");
    match direction {
        Direction::Right => format!("(a:P)-{rel}->(b:P)"),
        Direction::Left => format!("(a:P)<-{rel}-(b:P)"),
        Direction::Both => format!("(a:P)-{rel}-(b:P)"),
    }
}

/// Engine configurations every property runs under: 1, 2 and 8 threads; k fixed and automatic;
/// morsels of one or two nodes, so that even these small graphs are cut into many morsels that
/// threads race on; direction-optimizing and top-down BFS; bit-parallel multi-source BFS and
/// walk counting by meeting in the middle, on and off.
const CONFIGS: [[(&str, &str); 8]; 6] = [
    [
        ("threads", "1"),
        ("k", "auto"),
        ("morsel_size", "2048"),
        ("bfs_direction", "auto"),
        ("multi_source_bfs", "true"),
        ("walk_count_meet", "true"),
        ("varlen_paths", "dfs"),
        ("prefetch_distance", "16"),
    ],
    [
        ("threads", "2"),
        ("k", "auto"),
        ("morsel_size", "1"),
        ("bfs_direction", "auto"),
        ("multi_source_bfs", "true"),
        ("walk_count_meet", "true"),
        ("varlen_paths", "levels"),
        ("prefetch_distance", "0"),
    ],
    [
        ("threads", "8"),
        ("k", "1"),
        ("morsel_size", "1"),
        ("bfs_direction", "auto"),
        ("multi_source_bfs", "true"),
        ("walk_count_meet", "true"),
        ("varlen_paths", "dfs"),
        ("prefetch_distance", "1"),
    ],
    [
        ("threads", "8"),
        ("k", "3"),
        ("morsel_size", "2"),
        ("bfs_direction", "top_down"),
        ("multi_source_bfs", "false"),
        ("walk_count_meet", "false"),
        ("varlen_paths", "levels"),
        ("prefetch_distance", "3"),
    ],
    [
        ("threads", "2"),
        ("k", "2"),
        ("morsel_size", "1"),
        ("bfs_direction", "auto"),
        ("multi_source_bfs", "false"),
        ("walk_count_meet", "true"),
        ("varlen_paths", "dfs"),
        ("prefetch_distance", "16"),
    ],
    [
        ("threads", "8"),
        ("k", "auto"),
        ("morsel_size", "1"),
        ("bfs_direction", "top_down"),
        ("multi_source_bfs", "true"),
        ("walk_count_meet", "false"),
        ("varlen_paths", "levels"),
        ("prefetch_distance", "64"),
    ],
];

fn configure(conn: &mut Connection, config: &[(&str, &str)]) -> String {
    for (name, value) in config {
        let value = match *value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            text => text
                .parse::<i64>()
                .map(Value::Int64)
                .unwrap_or_else(|_| Value::string(text)),
        };
        conn.set(name, value).unwrap();
    }
    format!("{config:?}")
}

fn rows(conn: &mut Connection, query: &str) -> Vec<String> {
    let mut result = conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows = result
        .to_strings()
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    rows.sort();
    rows
}

fn graphs() -> impl Strategy<Value = Graph> {
    (1u32..7).prop_flat_map(|nodes| {
        let rel = (0..nodes, 0..nodes, 0i64..4);
        proptest::collection::vec(rel, 0..14).prop_map(move |rels| Graph { nodes, rels })
    })
}

fn directions() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::Right),
        Just(Direction::Left),
        Just(Direction::Both)
    ]
}

fn kinds() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Walk),
        Just(Kind::Trail),
        Just(Kind::Acyclic),
        Just(Kind::Shortest),
        Just(Kind::AllShortest)
    ]
}

fn filters() -> impl Strategy<Value = Filter> {
    (proptest::option::of(0i64..3), proptest::option::of(0u32..6))
        .prop_map(|(min_weight, banned)| Filter { min_weight, banned })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Paths and counts of every recursive mode equal the reference, with 1 and 2 threads.
    #[test]
    fn recursive_patterns_match_the_reference(graph in graphs(), kind in kinds(), direction in directions(),
                                              lower in 0u32..3, span in 0u32..3, filter in filters(),
                                              source_pick in 0u32..100, layout in layouts()) {
        let shortest = matches!(kind, Kind::Shortest | Kind::AllShortest);
        let lower = if shortest { 1 } else { lower };
        let upper = (lower + span).max(1);
        let source = source_pick % graph.nodes;
        let expected = reference(&graph, source, kind, lower, upper, direction, filter);
        let mut conn = load(&graph, layout);
        let pattern = pattern(kind, lower, upper, direction, filter);
                for config in &CONFIGS {
            let threads = configure(&mut conn, config);
            let paths = if kind == Kind::Shortest {
                // One path per destination: compare destinations and lengths, and check the path.
                let query = format!("MATCH {pattern} WHERE a.ID = {source} RETURN b.ID, length(e), properties(rels(e), 'eid')");
                let got = rows(&mut conn, &query);
                for row in &got {
                    let fields: Vec<&str> = row.split('|').collect();
                    let prefix = format!("{}|{}", fields[0], fields[2]);
                    prop_assert!(expected.contains(&prefix), "{query}: {row} is not a shortest path");
                }
                got.iter().map(|r| r.rsplit_once('|').unwrap().0.to_string()).collect::<Vec<_>>()
            } else {
                let query = format!("MATCH {pattern} WHERE a.ID = {source} RETURN b.ID, properties(rels(e), 'eid')");
                rows(&mut conn, &query)
            };
            let expected_paths: Vec<String> = if kind == Kind::Shortest {
                let mut seen: BTreeMap<String, usize> = BTreeMap::new();
                for row in &expected {
                    let (dest, rels) = row.split_once('|').unwrap();
                    seen.insert(dest.to_string(), rels.matches(',').count() + usize::from(rels != "[]"));
                }
                let mut rows: Vec<String> = seen.into_iter().map(|(d, l)| format!("{d}|{l}")).collect();
                rows.sort();
                rows
            } else {
                expected.clone()
            };
                        prop_assert_eq!(&paths, &expected_paths, "{} with {}", pattern, threads);

            // Counting mode: overall, per source and per destination.
            let count_query = format!("MATCH {pattern} WHERE a.ID = {source} RETURN count(*)");
            let expected_count = if kind == Kind::Shortest { expected_paths.len() } else { expected.len() };
                        prop_assert_eq!(rows(&mut conn, &count_query), vec![expected_count.to_string()], "{} with {}", count_query, threads);
            let per_destination = format!(
                "MATCH {pattern} WHERE a.ID = {source} RETURN b.ID, count(*), sum(length(e)), min(length(e)), max(length(e))"
            );
            let mut by_destination: BTreeMap<u32, (usize, usize, usize, usize)> = BTreeMap::new();
            let lengths: Vec<(u32, usize)> = if kind == Kind::Shortest {
                expected_paths.iter().map(|r| {
                    let (d, l) = r.split_once('|').unwrap();
                    (d.parse().unwrap(), l.parse().unwrap())
                }).collect()
            } else {
                expected.iter().map(|r| {
                    let (d, rels) = r.split_once('|').unwrap();
                    (d.parse().unwrap(), rels.matches(',').count() + usize::from(rels != "[]"))
                }).collect()
            };
            for (d, l) in lengths {
                let entry = by_destination.entry(d).or_insert((0, 0, usize::MAX, 0));
                entry.0 += 1;
                entry.1 += l;
                entry.2 = entry.2.min(l);
                entry.3 = entry.3.max(l);
            }
            let mut expected_rows: Vec<String> = by_destination
                .iter()
                .map(|(d, (c, s, mn, mx))| format!("{d}|{c}|{s}|{mn}|{mx}"))
                .collect();
            expected_rows.sort();
                        prop_assert_eq!(rows(&mut conn, &per_destination), expected_rows, "{} with {}", per_destination, threads);
        }
    }

    /// Counting grouped by source over every source equals the reference summed per source.
    #[test]
    fn counts_grouped_by_source_match(graph in graphs(), kind in kinds(), direction in directions(),
                                      lower in 0u32..2, span in 0u32..3, layout in layouts()) {
        let shortest = matches!(kind, Kind::Shortest | Kind::AllShortest);
        let lower = if shortest { 1 } else { lower };
        let upper = (lower + span).max(1);
        let filter = Filter { min_weight: None, banned: None };
                let mut expected = Vec::new();
        let length = |rels: &str| rels.matches(',').count() + usize::from(rels != "[]");
        for source in 0..graph.nodes {
            let rows = reference(&graph, source, kind, lower, upper, direction, filter);
            let lengths: Vec<usize> = if kind == Kind::Shortest {
                // One path per destination, of the shortest length.
                let mut best: BTreeMap<&str, usize> = BTreeMap::new();
                for row in &rows {
                    let (dest, rels) = row.split_once('|').unwrap();
                    let entry = best.entry(dest).or_insert(usize::MAX);
                    *entry = (*entry).min(length(rels));
                }
                best.into_values().collect()
            } else {
                rows.iter().map(|r| length(r.split_once('|').unwrap().1)).collect()
            };
            if !lengths.is_empty() {
                let sum: usize = lengths.iter().sum();
                expected.push(format!("{source}|{}|{sum}", lengths.len()));
            }
        }
        expected.sort();
        let mut conn = load(&graph, layout);
        let query = format!("MATCH {} RETURN a.ID, count(*), sum(length(e))", pattern(kind, lower, upper, direction, filter));
        for config in &CONFIGS {
            let threads = configure(&mut conn, config);
            prop_assert_eq!(rows(&mut conn, &query), expected.clone(), "{} with {}", query, threads);
        }
    }

    /// Weighted shortest paths: the cost to every destination equals Dijkstra's on the reference.
    #[test]
    fn weighted_shortest_costs_match(graph in graphs(), direction in directions(), source_pick in 0u32..100, layout in layouts()) {
        let source = source_pick % graph.nodes;
        let walks = graph.walks(source, 1, graph.nodes.max(1), direction, Filter { min_weight: None, banned: None });
        let mut best: BTreeMap<u32, i64> = BTreeMap::new();
        for (dest, rels, _) in walks.iter().filter(|w| w.0 != source) {
            let cost: i64 = rels.iter().map(|&r| graph.rels[r].2).sum();
            let entry = best.entry(*dest).or_insert(i64::MAX);
            *entry = (*entry).min(cost);
        }
        let mut expected: Vec<String> = best.iter().map(|(d, c)| format!("{d}|{c}.000000")).collect();
        expected.sort();
        let mut conn = load(&graph, layout);
        let rel = "[e:E* WSHORTEST(w)]";
        let pattern = match direction {
            Direction::Right => format!("(a:P)-{rel}->(b:P)"),
            Direction::Left => format!("(a:P)<-{rel}-(b:P)"),
            Direction::Both => format!("(a:P)-{rel}-(b:P)"),
        };
                let query = format!("MATCH {pattern} WHERE a.ID = {source} RETURN b.ID, cost(e)");
        for config in &CONFIGS {
            let threads = configure(&mut conn, config);
            prop_assert_eq!(rows(&mut conn, &query), expected.clone(), "{} with {}", query, threads);
        }
    }

    /// The parallel weighted search (2 and 8 threads) picks exactly the paths of Dijkstra (one
    /// thread): the same tied path for WSHORTEST, the same set for ALL WSHORTEST, zero-weight
    /// rels and parallel rels included.
    #[test]
    fn weighted_paths_are_the_same_in_parallel(graph in graphs(), direction in directions(), source_pick in 0u32..100, all in proptest::bool::ANY, layout in layouts()) {
        let source = source_pick % graph.nodes;
        let mode = if all { "ALL WSHORTEST" } else { "WSHORTEST" };
        let rel = format!("[e:E* {mode}(w)]");
        let pattern = match direction {
            Direction::Right => format!("(a:P)-{rel}->(b:P)"),
            Direction::Left => format!("(a:P)<-{rel}-(b:P)"),
            Direction::Both => format!("(a:P)-{rel}-(b:P)"),
        };
        let query = format!("MATCH {pattern} WHERE a.ID = {source} RETURN b.ID, cost(e), properties(rels(e), 'eid')");
        let mut conn = load(&graph, layout);
        configure(&mut conn, &[("threads", "1")]);
        let sequential = rows(&mut conn, &query);
        for threads in ["2", "8"] {
            configure(&mut conn, &[("threads", threads), ("morsel_size", "1")]);
            prop_assert_eq!(rows(&mut conn, &query), sequential.clone(), "{} with {} threads", query, threads);
        }
    }
}

/// An in-memory database with node table `P` (IDs `0..n`) and rel table `E(FROM P TO P)`,
/// no rels yet.
fn numbered_nodes(n: i64) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM P TO P)").unwrap();
    conn.query(&format!(
        "UNWIND range(0, {}) AS i CREATE (:P {{ID: i}})",
        n - 1
    ))
    .unwrap();
    conn
}

/// Walk counts over more sources than one batch of the recursive join: the shared backward
/// levels (and a last level restricted to one batch's frontier) must not leak into the next
/// batch. Node 0 links to 0..=H and every other node to H, as in Kùzu's large-list test: level
/// n of walks from all sources holds H*(n+1)+1 walks.
#[test]
fn walk_counts_are_exact_across_batches_of_sources() {
    const HUB: i64 = 3000;
    let mut conn = numbered_nodes(2 * HUB + 1);
    conn.query(&format!(
        "MATCH (a:P), (b:P) WHERE a.ID = 0 AND b.ID <= {HUB} CREATE (a)-[:E]->(b)"
    ))
    .unwrap();
    conn.query(&format!(
        "MATCH (a:P), (b:P) WHERE a.ID > 0 AND a.ID <= {HUB} AND b.ID = {HUB} CREATE (a)-[:E]->(b)"
    ))
    .unwrap();
    let expected =
        |lower: i64, upper: i64| -> i64 { (lower..=upper).map(|n| HUB * (n + 1) + 1).sum() };
    for (lower, upper) in [(1, 1), (2, 4), (5, 9)] {
        for meet in ["true", "false"] {
            for threads in ["1", "2"] {
                conn.query(&format!("CALL walk_count_meet={meet}")).unwrap();
                conn.query(&format!("CALL threads={threads}")).unwrap();
                let query = format!("MATCH (a:P)-[:E*{lower}..{upper}]->(b:P) RETURN count(*)");
                assert_eq!(
                    rows(&mut conn, &query),
                    vec![expected(lower, upper).to_string()],
                    "{query} with walk_count_meet={meet}, threads={threads}"
                );
            }
        }
    }
}

/// A destination filter of integer comparisons over more nodes than one prefilter chunk (the
/// destination mask skips rows failing its first comparison 1,024 at a time, on stored
/// columns): on the chain 0 -> 1 -> ... -> 2999, walks of 1..2 hops from the sources
/// `a.ID < 2000` end at `b` once per hop count `h` with `0 <= b - h < 2000`, whichever chunk `b`
/// falls in. (With the sources filtered too, the planner walks from them and masks the
/// destinations; with one side filtered it would walk from that side instead.)
#[test]
fn destination_filters_count_across_prefilter_chunks() {
    const NODES: i64 = 3000;
    const SOURCES_BELOW: i64 = 2000;
    let mut conn = numbered_nodes(NODES);
    conn.query(&format!(
        "MATCH (a:P), (b:P) WHERE a.ID < {} AND b.ID = a.ID + 1 CREATE (a)-[:E]->(b)",
        NODES - 1
    ))
    .unwrap();
    // Prefilters read stored columns only: the rows leave the delta.
    conn.query("CHECKPOINT").unwrap();
    for (low, high) in [(1023, 2049), (1024, 1024), (0, 2999), (2047, 2048), (1, 3)] {
        let ends = |b: i64| {
            (1..=2)
                .filter(|h| (0..SOURCES_BELOW).contains(&(b - h)))
                .count()
        };
        let expected: usize = (low..=high).map(ends).sum();
        let query = format!(
            "MATCH (a:P)-[:E*1..2]->(b:P) WHERE a.ID < {SOURCES_BELOW} \
             AND b.ID >= {low} AND b.ID <= {high} RETURN count(*)"
        );
        assert_count_on_one_and_two_threads(&mut conn, &query, expected);
    }
}

/// Asserts that `query` counts `expected` with 1 and with 2 threads.
fn assert_count_on_one_and_two_threads(conn: &mut Connection, query: &str, expected: usize) {
    for threads in ["1", "2"] {
        conn.query(&format!("CALL threads={threads}")).unwrap();
        assert_eq!(
            rows(conn, query),
            vec![expected.to_string()],
            "{query} with threads={threads}"
        );
    }
}

/// The same kind of destination mask over a table past a million rows, which the mask builds
/// on the query's threads (morsels of rows) when its prefilters decide the filter: the counts
/// with 1 and 2 threads equal those derived by hand. Edges form a chain over the last 30 nodes
/// only; walks of 1..2 hops from `a.ID >= FIRST_SOURCE` end at `b` once per hop count `h` with
/// `FIRST_SOURCE <= b - h <= LAST - 1`.
#[test]
fn destination_masks_past_a_million_rows_count_alike_on_any_threads() {
    const NODES: i64 = 1_048_600;
    const LAST: i64 = NODES - 1;
    const FIRST_SOURCE: i64 = NODES - 25;
    let mut conn = numbered_nodes(NODES);
    conn.query(&format!(
        "MATCH (a:P), (b:P) WHERE a.ID >= {} AND a.ID < {LAST} AND b.ID = a.ID + 1 \
         CREATE (a)-[:E]->(b)",
        NODES - 30
    ))
    .unwrap();
    conn.query("CHECKPOINT").unwrap();
    for low in [LAST - 9, FIRST_SOURCE + 2, LAST, 0] {
        let ends = |b: i64| {
            (1..=2)
                .filter(|h| (FIRST_SOURCE..LAST).contains(&(b - h)))
                .count()
        };
        let expected: usize = (low..=LAST).map(ends).sum();
        let query = format!(
            "MATCH (a:P)-[:E*1..2]->(b:P) WHERE a.ID >= {FIRST_SOURCE} AND b.ID >= {low} \
             RETURN count(*)"
        );
        assert_count_on_one_and_two_threads(&mut conn, &query, expected);
    }
}

/// SHORTEST from a hub over a graph of several bitmap words, under every configuration: with
/// morsels of one node a bottom-up level is cut into morsels of one 64-node word each, which
/// threads race on, and the unvisited bitmap must skip nodes without in-edges (every fourth node
/// here) and nodes found by earlier levels. Distances are checked against a plain BFS (the
/// counting form of the query: bottom-up levels serve counts, not paths).
#[test]
fn shortest_over_many_bottom_up_morsels_matches_a_plain_bfs() {
    const NODES: u32 = 450;
    let mut rels = Vec::new();
    let mut state: u64 = 12345;
    let mut random = |below: u32| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % u64::from(below)) as u32
    };
    let target = |v: u32| if v % 4 == 3 { v - 1 } else { v };
    for to in 1..120 {
        rels.push((0, target(to), 1));
    }
    for _ in 0..900 {
        let (from, to) = (random(NODES), target(random(NODES)));
        rels.push((from, to, 1));
    }
    let graph = Graph { nodes: NODES, rels };
    let mut conn = load(&graph, Layout::Folded);
    for source in [0, 1, 200] {
        let mut dist = vec![u32::MAX; NODES as usize];
        let mut frontier = vec![source];
        dist[source as usize] = 0;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                for &(from, to, _) in &graph.rels {
                    if from == u && dist[to as usize] == u32::MAX {
                        dist[to as usize] = dist[u as usize] + 1;
                        next.push(to);
                    }
                }
            }
            frontier = next;
        }
        let mut expected: Vec<String> = (0..NODES)
            .filter(|&v| v != source && dist[v as usize] != u32::MAX)
            .map(|v| format!("{v}|1|{}", dist[v as usize]))
            .collect();
        expected.sort();
        for config in &CONFIGS {
            let threads = configure(&mut conn, config);
            let query = format!(
                "MATCH (a:P)-[e:E* SHORTEST 1..30]->(b:P) WHERE a.ID = {source} RETURN b.ID, count(*), sum(length(e))"
            );
            assert_eq!(rows(&mut conn, &query), expected, "{query} with {threads}");
        }
    }
}

/// Many-source SHORTEST counts whose top-down levels are binned (`binned_push`: among the 64
/// sources a hub with 36,000 out-edges, so the first level is scattered into bins and applied
/// bin by bin) give a plain BFS's counts and length sums, with the binned push on and off, on
/// one and two threads, with whole morsels and with morsels of one node (bottom-up morsels of 8
/// nodes, which share their words of unsettled bits). Every fifth node has no in-edge.
#[test]
fn many_source_shortest_with_binned_levels_matches_a_plain_bfs() {
    const NODES: u32 = 45_001;
    const SPREADS: [(u64, u64); 2] = [(7_919, 13), (104_729, 7)];
    let reachable = |v: u32| v % 5 != 4;
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); NODES as usize];
    out[0].extend((1..NODES).filter(|&v| reachable(v)));
    for (multiplier, offset) in SPREADS {
        for i in 1..NODES {
            let to = ((u64::from(i) * multiplier + offset) % u64::from(NODES)) as u32;
            if reachable(to) {
                out[i as usize].push(to);
            }
        }
    }
    let mut conn = numbered_nodes(i64::from(NODES));
    conn.query(
        "MATCH (a:P), (b:P) WHERE a.ID = 0 AND b.ID > 0 AND b.ID % 5 <> 4 CREATE (a)-[:E]->(b)",
    )
    .unwrap();
    for (multiplier, offset) in SPREADS {
        conn.query(&format!(
            "UNWIND range(1, {}) AS i MATCH (a:P {{ID: i}}), (b:P {{ID: (i * {multiplier} + {offset}) % {NODES}}}) WHERE b.ID % 5 <> 4 CREATE (a)-[:E]->(b)",
            NODES - 1
        ))
        .unwrap();
    }
    conn.query("CHECKPOINT").unwrap();
    let mut expected: Vec<String> = (0..64u32)
        .map(|source| {
            let mut dist = vec![u32::MAX; NODES as usize];
            dist[source as usize] = 0;
            let mut frontier = vec![source];
            let (mut count, mut sum) = (0u64, 0u64);
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for &u in &frontier {
                    for &v in &out[u as usize] {
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u as usize] + 1;
                            count += 1;
                            sum += u64::from(dist[v as usize]);
                            next.push(v);
                        }
                    }
                }
                frontier = next;
            }
            format!("{source}|{count}|{sum}")
        })
        .filter(|row| !row.ends_with("|0|0"))
        .collect();
    expected.sort();
    let query = "MATCH (a:P)-[e:E* SHORTEST 1..30]->(b:P) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(e))";
    for binned in ["true", "false"] {
        for threads in ["1", "2"] {
            for morsel_size in ["2048", "1"] {
                let config = [
                    ("binned_push", binned),
                    ("threads", threads),
                    ("morsel_size", morsel_size),
                    ("multi_source_bfs", "true"),
                ];
                let described = configure(&mut conn, &config);
                assert_eq!(rows(&mut conn, query), expected, "{described}");
            }
        }
    }
}
