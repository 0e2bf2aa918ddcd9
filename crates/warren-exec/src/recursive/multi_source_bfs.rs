//! Bit-parallel multi-source BFS: up to 64 sources (lanes) share one sweep over the adjacency.
//! Every node has three lane words (8 to 64 bits, see `lanes`) — `seen` (lanes that reached
//! it), `frontier` (lanes that reached it at the previous level) and `next` — so one edge visit
//! moves the frontier of all lanes at once, and sources whose searches overlap (most sources, on small-world graphs) pay
//! for the shared part once. It answers SHORTEST path lengths and counts (one path per
//! destination), the common "how far is everyone from these sources" question.
//!
//! Each level runs in two phases of morsels: *expand* (top-down over the frontier's out-edges
//! with `fetch_or`, or bottom-up: each node with an in-edge not yet seen by every lane ORs its
//! in-neighbours' frontier words and stops once all lanes are covered) and *commit* (the new
//! words join `seen`, destinations are counted per lane, and the old frontier words are
//! cleared). The frontier words are double-buffered, so a level's frontier is read while the
//! next is built. A top-down level with many out-edges expands in two phases instead of one,
//! *scatter* and *apply*, through destination bins (`binned_push`): no atomic per edge, and
//! each thread writes a cache-sized range of `next` at a time. Where one morsel is the only
//! writer of the nodes it finds (bottom-up and apply morsels), it commits them itself, and the
//! commit phase only clears the old frontier.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::Instant;

use warren_common::Result;

use super::bfs::{entries, fill_bytes, CountOutput, DENSE_RESET_FRACTION};
use super::binned_push::{self, BinPlan, Bins, FrontierWords};
use super::counters::{LevelCounters, TraversalRecorder};
use super::frontier_morsels::{plan_frontier, FrontierMorsel, MorselBudget};
use warren_storage::adjacency::{AdjacencyView, PlainNeighbours};

use super::graph::Graph;
use super::lane_counter::LaneCounter;
use super::lanes::{full_word, state_bytes_per_node, words, LaneWord, WordArray};
use super::level_pieces::{emptied, LevelPiece, LevelPieces};
use super::masks::Masks;
use super::prefetch::{prefetch, prefetch_adjacency};
use super::scheduler::PhasedSearch;
use super::stats::PathStats;

/// The most sources one sweep carries: the bits of the widest word.
pub const LANES: usize = 64;
/// Top-down switches to bottom-up when the frontier's out-edges exceed the unsettled nodes'
/// in-edges divided by this. Smaller than single-source BFS's 15: a bottom-up scan stops early
/// only once every live lane is found, and a top-down edge costs an atomic `fetch_or`.
const TOP_DOWN_TO_BOTTOM_UP: u64 = 4;
const BOTTOM_UP_TO_TOP_DOWN: u64 = 18;
const BOTTOM_UP_MORSEL_FACTOR: usize = 8;

/// How a sweep runs.
#[derive(Clone, Copy, Debug)]
pub struct SweepConfig {
    pub lower: u32,
    pub upper: u32,
    pub direction_optimizing: bool,
    pub morsel_size: usize,
    pub per_destination: bool,
    /// Frontier entries ahead that the top-down kernel prefetches (0: off).
    pub prefetch_distance: usize,
    /// Top-down levels with at least this many out-edges push through destination bins
    /// (`binned_push`); `None`: every top-down level pushes with `fetch_or`.
    pub binned_edges_min: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Expand,
    /// A binned top-down level's second half: each morsel applies one destination bin.
    Apply,
    Commit,
}

#[derive(Debug, Default)]
struct SweepState {
    lanes: usize,
    /// The word with a bit for every lane.
    full: u64,
    /// Lanes whose frontier is not empty: a lane that found nothing new is finished, and
    /// counts as having seen every node (bottom-up stops looking for it).
    alive: u64,
    level: u32,
    phase: Phase,
    /// Which of the two frontier buffers holds the current frontier.
    active: usize,
    /// Nodes with a non-zero word in the current frontier buffer.
    frontier: Vec<u32>,
    /// Nodes with a non-zero word in the next buffer (after expand).
    next: Vec<u32>,
    /// Every node whose `seen` word is non-zero (to reset), while they are at most one node
    /// in [`DENSE_RESET_FRACTION`]; past that `touched_densely` is set and the list dropped.
    touched: Vec<u32>,
    /// Whether the sweep touched too many nodes to list: its reset clears every `seen` word.
    touched_densely: bool,
    bottom_up: bool,
    /// Whether this top-down level pushes through destination bins.
    binned: bool,
    /// A binned level's scatter pieces, read by its apply morsels.
    scattered: Vec<Piece>,
    /// A binned level's frontier words by frontier position.
    frontier_words: FrontierWords,
    /// The pieces of a level whose expand committed the nodes it found (bottom-up and binned
    /// levels: each node's `seen` word has one writer then), kept for the level's books.
    committed: Vec<Piece>,
    /// The frontier's out-edges, counted after top-down levels only: after a bottom-up level
    /// the direction choice reads the frontier's size alone, and this is 0.
    frontier_out_edges: u64,
    unsettled_in_edges: u64,
    morsels: usize,
    /// A top-down level's morsels: runs of frontier nodes of about equal out-edges, a hub in
    /// slices (`frontier_morsels`).
    top_down: Vec<FrontierMorsel>,
    totals: Vec<PathStats>,
    by_destination: Vec<Vec<(u32, PathStats)>>,
    started: Option<Instant>,
}

