//! Breadth-first search from one source for SHORTEST and ALL SHORTEST, level-synchronous and
//! parallel: each level's frontier is cut into morsels that many threads expand at once, claiming
//! nodes with compare-and-swap on the level array. Levels run top-down (from the frontier's
//! out-edges) or, when the frontier's edges outnumber the unvisited nodes' in-edges, bottom-up
//! (each unvisited node looks for a parent among its in-edges) — direction-optimizing BFS.
//!
//! Three modes: `Lengths` (distances only), `PathCounts` (also the number of shortest paths per
//! node, pushed with atomic adds, or through destination bins on a level with many out-edges)
//! and `Parents` (one parent per node, for SHORTEST paths). Parents
//! are chosen deterministically, as a sequential search finds them first, whatever the thread
//! count: each level scans the (rel pair, direction) steps one after another, within a step the
//! frontier in discovery order, and within a node its rels in rel order. Threads race with
//! `fetch_min` on a (step, frontier rank) key per node, so the smallest key wins, and the next
//! frontier is the winners in morsel order — the discovery order.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::Instant;

use warren_common::{Error, Result};

use super::binned_push::{self, BinPlan, Bins, FrontierWords};
use super::counters::{LevelCounters, TraversalRecorder};
use super::frontier_bits::{FrontierBits, NextWords};
use super::frontier_morsels::{plan_frontier, FrontierMorsel, MorselBudget};
use warren_storage::adjacency::{AdjacencyView, PlainNeighbours};

use super::auto_k::CACHED_STATES_BYTES;
use super::graph::{Adjacency, Graph};
use super::level_pieces::{emptied, LevelPiece, LevelPieces};
use super::masks::Masks;
use super::parent_sums::{running_sums, sum_parents};
use super::prefetch::{prefetch, prefetch_adjacency};
use super::scheduler::PhasedSearch;
use super::stats::PathStats;
use super::unvisited_bits::UnvisitedBits;

pub const UNREACHED: u32 = u32::MAX;
const UNCLAIMED: u64 = u64::MAX;
/// Top-down switches to bottom-up when the frontier's out-edges exceed the unvisited nodes'
/// in-edges divided by this (Beamer et al. use 15 and 18).
const TOP_DOWN_TO_BOTTOM_UP: u64 = 15;
/// Bottom-up returns to top-down once the frontier shrinks and holds no more than nodes / this.
const BOTTOM_UP_TO_TOP_DOWN: u64 = 18;
/// A `PathCounts` level that would be binned runs bottom-up only when the unvisited nodes'
/// in-edges (which a counting pull reads whole: it cannot stop at a first parent) are fewer
/// than the frontier's out-edges times this: the cost of a binned push's edge (scattered,
/// then applied) in pulled edges (optimization log 213: 2 with a pull that branched on each
/// parent; 227: 4 with the branch-free pull of `parent_sums`).
const BINNED_COUNT_PUSH_COST: u64 = 4;
/// A reset rewrites every node, sequentially, when the last search touched more than one node
/// in this many (a random write per touched node costs more than a cache line of sequential
/// writes: 16 distances); else only the touched nodes.
pub(super) const DENSE_RESET_FRACTION: usize = 16;

/// How many candidates ahead a node-by-node counting pull prefetches in-lists
/// (`BottomUpScan::find_parents_pipelined`).
const PIPELINE_LIST_AHEAD: usize = 16;

/// How many candidates ahead it prefetches the counts of the frontier parents.
const PIPELINE_COUNTS_AHEAD: usize = 8;

/// How many bitmap words ahead a counting pull that prefetches reads a word's heads
/// (`prefetch_word_heads`).
const WORD_HEADS_AHEAD: usize = 2;

/// A counting pull's flat pass sums runs of at most this many in-edges: their running sums
/// (8 bytes an edge) stay in the L1 cache.
const FLAT_RUN_EDGES_MAX: usize = 4096;

/// A word with fewer nodes to test than this is tested node by node: its runs would be short.
const FLAT_WORD_NODES_MIN: u32 = 16;

/// A counting pull sums flat when the unvisited nodes have at least this many in-edges each on
/// average; with fewer (the level after the hubs') a run's set-up costs more than the loop
/// starts it saves.
const FLAT_IN_EDGES_PER_NODE_MIN: u64 = 4;

/// Whether a bottom-up counting level sums runs of nodes flat
/// ([`BottomUpScan::find_parents_flat`]): when the nodes not yet reached have many in-edges
/// each.
fn flat_pull(state: &LevelState, nodes: u32) -> bool {
    let unreached = u64::from(nodes).saturating_sub(state.reached_count as u64 + 1);
    state.unvisited_in_edges >= FLAT_IN_EDGES_PER_NODE_MIN * unreached.max(1)
}

/// The bitmap words of a bottom-up morsel's nodes, which start at a word.
fn morsel_words(nodes: &std::ops::Range<u32>) -> std::ops::Range<usize> {
    assert!(
        nodes.start.is_multiple_of(64),
        "a bottom-up morsel starts at a word"
    );
    nodes.start as usize / 64..(nodes.end as usize).div_ceil(64)
}

/// Prefetches what a bottom-up pass reads first for the nodes of `bits`, bitmap word `word`'s
/// unvisited nodes: the lines of their distances (16 nodes a line) and in-list offsets (8 a
/// line, and the next node's), read in node order but, per word, after the previous word's
/// lists, so the hardware's stream prefetch falls behind them. Lines without such a node are
/// not fetched: on a level with few nodes left, most words have none (log 265).
#[inline(always)]
fn prefetch_word_heads(word: usize, bits: u64, dist: &[AtomicU32], offsets: &[u64]) {
    let first = word * 64;
    for line in 0..4 {
        if bits >> (16 * line) & 0xffff != 0 {
            if let Some(d) = dist.get(first + 16 * line) {
                prefetch(d);
            }
        }
    }
    for line in 0..8 {
        if bits >> (8 * line) & 0xff != 0 {
            for node in [first + 8 * line, first + 8 * line + 8] {
                if let Some(offset) = offsets.get(node) {
                    prefetch(offset);
                }
            }
        }
    }
}

/// The nodes of `bits` (bit `i`: node `first + i`) whose distance is still unreached; a
/// bottom-up level's map may hold nodes that a top-down level reached since it was filled.
#[inline]
fn still_unreached(first: u32, bits: u64, dist: &[AtomicU32]) -> u64 {
    let mut unreached = bits;
    let mut rest = bits;
    while rest != 0 {
        let bit = rest.trailing_zeros();
        rest &= rest - 1;
        if dist[(first + bit) as usize].load(Ordering::Relaxed) != UNREACHED {
            unreached &= !(1 << bit);
        }
    }
    unreached
}

/// The lowest `len` bits set (`len` at most 64).
#[inline]
fn low_bits(len: u32) -> u64 {
    debug_assert!(len <= 64);
    if len >= 64 {
        u64::MAX
    } else {
        (1 << len) - 1
    }
}

/// A search whose last search touched so many nodes that every node is rewritten rewrites
/// them in [`RESET_CHUNKS`] chunks on the query's threads, as its first phase, from this many
/// nodes on (below, one thread's `memset` takes under a millisecond); unit tests lower it so
/// that their small graphs take that path.
const PARALLEL_RESET_NODES_MIN: usize = if cfg!(test) { 64 } else { 1 << 20 };
/// The chunks of a parallel reset (a few per thread, so a late thread still takes some).
const RESET_CHUNKS: usize = 16;
/// A bottom-up morsel covers this many times `morsel_size` node ids.
const BOTTOM_UP_MORSEL_FACTOR: usize = 8;
/// A bottom-up level that stops at a node's first parent prefetches the in-list of the
/// unvisited node this many candidates ahead (within the node's 64-node word) when its
/// frontier grew and the in-edges take more than [`LIST_PREFETCH_MIN_BYTES`]: there most
/// candidates read one or two in-edges, so each one's list is a miss that the early exit keeps
/// from overlapping with the next. After a level that shrank the frontier, the candidates left
/// read their lists whole in the level before, and they are still cached (OPTIMIZATION_LOG
/// 221: 8 and 32 ahead were slower than 16 at scale 22).
const BOTTOM_UP_LIST_PREFETCH_AHEAD: usize = 16;
/// In-edge bytes past which bottom-up levels prefetch in-lists: twice the cache budget (at
/// scale 20, 64 MB of in-edges, the prefetches only cost; at 21, 130 MB, they paid).
const LIST_PREFETCH_MIN_BYTES: u64 = 2 * CACHED_STATES_BYTES;

/// [`BfsConfig::list_prefetch_min_bytes`] under the engine's prefetch distance: none when
/// prefetching is off (`prefetch_distance` 0).
pub fn list_prefetch_min_bytes(prefetch_distance: usize) -> Option<u64> {
    (prefetch_distance > 0).then_some(LIST_PREFETCH_MIN_BYTES)
}

/// What a search computes besides distances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfsMode {
    Lengths,
    PathCounts,
    Parents,
}

/// How a search runs.
#[derive(Clone, Copy, Debug)]
pub struct BfsConfig {
    pub mode: BfsMode,
    /// The largest distance searched.
    pub upper: u32,
    pub direction_optimizing: bool,
    /// Frontier nodes per top-down morsel.
    pub morsel_size: usize,
    pub prefetch_distance: usize,
    /// `Lengths` and `PathCounts` modes: top-down levels with at least this many out-edges
    /// claim through destination bins (`binned_push`); `None`: every claim is a
    /// compare-and-swap.
    pub binned_edges_min: Option<u64>,
    /// Bottom-up levels that stop at a first parent prefetch in-lists ahead
    /// ([`BOTTOM_UP_LIST_PREFETCH_AHEAD`]) when the in-edges take more than this many bytes
    /// (normally [`list_prefetch_min_bytes`]); `None`: never.
    pub list_prefetch_min_bytes: Option<u64>,
}

