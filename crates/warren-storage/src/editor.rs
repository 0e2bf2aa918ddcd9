//! Builds the next snapshot from the current one: DDL, COPY results, and row-level changes
//! (insert, update, delete) collected by one updating clause. Nothing is visible until
//! [`Editor::finish`] returns the new snapshot and its [`Changes`]: row changes become deltas
//! (O(change)); DDL and COPY replace the catalog or whole tables. The database logs either in
//! its write-ahead log (`crate::log_record`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, InternalId, Result, TableId};

use crate::catalog::{Catalog, Property};
use crate::changes::{apply_changes, ChangeSet, NodeChange, RelChange};
use crate::column::{Column, ColumnBuilder};
use crate::node_table::NodeTable;
use crate::pk_index::duplicate_key_message;
use crate::rel_table::{Direction, RelTable};
use crate::snapshot::{Snapshot, TableData};

/// What one or more finished edits changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// Tables created or replaced wholesale (DDL, COPY, ALTER).
    pub replaced: BTreeSet<TableId>,
    /// Whether the catalog or whole tables changed: such a write is logged as a catalog change.
    pub structural: bool,
    /// Row changes, in the order they were applied.
    pub rows: ChangeSet,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        !self.structural && self.replaced.is_empty() && self.rows.is_empty()
    }

    /// Appends the changes of a later edit.
    pub fn extend(&mut self, other: Changes) {
        self.replaced.extend(other.replaced);
        self.structural |= other.structural;
        self.rows.extend(other.rows);
    }
}

#[derive(Debug, Default)]
struct NodeEdit {
    /// Whole rows in schema order, appended after the stored rows.
    appended: Vec<Vec<Value>>,
    updates: BTreeMap<(u64, usize), Value>,
    deleted: BTreeSet<u64>,
    /// Primary keys of appended rows, to keep keys unique within the edit.
    new_keys: HashMap<Value, u64>,
    next_serial: i64,
}

#[derive(Debug, Default)]
struct RelEdit {
    appended: Vec<(u32, u32, Vec<Value>)>,
    updates: BTreeMap<(u64, usize), Value>,
    deleted: BTreeSet<u64>,
}

#[derive(Debug)]
pub struct Editor {
    base: Arc<Snapshot>,
    /// The base's catalog until a DDL statement changes it (copied on the first change).
    catalog: Arc<Catalog>,
    tables: BTreeMap<TableId, TableData>,
    node_edits: BTreeMap<TableId, NodeEdit>,
    rel_edits: BTreeMap<TableId, RelEdit>,
    /// Tables whose data was replaced or created (persisted anew on commit).
    changed: BTreeSet<TableId>,
    /// Set by DDL and table replacement.
    structural: bool,
}

impl Editor {
    pub fn new(base: Arc<Snapshot>) -> Self {
        Self {
            catalog: base.catalog_arc().clone(),
            tables: base.tables().clone(),
            base,
            node_edits: BTreeMap::new(),
            rel_edits: BTreeMap::new(),
            changed: BTreeSet::new(),
            structural: false,
        }
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The catalog, to change: copied from the base's on the first change.
    fn catalog_mut(&mut self) -> &mut Catalog {
        Arc::make_mut(&mut self.catalog)
    }

    /// Whether a statement changed the catalog (a copy equal to the base's counts as unchanged).
    fn catalog_changed(&self) -> bool {
        !Arc::ptr_eq(&self.catalog, self.base.catalog_arc())
            && *self.catalog != **self.base.catalog_arc()
    }

    pub fn base(&self) -> &Arc<Snapshot> {
        &self.base
    }

    /// Whether anything was changed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && self.node_edits.is_empty()
            && self.rel_edits.is_empty()
            && !self.catalog_changed()
    }

    fn node_data(&self, table: TableId) -> &Arc<NodeTable> {
        match self.tables.get(&table) {
            Some(TableData::Node(t)) => t,
            _ => panic!("table {table} is not a node table"),
        }
    }

