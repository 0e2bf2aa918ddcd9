//! The built vector indexes of one database, in memory. The catalog holds an index's definition
//! ([`VectorIndexSchema`]); the HNSW graph is built from the indexed column the first time a
//! query needs it and kept for that version of the node table. A table version is one
//! `Arc<NodeTable>`: any committed change to the table (insert, delete, update, COPY, a
//! checkpoint folding its delta) makes a new one, and the next query rebuilds the graph
//! (O(rows · efc · log rows) distance computations, on the query's threads). The cache holds the
//! table version weakly, so it never keeps an old version alive; entries of versions no
//! snapshot holds any more are dropped on the next lookup.

use std::sync::{Arc, Mutex, Weak};

use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_storage::{NodeTable, VectorIndexSchema};
use warren_vector::distance::Metric;
use warren_vector::hnsw::{HnswIndex, HnswParams};

/// An HNSW graph over the live, non-NULL vectors of one table version.
pub struct BuiltIndex {
    pub hnsw: HnswIndex,
    /// `rows · dimension` values: index row `i` is the vector of table offset `offsets[i]`
    /// (`DOUBLE[n]` values converted to `f32`).
    pub vectors: Vec<f32>,
    pub offsets: Vec<u64>,
}

impl std::fmt::Debug for BuiltIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltIndex")
            .field("rows", &self.offsets.len())
            .field("dimension", &self.hnsw.dim())
            .finish()
    }
}

#[derive(Debug)]
struct CachedIndex {
    schema: VectorIndexSchema,
    table: Weak<NodeTable>,
    built: Arc<BuiltIndex>,
}

/// The built graphs, keyed by index definition and table version.
#[derive(Debug, Default)]
pub struct VectorIndexCache {
    entries: Mutex<Vec<CachedIndex>>,
}

/// The HNSW parameters of a catalog definition.
pub fn params_of(schema: &VectorIndexSchema) -> Result<HnswParams> {
    let metric = Metric::parse(&schema.metric)
        .ok_or_else(|| Error::internal(format!("unknown metric {}", schema.metric)))?;
    Ok(HnswParams {
        metric,
        mu: schema.mu as usize,
        ml: schema.ml as usize,
        pu: schema.pu,
        efc: schema.efc as usize,
        ..HnswParams::default()
    })
}

impl VectorIndexCache {
    /// The graph of `schema` over `table` (property column `column` of `dimension` values),
    /// built on `threads` threads when this table version has none yet.
    pub fn get_or_build(
        &self,
        schema: &VectorIndexSchema,
        table: &Arc<NodeTable>,
        column: usize,
        dimension: usize,
        threads: usize,
    ) -> Result<Arc<BuiltIndex>> {
        if let Some(built) = self.lookup(schema, table) {
            return Ok(built);
        }
        // Built without the lock: other indexes stay usable meanwhile. Two queries may both
        // build the same graph; the later insert replaces the earlier, both are correct.
        let built = Arc::new(build(schema, table, column, dimension, threads)?);
        let mut entries = self.entries.lock().expect("vector index cache lock");
        entries.retain(|e| {
            !(e.schema.table == schema.table && e.schema.name.eq_ignore_ascii_case(&schema.name))
        });
        entries.push(CachedIndex {
            schema: schema.clone(),
            table: Arc::downgrade(table),
            built: built.clone(),
        });
        Ok(built)
    }

    fn lookup(
        &self,
        schema: &VectorIndexSchema,
        table: &Arc<NodeTable>,
    ) -> Option<Arc<BuiltIndex>> {
        let mut entries = self.entries.lock().expect("vector index cache lock");
        entries.retain(|e| e.table.strong_count() > 0);
        entries
            .iter()
            .find(|e| e.schema == *schema && std::ptr::eq(e.table.as_ptr(), Arc::as_ptr(table)))
            .map(|e| e.built.clone())
    }

    /// How many graphs are cached (for tests).
    pub fn len(&self) -> usize {
        self.entries.lock().expect("vector index cache lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Copies the live, non-NULL vectors of the column into one block and builds the graph.
fn build(
    schema: &VectorIndexSchema,
    table: &NodeTable,
    column: usize,
    dimension: usize,
    threads: usize,
) -> Result<BuiltIndex> {
    assert!(dimension > 0, "a vector column has a positive length");
    let stored = table.column(column);
    let mut vectors = Vec::new();
    let mut offsets = Vec::new();
    let block = (!table.has_delta()).then(|| stored.vector_f32()).flatten();
    let wide = (!table.has_delta()).then(|| stored.vector_f64()).flatten();
    for offset in 0..table.num_rows() {
        if table.is_deleted(offset) {
            continue;
        }
        let row = offset as usize;
        match (block, wide) {
            (Some((values, _)), _) if !stored.is_null(row) => {
                vectors.extend_from_slice(&values[row * dimension..(row + 1) * dimension]);
            }
            (_, Some((values, _))) if !stored.is_null(row) => vectors.extend(
                values[row * dimension..(row + 1) * dimension]
                    .iter()
                    .map(|&x| x as f32),
            ),
            (Some(_), _) | (_, Some(_)) => continue,
            (None, None) => match table.value(offset, column) {
                Value::Null => continue,
                value => push_value(&mut vectors, &value, dimension)?,
            },
        }
        offsets.push(offset);
    }
    let params = params_of(schema)?;
    let hnsw = if offsets.is_empty() {
        HnswIndex::empty(dimension, params)
    } else {
        HnswIndex::build(&vectors, dimension, params, threads)
    }
    .map_err(|e| Error::runtime(format!("vector index {}: {e}", schema.name)))?;
    Ok(BuiltIndex {
        hnsw,
        vectors,
        offsets,
    })
}

/// Appends one `FLOAT[n]`/`DOUBLE[n]` value (NULL elements as 0, as the column stores them).
fn push_value(vectors: &mut Vec<f32>, value: &Value, dimension: usize) -> Result<()> {
    let elements = crate::eval::array_functions::elements(value, dimension)?;
    vectors.extend(elements.into_iter().map(|x| x as f32));
    Ok(())
}
