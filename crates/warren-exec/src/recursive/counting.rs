//! Counting mode: the number of paths per source (and per destination, when grouped), with
//! their summed, smallest and largest lengths, without materializing paths. Chooses the
//! algorithm and k per batch of sources:
//! - SHORTEST lengths from many sources: bit-parallel multi-source BFS sweeps (lanes and
//!   sweeps at once from the state size and the cache budget);
//! - SHORTEST from one source, or ALL SHORTEST (path counts): one BFS per source, k searches
//!   at once under the nTkS scheduler, each parallel inside its levels;
//! - walks: forward sweeps per source meeting shared backward vectors (or forward only);
//! - TRAIL and ACYCLIC: bounded-memory depth-first enumeration, one source per thread.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
use std::time::Instant;

use warren_common::{Error, Result};
use warren_planner::plan::{RecursiveKind, RecursivePlan};

use super::auto_k::{choose_k, choose_sweeps, DegreeProfile, SweepChoice, Traversal};
use super::bfs::{list_prefetch_min_bytes, Bfs, BfsConfig, BfsMode, BfsSearch, CountOutput};
use super::binned_push;
use super::counters::TraversalRecorder;
use super::graph::Graph;
use super::lanes::LaneWord;
use super::masks::{DestinationMask, Masks};
use super::morsels::for_each_morsel;
use super::multi_source_bfs::{MultiSourceBfs, SweepConfig};
use super::scheduler::run_tasks;
use super::state_pool::SearchStatePool;
use super::stats::PathStats;
use super::walk_counts::{count_walks_meeting, BackwardCounts, Parallel};
use super::walks::{count_walks, distance_to_destinations, PathEnumerator, Semantic};
use crate::context::{EngineSettings, Interrupt, MemoryTracker};
use crate::workers::WorkerPool;

/// One (source, bound destination) pair to count.
pub type CountTask = (u32, Option<u32>);

/// Everything a batch of counts needs.
pub struct CountRequest<'a> {
    pub plan: &'a RecursivePlan,
    pub graph: &'a Graph,
    pub masks: &'a Masks,
    /// Distance to the nearest destination, for pruning TRAIL and ACYCLIC enumeration.
    pub distance: Option<&'a [u32]>,
    pub engine: &'a EngineSettings,
    pub threads: usize,
    pub workers: &'a WorkerPool,
    pub interrupt: &'a Interrupt,
    pub memory: &'a MemoryTracker,
    pub recorder: &'a TraversalRecorder,
    pub per_destination: bool,
    /// Where one-source search states are lent from and given back to.
    pub states: &'a SearchStatePool,
}

impl CountRequest<'_> {
    fn bounds(&self) -> (u32, u32) {
        (self.plan.lower, self.plan.upper)
    }

    fn morsel_size(&self) -> usize {
        self.engine.morsel_size.max(1)
    }
}

/// Counts every task; outputs in task order. `backward` caches the shared walk-count vectors
/// across batches of one query.
pub fn count_tasks(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
    backward: &mut Option<BackwardCounts>,
) -> Result<Vec<CountOutput>> {
    let started = Instant::now();
    let bound_destination = tasks.iter().any(|(_, target)| target.is_some());
    let outputs = match &request.plan.kind {
        RecursiveKind::Shortest
            if request.engine.multi_source_bfs && !bound_destination && tasks.len() > 1 =>
        {
            count_shortest_sweeps(request, tasks)?
        }
        RecursiveKind::Shortest => count_bfs(request, tasks, BfsMode::Lengths)?,
        RecursiveKind::AllShortest => count_bfs(request, tasks, BfsMode::PathCounts)?,
        RecursiveKind::Walk if !bound_destination && !request.per_destination => {
            count_walks_by_meeting(request, tasks, backward)?
        }
        RecursiveKind::Walk => count_walks_forward(request, tasks)?,
        RecursiveKind::Trail | RecursiveKind::Acyclic => count_by_enumeration(request, tasks)?,
        RecursiveKind::WeightedShortest { .. } | RecursiveKind::AllWeightedShortest { .. } => {
            return Err(Error::internal("weighted paths are not counted"));
        }
    };
    request.recorder.add_time(started.elapsed());
    Ok(outputs)
}

