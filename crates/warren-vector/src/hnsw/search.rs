//! Beam search over one layer (the greedy best-first search of Malkov & Yashunin), with the
//! per-thread scratch it reuses: a visited bit per node (a search clears only the bits it set),
//! and either two heaps (a search with a filter) or one sorted beam (a search that
//! accepts every node).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::layer::Layer;
use super::measure::Query;
use super::params::ROWS_MAX;

/// A row (or, inside a layer, a node) and its distance to the query. Ordered by distance, then
/// id, so that results are deterministic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    pub row: u32,
    pub distance: f32,
}

impl Eq for Neighbour {}

impl Ord for Neighbour {
    fn cmp(&self, other: &Self) -> Ordering {
        self.distance
            .total_cmp(&other.distance)
            .then(self.row.cmp(&other.row))
    }
}

impl PartialOrd for Neighbour {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What one thread reuses from search to search. Create one per thread.
#[derive(Default)]
pub struct SearchScratch {
    visited: VisitedBits,
    candidates: BinaryHeap<Reverse<Neighbour>>,
    results: BinaryHeap<Neighbour>,
    /// The sorted beam of [`search_layer_beam`].
    beam: Vec<BeamEntry>,
    /// The nodes that join the beam in its next merge: a search's entries, then those an
    /// expansion found (see `merge_beam`).
    arrivals: Vec<BeamEntry>,
    pub(crate) found: Vec<Neighbour>,
    pub(crate) entries: Vec<u32>,
    /// The query as the graph measures it (its codes).
    pub(crate) query: Query,
    /// The unvisited neighbours of the node being expanded.
    fresh: Vec<u32>,
    /// The unvisited neighbours of the node expected to be expanded next, listed one
    /// expansion early (see `search_layer_beam`).
    ahead: Vec<u32>,
    /// Skip the prefetch of neighbour vectors (for measuring it; see `set_prefetch`).
    no_prefetch: bool,
    /// Distances computed by the searches of this scratch so far, per layer.
    pub(crate) counts: DistanceCounts,
}

/// Distances computed by the searches of one scratch, per layer (for profiling: the work of a
/// query is about its distance count times the cost of one distance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DistanceCounts {
    pub upper: u64,
    pub lower: u64,
}

/// How many neighbours ahead of the distance loop their vectors are prefetched. The beam
/// search asks for the first this many of the next expansion's unvisited neighbours one
/// expansion early (`look_ahead`), which at 16 covers the whole list of most expansions (a
/// query at 1M rows measures about 12 per expansion): the loads of a list's tail then overlap
/// an expansion too, not only the group or two measured before them (docs/OPTIMIZATION_LOG.md
/// 277).
const PREFETCH_AHEAD: usize = 16;

impl SearchScratch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether searches with this scratch prefetch the vectors of a node's unvisited
    /// neighbours before computing their distances (on by default).
    pub fn set_prefetch(&mut self, prefetch: bool) {
        self.no_prefetch = !prefetch;
    }

    pub fn prefetches(&self) -> bool {
        !self.no_prefetch
    }

    /// Distances computed by index searches with this scratch since it was made (the build's
    /// searches are not counted).
    pub fn distance_counts(&self) -> DistanceCounts {
        self.counts
    }

    /// Starts a search over `nodes` nodes, every node unvisited.
    fn begin(&mut self, nodes: usize) {
        self.visited.begin(nodes);
        self.candidates.clear();
        self.results.clear();
        self.beam.clear();
    }
}

/// The nodes one search has visited: a bit per node, and the nodes whose bits are set, so that
/// the next search clears only those (O(visited), not O(nodes)). At 1M nodes the bits take 125
/// KiB and stay in L2, where `u32` epoch stamps took 4 MB (docs/OPTIMIZATION_LOG.md).
#[derive(Default)]
struct VisitedBits {
    words: Vec<u64>,
    /// Every node marked since the last `begin`, in no order.
    marked: Vec<u32>,
}

impl VisitedBits {
    /// Clears the marks of the last search and sizes the bits for `nodes` nodes.
    fn begin(&mut self, nodes: usize) {
        if self.marked.len() * 8 >= self.words.len() {
            // Cheaper to clear every word than to visit the marks.
            self.words.fill(0);
        } else {
            for &node in &self.marked {
                self.words[(node / 64) as usize] = 0;
            }
        }
        self.marked.clear();
        let words = nodes.div_ceil(64);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        debug_assert!(self.words.iter().all(|&word| word == 0));
    }

    /// Marks `node` visited; false when it already was.
    #[inline]
    fn visit(&mut self, node: u32) -> bool {
        let fresh = self.set_bit(node);
        if fresh {
            self.marked.push(node);
        }
        fresh
    }

    /// Lists in `out` the nodes of `nodes` whose bits were clear, setting them and recording
    /// them in `marked`. Branch-free per node: each is written at the end of
    /// `out` and of `marked`, which grow by one only when its bit was clear (most are visited
    /// in a beam search, so a branch on it would be mispredicted at each one kept), and no
    /// `memcpy` call copies the few kept into `marked`.
    #[inline(always)]
    fn mark_fresh(&mut self, nodes: &[u32], out: &mut Vec<u32>) {
        let count = nodes.len();
        out.clear();
        out.reserve(count);
        self.marked.reserve(count);
        let marked_before = self.marked.len();
        let listed = &mut out.spare_capacity_mut()[..count];
        let marks = &mut self.marked.spare_capacity_mut()[..count];
        let mut kept = 0;
        for &node in nodes {
            listed[kept].write(node);
            marks[kept].write(node);
            kept += usize::from(Self::set_bit_in(&mut self.words, node));
        }
        // SAFETY: the first `kept` spare slots of both were written above.
        unsafe {
            out.set_len(kept);
            self.marked.set_len(marked_before + kept);
        }
    }

    /// Whether `node` is marked.
    #[inline(always)]
    fn is_set(&self, node: u32) -> bool {
        self.words[(node / 64) as usize] & (1u64 << (node % 64)) != 0
    }

    /// Sets `node`'s bit without a branch; whether it was clear. The caller records the node
    /// in `marked` when it was.
    #[inline(always)]
    fn set_bit(&mut self, node: u32) -> bool {
        Self::set_bit_in(&mut self.words, node)
    }

    /// [`set_bit`](Self::set_bit) on the words alone (for a caller that also holds `marked`).
    #[inline(always)]
    fn set_bit_in(words: &mut [u64], node: u32) -> bool {
        let (word, bit) = ((node / 64) as usize, 1u64 << (node % 64));
        let before = words[word];
        words[word] = before | bit;
        before & bit == 0
    }
}

/// Lists in `out` the neighbours of `node` for which `keep` says yes. Branch-free per slot:
/// every neighbour is written at the end of `out`, which grows by one only when it is kept
/// (most are visited in a beam search, so a branch on it would be mispredicted at each one
/// kept).
#[inline(always)]
fn list_neighbours(
    layer: &Layer,
    node: u32,
    out: &mut Vec<u32>,
    mut keep: impl FnMut(u32) -> bool,
) {
    out.clear();
    let (count, neighbours) = layer.neighbours(node);
    out.reserve(count);
    let spare = &mut out.spare_capacity_mut()[..count];
    let mut kept = 0;
    for neighbour in neighbours {
        spare[kept].write(neighbour);
        kept += usize::from(keep(neighbour));
    }
    // SAFETY: the first `kept` slots of the spare capacity were written above.
    unsafe { out.set_len(kept) };
}

