//! Spreading activation against a plain sequential reference (a map per level), on random
//! graphs, weights, seeds and parameters, with every strategy and several thread counts.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// Relative tolerance between two summation orders of the same non-negative terms.
const TOLERANCE: f64 = 1e-9;

/// A directed edge list with optional (NULL) weights.
#[derive(Clone, Debug)]
struct TestGraph {
    nodes: u32,
    edges: Vec<(u32, u32, Option<f64>)>,
}

/// CSR arrays (offsets, neighbours, edge ids) of `edges` from their sources (or targets).
fn csr(graph: &TestGraph, reverse: bool) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
    let mut by_owner: Vec<Vec<(u32, u32)>> = vec![Vec::new(); graph.nodes as usize];
    for (id, &(from, to, _)) in graph.edges.iter().enumerate() {
        let (owner, other) = if reverse { (to, from) } else { (from, to) };
        by_owner[owner as usize].push((other, id as u32));
    }
    let mut offsets = vec![0u64];
    let (mut neighbours, mut ids) = (Vec::new(), Vec::new());
    for list in by_owner {
        for (other, id) in list {
            neighbours.push(other);
            ids.push(id);
        }
        offsets.push(neighbours.len() as u64);
    }
    (offsets, neighbours, ids)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Follow {
    Out,
    In,
    Both,
}

/// The reference: level by level with hash maps, following the definition literally.
fn reference(
    graph: &TestGraph,
    follow: Follow,
    seeds: &[(u32, f64)],
    p: SpreadParameters,
) -> HashMap<u32, (f64, u32)> {
    let mut arrivals: HashMap<u32, f64> = HashMap::new();
    for &(v, a) in seeds {
        *arrivals.entry(v).or_default() += a;
    }
    let mut result: HashMap<u32, (f64, u32)> =
        arrivals.iter().map(|(&v, &a)| (v, (a, 0))).collect();
    for hop in 1..=p.max_hops {
        let mut next: HashMap<u32, f64> = HashMap::new();
        for (&u, &a) in &arrivals {
            if a < p.threshold {
                continue;
            }
            for &(from, to, weight) in &graph.edges {
                let Some(w) = weight else { continue };
                if matches!(follow, Follow::Out | Follow::Both) && from == u {
                    *next.entry(to).or_default() += a * w * p.decay;
                }
                if matches!(follow, Follow::In | Follow::Both) && to == u {
                    *next.entry(from).or_default() += a * w * p.decay;
                }
            }
        }
        for (&v, &a) in &next {
            let entry = result.entry(v).or_insert((0.0, hop));
            entry.0 += a;
        }
        arrivals = next;
    }
    result
}

fn run_spread(
    graph: &TestGraph,
    follow: Follow,
    seeds: &[(u32, f64)],
    p: SpreadParameters,
    threads: usize,
    strategy: SpreadStrategy,
) -> Result<Vec<Activation>> {
    run_spread_in_order(
        graph,
        follow,
        seeds,
        p,
        (threads, strategy),
        SpreadOrder::Ranked,
        None,
    )
}

fn run_spread_in_order(
    graph: &TestGraph,
    follow: Follow,
    seeds: &[(u32, f64)],
    p: SpreadParameters,
    (threads, strategy): (usize, SpreadStrategy),
    order: SpreadOrder,
    states: Option<&SpreadStatePool>,
) -> Result<Vec<Activation>> {
    let forward = csr(graph, false);
    let backward = csr(graph, true);
    let forward = AdjacencyView::csr(&forward.0, &forward.1, &forward.2);
    let backward = AdjacencyView::csr(&backward.0, &backward.1, &backward.2);
    let (push, pull) = match follow {
        Follow::Out => (vec![forward], vec![backward]),
        Follow::In => (vec![backward], vec![forward]),
        Follow::Both => (vec![forward, backward], vec![backward, forward]),
    };
    let weights: Vec<f64> = graph
        .edges
        .iter()
        .map(|e| e.2.unwrap_or(f64::NAN))
        .collect();
    let spread_graph = SpreadGraph {
        push,
        pull,
        weights: EdgeWeights::Values(weights),
        num_nodes: graph.nodes,
    };
    let memory = MemoryTracker::new(u64::MAX);
    let interrupt = Interrupt::none();
    let run = SpreadRun {
        threads,
        morsel_size: 3,
        prefetch_distance: 2,
        strategy,
        workers: &crate::workers::WorkerPool::new(),
        interrupt: &interrupt,
        memory: &memory,
        states,
    };
    let out = spread_in_order(&spread_graph, seeds, p, &run, order);
    assert_eq!(memory.used(), 0, "a spread releases what it reserved");
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1.0)
}