/// One search's state between levels (changed only by `start` and `advance`).
#[derive(Debug, Default)]
struct LevelState {
    source: u32,
    target: Option<u32>,
    /// The level being expanded (the frontier is at `level - 1`).
    level: u32,
    frontier: Vec<u32>,
    /// The list of the frontier before `frontier`, kept for the next level's (no content).
    spare_frontier: Vec<u32>,
    /// The size of the frontier before `frontier` (the direction choice watches its growth).
    previous_frontier_len: usize,
    bottom_up: bool,
    /// The frontier as a bitmap, read by bottom-up levels (direction-optimizing searches).
    bits: FrontierBits,
    /// Whether `bits`'s current map holds `frontier`.
    bits_current: bool,
    /// The nodes bottom-up levels test (direction-optimizing searches), filled before the
    /// search's first bottom-up level.
    unvisited: UnvisitedBits,
    /// Whether `unvisited` was filled for this search.
    unvisited_filled: bool,
    /// Whether the running level records its discoveries in `bits`'s next map (bottom-up
    /// levels do).
    bits_next: bool,
    morsels: usize,
    /// A top-down level's morsels of one step: runs of frontier nodes of about equal
    /// out-edges, a hub in slices outside `Parents` mode (`frontier_morsels`).
    top_down: Vec<FrontierMorsel>,
    /// Nodes reached at distance >= 1, in discovery order (a deterministic order in `Parents`
    /// mode); no longer extended once a search that counts by level has reached so many that
    /// its reset rewrites every node (`Bfs::lists_reached`: only `reached_count` is then kept).
    reached: Vec<u32>,
    /// How many nodes the search reached at distance >= 1.
    reached_count: usize,
    /// Paths to the destinations reached per level, (level, paths): in `Lengths` mode one per
    /// destination, in `PathCounts` mode the paths added to the level's nodes. Kept when the
    /// search counts them as it goes (see [`BfsSearch::counts_by_level`]); `None` otherwise.
    level_destinations: Option<Vec<(u32, u128)>>,
    /// Out-edges of the frontier and in-edges of still unvisited nodes (direction choice).
    frontier_out_edges: u64,
    unvisited_in_edges: u64,
    parent: Vec<u32>,
    parent_edge: Vec<u32>,
    started: Option<Instant>,
    /// Whether this top-down level claims through destination bins (`binned_push`).
    binned: bool,
    /// Whether a binned level's round is in its second half: each morsel claims one bin.
    applying: bool,
    /// A binned level's rounds: runs of `top_down` morsels whose pairs together stay within
    /// `binned_push::round_pairs_max` (but for a single larger morsel), scattered and claimed
    /// one round after the other.
    rounds: Vec<std::ops::Range<usize>>,
    /// The round running.
    round: usize,
    /// A binned level's scatter pieces of the running round, read by its claim morsels.
    scattered: Vec<Piece>,
    /// A binned level's claim pieces of its finished rounds.
    claimed: Vec<Piece>,
    /// A binned `PathCounts` level: the frontier's path counts by frontier position.
    frontier_counts: FrontierWords,
    /// `PathCounts` mode: the frontier's path counts summed (no node's parents sum past it).
    frontier_paths: u128,
    /// The search (source, target) that starts once the running phase, a reset of every
    /// node in chunks on the query's threads, ends.
    resetting: Option<(u32, Option<u32>)>,
}

/// What one morsel found.
#[derive(Debug, Default)]
struct Piece {
    morsel: usize,
    /// Newly reached nodes (`Lengths`, `PathCounts`), or claims (`Parents`): (node, edge, key).
    nodes: Vec<u32>,
    claims: Vec<(u32, u32, u64)>,
    out_edges: u64,
    in_edges: u64,
    /// Destinations among `nodes` (when the search counts by level).
    destinations: u64,
    /// `PathCounts` mode: the paths this morsel added to nodes of the running level.
    level_paths: u128,
    /// A binned level's scattered edges (scatter morsels only).
    bins: Bins,
    /// A flat counting pull's running sums (`parent_sums::running_sums`), reused.
    running: Vec<u64>,
    /// A counting pull's candidates, summed in a prefetched pipeline
    /// (`BottomUpScan::find_parents_pipelined`), reused.
    candidates: Vec<u32>,
    counters: LevelCounters,
}

impl LevelPiece for Piece {
    fn reuse(&mut self, morsel: usize) {
        *self = Piece {
            morsel,
            nodes: emptied(&mut self.nodes),
            claims: emptied(&mut self.claims),
            bins: std::mem::take(&mut self.bins),
            running: emptied(&mut self.running),
            candidates: emptied(&mut self.candidates),
            ..Piece::default()
        };
    }

    fn held_bytes(&self) -> u64 {
        (self.nodes.capacity() * 4
            + self.claims.capacity() * 16
            + self.running.capacity() * 8
            + self.candidates.capacity() * 4) as u64
            + self.bins.held_bytes()
    }
}

/// Reusable search state of one slot; its arrays are sized to the graph once. A search runs
/// through a [`BfsSearch`], which lends it the graph and masks.
#[derive(Debug)]
pub struct Bfs {
    config: BfsConfig,
    dist: Vec<AtomicU32>,
    paths: Vec<AtomicU64>,
    claim: Vec<AtomicU64>,
    overflow: AtomicBool,
    /// Destination bins of a binned level (ranges of `dist`).
    bin_plan: BinPlan,
    state: RwLock<LevelState>,
    pieces: LevelPieces<Piece>,
}

impl Bfs {
    pub fn new(nodes: u32, config: BfsConfig) -> Self {
        let n = nodes as usize;
        let sized = |wanted: bool| if wanted { n } else { 0 };
        Self {
            config,
            dist: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
            paths: (0..sized(config.mode == BfsMode::PathCounts))
                .map(|_| AtomicU64::new(0))
                .collect(),
            claim: (0..sized(config.mode == BfsMode::Parents))
                .map(|_| AtomicU64::new(UNCLAIMED))
                .collect(),
            overflow: AtomicBool::new(false),
            bin_plan: BinPlan::for_node_bytes(nodes, claimed_bytes_per_node(config.mode)),
            state: RwLock::new(LevelState {
                source: UNREACHED,
                parent: vec![UNREACHED; sized(config.mode == BfsMode::Parents)],
                parent_edge: vec![UNREACHED; sized(config.mode == BfsMode::Parents)],
                bits: if bottom_up_possible(&config) {
                    FrontierBits::new(nodes)
                } else {
                    FrontierBits::default()
                },
                unvisited: if bottom_up_possible(&config) {
                    UnvisitedBits::new(nodes)
                } else {
                    UnvisitedBits::default()
                },
                ..LevelState::default()
            }),
            pieces: LevelPieces::default(),
        }
    }

    /// Bytes a search in `mode` holds for a graph of `nodes` nodes (the frontier bitmaps
    /// counted whether or not the search is direction-optimizing).
    pub fn bytes(nodes: u32, mode: BfsMode) -> u64 {
        let per_node = match mode {
            BfsMode::Lengths => 8,
            BfsMode::PathCounts => 16,
            BfsMode::Parents => 24,
        };
        u64::from(nodes) * per_node + FrontierBits::bytes(nodes) + UnvisitedBits::bytes(nodes)
    }

    /// Bytes a search in `mode` whose levels may be binned holds at most for its frontier's
    /// path counts (`PathCounts` mode; the round's pairs are `binned_push::engine_limits`').
    pub fn frontier_counts_bytes(nodes: u32, mode: BfsMode) -> u64 {
        match mode {
            BfsMode::PathCounts => {
                let plan = BinPlan::for_node_bytes(nodes, claimed_bytes_per_node(mode));
                8 * u64::from(nodes).min(plan.positions_max() as u64)
            }
            BfsMode::Lengths | BfsMode::Parents => 0,
        }
    }

    /// Whether this state's arrays serve a graph of `nodes` nodes searched with `config`
    /// (same size, same mode, frontier bitmaps kept or not alike).
    pub fn fits(&self, nodes: u32, config: &BfsConfig) -> bool {
        self.dist.len() == nodes as usize
            && self.config.mode == config.mode
            && bottom_up_possible(&self.config) == bottom_up_possible(config)
    }

    /// Takes `config` for the next search (bound, morsel size, prefetch distance).
    pub fn reconfigure(&mut self, config: BfsConfig) {
        assert!(
            self.fits(self.dist.len() as u32, &config),
            "a state is reconfigured only within its arrays' mode"
        );
        self.config = config;
    }

    pub fn config(&self) -> &BfsConfig {
        &self.config
    }

