//! The frontier of a bottom-up BFS level as a bitmap, one bit per node, double-buffered: the
//! level reads the current map (is `u` in the frontier?) while its threads write the nodes
//! they discover into the next map, which the next bottom-up level reads. A bit test touches
//! n/8 bytes where a distance test touches 4n, so a bottom-up level's random parent tests stay
//! in the inner caches (32 KiB at 262,144 nodes, 256 KiB at 2,097,152), as in Beamer et al.'s
//! direction-optimizing BFS. A top-down level records nothing here: the first bottom-up level
//! after it converts its frontier list once (`set_current`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Two node bitmaps: `current` (the frontier of the level running) and `next` (filled while it
/// runs). `set_current`, `start_next` and `swap` run between levels (exclusively, with plain
/// writes); `contains` and `or_next_owned` concurrently within one.
#[derive(Debug, Default)]
pub struct FrontierBits {
    maps: [Vec<AtomicU64>; 2],
    current: usize,
}

fn words(nodes: u32) -> usize {
    (nodes as usize).div_ceil(64)
}

impl FrontierBits {
    pub fn new(nodes: u32) -> Self {
        let map = || (0..words(nodes)).map(|_| AtomicU64::new(0)).collect();
        Self {
            maps: [map(), map()],
            current: 0,
        }
    }

    /// Bytes both maps take for `nodes` nodes.
    pub fn bytes(nodes: u32) -> u64 {
        words(nodes) as u64 * 16
    }

    /// Bytes both maps hold.
    pub fn held_bytes(&self) -> u64 {
        (self.maps[0].len() + self.maps[1].len()) as u64 * 8
    }

    /// Empties the next map, before a level that fills it.
    pub fn start_next(&mut self) {
        for word in &mut self.maps[1 - self.current] {
            *word.get_mut() = 0;
        }
    }

    /// Adds the nodes `64 * word + i` for the bits `i` of `bits` to the next map, for a
    /// caller that owns the word during the level (a bottom-up morsel is a whole number of
    /// words, so no other thread writes it): a plain load and store, not a locked
    /// read-modify-write, which on x86 is a full barrier that waits for the level's prefetched
    /// loads (OPTIMIZATION_LOG 265).
    #[inline]
    pub fn or_next_owned(&self, word: usize, bits: u64) {
        let next = &self.maps[1 - self.current][word];
        next.store(next.load(Ordering::Relaxed) | bits, Ordering::Relaxed);
    }

    /// Makes the next map the current one (the level that filled it has ended).
    pub fn swap(&mut self) {
        self.current = 1 - self.current;
    }

    /// Makes `nodes` the current map (a frontier that a top-down level found as a list).
    pub fn set_current(&mut self, nodes: &[u32]) {
        let map = &mut self.maps[self.current];
        for word in map.iter_mut() {
            *word.get_mut() = 0;
        }
        for &v in nodes {
            *map[(v / 64) as usize].get_mut() |= 1 << (v % 64);
        }
    }

    /// The current map's words (bit `v % 64` of word `v / 64` for node `v`).
    #[inline]
    pub fn current_words(&self) -> &[AtomicU64] {
        &self.maps[self.current]
    }

    /// Whether `v` is in the current frontier.
    #[inline]
    pub fn contains(&self, v: u32) -> bool {
        self.maps[self.current][(v / 64) as usize].load(Ordering::Relaxed) >> (v % 64) & 1 == 1
    }
}

/// Collects one thread's discoveries, in increasing node order, a word at a time, and adds
/// each word to the next map once. The thread owns the words it records into during the
/// level (`FrontierBits::or_next_owned`); its own words recorded twice are merged.
#[derive(Debug)]
pub struct NextWords<'a> {
    bits: &'a FrontierBits,
    word: usize,
    pending: u64,
}

impl<'a> NextWords<'a> {
    pub fn new(bits: &'a FrontierBits) -> Self {
        Self {
            bits,
            word: 0,
            pending: 0,
        }
    }

    /// Records node `v` (not below the nodes recorded before).
    #[inline]
    pub fn push(&mut self, v: u32) {
        let word = (v / 64) as usize;
        if word != self.word {
            assert!(word > self.word, "nodes are recorded in increasing order");
            self.flush();
            self.word = word;
        }
        self.pending |= 1 << (v % 64);
    }

    /// Adds the pending word to the next map.
    pub fn flush(&mut self) {
        if self.pending != 0 {
            self.bits.or_next_owned(self.word, self.pending);
            self.pending = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_becomes_current_after_a_swap() {
        let mut bits = FrontierBits::new(130);
        bits.set_current(&[0, 64, 129]);
        assert!(bits.contains(0) && bits.contains(64) && bits.contains(129));
        assert!(!bits.contains(1) && !bits.contains(128));
        bits.start_next();
        let mut words = NextWords::new(&bits);
        for v in [5, 6, 127] {
            words.push(v);
        }
        words.flush();
        let mut other = NextWords::new(&bits);
        other.push(65); // the same word as 127, recorded again after a flush
        other.flush();
        assert!(
            bits.contains(64) && !bits.contains(5),
            "next is not current yet"
        );
        bits.swap();
        assert!(bits.contains(5) && bits.contains(6) && bits.contains(65) && bits.contains(127));
        assert!(
            !bits.contains(0) && !bits.contains(64),
            "the old frontier is gone"
        );
        bits.set_current(&[]);
        assert!((0..130).all(|v| !bits.contains(v)));
    }
}
