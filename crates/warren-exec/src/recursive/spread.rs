//! Spreading activation (`CALL spread_activation(...)`): level-synchronous propagation of
//! activation from seed nodes along weighted rels, with decay and a threshold. The definition
//! is in `docs/SEMANTICS.md` ("Spreading activation"); in short, with `a_0` the seeds'
//! activations,
//!
//! ```text
//! a_h(v) = sum over rels u -> v with a_{h-1}(u) >= threshold of a_{h-1}(u) * w(rel) * decay
//! activation(v) = sum over h of a_h(v);  hops(v) = the first h at which v was reached
//! ```
//!
//! Each hop is one parallel pass over the frontier (the nodes reached at the previous hop whose
//! arrival passes the threshold), in morsels on the query's threads. A sparse hop **pushes**:
//! each frontier node adds into its targets' shared arrival with a compare-and-swap on the
//! f64's bits, and only touched nodes are reset, so the hop costs O(frontier entries). A dense
//! hop (frontier entries above [`PRIVATE_SHARE_MIN`] of the nodes) pushes into per-worker
//! arrays with plain adds and merges them over all nodes: twice as fast as the atomics on
//! Graph500. When the last hop is dense and the rows are wanted in id order, its merge also
//! writes the output rows of its node range (handed on as one chunk per range), so no pass over
//! the nodes follows. **Pull** (every node sums what its spreading in-neighbours send) is kept as a
//! strategy for tests and measurement but never chosen: it reads every entry of the graph and
//! measured slower than both pushes (docs/OPTIMIZATION_LOG.md).

use std::sync::atomic::{AtomicU64, Ordering};

use warren_common::{Error, Result};
use warren_storage::adjacency::AdjacencyView;
use warren_storage::buffer::Bitmap;

use super::morsels::for_each_morsel;
use super::prefetch::prefetch_adjacency;
use crate::context::{Interrupt, MemoryTracker};

/// The bits of an arrival slot no activation reached this hop (a NaN: `NaN >= t` is false, so
/// an unreached node never spreads).
const NOT_REACHED: u64 = u64::MAX;
/// A private arrival slot nothing reached this hop. Every amount sent is `+0.0` or positive
/// (seeds, decay and weights are non-negative, and a `-0.0` among them is read as `+0.0`), and
/// `-0.0 + x == x` for all of them, so a private push adds without a branch and a slot was
/// reached exactly when its sign bit is clear.
const NOTHING_ARRIVED: f64 = -0.0;
/// `hops` of a node not reached yet.
const HOPS_NONE: u8 = u8::MAX;
/// The largest `max_hops` (the hop count is kept in a byte).
pub const SPREAD_HOPS_MAX: u32 = 254;
/// Private arrays are chosen when the frontier's entries exceed this multiple of the nodes.
pub const PRIVATE_SHARE_MIN: f64 = 0.25;
/// Frontier nodes per push morsel: hubs make per-node work uneven, so morsels are small.
const PUSH_MORSEL_NODES: usize = 64;
/// Bytes of state per node: two arrival arrays, the total, the first hop, and three u32 lists.
pub const SPREAD_BYTES_PER_NODE: u64 = 8 + 8 + 8 + 1 + 3 * 4;

/// The parameters of one spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpreadParameters {
    pub decay: f64,
    pub threshold: f64,
    pub max_hops: u32,
}

/// How each hop walks the graph: chosen per hop (`Auto`) or forced (for tests and measurement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadStrategy {
    Auto,
    /// Push into the shared arrivals with compare-and-swap.
    Push,
    /// Push into per-worker arrival arrays (plain adds), then merge them over all nodes.
    PushPrivate,
    /// Every node sums what its spreading in-neighbours send.
    Pull,
}

/// The way one hop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HopKind {
    Push,
    PushPrivate,
    Pull,
}

/// The weight of each rel, by the rel (edge) id the adjacency entries carry.
#[derive(Debug)]
pub enum EdgeWeights<'a> {
    /// No weight property: every rel weighs 1.
    Unit,
    /// A DOUBLE column read in place; rels whose bit is set in `nulls` are NULL.
    Column {
        values: &'a [f64],
        nulls: Option<&'a Bitmap>,
    },
    /// Weights copied out (NaN for NULL), when the column cannot be read in place.
    Values(Vec<f64>),
}

impl EdgeWeights<'_> {
    /// The weight of `rel`, NaN when it is NULL (the rel is not followed).
    #[inline(always)]
    fn get(&self, rel: u32) -> f64 {
        match self {
            EdgeWeights::Unit => 1.0,
            EdgeWeights::Column { values, nulls } => {
                if nulls.is_some_and(|n| n.get(rel as usize)) {
                    f64::NAN
                } else {
                    values[rel as usize]
                }
            }
            EdgeWeights::Values(values) => values[rel as usize],
        }
    }
}