#[derive(Debug)]
struct Piece {
    morsel: usize,
    nodes: Vec<u32>,
    lane_counts: [u64; LANES],
    /// Lanes with a bit in the words this morsel committed.
    alive: u64,
    pairs: Vec<(u8, u32)>,
    /// A binned level's scattered edges (scatter morsels only).
    bins: Bins,
    out_edges: u64,
    settled_in_edges: u64,
    counters: LevelCounters,
}

impl Default for Piece {
    fn default() -> Self {
        Self {
            morsel: 0,
            nodes: Vec::new(),
            lane_counts: [0; LANES],
            alive: 0,
            pairs: Vec::new(),
            bins: Bins::default(),
            out_edges: 0,
            settled_in_edges: 0,
            counters: LevelCounters::default(),
        }
    }
}

impl LevelPiece for Piece {
    fn reuse(&mut self, morsel: usize) {
        *self = Piece {
            morsel,
            nodes: emptied(&mut self.nodes),
            pairs: emptied(&mut self.pairs),
            bins: std::mem::take(&mut self.bins),
            ..Piece::default()
        };
    }

    fn held_bytes(&self) -> u64 {
        (self.nodes.capacity() * 4 + self.pairs.capacity() * 8) as u64 + self.bins.held_bytes()
    }
}

/// A reusable sweep over one graph with lane words `W`; its words are sized to the graph once.
pub struct MultiSourceBfs<'g, W: LaneWord> {
    graph: &'g Graph,
    masks: &'g Masks,
    config: SweepConfig,
    recorder: Option<&'g TraversalRecorder>,
    seen: WordArray<W>,
    buffers: [WordArray<W>; 2],
    /// A bit per node that has an in-edge and is not yet seen by every live lane: the nodes
    /// a bottom-up level tests (copied from `Graph::in_edge_bits` at each start, a bit cleared
    /// when its node's commit completes it).
    unsettled: Vec<AtomicU64>,
    bin_plan: BinPlan,
    state: RwLock<SweepState>,
    pieces: LevelPieces<Piece>,
}

impl<'g, W: LaneWord> MultiSourceBfs<'g, W> {
    pub fn new(
        graph: &'g Graph,
        masks: &'g Masks,
        config: SweepConfig,
        recorder: Option<&'g TraversalRecorder>,
    ) -> Self {
        let n = graph.num_nodes() as usize;
        Self {
            graph,
            masks,
            config,
            recorder,
            seen: words(n),
            buffers: [words(n), words(n)],
            unsettled: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            bin_plan: BinPlan::for_graph(graph.num_nodes(), std::mem::size_of::<W>()),
            state: RwLock::new(SweepState::default()),
            pieces: LevelPieces::default(),
        }
    }

