//! The recursive-join operator. For each input row it takes the source node, runs the pattern's
//! algorithm (BFS for SHORTEST, DP or DFS for walks, Dijkstra for weighted) and yields one row
//! per path, or, in counting mode, one row of path statistics per source (or per destination).
//! Counting runs many sources in parallel; paths stream one at a time with bounded memory.

use std::collections::VecDeque;
use std::sync::Arc;

use warren_common::value::{NodeValue, PathValue, RelValue, Value};
use warren_common::Result;
use warren_planner::plan::{Destination, RecursiveKind, RecursiveOutput, RecursivePlan};

use super::bfs::{AllShortestPaths, Bfs, BfsConfig, BfsMode, BfsSearch};
use super::counters::TraversalRecorder;
use super::counting::{count_tasks, CountRequest};
use super::graph::Graph;
use super::masks::{edge_mask, node_mask, DestinationMask, Masks};
use super::scheduler::run_tasks;
use super::stats::PathStats;
use super::var_length::{release, LevelPathStream, LevelPaths, LevelPathsSearch};
use super::walk_counts::BackwardCounts;
use super::walks::{distance_to_destinations, PathEnumerator, Semantic};
use super::weighted::{dijkstra, edge_weights, ParallelWeighted, Weighted};
use crate::context::ExecContext;
use crate::operators::{BoxedOperator, Operator, Row};

/// Input rows counted together (their distinct sources run in parallel).
const COUNT_CHUNK_ROWS: usize = 1024;
/// Tied weighted paths enumerated per destination before giving up.
const WEIGHTED_PATHS_MAX: usize = 1 << 20;

/// What is computed once per query: the graph and the masks.
struct Prepared {
    graph: Graph,
    masks: Masks,
    weights: Option<Vec<f64>>,
    /// Distance to the nearest destination (walk pruning), for a bound destination mask.
    distance: Option<Vec<u32>>,
}

/// The paths of the current input row, produced one at a time.
enum PathStream {
    Walks {
        enumerator: PathEnumerator,
        masks: Option<Masks>,
        distance: Option<Vec<u32>>,
    },
    /// Walks built level by level in parallel (`varlen_paths = levels`).
    LevelWalks {
        paths: Box<LevelPaths>,
        stream: LevelPathStream,
    },
    Shortest {
        bfs: Box<Bfs>,
        targets: VecDeque<u32>,
    },
    AllShortest {
        bfs: Box<Bfs>,
        targets: VecDeque<u32>,
        current: Option<AllShortestPaths>,
    },
    Weighted {
        search: Weighted,
        targets: VecDeque<u32>,
        current: VecDeque<(u32, Vec<u32>, Vec<u32>, f64)>,
    },
}

pub struct RecursiveJoin {
    input: BoxedOperator,
    plan: RecursivePlan,
    prepared: Option<Arc<Prepared>>,
    current: Option<(Row, PathStream)>,
    buffered: VecDeque<Row>,
    input_done: bool,
    /// Reusable BFS state for path mode.
    spare_bfs: Option<Box<Bfs>>,
    /// Backward walk counts shared by every batch of sources (counting mode).
    backward: Option<BackwardCounts>,
    /// What this join did, registered with the query's context on first use.
    recorder: Option<Arc<TraversalRecorder>>,
}

impl RecursiveJoin {
    pub fn new(input: BoxedOperator, plan: RecursivePlan) -> Self {
        Self {
            input,
            plan,
            prepared: None,
            current: None,
            buffered: VecDeque::new(),
            input_done: false,
            spare_bfs: None,
            backward: None,
            recorder: None,
        }
    }

    /// The join's recorder, registered with the query's context the first time.
    fn recorder(&mut self, ctx: &ExecContext) -> Arc<TraversalRecorder> {
        self.recorder
            .get_or_insert_with(|| {
                let recorder = Arc::new(TraversalRecorder::default());
                ctx.record_traversal(recorder.clone());
                recorder
            })
            .clone()
    }