fn check_against_reference(
    graph: &TestGraph,
    follow: Follow,
    seeds: &[(u32, f64)],
    p: SpreadParameters,
) {
    let expected = reference(graph, follow, seeds, p);
    // One pool for every run: all but the first spread reuse the state the one before it
    // cleared (`spread_in_chunks` asserts it is as new in debug builds, `all_idle_clear` here).
    let states = SpreadStatePool::default();
    for threads in [1, 3] {
        for strategy in [
            SpreadStrategy::Push,
            SpreadStrategy::PushPrivate,
            SpreadStrategy::Pull,
            SpreadStrategy::Auto,
        ] {
            for order in [SpreadOrder::Ranked, SpreadOrder::ById] {
                let got = run_spread_in_order(
                    graph,
                    follow,
                    seeds,
                    p,
                    (threads, strategy),
                    order,
                    Some(&states),
                )
                .unwrap();
                assert!(states.all_idle_clear(), "a pooled state is cleared");
                assert_eq!(got.len(), expected.len(), "{threads} threads, {strategy:?}");
                for row in &got {
                    let (activation, hops) = expected[&row.node];
                    assert!(close(row.activation, activation), "{row:?} vs {activation}");
                    assert_eq!(row.hops, hops, "{row:?}");
                }
                let ordered = got.windows(2).all(|w| match order {
                    SpreadOrder::Ranked => {
                        w[0].activation > w[1].activation
                            || (w[0].activation == w[1].activation && w[0].node < w[1].node)
                    }
                    SpreadOrder::ById => w[0].node < w[1].node,
                });
                assert!(
                    ordered,
                    "{order:?}: activation descending then node, or node"
                );
            }
        }
    }
}

fn graphs() -> impl Strategy<Value = TestGraph> {
    (1u32..40).prop_flat_map(|nodes| {
        let edge = (
            0..nodes,
            0..nodes,
            prop_oneof![
                1 => Just(None),
                6 => (0.0f64..2.0).prop_map(Some),
                1 => Just(Some(0.0)),
            ],
        );
        prop::collection::vec(edge, 0..160).prop_map(move |edges| TestGraph { nodes, edges })
    })
}

fn parameters() -> impl Strategy<Value = SpreadParameters> {
    (0.0f64..=1.0, prop_oneof![Just(0.0), 0.0f64..0.5], 0u32..6).prop_map(
        |(decay, threshold, max_hops)| SpreadParameters {
            decay,
            threshold,
            max_hops,
        },
    )
}