/// What a spread reads: the adjacency to push along (one view per direction followed), the
/// same entries reversed (for pull), and the weights.
pub struct SpreadGraph<'a> {
    pub push: Vec<AdjacencyView<'a>>,
    pub pull: Vec<AdjacencyView<'a>>,
    pub weights: EdgeWeights<'a>,
    pub num_nodes: u32,
}

/// How a spread runs: threads, morsel size, prefetch distance, strategy, limits.
pub struct SpreadRun<'a> {
    pub threads: usize,
    pub morsel_size: usize,
    pub prefetch_distance: usize,
    pub strategy: SpreadStrategy,
    pub workers: &'a crate::workers::WorkerPool,
    pub interrupt: &'a Interrupt,
    pub memory: &'a MemoryTracker,
    /// Where the per-node state comes from and goes back to (`None`: a new state per spread).
    pub states: Option<&'a SpreadStatePool>,
}

/// One reached node: its (dense) id, total activation, and the hop it was first reached at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Activation {
    pub node: u32,
    pub activation: f64,
    pub hops: u32,
}

/// Kùzu's wording for a negative rel weight met by `spread_activation`.
fn negative_weight(weight: f64) -> Error {
    Error::runtime(format!(
        "Found negative weight {weight}. This is not a supported weight for spread_activation"
    ))
}

/// The per-node state of a spread, sized for the graph and charged to the query's memory.
struct State {
    arrival: Vec<AtomicU64>,
    next: Vec<AtomicU64>,
    total: Vec<f64>,
    first_hop: Vec<u8>,
    /// One arrival array per worker for private pushes, made on first use and kept all
    /// [`NOTHING_ARRIVED`] between hops (and between spreads, in a pool).
    private: Vec<Vec<f64>>,
    /// Bytes of `private` charged to the running spread's memory tracker.
    private_charged: u64,
}

impl State {
    fn new(num_nodes: u32) -> Self {
        let n = num_nodes as usize;
        let unreached = || (0..n).map(|_| AtomicU64::new(NOT_REACHED)).collect();
        Self {
            arrival: unreached(),
            next: unreached(),
            total: vec![0.0; n],
            first_hop: vec![HOPS_NONE; n],
            private: Vec::new(),
            private_charged: 0,
        }
    }

    /// The nodes this state is sized for.
    fn num_nodes(&self) -> usize {
        self.total.len()
    }

    /// Bytes the state holds (what a pool keeps).
    fn held_bytes(&self) -> u64 {
        self.num_nodes() as u64 * SPREAD_BYTES_PER_NODE
            + (self.private.len() * self.num_nodes() * 8) as u64
    }

    /// Charges the private arrays of `threads` workers to `memory`, once per spread.
    fn charge_private(&mut self, threads: usize, memory: &MemoryTracker) -> Result<()> {
        let bytes = (threads.max(self.private.len()) * self.num_nodes() * 8) as u64;
        if bytes > self.private_charged {
            memory.reserve(bytes - self.private_charged, "spread_activation")?;
            self.private_charged = bytes;
        }
        Ok(())
    }

    /// Resets the entries of the nodes `out` lists (the spread's reached nodes): the arrivals
    /// and private arrays are already reset hop by hop, so only the totals and first hops
    /// remain. O(reached), not O(nodes).
    fn clear_reached(&mut self, out: &[Vec<Activation>]) {
        for a in out.iter().flatten() {
            self.total[a.node as usize] = 0.0;
            self.first_hop[a.node as usize] = HOPS_NONE;
        }
    }

    /// Whether every entry is as [`State::new`] makes it (for assertions: O(nodes)).
    fn is_clear(&self) -> bool {
        let unreached = |a: &Vec<AtomicU64>| {
            a.iter()
                .all(|slot| slot.load(Ordering::Relaxed) == NOT_REACHED)
        };
        unreached(&self.arrival)
            && unreached(&self.next)
            && self.total.iter().all(|&t| t.to_bits() == 0)
            && self.first_hop.iter().all(|&h| h == HOPS_NONE)
            && self
                .private
                .iter()
                .all(|p| p.iter().all(|x| x.to_bits() == NOTHING_ARRIVED.to_bits()))
    }

    fn ensure_private(&mut self, threads: usize) {
        let n = self.total.len();
        while self.private.len() < threads {
            self.private.push(vec![NOTHING_ARRIVED; n]);
        }
    }
}

/// Adds `x` to an arrival slot; true when this call reached the node first (this hop).
#[inline(always)]
fn add_arrival(slot: &AtomicU64, x: f64) -> bool {
    let mut old = slot.load(Ordering::Relaxed);
    loop {
        let first = old == NOT_REACHED;
        let new = if first { x } else { f64::from_bits(old) + x };
        match slot.compare_exchange_weak(old, new.to_bits(), Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return first,
            Err(actual) => old = actual,
        }
    }
}

/// The order of a spread's reached nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadOrder {
    /// Activation descending, then id ascending (the documented order).
    Ranked,
    /// Id ascending: what a consumer that does not need the ranking gets, without a sort.
    ById,
}

