//! The catalog: node tables and rel tables with their properties. Table ids come from one
//! counter in creation order, as Kùzu assigns them: a node table takes one id; a rel table takes
//! one id per FROM/TO pair (the id printed in a rel's `_ID`) and then one for itself.
//! Names of tables and properties compare case-insensitively. Vector indexes
//! (`CREATE_VECTOR_INDEX`) are catalog entries too: their definitions persist and are logged
//! with the catalog; the index graph itself is built in memory from the column (see
//! `docs/VECTORS.md`).

use serde::{Deserialize, Serialize};
use warren_common::types::LogicalType;
use warren_common::{Error, Result, TableId};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Property {
    pub name: String,
    pub ty: LogicalType,
    /// The DEFAULT value as a literal of `ty`, in Kùzu's printed form; `None` means NULL.
    #[serde(default)]
    pub default: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeTableSchema {
    pub id: TableId,
    pub name: String,
    pub properties: Vec<Property>,
    /// Index into `properties` of the primary key.
    pub primary_key: usize,
}

/// One FROM/TO pair of a rel table: the unit that has its own storage and id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelPairSchema {
    pub id: TableId,
    pub from: TableId,
    pub to: TableId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelTableSchema {
    /// The id of the rel table itself (taken after its pairs' ids).
    pub id: TableId,
    pub name: String,
    pub properties: Vec<Property>,
    /// `MANY_MANY` unless declared otherwise.
    pub multiplicity: String,
    pub pairs: Vec<RelPairSchema>,
}

/// What a table id names.
#[derive(Clone, Copy, Debug)]
pub enum TableRef<'a> {
    Node(&'a NodeTableSchema),
    /// A FROM/TO pair and the rel table it belongs to.
    RelPair(&'a RelTableSchema, &'a RelPairSchema),
    Rel(&'a RelTableSchema),
}

/// A vector index on a node table's `FLOAT[n]`/`DOUBLE[n]` property, with Kùzu's options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VectorIndexSchema {
    /// The node table's id.
    pub table: TableId,
    pub name: String,
    pub property: String,
    /// Kùzu's metric name: `cosine`, `l2`, `l2sq` or `dotproduct`.
    pub metric: String,
    pub mu: u64,
    pub ml: u64,
    pub pu: f64,
    pub efc: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    next_id: TableId,
    node_tables: Vec<NodeTableSchema>,
    rel_tables: Vec<RelTableSchema>,
    /// Absent from catalogs written before vector indexes existed.
    #[serde(default)]
    vector_indexes: Vec<VectorIndexSchema>,
}

fn find_property(properties: &[Property], name: &str) -> Option<usize> {
    properties
        .iter()
        .position(|p| p.name.eq_ignore_ascii_case(name))
}

impl NodeTableSchema {
    pub fn property(&self, name: &str) -> Option<usize> {
        find_property(&self.properties, name)
    }

    pub fn primary_key(&self) -> &Property {
        &self.properties[self.primary_key]
    }
}

impl RelTableSchema {
    pub fn property(&self, name: &str) -> Option<usize> {
        find_property(&self.properties, name)
    }
}

impl Catalog {
    pub fn node_tables(&self) -> &[NodeTableSchema] {
        &self.node_tables
    }

    pub fn rel_tables(&self) -> &[RelTableSchema] {
        &self.rel_tables
    }

    pub fn vector_indexes(&self) -> &[VectorIndexSchema] {
        &self.vector_indexes
    }

    /// The vector index `name` of table `table` (names compare case-insensitively).
    pub fn vector_index(&self, table: TableId, name: &str) -> Option<&VectorIndexSchema> {
        self.vector_indexes
            .iter()
            .find(|i| i.table == table && i.name.eq_ignore_ascii_case(name))
    }

    /// Adds a vector index; the caller checked the table and property.
    pub fn create_vector_index(&mut self, index: VectorIndexSchema) -> Result<()> {
        let table = self
            .node_table_by_id(index.table)
            .ok_or_else(|| Error::binder(format!("Table {} does not exist.", index.table)))?;
        assert!(
            table.property(&index.property).is_some(),
            "a vector index names a property of its table"
        );
        if self.vector_index(index.table, &index.name).is_some() {
            return Err(Error::binder(format!(
                "Index {} already exists in table {}.",
                index.name, table.name
            )));
        }
        self.vector_indexes.push(index);
        Ok(())
    }

    /// Removes the vector index `name` of node table `table`.
    pub fn drop_vector_index(&mut self, table: &str, name: &str) -> Result<()> {
        let schema = self
            .node_table(table)
            .ok_or_else(|| Error::binder(format!("Table {table} does not exist.")))?;
        let id = schema.id;
        let display = schema.name.clone();
        let before = self.vector_indexes.len();
        self.vector_indexes
            .retain(|i| !(i.table == id && i.name.eq_ignore_ascii_case(name)));
        if self.vector_indexes.len() == before {
            return Err(Error::binder(format!(
                "Table {display} doesn't have an index with name {name}."
            )));
        }
        Ok(())
    }

    /// The vector index on property `property` of `table`, if any.
    fn index_on(&self, table: TableId, property: &str) -> Option<&VectorIndexSchema> {
        self.vector_indexes
            .iter()
            .find(|i| i.table == table && i.property.eq_ignore_ascii_case(property))
    }

    pub fn node_table(&self, name: &str) -> Option<&NodeTableSchema> {
        self.node_tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    pub fn rel_table(&self, name: &str) -> Option<&RelTableSchema> {
        self.rel_tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }

    pub fn node_table_by_id(&self, id: TableId) -> Option<&NodeTableSchema> {
        self.node_tables.iter().find(|t| t.id == id)
    }

    /// The rel table and pair with pair id `id`.
    pub fn rel_pair(&self, id: TableId) -> Option<(&RelTableSchema, &RelPairSchema)> {
        self.rel_tables
            .iter()
            .find_map(|t| t.pairs.iter().find(|p| p.id == id).map(|p| (t, p)))
    }

    pub fn table(&self, id: TableId) -> Option<TableRef<'_>> {
        if let Some(node) = self.node_table_by_id(id) {
            return Some(TableRef::Node(node));
        }
        if let Some((rel, pair)) = self.rel_pair(id) {
            return Some(TableRef::RelPair(rel, pair));
        }
        self.rel_tables
            .iter()
            .find(|t| t.id == id)
            .map(TableRef::Rel)
    }

    /// The label printed for a node table or a rel pair.
    pub fn label(&self, id: TableId) -> &str {
        match self.table(id) {
            Some(TableRef::Node(t)) => &t.name,
            Some(TableRef::RelPair(t, _)) | Some(TableRef::Rel(t)) => &t.name,
            None => "",
        }
    }

    fn name_taken(&self, name: &str) -> bool {
        self.node_table(name).is_some() || self.rel_table(name).is_some()
    }

    fn check_properties(properties: &[Property]) -> Result<()> {
        for (i, property) in properties.iter().enumerate() {
            if property.name.starts_with('_') {
                return Err(Error::binder(format!(
                    "{} is reserved for system usage. External access is not allowed.",
                    property.name.to_ascii_lowercase()
                )));
            }
            if properties[..i]
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(&property.name))
            {
                return Err(Error::binder(format!(
                    "Duplicated column name: {}, column name must be unique.",
                    property.name
                )));
            }
        }
        Ok(())
    }

    /// Adds a node table; `primary_key` names one of `properties`.
    pub fn create_node_table(
        &mut self,
        name: &str,
        properties: Vec<Property>,
        primary_key: &str,
    ) -> Result<TableId> {
        if self.name_taken(name) {
            return Err(Error::binder(format!("{name} already exists in catalog.")));
        }
        Self::check_properties(&properties)?;
        let primary_key = find_property(&properties, primary_key).ok_or_else(|| {
            Error::binder(format!(
                "Primary key {primary_key} does not match any of the predefined node properties."
            ))
        })?;
        let id = self.next_id;
        self.next_id += 1;
        self.node_tables.push(NodeTableSchema {
            id,
            name: name.to_string(),
            properties,
            primary_key,
        });
        Ok(id)
    }

    /// Adds a rel table with one or more FROM/TO pairs of node table names.
    pub fn create_rel_table(
        &mut self,
        name: &str,
        connections: &[(String, String)],
        properties: Vec<Property>,
        multiplicity: Option<&str>,
    ) -> Result<TableId> {
        if self.name_taken(name) {
            return Err(Error::binder(format!("{name} already exists in catalog.")));
        }
        Self::check_properties(&properties)?;
        let mut endpoints = Vec::with_capacity(connections.len());
        for (from, to) in connections {
            let from = self.node_endpoint(from)?;
            let to = self.node_endpoint(to)?;
            endpoints.push((from, to));
        }
        let multiplicity = multiplicity.unwrap_or("MANY_MANY").to_ascii_uppercase();
        if !["MANY_MANY", "MANY_ONE", "ONE_MANY", "ONE_ONE"].contains(&multiplicity.as_str()) {
            return Err(Error::binder(format!(
                "Cannot bind {multiplicity} as relationship multiplicity."
            )));
        }
        let mut pairs = Vec::with_capacity(endpoints.len());
        for (from, to) in endpoints {
            pairs.push(RelPairSchema {
                id: self.next_id,
                from,
                to,
            });
            self.next_id += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.rel_tables.push(RelTableSchema {
            id,
            name: name.to_string(),
            properties,
            multiplicity,
            pairs,
        });
        Ok(id)
    }

    fn node_endpoint(&self, name: &str) -> Result<TableId> {
        match self.node_table(name) {
            Some(table) => Ok(table.id),
            None if self.rel_table(name).is_some() => {
                Err(Error::binder(format!("{name} is not a NODE table.")))
            }
            None => Err(Error::binder(format!("Table {name} does not exist."))),
        }
    }

    /// The properties of the node or rel table `name` (for ALTER TABLE).
    fn properties_mut(
        &mut self,
        name: &str,
    ) -> Result<(&mut Vec<Property>, Option<usize>, String)> {
        if let Some(table) = self
            .node_tables
            .iter_mut()
            .find(|t| t.name.eq_ignore_ascii_case(name))
        {
            let pk = Some(table.primary_key);
            let display = table.name.clone();
            return Ok((&mut table.properties, pk, display));
        }
        if let Some(table) = self
            .rel_tables
            .iter_mut()
            .find(|t| t.name.eq_ignore_ascii_case(name))
        {
            let display = table.name.clone();
            return Ok((&mut table.properties, None, display));
        }
        Err(Error::binder(format!("Table {name} does not exist.")))
    }

    /// Appends a property; returns its index.
    pub fn add_property(&mut self, table: &str, property: Property) -> Result<usize> {
        Self::check_properties(std::slice::from_ref(&property))?;
        let (properties, _, display) = self.properties_mut(table)?;
        if find_property(properties, &property.name).is_some() {
            return Err(Error::runtime(format!(
                "{display} table already has property {}.",
                property.name
            )));
        }
        properties.push(property);
        Ok(properties.len() - 1)
    }

    /// Removes a property; returns its former index.
    pub fn drop_property(&mut self, table: &str, name: &str) -> Result<usize> {
        if let Some(node) = self.node_table(table) {
            if let Some(index) = self.index_on(node.id, name) {
                return Err(Error::binder(format!(
                    "Cannot drop property {name} in table {} because it is used in index {}.",
                    node.name, index.name
                )));
            }
        }
        let (properties, primary_key, display) = self.properties_mut(table)?;
        let index = find_property(properties, name).ok_or_else(|| {
            Error::runtime(format!("{display} table does not have property {name}."))
        })?;
        if primary_key == Some(index) {
            return Err(Error::binder(format!(
                "Cannot drop property {name} in table {display} because it is used as primary key."
            )));
        }
        properties.remove(index);
        if let Some(node) = self.node_tables.iter_mut().find(|t| t.name == display) {
            if node.primary_key > index {
                node.primary_key -= 1;
            }
        }
        Ok(index)
    }

    pub fn rename_property(&mut self, table: &str, from: &str, to: &str) -> Result<()> {
        let (properties, _, display) = self.properties_mut(table)?;
        if find_property(properties, to).is_some() {
            return Err(Error::runtime(format!(
                "{display} table already has property {to}."
            )));
        }
        let index = find_property(properties, from).ok_or_else(|| {
            Error::runtime(format!("{display} table does not have property {from}."))
        })?;
        properties[index].name = to.to_string();
        if let Some(id) = self.node_table(table).map(|t| t.id) {
            for vector_index in &mut self.vector_indexes {
                if vector_index.table == id && vector_index.property.eq_ignore_ascii_case(from) {
                    vector_index.property = to.to_string();
                }
            }
        }
        Ok(())
    }

    pub fn rename_table(&mut self, table: &str, to: &str) -> Result<()> {
        if self.name_taken(to) {
            return Err(Error::binder(format!("{to} already exists in catalog.")));
        }
        if let Some(t) = self
            .node_tables
            .iter_mut()
            .find(|t| t.name.eq_ignore_ascii_case(table))
        {
            t.name = to.to_string();
            return Ok(());
        }
        if let Some(t) = self
            .rel_tables
            .iter_mut()
            .find(|t| t.name.eq_ignore_ascii_case(table))
        {
            t.name = to.to_string();
            return Ok(());
        }
        Err(Error::binder(format!("Table {table} does not exist.")))
    }

    /// Removes a table. A node table referenced by a rel table cannot be dropped.
    /// Returns the storage ids (node table id or rel pair ids) that were removed.
    pub fn drop_table(&mut self, name: &str) -> Result<Vec<TableId>> {
        if let Some(index) = self
            .node_tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
        {
            let id = self.node_tables[index].id;
            if let Some(rel) = self
                .rel_tables
                .iter()
                .find(|r| r.pairs.iter().any(|p| p.from == id || p.to == id))
            {
                return Err(Error::binder(format!(
                    "Cannot delete node table {} because it is referenced by relationship table {}.",
                    self.node_tables[index].name, rel.name
                )));
            }
            self.node_tables.remove(index);
            self.vector_indexes.retain(|i| i.table != id);
            return Ok(vec![id]);
        }
        if let Some(index) = self
            .rel_tables
            .iter()
            .position(|t| t.name.eq_ignore_ascii_case(name))
        {
            let rel = self.rel_tables.remove(index);
            return Ok(rel.pairs.iter().map(|p| p.id).collect());
        }
        Err(Error::binder(format!("Table {name} does not exist.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn property(name: &str, ty: LogicalType) -> Property {
        Property {
            name: name.into(),
            ty,
            default: None,
        }
    }

    #[test]
    fn ids_follow_kuzu_numbering() {
        let mut catalog = Catalog::default();
        for name in ["A", "B", "C"] {
            catalog
                .create_node_table(name, vec![property("ID", LogicalType::Int64)], "id")
                .unwrap();
        }
        let pairs = vec![
            ("A".to_string(), "B".to_string()),
            ("a".to_string(), "C".to_string()),
        ];
        assert_eq!(
            catalog.create_rel_table("R", &pairs, vec![], None).unwrap(),
            5
        );
        let pairs = vec![("A".to_string(), "B".to_string())];
        assert_eq!(
            catalog.create_rel_table("S", &pairs, vec![], None).unwrap(),
            7
        );
        assert_eq!(catalog.rel_pair(4).unwrap().1.to, 2);
        assert_eq!(catalog.label(6), "S");
        assert!(catalog
            .create_node_table("r", vec![property("x", LogicalType::Int64)], "x")
            .is_err());
    }

    #[test]
    fn referenced_node_tables_cannot_be_dropped() {
        let mut catalog = Catalog::default();
        catalog
            .create_node_table("A", vec![property("ID", LogicalType::Int64)], "ID")
            .unwrap();
        catalog
            .create_rel_table("R", &[("A".into(), "A".into())], vec![], None)
            .unwrap();
        assert!(catalog.drop_table("A").is_err());
        assert_eq!(catalog.drop_table("R").unwrap(), vec![1]);
        assert_eq!(catalog.drop_table("A").unwrap(), vec![0]);
    }

    fn vector_index(name: &str) -> VectorIndexSchema {
        VectorIndexSchema {
            table: 0,
            name: name.into(),
            property: "v".into(),
            metric: "cosine".into(),
            mu: 30,
            ml: 60,
            pu: 0.05,
            efc: 200,
        }
    }

    #[test]
    fn vector_indexes_follow_their_table_and_property() {
        let mut catalog = Catalog::default();
        let ty = LogicalType::Array(LogicalType::Float.into(), 3);
        catalog
            .create_node_table(
                "A",
                vec![property("ID", LogicalType::Int64), property("v", ty)],
                "ID",
            )
            .unwrap();
        catalog.create_vector_index(vector_index("i")).unwrap();
        let duplicate = catalog.create_vector_index(vector_index("I")).unwrap_err();
        assert!(duplicate
            .to_string()
            .contains("Index I already exists in table A."));
        assert!(catalog.drop_property("A", "v").is_err());
        catalog.rename_property("A", "v", "w").unwrap();
        assert_eq!(catalog.vector_index(0, "i").unwrap().property, "w");
        let json = serde_json::to_string(&catalog).unwrap();
        assert_eq!(serde_json::from_str::<Catalog>(&json).unwrap(), catalog);
        assert!(catalog.drop_vector_index("A", "j").is_err());
        catalog.drop_vector_index("A", "i").unwrap();
        assert!(catalog.vector_indexes().is_empty());
        let renamed = VectorIndexSchema {
            property: "w".into(),
            ..vector_index("i")
        };
        catalog.create_vector_index(renamed).unwrap();
        catalog.drop_table("A").unwrap();
        assert!(catalog.vector_indexes().is_empty());
    }
}