    /// Bytes this state holds now: its per-node arrays and bitmaps, and its lists' capacity.
    pub fn held_bytes(&self) -> u64 {
        let state = self.read();
        let lists =
            state.reached.capacity() + state.frontier.capacity() + state.spare_frontier.capacity();
        let per_node = self.dist.len() * 4
            + self.paths.len() * 8
            + self.claim.len() * 8
            + (state.parent.len() + state.parent_edge.len()) * 4;
        (per_node + lists * 4) as u64
            + state.bits.held_bytes()
            + state.unvisited.held_bytes()
            + state.frontier_counts.held_bytes()
            + self.pieces.held_bytes()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, LevelState> {
        self.state.read().expect("bfs state lock")
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, LevelState> {
        self.state.write().expect("bfs state lock")
    }

    pub fn source(&self) -> u32 {
        self.read().source
    }

    #[inline]
    pub fn distance(&self, node: u32) -> u32 {
        self.dist[node as usize].load(Ordering::Relaxed)
    }

    /// Shortest paths from the source to `node` (`PathCounts` mode).
    pub fn path_count(&self, node: u32) -> u64 {
        self.paths[node as usize].load(Ordering::Relaxed)
    }

    /// Nodes reached at distance >= 1, in discovery order.
    pub fn reached(&self) -> Vec<u32> {
        let state = self.read();
        assert_eq!(
            state.reached.len(),
            state.reached_count,
            "a search whose reached nodes are read lists them all"
        );
        state.reached.clone()
    }

    /// The shortest path to `target` found first (`Parents` mode): (intermediate nodes, edges),
    /// the source excluded.
    pub fn path_to(&self, target: u32) -> (Vec<u32>, Vec<u32>) {
        let state = self.read();
        assert_eq!(self.config.mode, BfsMode::Parents, "parents are kept");
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut v = target;
        while v != state.source {
            edges.push(state.parent_edge[v as usize]);
            let u = state.parent[v as usize];
            assert_ne!(u, UNREACHED, "a reached node has a parent");
            if u != state.source {
                nodes.push(u);
            }
            v = u;
        }
        nodes.reverse();
        edges.reverse();
        (nodes, edges)
    }

    /// The paths to destinations in `lower..=upper`: totals, and per destination when asked.
    pub fn path_stats(
        &self,
        masks: &Masks,
        lower: u32,
        per_destination: bool,
        only: Option<u32>,
    ) -> Result<CountOutput> {
        if self.overflow.load(Ordering::Relaxed) {
            return Err(path_count_overflow());
        }
        let state = self.read();
        let mut total = PathStats::default();
        if let Some(levels) = &state.level_destinations {
            assert!(
                !per_destination && only.is_none(),
                "level counts serve totals only"
            );
            let counted = levels.iter().filter(|(level, _)| *level >= lower);
            add_levels(&mut total, counted.copied())?;
            return Ok((total, Vec::new()));
        }
        let counted = state
            .reached
            .iter()
            .filter_map(|&v| self.counted(v, masks, lower, only).map(|found| (v, found)));
        if !per_destination {
            // Per distance: one addition per node, the statistics' bookkeeping once per
            // distance (optimization log 216).
            let mut by_level: Vec<u128> = Vec::new();
            for (_, (dist, paths)) in counted {
                let slot = dist as usize;
                if slot >= by_level.len() {
                    by_level.resize(slot + 1, 0);
                }
                by_level[slot] += u128::from(paths);
            }
            let levels = by_level.into_iter().enumerate();
            add_levels(
                &mut total,
                levels.map(|(level, paths)| (level as u32, paths)),
            )?;
            return Ok((total, Vec::new()));
        }
        let mut by_destination = Vec::new();
        for (v, (dist, paths)) in counted {
            total.add(dist, paths)?;
            let mut stats = PathStats::default();
            stats.add(dist, paths)?;
            by_destination.push((v, stats));
        }
        by_destination.sort_unstable_by_key(|(v, _)| *v);
        Ok((total, by_destination))
    }

    /// Node `v`'s distance and shortest paths when it is a destination (or `only`) at a
    /// distance from `lower` on.
    #[inline]
    fn counted(&self, v: u32, masks: &Masks, lower: u32, only: Option<u32>) -> Option<(u32, u64)> {
        let dist = self.distance(v);
        let destination = match only {
            Some(target) => v == target,
            None => masks.is_destination(v),
        };
        if dist < lower || !destination {
            return None;
        }
        let paths = match self.config.mode {
            BfsMode::PathCounts => self.path_count(v),
            _ => 1,
        };
        Some((dist, paths))
    }

    /// Undoes the last search: its bookkeeping is cleared, and the nodes it reached, and those
    /// of a level it left unfinished (an error ends a search between levels with its pieces not
    /// merged), get their initial values back one by one, so a state costs O(touched) to reuse.
    /// Returns whether it touched so many that every node must be rewritten instead
    /// ([`Bfs::reset_chunk`]), which the caller then does; a reset left unfinished (the search
    /// abandoned in its reset phase) asks for every node too.
    #[must_use]
    fn reset(&self, state: &mut LevelState) -> bool {
        // The claims of a binned level's finished rounds count as the level's unfinished pieces.
        for piece in state.claimed.drain(..).chain(state.scattered.drain(..)) {
            self.pieces.hand_in(piece);
        }
        let unfinished_reset = state.resetting.take().is_some();
        let dense = self.pieces.with_unfinished(|pieces| {
            let touched = state.reached_count
                + pieces
                    .iter()
                    .map(|p| p.nodes.len() + p.claims.len())
                    .sum::<usize>();
            let dense =
                unfinished_reset || touched.saturating_mul(DENSE_RESET_FRACTION) > self.dist.len();
            if !dense {
                self.reset_touched(state, pieces);
            }
            dense
        });
        state.reached.clear();
        state.reached_count = 0;
        state.level_destinations = None;
        state.frontier.clear();
        self.pieces.recycle(std::mem::take(&mut state.scattered));
        (state.binned, state.applying) = (false, false);
        self.overflow.store(false, Ordering::Relaxed);
        dense
    }

    /// Chunk `chunk` of `chunks` of every node's initial values, in sequential writes: the
    /// chunks of one reset are disjoint node ranges that together cover every node.
    ///
    /// # Safety
    /// No other thread reads or writes the chunk's nodes during the call: a reset runs in a
    /// search's `start`, or as the morsels of its reset phase (each its own chunk), which no
    /// other phase's work overlaps (`PhasedSearch`), and a state is lent to one search at a
    /// time.
    unsafe fn reset_chunk(&self, chunk: usize, chunks: usize) {
        assert!(chunk < chunks, "a chunk of the reset");
        let part = |len: usize| len * chunk / chunks..len * (chunk + 1) / chunks;
        // SAFETY: the caller guarantees that nothing else touches these nodes now.
        unsafe {
            fill_bytes(&self.dist[part(self.dist.len())], 0xff);
            fill_bytes(&self.paths[part(self.paths.len())], 0);
            fill_bytes(&self.claim[part(self.claim.len())], 0xff);
        }
    }

    /// Whether a search lists the nodes it reached (`LevelState::reached`): always, but for a
    /// search that counts by level (nothing reads the list after it) once it reached so many
    /// that its reset rewrites every node anyway (at scale 22, `allsp` reaches two million
    /// nodes: 8 MB copied for nothing).
    fn lists_reached(&self, state: &LevelState) -> bool {
        state.level_destinations.is_none()
            || state.reached_count.saturating_mul(DENSE_RESET_FRACTION) <= self.dist.len()
    }

    /// The initial values back for the nodes the last search touched, one random write each.
    fn reset_touched(&self, state: &LevelState, pieces: &[Piece]) {
        assert_eq!(
            state.reached.len(),
            state.reached_count,
            "a search reset node by node lists every node it reached"
        );
        let unfinished = pieces
            .iter()
            .flat_map(|p| p.nodes.iter().copied().chain(p.claims.iter().map(|c| c.0)));
        let touched = state
            .reached
            .iter()
            .copied()
            .chain(std::iter::once(state.source))
            .chain(unfinished);
        for v in touched {
            if v == UNREACHED {
                continue;
            }
            self.dist[v as usize].store(UNREACHED, Ordering::Relaxed);
            if let Some(paths) = self.paths.get(v as usize) {
                paths.store(0, Ordering::Relaxed);
            }
            if let Some(claim) = self.claim.get(v as usize) {
                claim.store(UNCLAIMED, Ordering::Relaxed);
            }
        }
    }
}

/// Sets every byte of `words` to `byte` with one `memset`: a loop of atomic stores is not
/// vectorized (the 16 MB of distances at scale 22: 2.3-2.6 ms as stores, 1.7 ms as a memset;
/// OPTIMIZATION_LOG 223).
///
/// # Safety
/// No other thread may access `words` during the call.
pub(super) unsafe fn fill_bytes<T>(words: &[T], byte: u8) {
    // SAFETY: the words are atomics (interior mutability: writing through a pointer from a
    // shared reference is allowed), any byte pattern is a valid value of them, and the caller
    // guarantees that no access races these writes.
    unsafe { std::ptr::write_bytes(words.as_ptr().cast_mut(), byte, words.len()) }
}

/// The direction of the level about to run (Beamer et al.'s rule, as GAPBS applies it): a
/// top-down search turns bottom-up when the frontier's out-edges exceed the unvisited nodes'
/// in-edges over `TOP_DOWN_TO_BOTTOM_UP`, however few nodes the frontier holds (a few hubs
/// bring most of the graph's edges); a bottom-up search stays so while the frontier grows or
/// holds more than `nodes / BOTTOM_UP_TO_TOP_DOWN` nodes.
fn next_level_bottom_up(state: &LevelState, nodes: u64) -> bool {
    let frontier_len = state.frontier.len() as u64;
    if state.bottom_up {
        frontier_len >= state.previous_frontier_len as u64
            || frontier_len > nodes / BOTTOM_UP_TO_TOP_DOWN
    } else {
        state.frontier_out_edges > state.unvisited_in_edges / TOP_DOWN_TO_BOTTOM_UP
    }
}

/// The bytes per node a binned level's claims write: the distance, and the path count in
/// `PathCounts` mode (a bin's range of them stays in a core's cache).
fn claimed_bytes_per_node(mode: BfsMode) -> usize {
    match mode {
        BfsMode::PathCounts => 12,
        BfsMode::Lengths | BfsMode::Parents => 4,
    }
}

/// How many nodes ahead the degree pass of a top-down level prefetches their offsets.
const DEGREE_PREFETCH_AHEAD: usize = 16;

/// Node ids per bottom-up morsel: a whole number of bitmap words, so that each word of the
/// frontier and unvisited maps belongs to one morsel.
fn bottom_up_morsel_nodes(morsel_size: usize) -> usize {
    (morsel_size * BOTTOM_UP_MORSEL_FACTOR).next_multiple_of(64)
}

/// Whether a search with `config` may run bottom-up levels (and so keeps frontier bitmaps).
fn bottom_up_possible(config: &BfsConfig) -> bool {
    config.direction_optimizing && config.mode != BfsMode::Parents
}

/// One search of a [`Bfs`] over a graph and its masks: what the scheduler runs.
pub struct BfsSearch<'a> {
    pub bfs: &'a Bfs,
    pub graph: &'a Graph,
    pub masks: &'a Masks,
    pub recorder: Option<&'a TraversalRecorder>,
    /// Counting mode: the lower bound and whether stats are kept per destination; `finish`
    /// then returns the counts.
    pub counting: Option<(u32, bool)>,
    /// Whether every node of the graph is a destination (`Masks::every_node_is_destination`,
    /// computed once for the query's searches).
    pub all_destinations: bool,
}

impl<'a> BfsSearch<'a> {
    /// Whether the search counts the paths to destinations level by level as it finds them,
    /// so that the end of the search needs no pass over every reached node: when only the
    /// totals of the counting mode are wanted, and either every path counts once (`Lengths`
    /// mode: a level's destinations) or every node is a destination (`PathCounts` mode: the
    /// paths its morsels add to the level's nodes, which get no others; log 218).
    fn counts_by_level(&self, target: Option<u32>) -> bool {
        let totals_only = target.is_none() && matches!(self.counting, Some((_, false)));
        totals_only
            && match self.bfs.config.mode {
                BfsMode::Lengths => true,
                // Every path added to a level's node belongs to a destination.
                BfsMode::PathCounts => self.all_destinations,
                BfsMode::Parents => false,
            }
    }

