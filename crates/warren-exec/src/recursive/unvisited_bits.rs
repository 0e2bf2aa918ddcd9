//! The nodes a bottom-up BFS level still has to test, as a bitmap: a superset of the unvisited
//! nodes that have at least one in-edge. A bottom-up level walks its words and tests only their
//! set bits, so nodes visited earlier (64 to a word) and nodes no in-edge reaches (in a
//! Graph500 graph most of the nodes a search leaves unvisited) cost nothing, where a scan of
//! the distances tests every node at every bottom-up level. The map is filled once per search,
//! before its first bottom-up level, from the in-degrees alone (a word at a time); a node
//! visited before (by a top-down level) keeps its bit until a bottom-up level finds its
//! distance set and clears it.

use std::sync::atomic::{AtomicU64, Ordering};

/// One bit per node. `fill` runs between levels (exclusively); within a level each thread
/// reads and rewrites only the words of its own node range.
#[derive(Debug, Default)]
pub struct UnvisitedBits {
    words: Vec<AtomicU64>,
}

fn words(nodes: u32) -> usize {
    (nodes as usize).div_ceil(64)
}

impl UnvisitedBits {
    pub fn new(nodes: u32) -> Self {
        Self {
            words: (0..words(nodes)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Bytes the map takes for `nodes` nodes.
    pub fn bytes(nodes: u32) -> u64 {
        words(nodes) as u64 * 8
    }

    /// Bytes the map holds.
    pub fn held_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// Sets the bits of exactly the nodes `0..nodes` for which `keep` holds.
    pub fn fill(&mut self, nodes: u32, keep: impl Fn(u32) -> bool) {
        self.fill_words(nodes, |first, end| {
            let mut bits = 0u64;
            for v in first..end {
                bits |= u64::from(keep(v)) << (v - first);
            }
            bits
        });
    }

    /// Sets each word to `bits(first, end)`, the bits of its nodes `first..end` (bit `i` for
    /// node `first + i`; none past `end`).
    pub fn fill_words(&mut self, nodes: u32, bits: impl Fn(u32, u32) -> u64) {
        assert_eq!(self.words.len(), words(nodes), "the map covers the graph");
        for (index, word) in self.words.iter_mut().enumerate() {
            let first = index as u32 * 64;
            let end = first.saturating_add(64).min(nodes);
            let value = bits(first, end);
            debug_assert!(end - first == 64 || value >> (end - first) == 0);
            *word.get_mut() = value;
        }
    }

    /// The bits of nodes `64 * word ..= 64 * word + 63`.
    #[inline]
    pub fn word(&self, word: usize) -> u64 {
        self.words[word].load(Ordering::Relaxed)
    }

    /// [`UnvisitedBits::word`], or no bits past the last word (for prefetch hints ahead of a
    /// scan; another thread may be rewriting the word).
    #[inline]
    pub fn word_or_empty(&self, word: usize) -> u64 {
        self.words
            .get(word)
            .map_or(0, |bits| bits.load(Ordering::Relaxed))
    }

    /// Rewrites word `word`: only the thread whose node range holds the word calls it.
    #[inline]
    pub fn store_word(&self, word: usize, bits: u64) {
        self.words[word].store(bits, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_sets_exactly_the_kept_nodes() {
        let mut bits = UnvisitedBits::new(130);
        bits.fill(130, |v| v % 3 == 0 || v == 129);
        for v in 0..130u32 {
            let set = bits.word(v as usize / 64) >> (v % 64) & 1 == 1;
            assert_eq!(set, v % 3 == 0 || v == 129, "node {v}");
        }
        assert_eq!(bits.word(2) >> 2, 0, "no bit past the last node");
        bits.store_word(1, 0);
        assert_eq!(bits.word(1), 0);
        bits.fill(130, |_| false);
        assert!((0..3).all(|w| bits.word(w) == 0));
        assert_eq!(bits.held_bytes(), UnvisitedBits::bytes(130));
    }

    #[test]
    fn fill_words_sets_each_word_from_its_node_range() {
        let mut bits = UnvisitedBits::new(130);
        bits.fill_words(130, |first, end| {
            assert!(end - first <= 64 && first % 64 == 0);
            (first..end).fold(0, |word, v| word | u64::from(v % 5 == 1) << (v - first))
        });
        for v in 0..130u32 {
            let set = bits.word(v as usize / 64) >> (v % 64) & 1 == 1;
            assert_eq!(set, v % 5 == 1, "node {v}");
        }
    }
}