    fn rel_data(&self, pair: TableId) -> &Arc<RelTable> {
        match self.tables.get(&pair) {
            Some(TableData::Rel(t)) => t,
            _ => panic!("table {pair} is not a rel pair"),
        }
    }

    // ----- DDL -----

    pub fn create_node_table(
        &mut self,
        name: &str,
        properties: Vec<Property>,
        primary_key: &str,
    ) -> Result<TableId> {
        let pk_type = properties
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(primary_key))
            .map(|p| p.ty.clone());
        if let Some(ty) = &pk_type {
            check_primary_key_type(primary_key, ty)?;
        }
        let id = self
            .catalog_mut()
            .create_node_table(name, properties, primary_key)?;
        let schema = self.catalog.node_table_by_id(id).expect("just created");
        self.tables
            .insert(id, TableData::Node(Arc::new(NodeTable::empty(schema))));
        self.changed.insert(id);
        self.structural = true;
        Ok(id)
    }

    pub fn create_rel_table(
        &mut self,
        name: &str,
        connections: &[(String, String)],
        properties: Vec<Property>,
        multiplicity: Option<&str>,
    ) -> Result<TableId> {
        let id =
            self.catalog_mut()
                .create_rel_table(name, connections, properties, multiplicity)?;
        let schema = self
            .catalog
            .rel_tables()
            .iter()
            .find(|r| r.id == id)
            .expect("just created");
        let types: Vec<LogicalType> = schema.properties.iter().map(|p| p.ty.clone()).collect();
        for pair in schema.pairs.clone() {
            let from_rows = self.node_count(pair.from);
            let to_rows = self.node_count(pair.to);
            let table = RelTable::empty(&types, from_rows, to_rows);
            self.tables.insert(pair.id, TableData::Rel(Arc::new(table)));
            self.changed.insert(pair.id);
        }
        self.structural = true;
        Ok(id)
    }

    pub fn drop_table(&mut self, name: &str) -> Result<()> {
        for id in self.catalog_mut().drop_table(name)? {
            self.tables.remove(&id);
            self.node_edits.remove(&id);
            self.rel_edits.remove(&id);
            self.changed.remove(&id);
        }
        self.structural = true;
        Ok(())
    }

    /// `ALTER TABLE t ADD name TYPE [DEFAULT value]`: every row takes the default.
    pub fn add_property(&mut self, table: &str, property: Property) -> Result<()> {
        let value = default_value(&property)?;
        let ty = property.ty.clone();
        self.catalog_mut().add_property(table, property)?;
        let filled = |rows: u64| -> Result<Column> {
            let mut builder = ColumnBuilder::new(ty.clone());
            for _ in 0..rows {
                builder.push(&value).map_err(Error::runtime)?;
            }
            Ok(builder.finish())
        };
        for id in self.storage_ids(table) {
            match self.folded_data(id)? {
                Some(TableData::Node(data)) => {
                    let mut columns = data.columns().to_vec();
                    columns.push(filled(data.num_rows())?);
                    let data = data
                        .with_columns(columns, data.primary_key())
                        .map_err(Error::internal)?;
                    self.replace_node_table(id, data);
                }
                Some(TableData::Rel(data)) => {
                    let mut columns = data.columns().to_vec();
                    columns.push(filled(data.num_rows())?);
                    self.replace_rel_table(
                        id,
                        data.with_columns(columns).map_err(Error::internal)?,
                    );
                }
                None => {}
            }
        }
        Ok(())
    }

    /// `ALTER TABLE t DROP name`.
    pub fn drop_property(&mut self, table: &str, name: &str) -> Result<()> {
        let index = self.catalog_mut().drop_property(table, name)?;
        for id in self.storage_ids(table) {
            match self.folded_data(id)? {
                Some(TableData::Node(data)) => {
                    let mut columns = data.columns().to_vec();
                    columns.remove(index);
                    let pk = self
                        .catalog
                        .node_table_by_id(id)
                        .expect("table")
                        .primary_key;
                    self.replace_node_table(
                        id,
                        data.with_columns(columns, pk).map_err(Error::internal)?,
                    );
                }
                Some(TableData::Rel(data)) => {
                    let mut columns = data.columns().to_vec();
                    columns.remove(index);
                    self.replace_rel_table(
                        id,
                        data.with_columns(columns).map_err(Error::internal)?,
                    );
                }
                None => {}
            }
        }
        Ok(())
    }

    pub fn rename_property(&mut self, table: &str, from: &str, to: &str) -> Result<()> {
        self.structural = true;
        self.catalog_mut().rename_property(table, from, to)
    }

    /// `CALL CREATE_VECTOR_INDEX(...)`: a catalog entry; the index graph is built on use.
    pub fn create_vector_index(&mut self, index: crate::VectorIndexSchema) -> Result<()> {
        self.structural = true;
        self.catalog_mut().create_vector_index(index)
    }

    /// `CALL DROP_VECTOR_INDEX(table, name)`.
    pub fn drop_vector_index(&mut self, table: &str, name: &str) -> Result<()> {
        self.structural = true;
        self.catalog_mut().drop_vector_index(table, name)
    }

    pub fn rename_table(&mut self, table: &str, to: &str) -> Result<()> {
        self.structural = true;
        self.catalog_mut().rename_table(table, to)
    }

    /// Replaces a table's data by the same data with its delta folded in (COPY and ALTER
    /// rebuild whole columns from the stored ones).
    pub fn fold(&mut self, id: TableId) -> Result<()> {
        assert!(
            !self.node_edits.contains_key(&id) && !self.rel_edits.contains_key(&id),
            "fold after row edits in one statement"
        );
        if let Some(data) = self.folded_data(id)? {
            self.tables.insert(id, data);
            self.changed.insert(id);
            self.structural = true;
        }
        Ok(())
    }

    /// A table's data with its delta folded in (ALTER rewrites whole columns).
    fn folded_data(&self, id: TableId) -> Result<Option<TableData>> {
        self.tables
            .get(&id)
            .map(|data| {
                // The fold's callers (COPY, ALTER) read the whole table: verified first.
                data.try_verify()?;
                data.folded()
            })
            .transpose()
    }

    /// The storage ids (node table or rel pairs) of the table called `name`.
    fn storage_ids(&self, name: &str) -> Vec<TableId> {
        if let Some(node) = self.catalog.node_table(name) {
            return vec![node.id];
        }
        self.catalog
            .rel_table(name)
            .map(|r| r.pairs.iter().map(|p| p.id).collect())
            .unwrap_or_default()
    }

    /// Replaces a node table's data wholesale (the result of a COPY).
    pub fn replace_node_table(&mut self, table: TableId, data: NodeTable) {
        assert!(
            !self.node_edits.contains_key(&table),
            "COPY after row edits in one statement"
        );
        self.tables.insert(table, TableData::Node(Arc::new(data)));
        self.changed.insert(table);
        self.structural = true;
    }

    /// Replaces a rel pair's data wholesale (the result of a COPY).
    pub fn replace_rel_table(&mut self, pair: TableId, data: RelTable) {
        assert!(
            !self.rel_edits.contains_key(&pair),
            "COPY after row edits in one statement"
        );
        self.tables.insert(pair, TableData::Rel(Arc::new(data)));
        self.changed.insert(pair);
        self.structural = true;
    }

    /// The current data of a node table (as of the last replacement; row edits not applied).
    pub fn node_table(&self, table: TableId) -> &Arc<NodeTable> {
        self.node_data(table)
    }

    pub fn rel_table(&self, pair: TableId) -> &Arc<RelTable> {
        self.rel_data(pair)
    }

    // ----- row edits -----

    /// Rows of a node table including rows appended in this edit.
    pub fn node_count(&self, table: TableId) -> u64 {
        let appended = self
            .node_edits
            .get(&table)
            .map_or(0, |e| e.appended.len() as u64);
        self.node_data(table).num_rows() + appended
    }

    fn node_edit(&mut self, table: TableId) -> &mut NodeEdit {
        let next_serial = self.node_data(table).next_serial();
        self.node_edits.entry(table).or_insert_with(|| NodeEdit {
            next_serial,
            ..NodeEdit::default()
        })
    }

    /// The live node of `table` whose primary key is `key`, including nodes inserted by this edit.
    /// A damaged block of the primary-key index, key column or deletion bitmap is the
    /// statement's error.
    pub fn lookup_node(&self, table: TableId, key: &Value) -> Result<Option<u64>> {
        let edit = self.node_edits.get(&table);
        if let Some(&row) = edit.and_then(|e| e.new_keys.get(key)) {
            return Ok(Some(row));
        }
        let Some(row) = self.node_data(table).try_lookup(key)? else {
            return Ok(None);
        };
        let row = u64::from(row);
        let deleted = edit.is_some_and(|e| e.deleted.contains(&row));
        Ok((!deleted).then_some(row))
    }

    /// Inserts a node. `assignments` give (property index, value) pairs, values already of the
    /// property's type; other properties take their default. Returns the new node's offset.
    pub fn insert_node(&mut self, table: TableId, assignments: Vec<(usize, Value)>) -> Result<u64> {
        let schema = self
            .catalog
            .node_table_by_id(table)
            .expect("bound table")
            .clone();
        let mut row: Vec<Value> = Vec::with_capacity(schema.properties.len());
        for property in &schema.properties {
            row.push(default_value(property)?);
        }
        for (index, value) in assignments {
            row[index] = value;
        }
        let pk = schema.primary_key;
        if schema.properties[pk].ty == LogicalType::Serial && row[pk].is_null() {
            let edit = self.node_edit(table);
            row[pk] = Value::Int64(edit.next_serial);
        }
        if row[pk].is_null() {
            return Err(Error::runtime(
                "Found NULL, which violates the non-null constraint of the primary key column.",
            ));
        }
        if self.lookup_node(table, &row[pk])?.is_some() {
            return Err(Error::runtime(duplicate_key_message(&row[pk])));
        }
        let offset = self.node_count(table);
        if offset >= warren_common::limits::NODE_TABLE_ROWS_MAX {
            return Err(Error::LimitExceeded(format!(
                "node table {} is full",
                schema.name
            )));
        }
        let key = row[pk].clone();
        let edit = self.node_edit(table);
        if let Some(serial) = key.as_i64() {
            edit.next_serial = edit.next_serial.max(serial + 1);
        }
        edit.new_keys.insert(key, offset);
        edit.appended.push(row);
        Ok(offset)
    }

    /// Inserts a rel between existing nodes of the pair's FROM and TO tables.
    pub fn insert_rel(
        &mut self,
        pair: TableId,
        source: u64,
        target: u64,
        assignments: Vec<(usize, Value)>,
    ) -> Result<u64> {
        let (schema, pair_schema) = self.catalog.rel_pair(pair).expect("bound rel pair");
        let (schema, pair_schema) = (schema.clone(), *pair_schema);
        assert!(
            source < self.node_count(pair_schema.from) && target < self.node_count(pair_schema.to),
            "rel endpoint out of range"
        );
        let mut values: Vec<Value> = schema
            .properties
            .iter()
            .map(default_value)
            .collect::<Result<_>>()?;
        for (index, value) in assignments {
            values[index] = value;
        }
        let offset = self.rel_count(pair);
        if offset >= u64::from(u32::MAX) {
            return Err(Error::LimitExceeded(format!(
                "rel table {} is full",
                schema.name
            )));
        }
        self.rel_edits.entry(pair).or_default().appended.push((
            source as u32,
            target as u32,
            values,
        ));
        Ok(offset)
    }

    pub fn rel_count(&self, pair: TableId) -> u64 {
        let appended = self
            .rel_edits
            .get(&pair)
            .map_or(0, |e| e.appended.len() as u64);
        self.rel_data(pair).num_rows() + appended
    }

    pub fn set_node_property(
        &mut self,
        node: InternalId,
        property: usize,
        value: Value,
    ) -> Result<()> {
        let schema = self
            .catalog
            .node_table_by_id(node.table)
            .expect("bound table");
        if property == schema.primary_key {
            return Err(Error::binder(format!(
                "Cannot set property {} in table {} because it is used as primary key. Try delete and then insert.",
                schema.properties[property].name, schema.name
            )));
        }
        let stored = self.node_data(node.table).num_rows();
        let edit = self.node_edit(node.table);
        if node.offset >= stored {
            edit.appended[(node.offset - stored) as usize][property] = value;
        } else {
            edit.updates.insert((node.offset, property), value);
        }
        Ok(())
    }

    pub fn set_rel_property(&mut self, rel: InternalId, property: usize, value: Value) {
        let stored = self.rel_data(rel.table).num_rows();
        let edit = self.rel_edits.entry(rel.table).or_default();
        if rel.offset >= stored {
            edit.appended[(rel.offset - stored) as usize].2[property] = value;
        } else {
            edit.updates.insert((rel.offset, property), value);
        }
    }

    /// Whether the node is deleted (in the table or by this edit); reads one block of the
    /// stored deletion bitmap.
    pub fn is_node_deleted(&self, node: InternalId) -> Result<bool> {
        let stored = self.node_data(node.table);
        Ok(
            (node.offset < stored.num_rows() && stored.try_is_deleted(node.offset)?)
                || self
                    .node_edits
                    .get(&node.table)
                    .is_some_and(|e| e.deleted.contains(&node.offset)),
        )
    }

    fn is_rel_deleted(&self, rel: InternalId) -> Result<bool> {
        let stored = self.rel_data(rel.table);
        Ok(
            (rel.offset < stored.num_rows() && stored.try_is_deleted(rel.offset)?)
                || self
                    .rel_edits
                    .get(&rel.table)
                    .is_some_and(|e| e.deleted.contains(&rel.offset)),
        )
    }

    /// Live rels incident to a node, in every rel table and both directions.
    fn incident_rels(&self, node: InternalId) -> Result<Vec<InternalId>> {
        let mut rels = Vec::new();
        for rel_schema in self.catalog.rel_tables() {
            for pair in &rel_schema.pairs {
                let table = self.rel_data(pair.id);
                for (endpoint, direction) in [
                    (pair.from, Direction::Forward),
                    (pair.to, Direction::Backward),
                ] {
                    if endpoint != node.table || node.offset > u64::from(u32::MAX) {
                        continue;
                    }
                    for (_, rel) in table.try_entries(node.offset as u32, direction)? {
                        rels.push(InternalId::new(pair.id, u64::from(rel)));
                    }
                    if let Some(edit) = self.rel_edits.get(&pair.id) {
                        for (i, (source, target, _)) in edit.appended.iter().enumerate() {
                            let end = if direction == Direction::Forward {
                                source
                            } else {
                                target
                            };
                            if u64::from(*end) == node.offset {
                                rels.push(InternalId::new(pair.id, table.num_rows() + i as u64));
                            }
                        }
                    }
                }
            }
        }
        rels.sort_unstable();
        rels.dedup();
        let mut live = Vec::with_capacity(rels.len());
        for rel in rels {
            if !self.is_rel_deleted(rel)? {
                live.push(rel);
            }
        }
        Ok(live)
    }

    /// Deletes a node; with `detach`, its rels too. Without `detach`, a node with rels is an error.
    pub fn delete_node(&mut self, node: InternalId, detach: bool) -> Result<()> {
        if self.is_node_deleted(node)? {
            return Ok(());
        }
        let rels = self.incident_rels(node)?;
        if !rels.is_empty() && !detach {
            let (schema, _) = self.catalog.rel_pair(rels[0].table).expect("rel pair");
            return Err(Error::runtime(format!(
                "Node(nodeOffset: {}) has connected edges in table {} in the {} direction, which cannot be deleted. Please delete the edges first or try DETACH DELETE.",
                node.offset,
                schema.name,
                if self.catalog.rel_pair(rels[0].table).is_some_and(|(_, p)| p.from == node.table) { "fwd" } else { "bwd" }
            )));
        }
        for rel in rels {
            self.delete_rel(rel)?;
        }
        let stored = self.node_data(node.table).num_rows();
        let edit = self.node_edit(node.table);
        if node.offset >= stored {
            edit.new_keys.retain(|_, row| *row != node.offset);
        }
        edit.deleted.insert(node.offset);
        Ok(())
    }

    /// Deletes a rel. Committing reads its stored endpoints (to patch the adjacency), so their
    /// blocks are verified here: a damaged one is the statement's error.
    pub fn delete_rel(&mut self, rel: InternalId) -> Result<()> {
        self.rel_data(rel.table).try_endpoints(rel.offset)?;
        self.rel_edits
            .entry(rel.table)
            .or_default()
            .deleted
            .insert(rel.offset);
        Ok(())
    }

    // ----- finishing -----

    /// Applies every edit and returns the new snapshot and what changed. Row edits become
    /// deltas over the tables (O(change)); replaced tables are already in place.
    pub fn finish(mut self) -> Result<(Snapshot, Changes)> {
        let mut rows = ChangeSet::default();
        for (table, edit) in std::mem::take(&mut self.node_edits) {
            rows.nodes.push(NodeChange {
                table,
                appended: edit.appended,
                updates: edit
                    .updates
                    .into_iter()
                    .map(|((row, property), value)| (row, property as u32, value))
                    .collect(),
                deleted: edit.deleted.into_iter().collect(),
                next_serial: edit.next_serial,
            });
        }
        for (pair, edit) in std::mem::take(&mut self.rel_edits) {
            rows.rels.push(RelChange {
                pair,
                appended: edit.appended,
                updates: edit
                    .updates
                    .into_iter()
                    .map(|((rel, property), value)| (rel, property as u32, value))
                    .collect(),
                deleted: edit.deleted.into_iter().collect(),
            });
        }
        apply_changes(&self.catalog, &mut self.tables, &rows).map_err(|e| match e {
            Error::Corrupt(message) => Error::internal(message),
            other => other,
        })?;
        let generation = self.base.generation() + 1;
        let structural = self.structural || self.catalog_changed();
        let snapshot = if structural {
            Snapshot::from_arc_catalog(self.catalog, self.tables, generation)
        } else {
            Snapshot::from_arc_catalog(self.base.catalog_arc().clone(), self.tables, generation)
        };
        let changes = Changes {
            replaced: self.changed,
            structural,
            rows,
        };
        Ok((snapshot, changes))
    }
}

fn default_value(property: &Property) -> Result<Value> {
    match &property.default {
        None => Ok(Value::Null),
        Some(text) => {
            warren_common::cast::parse_value(text, &property.ty).map_err(Error::conversion)
        }
    }
}

fn check_primary_key_type(name: &str, ty: &LogicalType) -> Result<()> {
    let allowed = ty.is_integer()
        || matches!(
            ty,
            LogicalType::String
                | LogicalType::Blob
                | LogicalType::Uuid
                | LogicalType::Date
                | LogicalType::Timestamp
                | LogicalType::Float
                | LogicalType::Double
        );
    if allowed {
        Ok(())
    } else {
        Err(Error::binder(format!(
            "Invalid primary key column {name} of type {ty}. Primary keys must be either STRING or a numeric type."
        )))
    }
}