/// Whether the CPU runs this module's AVX-512 forms (the list walk, the ranks, the merges).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt")
}

/// Lists in `fresh` the neighbours of `node` not visited yet in this search, marking them
/// visited (`listed`: a buffer for the unvisited ones before they are marked).
#[inline(always)]
fn unvisited_neighbours(
    layer: &Layer,
    node: u32,
    visited: &mut VisitedBits,
    listed: &mut Vec<u32>,
    fresh: &mut Vec<u32>,
) {
    unvisited_so_far(layer, node, visited, listed);
    visited.mark_fresh(listed, fresh);
}

/// Two stages ahead, for [`search_layer_beam`] (`waiting`: the beam after the node being
/// expanded): the lists of the [`LISTS_AHEAD`] candidates after the next one start loading,
/// and the next candidate's list (asked for earlier) is read now into `ahead`, its unvisited
/// neighbours unmarked, and handed to `prefetch_codes`. Returns the next candidate, whose
/// expansion takes the list as it is unless a node found meanwhile joins before it.
#[inline(always)]
fn look_ahead(
    layer: &Layer,
    waiting: &[BeamEntry],
    visited: &VisitedBits,
    ahead: &mut Vec<u32>,
    prefetch_codes: impl Fn(&[u32]),
) -> Option<u32> {
    let mut waiting = waiting.iter().filter(|entry| !entry.expanded());
    let next = waiting.next().map(|entry| entry.hit().row);
    for after in waiting.take(LISTS_AHEAD) {
        layer.prefetch(after.hit().row);
    }
    if let Some(next) = next {
        unvisited_so_far(layer, next, visited, ahead);
        prefetch_codes(ahead);
    }
    next
}

/// Moves the list made by [`look_ahead`] into `fresh` and marks it (nothing was marked since
/// it was made; a list read mid-update that held a node twice yields it once).
#[inline(always)]
fn take_listed_ahead(visited: &mut VisitedBits, ahead: &[u32], fresh: &mut Vec<u32>) {
    visited.mark_fresh(ahead, fresh);
}

/// Lists in `out` the neighbours of `node` whose bits are clear, without marking them (the
/// look-ahead of [`search_layer_beam`]).
#[inline(always)]
fn unvisited_so_far(layer: &Layer, node: u32, visited: &VisitedBits, out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: AVX-512F and POPCNT were detected.
        unsafe { unvisited_so_far_avx512(layer.slots(node), &visited.words, out) };
        return;
    }
    list_neighbours(layer, node, out, |neighbour| !visited.is_set(neighbour));
}

/// [`unvisited_so_far`] sixteen slots at a time: the slots are loaded at once, their bits'
/// words gathered, and the unvisited ones packed into `out`, with no branch per slot (the
/// scalar walk's test per slot, and its exit after a count that differs per node, were about a
/// tenth of the build's samples).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn unvisited_so_far_avx512(
    slots: &[std::sync::atomic::AtomicU32],
    words: &[u64],
    out: &mut Vec<u32>,
) {
    use std::arch::x86_64::{
        _mm512_and_si512, _mm512_mask_cmplt_epu32_mask, _mm512_mask_i32gather_epi32,
        _mm512_mask_testn_epi32_mask, _mm512_maskz_compress_epi32, _mm512_set1_epi32,
        _mm512_setzero_si512, _mm512_sllv_epi32, _mm512_srli_epi32, _mm512_storeu_si512,
    };
    const LANES: usize = 16;
    out.clear();
    // Each step stores sixteen lanes at the end of what was kept.
    out.reserve(slots.len() + LANES);
    let listed_out = out.as_mut_ptr();
    // The bits as 32-bit words: on x86 (little-endian) bit `b` of the `u64` words is bit
    // `b % 32` of 32-bit word `b / 32`.
    let bit_words = words.as_ptr().cast::<i32>();
    // Ids below this have their bit in `words` (`EMPTY` does not: the bits cover at most
    // `ROWS_MAX + 1` nodes).
    let covered = _mm512_set1_epi32((words.len() * 64).min(super::layer::EMPTY as usize) as i32);
    let low_five = _mm512_set1_epi32(31);
    let one = _mm512_set1_epi32(1);
    let mut kept = 0usize;
    for start in (0..slots.len()).step_by(LANES) {
        let lanes = lane_mask(slots.len() - start);
        // SAFETY: AVX-512F is enabled here; the lanes lie inside the slots.
        let ids = unsafe { load_slots(&slots[start..], lanes) };
        // Only ids the bits cover are looked up: `EMPTY` (a slot a writer is clearing) is
        // skipped, and no lane can gather past the bits.
        let listed = _mm512_mask_cmplt_epu32_mask(lanes, ids, covered);
        // SAFETY: every listed lane's word lies inside `words`.
        let bit_word = unsafe {
            _mm512_mask_i32gather_epi32::<4>(
                _mm512_setzero_si512(),
                listed,
                _mm512_srli_epi32::<5>(ids),
                bit_words.cast(),
            )
        };
        let bit = _mm512_sllv_epi32(one, _mm512_and_si512(ids, low_five));
        let unvisited = _mm512_mask_testn_epi32_mask(listed, bit_word, bit);
        // SAFETY: `kept + LANES <= slots.len() + LANES`, inside the capacity.
        unsafe {
            _mm512_storeu_si512(
                listed_out.add(kept).cast(),
                _mm512_maskz_compress_epi32(unvisited, ids),
            )
        };
        kept += unvisited.count_ones() as usize;
    }
    // SAFETY: the first `kept` elements were written above.
    unsafe { out.set_len(kept) };
}

/// The first `count` of sixteen lanes (all sixteen from 16 on).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lane_mask(count: usize) -> u16 {
    if count >= 16 {
        u16::MAX
    } else {
        (1u16 << count) - 1
    }
}

/// Loads the slots of `lanes` (at most sixteen, all inside `slots`) in one instruction, the
/// others zero. Each slot is a 4-byte aligned word that writers store atomically; the load
/// reads each lane as one aligned access, as a relaxed atomic load does (a reader racing a
/// writer sees each slot old or new, never torn). It is written as assembly because Rust has
/// no vector atomic load, and an intrinsic's plain load racing the writers' stores would be a
/// data race in Rust's model.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn load_slots(
    slots: &[std::sync::atomic::AtomicU32],
    lanes: u16,
) -> std::arch::x86_64::__m512i {
    debug_assert!(lanes == 0 || (16 - lanes.leading_zeros() as usize) <= slots.len());
    let loaded: std::arch::x86_64::__m512i;
    // SAFETY: masked-off lanes are not read and never fault; the lanes read lie inside
    // `slots` (asserted above).
    unsafe {
        std::arch::asm!(
            "vmovdqu32 {loaded}{{{lanes}}}{{z}}, [{slots}]",
            loaded = out(zmm_reg) loaded,
            lanes = in(kreg) lanes,
            slots = in(reg) slots.as_ptr(),
            options(nostack, readonly, preserves_flags),
        )
    };
    loaded
}