/// Runs a spread from `seeds` (dense id, initial activation; duplicates add up). Returns every
/// reached node, ordered by activation descending, then id ascending.
pub fn spread(
    graph: &SpreadGraph<'_>,
    seeds: &[(u32, f64)],
    parameters: SpreadParameters,
    run: &SpreadRun<'_>,
) -> Result<Vec<Activation>> {
    spread_in_order(graph, seeds, parameters, run, SpreadOrder::Ranked)
}

/// [`spread`], the reached nodes in `order`.
pub fn spread_in_order(
    graph: &SpreadGraph<'_>,
    seeds: &[(u32, f64)],
    parameters: SpreadParameters,
    run: &SpreadRun<'_>,
    order: SpreadOrder,
) -> Result<Vec<Activation>> {
    let chunks = spread_in_chunks(graph, seeds, parameters, run, order)?;
    Ok(match <[Vec<Activation>; 1]>::try_from(chunks) {
        Ok([only]) => only,
        Err(chunks) => chunks.concat(),
    })
}

/// [`spread_in_order`], the reached nodes as consecutive chunks (in `order` when read one
/// chunk after the other): a last hop that makes the rows in parallel leaves one chunk per
/// node range, which are not copied into one vector.
pub fn spread_in_chunks(
    graph: &SpreadGraph<'_>,
    seeds: &[(u32, f64)],
    parameters: SpreadParameters,
    run: &SpreadRun<'_>,
    order: SpreadOrder,
) -> Result<Vec<Vec<Activation>>> {
    assert!(
        parameters.max_hops <= SPREAD_HOPS_MAX,
        "max_hops checked by the caller"
    );
    assert!(
        seeds.iter().all(|&(v, _)| v < graph.num_nodes),
        "seeds are graph nodes"
    );
    let bytes = u64::from(graph.num_nodes) * SPREAD_BYTES_PER_NODE;
    run.memory.reserve(bytes, "spread_activation")?;
    let mut state = match run.states {
        Some(pool) => pool.take(graph.num_nodes),
        None => State::new(graph.num_nodes),
    };
    let result = spread_levels(graph, &mut state, seeds, parameters, run, order);
    run.memory.release(bytes + state.private_charged);
    // A failed spread leaves its state half-written: it is dropped, never pooled.
    let levels = result?;
    let (out, cleared) = match (levels.rows, order) {
        // The merge that made the rows also cleared every node's total and first hop.
        (Some(rows), _) => (rows, true),
        (None, SpreadOrder::Ranked) => (vec![ranked(&state, levels.reached)], false),
        (None, SpreadOrder::ById) => (vec![by_id(&state, levels.reached.len())], false),
    };
    if let Some(pool) = run.states {
        if !cleared {
            state.clear_reached(&out);
        }
        state.private_charged = 0;
        debug_assert!(state.is_clear(), "a state goes back to its pool as new");
        pool.give_back(state);
    }
    Ok(out)
}

/// What the hops of a spread leave: the reached nodes (in no order; complete only when `rows`
/// is `None`), or, when the last hop merged private arrays and the order is by id, the output
/// rows themselves, made by that merge.
struct Levels {
    reached: Vec<u32>,
    rows: Option<Vec<Vec<Activation>>>,
}

/// The hops of a spread.
fn spread_levels(
    graph: &SpreadGraph<'_>,
    state: &mut State,
    seeds: &[(u32, f64)],
    parameters: SpreadParameters,
    run: &SpreadRun<'_>,
    order: SpreadOrder,
) -> Result<Levels> {
    let mut touched = Vec::new();
    for &(v, a) in seeds {
        if add_arrival(&state.arrival[v as usize], a + 0.0) {
            touched.push(v);
        }
    }
    let mut reached = Vec::new();
    let mut rows = None;
    let mut frontier = settle(state, &touched, 0, parameters.threshold, &mut reached);
    for hop in 1..=parameters.max_hops {
        if frontier.is_empty() {
            break;
        }
        run.interrupt.check()?;
        let decay = parameters.decay + 0.0;
        let (next_touched, settled) = match hop_kind(graph, &frontier, run.strategy) {
            HopKind::Push => (push_level(graph, state, &frontier, decay, run)?, None),
            HopKind::PushPrivate => {
                let last = hop == parameters.max_hops;
                let hop_run = PrivateHop {
                    hop,
                    last,
                    rows: last && order == SpreadOrder::ById,
                    decay,
                    threshold: parameters.threshold,
                };
                let merged =
                    private_push_level(graph, state, &frontier, hop_run, run, &mut reached)?;
                rows = merged.rows;
                (merged.touched, Some(merged.spreads))
            }
            HopKind::Pull => (pull_level(graph, state, parameters, run)?, None),
        };
        for &v in &touched {
            state.arrival[v as usize].store(NOT_REACHED, Ordering::Relaxed);
        }
        std::mem::swap(&mut state.arrival, &mut state.next);
        touched = next_touched;
        frontier = match settled {
            Some(frontier) => frontier,
            None => settle(state, &touched, hop, parameters.threshold, &mut reached),
        };
    }
    for &v in &touched {
        state.arrival[v as usize].store(NOT_REACHED, Ordering::Relaxed);
    }
    Ok(Levels { reached, rows })
}

