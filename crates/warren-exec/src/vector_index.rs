//! The built vector indexes of one database, in memory. The catalog holds an index's definition
//! ([`VectorIndexSchema`]); the HNSW graph is built from the indexed column the first time a
//! query needs it and kept for that version of the node table. A table version is one
//! `Arc<NodeTable>`: a committed change to the table (insert, delete, update, COPY, a
//! checkpoint folding its delta) makes a new one. The next query then brings the graph up to
//! date from the version it was built for: node offsets are stable across versions (a delete
//! leaves a tombstone, an insert appends, a checkpoint keeps offsets), so it compares each
//! indexed row's vector with the table's (one pass over the column, O(rows · n)), tombstones the
//! rows deleted, set to NULL or changed, and inserts the changed and new rows one by one. It
//! builds anew, on the query's threads, when there is no earlier graph (after open), when the
//! tombstones would pass `REBUILD_DELETED_FRACTION`, or when the rows to insert times the
//! threads pass the rows in the graph (a parallel build is then cheaper). The cache holds the
//! table version weakly, so it never keeps an old version alive.
//!
//! After a database is opened, the first query of an index reads its graph from the file the
//! manifest names ([`PersistedGraphs`], format in `crate::vector_index_file`) instead of
//! building it: the file's checksum and structure are checked then, and the graph is brought
//! up to date with the table like any older graph, so a file from another table version costs
//! an update, never a wrong answer. A file that is missing, torn or corrupt is reported (on
//! standard error and in [`VectorIndexStats::discarded`]) and the graph is built instead.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use warren_common::value::Value;
use warren_common::{Error, Result, TableId};
use warren_storage::io::{self, FileSystem};
use warren_storage::{Catalog, NodeTable, VectorIndexSchema};
use warren_vector::distance::Metric;
use warren_vector::hnsw::{HnswIndex, HnswParams};

/// `row_of` entry of an offset with no live row in the graph.
const NO_ROW: u32 = u32::MAX;

/// An HNSW graph over the live, non-NULL vectors of one table version.
pub struct BuiltIndex {
    pub hnsw: HnswIndex,
    /// `rows · dimension` values: index row `i` is the vector of table offset `offsets[i]`
    /// (`DOUBLE[n]` values converted to `f32`).
    pub vectors: Vec<f32>,
    pub offsets: Vec<u64>,
    /// Table offset -> its live index row, [`NO_ROW`] when none.
    row_of: Vec<u32>,
}

impl BuiltIndex {
    /// A graph read back from its parts: `offsets[row]` is the table offset of index row `row`,
    /// `table_offsets` the table's offsets when it was written. Checks that every offset is in
    /// range and that no offset has two live rows.
    pub fn from_parts(
        hnsw: HnswIndex,
        vectors: Vec<f32>,
        offsets: Vec<u64>,
        table_offsets: u64,
    ) -> std::result::Result<Self, String> {
        if offsets.len() != hnsw.rows() || vectors.len() != offsets.len() * hnsw.dim() {
            return Err("offsets, vectors and graph rows differ in number".into());
        }
        let table_offsets = usize::try_from(table_offsets)
            .ok()
            .filter(|&n| n < u32::MAX as usize)
            .ok_or("too many table offsets")?;
        let mut row_of = vec![NO_ROW; table_offsets];
        for (row, &offset) in offsets.iter().enumerate() {
            let slot = usize::try_from(offset)
                .ok()
                .and_then(|o| row_of.get_mut(o))
                .ok_or_else(|| format!("offset {offset} is beyond the table's {table_offsets}"))?;
            if hnsw.is_deleted(row as u32) {
                continue;
            }
            if *slot != NO_ROW {
                return Err(format!("offset {offset} has two live rows"));
            }
            *slot = row as u32;
        }
        Ok(Self {
            hnsw,
            vectors,
            offsets,
            row_of,
        })
    }

    /// The table's offsets (deleted ones included) when the graph was last brought up to date.
    pub fn table_offsets(&self) -> usize {
        self.row_of.len()
    }

    /// The live index row of table offset `offset`.
    pub fn row_of_offset(&self, offset: u64) -> Option<u32> {
        let row = *self.row_of.get(usize::try_from(offset).ok()?)?;
        (row != NO_ROW).then_some(row)
    }
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
    persisted: Mutex<Option<PersistedGraphs>>,
    stats: Mutex<VectorIndexStats>,
}