/// Searches `layer` from `entries` with beam width `ef`, writing the (at most `ef`) nearest
/// accepted nodes into `out`, nearest first. Nodes that `accept` rejects are still traversed
/// (so tombstones and filters never cut the graph), and the search does not stop while fewer
/// than `ef` nodes were accepted: a selective filter makes it expand until it finds `ef` or
/// exhausts what it can reach. `distances(nodes, out)` measures up to [`MEASURE_GROUP`] nodes
/// at once, as in [`search_layer_beam`]; `prefetch(node)` starts loading a node's vector.
/// Returns the number of distances computed.
#[allow(clippy::too_many_arguments)]
pub fn search_layer<D, A, P>(
    layer: &Layer,
    entries: &[u32],
    ef: usize,
    distances: D,
    accept: A,
    prefetch: P,
    scratch: &mut SearchScratch,
    out: &mut Vec<Neighbour>,
) -> u64
where
    D: Fn(&[u32], &mut [f32]),
    A: Fn(u32) -> bool,
    P: Fn(u32),
{
    assert!(ef > 0, "a beam needs a positive width");
    scratch.begin(layer.nodes());
    let SearchScratch {
        visited,
        candidates,
        results,
        fresh,
        ahead,
        no_prefetch,
        ..
    } = scratch;
    let prefetching = !*no_prefetch;
    let mut computed = 0u64;
    for &entry in entries {
        if visited.visit(entry) {
            computed += 1;
            let found = Neighbour {
                row: entry,
                distance: measure_one(&distances, entry),
            };
            candidates.push(Reverse(found));
            if accept(entry) {
                results.push(found);
            }
        }
    }
    while results.len() > ef {
        results.pop();
    }
    while let Some(Reverse(nearest)) = candidates.pop() {
        let worst = results.peek().map_or(f32::INFINITY, |worst| worst.distance);
        if results.len() >= ef && nearest.distance > worst {
            break;
        }
        // The next candidate's list is likely read next: start loading it now.
        if let Some(Reverse(next)) = candidates.peek() {
            layer.prefetch(next.row);
        }
        unvisited_neighbours(layer, nearest.row, visited, ahead, fresh);
        computed += fresh.len() as u64;
        prefetch_first(fresh, prefetching, &prefetch);
        measure_groups(
            fresh,
            prefetching,
            &distances,
            &prefetch,
            |group, group_distances| {
                for (&row, &distance) in group.iter().zip(group_distances) {
                    let found = Neighbour { row, distance };
                    let worst = results.peek().map_or(f32::INFINITY, |worst| worst.distance);
                    if results.len() < ef || found.distance < worst {
                        candidates.push(Reverse(found));
                        if accept(found.row) {
                            results.push(found);
                            if results.len() > ef {
                                results.pop();
                            }
                        }
                    }
                }
            },
        );
    }
    out.clear();
    out.extend(results.drain());
    out.sort_unstable();
    computed
}

/// One node of a sorted beam in one word, so that the beam's binary search compares words and
/// an insertion moves 8 bytes per entry: the distance's bits in an order-preserving form (high
/// half), the node (bits 1-31, as [`ROWS_MAX`] allows) and whether its list was read (bit 0).
/// Two entries compare as their `(distance, node)` pairs do, with `f32::total_cmp`'s order.
#[derive(Clone, Copy, Debug)]
struct BeamEntry(u64);

impl BeamEntry {
    const EXPANDED: u64 = 1;

    #[inline]
    fn new(hit: Neighbour) -> Self {
        debug_assert!(hit.row as usize <= ROWS_MAX);
        BeamEntry(u64::from(ordered_bits(hit.distance)) << 32 | u64::from(hit.row) << 1)
    }

    /// The entry without its expanded flag: what orders it.
    #[inline]
    fn key(self) -> u64 {
        self.0 & !Self::EXPANDED
    }

    #[inline]
    fn hit(self) -> Neighbour {
        Neighbour {
            row: (self.0 as u32) >> 1,
            distance: distance_of_ordered_bits((self.0 >> 32) as u32),
        }
    }

    #[inline]
    fn expanded(self) -> bool {
        self.0 & Self::EXPANDED != 0
    }

    #[inline]
    fn mark_expanded(&mut self) {
        self.0 |= Self::EXPANDED;
    }
}

