//! The HNSW index against brute force: recall@10 on clustered data for every metric, deletes,
//! inserts, filtered search, serialization, and exactness with a beam as wide as the data.

use proptest::prelude::*;
use warren_vector::distance::Metric;
use warren_vector::hnsw::{
    exact_top_k, FnFilter, HnswError, HnswIndex, HnswParams, RowMask, SearchScratch,
};

/// A seeded generator (splitmix64), so the data is the same on every machine.
struct Random(u64);

impl Random {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut value = self.0;
        value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        value ^ (value >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// `rows` vectors around `clusters` random centres, with noise of about `spread`.
fn clustered(rows: usize, dim: usize, clusters: usize, spread: f32, seed: u64) -> Vec<f32> {
    let mut random = Random(seed);
    let centres: Vec<f32> = (0..clusters * dim).map(|_| random.unit()).collect();
    let mut out = Vec::with_capacity(rows * dim);
    for _ in 0..rows {
        let centre = (random.next_u64() % clusters as u64) as usize;
        for value in &centres[centre * dim..(centre + 1) * dim] {
            let noise = (random.unit() + random.unit() + random.unit()) * spread;
            out.push(value + noise);
        }
    }
    out
}

/// `rows` data rows and `queries` query rows drawn around the same centres.
fn data_and_queries(
    rows: usize,
    queries: usize,
    dim: usize,
    clusters: usize,
    spread: f32,
    seed: u64,
) -> (Vec<f32>, Vec<f32>) {
    let mut all = clustered(rows + queries, dim, clusters, spread, seed);
    let queries = all.split_off(rows * dim);
    (all, queries)
}

fn params(metric: Metric) -> HnswParams {
    HnswParams {
        metric,
        ..HnswParams::default()
    }
}

/// Mean recall@k of the index over `queries` against an exact scan of the rows `accept` passes.
fn recall(
    index: &HnswIndex,
    vectors: &[f32],
    queries: &[f32],
    k: usize,
    efs: usize,
    accept: impl Fn(u32) -> bool + Sync + Copy,
) -> f64 {
    let dim = index.dim();
    let mut scratch = SearchScratch::new();
    let mut hits = 0usize;
    let mut wanted = 0usize;
    for query in queries.chunks_exact(dim) {
        let found = index
            .search_filtered(vectors, query, k, efs, &FnFilter(accept), &mut scratch)
            .unwrap();
        let live = |row: u32| !index.is_deleted(row) && accept(row);
        let rows = 0..index.rows() as u32;
        let truth = exact_top_k(vectors, dim, rows, query, k, index.params().metric, live);
        assert_eq!(
            found.len(),
            truth.len(),
            "a search returned fewer rows than pass"
        );
        assert!(
            found.iter().all(|hit| live(hit.row)),
            "a deleted or filtered row came back"
        );
        // The graph measures codes; what comes back carries the exact distance, nearest first.
        for hit in &found {
            let metric = index.params().metric;
            let alone = hit.row..hit.row + 1;
            let exact = exact_top_k(vectors, dim, alone, query, 1, metric, |_| true)[0];
            assert_eq!(hit.distance, exact.distance, "row {}", hit.row);
        }
        assert!(
            found.windows(2).all(|pair| pair[0] <= pair[1]),
            "nearest first"
        );
        hits += found
            .iter()
            .filter(|hit| truth.iter().any(|exact| exact.row == hit.row))
            .count();
        wanted += truth.len();
    }
    hits as f64 / wanted as f64
}

#[test]
fn recall_at_10_cosine_20k_by_64() {
    let (vectors, queries) = data_and_queries(20_000, 200, 64, 50, 0.15, 1);
    let index = HnswIndex::build(&vectors, 64, params(Metric::Cosine), 2).unwrap();
    let recall = recall(&index, &vectors, &queries, 10, 200, |_| true);
    assert!(recall >= 0.95, "recall@10 {recall}");
}

#[test]
fn recall_at_10_every_metric_and_seed() {
    for (seed, metric) in [
        (2, Metric::L2),
        (3, Metric::L2Squared),
        (4, Metric::DotProduct),
        (5, Metric::Cosine),
    ] {
        let (vectors, queries) = data_and_queries(10_000, 100, 32, 40, 0.2, seed);
        let params = HnswParams {
            seed,
            ..params(metric)
        };
        let index = HnswIndex::build(&vectors, 32, params, 2).unwrap();
        let recall = recall(&index, &vectors, &queries, 10, 200, |_| true);
        assert!(recall >= 0.95, "{metric:?} recall@10 {recall}");
    }
}

#[test]
fn deletes_and_inserts_keep_recall() {
    let dim = 32;
    let (all, queries) = data_and_queries(12_000, 100, dim, 40, 0.2, 7);
    let mut index = HnswIndex::build(&all[..10_000 * dim], dim, params(Metric::L2), 2).unwrap();
    let mut random = Random(9);
    for _ in 0..2_000 {
        index.delete((random.next_u64() % 10_000) as u32).unwrap();
    }
    assert!(index.live_rows() < 10_000 - 1_500);
    let after_deletes = recall(&index, &all[..10_000 * dim], &queries, 10, 200, |_| true);
    assert!(
        after_deletes >= 0.95,
        "recall after deletes {after_deletes}"
    );
    for row in 10_000..12_000u32 {
        index.insert(&all[..(row as usize + 1) * dim], row).unwrap();
    }
    assert_eq!(index.rows(), 12_000);
    let after_inserts = recall(&index, &all, &queries, 10, 200, |_| true);
    assert!(
        after_inserts >= 0.95,
        "recall after inserts {after_inserts}"
    );
    assert!(!index.needs_rebuild());
    assert!(matches!(index.insert(&all, 5), Err(HnswError::Input(_))));
    assert!(index.delete(99_999).is_err());
}

#[test]
fn an_index_grown_by_inserts_alone_finds_neighbours() {
    let dim = 16;
    let (vectors, queries) = data_and_queries(3_000, 50, dim, 20, 0.2, 11);
    let mut index = HnswIndex::empty(dim, params(Metric::L2Squared)).unwrap();
    for row in 0..3_000u32 {
        index
            .insert(&vectors[..(row as usize + 1) * dim], row)
            .unwrap();
    }
    let recall = recall(&index, &vectors, &queries, 10, 100, |_| true);
    assert!(recall >= 0.95, "recall {recall}");
}

#[test]
fn filtered_search_returns_k_passing_rows() {
    let dim = 32;
    let (vectors, queries) = data_and_queries(20_000, 50, dim, 40, 0.2, 13);
    let mut index = HnswIndex::build(&vectors, dim, params(Metric::Cosine), 2).unwrap();
    for row in (0..20_000).step_by(7) {
        index.delete(row).unwrap();
    }
    // Graph search (the count is unknown): 10% and 1% of rows pass.
    for modulus in [10u32, 100] {
        let passes = move |row: u32| row % modulus == 3;
        let recall = recall(&index, &vectors, &queries, 10, 200, passes);
        assert!(recall >= 0.95, "1/{modulus} filter recall {recall}");
    }
    // A mask with a count: 0.5% of rows pass, so the index scans them; exact by construction
    // of the rule, and it must return rows that pass and are live.
    let mask = RowMask::from_fn(20_000, |row| row % 200 == 1);
    let mut scratch = SearchScratch::new();
    for query in queries.chunks_exact(dim) {
        let found = index
            .search_filtered(&vectors, query, 10, 200, &mask, &mut scratch)
            .unwrap();
        assert_eq!(found.len(), 10);
        assert!(found
            .iter()
            .all(|hit| hit.row % 200 == 1 && !index.is_deleted(hit.row)));
    }
    // Fewer passing rows than k: all of them come back.
    let few = RowMask::from_fn(20_000, |row| row == 5 || row == 9);
    let found = index
        .search_filtered(&vectors, &queries[..dim], 10, 200, &few, &mut scratch)
        .unwrap();
    assert_eq!(found.len(), 2);
}

#[test]
fn serialization_round_trips_and_rejects_corruption() {
    let dim = 16;
    let vectors = clustered(2_000, dim, 10, 0.2, 17);
    let mut index = HnswIndex::build(&vectors, dim, params(Metric::DotProduct), 2).unwrap();
    index.delete(3).unwrap();
    let bytes = index.to_bytes();
    let read = HnswIndex::from_bytes(&bytes, &vectors).unwrap();
    assert_eq!(read.to_bytes(), bytes);
    assert_eq!(read.params(), index.params());
    assert!(read.is_deleted(3) && read.live_rows() == 1_999);
    let mut scratch = SearchScratch::new();
    for query in vectors.chunks_exact(dim).take(20) {
        let a = index.search(&vectors, query, 10, 50, &mut scratch).unwrap();
        let b = read.search(&vectors, query, 10, 50, &mut scratch).unwrap();
        assert_eq!(a, b);
    }
    let mut flipped = bytes.clone();
    flipped[200] ^= 1;
    assert!(matches!(
        HnswIndex::from_bytes(&flipped, &vectors),
        Err(HnswError::Format(_))
    ));
    assert!(HnswIndex::from_bytes(&bytes[..bytes.len() - 9], &vectors).is_err());
    assert!(HnswIndex::from_bytes(b"not an index at all", &vectors).is_err());
    // The index copies its vectors from the caller's block: one too short is an input error.
    assert!(matches!(
        HnswIndex::from_bytes(&bytes, &vectors[..dim * 10]),
        Err(HnswError::Input(_))
    ));
    // Under cosine the stored inverse norms come back beside the copied vectors.
    let cosine = HnswIndex::build(&vectors, dim, params(Metric::Cosine), 2).unwrap();
    let read = HnswIndex::from_bytes(&cosine.to_bytes(), &vectors).unwrap();
    assert_eq!(read.to_bytes(), cosine.to_bytes());
    for query in vectors.chunks_exact(dim).take(20) {
        let a = cosine
            .search(&vectors, query, 10, 50, &mut scratch)
            .unwrap();
        let b = read.search(&vectors, query, 10, 50, &mut scratch).unwrap();
        assert_eq!(a, b);
    }
    let empty = HnswIndex::empty(4, HnswParams::default()).unwrap();
    assert_eq!(
        HnswIndex::from_bytes(&empty.to_bytes(), &[])
            .unwrap()
            .rows(),
        0
    );
}

#[test]
fn bad_inputs_are_errors() {
    let vectors = clustered(100, 8, 4, 0.2, 19);
    assert!(HnswIndex::build(&vectors, 0, HnswParams::default(), 1).is_err());
    assert!(HnswIndex::build(&vectors[..7], 8, HnswParams::default(), 1).is_err());
    let index = HnswIndex::build(&vectors, 8, HnswParams::default(), 1).unwrap();
    let mut scratch = SearchScratch::new();
    assert!(index
        .search(&vectors, &[0.0; 7], 10, 10, &mut scratch)
        .is_err());
    assert!(index
        .search(&vectors, &[0.0; 8], 0, 10, &mut scratch)
        .is_err());
    assert!(index
        .search(&vectors[..8], &[0.0; 8], 10, 10, &mut scratch)
        .is_err());
}

fn small_case() -> impl Strategy<Value = (usize, Vec<f32>, Vec<f32>, usize, usize, usize, u8)> {
    (1usize..6, 1usize..80).prop_flat_map(|(dim, rows)| {
        (
            Just(dim),
            prop::collection::vec(-10.0f32..10.0, rows * dim),
            prop::collection::vec(-10.0f32..10.0, dim),
            2usize..6,
            2usize..10,
            1usize..12,
            0u8..4,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With a beam at least as wide as the data, the search is exact.
    #[test]
    fn a_beam_as_wide_as_the_data_is_exact(
        (dim, vectors, query, mu, ml, k, metric) in small_case()
    ) {
        let metric = [Metric::Cosine, Metric::L2, Metric::L2Squared, Metric::DotProduct]
            [metric as usize];
        let params = HnswParams { metric, mu, ml, efc: 16, pu: 0.3, ..HnswParams::default() };
        let index = HnswIndex::build(&vectors, dim, params, 2).unwrap();
        let rows = index.rows();
        let mut scratch = SearchScratch::new();
        let found = index.search(&vectors, &query, k, rows.max(1), &mut scratch).unwrap();
        let truth = exact_top_k(&vectors, dim, 0..rows as u32, &query, k, metric, |_| true);
        let distances = |hits: &[warren_vector::hnsw::Neighbour]| {
            hits.iter().map(|hit| hit.distance).collect::<Vec<_>>()
        };
        prop_assert_eq!(distances(&found), distances(&truth));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Through the graph (a beam narrower than the data), a filtered search over an index with
    /// tombstones returns exactly min(k, live passing rows) rows, every one live and passing.
    #[test]
    fn filtered_graph_search_returns_k_live_passing_rows(
        seed in 0u64..1000,
        rows in 40usize..300,
        k in 1usize..20,
        modulus in 1u32..9,
        deletes in 0usize..40,
    ) {
        let (vectors, queries) = data_and_queries(rows, 1, 8, 5, 0.3, seed);
        let mut index = HnswIndex::build(&vectors, 8, params(Metric::L2), 2).unwrap();
        let mut random = Random(seed);
        for _ in 0..deletes {
            index.delete((random.next_u64() % rows as u64) as u32).unwrap();
        }
        let passes = move |row: u32| row.is_multiple_of(modulus);
        let mut scratch = SearchScratch::new();
        let found = index
            .search_filtered(&vectors, &queries, k, 8, &FnFilter(passes), &mut scratch)
            .unwrap();
        let live_passing = (0..rows as u32)
            .filter(|&row| passes(row) && !index.is_deleted(row))
            .count();
        prop_assert_eq!(found.len(), k.min(live_passing));
        prop_assert!(found.iter().all(|hit| passes(hit.row) && !index.is_deleted(hit.row)));
        prop_assert!(found.windows(2).all(|pair| pair[0] <= pair[1]));
    }
}
