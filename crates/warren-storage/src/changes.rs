//! The logical changes of one committed write (rows inserted, updated and deleted per table),
//! their binary encoding for the write-ahead log, and how they are applied to a snapshot as
//! deltas. Applying is deterministic: the same changes on the same snapshot give the same row
//! offsets, which is what lets recovery replay the log and a checkpoint rebase later commits.
//!
//! Encoding (little-endian): a version byte, a u32 change count, then per change a kind byte
//! (1 node, 2 rel) and the u32 table id, followed by
//! * node: u32 appended rows, each its values in schema order (NULL flag + value); u32 updates,
//!   each u64 row, u32 property, NULL flag + value; u32 deletions, each u64 row; i64 next serial.
//! * rel: u32 appended rels, each u32 FROM offset, u32 TO offset and its values; then updates
//!   and deletions as for nodes.
//!
//! Values are encoded by [`crate::value_codec`] with the types of the catalog as of the
//! record's place in the log: a catalog change logged earlier (`crate::log_record`, whose
//! kind-1 records these are) changes it for the records after it, so a log is replayed in
//! order, each record decoded with the catalog that the records before it produced.

use std::collections::BTreeMap;
use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result, TableId};

use crate::catalog::Catalog;
use crate::delta::AppendedRel;
use crate::node_table::NodeTable;
use crate::rel_table::RelTable;
use crate::snapshot::{Snapshot, TableData};
use crate::value_codec::{encode_nullable, Decoder};

const VERSION: u8 = 1;
const KIND_NODE: u8 = 1;
const KIND_REL: u8 = 2;
/// Sanity bound on counts read from the log (a larger count is corruption, not an allocation).
const COUNT_MAX: usize = 1 << 28;

/// Changes to one node table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeChange {
    pub table: TableId,
    /// Whole rows in schema order, appended after the table's rows.
    pub appended: Vec<Vec<Value>>,
    /// (row, property, value) for rows that existed before this change.
    pub updates: Vec<(u64, u32, Value)>,
    /// Rows deleted (existing or appended by this change).
    pub deleted: Vec<u64>,
    pub next_serial: i64,
}

/// Changes to one rel pair.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelChange {
    pub pair: TableId,
    /// (FROM offset, TO offset, values in schema order), appended after the pair's rels.
    pub appended: Vec<(u32, u32, Vec<Value>)>,
    pub updates: Vec<(u64, u32, Value)>,
    pub deleted: Vec<u64>,
}

/// Every change of one write, in the order it is applied: node tables first (so rels can
/// point at new nodes), then rel pairs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChangeSet {
    pub nodes: Vec<NodeChange>,
    pub rels: Vec<RelChange>,
}

impl ChangeSet {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.rels.is_empty()
    }

    /// Verifies every stored block of the tables the changes apply to (log replay reads them
    /// whole, through reads that cannot return errors): a damaged block is an error here.
    pub fn verify_tables(&self, tables: &BTreeMap<TableId, TableData>) -> Result<()> {
        let named = self.nodes.iter().map(|c| c.table);
        for id in named.chain(self.rels.iter().map(|c| c.pair)) {
            if let Some(data) = tables.get(&id) {
                data.try_verify()?;
            }
        }
        Ok(())
    }

    /// Appends another write's changes (statements of one transaction are applied in order).
    pub fn extend(&mut self, other: ChangeSet) {
        self.nodes.extend(other.nodes);
        self.rels.extend(other.rels);
    }

    /// The changes applied to `snapshot` as deltas: the next snapshot, one generation later.
    pub fn apply(&self, snapshot: &Snapshot) -> Result<Snapshot> {
        let mut tables = snapshot.tables().clone();
        apply_changes(snapshot.catalog(), &mut tables, self)?;
        Ok(Snapshot::from_arc_catalog(
            snapshot.catalog_arc().clone(),
            tables,
            snapshot.generation() + 1,
        ))
    }

    pub fn encode(&self, catalog: &Catalog) -> Result<Vec<u8>> {
        let mut out = vec![VERSION];
        put_u32(&mut out, self.nodes.len() + self.rels.len());
        for change in &self.nodes {
            encode_node(&mut out, change, catalog)?;
        }
        for change in &self.rels {
            encode_rel(&mut out, change, catalog)?;
        }
        Ok(out)
    }

    pub fn decode(bytes: &[u8], catalog: &Catalog) -> Result<Self> {
        let corrupt = |e: String| Error::Corrupt(format!("log record: {e}"));
        let mut decoder = Decoder::new(bytes);
        let version = decoder.read_u8().map_err(corrupt)?;
        if version != VERSION {
            return Err(corrupt(format!("unknown record version {version}")));
        }
        let count = read_count(&mut decoder).map_err(corrupt)?;
        let mut set = ChangeSet::default();
        for _ in 0..count {
            match decoder.read_u8().map_err(corrupt)? {
                KIND_NODE => set
                    .nodes
                    .push(decode_node(&mut decoder, catalog).map_err(corrupt)?),
                KIND_REL => set
                    .rels
                    .push(decode_rel(&mut decoder, catalog).map_err(corrupt)?),
                kind => return Err(corrupt(format!("unknown change kind {kind}"))),
            }
        }
        if !decoder.is_at_end() {
            return Err(corrupt("trailing bytes".into()));
        }
        Ok(set)
    }
}