    /// Bytes one sweep holds for a graph of `nodes` nodes.
    pub fn bytes(nodes: u32) -> u64 {
        u64::from(nodes) * state_bytes_per_node(W::LANES)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, SweepState> {
        self.state.read().expect("sweep state lock")
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, SweepState> {
        self.state.write().expect("sweep state lock")
    }

    fn reset(&self, state: &mut SweepState) {
        if state.touched_densely {
            // SAFETY: a reset runs in a sweep's `start`, under the state's write lock, which
            // every `process` call holds for reading, and a sweep is lent to one task at a
            // time: nothing else reads or writes the words now.
            unsafe { fill_bytes(&self.seen, 0) };
            debug_assert!(self.seen.iter().all(|word| word.get() == 0));
        } else {
            for &v in &state.touched {
                self.seen[v as usize].set(0);
            }
        }
        state.touched_densely = false;
        for &v in &state.frontier {
            self.buffers[state.active][v as usize].set(0);
        }
        state.touched.clear();
        state.frontier.clear();
        state.next.clear();
        self.pieces.recycle(std::mem::take(&mut state.scattered));
        self.pieces.recycle(std::mem::take(&mut state.committed));
        self.pieces.with_unfinished(|_| ());
    }

    /// Adds `nodes` (whose `seen` words just became non-zero) to the touched list, or, once
    /// the list would pass one node in [`DENSE_RESET_FRACTION`], drops it for a dense reset:
    /// a list of most nodes costs more to grow (reallocations into fresh pages, 15 ms at scale
    /// 22) than one `memset` of the words (OPTIMIZATION_LOG 231).
    fn note_touched(&self, state: &mut SweepState, nodes: &[u32]) {
        if state.touched_densely {
            return;
        }
        let limit = self.seen.len() / DENSE_RESET_FRACTION;
        if state.touched.len() + nodes.len() > limit {
            state.touched_densely = true;
            state.touched = Vec::new();
        } else {
            state.touched.extend_from_slice(nodes);
        }
    }

    /// Morsels of the phase about to run (0: the sweep is over).
    fn plan_phase(&self, state: &mut SweepState) -> usize {
        let morsel = self.config.morsel_size.max(1);
        state.morsels = match state.phase {
            Phase::Expand => {
                if state.frontier.is_empty() || state.level > self.config.upper {
                    return 0;
                }
                self.choose_direction(state);
                state.binned = !state.bottom_up && self.binned_level(state);
                state.started = Some(Instant::now());
                if state.bottom_up {
                    (self.graph.num_nodes() as usize).div_ceil(morsel * BOTTOM_UP_MORSEL_FACTOR)
                } else {
                    let mut budget = MorselBudget::for_morsel_size(morsel, true);
                    if state.binned {
                        budget = binned_push::scatter_budget(budget, state.frontier_out_edges);
                        let len = state.frontier.len();
                        state.frontier_words.resize(len);
                    }
                    let forward = self.graph.forward.view();
                    plan_frontier(&state.frontier, &forward, budget, &mut state.top_down);
                    state.top_down.len()
                }
            }
            Phase::Apply => self.bin_plan.bins(),
            Phase::Commit => {
                Self::commit_morsels(state, morsel) + state.frontier.len().div_ceil(morsel)
            }
        };
        state.morsels
    }

    /// Whether this level's expand commits the nodes it finds: bottom-up, each node's words
    /// are read and written by the one morsel that owns it; binned, by the bin that owns it.
    /// A direct top-down level reads `seen` of any node while it expands, so it commits after.
    fn commits_in_expand(state: &SweepState) -> bool {
        state.bottom_up || state.binned
    }

    /// The commit phase's morsels that commit found nodes (the others clear the old frontier).
    fn commit_morsels(state: &SweepState, morsel_size: usize) -> usize {
        if Self::commits_in_expand(state) {
            0
        } else {
            state.next.len().div_ceil(morsel_size)
        }
    }

    /// Whether this top-down level pushes through destination bins: enough out-edges, within
    /// the pairs' bound, and every out-edge followed from every frontier node.
    fn binned_level(&self, state: &SweepState) -> bool {
        let (out_edges, frontier) = (state.frontier_out_edges, state.frontier.len());
        let nodes = self.graph.num_nodes();
        self.masks.unfiltered_at(state.level)
            && self
                .config
                .binned_edges_min
                .is_some_and(|min| self.bin_plan.binned(out_edges, frontier, nodes, min))
    }

    fn choose_direction(&self, state: &mut SweepState) {
        if !self.config.direction_optimizing {
            return;
        }
        let n = u64::from(self.graph.num_nodes());
        // A bottom-up level visits every node: worth it only for a large frontier.
        let large = (state.frontier.len() as u64) >= n / BOTTOM_UP_TO_TOP_DOWN;
        state.bottom_up = large
            && (state.bottom_up
                || state.frontier_out_edges > state.unsettled_in_edges / TOP_DOWN_TO_BOTTOM_UP);
    }

    fn expand(&self, state: &SweepState, morsel: usize, piece: &mut Piece) {
        let current = &self.buffers[state.active][..];
        let next = &self.buffers[1 - state.active][..];
        if state.bottom_up {
            let size = self.config.morsel_size.max(1) * BOTTOM_UP_MORSEL_FACTOR;
            let start = morsel * size;
            let end = (start + size).min(self.graph.num_nodes() as usize);
            let scan = Scan {
                adjacency: self.graph.backward.view(),
                unsettled: &self.unsettled,
                masks: self.masks,
                level: state.level,
                prefetch_distance: self.config.prefetch_distance,
                words: PhantomData,
            };
            let settled = state.full & !state.alive;
            scan.bottom_up(
                start as u32..end as u32,
                (state.full, settled),
                &self.seen,
                current,
                next,
                piece,
            );
            self.commit_found(state, size.is_multiple_of(64), piece);
        } else if state.binned {
            self.scatter(state, morsel, piece);
        } else {
            let work = &state.top_down[morsel];
            let scan = Scan {
                adjacency: self.graph.forward.view(),
                unsettled: &[],
                masks: self.masks,
                level: state.level,
                prefetch_distance: self.config.prefetch_distance,
                words: PhantomData,
            };
            scan.top_down(
                (&state.frontier[work.nodes.clone()], work),
                &self.seen,
                current,
                next,
                piece,
            );
            // After a bottom-up level the direction depends on the frontier's size alone
            // (`choose_direction`): the out-degrees are read after top-down levels only.
            self.degrees(piece);
        }
    }

    /// A binned level's first half: the morsel's out-edges written into destination bins.
    fn scatter(&self, state: &SweepState, morsel: usize, piece: &mut Piece) {
        let work = &state.top_down[morsel];
        let current = &self.buffers[state.active][..];
        let sources = &state.frontier[work.nodes.clone()];
        state
            .frontier_words
            .record((sources, work.nodes.start), current);
        let adjacency = self.graph.forward.view();
        let frontier = (&state.frontier[..], work);
        piece.counters.edges_scanned +=
            piece
                .bins
                .scatter_morsel(&self.bin_plan, &adjacency, frontier);
    }

    /// A binned level's second half: the pairs of bin `morsel` from every scatter piece
    /// applied to the bin's range of `next`, whose only writer this morsel is.
    fn apply(&self, state: &SweepState, morsel: usize, piece: &mut Piece) {
        let next = &self.buffers[1 - state.active][..];
        let pairs = state
            .scattered
            .iter()
            .map(|scattered| scattered.bins.pairs(morsel));
        binned_push::apply(
            (&self.bin_plan, morsel),
            pairs,
            &state.frontier_words,
            (&self.seen[..], next),
            &mut piece.nodes,
        );
        // Bins are ranges of at least 64 nodes, starting at multiples of 64.
        self.commit_found(state, true, piece);
        self.degrees(piece);
    }

    /// Out-degrees of the nodes a morsel added to the next frontier (the direction choice and
    /// the binned push read them).
    fn degrees(&self, piece: &mut Piece) {
        if !self.config.direction_optimizing && self.config.binned_edges_min.is_none() {
            return;
        }
        let forward = self.graph.forward.view();
        piece.out_edges = piece.nodes.iter().map(|&v| forward.degree(v)).sum();
    }

    /// Commits new words into `seen` and counts destinations per lane, or clears old frontier
    /// words (morsels past the new list's).
    fn commit(&self, state: &SweepState, morsel: usize, piece: &mut Piece) {
        let size = self.config.morsel_size.max(1);
        let next_morsels = Self::commit_morsels(state, size);
        if morsel >= next_morsels {
            let start = (morsel - next_morsels) * size;
            let end = (start + size).min(state.frontier.len());
            let current = &self.buffers[state.active];
            for &u in &state.frontier[start..end] {
                current[u as usize].set(0);
            }
            return;
        }
        let start = morsel * size;
        let end = (start + size).min(state.next.len());
        self.commit_nodes(state, &state.next[start..end], false, piece);
    }

    /// Takes settled node `v` out of the nodes bottom-up levels test.
    #[inline]
    fn settle(&self, v: u32, owned: bool) {
        let word = &self.unsettled[(v / 64) as usize];
        let keep = !(1u64 << (v % 64));
        if owned {
            word.store(word.load(Ordering::Relaxed) & keep, Ordering::Relaxed);
        } else {
            word.fetch_and(keep, Ordering::Relaxed);
        }
    }

    /// Commits the nodes a bottom-up or binned morsel found, right after finding them.
    /// `whole_words`: the morsel's nodes are whole words of 64 nodes (see `commit_nodes`).
    fn commit_found(&self, state: &SweepState, whole_words: bool, piece: &mut Piece) {
        let nodes = std::mem::take(&mut piece.nodes);
        self.commit_nodes(state, &nodes, whole_words, piece);
        piece.nodes = nodes;
    }

    /// ORs the next words of `nodes` into `seen`, counts destinations per lane and the
    /// in-edges of nodes every live lane has now seen.
    ///
    /// `owned`: this morsel alone writes the `unsettled` words of `nodes` in this phase (a
    /// bottom-up morsel of whole words, or a bin); else bits are cleared atomically.
    fn commit_nodes(&self, state: &SweepState, nodes: &[u32], owned: bool, piece: &mut Piece) {
        let next = &self.buffers[1 - state.active][..];
        let seen_words = &self.seen[..];
        let counting = state.level >= self.config.lower;
        let backward = self.graph.backward.view();
        let mut counter = LaneCounter::default();
        for &v in nodes {
            let bits = next[v as usize].get();
            piece.alive |= bits;
            let seen = seen_words[v as usize].get() | bits;
            seen_words[v as usize].set(seen);
            if (seen | !state.alive) & state.full == state.full {
                piece.settled_in_edges += backward.degree(v);
                self.settle(v, owned);
            }
            if counting && self.masks.is_destination(v) {
                if self.config.per_destination {
                    record_lanes(bits, v, piece);
                } else {
                    counter.add(bits);
                }
            }
        }
        counter.add_to(&mut piece.lane_counts);
    }
}

/// Adds one to each lane set in `bits` and records its (lane, node) pair.
#[inline]
fn record_lanes(mut bits: u64, node: u32, piece: &mut Piece) {
    while bits != 0 {
        let lane = bits.trailing_zeros() as usize;
        piece.lane_counts[lane] += 1;
        piece.pairs.push((lane as u8, node));
        bits &= bits - 1;
    }
}

impl<W: LaneWord> PhasedSearch for MultiSourceBfs<'_, W> {
    /// The sources of one sweep, one per lane.
    type Task = Vec<u32>;
    /// Per lane: totals and per-destination stats.
    type Output = Vec<CountOutput>;

    fn start(&self, sources: &Vec<u32>) -> Result<usize> {
        assert!(
            !sources.is_empty() && sources.len() <= W::LANES,
            "a sweep has 1 to {} lanes",
            W::LANES
        );
        let mut state = self.write();
        self.reset(&mut state);
        state.lanes = sources.len();
        state.full = full_word(sources.len());
        state.alive = state.full;
        state.level = 1;
        state.phase = Phase::Expand;
        state.active = 0;
        state.bottom_up = false;
        state.totals = vec![PathStats::default(); sources.len()];
        state.by_destination = vec![Vec::new(); sources.len()];
        let forward = self.graph.forward.view();
        state.frontier_out_edges = 0;
        state.unsettled_in_edges = self.graph.backward.view().num_entries();
        for (word, &bits) in self.unsettled.iter().zip(self.graph.in_edge_bits()) {
            word.store(bits, Ordering::Relaxed);
        }
        for (lane, &source) in sources.iter().enumerate() {
            assert!(
                source < self.graph.num_nodes(),
                "a source is a node of the graph"
            );
            let bit = 1u64 << lane;
            let before = self.seen[source as usize].or(bit);
            self.buffers[0][source as usize].or(bit);
            if before == 0 {
                self.note_touched(&mut state, &[source]);
                state.frontier.push(source);
                state.frontier_out_edges += forward.degree(source);
            }
        }
        if let Some(recorder) = self.recorder {
            recorder.add_sources(sources.len() as u64);
        }
        Ok(self.plan_phase(&mut state))
    }

    fn process(&self, morsel: usize) -> Result<()> {
        let state = self.read();
        let mut piece = self.pieces.take(morsel);
        match state.phase {
            Phase::Expand => self.expand(&state, morsel, &mut piece),
            Phase::Apply => self.apply(&state, morsel, &mut piece),
            Phase::Commit => self.commit(&state, morsel, &mut piece),
        }
        if let Some(recorder) = self.recorder {
            recorder.merge(state.level, piece.counters);
        }
        drop(state);
        self.pieces.hand_in(piece);
        Ok(())
    }

    fn advance(&self) -> Result<usize> {
        let mut state = self.write();
        let mut pieces = self.pieces.take_done();
        pieces.sort_unstable_by_key(|p| p.morsel);
        let ended = match state.phase {
            Phase::Expand if state.binned => {
                // The scatter pieces stay for the apply morsels to read.
                state.scattered = std::mem::take(&mut pieces);
                state.phase = Phase::Apply;
                Ok(())
            }
            Phase::Expand | Phase::Apply => {
                self.pieces.recycle(std::mem::take(&mut state.scattered));
                let mut next = Vec::with_capacity(pieces.iter().map(|p| p.nodes.len()).sum());
                for piece in &pieces {
                    next.extend_from_slice(&piece.nodes);
                }
                state.frontier_out_edges = pieces.iter().map(|p| p.out_edges).sum();
                state.next = next;
                state.phase = Phase::Commit;
                if Self::commits_in_expand(&state) {
                    // Their books (lane counts, live lanes, settled in-edges) end the level.
                    state.committed = std::mem::take(&mut pieces);
                }
                Ok(())
            }
            Phase::Commit => {
                pieces.append(&mut state.committed);
                let ended = self.end_level(&mut state, &pieces);
                state.phase = Phase::Expand;
                ended
            }
        };
        self.pieces.recycle(pieces);
        ended?;
        Ok(self.plan_phase(&mut state))
    }

    fn finish(&self) -> Result<Vec<CountOutput>> {
        let mut state = self.write();
        let totals = std::mem::take(&mut state.totals);
        let mut by_destination = std::mem::take(&mut state.by_destination);
        for list in &mut by_destination {
            list.sort_unstable_by_key(|(v, _)| *v);
        }
        Ok(totals.into_iter().zip(by_destination).collect())
    }
}

impl<W: LaneWord> MultiSourceBfs<'_, W> {
    /// Books a committed level: per-lane stats, the new frontier, the direction inputs.
    fn end_level(&self, state: &mut SweepState, pieces: &[Piece]) -> Result<()> {
        let level = state.level;
        let mut lane_counts = [0u64; LANES];
        state.alive = pieces.iter().fold(0, |alive, piece| alive | piece.alive);
        for piece in pieces {
            for (total, count) in lane_counts.iter_mut().zip(piece.lane_counts) {
                *total += count;
            }
            for &(lane, node) in &piece.pairs {
                let mut stats = PathStats::default();
                stats.add(level, 1)?;
                state.by_destination[lane as usize].push((node, stats));
            }
            state.unsettled_in_edges = state
                .unsettled_in_edges
                .saturating_sub(piece.settled_in_edges);
        }
        for (total, &count) in state.totals.iter_mut().zip(&lane_counts[..state.lanes]) {
            if count > 0 {
                total.add(level, count)?;
            }
        }
        if let Some(recorder) = self.recorder {
            let elapsed = state.started.map(|s| s.elapsed()).unwrap_or_default();
            recorder.level(level, state.frontier.len() as u64, state.bottom_up, elapsed);
        }
        let next = std::mem::take(&mut state.next);
        // A node enters `next` with a non-zero word, which its commit ORed into `seen`: every
        // one of them is touched now.
        debug_assert!(next.iter().all(|&v| self.seen[v as usize].get() != 0));
        self.note_touched(state, &next);
        state.frontier = next;
        state.active = 1 - state.active;
        state.level += 1;
        Ok(())
    }
}

