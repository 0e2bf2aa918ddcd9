//! One layer of the graph: every node's neighbour list in one flat array with a fixed stride
//! (`degree` u32 slots per node, `EMPTY` in unused slots), a count per node, and a spin lock per
//! node. Readers never lock: slots are atomics, so a reader racing a writer sees each slot either
//! old or new, always a valid id or `EMPTY`. Writers hold the node's lock, and a thread holds at
//! most one lock at a time, so there is no lock order to get wrong.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The value of an unused neighbour slot.
pub const EMPTY: u32 = u32::MAX;

/// Spins before a waiting writer yields its core (the build oversubscribes small machines).
const SPINS_BEFORE_YIELD: u32 = 64;

pub struct Layer {
    degree: usize,
    neighbours: Vec<AtomicU32>,
    counts: Vec<AtomicU32>,
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

impl Layer {
    pub fn new(degree: usize, nodes: usize) -> Self {
        assert!(degree > 0, "a layer needs a positive degree");
        let mut layer = Layer {
            degree,
            neighbours: Vec::new(),
            counts: Vec::new(),
            locks: Vec::new(),
        };
        layer.grow(nodes);
        layer
    }

    /// Rebuilds a layer from its serialized counts and slots (already validated).
    pub fn from_parts(degree: usize, counts: Vec<u32>, slots: Vec<u32>) -> Self {
        assert_eq!(
            slots.len(),
            counts.len() * degree,
            "slots do not match the counts"
        );
        Layer {
            degree,
            locks: counts.iter().map(|_| AtomicBool::new(false)).collect(),
            counts: counts.into_iter().map(AtomicU32::new).collect(),
            neighbours: slots.into_iter().map(AtomicU32::new).collect(),
        }
    }

    pub fn degree(&self) -> usize {
        self.degree
    }

    pub fn nodes(&self) -> usize {
        self.counts.len()
    }

    /// Adds empty nodes until the layer has `nodes` of them.
    pub fn grow(&mut self, nodes: usize) {
        let old = self.nodes();
        if nodes <= old {
            return;
        }
        self.counts.resize_with(nodes, || AtomicU32::new(0));
        self.locks.resize_with(nodes, || AtomicBool::new(false));
        self.neighbours
            .resize_with(nodes * self.degree, || AtomicU32::new(EMPTY));
    }

    /// The node's slots, `count` of them used; slots may read `EMPTY` mid-update.
    #[inline]
    pub fn slots(&self, node: u32) -> &[AtomicU32] {
        let node = node as usize;
        let count = self.counts[node].load(Ordering::Acquire) as usize;
        debug_assert!(count <= self.degree);
        let start = node * self.degree;
        &self.neighbours[start..start + count]
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
        let start = node as usize * self.degree;
        let old = self.counts[node as usize].load(Ordering::Relaxed) as usize;
        for (slot, &id) in self.neighbours[start..].iter().zip(list) {
            debug_assert!(id != EMPTY && id != node);
            slot.store(id, Ordering::Relaxed);
        }
        for slot in &self.neighbours[start + list.len()..start + old.max(list.len())] {
            slot.store(EMPTY, Ordering::Relaxed);
        }
        self.counts[node as usize].store(list.len() as u32, Ordering::Release);
    }

    /// The counts, for serialization.
    pub fn counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.counts
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
    }

    /// Every slot in node order, for serialization.
    pub fn all_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.neighbours
            .iter()
            .map(|slot| slot.load(Ordering::Relaxed))
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
}
