//! One layer of the graph: every node's neighbour list in one flat array of fixed-size blocks,
//! each starting on a cache line: the node's count in the block's first word, then (when the
//! layer keeps codes) two factor words, then `degree` slots (`EMPTY` when unused), padded to
//! whole 64-byte lines. Expanding a node in a search thus reads its count and its neighbours
//! from the same lines (one miss, not two). A spin lock per node guards writers. Readers never
//! lock: words are atomics, so a reader racing a writer sees each slot either old or new,
//! always a valid id or `EMPTY`. Writers hold the node's lock, and a thread holds at most one
//! lock at a time, so there is no lock order to get wrong.
//!
//! A layer may also keep each node's row as int8 codes with two factor words (`measure`
//! says what they mean) in the node's block: `[count | factors | slots | padding]` in whole
//! lines (the factors beside the count: a distance reads that line, and an expansion of the
//! same node later reads it again), then the codes padded to whole lines (`with_codes`). Both
//! layers of the index do: a search that measures a node and later expands it reads one block,
//! in the same pages, instead of a list here and a vector in the caller's column, and the codes
//! take a quarter of the FLOAT row's lines; the upper layer's copies of its rows' codes keep
//! its walk inside its own, much smaller, blocks (docs/OPTIMIZATION_LOG.md).
//! Codes are written only through `&mut self`, before the node is linked, so plain reads of
//! them never race a write. Blocks of large layers are backed by huge pages where the system
//! allows it (`pages`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The value of an unused neighbour slot.
pub const EMPTY: u32 = u32::MAX;

/// Spins before a waiting writer yields its core (the build oversubscribes small machines).
const SPINS_BEFORE_YIELD: u32 = 64;

/// Fewer nodes than this are coded on the calling thread (a thread costs more than coding a
/// few thousand rows).
pub const PARALLEL_CODING_MIN_NODES: usize = 4096;

/// Words in one 64-byte cache line.
const LINE_WORDS: usize = 16;

/// Factor words kept beside a node's codes (`measure::encode_row` says what they hold).
pub const FACTOR_WORDS: usize = 2;

/// One cache line of a layer's blocks.
#[repr(C, align(64))]
struct Line([AtomicU32; LINE_WORDS]);

pub struct Layer {
    degree: usize,
    /// Words of a block's list part: the count, (when codes are kept) the factor words, and
    /// `degree` slots, rounded up to whole lines; the codes start right after it.
    list_words: usize,
    /// The block's word where the slots start (after the count and any factor words).
    slots_start: usize,
    /// Codes per kept row; 0 when the layer keeps none.
    dim: usize,
    /// Words per node block: the list part and the codes, each in whole lines.
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

/// Writes `codes` and `factors` into one node's `block` (of a layer of `degree` with
/// `list_words` words of list part).
fn write_codes(
    block: &mut [AtomicU32],
    degree: usize,
    list_words: usize,
    codes: &[i8],
    factors: [f32; FACTOR_WORDS],
) {
    debug_assert!(FACTOR_START + FACTOR_WORDS + degree <= list_words);
    for (word, factor) in block[FACTOR_START..].iter_mut().zip(factors) {
        *word.get_mut() = factor.to_bits();
    }
    let code_words = &mut block[list_words..list_words + codes.len().div_ceil(4)];
    for (word, quad) in code_words.iter_mut().zip(codes.chunks(4)) {
        let mut bytes = [0u8; 4];
        for (byte, &code) in bytes.iter_mut().zip(quad) {
            *byte = code as u8;
        }
        *word.get_mut() = u32::from_ne_bytes(bytes);
    }
}

/// Where a block's factor words start: right after the count, in the block's first line, which
/// a later expansion of the node reads for its count and first slots anyway (at the end of the
/// list part, they took a line of their own; docs/OPTIMIZATION_LOG.md 286).
const FACTOR_START: usize = 1;

/// `words` rounded up to whole lines.
fn whole_lines(words: usize) -> usize {
    words.div_ceil(LINE_WORDS) * LINE_WORDS
}

impl Layer {
    /// A layer of `nodes` nodes with empty lists and no codes (the index's layers keep codes).
    #[cfg(test)]
    pub fn new(degree: usize, nodes: usize) -> Self {
        let mut layer = Layer::with_codes(degree, 0);
        layer.grow(nodes);
        layer
    }

    /// An empty layer whose blocks also keep `dim` int8 codes and `FACTOR_WORDS` factors per
    /// node (`dim` 0: none). New nodes' codes and factors read zero until set.
    pub fn with_codes(degree: usize, dim: usize) -> Self {
        assert!(degree > 0, "a layer needs a positive degree");
        let factor_words = if dim > 0 { FACTOR_WORDS } else { 0 };
        let list_words = whole_lines(1 + degree + factor_words);
        Layer {
            degree,
            list_words,
            slots_start: 1 + factor_words,
            dim,
            stride: list_words + whole_lines(dim.div_ceil(4)),
            nodes: 0,
            lines: Vec::new(),
            locks: Vec::new(),
        }
    }

