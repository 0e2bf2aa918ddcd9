//! The benchmark queries (design §6): their Cypher text, the shape of their answer, and the
//! reference computation of that answer, so that each query carries its own check.

use crate::answer::{Answer, AnswerShape};
use crate::reference::{ReferenceGraph, WalkCount};

/// The hop bound of the shortest-path queries (`1..30`, the default maximum depth).
pub const SHORTEST_HOPS_MAX: u32 = 30;

/// One benchmark query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchQuery {
    /// SHORTEST from every source with `a.ID < sources_below`: per source, reachable nodes
    /// and their distances summed (sp64 with 64).
    ShortestBelow { sources_below: i64 },
    /// SHORTEST from the one source `a.ID = source` (sp1 with 0).
    ShortestFrom { source: i64 },
    /// ALL SHORTEST from `a.ID = source`, `count(*)` (allsp).
    AllShortestFrom { source: i64 },
    /// Walks of 1..hops from `a.ID < sources_below` to `b.ID < destinations_below`; counted,
    /// or returned as `r` and streamed when `paths` (varlen).
    Walks {
        hops: u32,
        sources_below: i64,
        destinations_below: i64,
        paths: bool,
    },
    /// `spread_activation` over Knows from the seeds `a.ID < seeds_below` (activation 1 each),
    /// `hops` hops, decay 0.5, threshold 0.01; per first hop, nodes and activation summed.
    Spread { seeds_below: i64, hops: u32 },
}

/// The spread workload's decay and threshold.
const SPREAD_DECAY: f64 = 0.5;
const SPREAD_THRESHOLD: f64 = 0.01;
/// Activations are multiples of 2^-hops (unit weights, decay 1/2), so their sum times this is
/// an exact integer whatever the summation order (below 2^53).
fn spread_scale(hops: u32) -> i64 {
    1 << hops
}

impl BenchQuery {
    /// The Cypher text.
    pub fn text(&self) -> String {
        match *self {
            BenchQuery::ShortestBelow { sources_below } => {
                shortest_text(&format!("a.ID < {sources_below}"))
            }
            BenchQuery::ShortestFrom { source } => shortest_text(&format!("a.ID = {source}")),
            BenchQuery::AllShortestFrom { source } => format!(
                "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..{SHORTEST_HOPS_MAX}]->(b:Person) \
                 WHERE a.ID = {source} RETURN count(*)"
            ),
            BenchQuery::Walks {
                hops,
                sources_below,
                destinations_below,
                paths,
            } => format!(
                "MATCH (a:Person)-[r:Knows*1..{hops}]->(b:Person) \
                 WHERE a.ID < {sources_below} AND b.ID < {destinations_below} RETURN {}",
                if paths { "r" } else { "count(*)" }
            ),
            BenchQuery::Spread { seeds_below, hops } => format!(
                "MATCH (a:Person) WHERE a.ID < {seeds_below} WITH collect(a) AS seeds \
                 CALL spread_activation('Knows', seeds, decay := {SPREAD_DECAY}, \
                 threshold := {SPREAD_THRESHOLD}, max_hops := {hops}) \
                 RETURN hops, count(*), CAST(sum(activation) * {} AS INT64) ORDER BY hops",
                spread_scale(hops)
            ),
        }
    }

    /// How its rows are read.
    pub fn shape(&self) -> AnswerShape {
        match self {
            BenchQuery::ShortestBelow { .. }
            | BenchQuery::ShortestFrom { .. }
            | BenchQuery::Spread { .. } => AnswerShape::Rows,
            BenchQuery::AllShortestFrom { .. } => AnswerShape::Count,
            BenchQuery::Walks { paths, .. } => {
                if *paths {
                    AnswerShape::Paths
                } else {
                    AnswerShape::Count
                }
            }
        }
    }