/// `distance`'s bits mapped so that unsigned order is `f32::total_cmp`'s order.
#[inline]
fn ordered_bits(distance: f32) -> u32 {
    let bits = distance.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// The inverse of [`ordered_bits`].
#[inline]
fn distance_of_ordered_bits(ordered: u32) -> f32 {
    f32::from_bits(if ordered >> 31 == 1 {
        ordered & !(1 << 31)
    } else {
        !ordered
    })
}

/// One node's distance through a group distance function (a search's entries).
#[inline]
fn measure_one<D: Fn(&[u32], &mut [f32])>(distances: &D, node: u32) -> f32 {
    let mut one = [0.0f32];
    distances(&[node], &mut one);
    one[0]
}

/// Hands `measured` each group of [`MEASURE_GROUP`] nodes of `fresh` (the last may be
/// shorter) with their distances, in order, measuring a group per call of `distances`; when
/// `prefetching`, each node's vector is prefetched [`PREFETCH_AHEAD`] nodes before it is
/// measured (the caller asks for the first `PREFETCH_AHEAD` with [`prefetch_first`], as early
/// as it can).
#[inline(always)]
fn measure_groups<D, P>(
    fresh: &[u32],
    prefetching: bool,
    distances: &D,
    prefetch: &P,
    mut measured: impl FnMut(&[u32], &[f32]),
) where
    D: Fn(&[u32], &mut [f32]),
    P: Fn(u32),
{
    for (index, group) in fresh.chunks(MEASURE_GROUP).enumerate() {
        if prefetching {
            let ahead = index * MEASURE_GROUP + PREFETCH_AHEAD;
            for &node in fresh.iter().skip(ahead).take(MEASURE_GROUP) {
                prefetch(node);
            }
        }
        let mut group_distances = [0.0f32; MEASURE_GROUP];
        distances(group, &mut group_distances[..group.len()]);
        measured(group, &group_distances[..group.len()]);
    }
}

/// Asks for the vectors of the first [`PREFETCH_AHEAD`] nodes of `fresh` (the rest are asked
/// for by `measure_groups` as it goes).
#[inline(always)]
fn prefetch_first<P: Fn(u32)>(fresh: &[u32], prefetching: bool, prefetch: &P) {
    if prefetching {
        for &node in fresh.iter().take(PREFETCH_AHEAD) {
            prefetch(node);
        }
    }
}

/// How many candidates past the next one [`search_layer_beam`] asks for the lists of.
const LISTS_AHEAD: usize = 2;

/// How many nodes [`search_layer_beam`] hands its distance function at once.
pub const MEASURE_GROUP: usize = 4;

/// [`search_layer`] for a search that accepts every node (the build, the upper layer, an
/// unfiltered query over an index without deletions), with the beam as one sorted array of at
/// most `ef` nodes instead of two heaps: the nearest node not yet expanded is the first such
/// entry, the nodes an expansion finds join at their places in one merge after it (the
/// farthest fall off the end; `merge_beam`), and the search ends when every node of the beam
/// was expanded. It expands the same nodes in the same order as the heaps would (the heaps'
/// candidates beyond the `ef` nearest are never expanded, as the search stops at the first of
/// them), up to nodes at exactly the distance of the beam's farthest. `distances(nodes, out)`
/// measures up to [`MEASURE_GROUP`] nodes at once (an expansion's unvisited neighbours are
/// measured a group at a time). Returns the number of distances computed.
pub fn search_layer_beam<D, P>(
    layer: &Layer,
    entries: &[u32],
    ef: usize,
    distances: D,
    prefetch: P,
    scratch: &mut SearchScratch,
    out: &mut Vec<Neighbour>,
) -> u64
where
    D: Fn(&[u32], &mut [f32]),
    P: Fn(u32),
{
    assert!(ef > 0, "a beam needs a positive width");
    scratch.begin(layer.nodes());
    let SearchScratch {
        visited,
        beam,
        arrivals,
        fresh,
        ahead,
        no_prefetch,
        ..
    } = scratch;
    let prefetching = !*no_prefetch;
    let mut computed = 0u64;
    // The entries, measured in groups with their vectors asked for first (they are often far
    // in memory from anything read so far), all joining the beam.
    fresh.clear();
    for &entry in entries {
        if visited.visit(entry) {
            fresh.push(entry);
        }
    }
    computed += fresh.len() as u64;
    prefetch_first(fresh, prefetching, &prefetch);
    measure_arrivals(
        fresh,
        f32::INFINITY,
        prefetching,
        &distances,
        &prefetch,
        arrivals,
    );
    merge_beam(beam, ef, arrivals);
    // The node whose unvisited neighbours `ahead` lists, if any.
    let mut ahead_of: Option<u32> = None;
    // Every entry before `unexpanded` has been expanded.
    let mut unexpanded = 0;
    while let Some(offset) = beam[unexpanded..]
        .iter()
        .position(|entry| !entry.expanded())
    {
        let at = unexpanded + offset;
        // Read before marking: reading the entry back after the flag's one-byte store waits
        // for that store to reach the cache (a wider load is not forwarded from a narrower
        // store).
        let nearest = beam[at].hit();
        beam[at].mark_expanded();
        unexpanded = at + 1;
        if ahead_of == Some(nearest.row) {
            take_listed_ahead(visited, ahead, fresh);
        } else {
            unvisited_neighbours(layer, nearest.row, visited, ahead, fresh);
            prefetch_first(fresh, prefetching, &prefetch);
        }
        computed += fresh.len() as u64;
        ahead_of = look_ahead(layer, &beam[unexpanded..], visited, ahead, |nodes| {
            prefetch_first(nodes, prefetching, &prefetch)
        });
        // The nodes nearer than the farthest entry (all while the beam has room) join in one
        // merge after the expansion. The merge keeps the `ef` nearest, so the beam is the one
        // that joining them one at a time gave, up to nodes at exactly the farthest distance.
        let farthest = if beam.len() == ef {
            beam[ef - 1].hit().distance
        } else {
            f32::INFINITY
        };
        measure_arrivals(
            fresh,
            farthest,
            prefetching,
            &distances,
            &prefetch,
            arrivals,
        );
        if let Some(first) = merge_beam(beam, ef, arrivals) {
            unexpanded = unexpanded.min(first);
        }
    }
    out.clear();
    out.extend(beam.iter().map(|entry| entry.hit()));
    debug_assert!(out.windows(2).all(|pair| pair[0] <= pair[1]));
    computed
}

/// Measures `fresh` in groups (`measure_groups`) and leaves in `arrivals` those nearer than
/// `farthest`, unsorted.
#[inline(always)]
fn measure_arrivals<D, P>(
    fresh: &[u32],
    farthest: f32,
    prefetching: bool,
    distances: &D,
    prefetch: &P,
    arrivals: &mut Vec<BeamEntry>,
) where
    D: Fn(&[u32], &mut [f32]),
    P: Fn(u32),
{
    arrivals.clear();
    measure_groups(
        fresh,
        prefetching,
        distances,
        prefetch,
        |group, group_distances| {
            collect_arrivals(arrivals, farthest, group, group_distances);
        },
    );
}

/// Adds the nodes of `group` nearer than `farthest` to `arrivals`. Branch-free per node: each
/// is written at the end of the arrivals, which grow by one only when it is nearer (a branch on
/// it would be mispredicted about every other node).
#[inline(always)]
fn collect_arrivals(
    arrivals: &mut Vec<BeamEntry>,
    farthest: f32,
    group: &[u32],
    distances: &[f32],
) {
    let before = arrivals.len();
    arrivals.reserve(MEASURE_GROUP);
    let spare = &mut arrivals.spare_capacity_mut()[..MEASURE_GROUP];
    let mut passed = 0;
    for (&node, &distance) in group.iter().zip(distances) {
        spare[passed].write(BeamEntry::new(Neighbour {
            row: node,
            distance,
        }));
        passed += usize::from(distance < farthest);
    }
    // SAFETY: the first `passed` spare slots were written above.
    unsafe { arrivals.set_len(before + passed) };
}

/// Merges `arrivals` (in any order) into the sorted `beam`, keeping its `ef` nearest entries;
/// returns the place of the nearest arrival (which is kept: arrivals are nearer than the
/// farthest entry of a full beam, as the search checks), or None when there were none.
/// Merging an expansion's arrivals at once moves each entry past the nearest of them once,
/// where joining them one at a time moved it once per arrival (docs/OPTIMIZATION_LOG.md 277).
#[inline(always)]
fn merge_beam(beam: &mut Vec<BeamEntry>, ef: usize, arrivals: &mut [BeamEntry]) -> Option<usize> {
    if arrivals.is_empty() {
        return None;
    }
    sort_arrivals(arrivals);
    beam.reserve(arrivals.len());
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: AVX-512F and POPCNT were detected; the beam has room for the arrivals.
        return Some(unsafe {
            if arrivals.len() >= BITONIC_MERGE_MIN {
                merge_beam_bitonic(beam, ef, arrivals)
            } else {
                merge_beam_avx512(beam, ef, arrivals)
            }
        });
    }
    Some(merge_beam_portable(beam, ef, arrivals))
}

/// The most arrivals [`sort_arrivals`] ranks in registers (more are sorted by comparisons).
#[cfg(target_arch = "x86_64")]
const RANKED_ARRIVALS_MAX: usize = 32;