/// Bit-parallel sweeps of up to 64 sources, lanes and sweeps at once chosen by
/// [`choose_sweeps`]. A source without out-edges reaches nothing (SHORTEST starts at length
/// 1), so it gets no lane: its output is empty, and the sweeps' words are as narrow as the
/// sources that can reach something allow.
fn count_shortest_sweeps(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
) -> Result<Vec<CountOutput>> {
    debug_assert!(
        request.plan.lower >= 1,
        "SHORTEST paths have at least one edge"
    );
    let forward = request.graph.forward.view();
    let reaching: Vec<CountTask> = tasks
        .iter()
        .copied()
        .filter(|&(source, _)| forward.degree(source) > 0)
        .collect();
    let edgeless = tasks.len() - reaching.len();
    let choice = choose_sweeps(
        request.engine.max_active_sources,
        DegreeProfile::of(request.graph),
        reaching.len(),
        request.threads,
    );
    let reason = if edgeless > 0 {
        format!(
            "{}; {edgeless} of {} sources without out-edges reach nothing and get no lane",
            choice.reason,
            tasks.len()
        )
    } else {
        choice.reason.clone()
    };
    request.recorder.describe(
        &format!(
            "multi-source BFS ({} lanes x u{} per sweep, {} sweep(s) at once)",
            choice.lanes, choice.word_bits, choice.sweeps
        ),
        request.threads,
        choice.k(),
        &reason,
    );
    request.recorder.add_sources(edgeless as u64);
    let swept = match (reaching.is_empty(), choice.word_bits) {
        (true, _) => Ok(Vec::new()),
        (false, 8) => run_sweeps::<AtomicU8>(request, &reaching, &choice),
        (false, 16) => run_sweeps::<AtomicU16>(request, &reaching, &choice),
        (false, 32) => run_sweeps::<AtomicU32>(request, &reaching, &choice),
        (false, 64) => run_sweeps::<AtomicU64>(request, &reaching, &choice),
        (false, bits) => Err(Error::internal(format!("no {bits}-bit lane word"))),
    }?;
    Ok(with_edgeless_sources(tasks, &reaching, swept))
}

/// The outputs of `tasks` in order: the swept ones (`swept`, in the order of `reaching`, a
/// subsequence of `tasks`) and an empty output for every other task.
fn with_edgeless_sources(
    tasks: &[CountTask],
    reaching: &[CountTask],
    swept: Vec<CountOutput>,
) -> Vec<CountOutput> {
    assert_eq!(swept.len(), reaching.len(), "one output per swept source");
    if reaching.len() == tasks.len() {
        return swept;
    }
    let mut swept = reaching.iter().zip(swept).peekable();
    let outputs: Vec<CountOutput> = tasks
        .iter()
        .map(
            |task| match swept.next_if(|(reached, _)| *reached == task) {
                Some((_, output)) => output,
                None => CountOutput::default(),
            },
        )
        .collect();
    assert!(swept.next().is_none(), "every swept output has its task");
    outputs
}

/// Runs the sweeps of `choice` with lane words `W`.
fn run_sweeps<W: LaneWord>(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
    choice: &SweepChoice,
) -> Result<Vec<CountOutput>> {
    assert!(choice.lanes <= W::LANES, "a sweep's lanes fit in its word");
    let nodes = request.graph.num_nodes();
    let (binned_edges_min, pair_bytes) =
        binned_push::engine_limits(request.engine.binned_push, nodes);
    let bytes = (MultiSourceBfs::<W>::bytes(nodes) + pair_bytes) * choice.sweeps as u64;
    request.memory.reserve(bytes, "multi-source BFS sweeps")?;
    let config = SweepConfig {
        lower: request.plan.lower,
        upper: request.plan.upper,
        direction_optimizing: request.engine.direction_optimizing,
        morsel_size: request.morsel_size(),
        per_destination: request.per_destination,
        prefetch_distance: request.engine.prefetch_distance,
        binned_edges_min,
    };
    let slots: Vec<MultiSourceBfs<'_, W>> = (0..choice.sweeps)
        .map(|_| MultiSourceBfs::new(request.graph, request.masks, config, Some(request.recorder)))
        .collect();
    let batches: Vec<Vec<u32>> = tasks
        .chunks(choice.lanes)
        .map(|chunk| chunk.iter().map(|(source, _)| *source).collect())
        .collect();
    let outputs = run_tasks(
        &slots,
        &batches,
        request.threads,
        request.workers,
        request.interrupt,
    );
    request.memory.release(bytes);
    Ok(outputs?.into_iter().flatten().collect())
}