/// Applies `changes` to `tables` (node changes first, then rel changes).
pub fn apply_changes(
    catalog: &Catalog,
    tables: &mut BTreeMap<TableId, TableData>,
    changes: &ChangeSet,
) -> Result<()> {
    for change in &changes.nodes {
        let Some(TableData::Node(table)) = tables.get(&change.table) else {
            return Err(Error::Corrupt(format!(
                "change to unknown node table {}",
                change.table
            )));
        };
        let schema = catalog
            .node_table_by_id(change.table)
            .ok_or_else(|| Error::Corrupt(format!("no node table {}", change.table)))?;
        let next = apply_node_change(table, change, schema.primary_key)?;
        tables.insert(change.table, TableData::Node(Arc::new(next)));
    }
    for change in &changes.rels {
        let (_, pair) = catalog
            .rel_pair(change.pair)
            .ok_or_else(|| Error::Corrupt(format!("no rel pair {}", change.pair)))?;
        let rows = |id: TableId| match tables.get(&id) {
            Some(TableData::Node(t)) => Ok(t.num_rows()),
            _ => Err(Error::Corrupt(format!("no node table {id}"))),
        };
        let (from_rows, to_rows) = (rows(pair.from)?, rows(pair.to)?);
        let Some(TableData::Rel(table)) = tables.get(&change.pair) else {
            return Err(Error::Corrupt(format!("no rel pair {}", change.pair)));
        };
        let next = apply_rel_change(table, change, from_rows, to_rows)?;
        tables.insert(change.pair, TableData::Rel(Arc::new(next)));
    }
    Ok(())
}

/// One node table's change as a new delta version. Rows are checked against the table's
/// bounds, so a change recorded against another table version is an error, not a panic.
pub fn apply_node_change(
    table: &NodeTable,
    change: &NodeChange,
    primary_key: usize,
) -> Result<NodeTable> {
    let rows_before = table.num_rows();
    let rows_after = rows_before + change.appended.len() as u64;
    let out_of_range = change.updates.iter().any(|(row, ..)| *row >= rows_before)
        || change.deleted.iter().any(|row| *row >= rows_after);
    if out_of_range {
        return Err(Error::Corrupt(format!(
            "change to table {} names a row beyond its end",
            change.table
        )));
    }
    // Keys of rows that existed before and are deleted now: they leave the key map first, so
    // that a key deleted and inserted again by this change maps to its new row.
    let deleted_keys: Vec<(Value, u64)> = change
        .deleted
        .iter()
        .filter(|&&row| row < rows_before)
        .map(|&row| Ok((table.try_value(row, primary_key)?, row)))
        .collect::<Result<_>>()?;
    Ok(table.with_delta(|delta, next_serial, stored_rows| {
        for (row, property, value) in &change.updates {
            if *row < stored_rows {
                delta.updates.insert((*row, *property), value.clone());
            } else {
                let index = (*row - stored_rows) as usize;
                let mut values = delta.appended[index].to_vec();
                values[*property as usize] = value.clone();
                delta.appended.set(index, Arc::from(values));
            }
        }
        for (key, row) in &deleted_keys {
            if delta.keys.get(key) == Some(row) {
                delta.keys.remove(key);
            }
        }
        for (i, row) in change.appended.iter().enumerate() {
            let offset = rows_before + i as u64;
            if !row[primary_key].is_null() {
                delta.keys.insert(row[primary_key].clone(), offset);
            }
            delta.appended.push_back(Arc::from(row.clone()));
        }
        for &row in &change.deleted {
            if row >= rows_before {
                let key = &change.appended[(row - rows_before) as usize][primary_key];
                if delta.keys.get(key) == Some(&row) {
                    delta.keys.remove(key);
                }
            }
            delta.deleted.insert(row);
        }
        *next_serial = (*next_serial).max(change.next_serial);
    }))
}