/// The expand kernels over one adjacency (forward for top-down, backward for bottom-up).
struct Scan<'a, W> {
    adjacency: AdjacencyView<'a>,
    /// Bottom-up: the nodes to test (`MultiSourceBfs::unsettled`); top-down: empty.
    unsettled: &'a [AtomicU64],
    masks: &'a Masks,
    level: u32,
    prefetch_distance: usize,
    words: PhantomData<W>,
}

impl<W: LaneWord> Scan<'_, W> {
    #[inline]
    fn expands(&self, u: u32) -> bool {
        self.level == 1 || self.masks.expandable(u)
    }

    /// Pushes each frontier node's word to its out-neighbours' next words. Without a rel
    /// filter or a node filter that applies, and on a view that needs no checks, a kernel over
    /// the flat neighbour array runs instead.
    fn top_down(
        &self,
        frontier: (&[u32], &FrontierMorsel),
        seen: &[W],
        current: &[W],
        next: &[W],
        piece: &mut Piece,
    ) {
        let unfiltered = self.masks.unfiltered_at(self.level);
        let plain = unfiltered
            .then(|| {
                self.adjacency
                    .plain_neighbours_for(frontier.0.iter().copied())
            })
            .flatten();
        match plain {
            Some(plain) => top_down_unfiltered(
                (plain, &self.adjacency, self.prefetch_distance),
                frontier,
                seen,
                current,
                next,
                piece,
            ),
            None => self.top_down_filtered(frontier, seen, current, next, piece),
        }
    }

    /// [`Scan::top_down`] through the masks and the checked reads.
    fn top_down_filtered(
        &self,
        (frontier, work): (&[u32], &FrontierMorsel),
        seen: &[W],
        current: &[W],
        next: &[W],
        piece: &mut Piece,
    ) {
        for (position, &u) in frontier.iter().enumerate() {
            if self.prefetch_distance > 0 {
                prefetch_adjacency(&self.adjacency, frontier, position, self.prefetch_distance);
            }
            if !self.expands(u) {
                continue;
            }
            let word = current[u as usize].get();
            let every_edge = self.masks.edges.is_none();
            let (neighbours, edges) = entries(&self.adjacency, u, every_edge);
            let (neighbours, edges) = work.slice(neighbours, edges);
            piece.counters.edges_scanned += neighbours.len() as u64;
            for (i, &v) in neighbours.iter().enumerate() {
                // Rel ids are read only under a rel filter.
                if !every_edge && !self.masks.follows(edges[i]) {
                    continue;
                }
                let v = v as usize;
                let bits = word & !seen[v].get();
                if bits == 0 || next[v].get() & bits == bits {
                    continue;
                }
                if next[v].or(bits) == 0 {
                    piece.nodes.push(v as u32);
                }
            }
        }
    }

    /// Each node not yet seen by every lane ORs its in-neighbours' frontier words, stopping
    /// once every lane is covered. Without a rel filter or a node filter that applies, and on
    /// a view that needs no checks, a kernel over the flat neighbour array runs instead.
    fn bottom_up(
        &self,
        nodes: std::ops::Range<u32>,
        lanes: (u64, u64),
        seen: &[W],
        current: &[W],
        next: &[W],
        piece: &mut Piece,
    ) {
        let unfiltered = self.masks.unfiltered_at(self.level);
        let plain = unfiltered
            .then(|| self.adjacency.plain_neighbours_in(nodes.clone()))
            .flatten();
        match plain {
            Some(plain) => bottom_up_unfiltered(
                (plain, self.unsettled),
                nodes,
                lanes,
                seen,
                current,
                next,
                piece,
            ),
            None => self.bottom_up_filtered(nodes, lanes, seen, current, next, piece),
        }
    }

    /// [`Scan::bottom_up`] through the masks and the checked reads.
    fn bottom_up_filtered(
        &self,
        nodes: std::ops::Range<u32>,
        (full, settled): (u64, u64),
        seen: &[W],
        current: &[W],
        next: &[W],
        piece: &mut Piece,
    ) {
        for v in nodes {
            // Lanes that are finished count as seen.
            let seen_v = seen[v as usize].get() | settled;
            if seen_v == full {
                continue;
            }
            let mut reached = 0u64;
            let every_edge = self.masks.edges.is_none();
            let (neighbours, edges) = entries(&self.adjacency, v, every_edge);
            // Edges scanned: all of them unless every lane is found first (counted once per
            // node, not stored per edge).
            let mut scanned = neighbours.len();
            for (i, &u) in neighbours.iter().enumerate() {
                let word = current[u as usize].get();
                if word == 0 || (!every_edge && !self.masks.follows(edges[i])) || !self.expands(u) {
                    continue;
                }
                reached |= word;
                if reached | seen_v == full {
                    scanned = i + 1;
                    break;
                }
            }
            piece.counters.edges_scanned += scanned as u64;
            let bits = reached & !seen_v;
            if bits != 0 {
                // Only this thread writes v's next word in a bottom-up level.
                next[v as usize].set(bits);
                piece.nodes.push(v);
            }
        }
    }
}