    /// Morsels of the level about to run.
    fn plan_level(&self, state: &mut LevelState) -> usize {
        if state.frontier.is_empty() || state.level > self.bfs.config.upper {
            return 0;
        }
        let n = u64::from(self.graph.num_nodes());
        state.bits_next = false;
        if bottom_up_possible(&self.bfs.config) {
            state.bottom_up = if !state.bottom_up && self.counts_binned(state) {
                state.frontier_out_edges * BINNED_COUNT_PUSH_COST > state.unvisited_in_edges
            } else {
                next_level_bottom_up(state, n)
            };
            if state.bottom_up && !state.unvisited_filled {
                self.fill_unvisited(state);
            }
            if state.bottom_up && !state.bits_current {
                let LevelState { bits, frontier, .. } = state;
                bits.set_current(frontier);
                state.bits_current = true;
            }
            state.bits_next = state.bottom_up;
            if state.bits_next {
                state.bits.start_next();
            }
        }
        let morsel = self.bfs.config.morsel_size.max(1);
        state.morsels = if state.bottom_up {
            (self.graph.num_nodes() as usize).div_ceil(bottom_up_morsel_nodes(morsel))
        } else {
            // The merged forward adjacency's degrees also balance `Parents` mode's steps.
            let split_nodes = self.bfs.config.mode != BfsMode::Parents;
            let mut budget = MorselBudget::for_morsel_size(morsel, split_nodes);
            state.binned = self.binned_level(state);
            let round_pairs = binned_push::round_pairs_max(self.graph.num_nodes());
            if state.binned {
                // In id order the frontier's lists are read in address order, and its morsels
                // are cut by out-edges alone, however many nodes it holds (optimization log
                // 213). Neither changes an answer: claims here carry no frontier order.
                state.frontier.sort_unstable();
                let round_edges = state.frontier_out_edges.min(round_pairs);
                budget = binned_push::scatter_budget(budget, round_edges);
                budget.nodes_max = budget.nodes_max.max(state.frontier.len());
            }
            let forward = self.graph.forward.view();
            plan_frontier(&state.frontier, &forward, budget, &mut state.top_down);
            if state.binned {
                self.plan_rounds(state, round_pairs);
                state.rounds[0].len()
            } else {
                state.top_down.len() * self.top_down_steps().len()
            }
        };
        state.started = Some(Instant::now());
        state.morsels
    }

    /// Whether this top-down level claims through destination bins: `Lengths` or
    /// `PathCounts` mode (claims need no order and carry the level and a count), one step,
    /// every out-edge followed from every frontier node, and out-edges and frontier within
    /// `binned_push`'s limits (a level with more out-edges than one round's pairs runs in
    /// rounds).
    fn binned_level(&self, state: &LevelState) -> bool {
        let (out_edges, frontier) = (state.frontier_out_edges, state.frontier.len());
        matches!(self.bfs.config.mode, BfsMode::Lengths | BfsMode::PathCounts)
            && self.masks.unfiltered_at(state.level)
            && self.top_down_steps().len() == 1
            && self
                .bfs
                .config
                .binned_edges_min
                .is_some_and(|min| self.bfs.bin_plan.binned_in_rounds(out_edges, frontier, min))
    }

    /// Whether the level about to run, if top-down, would push path counts through bins (the
    /// direction choice then weighs the push against a whole pull).
    fn counts_binned(&self, state: &LevelState) -> bool {
        self.bfs.config.mode == BfsMode::PathCounts && self.binned_level(state)
    }

    /// Groups a binned level's morsels into rounds of at most `round_pairs` out-edges (a
    /// larger morsel alone), and sizes the frontier's counts (`PathCounts` mode).
    fn plan_rounds(&self, state: &mut LevelState, round_pairs: u64) {
        state.rounds.clear();
        state.round = 0;
        if state.frontier_out_edges <= round_pairs {
            state.rounds.push(0..state.top_down.len());
        } else {
            let forward = self.graph.forward.view();
            let mut start = 0;
            let mut edges = 0u64;
            for (m, work) in state.top_down.iter().enumerate() {
                let morsel_edges = match &work.edges {
                    Some(range) => range.len() as u64,
                    None => work
                        .nodes
                        .clone()
                        .map(|i| forward.degree(state.frontier[i]))
                        .sum(),
                };
                if m > start && edges + morsel_edges > round_pairs {
                    state.rounds.push(start..m);
                    (start, edges) = (m, 0);
                }
                edges += morsel_edges;
            }
            state.rounds.push(start..state.top_down.len());
        }
        if self.bfs.config.mode == BfsMode::PathCounts {
            state.frontier_counts.resize(state.frontier.len());
        }
    }

    /// A binned level's first half: the running round's morsel `morsel` writes its
    /// out-edges into destination bins (and, counting paths, its nodes' counts by position).
    fn scatter(&self, state: &LevelState, morsel: usize, piece: &mut Piece) {
        let work = &state.top_down[state.rounds[state.round].start + morsel];
        if self.bfs.config.mode == BfsMode::PathCounts {
            let sources = &state.frontier[work.nodes.clone()];
            let at = (sources, work.nodes.start);
            state.frontier_counts.record(at, &self.bfs.paths);
        }
        let adjacency = self.graph.forward.view();
        let frontier = (&state.frontier[..], work);
        piece.counters.edges_scanned +=
            piece
                .bins
                .scatter_morsel(&self.bfs.bin_plan, &adjacency, frontier);
    }

    /// A binned level's second half: bin `bin`'s destinations claimed by the one morsel that
    /// writes the bin's range of distances (and path counts).
    fn claim_bin(&self, state: &LevelState, bin: usize, piece: &mut Piece) {
        let pairs = state.scattered.iter().map(|s| s.bins.pairs(bin));
        let plan = (&self.bfs.bin_plan, bin);
        let level = (state.level, UNREACHED);
        let found = &mut piece.nodes;
        if self.bfs.config.mode == BfsMode::PathCounts {
            let counted = (&self.bfs.dist[..], &self.bfs.paths[..]);
            let counts = &state.frontier_counts;
            let (overflow, added) =
                binned_push::claim_counting(plan, pairs, counts, counted, level, found);
            piece.level_paths += added;
            if overflow {
                self.bfs.overflow.store(true, Ordering::Relaxed);
            }
        } else {
            binned_push::claim_unreached(plan, pairs, &self.bfs.dist, level, found);
        }
    }

    /// The adjacencies a top-down level scans: per step in `Parents` mode (the step order
    /// decides ties), else the merged forward adjacency.
    fn top_down_steps(&self) -> &'a [Adjacency] {
        if self.bfs.config.mode == BfsMode::Parents {
            self.graph.steps()
        } else {
            std::slice::from_ref(&self.graph.forward)
        }
    }

