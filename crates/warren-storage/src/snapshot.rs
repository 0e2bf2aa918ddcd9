//! An immutable, consistent state of a database: the catalog and every table's data. Queries
//! read one snapshot from start to end; writers build the next one (see [`crate::editor`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use warren_common::value::{GraphLookup, Value};
use warren_common::{Error, InternalId, TableId};

use crate::catalog::{Catalog, NodeTableSchema, RelPairSchema, RelTableSchema};
use crate::node_table::NodeTable;
use crate::rel_table::{Direction, RelTable};
use crate::section_check::ChecksumMismatch;

#[derive(Clone, Debug)]
pub enum TableData {
    Node(Arc<NodeTable>),
    Rel(Arc<RelTable>),
}

impl TableData {
    /// Verifies every stored block of the table: the first mismatch.
    pub fn try_verify(&self) -> std::result::Result<(), crate::section_check::ChecksumMismatch> {
        match self {
            TableData::Node(table) => table.try_verify(),
            TableData::Rel(table) => table.try_verify(),
        }
    }

    /// Whether committed changes are not yet folded into the table's segment.
    pub fn has_delta(&self) -> bool {
        match self {
            TableData::Node(t) => t.has_delta(),
            TableData::Rel(t) => t.has_delta(),
        }
    }

    /// The same data with its delta folded into new in-memory parts (O(table)). Folding reads
    /// whole sections, so a table with a delta is verified first: a damaged block is a
    /// `corrupt database` error.
    pub fn folded(&self) -> warren_common::Result<TableData> {
        if self.has_delta() {
            self.try_verify()?;
        }
        Ok(match self {
            TableData::Node(t) => TableData::Node(Arc::new(t.folded().map_err(Error::internal)?)),
            TableData::Rel(t) => TableData::Rel(Arc::new(t.folded().map_err(Error::internal)?)),
        })
    }
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    catalog: Arc<Catalog>,
    /// Node tables by table id and rel pairs by pair id.
    tables: BTreeMap<TableId, TableData>,
    /// Incremented by every committed change.
    generation: u64,
}

impl Snapshot {
    pub fn new(catalog: Catalog, tables: BTreeMap<TableId, TableData>, generation: u64) -> Self {
        let snapshot = Self {
            catalog: Arc::new(catalog),
            tables,
            generation,
        };
        snapshot.assert_consistent();
        snapshot
    }

    /// A snapshot sharing an existing catalog (a commit that changed rows only).
    pub fn from_arc_catalog(
        catalog: Arc<Catalog>,
        tables: BTreeMap<TableId, TableData>,
        generation: u64,
    ) -> Self {
        let snapshot = Self {
            catalog,
            tables,
            generation,
        };
        snapshot.assert_consistent();
        snapshot
    }

    /// Whether any table holds committed changes not yet folded into its segment.
    pub fn has_delta(&self) -> bool {
        self.tables.values().any(TableData::has_delta)
    }

    /// The same data with every table's delta folded into new in-memory tables (O(data with
    /// deltas)); also returns the ids of the folded tables.
    pub fn folded(&self) -> warren_common::Result<(Snapshot, Vec<TableId>)> {
        let mut tables = self.tables.clone();
        let mut folded = Vec::new();
        for (&id, data) in self.tables.iter().filter(|(_, data)| data.has_delta()) {
            tables.insert(id, data.folded()?);
            folded.push(id);
        }
        let snapshot = Self::from_arc_catalog(self.catalog.clone(), tables, self.generation);
        Ok((snapshot, folded))
    }

    /// Verifies every stored section's checksum and every table's invariants (`warren
    /// check`): `(tables checked, problems)`.
    pub fn validate(&self) -> (usize, Vec<String>) {
        let mut problems = Vec::new();
        for (&id, data) in &self.tables {
            let result = match data {
                TableData::Node(t) => t.validate(),
                TableData::Rel(t) => t.validate(),
            };
            if let Err(problem) = result {
                problems.push(format!(
                    "table {} ({id}): {problem}",
                    self.catalog.label(id)
                ));
            }
        }
        (self.tables.len(), problems)
    }

