//! `HnswIndex`: the two layers, the upper-layer sample, the tombstones, and the public calls
//! (build, insert, delete, search, filtered search).
//!
//! Deletes are tombstones: a deleted row is still traversed (its edges keep the graph
//! connected) but never returned. The caller keeps a deleted row's vector in the block until
//! the index is rebuilt; `needs_rebuild` says when tombstones exceed
//! `REBUILD_DELETED_FRACTION` of the rows, when searches do measurably more work per result.

use super::exact::exact_top_k;
use super::filter::{scan_is_cheaper, AllRows, RowFilter};
use super::layer::{Layer, EMPTY};
use super::measure::{distance, encode_row, inverse_norm, row_vector, Query, Space};
use super::params::{validate_beam, HnswError, HnswParams, DIMENSION_MAX, ROWS_MAX};
use super::search::{search_layer, search_layer_beam, Neighbour, SearchScratch};

/// Tombstones over this fraction of the rows make `needs_rebuild` true.
pub const REBUILD_DELETED_FRACTION: f64 = 0.25;

/// The beam of the upper-layer walk at query time; its nearest nodes seed the lower-layer
/// beam. Narrower beams compute fewer upper distances but lose recall at 1M rows (2:
/// recall@10 0.998 at efs 200 instead of 1.0; docs/OPTIMIZATION_LOG.md).
pub(crate) const UPPER_SEARCH_EF: usize = 8;

/// The beam of the upper-layer walk when inserting a row that is only in the lower layer: its
/// lower-layer search is `efc` wide, so two seeds serve it as well as eight (the same recall
/// at every efs at 50,000 and 1M rows, for 4% of the build; docs/OPTIMIZATION_LOG.md 278).
pub(crate) const INSERT_UPPER_EF: usize = 2;

/// A row sampled into the upper layer whose node has at most this many times `efc` nodes
/// before it is linked from an exact scan of those nodes instead of an `efc`-wide walk: the
/// walk expands about `efc` nodes, at several distances' cost each, so below this the scan
/// costs less, and its `efc` nearest are exact (docs/OPTIMIZATION_LOG.md 282).
pub(crate) const EXACT_UPPER_NODES_PER_EFC: usize = 8;

/// The beam's nearest `RANKED_ROWS_PER_RESULT · k` rows by their codes are ranked again by
/// their exact distances; the rest of the beam is dropped. The codes' error (about 1e-3) is
/// far below the gap between a beam's 10th and 40th row: at 1M x 128, ranking 40 of a beam of
/// 200 gave the recall of ranking all 200 (20 lost 0.0001) for 1.1x the queries per second
/// (docs/OPTIMIZATION_LOG.md 180).
const RANKED_ROWS_PER_RESULT: usize = 4;

/// How many rows ahead of the exact ranking of a beam their FLOAT rows are prefetched.
const RANK_PREFETCH_AHEAD: usize = 4;

pub struct HnswIndex {
    pub(crate) params: HnswParams,
    pub(crate) dim: usize,
    pub(crate) rows: usize,
    /// Upper-layer node -> row; node 0 is the entry.
    pub(crate) upper_rows: Vec<u32>,
    /// Row -> upper-layer node, `EMPTY` when the row is only in the lower layer.
    pub(crate) upper_node: Vec<u32>,
    pub(crate) upper: Layer,
    /// Node = row. Its blocks also keep each row's int8 codes and their factors, which the
    /// graph measures (see `layer`, `measure`).
    pub(crate) lower: Layer,
    pub(crate) deleted: Vec<u64>,
    pub(crate) deleted_rows: usize,
}

impl HnswIndex {
    /// An index with no rows.
    pub fn empty(dim: usize, params: HnswParams) -> Result<Self, HnswError> {
        params.validate()?;
        if dim == 0 || dim > DIMENSION_MAX {
            return Err(HnswError::Input(format!(
                "vector length must be in [1, {DIMENSION_MAX}], got {dim}"
            )));
        }
        Ok(HnswIndex {
            params,
            dim,
            rows: 0,
            upper_rows: Vec::new(),
            upper_node: Vec::new(),
            upper: Layer::with_codes(params.mu, dim),
            lower: Layer::with_codes(params.ml, dim),
            deleted: Vec::new(),
            deleted_rows: 0,
        })
    }