/// Adds this hop's arrivals (in `state.arrival`) of `touched` to the totals, records first
/// hops in `reached`, and returns the nodes that spread next (arrival at least `threshold`).
fn settle(
    state: &mut State,
    touched: &[u32],
    hop: u32,
    threshold: f64,
    reached: &mut Vec<u32>,
) -> Vec<u32> {
    let hop_byte = u8::try_from(hop).expect("hops are at most SPREAD_HOPS_MAX");
    let mut frontier = Vec::new();
    for &v in touched {
        let v_index = v as usize;
        let arrival = f64::from_bits(state.arrival[v_index].load(Ordering::Relaxed));
        debug_assert!(!arrival.is_nan(), "a touched node has an arrival");
        state.total[v_index] += arrival;
        if state.first_hop[v_index] == HOPS_NONE {
            state.first_hop[v_index] = hop_byte;
            reached.push(v);
        }
        if arrival >= threshold {
            frontier.push(v);
        }
    }
    frontier
}

/// How this hop runs: forced, or by the frontier's entries. A hop whose entries exceed
/// [`PRIVATE_SHARE_MIN`] of the nodes pushes into private arrays, whose merge costs O(nodes).
fn hop_kind(graph: &SpreadGraph<'_>, frontier: &[u32], strategy: SpreadStrategy) -> HopKind {
    match strategy {
        SpreadStrategy::Push => HopKind::Push,
        SpreadStrategy::PushPrivate => HopKind::PushPrivate,
        SpreadStrategy::Pull => HopKind::Pull,
        SpreadStrategy::Auto => {
            let limit = (f64::from(graph.num_nodes) * PRIVATE_SHARE_MIN) as u64;
            let mut entries = 0u64;
            for &v in frontier {
                entries += graph.push.iter().map(|view| degree(view, v)).sum::<u64>();
                if entries > limit {
                    return HopKind::PushPrivate;
                }
            }
            HopKind::Push
        }
    }
}

/// `v`'s degree in `view`, 0 for a node the view does not cover (added after its rels).
#[inline(always)]
fn degree(view: &AdjacencyView<'_>, v: u32) -> u64 {
    if (v as usize) < view.num_nodes() {
        view.degree(v)
    } else {
        0
    }
}

/// `v`'s entries in `view`, none for a node the view does not cover.
#[inline(always)]
fn entries<'a>(view: &AdjacencyView<'a>, v: u32) -> (&'a [u32], &'a [u32]) {
    if (v as usize) < view.num_nodes() {
        view.entries(v)
    } else {
        (&[], &[])
    }
}

/// One push hop: every frontier node sends `arrival * weight * decay` along its entries.
/// Returns the nodes reached this hop (each once).
fn push_level(
    graph: &SpreadGraph<'_>,
    state: &State,
    frontier: &[u32],
    decay: f64,
    run: &SpreadRun<'_>,
) -> Result<Vec<u32>> {
    let mut touched = Vec::new();
    let morsel = PUSH_MORSEL_NODES.min(run.morsel_size.max(1));
    for_each_morsel(
        frontier.len(),
        morsel,
        run.threads,
        run.workers,
        run.interrupt,
        |range| {
            let mut local = Vec::new();
            send_range(graph, state, frontier, range, decay, run, |v, x| {
                if add_arrival(&state.next[v as usize], x) {
                    local.push(v);
                }
            })?;
            Ok(local)
        },
        |local| touched.extend(local),
    )?;
    Ok(touched)
}

/// The hop a private push runs and what its merge settles with.
#[derive(Clone, Copy)]
struct PrivateHop {
    hop: u32,
    /// The last hop: nothing spreads after it, so its merge lists neither the nodes it reached
    /// (whose arrivals a next hop would reset) nor those that would spread, and keeps no
    /// arrivals.
    last: bool,
    /// The last hop of a spread ordered by id: its merge makes the output rows of its node
    /// ranges (every node reached at any hop, in id order), so no pass over the nodes follows.
    rows: bool,
    decay: f64,
    threshold: f64,
}

