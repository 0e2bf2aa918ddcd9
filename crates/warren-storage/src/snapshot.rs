//! An immutable, consistent state of a database: the catalog and every table's data. Queries
//! read one snapshot from start to end; writers build the next one (see [`crate::editor`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use warren_common::value::{GraphLookup, Value};
use warren_common::{InternalId, TableId};

use crate::catalog::{Catalog, NodeTableSchema, RelPairSchema, RelTableSchema};
use crate::node_table::NodeTable;
use crate::rel_table::RelTable;

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

    /// The same data with its delta folded into new in-memory parts (O(table)).
    pub fn folded(&self) -> Result<TableData, String> {
        Ok(match self {
            TableData::Node(t) => TableData::Node(Arc::new(t.folded()?)),
            TableData::Rel(t) => TableData::Rel(Arc::new(t.folded()?)),
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
    pub fn folded(&self) -> Result<(Snapshot, Vec<TableId>), String> {
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

    /// The stored source and destination nodes of a rel.
    pub fn rel_endpoints(&self, rel: InternalId) -> (InternalId, InternalId) {
        let (_, pair) = self.rel_schema(rel.table);
        let table = self.rel_table(rel.table);
        let (source, target) = table.endpoints(rel.offset);
        (
            InternalId::new(pair.from, u64::from(source)),
            InternalId::new(pair.to, u64::from(target)),
        )
    }
}

impl GraphLookup for Snapshot {
    fn table_name(&self, table: TableId) -> String {
        self.catalog.label(table).to_string()
    }

    fn properties(&self, id: InternalId, is_rel: bool) -> Vec<(Arc<str>, Value)> {
        if is_rel {
            let (schema, _) = self.rel_schema(id.table);
            let table = self.rel_table(id.table);
            schema
                .properties
                .iter()
                .enumerate()
                .map(|(i, p)| (Arc::from(p.name.as_str()), table.value(id.offset, i)))
                .collect()
        } else {
            let schema = self.node_schema(id.table);
            let table = self.node_table(id.table);
            schema
                .properties
                .iter()
                .enumerate()
                .map(|(i, p)| (Arc::from(p.name.as_str()), table.value(id.offset, i)))
                .collect()
        }
    }

    fn rel_endpoints(&self, id: InternalId) -> (InternalId, InternalId) {
        Snapshot::rel_endpoints(self, id)
    }
}
