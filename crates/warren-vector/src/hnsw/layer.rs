//! One layer of the graph: every node's neighbour list in one flat array of fixed-size blocks,
//! each starting on a cache line: the node's count in the block's first word, then `degree`
//! slots (`EMPTY` when unused), padded to whole 64-byte lines. Expanding a node in a search
//! thus reads its count and its neighbours from the same lines (one miss, not two). A spin lock
//! per node guards writers. Readers never lock: words are atomics, so a reader racing a writer
//! sees each slot either old or new, always a valid id or `EMPTY`. Writers hold the node's lock,
//! and a thread holds at most one lock at a time, so there is no lock order to get wrong.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The value of an unused neighbour slot.
pub const EMPTY: u32 = u32::MAX;

/// Spins before a waiting writer yields its core (the build oversubscribes small machines).
const SPINS_BEFORE_YIELD: u32 = 64;

/// Words in one 64-byte cache line.
const LINE_WORDS: usize = 16;

/// One cache line of a layer's blocks.
#[repr(C, align(64))]
struct Line([AtomicU32; LINE_WORDS]);

pub struct Layer {
    degree: usize,
    /// Words per node block: the count and `degree` slots, rounded up to whole lines.
    stride: usize,
    nodes: usize,
    lines: Vec<Line>,
    locks: Vec<AtomicBool>,
}

/// Holds a node's lock until dropped.
pub struct NodeGuard<'a> {
    lock: &'a AtomicBool,
}

impl Drop for NodeGuard<'_> {
    fn drop(&mut self) {
        self.lock.store(false, Ordering::Release);
    }
}

/// Words per node block for `degree` slots: the count and the slots, in whole lines.
fn stride(degree: usize) -> usize {
    (1 + degree).div_ceil(LINE_WORDS) * LINE_WORDS
}

impl Layer {
    pub fn new(degree: usize, nodes: usize) -> Self {
        assert!(degree > 0, "a layer needs a positive degree");
        let mut layer = Layer {
            degree,
            stride: stride(degree),
            nodes: 0,
            lines: Vec::new(),
            locks: Vec::new(),
        };
        layer.grow(nodes);
        layer
    }

    /// Rebuilds a layer from its serialized counts and slots (already validated): `slot(i)` is
    /// the i-th slot in node order, `degree` per node.
    pub fn from_parts(degree: usize, counts: &[u32], slot: impl Fn(usize) -> u32) -> Self {
        let mut layer = Layer::new(degree, counts.len());
        let stride = layer.stride;
        let words = layer.words_mut();
        for (node, &count) in counts.iter().enumerate() {
            let block = &mut words[node * stride..node * stride + 1 + degree];
            *block[0].get_mut() = count;
            for (index, word) in block[1..].iter_mut().enumerate() {
                *word.get_mut() = slot(node * degree + index);
            }
        }
        layer
    }