    /// What the reference computes, in words, for the report's `check` field.
    pub fn check_description(&self) -> &'static str {
        match self {
            BenchQuery::ShortestBelow { .. } | BenchQuery::ShortestFrom { .. } => {
                "rows (a.ID, count(*), sum(length(p))) equal a single-threaded BFS from each \
                 source over the edge list read with MATCH (a:Person)-[:Knows]->(b:Person)"
            }
            BenchQuery::AllShortestFrom { .. } => {
                "count(*) equals the number of shortest paths summed over destinations, from a \
                 single-threaded BFS with path counting over the edge list"
            }
            BenchQuery::Walks { paths: false, .. } => {
                "count(*) equals a single-threaded forward walk-count DP (per source, per \
                 level) over the edge list"
            }
            BenchQuery::Spread { .. } => {
                "rows (hops, count(*), sum(activation) * 2^hops) equal a single-threaded \
                 level-by-level spread (docs/SEMANTICS.md) over the edge list"
            }
            BenchQuery::Walks { paths: true, .. } => {
                "rows streamed and their rels counted equal the walk count and walk-length sum \
                 of a single-threaded forward walk-count DP over the edge list"
            }
        }
    }

    /// The answer computed by the reference implementation.
    pub fn expected(&self, graph: &ReferenceGraph) -> Result<Answer, String> {
        match *self {
            BenchQuery::ShortestBelow { sources_below } => {
                Ok(shortest_rows(graph, |id| id < sources_below))
            }
            BenchQuery::ShortestFrom { source } => Ok(shortest_rows(graph, |id| id == source)),
            BenchQuery::Spread { seeds_below, hops } => {
                let seeds = graph.indices_where(|id| id < seeds_below);
                let scale = spread_scale(hops) as f64;
                let rows = graph
                    .spread_by_hop(&seeds, SPREAD_DECAY, SPREAD_THRESHOLD, hops)
                    .into_iter()
                    .map(|(hop, nodes, sum)| {
                        vec![i128::from(hop), i128::from(nodes), (sum * scale) as i128]
                    })
                    .collect();
                Ok(Answer::Rows(rows))
            }
            BenchQuery::AllShortestFrom { source } => {
                let Some(index) = graph.index_of(source) else {
                    return Ok(Answer::Count(0));
                };
                let count = graph
                    .shortest_path_count(index, SHORTEST_HOPS_MAX)
                    .ok_or("the shortest-path count overflows 128 bits")?;
                Ok(Answer::Count(to_signed(count)?))
            }
            BenchQuery::Walks {
                hops,
                sources_below,
                destinations_below,
                paths,
            } => {
                let total = walk_total(graph, hops, sources_below, destinations_below)?;
                Ok(if paths {
                    Answer::Paths {
                        paths: total.walks,
                        length_sum: total.length_sum,
                    }
                } else {
                    Answer::Count(to_signed(total.walks)?)
                })
            }
        }
    }
}

fn shortest_text(source_filter: &str) -> String {
    format!(
        "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..{SHORTEST_HOPS_MAX}]->(b:Person) \
         WHERE {source_filter} RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID"
    )
}

/// One row per source with at least one reachable node (a group without matches has no row).
fn shortest_rows(graph: &ReferenceGraph, is_source: impl Fn(i64) -> bool) -> Answer {
    let mut rows = Vec::new();
    for source in graph.indices_where(is_source) {
        let lengths = graph.shortest_lengths(source, SHORTEST_HOPS_MAX);
        if lengths.reached > 0 {
            let id = graph.ids()[source as usize];
            rows.push(vec![
                i128::from(id),
                i128::from(lengths.reached),
                i128::from(lengths.length_sum),
            ]);
        }
    }
    Answer::Rows(rows)
}

fn walk_total(
    graph: &ReferenceGraph,
    hops: u32,
    sources_below: i64,
    destinations_below: i64,
) -> Result<WalkCount, String> {
    let destinations = graph.mask_where(|id| id < destinations_below);
    let mut total = WalkCount::default();
    for source in graph.indices_where(|id| id < sources_below) {
        let count = graph
            .walk_count(source, 1, hops, &destinations)
            .ok_or("the walk count overflows 128 bits")?;
        total.walks = total
            .walks
            .checked_add(count.walks)
            .ok_or("walk count overflow")?;
        total.length_sum = total
            .length_sum
            .checked_add(count.length_sum)
            .ok_or("walk length overflow")?;
    }
    Ok(total)
}