/// One BFS per source, k at once under the nTkS scheduler.
fn count_bfs(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
    mode: BfsMode,
) -> Result<Vec<CountOutput>> {
    let choice = choose_k(
        request.engine.max_active_sources,
        DegreeProfile::of(request.graph),
        tasks.len(),
        request.threads,
        Traversal::PerSource {
            state_bytes: Bfs::bytes(request.graph.num_nodes(), mode),
        },
    );
    let k = choice.k.min(tasks.len()).max(1);
    let what = match mode {
        BfsMode::PathCounts => "BFS with shortest-path counts",
        _ => "BFS",
    };
    let direction = if request.engine.direction_optimizing {
        "direction-optimizing"
    } else {
        "top-down"
    };
    request.recorder.describe(
        &format!("{what}, {direction}, nTkS ({k} source(s) at once)"),
        request.threads,
        choice.k,
        &choice.reason,
    );
    let nodes = request.graph.num_nodes();
    // Lengths and path-count searches bin their claims (`BfsConfig::binned_edges_min`).
    let binned = request.engine.binned_push && mode != BfsMode::Parents;
    let (binned_edges_min, pair_bytes) = binned_push::engine_limits(binned, nodes);
    let counts_bytes = if binned {
        Bfs::frontier_counts_bytes(nodes, mode)
    } else {
        0
    };
    let bytes = (Bfs::bytes(nodes, mode) + pair_bytes + counts_bytes) * k as u64;
    request.memory.reserve(bytes, "shortest-path searches")?;
    let config = BfsConfig {
        mode,
        upper: request.plan.upper,
        direction_optimizing: request.engine.direction_optimizing,
        morsel_size: request.morsel_size(),
        prefetch_distance: request.engine.prefetch_distance,
        binned_edges_min,
        list_prefetch_min_bytes: list_prefetch_min_bytes(request.engine.prefetch_distance),
    };
    let states: Vec<Bfs> = (0..k)
        .map(|_| request.states.take(request.graph.num_nodes(), config))
        .collect();
    let all_destinations = request.masks.every_node_is_destination(nodes);
    let searches: Vec<BfsSearch<'_>> = states
        .iter()
        .map(|bfs| BfsSearch {
            bfs,
            graph: request.graph,
            masks: request.masks,
            recorder: Some(request.recorder),
            counting: Some((request.plan.lower, request.per_destination)),
            all_destinations,
        })
        .collect();
    let outputs = run_tasks(
        &searches,
        tasks,
        request.threads,
        request.workers,
        request.interrupt,
    );
    drop(searches);
    for bfs in states {
        request.states.give_back(bfs);
    }
    request.memory.release(bytes);
    outputs?
        .into_iter()
        .map(|output| output.ok_or_else(|| Error::internal("a counting search kept no counts")))
        .collect()
}

/// Walk counts through shared backward vectors (see `walk_counts`).
fn count_walks_by_meeting(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
    backward: &mut Option<BackwardCounts>,
) -> Result<Vec<CountOutput>> {
    let sources: Vec<u32> = tasks.iter().map(|(source, _)| *source).collect();
    request.recorder.describe(
        "walk counts: forward per source, meeting shared backward levels",
        request.threads,
        request.threads,
        "one source per thread; the backward levels use every thread",
    );
    request.recorder.add_sources(sources.len() as u64);
    let backward =
        backward.get_or_insert_with(|| BackwardCounts::new(request.graph, request.masks));
    let (stats, scanned) = count_walks_meeting(
        request.graph,
        request.masks,
        &sources,
        request.bounds(),
        backward,
        request.engine.walk_count_meet,
        Parallel {
            threads: request.threads,
            morsel_size: request.morsel_size(),
            workers: request.workers,
        },
        request.interrupt,
        request.memory,
    )?;
    request.recorder.merge(
        1,
        super::counters::LevelCounters {
            edges_scanned: scanned,
            cas_failures: 0,
        },
    );
    Ok(stats.into_iter().map(|total| (total, Vec::new())).collect())
}

