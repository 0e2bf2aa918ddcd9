//! Random permutations: Fisher–Yates shuffles and vertex relabelling.

use super::rng::Rng;

/// Shuffles `items` in place with the Fisher–Yates algorithm (Durstenfeld's variant).
pub fn shuffle<T>(items: &mut [T], rng: &mut Rng) {
    for last in (1..items.len()).rev() {
        let other = rng.below(last as u64 + 1) as usize;
        items.swap(last, other);
    }
}

/// A uniformly random permutation of `0..node_count`.
pub fn random_permutation(node_count: u64, rng: &mut Rng) -> Vec<u32> {
    assert!(node_count <= 1 << 32, "node ids must fit in u32");
    let mut permutation: Vec<u32> = (0..node_count).map(|id| id as u32).collect();
    shuffle(&mut permutation, rng);
    permutation
}

/// Renames every endpoint `v` of `edges` to `permutation[v]`.
pub fn relabel(edges: &mut [(u32, u32)], permutation: &[u32]) {
    for (from, to) in edges.iter_mut() {
        *from = permutation[*from as usize];
        *to = permutation[*to as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_contains_every_id_once() {
        let mut rng = Rng::from_seed(11);
        let mut permutation = random_permutation(1000, &mut rng);
        assert_ne!(permutation, (0..1000).collect::<Vec<u32>>());
        permutation.sort_unstable();
        assert_eq!(permutation, (0..1000).collect::<Vec<u32>>());
    }

    #[test]
    fn relabel_maps_both_endpoints() {
        let mut edges = vec![(0, 1), (2, 0)];
        relabel(&mut edges, &[2, 0, 1]);
        assert_eq!(edges, vec![(2, 0), (1, 2)]);
    }

    #[test]
    fn shuffle_handles_tiny_slices() {
        let mut rng = Rng::from_seed(1);
        let mut empty: [u8; 0] = [];
        shuffle(&mut empty, &mut rng);
        let mut one = [5];
        shuffle(&mut one, &mut rng);
        assert_eq!(one, [5]);
    }
}