    /// Every catalog table has data and every data entry has a catalog table.
    fn assert_consistent(&self) {
        for table in self.catalog.node_tables() {
            assert!(
                matches!(self.tables.get(&table.id), Some(TableData::Node(_))),
                "node table {} has no data",
                table.name
            );
        }
        for rel in self.catalog.rel_tables() {
            for pair in &rel.pairs {
                assert!(
                    matches!(self.tables.get(&pair.id), Some(TableData::Rel(_))),
                    "rel table {} has no data",
                    rel.name
                );
            }
        }
        let expected: usize = self.catalog.node_tables().len()
            + self
                .catalog
                .rel_tables()
                .iter()
                .map(|r| r.pairs.len())
                .sum::<usize>();
        assert_eq!(
            expected,
            self.tables.len(),
            "table data without a catalog entry"
        );
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn catalog_arc(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The same data with another generation number.
    pub fn with_generation(&self, generation: u64) -> Self {
        Self {
            generation,
            ..self.clone()
        }
    }

    pub fn tables(&self) -> &BTreeMap<TableId, TableData> {
        &self.tables
    }

    /// The data of node table `id`. Panics if `id` is not a node table of this snapshot: ids
    /// come from this snapshot's catalog.
    pub fn node_table(&self, id: TableId) -> &Arc<NodeTable> {
        match self.tables.get(&id) {
            Some(TableData::Node(table)) => table,
            _ => panic!("table {id} is not a node table of this snapshot"),
        }
    }

    /// The data of rel pair `id`. Panics if `id` is not a rel pair of this snapshot.
    pub fn rel_table(&self, id: TableId) -> &Arc<RelTable> {
        match self.tables.get(&id) {
            Some(TableData::Rel(table)) => table,
            _ => panic!("table {id} is not a rel pair of this snapshot"),
        }
    }

    pub fn node_schema(&self, id: TableId) -> &NodeTableSchema {
        self.catalog
            .node_table_by_id(id)
            .unwrap_or_else(|| panic!("no node table {id}"))
    }

    pub fn rel_schema(&self, pair: TableId) -> (&RelTableSchema, &RelPairSchema) {
        self.catalog
            .rel_pair(pair)
            .unwrap_or_else(|| panic!("no rel pair {pair}"))
    }

    /// The node tables a hop over rel pair `pair` in `direction` starts and ends at.
    pub fn pair_ends(&self, pair: TableId, direction: Direction) -> (TableId, TableId) {
        let (_, pair) = self.rel_schema(pair);
        match direction {
            Direction::Forward => (pair.from, pair.to),
            Direction::Backward => (pair.to, pair.from),
        }
    }

    /// The stored source and destination nodes of a rel. Panics on a checksum mismatch (see
    /// [`Snapshot::try_rel_endpoints`]).
    pub fn rel_endpoints(&self, rel: InternalId) -> (InternalId, InternalId) {
        self.try_rel_endpoints(rel)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The stored source and destination nodes of a rel, verifying only the blocks read.
    pub fn try_rel_endpoints(
        &self,
        rel: InternalId,
    ) -> Result<(InternalId, InternalId), ChecksumMismatch> {
        let (_, pair) = self.rel_schema(rel.table);
        let (source, target) = self.rel_table(rel.table).try_endpoints(rel.offset)?;
        Ok((
            InternalId::new(pair.from, u64::from(source)),
            InternalId::new(pair.to, u64::from(target)),
        ))
    }

    /// Verifies the blocks that printing `value` reads through [`GraphLookup`] (the
    /// properties and endpoints of every node and rel in it, however nested): once this
    /// succeeds, printing the value cannot meet a checksum mismatch, since verified blocks stay
    /// verified. Results call it on every row they hand out, so that a damaged block is the
    /// query's error and never a panic while a value is printed or converted.
    pub fn verify_value(&self, value: &Value) -> Result<(), ChecksumMismatch> {
        match value {
            Value::Node(node) => self.verify_properties(node.id, false),
            Value::Rel(rel) => self.verify_rel(rel.id),
            Value::Path(path) => {
                for node in &path.nodes {
                    self.verify_properties(node.id, false)?;
                }
                path.rels.iter().try_for_each(|rel| self.verify_rel(rel.id))
            }
            Value::List(items) => items.iter().try_for_each(|item| self.verify_value(item)),
            Value::Struct(fields) => fields
                .fields
                .iter()
                .try_for_each(|(_, field)| self.verify_value(field)),
            Value::Map(entries) => entries.iter().try_for_each(|(key, entry)| {
                self.verify_value(key)?;
                self.verify_value(entry)
            }),
            Value::Union(union) => self.verify_value(&union.value),
            _ => Ok(()),
        }
    }

    fn verify_rel(&self, id: InternalId) -> Result<(), ChecksumMismatch> {
        self.try_rel_endpoints(id)?;
        self.verify_properties(id, true)
    }

    /// Reads the properties of a node or rel whose columns are not all verified yet.
    fn verify_properties(&self, id: InternalId, is_rel: bool) -> Result<(), ChecksumMismatch> {
        if is_rel {
            let table = self.rel_table(id.table);
            verify_columns(table.columns(), |i| table.try_value(id.offset, i).map(drop))
        } else {
            let table = self.node_table(id.table);
            verify_columns(table.columns(), |i| table.try_value(id.offset, i).map(drop))
        }
    }

    /// The properties of a node or rel in schema order, NULLs included, verifying only the
    /// blocks read.
    pub fn try_properties(
        &self,
        id: InternalId,
        is_rel: bool,
    ) -> Result<Vec<(Arc<str>, Value)>, ChecksumMismatch> {
        if is_rel {
            let (schema, _) = self.rel_schema(id.table);
            let table = self.rel_table(id.table);
            schema
                .properties
                .iter()
                .enumerate()
                .map(|(i, p)| Ok((Arc::from(p.name.as_str()), table.try_value(id.offset, i)?)))
                .collect()
        } else {
            let schema = self.node_schema(id.table);
            let table = self.node_table(id.table);
            schema
                .properties
                .iter()
                .enumerate()
                .map(|(i, p)| Ok((Arc::from(p.name.as_str()), table.try_value(id.offset, i)?)))
                .collect()
        }
    }
}

/// Reads property `i` through `read` for each stored column not yet verified as a whole (a
/// verified column cannot fail, so a warm table costs one flag per column).
fn verify_columns(
    columns: &[crate::column::Column],
    read: impl Fn(usize) -> Result<(), ChecksumMismatch>,
) -> Result<(), ChecksumMismatch> {
    columns
        .iter()
        .enumerate()
        .filter(|(_, column)| !column.is_verified())
        .try_for_each(|(i, _)| read(i))
}

impl GraphLookup for Snapshot {
    fn table_name(&self, table: TableId) -> String {
        self.catalog.label(table).to_string()
    }

    /// Panics on a checksum mismatch: results verify every value they hand out first
    /// ([`Snapshot::verify_value`]), so a value printed from a result cannot meet one.
    fn properties(&self, id: InternalId, is_rel: bool) -> Vec<(Arc<str>, Value)> {
        self.try_properties(id, is_rel)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    fn rel_endpoints(&self, id: InternalId) -> (InternalId, InternalId) {
        Snapshot::rel_endpoints(self, id)
    }
}