/// One rel pair's change as a new delta version.
pub fn apply_rel_change(
    table: &RelTable,
    change: &RelChange,
    from_rows: u64,
    to_rows: u64,
) -> Result<RelTable> {
    let rels_before = table.num_rows();
    let rels_after = rels_before + change.appended.len() as u64;
    let bad_endpoint = change
        .appended
        .iter()
        .any(|(s, t, _)| u64::from(*s) >= from_rows || u64::from(*t) >= to_rows);
    let out_of_range = change.updates.iter().any(|(rel, ..)| *rel >= rels_before)
        || change.deleted.iter().any(|rel| *rel >= rels_after);
    if bad_endpoint || out_of_range || rels_after >= u64::from(u32::MAX) {
        return Err(Error::Corrupt(format!(
            "change to rel pair {} is out of range",
            change.pair
        )));
    }
    Ok(table.with_delta(from_rows, to_rows, |delta, stored_rows| {
        for (rel, property, value) in &change.updates {
            if *rel < stored_rows {
                delta.updates.insert((*rel, *property), value.clone());
            } else {
                let index = (*rel - stored_rows) as usize;
                let mut appended = delta.appended[index].clone();
                let mut values = appended.values.to_vec();
                values[*property as usize] = value.clone();
                appended.values = Arc::from(values);
                delta.appended.set(index, appended);
            }
        }
        for (source, target, values) in &change.appended {
            RelTable::append_to(
                delta,
                stored_rows,
                AppendedRel {
                    source: *source,
                    target: *target,
                    values: Arc::from(values.clone()),
                },
            );
        }
        for &rel in &change.deleted {
            delta.deleted.insert(rel);
        }
    }))
}

fn put_u32(out: &mut Vec<u8>, value: usize) {
    let value = u32::try_from(value).expect("count fits in u32 (bounded by table limits)");
    out.extend_from_slice(&value.to_le_bytes());
}

fn read_count(decoder: &mut Decoder<'_>) -> std::result::Result<usize, String> {
    let count = decoder.read_u32()? as usize;
    if count > COUNT_MAX {
        return Err(format!("count {count} exceeds the limit"));
    }
    Ok(count)
}

fn node_types(catalog: &Catalog, table: TableId) -> std::result::Result<Vec<LogicalType>, String> {
    let schema = catalog
        .node_table_by_id(table)
        .ok_or_else(|| format!("no node table {table}"))?;
    Ok(schema.properties.iter().map(|p| p.ty.clone()).collect())
}

fn rel_types(catalog: &Catalog, pair: TableId) -> std::result::Result<Vec<LogicalType>, String> {
    let (schema, _) = catalog
        .rel_pair(pair)
        .ok_or_else(|| format!("no rel pair {pair}"))?;
    Ok(schema.properties.iter().map(|p| p.ty.clone()).collect())
}

fn encode_values(out: &mut Vec<u8>, values: &[Value], types: &[LogicalType]) -> Result<()> {
    if values.len() != types.len() {
        return Err(Error::internal("row width differs from the schema"));
    }
    for (value, ty) in values.iter().zip(types) {
        encode_nullable(out, value, ty).map_err(Error::internal)?;
    }
    Ok(())
}