/// The top-down kernel when every out-edge is followed and every frontier node expands: each
/// frontier node's word pushed to its out-neighbours' next words from the flat neighbour
/// array, with no mask or expansion test per edge or node. `adjacency` serves the prefetch
/// only. Kept out of line, so that its loop gets the registers to itself.
#[inline(never)]
fn top_down_unfiltered<W: LaneWord>(
    (plain, adjacency, prefetch_distance): (PlainNeighbours<'_>, &AdjacencyView<'_>, usize),
    (frontier, work): (&[u32], &FrontierMorsel),
    seen: &[W],
    current: &[W],
    next: &[W],
    piece: &mut Piece,
) {
    // One length for both word arrays: one bounds check per edge serves both reads.
    let nodes = seen.len();
    let next = &next[..nodes];
    let mut scanned = 0u64;
    for (position, &u) in frontier.iter().enumerate() {
        if prefetch_distance > 0 {
            prefetch_adjacency(adjacency, frontier, position, prefetch_distance);
        }
        let word = current[u as usize].get();
        let (neighbours, _) = work.slice(plain.of(u), &[]);
        scanned += neighbours.len() as u64;
        for (i, &v) in neighbours.iter().enumerate() {
            // The words of the neighbour `prefetch_distance` ahead in a long list: an atomic
            // `or` orders the loads after it, so without the hint a hub's edges miss one by one.
            if prefetch_distance > 0 {
                if let Some(&ahead) = neighbours.get(i + prefetch_distance) {
                    if let (Some(s), Some(n)) = (seen.get(ahead as usize), next.get(ahead as usize))
                    {
                        prefetch(s);
                        prefetch(n);
                    }
                }
            }
            let v = v as usize;
            let bits = word & !seen[v].get();
            if bits == 0 || next[v].get() & bits == bits {
                continue;
            }
            if next[v].or(bits) == 0 {
                piece.nodes.push(v as u32);
            }
        }
    }
    piece.counters.edges_scanned += scanned;
}