/// One push hop into private arrays: each morsel takes a worker's array from a pool, adds
/// into it without atomics, and gives it back; then the arrays are summed into the shared
/// arrivals over node ranges (and reset for the next hop), settling each node as it goes (see
/// [`merge_private`]).
fn private_push_level(
    graph: &SpreadGraph<'_>,
    state: &mut State,
    frontier: &[u32],
    hop: PrivateHop,
    run: &SpreadRun<'_>,
    reached: &mut Vec<u32>,
) -> Result<Merged> {
    let decay = hop.decay;
    let threads = run.threads.max(1);
    state.charge_private(threads, run.memory)?;
    state.ensure_private(threads);
    let pool = std::sync::Mutex::new(std::mem::take(&mut state.private));
    let morsel = PUSH_MORSEL_NODES.min(run.morsel_size.max(1));
    let result = for_each_morsel(
        frontier.len(),
        morsel,
        threads,
        run.workers,
        run.interrupt,
        |range| {
            let mut sums = pool
                .lock()
                .expect("pool lock")
                .pop()
                .expect("one array per worker");
            let pushed = push_private(graph, state, frontier, range, decay, run, &mut sums);
            pool.lock().expect("pool lock").push(sums);
            pushed
        },
        |()| {},
    );
    state.private = pool.into_inner().expect("pool lock");
    result?;
    merge_private(state, hop, run, reached)
}

/// Adds what `frontier[range]` sends into `sums` ([`NOTHING_ARRIVED`] where nothing did yet).
fn push_private(
    graph: &SpreadGraph<'_>,
    state: &State,
    frontier: &[u32],
    range: std::ops::Range<usize>,
    decay: f64,
    run: &SpreadRun<'_>,
    sums: &mut [f64],
) -> Result<()> {
    send_range(graph, state, frontier, range, decay, run, |v, x| {
        debug_assert!(x.is_sign_positive(), "amounts sent are +0.0 or positive");
        sums[v as usize] += x;
    })
}

/// Calls `deliver(v, arrival * weight * decay)` for every entry `u -> v` of every node `u` of
/// `frontier[range]` (rels with a NULL weight skipped; a negative weight is an error): the
/// loop both push strategies share, each with its own way of adding what arrives. Unit
/// weights take a loop of their own that never reads the entries' rel ids.
#[inline(always)]
fn send_range(
    graph: &SpreadGraph<'_>,
    state: &State,
    frontier: &[u32],
    range: std::ops::Range<usize>,
    decay: f64,
    run: &SpreadRun<'_>,
    mut deliver: impl FnMut(u32, f64),
) -> Result<()> {
    let unit = matches!(graph.weights, EdgeWeights::Unit);
    for view in &graph.push {
        for i in range.clone() {
            if run.prefetch_distance > 0 {
                prefetch_adjacency(view, frontier, i, run.prefetch_distance);
            }
            let u = frontier[i];
            let sent = f64::from_bits(state.arrival[u as usize].load(Ordering::Relaxed));
            let (targets, rels) = entries(view, u);
            if unit {
                let x = sent * decay;
                for &v in targets {
                    deliver(v, x);
                }
                continue;
            }
            for (&v, &rel) in targets.iter().zip(rels) {
                let weight = graph.weights.get(rel);
                if weight.is_nan() {
                    continue;
                }
                if weight < 0.0 {
                    return Err(negative_weight(weight));
                }
                deliver(v, sent * (weight + 0.0) * decay);
            }
        }
    }
    Ok(())
}

/// Sums the private arrays into the shared arrivals, node range by node range, resetting
/// them, and settles each node reached as [`settle`] does (its total, its first hop, whether it
/// spreads next) in the same parallel pass. Appends the nodes first reached to `reached`
/// (except when the hop makes the rows, which list them all).
fn merge_private(
    state: &mut State,
    hop: PrivateHop,
    run: &SpreadRun<'_>,
    reached: &mut Vec<u32>,
) -> Result<Merged> {
    let hop_byte = u8::try_from(hop.hop).expect("hops are at most SPREAD_HOPS_MAX");
    let arrays: Vec<SharedSlice<f64>> = state
        .private
        .iter_mut()
        .map(|a| SharedSlice::of(a))
        .collect();
    let total = SharedSlice::of(&mut state.total);
    let first_hop = SharedSlice::of(&mut state.first_hop);
    let next = &state.next;
    let mut morsels = Vec::new();
    for_each_morsel(
        next.len(),
        run.morsel_size.max(1) * 8,
        run.threads,
        run.workers,
        run.interrupt,
        |range| {
            // SAFETY: morsels are disjoint node ranges, so the morsel's slots of every array
            // are this worker's alone while the merge runs.
            let local = unsafe {
                if hop.rows {
                    MergedRange {
                        rows: merge_last_range_rows(
                            &arrays,
                            &total,
                            &first_hop,
                            range.clone(),
                            hop_byte,
                        ),
                        ..MergedRange::default()
                    }
                } else if hop.last {
                    MergedRange {
                        first: merge_last_range(
                            &arrays,
                            &total,
                            &first_hop,
                            range.clone(),
                            hop_byte,
                        ),
                        ..MergedRange::default()
                    }
                } else {
                    merge_spreading_range(
                        &arrays,
                        &total,
                        &first_hop,
                        next,
                        range.clone(),
                        hop_byte,
                        hop.threshold,
                    )
                }
            };
            Ok((range.start, local))
        },
        |morsel| morsels.push(morsel),
    )?;
    morsels.sort_unstable_by_key(|(start, _)| *start);
    let mut merged = Merged::default();
    if hop.rows {
        merged.rows = Some(morsels.into_iter().map(|(_, local)| local.rows).collect());
        return Ok(merged);
    }
    for (_, local) in morsels {
        merged.touched.extend(local.touched);
        merged.spreads.extend(local.spreads);
        reached.extend(local.first);
    }
    Ok(merged)
}

