//! Timing of the spreading-activation kernel alone (no result rows) on a database named by
//! `WARREN_SPREAD_DB` (a Graph500 database from `warren generate`), per strategy, thread count
//! and hop count. Ignored by default: `WARREN_SPREAD_DB=/tmp/g18db cargo test --profile ci -p
//! warren --test spread_timing -- --ignored --nocapture`. `WARREN_SPREAD_QUICK=1` times only
//! the default strategy (`Auto`) at 3 hops, 15 runs per thread count.

use std::time::Instant;

use warren::Database;
use warren_exec::context::{Interrupt, MemoryTracker};
use warren_exec::recursive::graph::Graph;
use warren_exec::recursive::spread::{
    spread, EdgeWeights, SpreadGraph, SpreadParameters, SpreadRun, SpreadStrategy,
};
use warren_exec::workers::WorkerPool;
use warren_planner::plan::Step;
use warren_storage::Direction;

const REPEAT: usize = 7;

#[test]
#[ignore = "needs WARREN_SPREAD_DB"]
fn spread_kernel_timing() {
    let Ok(path) = std::env::var("WARREN_SPREAD_DB") else {
        return;
    };
    let db = Database::open(&path).unwrap();
    let mut conn = db.connect();
    let seeds: Vec<u32> = conn
        .query("MATCH (a:Person) WHERE a.ID < 10 RETURN id(a)")
        .unwrap()
        .to_strings()
        .unwrap()
        .iter()
        .map(|id| id.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    let snapshot = db.snapshot();
    let pair = snapshot.catalog().rel_table("Knows").unwrap().pairs[0].id;
    let steps = [Step {
        pair,
        direction: Direction::Forward,
    }];
    let graph = Graph::build(&snapshot, &steps, &[]).unwrap();
    let seeds: Vec<(u32, f64)> = seeds.into_iter().map(|v| (v, 1.0)).collect();
    let spread_graph = SpreadGraph {
        push: vec![graph.forward.view()],
        pull: vec![graph.backward.view()],
        weights: EdgeWeights::Unit,
        num_nodes: graph.num_nodes(),
    };
    let interrupt = Interrupt::none();
    let memory = MemoryTracker::new(u64::MAX);
    let quick = std::env::var("WARREN_SPREAD_QUICK").is_ok_and(|v| v == "1");
    let (hop_counts, strategies, repeat): (&[u32], &[SpreadStrategy], usize) = if quick {
        (&[3], &[SpreadStrategy::Auto], 15)
    } else {
        (
            &[1, 2, 3],
            &[
                SpreadStrategy::Auto,
                SpreadStrategy::Push,
                SpreadStrategy::PushPrivate,
                SpreadStrategy::Pull,
            ],
            REPEAT,
        )
    };
    let workers = WorkerPool::new();
    for &max_hops in hop_counts {
        for threads in [1, 2] {
            for &strategy in strategies {
                let run = SpreadRun {
                    threads,
                    morsel_size: 2048,
                    prefetch_distance: 16,
                    strategy,
                    workers: &workers,
                    interrupt: &interrupt,
                    memory: &memory,
                    states: None,
                };
                let parameters = SpreadParameters {
                    decay: 0.5,
                    threshold: 0.01,
                    max_hops,
                };
                let mut times = Vec::new();
                let mut reached = 0;
                for _ in 0..repeat {
                    let start = Instant::now();
                    reached = spread(&spread_graph, &seeds, parameters, &run)
                        .unwrap()
                        .len();
                    times.push(start.elapsed().as_secs_f64() * 1e3);
                }
                times.sort_by(f64::total_cmp);
                eprintln!(
                    "hops {max_hops} threads {threads} {strategy:?}: median {:.2} ms (min {:.2}), {reached} reached",
                    times[repeat / 2], times[0]
                );
            }
        }
    }
}
