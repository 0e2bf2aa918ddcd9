//! One record of the write-ahead log: the payload of one transaction's frame. A record holds
//! either row changes ([`ChangeSet`]) or a catalog change: a transaction with DDL, `COPY` or
//! `ALTER`, carrying the catalog after it, the tables it replaced wholesale (empty ones, or
//! segment files written and made durable before the record was logged) and the row changes
//! it made to the other tables. Records are replayed in log order, each decoded against the
//! catalog as of its place in the log (a catalog change changes it for the records after it).
//!
//! Encoding (little-endian): a kind byte, then
//! * 1, rows (version 1): the encoding of [`crate::changes`], whose version byte this is.
//! * 2, catalog change (version 1): u64 generation of the snapshot the transaction produced;
//!   u32 length and the catalog as JSON (as in the manifest); u32 table count, then per
//!   replaced table its u32 id and a source byte, 0 (an empty table) or 1 (a segment file:
//!   u64 rows, i64 next serial, u32 length and the file's path relative to the database
//!   directory); then the row changes as a kind-1 record, encoded with the new catalog.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};

use crate::catalog::Catalog;
use crate::changes::{apply_changes, ChangeSet};
use crate::database_dir::DatabaseDir;
use crate::node_table::NodeTable;
use crate::rel_table::RelTable;
use crate::snapshot::{Snapshot, TableData};
use crate::value_codec::Decoder;

/// The kind byte of a record of row changes (the version byte of [`ChangeSet`]'s encoding).
const KIND_ROWS: u8 = 1;
const KIND_CATALOG: u8 = 2;
const SOURCE_EMPTY: u8 = 0;
const SOURCE_FILE: u8 = 1;
/// Bounds on lengths read from the log (a larger one is corruption, not an allocation).
const CATALOG_BYTES_MAX: usize = 1 << 26;
const PATH_BYTES_MAX: usize = 4096;
const TABLES_MAX: usize = 1 << 20;

/// The payload of one logged transaction.
#[derive(Clone, Debug, PartialEq)]
pub enum LogRecord {
    Rows(ChangeSet),
    Catalog(CatalogChange),
}

/// A transaction that changed the catalog or replaced whole tables.
#[derive(Clone, Debug, PartialEq)]
pub struct CatalogChange {
    /// The generation of the snapshot the transaction produced: replay continues from at
    /// least this one, so that segment files named later never take a logged file's name.
    pub generation: u64,
    pub catalog: Catalog,
    /// The tables replaced wholesale, in id order.
    pub tables: Vec<ReplacedTable>,
    /// Row changes to the tables the transaction did not replace.
    pub rows: ChangeSet,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedTable {
    pub id: TableId,
    pub source: TableSource,
}

/// Where a replaced table's data is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableSource {
    /// No rows (a table just created, or altered while empty).
    Empty,
    /// A segment file, durable before the record was logged, that no manifest names yet.
    File {
        path: String,
        rows: u64,
        next_serial: i64,
    },
}

impl LogRecord {
    pub fn encode(&self, catalog: &Catalog) -> Result<Vec<u8>> {
        match self {
            LogRecord::Rows(rows) => rows.encode(catalog),
            LogRecord::Catalog(change) => change.encode(),
        }
    }

    /// Decodes a record logged when the catalog was `catalog`.
    pub fn decode(bytes: &[u8], catalog: &Catalog) -> Result<Self> {
        match bytes.first() {
            Some(&KIND_CATALOG) => Ok(LogRecord::Catalog(CatalogChange::decode(&bytes[1..])?)),
            Some(&KIND_ROWS) => Ok(LogRecord::Rows(ChangeSet::decode(bytes, catalog)?)),
            Some(kind) => Err(Error::Corrupt(format!("log record: unknown kind {kind}"))),
            None => Err(Error::Corrupt("log record: empty".into())),
        }
    }

    /// The record applied to `snapshot`; `dir` maps the segment files a catalog change names.
    /// Verifies every stored block of the tables whose rows the record changes (see
    /// [`ChangeSet::verify_tables`]).
    pub fn verify_tables(&self, snapshot: &Snapshot) -> Result<()> {
        match self {
            LogRecord::Rows(rows) => rows.verify_tables(snapshot.tables()),
            LogRecord::Catalog(change) => change.rows.verify_tables(snapshot.tables()),
        }
    }