/// What a private hop's merge found: the nodes that received something and those that spread
/// next, both ascending (both empty after the last hop), and the output rows when the hop
/// makes them (one chunk per node range, in range order).
#[derive(Default)]
struct Merged {
    touched: Vec<u32>,
    spreads: Vec<u32>,
    rows: Option<Vec<Vec<Activation>>>,
}

/// The activation that arrived at `v` in every thread's array, summed, each slot reset to
/// [`NOTHING_ARRIVED`] for the next hop; [`NOTHING_ARRIVED`] itself when nothing arrived.
///
/// # Safety
/// No other thread may access slot `v` of any of the arrays during the call.
#[inline(always)]
unsafe fn take_arrived(arrays: &[SharedSlice<f64>], v: usize) -> f64 {
    let mut sum = NOTHING_ARRIVED;
    for array in arrays {
        // SAFETY: the caller's contract.
        sum += unsafe { array.replace(v, NOTHING_ARRIVED) };
    }
    sum
}

/// [`merge_last_range`] making the output rows of `range` instead of listing the nodes first
/// reached: one row per node reached at any hop, id ascending, each written at a cursor that
/// advances only for reached nodes (no branch on what arrived). The rows hold all the spread
/// says of their nodes, so each node's total and first hop are reset as its row is made (the
/// state is then as new, with no pass over the reached nodes afterwards).
///
/// # Safety
/// No other thread may access the slots of `range` in any of the arrays during the call.
unsafe fn merge_last_range_rows(
    arrays: &[SharedSlice<f64>],
    total: &SharedSlice<f64>,
    first_hop: &SharedSlice<u8>,
    range: std::ops::Range<usize>,
    hop_byte: u8,
) -> Vec<Activation> {
    // Rows are written into the vector's capacity at the cursor (never filled first): the cursor
    // stays below the node index within `range`, so below `range.len()`.
    let mut rows: Vec<Activation> = Vec::with_capacity(range.len());
    let slots = rows.as_mut_ptr();
    let mut count = 0;
    for v in range {
        // SAFETY: the caller's contract.
        let sum = unsafe { take_arrived(arrays, v) };
        let reached = sum.is_sign_positive();
        // SAFETY: the caller's contract.
        unsafe {
            let new_total = total.replace(v, 0.0) + sum;
            let old = first_hop.replace(v, HOPS_NONE);
            let hops = if reached & (old == HOPS_NONE) {
                hop_byte
            } else {
                old
            };
            debug_assert!(count < rows.capacity(), "the cursor is within the capacity");
            slots.add(count).write(Activation {
                node: v as u32,
                activation: new_total + 0.0,
                hops: u32::from(hops),
            });
            count += usize::from(hops != HOPS_NONE);
        }
    }
    // SAFETY: slots `0..count` were written above (each row at the cursor before it advanced).
    unsafe { rows.set_len(count) };
    rows
}

/// The last hop's merge of the node range `range`, without branches on what arrived: a slot
/// nothing reached sums to [`NOTHING_ARRIVED`], which leaves the total as it was (totals are
/// `+0.0` or positive), and the nodes first reached are written at a cursor that advances only
/// for them. Returns those nodes, ascending.
///
/// # Safety
/// No other thread may access the slots of `range` in any of the arrays during the call.
unsafe fn merge_last_range(
    arrays: &[SharedSlice<f64>],
    total: &SharedSlice<f64>,
    first_hop: &SharedSlice<u8>,
    range: std::ops::Range<usize>,
    hop_byte: u8,
) -> Vec<u32> {
    let mut first = vec![0u32; range.len()];
    let mut count = 0;
    for v in range {
        // SAFETY: the caller's contract.
        let sum = unsafe { take_arrived(arrays, v) };
        let reached = sum.is_sign_positive();
        // SAFETY: the caller's contract.
        unsafe {
            total.replace(v, total.get(v) + sum);
            let old = first_hop.get(v);
            let new_first = reached & (old == HOPS_NONE);
            first_hop.replace(v, if new_first { hop_byte } else { old });
            first[count] = v as u32;
            count += usize::from(new_first);
        }
    }
    first.truncate(count);
    first
}