fn encode_updates_and_deletions(
    out: &mut Vec<u8>,
    updates: &[(u64, u32, Value)],
    deleted: &[u64],
    types: &[LogicalType],
) -> Result<()> {
    put_u32(out, updates.len());
    for (row, property, value) in updates {
        out.extend_from_slice(&row.to_le_bytes());
        out.extend_from_slice(&property.to_le_bytes());
        let ty = types
            .get(*property as usize)
            .ok_or_else(|| Error::internal("update of an unknown property"))?;
        encode_nullable(out, value, ty).map_err(Error::internal)?;
    }
    put_u32(out, deleted.len());
    for row in deleted {
        out.extend_from_slice(&row.to_le_bytes());
    }
    Ok(())
}

fn encode_node(out: &mut Vec<u8>, change: &NodeChange, catalog: &Catalog) -> Result<()> {
    let types = node_types(catalog, change.table).map_err(Error::internal)?;
    out.push(KIND_NODE);
    out.extend_from_slice(&change.table.to_le_bytes());
    put_u32(out, change.appended.len());
    for row in &change.appended {
        encode_values(out, row, &types)?;
    }
    encode_updates_and_deletions(out, &change.updates, &change.deleted, &types)?;
    out.extend_from_slice(&change.next_serial.to_le_bytes());
    Ok(())
}

fn encode_rel(out: &mut Vec<u8>, change: &RelChange, catalog: &Catalog) -> Result<()> {
    let types = rel_types(catalog, change.pair).map_err(Error::internal)?;
    out.push(KIND_REL);
    out.extend_from_slice(&change.pair.to_le_bytes());
    put_u32(out, change.appended.len());
    for (source, target, values) in &change.appended {
        out.extend_from_slice(&source.to_le_bytes());
        out.extend_from_slice(&target.to_le_bytes());
        encode_values(out, values, &types)?;
    }
    encode_updates_and_deletions(out, &change.updates, &change.deleted, &types)
}

type Decoded<T> = std::result::Result<T, String>;

fn decode_values(decoder: &mut Decoder<'_>, types: &[LogicalType]) -> Decoded<Vec<Value>> {
    types.iter().map(|ty| decoder.decode_nullable(ty)).collect()
}

type UpdatesAndDeletions = (Vec<(u64, u32, Value)>, Vec<u64>);

fn decode_updates_and_deletions(
    decoder: &mut Decoder<'_>,
    types: &[LogicalType],
) -> Decoded<UpdatesAndDeletions> {
    let count = read_count(decoder)?;
    let mut updates = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let row = decoder.read_u64()?;
        let property = decoder.read_u32()?;
        let ty = types
            .get(property as usize)
            .ok_or_else(|| format!("property {property} out of range"))?;
        updates.push((row, property, decoder.decode_nullable(ty)?));
    }
    let count = read_count(decoder)?;
    let mut deleted = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        deleted.push(decoder.read_u64()?);
    }
    Ok((updates, deleted))
}

fn decode_node(decoder: &mut Decoder<'_>, catalog: &Catalog) -> Decoded<NodeChange> {
    let table = decoder.read_u32()?;
    let types = node_types(catalog, table)?;
    let count = read_count(decoder)?;
    let mut appended = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        appended.push(decode_values(decoder, &types)?);
    }
    let (updates, deleted) = decode_updates_and_deletions(decoder, &types)?;
    let next_serial = decoder.read_u64()? as i64;
    Ok(NodeChange {
        table,
        appended,
        updates,
        deleted,
        next_serial,
    })
}

fn decode_rel(decoder: &mut Decoder<'_>, catalog: &Catalog) -> Decoded<RelChange> {
    let pair = decoder.read_u32()?;
    let types = rel_types(catalog, pair)?;
    let count = read_count(decoder)?;
    let mut appended = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let source = decoder.read_u32()?;
        let target = decoder.read_u32()?;
        appended.push((source, target, decode_values(decoder, &types)?));
    }
    let (updates, deleted) = decode_updates_and_deletions(decoder, &types)?;
    Ok(RelChange {
        pair,
        appended,
        updates,
        deleted,
    })
}
