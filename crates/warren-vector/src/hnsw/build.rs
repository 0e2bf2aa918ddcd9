//! Building the graph: inserting a row links it into the lower layer (and the upper layer when
//! sampled), and each new neighbour links back, re-selecting its list when it is full. The
//! bulk build inserts rows on `threads` threads at once; each thread takes chunks of rows from
//! a shared counter and holds at most one node lock at a time (see `layer`).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::index::{HnswIndex, EXACT_UPPER_NODES_PER_EFC, INSERT_UPPER_EF};
use super::layer::{Layer, EMPTY};
use super::measure::{padded_four, Query, Space};
use super::params::{HnswError, HnswParams};
use super::search::{search_layer_beam, Neighbour, SearchScratch};
use super::select::select_neighbours;

/// Rows a build thread takes from the shared counter at once.
const BUILD_CHUNK_ROWS: usize = 64;

/// Buffers one inserting thread reuses.
#[derive(Default)]
struct InsertScratch {
    search: SearchScratch,
    query: Query,
    found: Vec<Neighbour>,
    selected: Vec<Neighbour>,
    list: Vec<u32>,
    pool: Vec<Neighbour>,
    kept: Vec<Neighbour>,
    standing: Vec<u32>,
}

impl HnswIndex {
    /// Builds the index over every row of `vectors` (rows of `dim` values) on `threads` threads.
    pub fn build(
        vectors: &[f32],
        dim: usize,
        params: HnswParams,
        threads: usize,
    ) -> Result<Self, HnswError> {
        let mut index = HnswIndex::empty(dim, params)?;
        index.check_block(vectors, 0)?;
        let rows = vectors.len() / dim;
        index.grow_on(vectors, rows, threads.max(1))?;
        // Row 0 is the entry (upper node 0): it has nothing to link to.
        let next = AtomicUsize::new(1);
        let index_ref = &index;
        std::thread::scope(|scope| {
            for _ in 0..threads.max(1) {
                scope.spawn(|| {
                    let mut scratch = InsertScratch::default();
                    loop {
                        let start = next.fetch_add(BUILD_CHUNK_ROWS, Ordering::Relaxed);
                        if start >= rows {
                            break;
                        }
                        for row in start..(start + BUILD_CHUNK_ROWS).min(rows) {
                            index_ref.link_row(row as u32, &mut scratch);
                        }
                    }
                });
            }
        });
        Ok(index)
    }

    /// Adds row `row`, which must be the next row (`rows()`), copying its vector from the
    /// block. A vector that changed is a `delete` of the old row and an insert of a new one.
    pub fn insert(&mut self, vectors: &[f32], row: u32) -> Result<(), HnswError> {
        if row as usize != self.rows {
            return Err(HnswError::Input(format!(
                "rows are inserted in order: the next row is {}, got {row}",
                self.rows
            )));
        }
        self.grow(vectors, self.rows + 1)?;
        if row != self.upper_rows[0] {
            self.link_row(row, &mut InsertScratch::default());
        }
        Ok(())
    }

    /// Links `row` into the layers it belongs to, measuring from the row's own codes.
    fn link_row(&self, row: u32, scratch: &mut InsertScratch) {
        let upper_node = self.upper_node[row as usize];
        let space = self.space();
        let mut prepared = std::mem::take(&mut scratch.query);
        space.prepare_row(row, &mut prepared);
        let efc = self.params.efc;
        if upper_node == EMPTY {
            self.upper_entries(&prepared, INSERT_UPPER_EF, &mut scratch.search);
        } else if upper_node as usize <= EXACT_UPPER_NODES_PER_EFC * efc {
            self.upper_entries_exact(&prepared, efc, upper_node, &mut scratch.search);
        } else {
            self.upper_entries(&prepared, efc, &mut scratch.search);
        }
        if upper_node != EMPTY {
            scratch.found.clone_from(&scratch.search.found);
            self.connect(&self.upper, upper_node, scratch);
        }
        let entries = std::mem::take(&mut scratch.search.entries);
        let mut found = std::mem::take(&mut scratch.found);
        let ef = self.params.efc;
        search_layer_beam(
            &self.lower,
            &entries,
            ef,
            |others, out| space.query_distances(&prepared, others, out),
            |other| space.prefetch(other),
            &mut scratch.search,
            &mut found,
        );
        scratch.found = found;
        scratch.search.entries = entries;
        scratch.query = prepared;
        self.connect(&self.lower, row, scratch);
    }

    /// Gives `node` its neighbours from `scratch.found` (sorted, distances to `node`) and adds
    /// `node` to each of theirs. Both layers keep their nodes' codes, so the distances between
    /// nodes are measured in `layer` itself.
    fn connect(&self, layer: &Layer, node: u32, scratch: &mut InsertScratch) {
        let space = Space::new(self.params.metric, layer);
        // Four nodes' distances to one: the neighbour selection's unit of work.
        let pairs = |a: u32, others: [u32; 4]| space.between_four(a, others);
        scratch.found.retain(|hit| hit.row != node);
        select_neighbours(
            &scratch.found,
            layer.degree(),
            pairs,
            &mut scratch.standing,
            &mut scratch.selected,
        );
        scratch.list.clear();
        scratch
            .list
            .extend(scratch.selected.iter().map(|hit| hit.row));
        {
            let guard = layer.lock(node);
            layer.set_neighbours(&guard, node, &scratch.list);
        }
        for index in 0..scratch.selected.len() {
            let neighbour = scratch.selected[index].row;
            self.link_back(layer, neighbour, node, pairs, scratch);
        }
    }

    /// Adds `node` to `neighbour`'s list; when the list is full, re-selects it from its members
    /// and `node` by the same heuristic.
    fn link_back(
        &self,
        layer: &Layer,
        neighbour: u32,
        node: u32,
        pairs: impl Fn(u32, [u32; 4]) -> [f32; 4],
        scratch: &mut InsertScratch,
    ) {
        let guard = layer.lock(neighbour);
        layer.copy_neighbours(neighbour, &mut scratch.list);
        if scratch.list.contains(&node) {
            return;
        }
        if scratch.list.len() < layer.degree() {
            scratch.list.push(node);
            layer.set_neighbours(&guard, neighbour, &scratch.list);
            return;
        }
        // The members and `node`, measured from `neighbour` four at a time.
        scratch.list.push(node);
        scratch.pool.clear();
        for group in scratch.list.chunks(4) {
            let distances = pairs(neighbour, padded_four(group));
            scratch.pool.extend(
                group
                    .iter()
                    .zip(distances)
                    .map(|(&row, distance)| Neighbour { row, distance }),
            );
        }
        scratch.pool.sort_unstable();
        select_neighbours(
            &scratch.pool,
            layer.degree(),
            &pairs,
            &mut scratch.standing,
            &mut scratch.kept,
        );
        scratch.list.clear();
        scratch.list.extend(scratch.kept.iter().map(|hit| hit.row));
        layer.set_neighbours(&guard, neighbour, &scratch.list);
    }
}