    fn prepare(&mut self, ctx: &ExecContext, width: usize) -> Result<Arc<Prepared>> {
        if let Some(prepared) = &self.prepared {
            return Ok(prepared.clone());
        }
        let snapshot = ctx.snapshot();
        let mut extra_tables: Vec<_> = snapshot
            .catalog()
            .node_tables()
            .iter()
            .map(|t| t.id)
            .collect();
        if let Destination::Bind { tables, .. } = &self.plan.destination {
            extra_tables.retain(|t| tables.contains(t) || self.plan.steps.is_empty());
        }
        let graph = Graph::build(&snapshot, &self.plan.steps, &extra_tables)?;
        ctx.memory
            .reserve(graph_bytes(&graph), "the recursive join's graph")?;
        let destination = match &self.plan.destination {
            Destination::Bind {
                slot,
                tables,
                filter,
            } => {
                let filter = filter.as_ref().map(|f| (*slot, f));
                DestinationMask::Set(Arc::new(node_mask(&graph, ctx, tables, filter, width)?))
            }
            Destination::Check { .. } => DestinationMask::Single(u32::MAX),
        };
        let all_tables: Vec<_> = graph.node_tables().iter().map(|(t, ..)| *t).collect();
        let intermediate = match &self.plan.node_filter {
            Some((slot, expr)) => Some(Arc::new(node_mask(
                &graph,
                ctx,
                &all_tables,
                Some((*slot, expr)),
                width,
            )?)),
            None => None,
        };
        let edges = match &self.plan.rel_filter {
            Some((slot, expr)) => Some(Arc::new(edge_mask(&graph, ctx, *slot, expr, width)?)),
            None => None,
        };
        let masks = Masks {
            destination,
            intermediate,
            edges,
        };
        let weights = match &self.plan.kind {
            RecursiveKind::WeightedShortest { weights }
            | RecursiveKind::AllWeightedShortest { weights } => {
                Some(edge_weights(&graph, ctx, weights)?)
            }
            _ => None,
        };
        // Depth-first enumeration prunes by the distance to the nearest destination; counting
        // walks does not enumerate.
        let enumerates = match self.plan.kind {
            RecursiveKind::Walk => matches!(self.plan.output, RecursiveOutput::Paths { .. }),
            RecursiveKind::Trail | RecursiveKind::Acyclic => true,
            _ => false,
        };
        let distance = match &masks.destination {
            DestinationMask::Set(_) if enumerates => Some(distance_to_destinations(
                &graph,
                &masks,
                self.plan.upper,
                &ctx.interrupt,
            )?),
            _ => None,
        };
        let prepared = Arc::new(Prepared {
            graph,
            masks,
            weights,
            distance,
        });
        self.prepared = Some(prepared.clone());
        Ok(prepared)
    }

    /// The global ids of the row's source and (when bound) destination.
    fn endpoints(&self, prepared: &Prepared, row: &Row) -> Option<(u32, Option<u32>)> {
        let Value::Node(source) = &row[self.plan.source] else {
            return None;
        };
        let source = prepared.graph.global(source.id)?;
        let target = match &self.plan.destination {
            Destination::Check { slot } => match &row[*slot] {
                Value::Node(node) => Some(prepared.graph.global(node.id)?),
                _ => return None,
            },
            Destination::Bind { .. } => None,
        };
        Some((source, target))
    }

    fn semantic(&self) -> Semantic {
        match self.plan.kind {
            RecursiveKind::Trail => Semantic::Trail,
            RecursiveKind::Acyclic => Semantic::Acyclic,
            _ => Semantic::Walk,
        }
    }

    // ----- path mode -----