    pub fn params(&self) -> &HnswParams {
        &self.params
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rows indexed, deleted ones included (row ids are `0..rows`).
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn live_rows(&self) -> usize {
        self.rows - self.deleted_rows
    }

    pub fn upper_rows(&self) -> usize {
        self.upper_rows.len()
    }

    pub fn is_deleted(&self, row: u32) -> bool {
        self.deleted
            .get(row as usize / 64)
            .is_some_and(|word| word & (1u64 << (row % 64)) != 0)
    }

    /// True when tombstones exceed `REBUILD_DELETED_FRACTION` of the rows.
    pub fn needs_rebuild(&self) -> bool {
        self.deleted_rows as f64 > REBUILD_DELETED_FRACTION * self.rows as f64
    }

    /// Checks that `vectors` holds at least `rows` rows of this index's length.
    pub(crate) fn check_block(&self, vectors: &[f32], rows: usize) -> Result<(), HnswError> {
        if !vectors.len().is_multiple_of(self.dim) || vectors.len() / self.dim < rows {
            return Err(HnswError::Input(format!(
                "the vector block has {} values; expected {rows} rows of {} values",
                vectors.len(),
                self.dim
            )));
        }
        Ok(())
    }

    /// Makes room for rows `0..rows`, sampling the new ones into the upper layer and coding
    /// their vectors from `vectors` into the lower layer's blocks.
    pub(crate) fn grow(&mut self, vectors: &[f32], rows: usize) -> Result<(), HnswError> {
        self.grow_on(vectors, rows, 1)
    }

    /// [`grow`](Self::grow) coding the new rows on `threads` threads.
    pub(crate) fn grow_on(
        &mut self,
        vectors: &[f32],
        rows: usize,
        threads: usize,
    ) -> Result<(), HnswError> {
        self.check_block(vectors, rows)?;
        let first = self.rows;
        self.grow_graph(rows)?;
        self.code_rows(vectors, first..rows, threads, |_, vector| {
            inverse_norm(vector)
        });
        Ok(())
    }

    /// Codes the rows `rows` of `vectors` into their blocks on `threads` threads, with
    /// `norm(row, vector)` as each row's inverse norm (used under cosine).
    pub(crate) fn code_rows(
        &mut self,
        vectors: &[f32],
        rows: std::ops::Range<usize>,
        threads: usize,
        norm: impl Fn(usize, &[f32]) -> f32 + Sync,
    ) {
        let (metric, dim) = (self.params.metric, self.dim);
        self.lower.code_nodes(rows.clone(), threads, |row, codes| {
            let vector = row_vector(vectors, dim, row as u32);
            encode_row(metric, vector, norm(row, vector), codes)
        });
        self.copy_upper_codes(rows);
    }

    /// Copies the codes and factors of the rows `rows` that are in the upper layer from the
    /// lower layer's blocks into theirs, so that the upper walk reads them there: the upper
    /// layer's blocks are a twentieth of the lower layer's (at `pu` 0.05), dense enough to stay
    /// in the caches, where the rows' own blocks are spread over all of the lower layer
    /// (docs/OPTIMIZATION_LOG.md 279).
    fn copy_upper_codes(&mut self, rows: std::ops::Range<usize>) {
        let HnswIndex {
            upper_rows,
            upper,
            lower,
            ..
        } = self;
        // Upper nodes are in row order (`grow_graph` appends them; `install` checks).
        debug_assert!(upper_rows.windows(2).all(|pair| pair[0] < pair[1]));
        let first = upper_rows.partition_point(|&row| (row as usize) < rows.start);
        let end = upper_rows.partition_point(|&row| (row as usize) < rows.end);
        for (node, &row) in upper_rows.iter().enumerate().take(end).skip(first) {
            upper.copy_codes(node as u32, lower, row);
        }
    }

    /// Makes room for rows `0..rows` in both layers (vectors zero), sampling the new ones into
    /// the upper layer.
    fn grow_graph(&mut self, rows: usize) -> Result<(), HnswError> {
        if rows > ROWS_MAX {
            return Err(HnswError::Input(format!(
                "a vector index holds at most {ROWS_MAX} rows, got {rows}"
            )));
        }
        for row in self.rows as u32..rows as u32 {
            let in_upper = self.upper_rows.is_empty() || sampled(self.params, row);
            if in_upper {
                self.upper_node.push(self.upper_rows.len() as u32);
                self.upper_rows.push(row);
            } else {
                self.upper_node.push(EMPTY);
            }
        }
        self.upper.grow(self.upper_rows.len());
        self.lower.grow(rows);
        self.deleted.resize(rows.div_ceil(64), 0);
        self.rows = rows;
        Ok(())
    }

    /// The index's rows as the graph measures them (their codes, in the lower layer).
    pub(crate) fn space(&self) -> Space<'_> {
        Space::new(self.params.metric, &self.lower)
    }

