//! The rows of one node table: the stored part (one column per property, the primary-key
//! index, a deletion bitmap) and the committed [`NodeDelta`] over it. Rows are addressed by
//! offset; offsets never move (deletion is a tombstone). Every accessor here reads both parts;
//! the `stored_*` ones read the segment alone.

use warren_common::value::Value;

use crate::buffer::Bitmap;
use crate::catalog::NodeTableSchema;
use crate::column::{Column, ColumnBuilder};
use crate::delta::{deleted_rows, fold_tombstones, NodeDelta};
use crate::pk_index::PrimaryKeyIndex;
use crate::section_check::ChecksumMismatch;

#[derive(Clone, Debug)]
pub struct NodeTable {
    /// Rows in the segment (the columns' length).
    num_rows: u64,
    columns: Vec<Column>,
    primary_key: usize,
    pk_index: PrimaryKeyIndex,
    deleted: Option<Bitmap>,
    /// The next value a SERIAL primary key takes.
    next_serial: i64,
    delta: NodeDelta,
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
            delta: NodeDelta::default(),
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
            delta: NodeDelta::default(),
        })
    }

    /// The same rows with other property columns (ALTER TABLE); `primary_key` is the key's new
    /// column index. The table must have no delta (fold it first).
    pub fn with_columns(&self, columns: Vec<Column>, primary_key: usize) -> Result<Self, String> {
        assert!(
            self.delta.is_empty(),
            "with_columns on a table with a delta"
        );
        Self::from_parts(
            columns,
            primary_key,
            self.pk_index.clone(),
            self.deleted.clone(),
            self.next_serial,
        )
    }

    /// Rows ever appended, deleted ones included: stored rows and appended ones.
    pub fn num_rows(&self) -> u64 {
        self.num_rows + self.delta.appended.len() as u64
    }

    /// Rows in the segment.
    pub fn num_stored_rows(&self) -> u64 {
        self.num_rows
    }

    /// Verifies every stored block of the table (for readers of whole arrays): the first
    /// mismatch.
    pub fn try_verify(&self) -> Result<(), ChecksumMismatch> {
        for column in &self.columns {
            column.try_verify()?;
        }
        self.pk_index.bytes().try_bytes()?;
        self.try_verify_deleted()
    }

    /// Verifies every block of the deletion bitmap (read whole by scans).
    pub fn try_verify_deleted(&self) -> Result<(), ChecksumMismatch> {
        self.deleted
            .as_ref()
            .map_or(Ok(()), |deleted| deleted.bytes().try_bytes().map(|_| ()))
    }

    /// Checks every stored byte against its checksum and the structures' invariants
    /// (`warren check`; O(table)).
    pub fn validate(&self) -> Result<(), String> {
        for column in &self.columns {
            column.validate()?;
        }
        self.pk_index.bytes().verify()?;
        let rows = self.num_rows;
        let slots: &[u32] = self.pk_index.bytes().cast();
        if slots
            .iter()
            .any(|&slot| slot != u32::MAX && u64::from(slot) >= rows)
        {
            return Err("primary-key index names a row beyond the table".into());
        }
        if let Some(deleted) = &self.deleted {
            deleted.bytes().verify()?;
        }
        Ok(())
    }

    /// Rows not deleted. Counting reads the whole deletion bitmap, verified first.
    pub fn num_live_rows(&self) -> Result<u64, ChecksumMismatch> {
        self.try_verify_deleted()?;
        Ok(self.num_rows() - deleted_rows(self.deleted.as_ref(), &self.delta.deleted))
    }

    /// The stored columns (the segment's rows only; see [`NodeTable::has_delta`]).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// A stored column (the segment's rows only; see [`NodeTable::has_delta`]).
    pub fn column(&self, property: usize) -> &Column {
        &self.columns[property]
    }

    pub fn primary_key(&self) -> usize {
        self.primary_key
    }

    pub fn pk_index(&self) -> &PrimaryKeyIndex {
        &self.pk_index
    }

    /// The stored deletion bitmap (the segment's tombstones only).
    pub fn deleted(&self) -> Option<&Bitmap> {
        self.deleted.as_ref()
    }

    pub fn next_serial(&self) -> i64 {
        self.next_serial
    }

    pub fn delta(&self) -> &NodeDelta {
        &self.delta
    }

    /// Whether committed changes are not yet folded into the segment.
    pub fn has_delta(&self) -> bool {
        !self.delta.is_empty()
    }

    #[inline]
    fn stored_is_deleted(&self, row: u64) -> bool {
        self.deleted.as_ref().is_some_and(|d| d.get(row as usize))
    }

    #[inline]
    pub fn is_deleted(&self, row: u64) -> bool {
        self.stored_is_deleted(row)
            || (!self.delta.deleted.is_empty() && self.delta.deleted.contains(&row))
    }

    /// The live row whose primary key equals `key`.
    /// Panics on a checksum mismatch (see [`NodeTable::try_lookup`]).
    pub fn lookup(&self, key: &Value) -> Option<u32> {
        self.try_lookup(key)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The live row whose primary key equals `key`, verifying only the blocks it reads.
    pub fn try_lookup(&self, key: &Value) -> Result<Option<u32>, ChecksumMismatch> {
        if let Some(&row) = self.delta.keys.get(key) {
            return Ok(Some(row as u32));
        }
        let keys = &self.columns[self.primary_key];
        let Some(row) = self.pk_index.try_lookup(keys, key)? else {
            return Ok(None);
        };
        Ok((!self.try_is_deleted(u64::from(row))?).then_some(row))
    }

    /// [`NodeTable::is_deleted`], verifying only the block of the bitmap holding the row.
    pub fn try_is_deleted(&self, row: u64) -> Result<bool, ChecksumMismatch> {
        let stored = match &self.deleted {
            Some(deleted) => deleted.try_get(row as usize)?,
            None => false,
        };
        Ok(stored || (!self.delta.deleted.is_empty() && self.delta.deleted.contains(&row)))
    }

    /// Panics on a checksum mismatch (see [`NodeTable::try_value`]).
    pub fn value(&self, row: u64, property: usize) -> Value {
        self.try_value(row, property)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The value of `property` at `row`, verifying only the blocks it is read from.
    pub fn try_value(&self, row: u64, property: usize) -> Result<Value, ChecksumMismatch> {
        if row >= self.num_rows {
            return Ok(self.delta.appended[(row - self.num_rows) as usize][property].clone());
        }
        if !self.delta.updates.is_empty() {
            if let Some(value) = self.delta.updates.get(&(row, property as u32)) {
                return Ok(value.clone());
            }
        }
        self.columns[property].try_get(row as usize)
    }

    /// A new version with `change` applied to the delta (O(change · log n)).
    pub fn with_delta(&self, change: impl FnOnce(&mut NodeDelta, &mut i64, u64)) -> Self {
        let mut next = Self {
            delta: self.delta.clone(),
            ..self.clone()
        };
        change(&mut next.delta, &mut next.next_serial, self.num_rows);
        next
    }

    /// The same rows with the delta folded into new in-memory columns, index and tombstones:
    /// what a checkpoint writes. O(table).
    pub fn folded(&self) -> Result<Self, String> {
        if self.delta.is_empty() {
            return Ok(self.clone());
        }
        let rows = self.num_rows() as usize;
        let mut columns = Vec::with_capacity(self.columns.len());
        for (index, column) in self.columns.iter().enumerate() {
            columns.push(self.fold_column(index, column)?);
        }
        let deleted = fold_tombstones(self.deleted.as_ref(), &self.delta.deleted, rows);
        let pk_index = PrimaryKeyIndex::build(&columns[self.primary_key], deleted.as_ref())
            .map_err(|_| "duplicate primary key while folding a delta".to_string())?;
        Self::from_parts(
            columns,
            self.primary_key,
            pk_index,
            deleted,
            self.next_serial,
        )
    }

    fn fold_column(&self, index: usize, column: &Column) -> Result<Column, String> {
        let updated = self.delta.updates.keys().any(|&(_, p)| p as usize == index);
        let mut builder = if updated {
            let mut builder = ColumnBuilder::new(column.ty().clone());
            builder.reserve(self.num_rows() as usize);
            for row in 0..column.len() {
                builder.push(&self.value(row as u64, index))?;
            }
            builder
        } else {
            ColumnBuilder::from_column(column)
        };
        for row in &self.delta.appended {
            builder.push(&row[index])?;
        }
        Ok(builder.finish())
    }
}