fn to_signed(count: u128) -> Result<i128, String> {
    i128::try_from(count).map_err(|_| format!("count {count} does not fit INT128"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::query_answer;

    const EDGES: [(i64, i64); 7] = [(0, 1), (1, 2), (2, 0), (0, 2), (2, 3), (3, 4), (1, 3)];

    fn graph() -> ReferenceGraph {
        ReferenceGraph::new(&[0, 1, 2, 3, 4, 5], &EDGES).unwrap()
    }

    /// The same graph in Warren.
    fn connection() -> warren::Connection {
        let db = warren::Database::in_memory();
        let mut conn = db.connect();
        conn.query(
            "CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID)); \
             CREATE REL TABLE Knows(FROM Person TO Person)",
        )
        .unwrap();
        for id in 0..6 {
            conn.query(&format!("CREATE (:Person {{ID: {id}}})"))
                .unwrap();
        }
        for (from, to) in EDGES {
            conn.query(&format!(
                "MATCH (a:Person {{ID: {from}}}), (b:Person {{ID: {to}}}) CREATE (a)-[:Knows]->(b)"
            ))
            .unwrap();
        }
        conn
    }

    fn every_query() -> Vec<BenchQuery> {
        vec![
            BenchQuery::ShortestBelow { sources_below: 64 },
            BenchQuery::ShortestFrom { source: 0 },
            BenchQuery::ShortestFrom { source: 5 },
            BenchQuery::AllShortestFrom { source: 0 },
            BenchQuery::AllShortestFrom { source: 99 },
            BenchQuery::Spread {
                seeds_below: 2,
                hops: 3,
            },
            BenchQuery::Walks {
                hops: 3,
                sources_below: 2,
                destinations_below: 4,
                paths: false,
            },
            BenchQuery::Walks {
                hops: 4,
                sources_below: 3,
                destinations_below: 6,
                paths: true,
            },
        ]
    }

    #[test]
    fn reference_agrees_with_the_engine_on_a_small_graph() {
        let graph = graph();
        let mut conn = connection();
        for query in every_query() {
            let expected = query.expected(&graph).unwrap();
            let actual = query_answer(&mut conn, &query.text(), query.shape()).unwrap();
            assert_eq!(actual, expected, "{}", query.text());
        }
    }

    #[test]
    fn hand_checked_answers() {
        let graph = graph();
        // 0 reaches 1, 2 (1 hop), 3 (2), 4 (3): 4 nodes, 7 hops.
        let from_zero = BenchQuery::ShortestFrom { source: 0 }
            .expected(&graph)
            .unwrap();
        assert_eq!(from_zero, Answer::Rows(vec![vec![0, 4, 7]]));
        // Node 5 has no edges: no row.
        let isolated = BenchQuery::ShortestFrom { source: 5 }
            .expected(&graph)
            .unwrap();
        assert_eq!(isolated, Answer::Rows(Vec::new()));
        // From 0: 1, 2 one path each; 3 via 1 or 2: two; 4: two.
        let all = BenchQuery::AllShortestFrom { source: 0 }
            .expected(&graph)
            .unwrap();
        assert_eq!(all, Answer::Count(6));
    }

    #[test]
    fn query_texts_follow_the_design() {
        assert_eq!(
            BenchQuery::ShortestBelow { sources_below: 64 }.text(),
            "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 \
             RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID"
        );
        assert_eq!(
            BenchQuery::Walks {
                hops: 3,
                sources_below: 5,
                destinations_below: 500,
                paths: true
            }
            .text(),
            "MATCH (a:Person)-[r:Knows*1..3]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN r"
        );
    }
}