    fn start_paths(
        &mut self,
        prepared: &Prepared,
        source: u32,
        target: Option<u32>,
        ctx: &ExecContext,
    ) -> Result<PathStream> {
        let graph = &prepared.graph;
        let masks_for_row = target.map(|t| Masks {
            destination: DestinationMask::Single(t),
            ..prepared.masks.clone()
        });
        let masks = masks_for_row.as_ref().unwrap_or(&prepared.masks);
        let (lower, upper) = (self.plan.lower, self.plan.upper);
        let in_range = |d: u32| d >= lower && d <= upper;
        Ok(match &self.plan.kind {
            RecursiveKind::Walk | RecursiveKind::Trail | RecursiveKind::Acyclic => {
                let distance = match (&prepared.distance, target) {
                    (Some(_), None) => None,
                    _ => Some(distance_to_destinations(
                        graph,
                        masks,
                        upper,
                        &ctx.interrupt,
                    )?),
                };
                if ctx.settings.engine.varlen_levels {
                    let distance = distance
                        .as_deref()
                        .or(prepared.distance.as_deref())
                        .expect("distance to destinations");
                    let paths = self.build_levels(prepared, masks, distance, source, ctx)?;
                    let stream = LevelPathStream::new(&paths, masks, source);
                    return Ok(PathStream::LevelWalks { paths, stream });
                }
                let enumerator = PathEnumerator::new(graph, self.semantic(), source, lower, upper);
                PathStream::Walks {
                    enumerator,
                    masks: masks_for_row,
                    distance,
                }
            }
            RecursiveKind::Shortest | RecursiveKind::AllShortest => {
                let bfs = self.search_paths(prepared, masks, source, ctx)?;
                let mut targets: Vec<u32> = bfs
                    .reached()
                    .into_iter()
                    .filter(|&v| masks.is_destination(v) && in_range(bfs.distance(v)))
                    .collect();
                targets.sort_unstable();
                let targets = targets.into();
                if matches!(self.plan.kind, RecursiveKind::Shortest) {
                    PathStream::Shortest { bfs, targets }
                } else {
                    PathStream::AllShortest {
                        bfs,
                        targets,
                        current: None,
                    }
                }
            }
            RecursiveKind::WeightedShortest { .. } | RecursiveKind::AllWeightedShortest { .. } => {
                let all = matches!(self.plan.kind, RecursiveKind::AllWeightedShortest { .. });
                let paths_needed = matches!(
                    self.plan.output,
                    RecursiveOutput::Paths {
                        rel_slot: Some(_),
                        ..
                    }
                );
                let algorithm = match (all, paths_needed) {
                    (true, _) => "ALL_WEIGHTED_SP_PATHS",
                    (false, true) => "WEIGHTED_SP_PATHS",
                    (false, false) => "WEIGHTED_SP_DESTINATIONS",
                };
                let weights = prepared.weights.as_ref().expect("weights");
                let search = if ctx.threads() > 1 {
                    self.weighted_in_parallel(graph, masks, weights, (algorithm, all), source, ctx)?
                } else {
                    dijkstra(
                        graph,
                        masks,
                        weights,
                        source,
                        all,
                        algorithm,
                        &ctx.interrupt,
                    )?
                };
                let mut targets: Vec<u32> = search
                    .settled
                    .iter()
                    .copied()
                    .filter(|&v| v != source && masks.is_destination(v))
                    .collect();
                targets.sort_unstable();
                PathStream::Weighted {
                    search,
                    targets: targets.into(),
                    current: VecDeque::new(),
                }
            }
        })
    }

    /// One source's weighted shortest paths with every thread on it: a parallel label-correcting
    /// search, then Dijkstra's parents derived from the final distances (same answers as
    /// [`dijkstra`], which runs when there is one thread).
    fn weighted_in_parallel(
        &mut self,
        graph: &Graph,
        masks: &Masks,
        weights: &[f64],
        algorithm: (&str, bool),
        source: u32,
        ctx: &ExecContext,
    ) -> Result<Weighted> {
        let recorder = self.recorder(ctx);
        recorder.describe(
            "weighted shortest paths: parallel CAS-min frontier rounds",
            ctx.threads(),
            1,
            "paths stream one source at a time; every thread works on it",
        );
        recorder.add_sources(1);
        let search = ParallelWeighted::new(
            graph,
            masks,
            weights,
            algorithm,
            ctx.settings.engine.morsel_size,
        );
        let started = std::time::Instant::now();
        run_tasks(
            std::slice::from_ref(&search),
            &[source],
            ctx.threads(),
            &ctx.workers,
            &ctx.interrupt,
        )?;
        recorder.add_time(started.elapsed());
        Ok(search.result())
    }