    fn expand_top_down(&self, state: &LevelState, morsel: usize, piece: &mut Piece) {
        let per_step = state.top_down.len();
        let (step, work) = (morsel / per_step, &state.top_down[morsel % per_step]);
        let adjacency = &self.top_down_steps()[step];
        let scan = TopDownScan {
            adjacency: adjacency.view(),
            masks: self.masks,
            level: state.level,
            prefetch_distance: self.bfs.config.prefetch_distance,
        };
        match self.bfs.config.mode {
            BfsMode::Parents => {
                let key_base = (step as u64) << 32;
                assert!(work.edges.is_none(), "Parents mode scans each node whole");
                scan.claim_parents(
                    &state.frontier,
                    work.nodes.clone(),
                    &self.bfs.dist,
                    &self.bfs.claim,
                    key_base,
                    piece,
                );
            }
            BfsMode::Lengths | BfsMode::PathCounts => {
                let paths =
                    (self.bfs.config.mode == BfsMode::PathCounts).then_some(&self.bfs.paths[..]);
                let frontier = (&state.frontier[work.nodes.clone()], work);
                if scan.claim_nodes(frontier, &self.bfs.dist, paths, piece) {
                    self.bfs.overflow.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Marks the nodes bottom-up levels test: those with an in-edge. The nodes visited so far
    /// keep their bits (the map is a superset): the first bottom-up level clears them at one
    /// distance read each, where testing every node's distance here would cost one per node.
    fn fill_unvisited(&self, state: &mut LevelState) {
        let backward = self.graph.backward.view();
        let nodes = self.graph.num_nodes();
        match backward.plain_neighbours() {
            // Every block verified and no patch: the graph's in-edge bits (computed once for
            // all the query's searches) are exactly this map.
            Some(_) => {
                let in_edges = self.graph.in_edge_bits();
                let word = |first: u32| in_edges.get((first / 64) as usize).copied();
                state
                    .unvisited
                    .fill_words(nodes, |first, _| word(first).unwrap_or(0));
            }
            None => state.unvisited.fill(nodes, |v| backward.degree(v) > 0),
        }
        state.unvisited_filled = true;
    }

    fn expand_bottom_up(&self, state: &LevelState, morsel: usize, piece: &mut Piece) {
        let size = bottom_up_morsel_nodes(self.bfs.config.morsel_size.max(1));
        let start = (morsel * size) as u32;
        let end = ((morsel + 1) * size).min(self.graph.num_nodes() as usize) as u32;
        assert!(
            state.bits_current,
            "a bottom-up level reads the frontier bitmap"
        );
        let flat = flat_pull(state, self.graph.num_nodes());
        let scan = BottomUpScan {
            adjacency: self.graph.backward.view(),
            masks: self.masks,
            level: state.level,
            frontier: &state.bits,
            unvisited: &state.unvisited,
            prefetch_lists: self.prefetches_lists(state),
            prefetch_counts: self.prefetches_counts(),
            sums_every_parent: self.bfs.config.mode == BfsMode::PathCounts
                && self.masks.unfiltered_at(state.level),
            flat,
            in_edge_words: if flat { self.graph.in_edge_bits() } else { &[] },
        };
        let paths = (self.bfs.config.mode == BfsMode::PathCounts).then(|| PathSums {
            counts: &self.bfs.paths[..],
            frontier_total: state.frontier_paths,
        });
        if scan.find_parents(start..end, &self.bfs.dist, paths, piece) {
            self.bfs.overflow.store(true, Ordering::Relaxed);
        }
    }

    /// Whether this bottom-up level prefetches in-lists ([`BOTTOM_UP_LIST_PREFETCH_AHEAD`]): a
    /// level that stops at first parents, on a large graph, whose frontier grew.
    fn prefetches_lists(&self, state: &LevelState) -> bool {
        self.bfs.config.mode != BfsMode::PathCounts
            && self.in_edges_past_cache()
            && state.frontier.len() >= state.previous_frontier_len
    }

    /// Whether a counting pull prefetches ahead of its reads: in `PathCounts` mode, on a graph
    /// past the cache (on a cached one the prefetches and the pipeline's second pass only
    /// cost).
    fn prefetches_counts(&self) -> bool {
        self.bfs.config.mode == BfsMode::PathCounts && self.in_edges_past_cache()
    }

    /// Whether the graph's in-edges pass [`BfsConfig::list_prefetch_min_bytes`], past which
    /// bottom-up levels prefetch.
    fn in_edges_past_cache(&self) -> bool {
        let in_edge_bytes =
            self.graph.backward.view().num_entries() * std::mem::size_of::<u32>() as u64;
        self.bfs
            .config
            .list_prefetch_min_bytes
            .is_some_and(|min| in_edge_bytes > min)
    }

    /// Counts the edges a new frontier node brings (direction choice).
    fn degrees(&self, nodes: &[u32], piece: &mut Piece) {
        let forward = self.graph.forward.view();
        let backward = self.graph.backward.view();
        // Each degree is a random read of two offsets per direction (past L2 on a large
        // graph): start those of the node `DEGREE_PREFETCH_AHEAD` ahead.
        for (i, &v) in nodes.iter().enumerate() {
            if let Some(&ahead) = nodes.get(i + DEGREE_PREFETCH_AHEAD) {
                if let Some(offset) = forward.offset_address(ahead) {
                    prefetch(offset);
                }
                if let Some(offset) = backward.offset_address(ahead) {
                    prefetch(offset);
                }
            }
            piece.out_edges += forward.degree(v);
            piece.in_edges += backward.degree(v);
        }
    }

    /// Ends a `Parents` level: keeps each node's winning claim, in discovery order.
    fn resolve_claims(&self, state: &mut LevelState, pieces: &[Piece], next: &mut Vec<u32>) {
        let level = state.level;
        for piece in pieces {
            for &(v, edge, key) in &piece.claims {
                if self.bfs.claim[v as usize].load(Ordering::Relaxed) != key {
                    continue;
                }
                let rank = (key & 0xffff_ffff) as usize;
                state.parent[v as usize] = state.frontier[rank];
                state.parent_edge[v as usize] = edge;
                self.bfs.dist[v as usize].store(level, Ordering::Relaxed);
                next.push(v);
            }
        }
    }
}

impl PhasedSearch for BfsSearch<'_> {
    /// The source, and the destination when it is bound already.
    type Task = (u32, Option<u32>);
    type Output = Option<CountOutput>;

    fn start(&self, &(source, target): &(u32, Option<u32>)) -> Result<usize> {
        let mut state = self.bfs.write();
        if self.bfs.reset(&mut state) {
            if self.bfs.dist.len() >= PARALLEL_RESET_NODES_MIN {
                // Every node rewritten by the query's threads first; the search starts in
                // `advance` (OPTIMIZATION_LOG 263).
                state.resetting = Some((source, target));
                return Ok(RESET_CHUNKS);
            }
            // SAFETY: in `start`, no `process` call runs (see `Bfs::reset_chunk`).
            unsafe { self.bfs.reset_chunk(0, 1) };
        }
        self.begin(&mut state, source, target)
    }

    fn process(&self, morsel: usize) -> Result<()> {
        let state = self.bfs.read();
        if state.resetting.is_some() {
            // SAFETY: the reset phase's morsels are its disjoint chunks, and no other work of
            // this search runs beside them.
            unsafe { self.bfs.reset_chunk(morsel, RESET_CHUNKS) };
            return Ok(());
        }
        self.process_level(state, morsel)
    }

    fn advance(&self) -> Result<usize> {
        let mut state = self.bfs.write();
        if let Some((source, target)) = state.resetting.take() {
            return self.begin(&mut state, source, target);
        }
        self.advance_level(state)
    }

    fn finish(&self) -> Result<Option<CountOutput>> {
        self.finish_search()
    }
}

impl BfsSearch<'_> {
    /// Starts the search from `source` (towards `target`) on a state whose nodes are reset;
    /// returns the first level's morsels.
    fn begin(&self, state: &mut LevelState, source: u32, target: Option<u32>) -> Result<usize> {
        assert!(
            source < self.graph.num_nodes(),
            "the source is a node of the graph"
        );
        state.source = source;
        state.target = target;
        state.level = 1;
        state.bottom_up = false;
        state.previous_frontier_len = 0;
        state.bits_current = false;
        state.unvisited_filled = false;
        self.bfs.dist[source as usize].store(0, Ordering::Relaxed);
        if let Some(paths) = self.bfs.paths.get(source as usize) {
            paths.store(1, Ordering::Relaxed);
        }
        state.frontier.push(source);
        state.frontier_paths = 1;
        state.level_destinations = self.counts_by_level(target).then(Vec::new);
        let forward = self.graph.forward.view();
        let backward = self.graph.backward.view();
        state.frontier_out_edges = forward.degree(source);
        state.unvisited_in_edges = backward.num_entries() - backward.degree(source);
        if let Some(recorder) = self.recorder {
            recorder.add_sources(1);
        }
        Ok(self.plan_level(state))
    }

    /// One morsel of the running level, under `state`'s read guard (dropped before the piece
    /// is handed in).
    fn process_level(
        &self,
        state: std::sync::RwLockReadGuard<'_, LevelState>,
        morsel: usize,
    ) -> Result<()> {
        // A claim piece is numbered by round and bin, so the level's pieces sort into one
        // order however its rounds fell.
        let number = if state.applying {
            state.round * self.bfs.bin_plan.bins() + morsel
        } else {
            morsel
        };
        let mut piece = self.bfs.pieces.take(number);
        if state.applying {
            self.claim_bin(&state, morsel, &mut piece);
        } else if state.bottom_up {
            self.expand_bottom_up(&state, morsel, &mut piece);
        } else if state.binned {
            self.scatter(&state, morsel, &mut piece);
        } else {
            self.expand_top_down(&state, morsel, &mut piece);
        }
        // After a bottom-up level the direction depends on the frontier's size alone, and the
        // in-edges of the nodes it found were counted as it scanned them.
        if bottom_up_possible(&self.bfs.config) && !state.bottom_up {
            let nodes = std::mem::take(&mut piece.nodes);
            self.degrees(&nodes, &mut piece);
            piece.nodes = nodes;
        }
        if state.level_destinations.is_some() && self.bfs.config.mode == BfsMode::Lengths {
            piece.destinations = piece
                .nodes
                .iter()
                .filter(|&&v| self.masks.is_destination(v))
                .count() as u64;
        }
        if let Some(recorder) = self.recorder {
            recorder.merge(state.level, piece.counters);
        }
        drop(state);
        self.bfs.pieces.hand_in(piece);
        Ok(())
    }

    /// Completes the running level under `state`'s write guard; returns the next phase's
    /// morsels.
    fn advance_level(
        &self,
        mut state: std::sync::RwLockWriteGuard<'_, LevelState>,
    ) -> Result<usize> {
        let mut pieces = self.bfs.pieces.take_done();
        if state.binned && !state.applying {
            // The scatter pieces stay for the claim morsels to read.
            state.scattered = pieces;
            state.applying = true;
            state.morsels = self.bfs.bin_plan.bins();
            return Ok(state.morsels);
        }
        self.bfs
            .pieces
            .recycle(std::mem::take(&mut state.scattered));
        if state.binned {
            state.claimed.append(&mut pieces);
            if state.round + 1 < state.rounds.len() {
                state.round += 1;
                state.applying = false;
                state.morsels = state.rounds[state.round].len();
                return Ok(state.morsels);
            }
            pieces = std::mem::take(&mut state.claimed);
        }
        (state.binned, state.applying) = (false, false);
        pieces.sort_unstable_by_key(|p| p.morsel);
        // The list of the frontier before last, emptied: its memory (and the pages under it)
        // serves again, where a new list per level would keep drawing fresh pages from the
        // allocator for the first searches of a state (optimization log 216).
        let mut next = std::mem::take(&mut state.spare_frontier);
        next.clear();
        next.reserve(pieces.iter().map(|p| p.nodes.len()).sum());
        if self.bfs.config.mode == BfsMode::Parents {
            self.resolve_claims(&mut state, &pieces, &mut next);
        } else {
            for piece in &pieces {
                next.extend_from_slice(&piece.nodes);
            }
        }
        if let Some(recorder) = self.recorder {
            let elapsed = state.started.map(|s| s.elapsed()).unwrap_or_default();
            recorder.level(
                state.level,
                state.frontier.len() as u64,
                state.bottom_up,
                elapsed,
            );
        }
        state.frontier_out_edges = pieces.iter().map(|p| p.out_edges).sum();
        let in_edges: u64 = pieces.iter().map(|p| p.in_edges).sum();
        state.unvisited_in_edges = state.unvisited_in_edges.saturating_sub(in_edges);
        let level = state.level;
        if self.bfs.config.mode == BfsMode::PathCounts {
            state.frontier_paths = pieces.iter().map(|p| p.level_paths).sum();
        }
        if let Some(levels) = &mut state.level_destinations {
            let paths = match self.bfs.config.mode {
                BfsMode::PathCounts => pieces.iter().map(|p| p.level_paths).sum(),
                _ => pieces.iter().map(|p| u128::from(p.destinations)).sum(),
            };
            levels.push((level, paths));
        }
        self.bfs.pieces.recycle(pieces);
        state.reached_count += next.len();
        if self.bfs.lists_reached(&state) {
            state.reached.extend_from_slice(&next);
        }
        state.previous_frontier_len = state.frontier.len();
        state.spare_frontier = std::mem::replace(&mut state.frontier, next);
        state.bits_current = state.bits_next;
        if state.bits_next {
            state.bits.swap();
        }
        state.level += 1;
        if self.bfs.overflow.load(Ordering::Relaxed) {
            return Err(path_count_overflow());
        }
        Ok(self.plan_level(&mut state))
    }

    fn finish_search(&self) -> Result<Option<CountOutput>> {
        let Some((lower, per_destination)) = self.counting else {
            return Ok(None);
        };
        let target = self.bfs.read().target;
        self.bfs
            .path_stats(self.masks, lower, per_destination, target)
            .map(Some)
    }
}

/// Counting-mode results: totals, and (node, stats) per destination.
pub type CountOutput = (PathStats, Vec<(u32, PathStats)>);

/// Adds per-level path sums to `total`; a sum past `u64` is past INT64 too, and `add` reports
/// it.
fn add_levels(total: &mut PathStats, levels: impl Iterator<Item = (u32, u128)>) -> Result<()> {
    for (level, paths) in levels {
        total.add(level, u64::try_from(paths).unwrap_or(u64::MAX))?;
    }
    Ok(())
}

fn path_count_overflow() -> Error {
    Error::LimitExceeded("the number of shortest paths exceeds the INT64 range".into())
}

/// Node `v`'s neighbours, with its rel ids only when a rel filter needs them (else an empty
/// slice: the rel ids' blocks are then neither read nor verified).
#[inline(always)]
pub(super) fn entries<'a>(
    adjacency: &AdjacencyView<'a>,
    v: u32,
    every_edge: bool,
) -> (&'a [u32], &'a [u32]) {
    if every_edge {
        (adjacency.neighbours(v), &[])
    } else {
        adjacency.entries(v)
    }
}

/// The top-down kernel over one adjacency: expands frontier nodes along their out-edges.
struct TopDownScan<'a> {
    adjacency: AdjacencyView<'a>,
    masks: &'a Masks,
    level: u32,
    prefetch_distance: usize,
}