/// Sorts an expansion's arrivals nearest first. Up to [`RANKED_ARRIVALS_MAX`] of them, where
/// the CPU has AVX-512, each is placed at its rank (how many are nearer, counted against all of
/// them at once), with no branch on the data: a comparison sort of a few keys mispredicts at
/// about every other comparison (docs/OPTIMIZATION_LOG.md 277).
#[inline(always)]
fn sort_arrivals(arrivals: &mut [BeamEntry]) {
    if arrivals.len() < 2 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if arrivals.len() <= RANKED_ARRIVALS_MAX && has_avx512() {
        // SAFETY: AVX-512F and POPCNT were detected.
        unsafe { rank_arrivals_avx512(arrivals) };
        return;
    }
    arrivals.sort_unstable_by_key(|arrival| arrival.0);
}

/// [`sort_arrivals`] by ranks for at most [`RANKED_ARRIVALS_MAX`] arrivals, whose keys differ
/// (each names a different node).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn rank_arrivals_avx512(arrivals: &mut [BeamEntry]) {
    use std::arch::x86_64::{
        __m512i, _mm512_cmplt_epu64_mask, _mm512_loadu_si512, _mm512_mask_loadu_epi64,
        _mm512_mask_storeu_epi64, _mm512_set1_epi64, _mm512_storeu_si512,
    };
    const LANES: usize = 8;
    const VECTORS: usize = RANKED_ARRIVALS_MAX / LANES;
    let count = arrivals.len();
    assert!(
        count <= RANKED_ARRIVALS_MAX,
        "at most {RANKED_ARRIVALS_MAX} arrivals"
    );
    let lanes =
        |vector: usize| ((1u32 << count.saturating_sub(vector * LANES).min(LANES)) - 1) as u8;
    let base = arrivals.as_mut_ptr().cast::<i64>();
    // The vectors that hold arrivals; the others stay all filler.
    let used = count.div_ceil(LANES);
    // Missing lanes hold the largest key, which no arrival has (see `BeamEntry`).
    let filler = _mm512_set1_epi64(-1);
    let mut keys = [filler; VECTORS];
    let mut ranked = [0u64; RANKED_ARRIVALS_MAX + 1];
    // SAFETY: the masked loads and stores touch only the arrivals' first `count` lanes (a
    // vector's address is inside or one past them); `ranked` is written below its end.
    unsafe {
        for (vector, keys) in keys.iter_mut().enumerate().take(used) {
            let at = base.add((vector * LANES).min(count)).cast();
            *keys = _mm512_mask_loadu_epi64(filler, lanes(vector), at);
        }
        let mut flat = [0u64; RANKED_ARRIVALS_MAX];
        for (vector, keys) in keys.iter().enumerate() {
            _mm512_storeu_si512(flat.as_mut_ptr().add(vector * LANES).cast(), *keys);
        }
        // Whole vectors of passes: a filler ranks `count` (it is nearer than nothing but other
        // fillers) and lands past the sorted part.
        for &key in &flat[..used * LANES] {
            let broadcast = _mm512_set1_epi64(key as i64);
            let nearer: u32 = keys[..used]
                .iter()
                .map(|keys: &__m512i| _mm512_cmplt_epu64_mask(*keys, broadcast).count_ones())
                .sum();
            ranked[nearer as usize] = key;
        }
        debug_assert!(
            ranked[..count].windows(2).all(|pair| pair[0] < pair[1]),
            "arrivals name different nodes"
        );
        for vector in 0..used {
            let sorted = _mm512_loadu_si512(ranked.as_ptr().add(vector * LANES).cast());
            let at = base.add((vector * LANES).min(count)).cast();
            _mm512_mask_storeu_epi64(at, lanes(vector), sorted);
        }
    }
}

/// [`merge_beam`] for sorted `arrivals`, farthest first, each scanning the beam from where the
/// last one landed toward the near end eight entries at a time: the entries farther than the
/// arrival move up by its place among the arrivals plus one, in masked stores (arrivals land
/// about two thirds of the way down a full beam, so this reads and moves about a third of it,
/// with no binary search and no `memmove` call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn merge_beam_avx512(beam: &mut Vec<BeamEntry>, ef: usize, arrivals: &[BeamEntry]) -> usize {
    use std::arch::x86_64::_mm512_set1_epi64;
    const LANES: usize = 8;
    let len = beam.len();
    assert!(
        beam.capacity() >= len + arrivals.len(),
        "room for the arrivals"
    );
    let base = beam.as_mut_ptr().cast::<i64>();
    let without_flag = _mm512_set1_epi64(!(BeamEntry::EXPANDED as i64));
    // Entries `end..len` have moved; those below `end` are where they were.
    let mut end = len;
    for (index, arrival) in arrivals.iter().enumerate().rev() {
        debug_assert!(!arrival.expanded(), "arrivals join unexpanded");
        let key = _mm512_set1_epi64(arrival.0 as i64);
        let shift = index + 1;
        // Whole blocks of eight while there are, then the last few entries.
        let at = loop {
            let (start, lanes) = if end >= LANES {
                (end - LANES, u8::MAX)
            } else {
                (0, ((1u32 << end) - 1) as u8)
            };
            // SAFETY: lanes `start..end` lie inside the beam; the shifted store writes
            // indices up to `end - 1 + shift <= len - 1 + arrivals.len()`, inside the
            // capacity, and above every entry not yet read.
            let farther = unsafe { shift_farther(base, start, lanes, shift, key, without_flag) };
            if farther != lanes || start == 0 {
                break end - farther.count_ones() as usize;
            }
            end = start;
        };
        // SAFETY: `at + index < len + arrivals.len()`, inside the capacity; the entry that
        // was there (if any) has moved.
        unsafe { *base.add(at + index) = arrival.0 as i64 };
        end = at;
    }
    // SAFETY: every index below `len + arrivals.len()` holds an entry: those below `end`
    // stayed, the rest were moved or written above.
    unsafe { beam.set_len(len + arrivals.len()) };
    beam.truncate(ef);
    end
}

/// Arrivals from which [`merge_beam`] merges eight entries at a time (`merge_beam_bitonic`)
/// rather than scanning for each arrival's place.
#[cfg(target_arch = "x86_64")]
const BITONIC_MERGE_MIN: usize = 8;