    /// Builds the level lists of one source's variable-length paths, every thread on it.
    fn build_levels(
        &mut self,
        prepared: &Prepared,
        masks: &Masks,
        distance: &[u32],
        source: u32,
        ctx: &ExecContext,
    ) -> Result<Box<LevelPaths>> {
        let paths = Box::new(LevelPaths::new(
            self.semantic(),
            (self.plan.lower, self.plan.upper),
            ctx.settings.engine.morsel_size,
        ));
        let recorder = self.recorder(ctx);
        recorder.describe(
            "variable-length paths: level lists built in parallel",
            ctx.threads(),
            1,
            "paths stream one source at a time; every thread works on it",
        );
        recorder.add_sources(1);
        let search = LevelPathsSearch {
            paths: &paths,
            graph: &prepared.graph,
            masks,
            distance,
            memory: &ctx.memory,
        };
        let started = std::time::Instant::now();
        let built = run_tasks(
            std::slice::from_ref(&search),
            &[source],
            ctx.threads(),
            &ctx.workers,
            &ctx.interrupt,
        );
        recorder.add_time(started.elapsed());
        if let Err(error) = built {
            release(&paths, &ctx.memory);
            return Err(error);
        }
        Ok(paths)
    }

    /// Runs the BFS of one source for path mode: every thread on this one source (k = 1), so
    /// paths stream out source by source with one search's memory.
    fn search_paths(
        &mut self,
        prepared: &Prepared,
        masks: &Masks,
        source: u32,
        ctx: &ExecContext,
    ) -> Result<Box<Bfs>> {
        let graph = &prepared.graph;
        let mode = match self.plan.kind {
            RecursiveKind::Shortest => BfsMode::Parents,
            _ => BfsMode::Lengths,
        };
        let engine = &ctx.settings.engine;
        let bfs = match self.spare_bfs.take() {
            Some(bfs) => bfs,
            None => {
                ctx.memory.reserve(
                    Bfs::bytes(graph.num_nodes(), mode),
                    "a shortest-path search",
                )?;
                let config = BfsConfig {
                    mode,
                    upper: self.plan.upper,
                    direction_optimizing: engine.direction_optimizing,
                    morsel_size: engine.morsel_size,
                    prefetch_distance: engine.prefetch_distance,
                    // Paths need the claims' order (`Parents` mode): never binned.
                    binned_edges_min: None,
                    list_prefetch_min_bytes: super::bfs::list_prefetch_min_bytes(
                        engine.prefetch_distance,
                    ),
                };
                Box::new(ctx.search_states.take(graph.num_nodes(), config))
            }
        };
        let recorder = self.recorder(ctx);
        recorder.describe(
            &format!("BFS for paths ({mode:?})"),
            ctx.threads(),
            1,
            "paths stream one source at a time; every thread works on it",
        );
        let search = BfsSearch {
            bfs: &bfs,
            graph,
            masks,
            recorder: Some(&recorder),
            counting: None,
            all_destinations: false,
        };
        let started = std::time::Instant::now();
        run_tasks(
            std::slice::from_ref(&search),
            &[(source, None)],
            ctx.threads(),
            &ctx.workers,
            &ctx.interrupt,
        )?;
        recorder.add_time(started.elapsed());
        Ok(bfs)
    }

    /// The next path of the current stream: (destination, intermediate nodes, edges, cost).
    #[allow(clippy::type_complexity)]
    fn next_path(
        &mut self,
        prepared: &Prepared,
        ctx: &ExecContext,
    ) -> Result<Option<(u32, Vec<u32>, Vec<u32>, Option<f64>)>> {
        let Some((_, stream)) = &mut self.current else {
            return Ok(None);
        };
        let graph = &prepared.graph;
        match stream {
            PathStream::Walks {
                enumerator,
                masks,
                distance,
            } => {
                let masks = masks.as_ref().unwrap_or(&prepared.masks);
                let distance = distance
                    .as_deref()
                    .or(prepared.distance.as_deref())
                    .expect("distance");
                Ok(enumerator
                    .next_path(graph, masks, distance, &ctx.interrupt)?
                    .map(|(d, n, e)| (d, n, e, None)))
            }
            PathStream::LevelWalks { paths, stream } => {
                Ok(stream.next_path(paths).map(|(d, n, e)| (d, n, e, None)))
            }
            PathStream::Shortest { bfs, targets } => Ok(targets.pop_front().map(|target| {
                let (nodes, edges) = bfs.path_to(target);
                (target, nodes, edges, None)
            })),
            PathStream::AllShortest {
                bfs,
                targets,
                current,
            } => loop {
                if let Some(paths) = current {
                    let masks = &prepared.masks;
                    let target = paths.target();
                    if let Some((nodes, edges)) = paths.next_path(bfs, graph, masks) {
                        return Ok(Some((target, nodes, edges, None)));
                    }
                    *current = None;
                }
                let Some(target) = targets.pop_front() else {
                    return Ok(None);
                };
                *current = Some(AllShortestPaths::new(target));
            },
            PathStream::Weighted {
                search,
                targets,
                current,
            } => loop {
                if let Some((target, nodes, edges, cost)) = current.pop_front() {
                    return Ok(Some((target, nodes, edges, Some(cost))));
                }
                let Some(target) = targets.pop_front() else {
                    return Ok(None);
                };
                let cost = search.distance[target as usize];
                let paths = search.paths_to(target, WEIGHTED_PATHS_MAX)?;
                current.extend(
                    paths
                        .into_iter()
                        .map(|(nodes, edges)| (target, nodes, edges, cost)),
                );
            },
        }
    }