    pub fn apply(&self, snapshot: &Snapshot, dir: &DatabaseDir) -> Result<Snapshot> {
        match self {
            LogRecord::Rows(rows) => rows.apply(snapshot),
            LogRecord::Catalog(change) => change.apply(snapshot, dir),
        }
    }
}

impl CatalogChange {
    /// The record of a transaction that produced `snapshot` (whose replaced tables hold no
    /// delta), replacing the tables in `replaced` (the non-empty ones written to `files`) and
    /// making the row changes `rows`: those to replaced or dropped tables are left out, as the
    /// replaced tables' data holds them.
    pub fn new(
        snapshot: &Snapshot,
        replaced: &BTreeSet<TableId>,
        files: &BTreeMap<TableId, String>,
        rows: &ChangeSet,
    ) -> Self {
        let tables = replaced
            .iter()
            .filter_map(|&id| Some((id, snapshot.tables().get(&id)?)))
            .map(|(id, data)| {
                assert!(!data.has_delta(), "a replaced table is logged folded");
                let source = match files.get(&id) {
                    None => TableSource::Empty,
                    Some(path) => {
                        let (rows, next_serial) = stored_rows(data);
                        TableSource::File {
                            path: path.clone(),
                            rows,
                            next_serial,
                        }
                    }
                };
                ReplacedTable { id, source }
            })
            .collect();
        let kept = |id: TableId| snapshot.tables().contains_key(&id) && !replaced.contains(&id);
        let rows = ChangeSet {
            nodes: rows
                .nodes
                .iter()
                .filter(|c| kept(c.table))
                .cloned()
                .collect(),
            rels: rows.rels.iter().filter(|c| kept(c.pair)).cloned().collect(),
        };
        Self {
            generation: snapshot.generation(),
            catalog: snapshot.catalog().clone(),
            tables,
            rows,
        }
    }

    fn encode(&self) -> Result<Vec<u8>> {
        let mut out = vec![KIND_CATALOG];
        out.extend_from_slice(&self.generation.to_le_bytes());
        let catalog =
            serde_json::to_vec(&self.catalog).map_err(|e| Error::internal(e.to_string()))?;
        put_bytes(&mut out, &catalog);
        put_u32(&mut out, self.tables.len());
        for table in &self.tables {
            out.extend_from_slice(&table.id.to_le_bytes());
            match &table.source {
                TableSource::Empty => out.push(SOURCE_EMPTY),
                TableSource::File {
                    path,
                    rows,
                    next_serial,
                } => {
                    out.push(SOURCE_FILE);
                    out.extend_from_slice(&rows.to_le_bytes());
                    out.extend_from_slice(&next_serial.to_le_bytes());
                    put_bytes(&mut out, path.as_bytes());
                }
            }
        }
        out.extend_from_slice(&self.rows.encode(&self.catalog)?);
        Ok(out)
    }

    fn decode(bytes: &[u8]) -> Result<Self> {
        let corrupt = |e: String| Error::Corrupt(format!("log record: {e}"));
        let mut decoder = Decoder::new(bytes);
        let generation = decoder.read_u64().map_err(corrupt)?;
        let catalog_bytes = read_bytes(&mut decoder, CATALOG_BYTES_MAX).map_err(corrupt)?;
        let catalog: Catalog =
            serde_json::from_slice(catalog_bytes).map_err(|e| corrupt(format!("catalog: {e}")))?;
        let count = decoder.read_u32().map_err(corrupt)? as usize;
        if count > TABLES_MAX {
            return Err(corrupt(format!("table count {count} exceeds the limit")));
        }
        let mut tables = Vec::with_capacity(count);
        for _ in 0..count {
            tables.push(decode_replaced(&mut decoder).map_err(corrupt)?);
        }
        let rows = ChangeSet::decode(decoder.rest(), &catalog)?;
        Ok(Self {
            generation,
            catalog,
            tables,
            rows,
        })
    }