    /// The upper layer's nodes as the graph measures them (copies of their rows' codes, in the
    /// upper layer's blocks; see `copy_upper_codes`).
    pub(crate) fn upper_space(&self) -> Space<'_> {
        Space::new(self.params.metric, &self.upper)
    }

    /// Marks `row` deleted; false when it already was. Errors when the row is not indexed.
    pub fn delete(&mut self, row: u32) -> Result<bool, HnswError> {
        if row as usize >= self.rows {
            return Err(HnswError::Input(format!(
                "row {row} is not in the index ({} rows)",
                self.rows
            )));
        }
        if self.is_deleted(row) {
            return Ok(false);
        }
        self.deleted[row as usize / 64] |= 1u64 << (row % 64);
        self.deleted_rows += 1;
        Ok(true)
    }

    /// The `k` live rows nearest to `query`, nearest first, searching with beam width `efs`.
    pub fn search(
        &self,
        vectors: &[f32],
        query: &[f32],
        k: usize,
        efs: usize,
        scratch: &mut SearchScratch,
    ) -> Result<Vec<Neighbour>, HnswError> {
        self.search_filtered(vectors, query, k, efs, &AllRows, scratch)
    }

    /// The `k` live rows nearest to `query` that pass `filter`, nearest first. Returns `k`
    /// rows whenever `k` live rows pass. It scans instead of searching the graph when `efs`
    /// covers every live row, and when the filter's rule says so (see `filter`).
    pub fn search_filtered(
        &self,
        vectors: &[f32],
        query: &[f32],
        k: usize,
        efs: usize,
        filter: &dyn RowFilter,
        scratch: &mut SearchScratch,
    ) -> Result<Vec<Neighbour>, HnswError> {
        validate_beam("k", k)?;
        validate_beam("efs", efs)?;
        self.check_block(vectors, self.rows)?;
        if query.len() != self.dim {
            return Err(HnswError::Input(format!(
                "the query vector has {} values; the index holds vectors of {}",
                query.len(),
                self.dim
            )));
        }
        if self.rows == 0 {
            return Ok(Vec::new());
        }
        let accept = |row: u32| !self.is_deleted(row) && filter.passes(row);
        // A beam as wide as the index would visit every row anyway: scan, which is exact even
        // where the graph leaves rows unreachable (many copies of one vector, dot product).
        let ml = self.params.ml;
        let selective = filter
            .passing_rows()
            .is_some_and(|passing| scan_is_cheaper(passing, self.rows, efs, ml));
        if efs >= self.live_rows() || selective {
            return Ok(self.scan(vectors, query, k, accept));
        }
        let space = self.space();
        let mut prepared = std::mem::take(&mut scratch.query);
        space.prepare(query, &mut prepared);
        self.upper_entries(&prepared, UPPER_SEARCH_EF, scratch);
        let entries = std::mem::take(&mut scratch.entries);
        let mut found = std::mem::take(&mut scratch.found);
        let ef = efs.max(k);
        let distances = |rows: &[u32], out: &mut [f32]| space.query_distances(&prepared, rows, out);
        let prefetch = |row| space.prefetch(row);
        scratch.counts.lower += if self.deleted_rows == 0 && filter.passes_all() {
            search_layer_beam(
                &self.lower,
                &entries,
                ef,
                distances,
                prefetch,
                scratch,
                &mut found,
            )
        } else {
            search_layer(
                &self.lower,
                &entries,
                ef,
                distances,
                accept,
                prefetch,
                scratch,
                &mut found,
            )
        };
        let ranked = found.len().min(RANKED_ROWS_PER_RESULT * k);
        self.rank_exactly(vectors, query, &mut found[..ranked]);
        found.truncate(k);
        let result = if found.len() < k {
            self.scan(vectors, query, k, accept)
        } else {
            found.clone()
        };
        scratch.query = prepared;
        scratch.entries = entries;
        scratch.found = found;
        Ok(result)
    }

    /// Gives rows of the beam their exact distances to `query` (from the caller's FLOAT rows)
    /// and sorts them by it, nearest first: the graph measured them on codes.
    fn rank_exactly(&self, vectors: &[f32], query: &[f32], found: &mut [Neighbour]) {
        let row = |hit: &Neighbour| row_vector(vectors, self.dim, hit.row);
        for hit in found.iter().take(RANK_PREFETCH_AHEAD) {
            crate::prefetch::lines(row(hit));
        }
        for at in 0..found.len() {
            if let Some(later) = found.get(at + RANK_PREFETCH_AHEAD) {
                crate::prefetch::lines(row(later));
            }
            found[at].distance = distance(self.params.metric, query, row(&found[at]));
        }
        found.sort_unstable();
    }

    fn scan(
        &self,
        vectors: &[f32],
        query: &[f32],
        k: usize,
        accept: impl Fn(u32) -> bool,
    ) -> Vec<Neighbour> {
        let rows = 0..self.rows as u32;
        exact_top_k(
            vectors,
            self.dim,
            rows,
            query,
            k,
            self.params.metric,
            accept,
        )
    }

    /// Walks the upper layer from the entry with beam `ef`; leaves the rows of the nodes found
    /// (nearest first) in `scratch.entries` and the nodes in `scratch.found`.
    pub(crate) fn upper_entries(&self, prepared: &Query, ef: usize, scratch: &mut SearchScratch) {
        let space = self.upper_space();
        let mut found = std::mem::take(&mut scratch.found);
        scratch.counts.upper += search_layer_beam(
            &self.upper,
            &[0],
            ef,
            |nodes: &[u32], out: &mut [f32]| space.query_distances(prepared, nodes, out),
            |node| space.prefetch(node),
            scratch,
            &mut found,
        );
        let upper_rows = &self.upper_rows;
        scratch.entries.clear();
        scratch
            .entries
            .extend(found.iter().map(|hit| upper_rows[hit.row as usize]));
        scratch.found = found;
    }

    /// [`upper_entries`](Self::upper_entries) for upper node `node`, which is being linked,
    /// by an exact scan of the linked upper nodes before it (nodes are in row order; the entry
    /// and every node with a list are linked): its `ef` nearest, nearest first.
    pub(crate) fn upper_entries_exact(
        &self,
        prepared: &Query,
        ef: usize,
        node: u32,
        scratch: &mut SearchScratch,
    ) {
        let space = self.upper_space();
        let linked = &mut scratch.entries;
        linked.clear();
        linked.extend((0..node).filter(|&other| other == 0 || !self.upper.slots(other).is_empty()));
        let found = &mut scratch.found;
        found.clear();
        let mut distances = [0.0f32; 4];
        for group in linked.chunks(4) {
            let distances = &mut distances[..group.len()];
            space.query_distances(prepared, group, distances);
            found.extend(
                group
                    .iter()
                    .zip(distances.iter())
                    .map(|(&row, &distance)| Neighbour { row, distance }),
            );
        }
        if found.len() > ef {
            found.select_nth_unstable(ef - 1);
            found.truncate(ef);
        }
        found.sort_unstable();
        let upper_rows = &self.upper_rows;
        linked.clear();
        linked.extend(found.iter().map(|hit| upper_rows[hit.row as usize]));
    }
}

