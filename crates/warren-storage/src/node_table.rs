//! The stored rows of one node table: one column per property, the primary-key index, and a
//! deletion bitmap. Rows are addressed by offset; offsets never move (deletion is a tombstone).

use warren_common::value::Value;

use crate::buffer::Bitmap;
use crate::catalog::NodeTableSchema;
use crate::column::Column;
use crate::pk_index::PrimaryKeyIndex;

#[derive(Clone, Debug)]
pub struct NodeTable {
    num_rows: u64,
    columns: Vec<Column>,
    primary_key: usize,
    pk_index: PrimaryKeyIndex,
    deleted: Option<Bitmap>,
    /// The next value a SERIAL primary key takes.
    next_serial: i64,
}

impl NodeTable {
    pub fn empty(schema: &NodeTableSchema) -> Self {
        let columns: Vec<Column> = schema
            .properties
            .iter()
            .map(|p| Column::empty(p.ty.clone()))
            .collect();
        let pk_index = PrimaryKeyIndex::build(&columns[schema.primary_key], None)
            .unwrap_or_else(|_| unreachable!("an empty column has no duplicates"));
        Self {
            num_rows: 0,
            columns,
            primary_key: schema.primary_key,
            pk_index,
            deleted: None,
            next_serial: 0,
        }
    }

    /// Assembles a table from its parts, checking that every column has `num_rows` rows.
    pub fn from_parts(
        columns: Vec<Column>,
        primary_key: usize,
        pk_index: PrimaryKeyIndex,
        deleted: Option<Bitmap>,
        next_serial: i64,
    ) -> Result<Self, String> {
        let num_rows = columns.first().map_or(0, Column::len);
        if columns.iter().any(|c| c.len() != num_rows) {
            return Err("node table columns have different lengths".into());
        }
        if primary_key >= columns.len() {
            return Err("primary key column out of range".into());
        }
        if deleted.as_ref().is_some_and(|d| d.len() != num_rows) {
            return Err("deletion bitmap length differs from the row count".into());
        }
        Ok(Self {
            num_rows: num_rows as u64,
            columns,
            primary_key,
            pk_index,
            deleted,
            next_serial,
        })
    }

    /// The same rows with other property columns (ALTER TABLE); `primary_key` is the key's new
    /// column index.
    pub fn with_columns(&self, columns: Vec<Column>, primary_key: usize) -> Result<Self, String> {
        Self::from_parts(
            columns,
            primary_key,
            self.pk_index.clone(),
            self.deleted.clone(),
            self.next_serial,
        )
    }

    pub fn num_rows(&self) -> u64 {
        self.num_rows
    }

    /// Rows not deleted.
    pub fn num_live_rows(&self) -> u64 {
        self.num_rows - self.deleted.as_ref().map_or(0, |d| d.count_ones() as u64)
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn column(&self, property: usize) -> &Column {
        &self.columns[property]
    }

    pub fn primary_key(&self) -> usize {
        self.primary_key
    }

    pub fn pk_index(&self) -> &PrimaryKeyIndex {
        &self.pk_index
    }

    pub fn deleted(&self) -> Option<&Bitmap> {
        self.deleted.as_ref()
    }

    pub fn next_serial(&self) -> i64 {
        self.next_serial
    }

    #[inline]
    pub fn is_deleted(&self, row: u64) -> bool {
        self.deleted.as_ref().is_some_and(|d| d.get(row as usize))
    }

    /// The live row whose primary key equals `key`.
    pub fn lookup(&self, key: &Value) -> Option<u32> {
        let row = self.pk_index.lookup(&self.columns[self.primary_key], key)?;
        (!self.is_deleted(u64::from(row))).then_some(row)
    }

    pub fn value(&self, row: u64, property: usize) -> Value {
        self.columns[property].get(row as usize)
    }
}
