//! Compressed sparse row adjacency of one rel table in one direction: for node `v`, its
//! neighbours are `neighbours[offsets[v]..offsets[v+1]]` and the rel ids alongside them. Within a
//! node, entries are in rel-id order (CSV row order), which makes traversal order deterministic.

use crate::buffer::{Bytes, U32Words};

#[derive(Clone, Debug)]
pub struct Csr {
    /// `num_nodes + 1` u64 offsets.
    offsets: Bytes,
    /// u32 neighbour offsets in the other endpoint's node table.
    neighbours: Bytes,
    /// u32 rel offsets in the rel table, parallel to `neighbours`.
    rel_ids: Bytes,
}

impl Csr {
    pub fn empty(num_nodes: usize) -> Self {
        Self {
            offsets: Bytes::from_vec(vec![0u64; num_nodes + 1]),
            neighbours: Bytes::empty(),
            rel_ids: Bytes::empty(),
        }
    }

    /// Builds the adjacency of `num_nodes` nodes from rels given as parallel `sources` and
    /// `targets` arrays (index = rel id). Rels for which `is_live` is false are left out.
    pub fn build(
        num_nodes: usize,
        sources: &[u32],
        targets: &[u32],
        is_live: impl Fn(usize) -> bool,
    ) -> Self {
        assert_eq!(sources.len(), targets.len());
        let mut offsets = vec![0u64; num_nodes + 1];
        for (rel, &source) in sources.iter().enumerate() {
            if is_live(rel) {
                offsets[source as usize + 1] += 1;
            }
        }
        for i in 0..num_nodes {
            offsets[i + 1] += offsets[i];
        }
        let edges = offsets[num_nodes] as usize;
        let mut neighbour_words = U32Words::zeroed(edges);
        let mut rel_words = U32Words::zeroed(edges);
        let (neighbours, rel_ids) = (neighbour_words.as_mut_slice(), rel_words.as_mut_slice());
        let mut cursor: Vec<u64> = offsets[..num_nodes].to_vec();
        for (rel, (&source, &target)) in sources.iter().zip(targets).enumerate() {
            if !is_live(rel) {
                continue;
            }
            let slot = &mut cursor[source as usize];
            neighbours[*slot as usize] = target;
            rel_ids[*slot as usize] = rel as u32;
            *slot += 1;
        }
        Self {
            offsets: Bytes::from_vec(offsets),
            neighbours: neighbour_words.into_bytes(),
            rel_ids: rel_words.into_bytes(),
        }
    }

    /// Reassembles a CSR from parts read from disk; [`Csr::validate`] must be called after.
    pub fn from_parts(offsets: Bytes, neighbours: Bytes, rel_ids: Bytes) -> Self {
        Self {
            offsets,
            neighbours,
            rel_ids,
        }
    }

    pub fn parts(&self) -> (Bytes, Bytes, Bytes) {
        (
            self.offsets.clone(),
            self.neighbours.clone(),
            self.rel_ids.clone(),
        )
    }

    /// Checks the sizes of the parts without reading them: one more offset than nodes is not
    /// knowable here, but the neighbour and rel arrays must have the same length and at most
    /// one entry per rel in each direction.
    pub fn check_sizes(&self, num_rels: u64) -> Result<(), String> {
        let edges = self.neighbours.len() / 4;
        if self.rel_ids.len() != self.neighbours.len() || edges as u64 > num_rels {
            return Err("CSR arrays do not match the rel count".into());
        }
        if self.offsets.len() < 8 || !self.offsets.len().is_multiple_of(8) {
            return Err("CSR offsets are malformed".into());
        }
        Ok(())
    }

    /// Verifies the mapped parts' checksums.
    pub fn verify(&self) -> Result<(), String> {
        self.offsets.verify()?;
        self.neighbours.verify()?;
        self.rel_ids.verify()
    }

    /// Checks every structural invariant: offsets start at 0, never decrease and end at the
    /// edge count; neighbours are valid offsets of the target table; rel ids are in range.
    pub fn validate(&self, num_targets: u64, num_rels: u64) -> Result<(), String> {
        let offsets = self.offsets();
        if offsets.first() != Some(&0) {
            return Err("CSR offsets do not start at 0".into());
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err("CSR offsets decrease".into());
        }
        let edges = self.neighbours().len();
        if offsets.last().copied() != Some(edges as u64) || self.rel_ids().len() != edges {
            return Err("CSR offsets do not match the edge count".into());
        }
        if self
            .neighbours()
            .iter()
            .any(|&n| u64::from(n) >= num_targets)
        {
            return Err("CSR neighbour out of range".into());
        }
        if self.rel_ids().iter().any(|&r| u64::from(r) >= num_rels) {
            return Err("CSR rel id out of range".into());
        }
        Ok(())
    }

    /// Nodes covered by this CSR (nodes added to the table later have no entries yet).
    pub fn num_nodes(&self) -> usize {
        self.offsets().len() - 1
    }

    pub fn num_edges(&self) -> usize {
        self.neighbours().len()
    }

    pub fn offsets(&self) -> &[u64] {
        self.offsets.cast()
    }

    pub fn neighbours(&self) -> &[u32] {
        self.neighbours.cast()
    }

    pub fn rel_ids(&self) -> &[u32] {
        self.rel_ids.cast()
    }

    /// The range of `node`'s entries in `neighbours()` / `rel_ids()`.
    #[inline]
    pub fn range(&self, node: u32) -> std::ops::Range<usize> {
        let offsets = self.offsets();
        let node = node as usize;
        if node + 1 >= offsets.len() {
            return 0..0;
        }
        offsets[node] as usize..offsets[node + 1] as usize
    }

    pub fn degree(&self, node: u32) -> usize {
        self.range(node).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_in_rel_order_and_skips_dead_rels() {
        // rels: 0: 0->1, 1: 1->2, 2: 0->2, 3: 0->1 (deleted)
        let csr = Csr::build(3, &[0, 1, 0, 0], &[1, 2, 2, 1], |rel| rel != 3);
        assert_eq!(csr.offsets(), &[0, 2, 3, 3]);
        assert_eq!(&csr.neighbours()[csr.range(0)], &[1, 2]);
        assert_eq!(&csr.rel_ids()[csr.range(0)], &[0, 2]);
        assert_eq!(csr.range(7), 0..0);
        csr.validate(3, 4).unwrap();
        assert!(csr.validate(2, 4).is_err());
    }
}