/// A hop's merge of the node range `range` when another hop follows: stores each reached
/// node's arrival in `next`, adds it to its total, sets its first hop, and lists the nodes
/// reached, first reached and spreading next (arrival at least `threshold`), ascending.
///
/// # Safety
/// No other thread may access the slots of `range` in any of the arrays during the call.
unsafe fn merge_spreading_range(
    arrays: &[SharedSlice<f64>],
    total: &SharedSlice<f64>,
    first_hop: &SharedSlice<u8>,
    next: &[AtomicU64],
    range: std::ops::Range<usize>,
    hop_byte: u8,
    threshold: f64,
) -> MergedRange {
    let mut local = MergedRange::default();
    for v in range {
        // SAFETY: the caller's contract.
        let sum = unsafe { take_arrived(arrays, v) };
        if sum.is_sign_negative() {
            continue;
        }
        next[v].store(sum.to_bits(), Ordering::Relaxed);
        local.touched.push(v as u32);
        // SAFETY: the caller's contract.
        unsafe {
            total.replace(v, total.get(v) + sum);
            if first_hop.get(v) == HOPS_NONE {
                first_hop.replace(v, hop_byte);
                local.first.push(v as u32);
            }
        }
        if sum >= threshold {
            local.spreads.push(v as u32);
        }
    }
    local
}

/// What one merge morsel found: nodes reached this hop, first reached, spreading next.
#[derive(Default)]
struct MergedRange {
    touched: Vec<u32>,
    first: Vec<u32>,
    spreads: Vec<u32>,
    rows: Vec<Activation>,
}

/// A per-node array shared by the merge's workers, each of which touches its own node range.
struct SharedSlice<T> {
    start: *mut T,
    len: usize,
}

// SAFETY: the merge gives each worker disjoint slots (see `merge_private`).
unsafe impl<T: Send> Send for SharedSlice<T> {}
unsafe impl<T: Send> Sync for SharedSlice<T> {}

impl<T: Copy> SharedSlice<T> {
    fn of(array: &mut [T]) -> Self {
        Self {
            start: array.as_mut_ptr(),
            len: array.len(),
        }
    }

    /// Reads slot `v`.
    ///
    /// # Safety
    /// No other thread may write slot `v` during the call.
    unsafe fn get(&self, v: usize) -> T {
        assert!(v < self.len, "slot in range");
        // SAFETY: in bounds (asserted); no concurrent writer per the caller's contract.
        unsafe { *self.start.add(v) }
    }

    /// Writes `x` into slot `v` and returns what it held.
    ///
    /// # Safety
    /// No other thread may access slot `v` during the call.
    unsafe fn replace(&self, v: usize, x: T) -> T {
        assert!(v < self.len, "slot in range");
        // SAFETY: in bounds (asserted); exclusive per the caller's contract.
        unsafe { std::ptr::replace(self.start.add(v), x) }
    }
}

/// One pull hop: every node sums what its spreading in-neighbours send. Returns the nodes
/// reached this hop, ascending.
fn pull_level(
    graph: &SpreadGraph<'_>,
    state: &State,
    parameters: SpreadParameters,
    run: &SpreadRun<'_>,
) -> Result<Vec<u32>> {
    let mut morsels = Vec::new();
    for_each_morsel(
        graph.num_nodes as usize,
        run.morsel_size,
        run.threads,
        run.workers,
        run.interrupt,
        |range| {
            let mut local = Vec::new();
            for v in range.start as u32..range.end as u32 {
                if let Some(sum) = pulled(graph, state, v, parameters)? {
                    state.next[v as usize].store(sum.to_bits(), Ordering::Relaxed);
                    local.push(v);
                }
            }
            Ok((range.start, local))
        },
        |morsel| morsels.push(morsel),
    )?;
    morsels.sort_unstable_by_key(|(start, _)| *start);
    Ok(morsels.into_iter().flat_map(|(_, local)| local).collect())
}

/// What node `v` receives this hop from its spreading in-neighbours, `None` if none sends.
#[inline(always)]
fn pulled(
    graph: &SpreadGraph<'_>,
    state: &State,
    v: u32,
    parameters: SpreadParameters,
) -> Result<Option<f64>> {
    let mut sum = 0.0;
    let mut reached = false;
    for view in &graph.pull {
        let (sources, rels) = entries(view, v);
        for (&u, &rel) in sources.iter().zip(rels) {
            let sent = f64::from_bits(state.arrival[u as usize].load(Ordering::Relaxed));
            if sent.is_nan() || sent < parameters.threshold {
                continue;
            }
            let weight = graph.weights.get(rel);
            if weight.is_nan() {
                continue;
            }
            if weight < 0.0 {
                return Err(negative_weight(weight));
            }
            sum += sent * weight * parameters.decay;
            reached = true;
        }
    }
    Ok(reached.then_some(sum))
}