/// Walk counts by one forward dynamic-programming sweep per task, a task per thread.
fn count_walks_forward(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
) -> Result<Vec<CountOutput>> {
    request.recorder.describe(
        "walk counts: forward dynamic programming per source",
        request.threads,
        request.threads,
        "one source per thread",
    );
    request.recorder.add_sources(tasks.len() as u64);
    let (lower, upper) = request.bounds();
    per_task(request, tasks, |&(source, target)| {
        let single = target.map(|t| single_destination(request.masks, t));
        let masks = single.as_ref().unwrap_or(request.masks);
        let mut by_destination = Vec::new();
        let out = request.per_destination.then_some(&mut by_destination);
        let total = count_walks(
            request.graph,
            masks,
            source,
            lower,
            upper,
            out,
            request.interrupt,
        )?;
        by_destination.sort_unstable_by_key(|(v, _)| *v);
        Ok((total, by_destination))
    })
}

/// TRAIL and ACYCLIC: paths enumerated depth-first and counted, a task per thread.
fn count_by_enumeration(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
) -> Result<Vec<CountOutput>> {
    let semantic = if matches!(request.plan.kind, RecursiveKind::Trail) {
        Semantic::Trail
    } else {
        Semantic::Acyclic
    };
    request.recorder.describe(
        &format!("{semantic:?} paths: depth-first enumeration per source"),
        request.threads,
        request.threads,
        "one source per thread",
    );
    request.recorder.add_sources(tasks.len() as u64);
    let (lower, upper) = request.bounds();
    per_task(request, tasks, |&(source, target)| {
        let single = target.map(|t| single_destination(request.masks, t));
        let masks = single.as_ref().unwrap_or(request.masks);
        let own_distance;
        let distance = match (request.distance, target) {
            (Some(distance), None) => distance,
            _ => {
                own_distance =
                    distance_to_destinations(request.graph, masks, upper, request.interrupt)?;
                own_distance.as_slice()
            }
        };
        let mut enumerator = PathEnumerator::new(request.graph, semantic, source, lower, upper);
        let mut total = PathStats::default();
        let mut per_node: std::collections::BTreeMap<u32, PathStats> = Default::default();
        while let Some((node, _, edges)) =
            enumerator.next_path(request.graph, masks, distance, request.interrupt)?
        {
            total.add(edges.len() as u32, 1)?;
            if request.per_destination {
                per_node
                    .entry(node)
                    .or_default()
                    .add(edges.len() as u32, 1)?;
            }
        }
        Ok((total, per_node.into_iter().collect()))
    })
}

fn single_destination(masks: &Masks, target: u32) -> Masks {
    Masks {
        destination: DestinationMask::Single(target),
        ..masks.clone()
    }
}

/// Runs `work` for every task on the request's threads; results in task order.
fn per_task(
    request: &CountRequest<'_>,
    tasks: &[CountTask],
    work: impl Fn(&CountTask) -> Result<CountOutput> + Sync,
) -> Result<Vec<CountOutput>> {
    let mut results: Vec<(usize, CountOutput)> = Vec::with_capacity(tasks.len());
    for_each_morsel(
        tasks.len(),
        1,
        request.threads,
        request.workers,
        request.interrupt,
        |range| Ok((range.start, work(&tasks[range.start])?)),
        |result| results.push(result),
    )?;
    results.sort_unstable_by_key(|(index, _)| *index);
    Ok(results.into_iter().map(|(_, output)| output).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(count: u64) -> CountOutput {
        let mut stats = PathStats::default();
        stats.add(1, count).unwrap();
        (stats, Vec::new())
    }

    #[test]
    fn edgeless_sources_get_empty_outputs_in_their_places() {
        let tasks: Vec<CountTask> = [2, 3, 5, 7, 11].map(|source| (source, None)).to_vec();
        let reaching: Vec<CountTask> = [3, 7].map(|source| (source, None)).to_vec();
        let outputs = with_edgeless_sources(&tasks, &reaching, vec![output(30), output(70)]);
        let counts: Vec<u64> = outputs.iter().map(|(stats, _)| stats.count).collect();
        assert_eq!(counts, [0, 30, 0, 70, 0]);
        // Every source reaching something: the sweeps' outputs as they are.
        let all = with_edgeless_sources(&reaching, &reaching, vec![output(1), output(2)]);
        assert_eq!(all.iter().map(|(s, _)| s.count).collect::<Vec<_>>(), [1, 2]);
        // None reaching anything: only empty outputs.
        let none = with_edgeless_sources(&tasks, &[], Vec::new());
        assert!(none.iter().all(|(stats, _)| stats.count == 0));
    }
}