impl TopDownScan<'_> {
    /// Whether `u` (at `level - 1`) continues paths: the source always, others when they may
    /// be intermediate.
    #[inline]
    fn expands(&self, u: u32) -> bool {
        self.level == 1 || self.masks.expandable(u)
    }

    /// Claims unvisited out-neighbours with compare-and-swap (first writer wins); adds path
    /// counts when `paths` is given. Returns whether a path count overflowed.
    fn claim_nodes(
        &self,
        frontier: (&[u32], &FrontierMorsel),
        dist: &[AtomicU32],
        paths: Option<&[AtomicU64]>,
        piece: &mut Piece,
    ) -> bool {
        let every_edge = self.masks.edges.is_none();
        let plain = every_edge
            .then(|| {
                self.adjacency
                    .plain_neighbours_for(frontier.0.iter().copied())
            })
            .flatten();
        match plain {
            Some(plain) => {
                self.claim_nodes_reading(frontier, dist, paths, piece, |u| (plain.of(u), &[][..]))
            }
            None => self.claim_nodes_reading(frontier, dist, paths, piece, |u| {
                entries(&self.adjacency, u, every_edge)
            }),
        }
    }

    /// [`TopDownScan::claim_nodes`] reading out-neighbours (and rel ids where a rel filter
    /// needs them) with `read`, chosen once per morsel.
    #[inline(always)]
    fn claim_nodes_reading<'r>(
        &self,
        (frontier, work): (&[u32], &FrontierMorsel),
        dist: &[AtomicU32],
        paths: Option<&[AtomicU64]>,
        piece: &mut Piece,
        read: impl Fn(u32) -> (&'r [u32], &'r [u32]),
    ) -> bool {
        let mut overflow = false;
        let every_edge = self.masks.edges.is_none();
        for (i, &u) in frontier.iter().enumerate() {
            if self.prefetch_distance > 0 {
                prefetch_adjacency(&self.adjacency, frontier, i, self.prefetch_distance);
            }
            if !self.expands(u) {
                continue;
            }
            let (targets, edges) = read(u);
            let (targets, edges) = work.slice(targets, edges);
            piece.counters.edges_scanned += targets.len() as u64;
            let paths_u = paths.map_or(0, |p| p[u as usize].load(Ordering::Relaxed));
            for (i, &target) in targets.iter().enumerate() {
                // The distance of the neighbour `prefetch_distance` ahead in a long list: a
                // compare-and-swap orders the loads after it, so without the hint a hub's
                // edges wait for their distances one by one (as in the many-source sweeps).
                if self.prefetch_distance > 0 {
                    if let Some(&ahead) = targets.get(i + self.prefetch_distance) {
                        if let Some(slot) = dist.get(ahead as usize) {
                            prefetch(slot);
                        }
                    }
                }
                // Rel ids are read only under a rel filter.
                if !every_edge && !self.masks.follows(edges[i]) {
                    continue;
                }
                let v = target as usize;
                let mut dist_v = dist[v].load(Ordering::Relaxed);
                if dist_v == UNREACHED {
                    match dist[v].compare_exchange(
                        UNREACHED,
                        self.level,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            piece.nodes.push(v as u32);
                            dist_v = self.level;
                        }
                        Err(actual) => {
                            piece.counters.cas_failures += 1;
                            dist_v = actual;
                        }
                    }
                }
                if let Some(paths) = paths {
                    if dist_v == self.level {
                        let before = paths[v].fetch_add(paths_u, Ordering::Relaxed);
                        overflow |= before.checked_add(paths_u).is_none();
                        piece.level_paths += u128::from(paths_u);
                    }
                }
            }
        }
        overflow
    }

    /// `Parents` mode: every unvisited out-neighbour gets the smallest (step, frontier rank)
    /// key of the nodes that reach it; a thread records the claims it lowered.
    fn claim_parents(
        &self,
        frontier: &[u32],
        ranks: std::ops::Range<usize>,
        dist: &[AtomicU32],
        claim: &[AtomicU64],
        key_base: u64,
        piece: &mut Piece,
    ) {
        for rank in ranks {
            let u = frontier[rank];
            if !self.expands(u) {
                continue;
            }
            let key = key_base | rank as u64;
            let (targets, edges) = self.adjacency.entries(u);
            piece.counters.edges_scanned += targets.len() as u64;
            for (&v, &edge) in targets.iter().zip(edges) {
                if !self.masks.follows(edge) {
                    continue;
                }
                if dist[v as usize].load(Ordering::Relaxed) != UNREACHED {
                    continue;
                }
                let before = claim[v as usize].fetch_min(key, Ordering::Relaxed);
                if before > key {
                    piece.claims.push((v, edge, key));
                } else if before < key {
                    piece.counters.cas_failures += 1;
                }
            }
        }
    }
}