    fn path_row(
        &self,
        prepared: &Prepared,
        row: &Row,
        target: u32,
        nodes: Vec<u32>,
        edges: Vec<u32>,
        cost: Option<f64>,
    ) -> Row {
        let graph = &prepared.graph;
        let mut out = row.clone();
        if let Destination::Bind { slot, .. } = &self.plan.destination {
            out[*slot] = Value::Node(NodeValue {
                id: graph.node(target),
                projection: None,
            });
        }
        let RecursiveOutput::Paths {
            rel_slot,
            length_slot,
            cost_slot,
        } = &self.plan.output
        else {
            unreachable!("path rows only in path mode");
        };
        if let Some(slot) = length_slot {
            out[*slot] = Value::Int64(edges.len() as i64);
        }
        if let Some(slot) = cost_slot {
            let cost = cost.unwrap_or_else(|| self.path_cost(prepared, &edges));
            out[*slot] = Value::Double(cost);
        }
        if let Some(slot) = rel_slot {
            let mut path = PathValue {
                nodes: nodes
                    .iter()
                    .map(|&n| NodeValue {
                        id: graph.node(n),
                        projection: self.plan.node_projection.clone(),
                    })
                    .collect(),
                rels: edges
                    .iter()
                    .map(|&e| RelValue {
                        id: graph.rel(e),
                        projection: self.plan.rel_projection.clone(),
                    })
                    .collect(),
            };
            if self.plan.reversed {
                path.nodes.reverse();
                path.rels.reverse();
            }
            out[*slot] = Value::Path(Arc::new(path));
        }
        out
    }

    fn path_cost(&self, prepared: &Prepared, edges: &[u32]) -> f64 {
        prepared
            .weights
            .as_ref()
            .map_or(0.0, |w| edges.iter().map(|&e| w[e as usize]).sum())
    }