    /// `snapshot` with this change: the new catalog, the tables it names (dropped ones gone,
    /// replaced ones empty or mapped from their files), then the row changes; its generation
    /// at least the logged one.
    pub fn apply(&self, snapshot: &Snapshot, dir: &DatabaseDir) -> Result<Snapshot> {
        let ids = catalog_table_ids(&self.catalog);
        let mut tables: BTreeMap<TableId, TableData> = snapshot
            .tables()
            .iter()
            .filter(|(id, _)| ids.contains(id))
            .map(|(&id, data)| (id, data.clone()))
            .collect();
        let (nodes, rels): (Vec<&ReplacedTable>, Vec<&ReplacedTable>) = self
            .tables
            .iter()
            .partition(|t| self.catalog.node_table_by_id(t.id).is_some());
        for table in nodes {
            let data = self.node_table(table, dir)?;
            tables.insert(table.id, TableData::Node(Arc::new(data)));
        }
        for table in rels {
            let data = self.rel_table(table, &tables, dir)?;
            tables.insert(table.id, TableData::Rel(Arc::new(data)));
        }
        check_complete(&self.catalog, &tables)?;
        apply_changes(&self.catalog, &mut tables, &self.rows)?;
        let generation = self.generation.max(snapshot.generation() + 1);
        Ok(Snapshot::new(self.catalog.clone(), tables, generation))
    }

    fn node_table(&self, table: &ReplacedTable, dir: &DatabaseDir) -> Result<NodeTable> {
        let schema = self
            .catalog
            .node_table_by_id(table.id)
            .expect("partitioned by the catalog");
        match &table.source {
            TableSource::Empty => Ok(NodeTable::empty(schema)),
            TableSource::File {
                path,
                rows,
                next_serial,
            } => dir.load_node_table(schema, path, *rows, *next_serial),
        }
    }

    fn rel_table(
        &self,
        table: &ReplacedTable,
        tables: &BTreeMap<TableId, TableData>,
        dir: &DatabaseDir,
    ) -> Result<RelTable> {
        let (schema, pair) = self.catalog.rel_pair(table.id).ok_or_else(|| {
            Error::Corrupt(format!(
                "log record: replaced table {} is unknown",
                table.id
            ))
        })?;
        let rows = |id: TableId| match tables.get(&id) {
            Some(TableData::Node(t)) => Ok(t.num_rows()),
            _ => Err(Error::Corrupt(format!("log record: no node table {id}"))),
        };
        let (from_rows, to_rows) = (rows(pair.from)?, rows(pair.to)?);
        match &table.source {
            TableSource::Empty => {
                let types: Vec<LogicalType> =
                    schema.properties.iter().map(|p| p.ty.clone()).collect();
                Ok(RelTable::empty(&types, from_rows, to_rows))
            }
            TableSource::File { path, rows, .. } => {
                dir.load_rel_table(schema, path, *rows, from_rows, to_rows)
            }
        }
    }

    /// The segment files this change names, by table (`None`: the table is empty and has none).
    pub fn files(&self) -> BTreeMap<TableId, Option<String>> {
        self.tables
            .iter()
            .map(|t| {
                let file = match &t.source {
                    TableSource::Empty => None,
                    TableSource::File { path, .. } => Some(path.clone()),
                };
                (t.id, file)
            })
            .collect()
    }
}

/// `snapshot` with the tables in `replaced` folded (their deltas merged into new in-memory
/// parts), and the ids of those that hold rows: the ones a catalog change writes to files.
pub fn fold_replaced(
    snapshot: Snapshot,
    replaced: &BTreeSet<TableId>,
) -> Result<(Snapshot, BTreeSet<TableId>)> {
    let mut tables = snapshot.tables().clone();
    let mut with_rows = BTreeSet::new();
    for &id in replaced {
        let Some(data) = snapshot.tables().get(&id) else {
            continue;
        };
        let folded = data.folded()?;
        let (rows, next_serial) = stored_rows(&folded);
        if rows > 0 || next_serial != 0 {
            with_rows.insert(id);
        }
        tables.insert(id, folded);
    }
    let generation = snapshot.generation();
    let folded = Snapshot::from_arc_catalog(snapshot.catalog_arc().clone(), tables, generation);
    Ok((folded, with_rows))
}

/// A folded table's stored rows and next SERIAL value.
fn stored_rows(data: &TableData) -> (u64, i64) {
    match data {
        TableData::Node(t) => (t.num_stored_rows(), t.next_serial()),
        TableData::Rel(t) => (t.num_stored_rows(), 0),
    }
}

fn catalog_table_ids(catalog: &Catalog) -> BTreeSet<TableId> {
    let nodes = catalog.node_tables().iter().map(|t| t.id);
    let pairs = catalog
        .rel_tables()
        .iter()
        .flat_map(|r| r.pairs.iter().map(|p| p.id));
    nodes.chain(pairs).collect()
}