/// Whether an index with `params` keeps inverse norms (cosine).
pub(crate) fn keeps_norms(params: HnswParams) -> bool {
    params.metric == crate::distance::Metric::Cosine
}

/// Whether `row` is sampled into the upper layer: a hash of (seed, row) under `pu`, so the
/// sample does not depend on the build's thread interleaving.
fn sampled(params: HnswParams, row: u32) -> bool {
    if params.pu >= 1.0 {
        return true;
    }
    let threshold = (params.pu * (u64::MAX as f64)) as u64;
    split_mix(params.seed ^ u64::from(row).wrapping_mul(0x9e37_79b9_7f4a_7c15)) < threshold
}

fn split_mix(mut value: u64) -> u64 {
    value = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact upper scan gives, for an upper row, the `ef` nearest of the upper nodes
    /// before it by the graph's distances, nearest first, and their rows as entries.
    #[test]
    fn the_exact_upper_scan_finds_the_nearest_earlier_upper_nodes() {
        let dim = 16;
        let (vectors, _) = crate::sample::clustered(600, 0, dim, 7);
        let params = HnswParams {
            pu: 0.3,
            ..HnswParams::default()
        };
        let index = HnswIndex::build(&vectors, dim, params, 2).unwrap();
        let space = index.upper_space();
        let mut scratch = SearchScratch::new();
        let mut query = Query::default();
        let mut checked = 0;
        for (node, &row) in index.upper_rows.iter().enumerate().skip(1) {
            index.space().prepare_row(row, &mut query);
            let ef = 5;
            index.upper_entries_exact(&query, ef, node as u32, &mut scratch);
            let mut expected: Vec<Neighbour> = (0..node as u32)
                .map(|other| {
                    let mut distance = [0.0f32];
                    space.query_distances(&query, &[other], &mut distance);
                    Neighbour {
                        row: other,
                        distance: distance[0],
                    }
                })
                .collect();
            expected.sort_unstable();
            expected.truncate(ef);
            assert_eq!(scratch.found, expected);
            let rows: Vec<u32> = expected
                .iter()
                .map(|hit| index.upper_rows[hit.row as usize])
                .collect();
            assert_eq!(scratch.entries, rows);
            checked += 1;
        }
        assert!(checked > 100, "the sample has upper rows: {checked}");
    }
}