fn follow() -> impl Strategy<Value = Follow> {
    prop_oneof![Just(Follow::Out), Just(Follow::In), Just(Follow::Both)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn matches_the_reference(
        graph in graphs(),
        follow in follow(),
        p in parameters(),
        seeds in prop::collection::vec((0u32..1000, 0.0f64..3.0), 0..6),
    ) {
        let seeds: Vec<(u32, f64)> =
            seeds.into_iter().map(|(v, a)| (v % graph.nodes, a)).collect();
        check_against_reference(&graph, follow, &seeds, p);
    }
}

fn unit(edges: &[(u32, u32)], nodes: u32) -> TestGraph {
    TestGraph {
        nodes,
        edges: edges.iter().map(|&(a, b)| (a, b, Some(1.0))).collect(),
    }
}

const DEFAULTS: SpreadParameters = SpreadParameters {
    decay: 0.5,
    threshold: 0.01,
    max_hops: 3,
};

#[test]
fn a_chain_halves_per_hop_and_sums_converging_paths() {
    // 0 -> 1 -> 2 -> 3 -> 4 and 0 -> 2: node 2 gets 0.5 * 0.5 (via 1) + 0.5 (direct).
    let graph = unit(&[(0, 1), (1, 2), (2, 3), (3, 4), (0, 2)], 5);
    let got = run_spread(
        &graph,
        Follow::Out,
        &[(0, 1.0)],
        DEFAULTS,
        1,
        SpreadStrategy::Auto,
    )
    .unwrap();
    let rows: Vec<(u32, f64, u32)> = got.iter().map(|a| (a.node, a.activation, a.hops)).collect();
    // Node 3: 0.75 arrives at 2 over hops 1 and 2; 0.5 * 0.5 (hop 2) + 0.25 * 0.5 (hop 3).
    assert_eq!(
        rows,
        vec![
            (0, 1.0, 0),
            (2, 0.75, 1),
            (1, 0.5, 1),
            (3, 0.375, 2),
            (4, 0.125, 3)
        ]
    );
}

#[test]
fn nodes_under_the_threshold_do_not_spread() {
    let graph = unit(&[(0, 1), (1, 2)], 3);
    let p = SpreadParameters {
        threshold: 0.6,
        ..DEFAULTS
    };
    let got = run_spread(&graph, Follow::Out, &[(0, 1.0)], p, 2, SpreadStrategy::Auto).unwrap();
    assert_eq!(got.iter().map(|a| a.node).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn negative_zeros_reach_nodes_with_zero_activation() {
    // A -0.0 seed, decay or weight is +0.0: the nodes it leads to are reached (activation 0),
    // also by a private push, whose empty slots are -0.0.
    let graph = TestGraph {
        nodes: 4,
        edges: vec![(0, 1, Some(-0.0)), (1, 2, Some(1.0)), (3, 2, Some(1.0))],
    };
    let p = SpreadParameters {
        threshold: 0.0,
        ..DEFAULTS
    };
    let zero_decay = SpreadParameters { decay: -0.0, ..p };
    for strategy in [
        SpreadStrategy::Push,
        SpreadStrategy::PushPrivate,
        SpreadStrategy::Pull,
    ] {
        for (seeds, parameters) in [
            (vec![(0, 1.0)], p),
            (vec![(0, -0.0)], p),
            (vec![(0, 1.0)], zero_decay),
        ] {
            let got = run_spread(&graph, Follow::Out, &seeds, parameters, 2, strategy).unwrap();
            assert!(got
                .iter()
                .all(|a| a.activation.to_bits() == 0 || a.node == 0));
            let mut nodes: Vec<(u32, u32)> = got.iter().map(|a| (a.node, a.hops)).collect();
            nodes.sort_unstable();
            assert_eq!(
                nodes,
                vec![(0, 0), (1, 1), (2, 2)],
                "{strategy:?} {seeds:?}"
            );
        }
    }
}

#[test]
fn a_negative_weight_is_an_error() {
    let graph = TestGraph {
        nodes: 2,
        edges: vec![(0, 1, Some(-1.0))],
    };
    for strategy in [
        SpreadStrategy::Push,
        SpreadStrategy::PushPrivate,
        SpreadStrategy::Pull,
    ] {
        let error = run_spread(&graph, Follow::Out, &[(0, 1.0)], DEFAULTS, 1, strategy)
            .unwrap_err()
            .to_string();
        assert!(error.contains("Found negative weight -1"), "{error}");
    }
}

#[test]
fn the_memory_limit_is_enforced() {
    let graph = unit(&[(0, 1)], 2);
    let memory = MemoryTracker::new(10);
    let interrupt = Interrupt::none();
    let (offsets, neighbours, ids) = csr(&graph, false);
    let view = AdjacencyView::csr(&offsets, &neighbours, &ids);
    let spread_graph = SpreadGraph {
        push: vec![view],
        pull: vec![view],
        weights: EdgeWeights::Unit,
        num_nodes: 2,
    };
    let run = SpreadRun {
        threads: 1,
        morsel_size: 64,
        prefetch_distance: 0,
        strategy: SpreadStrategy::Auto,
        workers: &crate::workers::WorkerPool::new(),
        interrupt: &interrupt,
        memory: &memory,
        states: None,
    };
    let error = spread(&spread_graph, &[(0, 1.0)], DEFAULTS, &run).unwrap_err();
    assert!(matches!(error, Error::LimitExceeded(_)), "{error}");
    assert_eq!(memory.used(), 0);
}

#[test]
fn an_interrupted_spread_stops() {
    let graph = unit(&[(0, 1), (1, 0)], 2);
    let (offsets, neighbours, ids) = csr(&graph, false);
    let view = AdjacencyView::csr(&offsets, &neighbours, &ids);
    let spread_graph = SpreadGraph {
        push: vec![view],
        pull: vec![view],
        weights: EdgeWeights::Unit,
        num_nodes: 2,
    };
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let interrupt = Interrupt::new(None, flag);
    let memory = MemoryTracker::new(u64::MAX);
    let run = SpreadRun {
        threads: 1,
        morsel_size: 64,
        prefetch_distance: 0,
        strategy: SpreadStrategy::Auto,
        workers: &crate::workers::WorkerPool::new(),
        interrupt: &interrupt,
        memory: &memory,
        states: None,
    };
    let error = spread(&spread_graph, &[(0, 1.0)], DEFAULTS, &run).unwrap_err();
    assert!(matches!(error, Error::Interrupted(_)), "{error}");
}

#[test]
fn radix_ranking_orders_like_the_comparison_sort() {
    let mut random = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random
    };
    let mut items: Vec<(u64, u32)> = (0..5_000u32)
        .map(|v| {
            // Ties (few distinct values), values over many exponents, and zeros.
            let activation = match next() % 3 {
                0 => (next() % 4) as f64 * 0.25,
                1 => f64::from_bits(next() >> 2),
                _ => 0.0,
            };
            (descending_key(activation), v)
        })
        .collect();
    let mut expected = items.clone();
    expected.sort_by(|a, b| {
        let (x, y) = (f64::from_bits(!a.0), f64::from_bits(!b.0));
        y.total_cmp(&x).then(a.1.cmp(&b.1))
    });
    radix_sort_by_key(&mut items, |item| item.0);
    assert_eq!(items, expected);
    assert!(descending_key(0.5) < descending_key(0.25));
    assert_eq!(descending_key(-0.0), descending_key(0.0));
}

#[test]
fn a_large_spread_is_ranked_by_radix_like_the_reference() {
    // A star: node 0 reaches 6,000 leaves (over RADIX_RANK_MIN) with weights giving ties.
    let leaves = 6_000u32;
    let graph = TestGraph {
        nodes: leaves + 1,
        edges: (1..=leaves)
            .map(|leaf| (0, leaf, Some(f64::from(leaf % 7) * 0.5)))
            .collect(),
    };
    let p = SpreadParameters {
        decay: 0.5,
        threshold: 0.0,
        max_hops: 1,
    };
    check_against_reference(&graph, Follow::Out, &[(0, 1.0)], p);
}

#[test]
fn a_pool_keeps_one_clear_state_per_graph_size_within_its_bound() {
    let graph = unit(&[(0, 1), (1, 2), (2, 0), (2, 3)], 4);
    let states = SpreadStatePool::default();
    let run = |states: Option<&SpreadStatePool>, seed: u32| {
        run_spread_in_order(
            &graph,
            Follow::Out,
            &[(seed, 1.0)],
            DEFAULTS,
            (2, SpreadStrategy::PushPrivate),
            SpreadOrder::ById,
            states,
        )
        .unwrap()
    };
    for seed in [0, 3, 1, 0] {
        assert_eq!(run(Some(&states), seed), run(None, seed), "seed {seed}");
        assert_eq!(states.idle_states(), 1);
        assert!(states.all_idle_clear());
    }
    let held = states.idle_bytes();
    assert!(held >= 4 * SPREAD_BYTES_PER_NODE, "{held}");
    let small = SpreadStatePool::new(held - 1);
    run(Some(&small), 0);
    assert_eq!(small.idle_states(), 0, "a state over the bound is not kept");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The top of the rows, from chunks in id order, is the full ranking's first `top` rows
    /// and every later row tied with the last of them, ranked.
    #[test]
    fn ranked_top_keeps_the_first_rows_and_their_ties(
        levels in proptest::collection::vec(0u8..6, 0..60),
        cut in 0usize..60,
        top in 0usize..70,
    ) {
        // Few distinct activations, so the boundary is often tied.
        let rows: Vec<Activation> = levels
            .iter()
            .enumerate()
            .map(|(node, &level)| Activation {
                node: node as u32,
                activation: f64::from(level) * 0.25,
                hops: 1,
            })
            .collect();
        let cut = cut.min(rows.len());
        let chunks = vec![rows[..cut].to_vec(), rows[cut..].to_vec()];
        let mut full = rows.clone();
        full.sort_unstable_by(|a, b| {
            b.activation.total_cmp(&a.activation).then(a.node.cmp(&b.node))
        });
        let got = ranked_top(&chunks, top);
        let expected: Vec<Activation> = match top.min(full.len()) {
            0 => Vec::new(),
            first => {
                let boundary = full[first - 1].activation;
                full.iter().copied().filter(|a| a.activation >= boundary).collect()
            }
        };
        prop_assert_eq!(got, expected);
    }
}