/// [`merge_beam`] for sorted `arrivals` (any number; used from [`BITONIC_MERGE_MIN`], as in
/// most expansions while the beam fills), eight entries at a time from the far end: the eight
/// largest not yet written are carried in a register, merged with the next block of eight of
/// whichever side has the larger next entry by a bitonic network, and the top eight of the
/// sixteen written. It stops once
/// the arrivals are used up and the carried entries are above the beam's rest, which stays
/// where it is. Per arrival the scan of `merge_beam_avx512` ends at a place that depends on the
/// data (a mispredicted branch each); here a branch per block of eight picks the side.
///
/// # Safety
/// The CPU has AVX-512F and POPCNT; the beam has room for the arrivals.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn merge_beam_bitonic(
    beam: &mut Vec<BeamEntry>,
    ef: usize,
    arrivals: &[BeamEntry],
) -> usize {
    use std::arch::x86_64::{_mm512_cmpgt_epu64_mask, _mm512_mask_storeu_epi64, _mm512_set1_epi64};
    const LANES: usize = 8;
    let len = beam.len();
    let count = arrivals.len();
    assert!(count > 0, "arrivals to merge");
    assert!(beam.capacity() >= len + count, "room for the arrivals");
    // Where the nearest arrival lands: after the entries nearer than it.
    let first = beam.partition_point(|entry| entry.key() < arrivals[0].0);
    let base = beam.as_mut_ptr().cast::<i64>();
    let arrived = arrivals.as_ptr().cast::<i64>();
    // Entries `stayed` of the beam and `waiting` arrivals are unread; `carried` entries are in
    // `carry` (its top lanes; the others hold 0, below every key); `written` is where the
    // next output ends: `written == stayed + waiting + carried`.
    let carried_first = count.min(LANES);
    let (mut stayed, mut waiting) = (len, count - carried_first);
    // SAFETY: the lanes loaded are the last `carried_first` arrivals.
    let mut carry = unsafe { load_block(arrived, count) };
    let mut carried = carried_first;
    let mut written = len + count;
    loop {
        if waiting == 0 {
            // The rest of the beam stays if the carried entries are above it.
            let real = lane_top(carried);
            let above = if stayed == 0 {
                real
            } else {
                // SAFETY: `stayed - 1` is an entry of the beam.
                let below = unsafe { *base.add(stayed - 1) };
                _mm512_cmpgt_epu64_mask(carry, _mm512_set1_epi64(below)) & real
            };
            if above == real {
                // SAFETY: the lanes written are `stayed..written`, inside the capacity.
                unsafe {
                    _mm512_mask_storeu_epi64(
                        base.wrapping_add(written).wrapping_sub(LANES),
                        real,
                        carry,
                    )
                };
                break;
            }
        }
        // Keys compare unsigned (as `BeamEntry` words), not as the `i64` lanes hold them.
        // SAFETY: `stayed - 1` and `waiting - 1` are entries when nonzero.
        let from_beam = stayed > 0
            && (waiting == 0
                || unsafe { *base.add(stayed - 1) as u64 > *arrived.add(waiting - 1) as u64 });
        let (block, taken) = if from_beam {
            let taken = stayed.min(LANES);
            // SAFETY: the lanes loaded are entries `stayed - taken..stayed`.
            let block = unsafe { load_block(base, stayed) };
            stayed -= taken;
            (block, taken)
        } else {
            let taken = waiting.min(LANES);
            // SAFETY: as above, of the arrivals.
            let block = unsafe { load_block(arrived, waiting) };
            waiting -= taken;
            (block, taken)
        };
        let (low, high) = bitonic_merge(carry, block);
        let total = carried + taken;
        let out = total.min(LANES);
        // SAFETY: the lanes written, `written - out..written`, lie above every unread entry
        // (`written - out >= stayed + waiting`) and inside the capacity.
        unsafe {
            _mm512_mask_storeu_epi64(
                base.wrapping_add(written).wrapping_sub(LANES),
                lane_top(out),
                high,
            )
        };
        written -= out;
        carry = low;
        carried = total - out;
        if carried == 0 && stayed == 0 && waiting == 0 {
            break;
        }
    }
    // SAFETY: every index below `len + count` holds an entry: those below `stayed` stayed,
    // the rest were written above.
    unsafe { beam.set_len(len + count) };
    beam.truncate(ef);
    first
}

/// The top `count` of eight lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lane_top(count: usize) -> u8 {
    debug_assert!(count <= 8);
    (0xFF00u16 >> count) as u8
}

/// The up to eight entries that end at `end` of the run at `base`, ascending in the top lanes
/// (lanes below hold 0, below every key).
///
/// # Safety
/// The CPU has AVX-512F; entries `end.saturating_sub(8)..end` are readable.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_block(base: *const i64, end: usize) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::_mm512_maskz_loadu_epi64;
    // SAFETY: only the top `min(end, 8)` lanes are read, entries `end - min(end, 8)..end`;
    // the others are masked off and never touched.
    unsafe {
        _mm512_maskz_loadu_epi64(
            lane_top(end.min(8)),
            base.wrapping_add(end).wrapping_sub(8).cast(),
        )
    }
}

/// Merges two ascending runs of eight keys into the low and high eight of the sixteen, each
/// ascending: the second run reversed makes the sixteen bitonic, and three rounds of
/// half-cleaners (distance 4, 2, 1) sort each half after the first round splits them.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn bitonic_merge(
    a: std::arch::x86_64::__m512i,
    b: std::arch::x86_64::__m512i,
) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i) {
    use std::arch::x86_64::{
        _mm512_max_epu64, _mm512_min_epu64, _mm512_permutexvar_epi64, _mm512_set_epi64,
    };
    let reversed = _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), b);
    let low = _mm512_min_epu64(a, reversed);
    let high = _mm512_max_epu64(a, reversed);
    (half_clean(low), half_clean(high))
}

/// Sorts a bitonic run of eight keys ascending (three rounds of compare-exchange at distance
/// 4, 2 and 1).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn half_clean(run: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::{
        _mm512_mask_blend_epi64, _mm512_max_epu64, _mm512_min_epu64, _mm512_permutexvar_epi64,
        _mm512_set_epi64,
    };
    let mut run = run;
    // Each round pairs lane i with lane i ^ distance; the lower lane keeps the minimum.
    for (partner, upper) in [
        (_mm512_set_epi64(3, 2, 1, 0, 7, 6, 5, 4), 0xF0u8),
        (_mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2), 0xCC),
        (_mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1), 0xAA),
    ] {
        let other = _mm512_permutexvar_epi64(partner, run);
        let (min, max) = (_mm512_min_epu64(run, other), _mm512_max_epu64(run, other));
        run = _mm512_mask_blend_epi64(upper, min, max);
    }
    run
}

/// Moves the entries of block `start` (its `lanes`) farther than `key` up by `shift`; returns
/// which lanes moved.
///
/// # Safety
/// The CPU has AVX-512F; the lanes lie inside the beam at `base`, and the moved ones land
/// inside its capacity, above every entry not yet read.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn shift_farther(
    base: *mut i64,
    start: usize,
    lanes: u8,
    shift: usize,
    key: std::arch::x86_64::__m512i,
    without_flag: std::arch::x86_64::__m512i,
) -> u8 {
    use std::arch::x86_64::{
        _mm512_and_si512, _mm512_loadu_si512, _mm512_mask_cmpgt_epu64_mask,
        _mm512_mask_storeu_epi64, _mm512_maskz_loadu_epi64,
    };
    // SAFETY: as the caller guarantees; a whole block is loaded without a mask.
    unsafe {
        let block = if lanes == u8::MAX {
            _mm512_loadu_si512(base.add(start).cast())
        } else {
            _mm512_maskz_loadu_epi64(lanes, base.add(start).cast())
        };
        let farther =
            _mm512_mask_cmpgt_epu64_mask(lanes, _mm512_and_si512(block, without_flag), key);
        _mm512_mask_storeu_epi64(base.add(start + shift).cast(), farther, block);
        farther
    }
}