    /// Fills a new layer (`Layer::new` or `with_codes`) with its serialized counts and
    /// slots (already validated): `slot(i)` is the i-th slot in node order, `degree` per node.
    pub fn from_parts(mut layer: Layer, counts: &[u32], slot: impl Fn(usize) -> u32) -> Self {
        assert_eq!(layer.nodes, 0, "parts fill a new layer");
        let degree = layer.degree;
        layer.grow(counts.len());
        let (stride, slots_start) = (layer.stride, layer.slots_start);
        let words = layer.words_mut();
        for (node, &count) in counts.iter().enumerate() {
            let block = &mut words[node * stride..node * stride + slots_start + degree];
            *block[0].get_mut() = count;
            for (index, word) in block[slots_start..].iter_mut().enumerate() {
                *word.get_mut() = slot(node * degree + index);
            }
        }
        layer
    }

    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Codes kept per node (0: none).
    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Every word of every block, for filling without atomic operations.
    fn words_mut(&mut self) -> &mut [AtomicU32] {
        // SAFETY: `Line` is `repr(C)` over an array of `AtomicU32`, so the lines are one
        // contiguous run of `lines.len() * LINE_WORDS` initialized atomics; `&mut self` makes
        // the access exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.lines.as_mut_ptr().cast::<AtomicU32>(),
                self.lines.len() * LINE_WORDS,
            )
        }
    }

    /// The node's block up to its last slot: its count, any factor words, then its `degree`
    /// slots from `slots_start`.
    #[inline]
    fn block(&self, node: u32) -> &[AtomicU32] {
        // SAFETY: `node_words` checks the node; a block's list part holds the count, the
        // factors and the slots.
        unsafe {
            std::slice::from_raw_parts(self.node_words(node, 0), self.slots_start + self.degree)
        }
    }

    /// The address of word `offset` of the node's block, the node checked once (one compare
    /// where slicing the layer's words took several: this runs for every node a search
    /// measures or expands).
    #[inline(always)]
    fn node_words(&self, node: u32, offset: usize) -> *const AtomicU32 {
        assert!(
            (node as usize) < self.nodes,
            "node {node} outside the layer"
        );
        debug_assert!(offset < self.stride);
        // SAFETY: the node's block lies inside the lines (`nodes * stride` words), and
        // `offset` inside the block.
        unsafe {
            self.lines
                .as_ptr()
                .cast::<AtomicU32>()
                .add(node as usize * self.stride + offset)
        }
    }

    /// Adds empty nodes until the layer has `nodes` of them.
    pub fn grow(&mut self, nodes: usize) {
        if nodes <= self.nodes {
            return;
        }
        let lines_per_node = self.stride / LINE_WORDS;
        self.reserve_lines(nodes * lines_per_node);
        // One pass: a count of 0, zero factors, `degree` empty slots, then zeros (padding,
        // codes).
        let degree = self.degree;
        let slots = self.slots_start..self.slots_start + degree;
        let first_line = self.lines.len();
        self.lines
            .extend((first_line..nodes * lines_per_node).map(|line| {
                let first_word = line % lines_per_node * LINE_WORDS;
                Line(std::array::from_fn(|index| {
                    let word = first_word + index;
                    AtomicU32::new(if slots.contains(&word) { EMPTY } else { 0 })
                }))
            }));
        self.locks.resize_with(nodes, || AtomicBool::new(false));
        self.nodes = nodes;
    }

    /// Makes room for `lines` lines (at least double the old room when it moves, as `Vec`
    /// does), in memory advised for huge pages before it is first written.
    fn reserve_lines(&mut self, lines: usize) {
        if lines <= self.lines.capacity() {
            return;
        }
        let capacity = lines.max(2 * self.lines.capacity());
        let mut room: Vec<Line> = Vec::with_capacity(capacity);
        super::pages::advise_huge_pages(room.as_ptr().cast(), capacity * size_of::<Line>());
        room.append(&mut self.lines);
        self.lines = room;
    }

    /// The node's codes (zeros until `code_nodes`); the layer must keep codes.
    #[inline]
    pub fn codes(&self, node: u32) -> &[i8] {
        debug_assert!(self.dim > 0, "the layer keeps no codes");
        let words = self.node_words(node, self.list_words);
        // SAFETY: the block's code words hold at least `dim` bytes, any byte is a valid `i8`,
        // and code words are written only through `&mut self` (`code_nodes`, `grow`), so no
        // write races this read.
        unsafe { std::slice::from_raw_parts(words.cast::<i8>(), self.dim) }
    }

    /// The address of the node's codes: `dim` readable codes (the layer must keep codes), for
    /// kernels that take rows by address.
    #[inline]
    pub fn codes_ptr(&self, node: u32) -> *const i8 {
        debug_assert!(self.dim > 0, "the layer keeps no codes");
        self.node_words(node, self.list_words).cast()
    }

    /// The factor words kept with the node's codes; the layer must keep codes.
    #[inline]
    pub fn factors(&self, node: u32) -> [f32; FACTOR_WORDS] {
        debug_assert!(self.dim > 0, "the layer keeps no codes");
        let words = self.node_words(node, FACTOR_START);
        std::array::from_fn(|index| {
            // SAFETY: the factor words lie inside the block's list part.
            let word = unsafe { &*words.add(index) };
            f32::from_bits(word.load(Ordering::Relaxed))
        })
    }

    /// Codes the nodes `nodes`: `encode(node, codes)` fills the node's codes and returns its
    /// factors. Past [`PARALLEL_CODING_MIN_NODES`] nodes, on `threads` threads, each writing a
    /// run of whole blocks (the bulk build; a single insert codes its row in place).
    pub fn code_nodes<E>(&mut self, nodes: std::ops::Range<usize>, threads: usize, encode: E)
    where
        E: Fn(usize, &mut [i8]) -> [f32; FACTOR_WORDS] + Sync,
    {
        assert!(nodes.end <= self.nodes, "nodes inside the layer");
        let (stride, list_words, degree, dim) =
            (self.stride, self.list_words, self.degree, self.dim);
        let blocks = &mut self.words_mut()[nodes.start * stride..nodes.end * stride];
        let threads = if nodes.len() < PARALLEL_CODING_MIN_NODES {
            1
        } else {
            threads.max(1)
        };
        // Codes a run of whole blocks, the first of them node `first`.
        let code_run = |first: usize, run_blocks: &mut [AtomicU32]| {
            let mut codes = vec![0i8; dim];
            for (offset, block) in run_blocks.chunks_exact_mut(stride).enumerate() {
                let factors = encode(first + offset, &mut codes);
                write_codes(block, degree, list_words, &codes, factors);
            }
        };
        if threads == 1 {
            code_run(nodes.start, blocks);
            return;
        }
        let per_thread = nodes.len().div_ceil(threads);
        let code_run = &code_run;
        std::thread::scope(|scope| {
            for (run, run_blocks) in blocks.chunks_mut(per_thread * stride).enumerate() {
                scope.spawn(move || code_run(nodes.start + run * per_thread, run_blocks));
            }
        });
    }

    /// Copies node `source_node`'s codes and factors in `source` into node `node`'s block (the
    /// upper layer keeps copies of its rows' codes). Both layers keep codes of one length.
    pub fn copy_codes(&mut self, node: u32, source: &Layer, source_node: u32) {
        assert_eq!(self.dim, source.dim, "codes of one length");
        assert!(self.dim > 0, "the layers keep codes");
        let (stride, list_words, degree) = (self.stride, self.list_words, self.degree);
        let start = node as usize * stride;
        let block = &mut self.words_mut()[start..start + stride];
        write_codes(
            block,
            degree,
            list_words,
            source.codes(source_node),
            source.factors(source_node),
        );
    }

    /// Asks the CPU to start loading the node's codes and the line of its factors (a search is
    /// about to measure it).
    #[inline]
    pub fn prefetch_codes(&self, node: u32) {
        debug_assert!((node as usize) < self.nodes);
        // A prefetch reads nothing and never faults: plain address arithmetic, no slicing.
        let block = self
            .lines
            .as_ptr()
            .cast::<AtomicU32>()
            .wrapping_add(node as usize * self.stride);
        crate::prefetch::line(block.wrapping_add(FACTOR_START).cast());
        let codes = block.wrapping_add(self.list_words);
        for line in 0..self.dim.div_ceil(4 * LINE_WORDS) {
            crate::prefetch::line(codes.wrapping_add(line * LINE_WORDS).cast());
        }
    }

    /// The node's slots, `count` of them used; slots may read `EMPTY` mid-update.
    #[inline]
    pub fn slots(&self, node: u32) -> &[AtomicU32] {
        let block = self.block(node);
        let count = block[0].load(Ordering::Acquire) as usize;
        debug_assert!(count <= self.degree);
        &block[self.slots_start..self.slots_start + count]
    }

    /// Asks the CPU to start loading the node's block (a search is about to expand it).
    #[inline]
    pub fn prefetch(&self, node: u32) {
        debug_assert!((node as usize) < self.nodes);
        // Plain address arithmetic, as in `prefetch_codes`.
        let block = self
            .lines
            .as_ptr()
            .wrapping_add(node as usize * (self.stride / LINE_WORDS));
        for line in 0..self.list_words / LINE_WORDS {
            crate::prefetch::line(block.wrapping_add(line).cast());
        }
    }

    /// The node's slot count and its neighbours as its slots hold them now (a slot a writer is
    /// emptying reads `EMPTY` and is skipped), from one read of the count.
    #[inline(always)]
    pub fn neighbours(&self, node: u32) -> (usize, impl Iterator<Item = u32> + '_) {
        let slots = self.slots(node);
        let neighbours = slots
            .iter()
            .map(|slot| slot.load(Ordering::Relaxed))
            .filter(|&neighbour| neighbour != EMPTY);
        (slots.len(), neighbours)
    }

    /// Copies the node's current neighbours into `out` (cleared first).
    pub fn copy_neighbours(&self, node: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.neighbours(node).1);
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
        let slots = &block[self.slots_start..];
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

    /// Factor word `index` of every node in node order, for serialization.
    pub fn factor_column(&self, index: usize) -> impl Iterator<Item = f32> + '_ {
        (0..self.nodes as u32).map(move |node| self.factors(node)[index])
    }

    /// The counts, for serialization.
    pub fn counts(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes as u32).map(|node| self.block(node)[0].load(Ordering::Relaxed))
    }

    /// Every slot in node order (`degree` per node), for serialization.
    pub fn all_slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes as u32).flat_map(|node| {
            self.block(node)[self.slots_start..]
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
    fn nodes_coded_on_several_threads_keep_their_own_codes() {
        let mut layer = Layer::with_codes(8, 20);
        let nodes = PARALLEL_CODING_MIN_NODES + 37;
        layer.grow(nodes);
        let code = |node: usize, index: usize| ((node * 7 + index) % 255) as i8;
        layer.code_nodes(3..nodes, 3, |node, out| {
            for (index, value) in out.iter_mut().enumerate() {
                *value = code(node, index);
            }
            [node as f32, -(node as f32)]
        });
        for node in [0usize, 2, 3, 4, nodes / 3, nodes / 2, nodes - 1] {
            let coded = node >= 3;
            let expected: Vec<i8> = (0..20)
                .map(|index| if coded { code(node, index) } else { 0 })
                .collect();
            assert_eq!(layer.codes(node as u32), expected.as_slice(), "node {node}");
            let factors = if coded {
                [node as f32, -(node as f32)]
            } else {
                [0.0, 0.0]
            };
            assert_eq!(layer.factors(node as u32), factors, "node {node}");
        }
    }

    #[test]
    fn a_block_keeps_its_codes_and_factors_beside_its_list() {
        let mut layer = Layer::with_codes(60, 130);
        // Count, 60 slots and 2 factors in 4 lines, then 130 codes in 3 lines.
        assert_eq!((layer.list_words, layer.stride), (64, 112));
        layer.grow(2);
        assert_eq!(layer.codes(1), &[0i8; 130]);
        assert_eq!(layer.factors(1), [0.0, 0.0]);
        let codes: Vec<i8> = (0..130).map(|i| (i * 37 % 255 - 127) as i8).collect();
        layer.code_nodes(1..2, 1, |node, out| {
            assert_eq!(node, 1);
            out.copy_from_slice(&codes);
            [0.25, -3.5]
        });
        {
            let guard = layer.lock(1);
            layer.set_neighbours(&guard, 1, &[0]);
        }
        assert_eq!(layer.codes(1), codes.as_slice());
        assert_eq!(layer.factors(1), [0.25, -3.5]);
        assert_eq!(
            layer.codes(1).as_ptr() as usize % 64,
            0,
            "codes start on a line"
        );
        // The factors are not slots: serialization sees the list alone.
        assert_eq!(layer.all_slots().filter(|&id| id != EMPTY).count(), 1);
        assert_eq!(layer.factor_column(1).nth(1), Some(-3.5));
        // Growing moves the blocks; the codes move with them, new ones read zero.
        layer.grow(1000);
        assert_eq!(layer.codes(1), codes.as_slice());
        assert_eq!(layer.codes(999), &[0i8; 130]);
        let mut out = Vec::new();
        layer.copy_neighbours(1, &mut out);
        assert_eq!(out, [0]);
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
        let copy = Layer::from_parts(Layer::new(60, 0), &counts, |index| slots[index]);
        assert_eq!(copy.counts().collect::<Vec<_>>(), counts);
        assert_eq!(copy.all_slots().collect::<Vec<_>>(), slots);
        let mut out = Vec::new();
        copy.copy_neighbours(2, &mut out);
        assert_eq!(out, [10, 11, 12]);
    }
}