/// Every table of `catalog` has data of its kind (a record that names too few is corrupt).
fn check_complete(catalog: &Catalog, tables: &BTreeMap<TableId, TableData>) -> Result<()> {
    let nodes_ok = catalog
        .node_tables()
        .iter()
        .all(|t| matches!(tables.get(&t.id), Some(TableData::Node(_))));
    let rels_ok = catalog
        .rel_tables()
        .iter()
        .flat_map(|r| &r.pairs)
        .all(|p| matches!(tables.get(&p.id), Some(TableData::Rel(_))));
    if nodes_ok && rels_ok {
        Ok(())
    } else {
        Err(Error::Corrupt(
            "log record: a catalog change leaves a table without data".into(),
        ))
    }
}

fn decode_replaced(decoder: &mut Decoder<'_>) -> std::result::Result<ReplacedTable, String> {
    let id = decoder.read_u32()?;
    let source = match decoder.read_u8()? {
        SOURCE_EMPTY => TableSource::Empty,
        SOURCE_FILE => {
            let rows = decoder.read_u64()?;
            let next_serial = decoder.read_u64()? as i64;
            let path = read_bytes(decoder, PATH_BYTES_MAX)?;
            let path = String::from_utf8(path.to_vec()).map_err(|e| e.to_string())?;
            TableSource::File {
                path,
                rows,
                next_serial,
            }
        }
        other => return Err(format!("unknown table source {other}")),
    };
    Ok(ReplacedTable { id, source })
}

fn put_u32(out: &mut Vec<u8>, value: usize) {
    let value = u32::try_from(value).expect("length fits in u32 (bounded by the limits)");
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

fn read_bytes<'a>(
    decoder: &mut Decoder<'a>,
    limit: usize,
) -> std::result::Result<&'a [u8], String> {
    let length = decoder.read_u32()? as usize;
    if length > limit {
        return Err(format!("length {length} exceeds the limit"));
    }
    decoder.read_bytes(length)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Property;
    use crate::changes::NodeChange;
    use warren_common::value::Value;

    fn catalog() -> Catalog {
        let mut catalog = Catalog::default();
        let id = Property {
            name: "id".into(),
            ty: LogicalType::Int64,
            default: None,
        };
        catalog.create_node_table("A", vec![id], "id").unwrap();
        catalog
    }

    #[test]
    fn a_catalog_change_round_trips_with_its_tables_and_rows() {
        let change = CatalogChange {
            generation: 42,
            catalog: catalog(),
            tables: vec![
                ReplacedTable {
                    id: 0,
                    source: TableSource::File {
                        path: "data/t0-g42.seg".into(),
                        rows: 7,
                        next_serial: 3,
                    },
                },
                ReplacedTable {
                    id: 5,
                    source: TableSource::Empty,
                },
            ],
            rows: ChangeSet {
                nodes: vec![NodeChange {
                    table: 0,
                    appended: vec![vec![Value::Int64(9)]],
                    ..NodeChange::default()
                }],
                rels: Vec::new(),
            },
        };
        let record = LogRecord::Catalog(change);
        let bytes = record.encode(&Catalog::default()).unwrap();
        assert_eq!(bytes[0], KIND_CATALOG);
        let decoded = LogRecord::decode(&bytes, &Catalog::default()).unwrap();
        assert_eq!(decoded, record);
    }

    #[test]
    fn row_records_keep_their_encoding() {
        let rows = ChangeSet {
            nodes: vec![NodeChange {
                table: 0,
                deleted: vec![1],
                ..NodeChange::default()
            }],
            rels: Vec::new(),
        };
        let bytes = LogRecord::Rows(rows.clone()).encode(&catalog()).unwrap();
        assert_eq!(bytes, rows.encode(&catalog()).unwrap());
        assert_eq!(
            LogRecord::decode(&bytes, &catalog()).unwrap(),
            LogRecord::Rows(rows)
        );
    }

    #[test]
    fn a_truncated_catalog_change_is_corruption() {
        let change = CatalogChange {
            generation: 1,
            catalog: catalog(),
            tables: Vec::new(),
            rows: ChangeSet::default(),
        };
        let bytes = LogRecord::Catalog(change).encode(&catalog()).unwrap();
        for cut in 1..bytes.len() - 1 {
            let error = LogRecord::decode(&bytes[..cut], &catalog()).unwrap_err();
            assert!(matches!(error, Error::Corrupt(_)), "{error}");
        }
    }
}