/// The graph files a database's manifest names, read at an index's first use.
#[derive(Debug, Clone)]
pub struct PersistedGraphs {
    pub fs: Arc<dyn FileSystem>,
    /// `(table, index name, path)` of each file.
    pub files: Vec<(TableId, String, PathBuf)>,
}

impl PersistedGraphs {
    fn path_of(&self, schema: &VectorIndexSchema) -> Option<&PathBuf> {
        self.files
            .iter()
            .find(|(table, name, _)| {
                *table == schema.table && name.eq_ignore_ascii_case(&schema.name)
            })
            .map(|(_, _, path)| path)
    }

    fn read(&self, path: &std::path::Path) -> Result<Vec<u8>> {
        let file = self.fs.open(path, io::OpenMode::Read)?;
        io::read_all(file.as_ref())
    }
}

/// What the cache did since the database opened: graphs built from the column, read from
/// their file, brought up to date from an older version, and files found unusable.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct VectorIndexStats {
    pub built: u64,
    pub loaded: u64,
    pub updated: u64,
    /// One line per graph file that could not be used (the graph was built instead).
    pub discarded: Vec<String>,
}

/// The property column of index `schema` and its vector length.
pub fn column_of(catalog: &Catalog, schema: &VectorIndexSchema) -> Result<(usize, usize)> {
    let table = catalog
        .node_tables()
        .iter()
        .find(|t| t.id == schema.table)
        .ok_or_else(|| Error::internal(format!("index {} has no table", schema.name)))?;
    let column = table
        .property(&schema.property)
        .ok_or_else(|| Error::internal(format!("index {} has no property", schema.name)))?;
    let (_, dimension) = warren_storage::column::vector_layout(&table.properties[column].ty)
        .ok_or_else(|| Error::internal(format!("index {} is not on a vector", schema.name)))?;
    Ok((column, dimension))
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
    /// brought up to date or built on `threads` threads when this table version has none yet.
    pub fn get_or_build(
        &self,
        schema: &VectorIndexSchema,
        table: &Arc<NodeTable>,
        column: usize,
        dimension: usize,
        threads: usize,
    ) -> Result<Arc<BuiltIndex>> {
        let same_index = |e: &CachedIndex| {
            e.schema.table == schema.table && e.schema.name.eq_ignore_ascii_case(&schema.name)
        };
        let previous = {
            let mut entries = self.entries.lock().expect("vector index cache lock");
            match entries.iter().position(same_index) {
                Some(at) if entries[at].schema != *schema => {
                    entries.remove(at);
                    None
                }
                Some(at) if std::ptr::eq(entries[at].table.as_ptr(), Arc::as_ptr(table)) => {
                    return Ok(entries[at].built.clone());
                }
                Some(at) => Some(entries.remove(at).built),
                None => None,
            }
        };
        // Updated or built without the lock: other indexes stay usable meanwhile. Two queries
        // may both do it; the later insert replaces the earlier, both are correct.
        let reader = ColumnReader::new(table, column, dimension)?;
        let previous = match previous.and_then(owned) {
            Some(graph) => Some(graph),
            None => self.read_persisted(schema, dimension),
        };
        let built = match previous {
            Some(graph) => {
                self.stats().updated += 1;
                update(graph, &reader, threads, schema)?
            }
            None => {
                self.stats().built += 1;
                build(schema, &reader, threads)?
            }
        };
        let built = Arc::new(built);
        let mut entries = self.entries.lock().expect("vector index cache lock");
        entries.retain(|e| !same_index(e));
        entries.push(CachedIndex {
            schema: schema.clone(),
            table: Arc::downgrade(table),
            built: built.clone(),
        });
        Ok(built)
    }

    /// The graph of `schema` brought up to date with `table`, when one is held in memory or
    /// persisted; `None` (nothing is built) otherwise. A checkpoint writes what this returns.
    pub fn current(
        &self,
        schema: &VectorIndexSchema,
        table: &Arc<NodeTable>,
        column: usize,
        dimension: usize,
        threads: usize,
    ) -> Result<Option<Arc<BuiltIndex>>> {
        let held = {
            let entries = self.entries.lock().expect("vector index cache lock");
            entries.iter().any(|e| e.schema == *schema)
        };
        let persisted = self
            .persisted
            .lock()
            .expect("persisted graphs")
            .as_ref()
            .is_some_and(|p| p.path_of(schema).is_some());
        if !held && !persisted {
            return Ok(None);
        }
        self.get_or_build(schema, table, column, dimension, threads)
            .map(Some)
    }

    /// The graph files of the database's manifest (after open, a reader's reload, a checkpoint).
    pub fn set_persisted(&self, persisted: PersistedGraphs) {
        *self.persisted.lock().expect("persisted graphs") = Some(persisted);
    }

    /// What the cache did since the database opened.
    pub fn stats_snapshot(&self) -> VectorIndexStats {
        self.stats().clone()
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, VectorIndexStats> {
        self.stats.lock().expect("vector index stats")
    }

    /// The graph of `schema` from its file, checked; `None` when there is no file or it is
    /// unusable (reported: the caller builds the graph instead).
    fn read_persisted(&self, schema: &VectorIndexSchema, dimension: usize) -> Option<BuiltIndex> {
        let persisted = self.persisted.lock().expect("persisted graphs").clone()?;
        let path = persisted.path_of(schema)?;
        let graph = persisted
            .read(path)
            .and_then(|bytes| crate::vector_index_file::decode(&bytes, schema, dimension));
        match graph {
            Ok(graph) => {
                self.stats().loaded += 1;
                Some(graph)
            }
            Err(error) => {
                let line = format!(
                    "vector index {}: graph file {} is unusable ({error}); rebuilding it",
                    schema.name,
                    path.display()
                );
                eprintln!("warren: {line}");
                self.stats().discarded.push(line);
                None
            }
        }
    }

    /// Drops the graphs of index `name` of `table` (every index of it when `None`): after
    /// `DROP_VECTOR_INDEX` or `DROP TABLE`, so their memory is not kept.
    pub fn forget(&self, table: TableId, name: Option<&str>) {
        let mut entries = self.entries.lock().expect("vector index cache lock");
        entries.retain(|e| {
            e.schema.table != table || name.is_some_and(|n| !e.schema.name.eq_ignore_ascii_case(n))
        });
    }

    /// How many graphs are cached.
    pub fn len(&self) -> usize {
        self.entries.lock().expect("vector index cache lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The graph itself when no query holds it any more, else a copy (through its serialized
/// form, O(graph)); `None` if the copy fails, which only a bug would cause.
fn owned(built: Arc<BuiltIndex>) -> Option<BuiltIndex> {
    match Arc::try_unwrap(built) {
        Ok(built) => Some(built),
        Err(shared) => Some(BuiltIndex {
            hnsw: HnswIndex::from_bytes(&shared.hnsw.to_bytes(), &shared.vectors).ok()?,
            vectors: shared.vectors.clone(),
            offsets: shared.offsets.clone(),
            row_of: shared.row_of.clone(),
        }),
    }
}

/// Reads one table version's vectors: in place from the contiguous column where the row is
/// stored and not updated, from the row's value otherwise (`DOUBLE[n]` converted to `f32`).
struct ColumnReader<'a> {
    table: &'a NodeTable,
    column: usize,
    dimension: usize,
    narrow: Option<&'a [f32]>,
    wide: Option<&'a [f64]>,
}

impl<'a> ColumnReader<'a> {
    /// The reader of `column`, whose blocks and the deletion bitmap's are verified first (they
    /// are read whole): a damaged one is the query's error.
    fn new(table: &'a NodeTable, column: usize, dimension: usize) -> Result<Self> {
        assert!(dimension > 0, "a vector column has a positive length");
        let stored = table.column(column);
        stored.try_verify()?;
        table.try_verify_deleted()?;
        Ok(Self {
            table,
            column,
            dimension,
            narrow: stored.vector_f32().map(|(values, _)| values),
            wide: stored.vector_f64().map(|(values, _)| values),
        })
    }

    /// Every offset ever used, deleted ones included.
    fn offsets(&self) -> u64 {
        self.table.num_rows()
    }

    /// Appends the vector of live row `offset` to `out`; false (nothing appended) when the row
    /// is deleted or its vector is NULL.
    fn read(&self, offset: u64, out: &mut Vec<f32>) -> Result<bool> {
        if offset >= self.table.num_rows() || self.table.is_deleted(offset) {
            return Ok(false);
        }
        let updates = &self.table.delta().updates;
        let in_place = offset < self.table.num_stored_rows()
            && (updates.is_empty() || !updates.contains_key(&(offset, self.column as u32)));
        let (row, n) = (offset as usize, self.dimension);
        if in_place && (self.narrow.is_some() || self.wide.is_some()) {
            if self.table.column(self.column).is_null(row) {
                return Ok(false);
            }
            match (self.narrow, self.wide) {
                (Some(values), _) => out.extend_from_slice(&values[row * n..(row + 1) * n]),
                (_, Some(values)) => {
                    out.extend(values[row * n..(row + 1) * n].iter().map(|&x| x as f32));
                }
                (None, None) => unreachable!("checked above"),
            }
            return Ok(true);
        }
        match self.table.try_value(offset, self.column)? {
            Value::Null => Ok(false),
            value => {
                let elements = crate::eval::array_functions::elements(&value, n)?;
                out.extend(elements.into_iter().map(|x| x as f32));
                Ok(true)
            }
        }
    }
}

fn hnsw_error(schema: &VectorIndexSchema) -> impl Fn(warren_vector::hnsw::HnswError) -> Error + '_ {
    move |e| Error::runtime(format!("vector index {}: {e}", schema.name))
}

/// Brings `graph`, built for another version of the table, up to date with `reader`'s version;
/// builds anew when that is cheaper (see the module's documentation).
fn update(
    mut graph: BuiltIndex,
    reader: &ColumnReader<'_>,
    threads: usize,
    schema: &VectorIndexSchema,
) -> Result<BuiltIndex> {
    let n = reader.dimension;
    let offsets = reader.offsets();
    let mut current = Vec::with_capacity(n);
    let mut stale = Vec::new();
    for (offset, &row) in graph.row_of.iter().enumerate() {
        if row == NO_ROW {
            continue;
        }
        current.clear();
        let live = reader.read(offset as u64, &mut current)?;
        let held = &graph.vectors[row as usize * n..(row as usize + 1) * n];
        if !live || current.as_slice() != held {
            stale.push((offset, row, live));
        }
    }
    let mut fresh = Vec::new();
    for offset in 0..offsets {
        let indexed = graph
            .row_of
            .get(offset as usize)
            .is_some_and(|&row| row != NO_ROW);
        current.clear();
        if !indexed && reader.read(offset, &mut current)? {
            fresh.push(offset);
        }
    }
    let changed = stale.iter().filter(|&&(_, _, live)| live).count();
    let inserts = fresh.len() + changed;
    let tombstones = graph.hnsw.rows() - graph.hnsw.live_rows() + stale.len();
    let rows_after = graph.hnsw.rows() + inserts;
    let too_many_tombstones =
        tombstones as f64 > warren_vector::hnsw::REBUILD_DELETED_FRACTION * rows_after as f64;
    if too_many_tombstones || inserts * threads.max(1) > graph.hnsw.live_rows() {
        return build(schema, reader, threads);
    }
    for &(offset, row, _) in &stale {
        graph.hnsw.delete(row).map_err(hnsw_error(schema))?;
        graph.row_of[offset] = NO_ROW;
    }
    graph.row_of.resize(offsets as usize, NO_ROW);
    let changed = stale.iter().filter(|&&(_, _, live)| live);
    fresh.extend(changed.map(|&(offset, ..)| offset as u64));
    fresh.sort_unstable();
    for offset in fresh {
        let read = reader.read(offset, &mut graph.vectors)?;
        assert!(read, "a row to insert is live and not NULL");
        let row = u32::try_from(graph.offsets.len()).expect("an index holds fewer than 2^32 rows");
        graph.offsets.push(offset);
        graph.row_of[offset as usize] = row;
        graph
            .hnsw
            .insert(&graph.vectors, row)
            .map_err(hnsw_error(schema))?;
    }
    Ok(graph)
}

/// Copies the live, non-NULL vectors of the column into one block and builds the graph.
fn build(
    schema: &VectorIndexSchema,
    reader: &ColumnReader<'_>,
    threads: usize,
) -> Result<BuiltIndex> {
    let mut vectors = Vec::new();
    let mut offsets = Vec::new();
    let mut row_of = vec![NO_ROW; reader.offsets() as usize];
    for offset in 0..reader.offsets() {
        if reader.read(offset, &mut vectors)? {
            row_of[offset as usize] =
                u32::try_from(offsets.len()).expect("an index holds fewer than 2^32 rows");
            offsets.push(offset);
        }
    }
    let params = params_of(schema)?;
    let hnsw = if offsets.is_empty() {
        HnswIndex::empty(reader.dimension, params)
    } else {
        HnswIndex::build(&vectors, reader.dimension, params, threads)
    }
    .map_err(hnsw_error(schema))?;
    Ok(BuiltIndex {
        hnsw,
        vectors,
        offsets,
        row_of,
    })
}

#[cfg(test)]
mod tests {
    use warren_common::types::LogicalType;
    use warren_storage::{NodeTableSchema, Property};

    use super::*;

    fn schema() -> NodeTableSchema {
        let property = |name: &str, ty: LogicalType| Property {
            name: name.into(),
            ty,
            default: None,
        };
        NodeTableSchema {
            id: 0,
            name: "T".into(),
            properties: vec![
                property("id", LogicalType::Int64),
                property("v", LogicalType::Array(LogicalType::Float.into(), 2)),
            ],
            primary_key: 0,
        }
    }

    fn index() -> VectorIndexSchema {
        VectorIndexSchema {
            table: 0,
            name: "i".into(),
            property: "v".into(),
            metric: "l2".into(),
            mu: 4,
            ml: 8,
            pu: 0.5,
            efc: 16,
        }
    }

    /// `table` with one row per `(x, y)` appended; `None` is a NULL vector.
    fn with_rows(table: &NodeTable, rows: &[Option<(f64, f64)>]) -> Arc<NodeTable> {
        Arc::new(table.with_delta(|delta, _, stored| {
            for point in rows {
                let id = Value::Int64((stored as usize + delta.appended.len()) as i64);
                let vector = match point {
                    Some((x, y)) => {
                        Value::List(vec![Value::Float(*x as f32), Value::Float(*y as f32)].into())
                    }
                    None => Value::Null,
                };
                delta.appended.push_back(Arc::from(vec![id, vector]));
            }
        }))
    }

    fn nearest(built: &BuiltIndex, query: [f32; 2], k: usize) -> Vec<u64> {
        let mut scratch = warren_vector::hnsw::SearchScratch::new();
        let found = built
            .hnsw
            .search(&built.vectors, &query, k, 64, &mut scratch)
            .unwrap();
        found
            .iter()
            .map(|n| built.offsets[n.row as usize])
            .collect()
    }

    #[test]
    fn a_version_reuses_its_graph_and_a_new_one_is_brought_up_to_date() {
        let cache = VectorIndexCache::default();
        let points: Vec<_> = (0..40).map(|i| Some((f64::from(i), 0.0))).collect();
        let first = with_rows(&NodeTable::empty(&schema()), &points);
        let built = cache.get_or_build(&index(), &first, 1, 2, 2).unwrap();
        assert_eq!(nearest(&built, [10.2, 0.0], 2), [10, 11]);
        let again = cache.get_or_build(&index(), &first, 1, 2, 2).unwrap();
        assert!(
            Arc::ptr_eq(&built, &again),
            "the same version reuses its graph"
        );
        // Delete row 10, append a NULL vector and a point near 10 (while a query still holds
        // the old graph, so it is copied): the new graph has neither the deleted row nor the
        // NULL one.
        let second = Arc::new(with_rows(&first, &[None, Some((10.1, 0.0))]).with_delta(
            |delta, _, _| {
                delta.deleted.insert(10);
            },
        ));
        drop(again);
        let updated = cache.get_or_build(&index(), &second, 1, 2, 2).unwrap();
        assert_eq!(nearest(&updated, [10.2, 0.0], 2), [41, 11]);
        assert_eq!(
            updated.hnsw.live_rows(),
            40,
            "39 kept, one appended, no NULL"
        );
        assert_eq!(cache.len(), 1);
        cache.forget(0, Some("other"));
        assert_eq!(cache.len(), 1);
        cache.forget(0, Some("I"));
        assert!(cache.is_empty());
    }
}
