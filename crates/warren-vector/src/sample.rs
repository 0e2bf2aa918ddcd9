//! Deterministic sample data for benchmarks and examples: clustered random vectors, the same
//! for the same seed on every machine (`warren bench vectors` and the `hnsw_speed` example
//! generate their datasets here, so their figures are comparable).

/// Rows and queries around `clusters` shared centres: each value is its centre's plus the sum
/// of three uniform draws in [-0.15, 0.15]. Deterministic for a seed.
pub fn clustered(rows: usize, queries: usize, dim: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let clusters = (rows / 1_000).clamp(10, 1_000);
    let mut random = SplitMix(seed);
    let centres: Vec<f32> = (0..clusters * dim).map(|_| random.unit()).collect();
    let mut all = Vec::with_capacity((rows + queries) * dim);
    for _ in 0..rows + queries {
        let centre = (random.next() % clusters as u64) as usize;
        for value in &centres[centre * dim..(centre + 1) * dim] {
            all.push(value + (random.unit() + random.unit() + random.unit()) * 0.15);
        }
    }
    let queries = all.split_off(rows * dim);
    (all, queries)
}

/// A SplitMix64 generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut value = self.0;
        value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        value ^ (value >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dataset_is_seeded_and_shaped() {
        let (rows, queries) = clustered(100, 5, 8, 1);
        assert_eq!((rows.len(), queries.len()), (800, 40));
        assert_eq!(clustered(100, 5, 8, 1).0, rows);
        assert_ne!(clustered(100, 5, 8, 2).0, rows);
    }
}