/// The reached nodes with their totals and first hops, activation descending, id ascending.
/// Few nodes are sorted by comparison; many (over [`RADIX_RANK_SHARE`] of the graph) are
/// listed in id order from the first-hop array and radix-sorted by activation, which is
/// stable, so ties keep id order.
fn ranked(state: &State, reached: Vec<u32>) -> Vec<Activation> {
    let nodes = state.first_hop.len();
    if reached.len() < RADIX_RANK_MIN || (reached.len() as f64) < RADIX_RANK_SHARE * nodes as f64 {
        let mut out: Vec<Activation> = reached.into_iter().map(|v| activation(state, v)).collect();
        out.sort_unstable_by(rank_order);
        return out;
    }
    // Each item carries what its row needs (the key is the activation, inverted), so the
    // sorted items are turned into rows without reading the per-node arrays at random.
    let mut keyed: Vec<(u64, u32, u8)> = Vec::with_capacity(reached.len());
    for (v, &hop) in state.first_hop.iter().enumerate() {
        if hop != HOPS_NONE {
            keyed.push((descending_key(state.total[v]), v as u32, hop));
        }
    }
    debug_assert_eq!(keyed.len(), reached.len());
    radix_sort_by_key(&mut keyed, |item| item.0);
    keyed
        .into_iter()
        .map(|(key, node, hop)| Activation {
            node,
            activation: f64::from_bits(!key),
            hops: u32::from(hop),
        })
        .collect()
}

/// The rows of `chunks` that can be among the first `top` of the ranking (activation
/// descending, then id ascending): every row whose activation is at least the `top`-th
/// largest, so that all rows tied with it are kept; ranked. A top-N above that sorts by the
/// activation first keeps only such rows (`Plan::Procedure::top`).
pub fn ranked_top(chunks: &[Vec<Activation>], top: usize) -> Vec<Activation> {
    let count: usize = chunks.iter().map(Vec::len).sum();
    if top == 0 {
        return Vec::new();
    }
    let mut kept: Vec<Activation> = if count <= top {
        chunks.concat()
    } else {
        let mut values: Vec<f64> = chunks.iter().flatten().map(|a| a.activation).collect();
        let (_, boundary, _) = values.select_nth_unstable_by(top - 1, |a, b| b.total_cmp(a));
        let boundary = *boundary;
        chunks
            .iter()
            .flatten()
            .filter(|a| a.activation.total_cmp(&boundary).is_ge())
            .copied()
            .collect()
    };
    kept.sort_unstable_by(rank_order);
    debug_assert!(kept.len() >= top.min(count));
    kept
}

/// The ranking's order: activation descending, then id ascending.
fn rank_order(a: &Activation, b: &Activation) -> std::cmp::Ordering {
    b.activation
        .total_cmp(&a.activation)
        .then(a.node.cmp(&b.node))
}

/// The `count` reached nodes with their totals and first hops, id ascending: one pass over the
/// first-hop array, no sort.
fn by_id(state: &State, count: usize) -> Vec<Activation> {
    let mut out = Vec::with_capacity(count);
    for (v, &hop) in state.first_hop.iter().enumerate() {
        if hop != HOPS_NONE {
            out.push(Activation {
                node: v as u32,
                activation: state.total[v] + 0.0,
                hops: u32::from(hop),
            });
        }
    }
    debug_assert_eq!(out.len(), count);
    out
}

/// Reached nodes over this share of the graph, and at least `RADIX_RANK_MIN` of them, are
/// ranked by radix sort (`ranked`).
const RADIX_RANK_SHARE: f64 = 1.0 / 64.0;
const RADIX_RANK_MIN: usize = 4096;

fn activation(state: &State, v: u32) -> Activation {
    Activation {
        node: v,
        activation: state.total[v as usize],
        hops: u32::from(state.first_hop[v as usize]),
    }
}

/// A key whose ascending order is `activation`'s descending order. Activations are sums of
/// non-negative terms (weights and seeds are checked), so their bits order like their values;
/// a -0.0 counts as 0.
#[inline]
fn descending_key(activation: f64) -> u64 {
    debug_assert!(activation >= 0.0, "activations are non-negative");
    !(activation + 0.0).to_bits()
}

/// Bits per radix digit.
const RADIX_BITS: u32 = 11;

/// Sorts by `key`, stably (least significant digit first), skipping digits all keys share.
fn radix_sort_by_key<T: Copy + Default>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    const BUCKETS: usize = 1 << RADIX_BITS;
    let digits = 64u32.div_ceil(RADIX_BITS) as usize;
    let digit = |key: u64, d: usize| ((key >> (d as u32 * RADIX_BITS)) as usize) & (BUCKETS - 1);
    let mut counts = vec![[0usize; BUCKETS]; digits];
    for item in items.iter() {
        let key = key(item);
        for (d, count) in counts.iter_mut().enumerate() {
            count[digit(key, d)] += 1;
        }
    }
    let mut spare = vec![T::default(); items.len()];
    for (d, count) in counts.iter().enumerate() {
        if count.contains(&items.len()) {
            continue;
        }
        let mut next = [0usize; BUCKETS];
        let mut sum = 0;
        for (bucket, &c) in count.iter().enumerate() {
            next[bucket] = sum;
            sum += c;
        }
        for &item in items.iter() {
            let bucket = digit(key(&item), d);
            spare[next[bucket]] = item;
            next[bucket] += 1;
        }
        std::mem::swap(items, &mut spare);
    }
}

mod pool;
pub use pool::{SpreadStatePool, SPREAD_IDLE_BYTES_MAX};

#[cfg(test)]
mod tests;