/// The bottom-up kernel: unvisited nodes look for a parent among their in-edges.
struct BottomUpScan<'a> {
    /// The backward adjacency: a node's in-neighbours.
    adjacency: AdjacencyView<'a>,
    masks: &'a Masks,
    level: u32,
    /// The frontier (the nodes at `level - 1`).
    frontier: &'a FrontierBits,
    /// The nodes still to test; the kernel clears those it finds visited or claims.
    unvisited: &'a UnvisitedBits,
    /// Whether the level prefetches in-lists ahead (`BfsSearch::prefetches_lists`).
    prefetch_lists: bool,
    /// Whether this is a counting level that follows every edge from every frontier node (its
    /// parents' counts summed without a branch, `parent_sums`).
    sums_every_parent: bool,
    /// Whether such a level sums runs of nodes flat ([`flat_pull`]).
    flat: bool,
    /// Whether such a level prefetches ahead of its reads (`BfsSearch::prefetches_counts`): a
    /// node-by-node pull in a pipeline (`find_parents_pipelined`), a flat one a word's heads.
    prefetch_counts: bool,
    /// The nodes with in-edges (`Graph::in_edge_bits`): a flat run passes over the others.
    in_edge_words: &'a [u64],
}

impl BottomUpScan<'_> {
    /// Claims every unvisited node of `nodes` (a whole number of bitmap words) with an
    /// in-neighbour in the frontier, testing only the nodes of the unvisited map. Without path
    /// counts the scan stops at the first parent; with them it sums every parent's count.
    /// Returns whether a path count overflowed.
    fn find_parents(
        &self,
        nodes: std::ops::Range<u32>,
        dist: &[AtomicU32],
        sums: Option<PathSums>,
        piece: &mut Piece,
    ) -> bool {
        let every_edge = self.masks.edges.is_none();
        let plain = every_edge
            .then(|| self.adjacency.plain_neighbours_in(nodes.clone()))
            .flatten();
        let paths = sums.map(|sums| sums.counts);
        // Compiled apart, so that the loop without prefetches keeps its registers.
        match (plain, self.prefetch_lists, sums) {
            (Some(plain), false, Some(sums)) if self.sums_every_parent && self.flat => {
                self.find_parents_flat(nodes, dist, sums, piece, plain)
            }
            (Some(plain), false, Some(sums)) if self.sums_every_parent && self.prefetch_counts => {
                self.find_parents_pipelined(nodes, dist, sums.counts, piece, plain)
            }
            (Some(plain), true, _) => {
                self.find_parents_reading::<true>(nodes, dist, paths, piece, |v| {
                    (plain.of(v), &[][..])
                })
            }
            (Some(plain), false, _) => {
                self.find_parents_reading::<false>(nodes, dist, paths, piece, |v| {
                    (plain.of(v), &[][..])
                })
            }
            (None, _, _) => self.find_parents_reading::<false>(nodes, dist, paths, piece, |v| {
                entries(&self.adjacency, v, every_edge)
            }),
        }
    }

    /// [`BottomUpScan::find_parents`] reading in-neighbours (and rel ids where a rel filter
    /// needs them) with `read`, chosen once per morsel; with `PREFETCH_LISTS`, the in-lists of
    /// the candidates [`BOTTOM_UP_LIST_PREFETCH_AHEAD`] places on are prefetched.
    #[inline(always)]
    fn find_parents_reading<'r, const PREFETCH_LISTS: bool>(
        &self,
        nodes: std::ops::Range<u32>,
        dist: &[AtomicU32],
        paths: Option<&[AtomicU64]>,
        piece: &mut Piece,
        read: impl Fn(u32) -> (&'r [u32], &'r [u32]),
    ) -> bool {
        let mut overflow = false;
        let mut next = NextWords::new(self.frontier);
        for word in morsel_words(&nodes) {
            let before = self.unvisited.word(word);
            let mut remaining = before;
            let mut bits = before;
            // The candidates whose lists are not prefetched yet.
            let mut unfetched = before;
            let mut prefetch_next = || {
                if unfetched != 0 {
                    let v = (word * 64) as u32 + unfetched.trailing_zeros();
                    unfetched &= unfetched - 1;
                    if let Some(first) = read(v).0.first() {
                        prefetch(first);
                    }
                }
            };
            if PREFETCH_LISTS {
                for _ in 0..BOTTOM_UP_LIST_PREFETCH_AHEAD {
                    prefetch_next();
                }
            }
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let v = (word * 64) as u32 + bit;
                if PREFETCH_LISTS {
                    prefetch_next();
                }
                debug_assert!(nodes.contains(&v), "the map has no bit past the last node");
                if dist[v as usize].load(Ordering::Relaxed) != UNREACHED {
                    remaining &= !(1 << bit);
                    continue;
                }
                let Some(total) = self.parent_paths(read(v), paths, piece, &mut overflow) else {
                    continue;
                };
                remaining &= !(1 << bit);
                self.claim(v, total, dist, paths, piece, &mut next);
            }
            if remaining != before {
                self.unvisited.store_word(word, remaining);
            }
        }
        next.flush();
        overflow
    }

    /// [`BottomUpScan::find_parents`] for a counting level that sums every parent over plain
    /// in-lists. A word's unvisited nodes are cut into runs that no visited node with in-edges
    /// interrupts, of at most `flat_edges` in-edges; each run is summed by one flat pass over its
    /// lists laid end to end (`parent_sums::running_sums`), a node's sum the difference of two
    /// running sums. A node with more in-edges than a run may hold is summed alone. Exact: a run
    /// holds at most `u64::MAX` over the frontier's total counts in-edges, so no node's sum
    /// wraps, and a frontier node's count is at least 1, so a node has a parent exactly when
    /// its sum is not 0.
    fn find_parents_flat(
        &self,
        nodes: std::ops::Range<u32>,
        dist: &[AtomicU32],
        sums: PathSums,
        piece: &mut Piece,
        plain: PlainNeighbours,
    ) -> bool {
        let mut overflow = false;
        let mut next = NextWords::new(self.frontier);
        let mut running = std::mem::take(&mut piece.running);
        let flat_edges = (u128::from(u64::MAX) / sums.frontier_total.max(1))
            .min(FLAT_RUN_EDGES_MAX as u128) as u64;
        for word in morsel_words(&nodes) {
            if self.prefetch_counts {
                self.prefetch_heads_ahead(word, dist, plain.offsets());
            }
            let before = self.unvisited.word(word);
            if before == 0 {
                continue;
            }
            let first = (word * 64) as u32;
            let width = (first + 64).min(nodes.end) - first;
            if before.count_ones() < FLAT_WORD_NODES_MIN {
                next.flush();
                overflow |= self.find_parents_reading::<false>(
                    first..first + width,
                    dist,
                    Some(sums.counts),
                    piece,
                    |v| (plain.of(v), &[][..]),
                );
                continue;
            }
            // The map's nodes still unreached; the others leave the map.
            let candidates = still_unreached(first, before, dist);
            let mut remaining = candidates;
            let (offsets, edges) = plain.span(first, first + width);
            let base = offsets[0];
            // A run may pass over nodes without in-edges, not over reached ones with some (a
            // node passed over only costs its edges' reads: each member sums its own list).
            let with_in_edges = self.in_edge_words.get(word).copied().unwrap_or(u64::MAX);
            let open = candidates | !with_in_edges;
            let mut bit = 0;
            while bit < width && candidates >> bit != 0 {
                bit += (candidates >> bit).trailing_zeros();
                let reach = (!(open >> bit)).trailing_zeros().min(width - bit);
                let limit = offsets[bit as usize] + flat_edges;
                let ends = &offsets[bit as usize + 1..=(bit + reach) as usize];
                let len = ends.partition_point(|&end| end <= limit) as u32;
                if len == 0 {
                    // One node with more in-edges than a run holds.
                    let v = first + bit;
                    if let Some(total) =
                        self.sum_every_parent(plain.of(v), sums.counts, piece, &mut overflow)
                    {
                        remaining &= !(1 << bit);
                        self.claim(v, total, dist, Some(sums.counts), piece, &mut next);
                    }
                    bit += 1;
                    continue;
                }
                let start = offsets[bit as usize];
                let run_edges = &edges
                    [(start - base) as usize..(offsets[(bit + len) as usize] - base) as usize];
                running_sums(
                    run_edges,
                    self.frontier.current_words(),
                    sums.counts,
                    &mut running,
                );
                let mut members = (candidates >> bit) & low_bits(len);
                while members != 0 {
                    let member = bit + members.trailing_zeros();
                    members &= members - 1;
                    let v = first + member;
                    let low = (offsets[member as usize] - start) as usize;
                    let high = (offsets[member as usize + 1] - start) as usize;
                    piece.counters.edges_scanned += (high - low) as u64;
                    let total = running[high].wrapping_sub(running[low]);
                    if total == 0 {
                        continue;
                    }
                    piece.in_edges += (high - low) as u64;
                    remaining &= !(1 << member);
                    self.claim(v, total, dist, Some(sums.counts), piece, &mut next);
                }
                bit += len;
            }
            if remaining != before {
                self.unvisited.store_word(word, remaining);
            }
        }
        next.flush();
        piece.running = running;
        overflow
    }

    /// [`BottomUpScan::find_parents`] for a counting level that sums every parent over plain
    /// in-lists node by node (too few in-edges per node to sum flat): the morsel's unreached
    /// nodes are listed first, then summed in order while the in-lists of the candidates
    /// [`PIPELINE_LIST_AHEAD`] places on and the frontier parents' counts of those
    /// [`PIPELINE_COUNTS_AHEAD`] places on are prefetched. Such a level's nodes have one or two
    /// in-edges each, so its time is the cache misses on their lists and their parents' counts,
    /// one after the other per node without the prefetches.
    fn find_parents_pipelined(
        &self,
        nodes: std::ops::Range<u32>,
        dist: &[AtomicU32],
        counts: &[AtomicU64],
        piece: &mut Piece,
        plain: PlainNeighbours,
    ) -> bool {
        let mut candidates = std::mem::take(&mut piece.candidates);
        candidates.clear();
        for word in morsel_words(&nodes) {
            self.prefetch_heads_ahead(word, dist, plain.offsets());
            let before = self.unvisited.word(word);
            // `still_unreached` and then a pass over its bits measured about 1 ms slower on
            // level 5 at scale 22 than listing in the same loop (the pushes overlap the
            // distance loads), so this loop lists as it tests.
            let mut remaining = before;
            let mut bits = before;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let v = (word * 64) as u32 + bit;
                debug_assert!(nodes.contains(&v), "the map has no bit past the last node");
                if dist[v as usize].load(Ordering::Relaxed) == UNREACHED {
                    candidates.push(v);
                } else {
                    remaining &= !(1 << bit);
                }
            }
            if remaining != before {
                self.unvisited.store_word(word, remaining);
            }
        }
        let mut overflow = false;
        let mut next = NextWords::new(self.frontier);
        let mut claimed = ClaimedWords::default();
        for (i, &v) in candidates.iter().enumerate() {
            if let Some(&ahead) = candidates.get(i + PIPELINE_LIST_AHEAD) {
                if let Some(first) = plain.of(ahead).first() {
                    prefetch(first);
                }
            }
            if let Some(&ahead) = candidates.get(i + PIPELINE_COUNTS_AHEAD) {
                for &u in plain.of(ahead) {
                    if self.frontier.contains(u) {
                        prefetch(&counts[u as usize]);
                    }
                }
            }
            let Some(total) = self.sum_every_parent(plain.of(v), counts, piece, &mut overflow)
            else {
                continue;
            };
            claimed.clear(self.unvisited, v);
            self.claim(v, total, dist, Some(counts), piece, &mut next);
        }
        claimed.flush(self.unvisited);
        next.flush();
        piece.candidates = candidates;
        overflow
    }

    /// Prefetches the heads of the unvisited nodes [`WORD_HEADS_AHEAD`] bitmap words after
    /// `word` (`prefetch_word_heads`).
    #[inline(always)]
    fn prefetch_heads_ahead(&self, word: usize, dist: &[AtomicU32], offsets: &[u64]) {
        let ahead = word + WORD_HEADS_AHEAD;
        let bits = self.unvisited.word_or_empty(ahead);
        prefetch_word_heads(ahead, bits, dist, offsets);
    }

    /// Records `v` reached at this level, with `total` shortest paths when the search counts
    /// them (`paths`).
    #[inline(always)]
    fn claim(
        &self,
        v: u32,
        total: u64,
        dist: &[AtomicU32],
        paths: Option<&[AtomicU64]>,
        piece: &mut Piece,
        next: &mut NextWords,
    ) {
        // Only this thread writes v in this level; readers look for `level - 1` only.
        dist[v as usize].store(self.level, Ordering::Relaxed);
        if let Some(paths) = paths {
            paths[v as usize].store(total, Ordering::Relaxed);
            piece.level_paths += u128::from(total);
        }
        piece.nodes.push(v);
        next.push(v);
    }

    /// Whether an unvisited node with in-neighbours `sources` (and their rel ids `edges`, empty
    /// without a rel filter) has one in the frontier: `Some` of the summed path counts of those
    /// in-neighbours (with `paths`; else 0), `None` when it has none. A node found adds its
    /// in-degree to the piece's in-edges (the direction choice).
    #[inline(always)]
    fn parent_paths(
        &self,
        (sources, edges): (&[u32], &[u32]),
        paths: Option<&[AtomicU64]>,
        piece: &mut Piece,
        overflow: &mut bool,
    ) -> Option<u64> {
        if let (true, Some(paths)) = (self.sums_every_parent, paths) {
            return self.sum_every_parent(sources, paths, piece, overflow);
        }
        let every_edge = self.masks.edges.is_none();
        let mut found = false;
        let mut total: u64 = 0;
        let mut scanned = 0;
        for (i, &u) in sources.iter().enumerate() {
            scanned += 1;
            if !self.frontier.contains(u)
                || (!every_edge && !self.masks.follows(edges[i]))
                || (self.level > 1 && !self.masks.expandable(u))
            {
                continue;
            }
            found = true;
            match paths {
                None => break,
                Some(paths) => match total.checked_add(paths[u as usize].load(Ordering::Relaxed)) {
                    Some(sum) => total = sum,
                    None => *overflow = true,
                },
            }
        }
        piece.counters.edges_scanned += scanned;
        if found {
            piece.in_edges += sources.len() as u64;
        }
        found.then_some(total)
    }

    /// [`BottomUpScan::parent_paths`] for a counting level that follows every edge from every
    /// frontier node (no mask to test per edge or parent).
    #[inline(always)]
    fn sum_every_parent(
        &self,
        sources: &[u32],
        paths: &[AtomicU64],
        piece: &mut Piece,
        overflow: &mut bool,
    ) -> Option<u64> {
        let sum = sum_parents(sources, self.frontier.current_words(), paths);
        piece.counters.edges_scanned += sources.len() as u64;
        if sum.parents == 0 {
            return None;
        }
        piece.in_edges += sources.len() as u64;
        *overflow |= sum.overflow;
        Some(sum.total)
    }
}