/// The bottom-up kernel when every in-edge is followed and every frontier node expands: per
/// node of `unsettled` (a bit per node with an in-edge not yet seen by every lane) still
/// missing a live lane, its in-neighbours' frontier words ORed from the flat neighbour array,
/// with no word, mask or expansion test per edge. Nodes without in-edges and nodes already
/// settled are skipped 64 at a time. Kept out of line, so that its loop gets the registers
/// to itself.
#[inline(never)]
fn bottom_up_unfiltered<W: LaneWord>(
    (plain, unsettled): (PlainNeighbours<'_>, &[AtomicU64]),
    nodes: std::ops::Range<u32>,
    (full, settled): (u64, u64),
    seen: &[W],
    current: &[W],
    next: &[W],
    piece: &mut Piece,
) {
    // Lanes that are finished count as seen.
    let live = full & !settled;
    let mut scanned = 0u64;
    let mut word_start = nodes.start & !63;
    while word_start < nodes.end {
        let mut candidates = unsettled[(word_start / 64) as usize].load(Ordering::Relaxed);
        if word_start < nodes.start {
            candidates &= u64::MAX << (nodes.start - word_start);
        }
        if nodes.end - word_start < 64 {
            candidates &= (1u64 << (nodes.end - word_start)) - 1;
        }
        while candidates != 0 {
            let v = word_start + candidates.trailing_zeros();
            candidates &= candidates - 1;
            let missing = live & !seen[v as usize].get();
            if missing == 0 {
                continue;
            }
            let (reached, edges) = gather_missing(plain.of(v), current, missing);
            scanned += edges as u64;
            let bits = reached & missing;
            if bits != 0 {
                // Only this thread writes v's next word in a bottom-up level.
                next[v as usize].set(bits);
                piece.nodes.push(v);
            }
        }
        word_start += 64;
    }
    piece.counters.edges_scanned += scanned;
}

/// ORs the frontier words of `neighbours` until every lane of `missing` is reached; returns the
/// lanes reached (of `missing`) and the edges read. Per edge only the lanes still missing are
/// kept (one `and` with the word's complement), and the edges read come from the iterator's
/// position at the exit, not from an index kept per edge.
#[inline(always)]
fn gather_missing<W: LaneWord>(neighbours: &[u32], current: &[W], missing: u64) -> (u64, usize) {
    let mut remaining = missing;
    let mut rest = neighbours.iter();
    for &u in rest.by_ref() {
        remaining &= !current[u as usize].get();
        if remaining == 0 {
            break;
        }
    }
    (missing & !remaining, neighbours.len() - rest.len())
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8};
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::context::Interrupt;
    use crate::recursive::masks::{Bitset, DestinationMask};
    use crate::recursive::scheduler::run_tasks;

    /// Shortest distances from `source` by a plain queue BFS (the reference).
    fn distances(nodes: u32, edges: &[(u32, u32)], source: u32) -> Vec<Option<u32>> {
        let mut distance = vec![None; nodes as usize];
        distance[source as usize] = Some(0);
        let mut queue = VecDeque::from([source]);
        while let Some(u) = queue.pop_front() {
            let d = distance[u as usize].expect("queued nodes have a distance");
            for &(_, v) in edges.iter().filter(|(from, _)| *from == u) {
                if distance[v as usize].is_none() {
                    distance[v as usize] = Some(d + 1);
                    queue.push_back(v);
                }
            }
        }
        distance
    }

    /// Per source: (destinations, summed lengths) of the shortest paths of 1..=upper edges.
    fn reference(
        nodes: u32,
        edges: &[(u32, u32)],
        sources: &[u32],
        upper: u32,
    ) -> Vec<(u64, u128)> {
        sources
            .iter()
            .map(|&s| {
                let lengths: Vec<u32> = distances(nodes, edges, s)
                    .into_iter()
                    .flatten()
                    .filter(|&d| d >= 1 && d <= upper)
                    .collect();
                (
                    lengths.len() as u64,
                    lengths.iter().map(|&d| u128::from(d)).sum(),
                )
            })
            .collect()
    }

    /// The search: upper bound, direction-optimizing, morsel size, whether the masks are given
    /// as (full) sets, which sends top-down and bottom-up levels through the filtered kernels
    /// instead of the unfiltered ones, whether per-destination pairs are kept (else lanes are
    /// counted by the bit-sliced counter alone), and whether every top-down level that may be
    /// binned is (a threshold of 0 out-edges).
    type Search = (u32, bool, usize, bool, bool, bool);

    /// The sweeps' answer with lane words `W`, `lanes` sources per sweep and `sweeps` at once.
    fn sweep<W: LaneWord>(
        nodes: u32,
        edges: &[(u32, u32)],
        sources: &[u32],
        (lanes, sweeps, threads): (usize, usize, usize),
        (upper, direction_optimizing, morsel_size, filtered, per_destination, binned): Search,
    ) -> Vec<(u64, u128)> {
        let graph = Graph::from_edges(nodes, edges);
        let every = |bits: usize| filtered.then(|| Arc::new(Bitset::full(bits)));
        let masks = Masks {
            destination: DestinationMask::Set(Arc::new(Bitset::full(nodes as usize))),
            intermediate: every(nodes as usize),
            edges: every(edges.len()),
        };
        let config = SweepConfig {
            lower: 1,
            upper,
            direction_optimizing,
            morsel_size,
            per_destination,
            prefetch_distance: 2,
            binned_edges_min: binned.then_some(0),
        };
        let slots: Vec<MultiSourceBfs<'_, W>> = (0..sweeps)
            .map(|_| MultiSourceBfs::new(&graph, &masks, config, None))
            .collect();
        let batches: Vec<Vec<u32>> = sources.chunks(lanes).map(<[u32]>::to_vec).collect();
        let interrupt = Interrupt::new(None, Arc::new(AtomicBool::new(false)));
        let workers = crate::workers::WorkerPool::new();
        let outputs =
            run_tasks(&slots, &batches, threads, &workers, &interrupt).expect("sweeps run");
        outputs
            .into_iter()
            .flatten()
            .map(|(totals, by_destination)| {
                let expected = if per_destination { totals.count } else { 0 };
                assert_eq!(
                    by_destination.len() as u64,
                    expected,
                    "one path per destination, when asked"
                );
                (totals.count, totals.length_sum)
            })
            .collect()
    }

    fn graphs() -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
        (1u32..90).prop_flat_map(|nodes| {
            let edge = (0..nodes, 0..nodes);
            (Just(nodes), proptest::collection::vec(edge, 0..400))
        })
    }

    /// Runs the sweeps for every lane width that holds `lanes` and compares with the reference.
    fn check_widths(
        nodes: u32,
        edges: &[(u32, u32)],
        sources: &[u32],
        run: (usize, usize, usize),
        search: Search,
    ) -> Result<(), TestCaseError> {
        let expected = reference(nodes, edges, sources, search.0);
        let lanes = run.0;
        if lanes <= 8 {
            prop_assert_eq!(
                &sweep::<AtomicU8>(nodes, edges, sources, run, search),
                &expected
            );
        }
        if lanes <= 16 {
            prop_assert_eq!(
                &sweep::<AtomicU16>(nodes, edges, sources, run, search),
                &expected
            );
        }
        if lanes <= 32 {
            prop_assert_eq!(
                &sweep::<AtomicU32>(nodes, edges, sources, run, search),
                &expected
            );
        }
        prop_assert_eq!(
            &sweep::<AtomicU64>(nodes, edges, sources, run, search),
            &expected
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Every lane width, with full and partial sweeps, one or more sweeps at once, one or
        /// two threads, top-down or direction-optimizing, gives each source the reference's
        /// shortest lengths.
        #[test]
        fn every_lane_width_matches_the_reference(
            (nodes, edges) in graphs(),
            picks in proptest::collection::vec(0u32..1000, 1..150),
            lanes_pick in prop_oneof![Just(1usize), Just(3), Just(8), Just(16), Just(21), Just(32), Just(64)],
            sweeps in 1usize..4,
            threads in 1usize..3,
            upper in 1u32..12,
            direction_optimizing in proptest::bool::ANY,
            morsel_size in prop_oneof![Just(1usize), Just(4), Just(2048)],
            filtered in proptest::bool::ANY,
            per_destination in proptest::bool::ANY,
            binned in proptest::bool::ANY,
        ) {
            let sources: Vec<u32> = picks.iter().map(|p| p % nodes).collect();
            check_widths(
                nodes,
                &edges,
                &sources,
                (lanes_pick, sweeps, threads),
                (upper, direction_optimizing, morsel_size, filtered, per_destination, binned),
            )?;
        }

        /// Bottom-up from the first level on (dense graphs, direction-optimizing), through
        /// the unfiltered kernel and the filtered one, gives the reference's lengths.
        #[test]
        fn both_bottom_up_kernels_match_the_reference(
            nodes in 2u32..40,
            density in 2usize..8,
            seed in proptest::collection::vec((0u32..1000, 0u32..1000), 0..40),
            lanes_pick in prop_oneof![Just(5usize), Just(8), Just(64)],
            threads in 1usize..3,
            filtered in proptest::bool::ANY,
            per_destination in proptest::bool::ANY,
            binned in proptest::bool::ANY,
        ) {
            let mut edges: Vec<(u32, u32)> = (0..nodes)
                .flat_map(|v| (1..=density as u32).map(move |d| (v, (v * 7 + d * d) % nodes)))
                .collect();
            edges.extend(seed.iter().map(|&(a, b)| (a % nodes, b % nodes)));
            let sources: Vec<u32> = (0..nodes.min(70)).collect();
            check_widths(
                nodes,
                &edges,
                &sources,
                (lanes_pick, 1, threads),
                (12, true, 3, filtered, per_destination, binned),
            )?;
        }
    }

    #[test]
    fn a_slot_resets_after_sparse_and_dense_sweeps_alike() {
        // A cycle of 400 nodes (a sweep from it touches every one of them: a dense reset) and
        // a path 400 -> 401 -> 402 (a sweep from it touches three of 403: a listed reset). One
        // slot runs the batches in turn: path, path, cycle, path, cycle.
        let mut edges: Vec<(u32, u32)> = (0..400).map(|v| (v, (v + 1) % 400)).collect();
        edges.extend([(400, 401), (401, 402)]);
        let sources = [400, 401, 400, 402, 0, 7, 401, 400, 3, 399];
        let expected = reference(403, &edges, &sources, 500);
        assert_eq!(expected[4], (399, 399 * 400 / 2));
        for threads in [1, 2] {
            let run = (2, 1, threads);
            let search = (500, true, 64, false, false, false);
            let got = sweep::<AtomicU64>(403, &edges, &sources, run, search);
            assert_eq!(got, expected, "{threads} thread(s)");
        }
    }

    #[test]
    fn a_path_graph_from_sixty_four_sources() {
        // 0 -> 1 -> ... -> 99: source s reaches 99 - s nodes at lengths 1..=99 - s.
        let edges: Vec<(u32, u32)> = (0..99).map(|v| (v, v + 1)).collect();
        let sources: Vec<u32> = (0..64).collect();
        let expected = reference(100, &edges, &sources, 200);
        assert_eq!(expected[0], (99, 99 * 100 / 2));
        for (lanes, threads) in [(64, 2), (32, 1), (16, 2), (8, 2)] {
            let run = (lanes, 2, threads);
            let search = (200, true, 3, false, lanes != 32, lanes == 64);
            let got = match lanes {
                64 => sweep::<AtomicU64>(100, &edges, &sources, run, search),
                32 => sweep::<AtomicU32>(100, &edges, &sources, run, search),
                16 => sweep::<AtomicU16>(100, &edges, &sources, run, search),
                _ => sweep::<AtomicU8>(100, &edges, &sources, run, search),
            };
            assert_eq!(got, expected, "{lanes} lanes");
        }
    }
}