    fn next_path_row(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if self.current.is_some() {
                let prepared = self.prepared.clone().expect("prepared");
                if let Some((target, nodes, edges, cost)) = self.next_path(&prepared, ctx)? {
                    let row = &self.current.as_ref().expect("current").0;
                    return Ok(Some(
                        self.path_row(&prepared, row, target, nodes, edges, cost),
                    ));
                }
                match self.current.take() {
                    Some((
                        _,
                        PathStream::Shortest { bfs, .. } | PathStream::AllShortest { bfs, .. },
                    )) => self.spare_bfs = Some(bfs),
                    Some((_, PathStream::LevelWalks { paths, .. })) => release(&paths, &ctx.memory),
                    _ => {}
                }
            }
            let Some(row) = self.input.next(ctx)? else {
                if let Some(bfs) = self.spare_bfs.take() {
                    ctx.search_states.give_back(*bfs);
                }
                return Ok(None);
            };
            let prepared = self.prepare(ctx, row.len())?;
            let Some((source, target)) = self.endpoints(&prepared, &row) else {
                continue;
            };
            let stream = self.start_paths(&prepared, source, target, ctx)?;
            self.current = Some((row, stream));
        }
    }

    // ----- counting mode -----

    fn next_count_row(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some(row) = self.buffered.pop_front() {
                return Ok(Some(row));
            }
            if self.input_done {
                return Ok(None);
            }
            let mut rows = Vec::new();
            while rows.len() < COUNT_CHUNK_ROWS {
                match self.input.next(ctx)? {
                    Some(row) => rows.push(row),
                    None => {
                        self.input_done = true;
                        break;
                    }
                }
            }
            if let Some(first) = rows.first() {
                let prepared = self.prepare(ctx, first.len())?;
                self.count_chunk(&prepared, rows, ctx)?;
            }
        }
    }

    fn count_chunk(
        &mut self,
        prepared: &Arc<Prepared>,
        rows: Vec<Row>,
        ctx: &ExecContext,
    ) -> Result<()> {
        let RecursiveOutput::Counts {
            per_destination, ..
        } = self.plan.output
        else {
            unreachable!()
        };
        let mut tasks: Vec<(u32, Option<u32>)> = rows
            .iter()
            .filter_map(|r| self.endpoints(prepared, r))
            .collect();
        tasks.sort_unstable();
        tasks.dedup();
        let recorder = self.recorder(ctx);
        let request = CountRequest {
            plan: &self.plan,
            graph: &prepared.graph,
            masks: &prepared.masks,
            distance: prepared.distance.as_deref(),
            engine: &ctx.settings.engine,
            threads: ctx.threads(),
            workers: &ctx.workers,
            interrupt: &ctx.interrupt,
            memory: &ctx.memory,
            recorder: &recorder,
            per_destination,
            states: &ctx.search_states,
        };
        let results = count_tasks(&request, &tasks, &mut self.backward)?;
        for row in rows {
            let Some(key) = self.endpoints(prepared, &row) else {
                continue;
            };
            let index = tasks
                .binary_search(&key)
                .expect("every row's endpoints were counted");
            let (total, by_destination) = &results[index];
            if per_destination {
                for (node, stats) in by_destination {
                    self.buffered
                        .push_back(self.count_row(prepared, &row, Some(*node), stats)?);
                }
            } else if total.count > 0 {
                self.buffered
                    .push_back(self.count_row(prepared, &row, None, total)?);
            }
        }
        Ok(())
    }

    fn count_row(
        &self,
        prepared: &Prepared,
        row: &Row,
        destination: Option<u32>,
        stats: &PathStats,
    ) -> Result<Row> {
        let RecursiveOutput::Counts {
            count_slot,
            length_sum_slot,
            length_min_slot,
            length_max_slot,
            ..
        } = &self.plan.output
        else {
            unreachable!()
        };
        let mut out = row.clone();
        if let (Some(node), Destination::Bind { slot, .. }) = (destination, &self.plan.destination)
        {
            out[*slot] = Value::Node(NodeValue {
                id: prepared.graph.node(node),
                projection: None,
            });
        }
        out[*count_slot] = Value::Int64(stats.count as i64);
        if let Some(slot) = length_sum_slot {
            out[*slot] = Value::Int64(stats.length_sum_i64()?);
        }
        if let Some(slot) = length_min_slot {
            out[*slot] = Value::Int64(i64::from(stats.length_min));
        }
        if let Some(slot) = length_max_slot {
            out[*slot] = Value::Int64(i64::from(stats.length_max));
        }
        Ok(out)
    }
}

fn graph_bytes(graph: &Graph) -> u64 {
    match (&graph.forward, &graph.backward) {
        (super::graph::Adjacency::Built { targets, .. }, _) => {
            (targets.len() as u64 * 16) + u64::from(graph.num_nodes()) * 16
        }
        _ => 0,
    }
}

impl Operator for RecursiveJoin {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        let row = match self.plan.output {
            RecursiveOutput::Paths { .. } => self.next_path_row(ctx),
            RecursiveOutput::Counts { .. } => self.next_count_row(ctx),
        }?;
        // A traversal that met a damaged block read its nodes as edgeless: no row of it is
        // returned, the query fails with the corruption instead.
        if let Some(prepared) = &self.prepared {
            prepared.graph.check_corruption()?;
        }
        Ok(row)
    }
}