/// The claimed nodes of one bitmap word at a time, cleared from the unvisited map once per
/// word (nodes come in increasing order; each word belongs to one morsel).
#[derive(Debug, Default)]
struct ClaimedWords {
    word: usize,
    bits: u64,
}

impl ClaimedWords {
    fn clear(&mut self, unvisited: &UnvisitedBits, v: u32) {
        let word = (v / 64) as usize;
        if word != self.word {
            assert!(
                word > self.word || self.bits == 0,
                "nodes come in increasing order"
            );
            self.flush(unvisited);
            self.word = word;
        }
        self.bits |= 1 << (v % 64);
    }

    fn flush(&mut self, unvisited: &UnvisitedBits) {
        if self.bits != 0 {
            unvisited.store_word(self.word, unvisited.word(self.word) & !self.bits);
            self.bits = 0;
        }
    }
}

/// A counting level's path counts, and the frontier's counts summed (a bound on any node's
/// parents' sum).
#[derive(Clone, Copy, Debug)]
struct PathSums<'a> {
    counts: &'a [AtomicU64],
    frontier_total: u128,
}

/// Enumerates every shortest path from a finished search's source to one target, walking
/// parents backwards (a parent is any predecessor one level closer). Memory is the path depth.
#[derive(Debug)]
pub struct AllShortestPaths {
    /// Backward walk: (node, next predecessor entry, end).
    stack: Vec<(u32, usize, usize)>,
    edges: Vec<u32>,
    started: bool,
    target: u32,
}

impl AllShortestPaths {
    pub fn new(target: u32) -> Self {
        Self {
            stack: Vec::new(),
            edges: Vec::new(),
            started: false,
            target,
        }
    }

    pub fn target(&self) -> u32 {
        self.target
    }

    /// Pushes a frame over `node`'s in-entries (positions `0..degree` of its entries).
    fn push(&mut self, graph: &Graph, node: u32) {
        let degree = graph.backward.view().degree(node) as usize;
        self.stack.push((node, 0, degree));
    }

    /// The next path as (intermediate nodes, edges) in forward order.
    pub fn next_path(
        &mut self,
        bfs: &Bfs,
        graph: &Graph,
        masks: &Masks,
    ) -> Option<(Vec<u32>, Vec<u32>)> {
        let source = bfs.source();
        if !self.started {
            self.started = true;
            self.push(graph, self.target);
        } else {
            // Resume after the last emitted path: drop the source frame.
            self.stack.pop();
            self.edges.pop();
        }
        let backward = graph.backward.view();
        while let Some(&mut (node, ref mut cursor, end)) = self.stack.last_mut() {
            let level = bfs.distance(node);
            let (sources, edge_ids) = backward.entries(node);
            let mut found = None;
            while *cursor < end {
                let i = *cursor;
                *cursor += 1;
                let u = sources[i];
                let edge = edge_ids[i];
                if bfs.distance(u) != level.wrapping_sub(1) || !masks.follows(edge) {
                    continue;
                }
                if u != source && !masks.expandable(u) {
                    continue;
                }
                found = Some((u, edge));
                break;
            }
            match found {
                Some((u, edge)) => {
                    self.edges.push(edge);
                    self.push(graph, u);
                    if u == source {
                        let mut nodes: Vec<u32> = self.stack[1..self.stack.len() - 1]
                            .iter()
                            .map(|f| f.0)
                            .collect();
                        nodes.reverse();
                        let mut edges = self.edges.clone();
                        edges.reverse();
                        return Some((nodes, edges));
                    }
                }
                None => {
                    self.stack.pop();
                    self.edges.pop();
                }
            }
        }
        None
    }
}