    pub fn degree(&self) -> usize {
        self.degree
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Every word of every block.
    #[inline]
    fn words(&self) -> &[AtomicU32] {
        // SAFETY: `Line` is `repr(C)` over an array of `AtomicU32`, so the lines are one
        // contiguous run of `lines.len() * LINE_WORDS` initialized atomics.
        unsafe {
            std::slice::from_raw_parts(
                self.lines.as_ptr().cast::<AtomicU32>(),
                self.lines.len() * LINE_WORDS,
            )
        }
    }

    /// Every word of every block, for filling without atomic operations.
    fn words_mut(&mut self) -> &mut [AtomicU32] {
        // SAFETY: as in `words`; `&mut self` makes the access exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.lines.as_mut_ptr().cast::<AtomicU32>(),
                self.lines.len() * LINE_WORDS,
            )
        }
    }

    /// The node's block: its count, then its `degree` slots.
    #[inline]
    fn block(&self, node: u32) -> &[AtomicU32] {
        let start = node as usize * self.stride;
        &self.words()[start..start + 1 + self.degree]
    }

    /// Adds empty nodes until the layer has `nodes` of them.
    pub fn grow(&mut self, nodes: usize) {
        if nodes <= self.nodes {
            return;
        }
        let old = self.nodes;
        let lines_per_node = self.stride / LINE_WORDS;
        self.lines.resize_with(nodes * lines_per_node, || {
            Line(std::array::from_fn(|_| AtomicU32::new(EMPTY)))
        });
        self.locks.resize_with(nodes, || AtomicBool::new(false));
        self.nodes = nodes;
        let stride = self.stride;
        let words = self.words_mut();
        for node in old..nodes {
            *words[node * stride].get_mut() = 0;
        }
    }

    /// The node's slots, `count` of them used; slots may read `EMPTY` mid-update.
    #[inline]
    pub fn slots(&self, node: u32) -> &[AtomicU32] {
        let block = self.block(node);
        let count = block[0].load(Ordering::Acquire) as usize;
        debug_assert!(count <= self.degree);
        &block[1..1 + count]
    }

    /// Asks the CPU to start loading the node's block (a search is about to expand it).
    #[inline]
    pub fn prefetch(&self, node: u32) {
        let block = self.block(node);
        for line in block.chunks(LINE_WORDS) {
            super::measure::prefetch_line(line.as_ptr().cast());
        }
    }

    /// Copies the node's current neighbours into `out` (cleared first).
    pub fn copy_neighbours(&self, node: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(
            self.slots(node)
                .iter()
                .map(|slot| slot.load(Ordering::Relaxed))
                .filter(|&id| id != EMPTY),
        );
    }

    pub fn lock(&self, node: u32) -> NodeGuard<'_> {
        let lock = &self.locks[node as usize];
        let mut spins = 0u32;
        while lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins >= SPINS_BEFORE_YIELD {
                std::thread::yield_now();
                spins = 0;
            } else {
                std::hint::spin_loop();
            }
        }
        NodeGuard { lock }
    }

    /// Replaces the node's list; the caller holds the node's lock.
    pub fn set_neighbours(&self, _guard: &NodeGuard<'_>, node: u32, list: &[u32]) {
        assert!(list.len() <= self.degree, "neighbour list over the degree");
        let block = self.block(node);
        let slots = &block[1..];
        let old = block[0].load(Ordering::Relaxed) as usize;
        for (slot, &id) in slots.iter().zip(list) {
            debug_assert!(id != EMPTY && id != node);
            slot.store(id, Ordering::Relaxed);
        }
        for slot in &slots[list.len()..old.max(list.len())] {
            slot.store(EMPTY, Ordering::Relaxed);
        }
        block[0].store(list.len() as u32, Ordering::Release);
    }

    /// The counts, for serialization.
    pub fn counts(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes as u32).map(|node| self.block(node)[0].load(Ordering::Relaxed))
    }

    /// Every slot in node order (`degree` per node), for serialization.
    pub fn all_slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes as u32).flat_map(|node| {
            self.block(node)[1..]
                .iter()
                .map(|slot| slot.load(Ordering::Relaxed))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_shrink_and_grow() {
        let mut layer = Layer::new(4, 3);
        let mut out = Vec::new();
        {
            let guard = layer.lock(0);
            layer.set_neighbours(&guard, 0, &[1, 2, 3]);
        }
        layer.copy_neighbours(0, &mut out);
        assert_eq!(out, [1, 2, 3]);
        {
            let guard = layer.lock(0);
            layer.set_neighbours(&guard, 0, &[2]);
        }
        layer.copy_neighbours(0, &mut out);
        assert_eq!(out, [2]);
        assert_eq!(layer.all_slots().filter(|&id| id != EMPTY).count(), 1);
        layer.grow(5);
        assert_eq!(layer.nodes(), 5);
        layer.copy_neighbours(4, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn blocks_start_on_cache_lines_and_round_trip() {
        let layer = Layer::new(60, 3);
        assert_eq!(layer.stride, 64);
        for node in 0..3u32 {
            let address = layer.block(node).as_ptr() as usize;
            assert_eq!(address % 64, 0, "node {node}'s block starts a cache line");
            let guard = layer.lock(node);
            let list: Vec<u32> = (0..node + 1).map(|i| (node + 1 + i) % 3 + 10).collect();
            layer.set_neighbours(&guard, node, &list);
        }
        let counts: Vec<u32> = layer.counts().collect();
        let slots: Vec<u32> = layer.all_slots().collect();
        assert_eq!(counts, [1, 2, 3]);
        assert_eq!(slots.len(), 3 * 60);
        let copy = Layer::from_parts(60, &counts, |index| slots[index]);
        assert_eq!(copy.counts().collect::<Vec<_>>(), counts);
        assert_eq!(copy.all_slots().collect::<Vec<_>>(), slots);
        let mut out = Vec::new();
        copy.copy_neighbours(2, &mut out);
        assert_eq!(out, [10, 11, 12]);
    }
}