/// [`merge_beam`] for sorted `arrivals` by one backward merge (the form for CPUs without
/// AVX-512).
fn merge_beam_portable(beam: &mut Vec<BeamEntry>, ef: usize, arrivals: &[BeamEntry]) -> usize {
    let len = beam.len();
    beam.resize(len + arrivals.len(), BeamEntry(0));
    let (mut stayed, mut waiting) = (len, arrivals.len());
    let mut write = beam.len();
    while waiting > 0 {
        write -= 1;
        let arrival = arrivals[waiting - 1];
        if stayed > 0 && beam[stayed - 1].key() > arrival.0 {
            beam[write] = beam[stayed - 1];
            stayed -= 1;
        } else {
            beam[write] = arrival;
            waiting -= 1;
        }
    }
    beam.truncate(ef);
    write
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A group distance function measuring each node by `distance` (groups of at most
    /// `MEASURE_GROUP`).
    fn per_node(distance: impl Fn(u32) -> f32) -> impl Fn(&[u32], &mut [f32]) {
        move |nodes, out| {
            assert!(nodes.len() <= MEASURE_GROUP);
            assert_eq!(nodes.len(), out.len());
            for (measured, &node) in out.iter_mut().zip(nodes) {
                *measured = distance(node);
            }
        }
    }

    proptest! {
        /// The sixteen-lane list walk keeps exactly the slots a scalar walk keeps: ids the bits
        /// cover whose bits are clear, in slot order; `EMPTY` (a slot mid-update) and ids past
        /// the bits are skipped, at every list length around the lane count.
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn the_vector_list_walk_keeps_what_a_scalar_walk_keeps(
            words in prop::collection::vec(any::<u64>(), 1..6),
            ids in prop::collection::vec(
                prop_oneof![8 => 0u32..400, 1 => Just(super::super::layer::EMPTY), 1 => 400u32..1000],
                0..70,
            ),
        ) {
            if !has_avx512() {
                return Ok(());
            }
            let slots: Vec<std::sync::atomic::AtomicU32> =
                ids.iter().map(|&id| std::sync::atomic::AtomicU32::new(id)).collect();
            let covered = words.len() * 64;
            let expected: Vec<u32> = ids
                .iter()
                .copied()
                .filter(|&id| {
                    (id as usize) < covered && words[id as usize / 64] >> (id % 64) & 1 == 0
                })
                .collect();
            let mut out = vec![7u32; 3];
            // SAFETY: AVX-512F and POPCNT were detected.
            unsafe { unvisited_so_far_avx512(&slots, &words, &mut out) };
            prop_assert_eq!(out, expected);
        }
    }

    /// A path graph 0 - 1 - ... - 9 with the distance |node - 7|.
    fn path_layer() -> Layer {
        let layer = Layer::new(2, 10);
        for node in 0..10u32 {
            let list: Vec<u32> = [node.checked_sub(1), (node < 9).then_some(node + 1)]
                .into_iter()
                .flatten()
                .collect();
            let guard = layer.lock(node);
            layer.set_neighbours(&guard, node, &list);
        }
        layer
    }

    #[test]
    fn walks_to_the_nearest_and_respects_accept() {
        let layer = path_layer();
        let mut scratch = SearchScratch::new();
        let mut out = Vec::new();
        let distances = per_node(|node: u32| (node as f32 - 7.0).abs());
        let none = |_| ();
        search_layer(
            &layer,
            &[0],
            3,
            &distances,
            |_| true,
            none,
            &mut scratch,
            &mut out,
        );
        let rows: Vec<u32> = out.iter().map(|found| found.row).collect();
        assert_eq!(rows, [7, 6, 8]);
        // Only even nodes pass: the search walks through odd ones and still finds three.
        search_layer(
            &layer,
            &[0],
            3,
            &distances,
            |node| node % 2 == 0,
            none,
            &mut scratch,
            &mut out,
        );
        let rows: Vec<u32> = out.iter().map(|found| found.row).collect();
        assert_eq!(rows, [6, 8, 4]);
    }

    /// A random layer: `nodes` nodes (1 to 2,000), each with up to `degree` distinct
    /// neighbours other than itself; distinct distances (a permutation of the nodes, scaled);
    /// and 1 to 3 entry nodes.
    fn random_layer() -> impl Strategy<Value = (usize, Vec<Vec<u32>>, Vec<u32>, Vec<u32>)> {
        (
            prop::sample::select(vec![1usize, 2, 17, 300, 2000]),
            prop::sample::select(vec![1usize, 4, 16, 60]),
        )
            .prop_flat_map(|(nodes, degree)| {
                let node = 0..nodes as u32;
                (
                    Just(degree),
                    prop::collection::vec(prop::collection::vec(node.clone(), 0..=degree), nodes),
                    Just((0..nodes as u32).collect::<Vec<u32>>()).prop_shuffle(),
                    prop::collection::vec(node, 1..4),
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]

        /// On random layers with distinct distances, the sorted beam computes the same
        /// distances and returns the same nodes, in the same order, as the two heaps accepting
        /// every node.
        #[test]
        fn the_beam_finds_what_the_heaps_find(
            (degree, lists, rank, entries) in random_layer(),
        ) {
            let layer = Layer::new(degree, lists.len());
            for (node, list) in lists.iter().enumerate() {
                let node = node as u32;
                let mut list = list.clone();
                list.retain(|&other| other != node);
                list.sort_unstable();
                list.dedup();
                let guard = layer.lock(node);
                layer.set_neighbours(&guard, node, &list);
            }
            let distances = per_node(|node: u32| rank[node as usize] as f32 * 0.5);
            for ef in [1, 2, 8, 64, 5000] {
                let (mut heaps, mut beam) = (Vec::new(), Vec::new());
                let mut scratch = SearchScratch::new();
                let by_heaps = search_layer(
                    &layer,
                    &entries,
                    ef,
                    &distances,
                    |_| true,
                    |_| (),
                    &mut scratch,
                    &mut heaps,
                );
                let by_beam =
                    search_layer_beam(&layer, &entries, ef, &distances, |_| (), &mut scratch, &mut beam);
                prop_assert_eq!(by_beam, by_heaps, "ef {}: distances computed", ef);
                prop_assert_eq!(&beam, &heaps, "ef {}", ef);
                prop_assert!(beam.len() <= ef);
            }
        }
    }

    proptest! {
        /// Rounds of visits (each a search, the node count growing between some) agree with a
        /// set cleared per round, through both `visit` and the branch-free list walk.
        #[test]
        fn visited_bits_agree_with_a_set_per_search(
            rounds in prop::collection::vec(
                (1usize..300, prop::collection::vec(0u32..300, 0..120)),
                1..8,
            ),
        ) {
            let mut bits = VisitedBits::default();
            let (mut listed, mut fresh) = (Vec::new(), Vec::new());
            for (nodes, visits) in rounds {
                let visits: Vec<u32> = visits.into_iter().map(|v| v % nodes as u32).collect();
                bits.begin(nodes);
                let mut set = std::collections::HashSet::new();
                let (by_one, as_list) = visits.split_at(visits.len() / 2);
                for &node in by_one {
                    prop_assert_eq!(bits.visit(node), set.insert(node));
                }
                // The list belongs to a node past the visited ones (never its own neighbour).
                let owner = nodes as u32;
                let layer = Layer::new(as_list.len().max(1), nodes + 1);
                {
                    let guard = layer.lock(owner);
                    layer.set_neighbours(&guard, owner, as_list);
                }
                unvisited_neighbours(&layer, owner, &mut bits, &mut listed, &mut fresh);
                let expected: Vec<u32> =
                    as_list.iter().copied().filter(|&node| set.insert(node)).collect();
                prop_assert_eq!(&fresh, &expected);
            }
        }
    }

    proptest! {
        /// A beam entry orders as its `(distance, node)` pair does and gives both back, for
        /// any float bits (negative distances, zeros of both signs, infinities, NaNs).
        #[test]
        fn beam_entries_order_and_decode_like_their_hits(
            a in any::<u32>(), b in any::<u32>(),
            row_a in 0u32..=ROWS_MAX as u32, row_b in 0u32..=ROWS_MAX as u32,
        ) {
            let (a, b) = (f32::from_bits(a), f32::from_bits(b));
            let (hit_a, hit_b) = (Neighbour { row: row_a, distance: a }, Neighbour { row: row_b, distance: b });
            let (entry_a, entry_b) = (BeamEntry::new(hit_a), BeamEntry::new(hit_b));
            prop_assert_eq!(entry_a.key().cmp(&entry_b.key()), hit_a.cmp(&hit_b));
            let back = entry_a.hit();
            prop_assert_eq!((back.row, back.distance.to_bits()), (row_a, a.to_bits()));
            prop_assert!(!entry_a.expanded());
            let mut expanded = entry_a;
            expanded.mark_expanded();
            prop_assert!(expanded.expanded());
            prop_assert_eq!(expanded.key(), entry_a.key());
        }
    }

    #[test]
    fn the_returned_count_is_the_distances_computed() {
        let layer = path_layer();
        let mut scratch = SearchScratch::new();
        let mut out = Vec::new();
        let calls = std::cell::Cell::new(0u64);
        let distances = per_node(|node: u32| {
            calls.set(calls.get() + 1);
            (node as f32 - 7.0).abs()
        });
        let computed = search_layer(
            &layer,
            &[0],
            2,
            distances,
            |_| true,
            |_| (),
            &mut scratch,
            &mut out,
        );
        assert_eq!(computed, calls.get());
        // From 0 the walk measures every node up to 7 and both of its neighbours.
        assert_eq!(computed, 9);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Arrivals come out of `sort_arrivals` in key order, at every count (ranked in
        /// registers up to `RANKED_ARRIVALS_MAX` where the CPU can, sorted by comparisons past
        /// it).
        #[test]
        fn arrivals_sort_by_key(
            nodes in prop::collection::btree_set(0u32..1_000_000, 0..40),
            order in any::<u64>(),
        ) {
            let mut arrivals: Vec<BeamEntry> = nodes
                .iter()
                .map(|&node| BeamEntry::new(Neighbour {
                    row: node,
                    distance: ((node as u64).wrapping_mul(order) % 977) as f32 * 0.125,
                }))
                .collect();
            let mut expected: Vec<u64> = arrivals.iter().map(|arrival| arrival.0).collect();
            expected.sort_unstable();
            let turn = (order as usize) % arrivals.len().max(1);
            arrivals.rotate_left(turn);
            sort_arrivals(&mut arrivals);
            prop_assert_eq!(arrivals.iter().map(|arrival| arrival.0).collect::<Vec<_>>(), expected);
        }

        /// Every way of merging arrivals into the beam (the portable backward merge and the
        /// AVX-512 scans from the far end, where the CPU has it) leaves the `ef` nearest of
        /// the old entries and the arrivals, in order with their flags, and returns the
        /// nearest arrival's place, for beams of any fill, full or not, and arrivals anywhere
        /// (nearer than the farthest when full, as the search guarantees).
        #[test]
        fn the_beam_merges_agree(
            nodes in prop::collection::btree_set(0u32..5000, 0..60),
            ef in 1usize..60,
            arriving in prop::collection::btree_set(0u32..5000, 0..40),
            flags in any::<u64>(),
        ) {
            // Distances of both signs (their keys differ in the top bit).
            let entry = |node: u32| Neighbour {
                row: node,
                distance: (node as f32 - 2500.0) * 0.25,
            };
            let beam: Vec<BeamEntry> = nodes
                .iter()
                .take(ef)
                .enumerate()
                .map(|(index, &node)| {
                    let mut joined = BeamEntry::new(entry(node));
                    if flags >> index & 1 == 1 {
                        joined.mark_expanded();
                    }
                    joined
                })
                .collect();
            let mut arrivals: Vec<BeamEntry> = arriving
                .iter()
                .filter(|node| !nodes.contains(node))
                .filter(|&&node| beam.len() < ef || entry(node) < beam[ef - 1].hit())
                .map(|&node| BeamEntry::new(entry(node)))
                .collect();
            // They arrive in no particular order.
            arrivals.reverse();
            let words = |beam: &[BeamEntry]| beam.iter().map(|joined| joined.0).collect::<Vec<_>>();
            let mut expected = words(&beam);
            expected.extend(words(&arrivals));
            expected.sort_unstable_by_key(|&word| word & !BeamEntry::EXPANDED);
            expected.truncate(ef);
            let nearest = arrivals.iter().map(|arrival| arrival.0).min();
            let expected_first =
                nearest.map(|word| expected.iter().position(|&kept| kept == word).unwrap());
            let mut merged = beam.clone();
            let first = merge_beam(&mut merged, ef, &mut arrivals.clone());
            prop_assert_eq!(first, expected_first);
            prop_assert_eq!(words(&merged), expected.clone());
            if !arrivals.is_empty() {
                arrivals.sort_unstable_by_key(|arrival| arrival.0);
                let mut merged = beam.clone();
                let first = merge_beam_portable(&mut merged, ef, &arrivals);
                prop_assert_eq!(Some(first), expected_first);
                prop_assert_eq!(words(&merged), expected.clone());
                // Both AVX-512 merges at every count (`merge_beam` picks one by the count).
                #[cfg(target_arch = "x86_64")]
                if has_avx512() {
                    type Merge = unsafe fn(&mut Vec<BeamEntry>, usize, &[BeamEntry]) -> usize;
                    for merge in [merge_beam_avx512 as Merge, merge_beam_bitonic] {
                        let mut merged = beam.clone();
                        merged.reserve(arrivals.len());
                        // SAFETY: AVX-512F and POPCNT were detected; the beam has room.
                        let first = unsafe { merge(&mut merged, ef, &arrivals) };
                        prop_assert_eq!(Some(first), expected_first);
                        prop_assert_eq!(words(&merged), expected.clone());
                    }
                }
            }
        }
    }
}
