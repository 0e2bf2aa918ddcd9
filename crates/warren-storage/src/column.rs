//! A column: the values of one property across the rows of a table, in row order. Fixed-width
//! types are stored as a dense array; variable-size types (strings, blobs, nested values) as
//! offsets into a data area holding [`crate::value_codec`] encodings. NULLs live in a bitmap.

use warren_common::types::LogicalType;
use warren_common::value::Value;

use crate::buffer::{Bitmap, Bytes};
use crate::value_codec::{self, Decoder};

#[derive(Clone, Debug)]
pub struct Column {
    ty: LogicalType,
    len: usize,
    storage: Storage,
    nulls: Option<Bitmap>,
}

#[derive(Clone, Debug)]
enum Storage {
    /// `len * width` bytes.
    Fixed { width: usize, bytes: Bytes },
    /// `len + 1` u64 offsets into `data`.
    Variable { offsets: Bytes, data: Bytes },
}

/// The raw parts of a column, as written to and read from a segment file.
#[derive(Clone, Debug)]
pub struct ColumnParts {
    /// Fixed-width values, or the u64 offsets of a variable-size column.
    pub values: Bytes,
    /// The data area of a variable-size column (empty for fixed-width columns).
    pub data: Bytes,
    pub nulls: Option<Bytes>,
}

impl Column {
    pub fn empty(ty: LogicalType) -> Self {
        ColumnBuilder::new(ty).finish()
    }

    /// Builds a column from values that already have the column's type (or are NULL).
    pub fn from_values(ty: LogicalType, values: &[Value]) -> Result<Self, String> {
        let mut builder = ColumnBuilder::new(ty);
        for value in values {
            builder.push(value)?;
        }
        Ok(builder.finish())
    }

    /// Reassembles a column from parts read from disk, checking every size invariant.
    pub fn from_parts(ty: LogicalType, len: usize, parts: ColumnParts) -> Result<Self, String> {
        let nulls = match parts.nulls {
            Some(bytes) if bytes.len() * 8 >= len => Some(Bitmap::from_bytes(bytes, len)),
            Some(_) => return Err("null bitmap shorter than the column".into()),
            None => None,
        };
        let storage = match ty.fixed_width() {
            Some(width) => {
                if parts.values.len() != len * width {
                    return Err(format!(
                        "fixed column has {} bytes, expected {}",
                        parts.values.len(),
                        len * width
                    ));
                }
                Storage::Fixed {
                    width,
                    bytes: parts.values,
                }
            }
            None => {
                // Sizes only: the offsets themselves are checked by `validate` (opening a
                // database reads nothing of its columns).
                if parts.values.len() != (len + 1) * 8 {
                    return Err("variable column offsets are inconsistent".into());
                }
                Storage::Variable {
                    offsets: parts.values,
                    data: parts.data,
                }
            }
        };
        Ok(Self {
            ty,
            len,
            storage,
            nulls,
        })
    }

    /// Checks a variable-size column's offsets: from 0, never decreasing, ending at the data
    /// length (`warren check`; O(rows)).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(nulls) = &self.nulls {
            nulls.bytes().verify()?;
        }
        match &self.storage {
            Storage::Fixed { bytes, .. } => bytes.verify(),
            Storage::Variable { offsets, data } => {
                offsets.verify()?;
                data.verify()?;
                let offsets: &[u64] = offsets.cast();
                let valid = offsets.windows(2).all(|w| w[0] <= w[1])
                    && offsets.last().copied() == Some(data.len() as u64)
                    && offsets.first().copied() == Some(0);
                if valid {
                    Ok(())
                } else {
                    Err("variable column offsets are inconsistent".into())
                }
            }
        }
    }

    pub fn parts(&self) -> ColumnParts {
        let nulls = self.nulls.as_ref().map(|n| n.bytes().clone());
        match &self.storage {
            Storage::Fixed { bytes, .. } => ColumnParts {
                values: bytes.clone(),
                data: Bytes::empty(),
                nulls,
            },
            Storage::Variable { offsets, data } => ColumnParts {
                values: offsets.clone(),
                data: data.clone(),
                nulls,
            },
        }
    }

    pub fn ty(&self) -> &LogicalType {
        &self.ty
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The NULL bitmap (a set bit is a NULL row), if the column has one.
    pub fn null_bitmap(&self) -> Option<&Bitmap> {
        self.nulls.as_ref()
    }

    pub fn is_null(&self, row: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.get(row))
    }

    /// The value at `row`. Panics if `row` is out of range (callers iterate table rows).
    pub fn get(&self, row: usize) -> Value {
        assert!(
            row < self.len,
            "row {row} out of range for a column of {}",
            self.len
        );
        if self.is_null(row) {
            return Value::Null;
        }
        let decoded = match &self.storage {
            Storage::Fixed { width, bytes } => {
                let slice = &bytes.as_bytes()[row * width..(row + 1) * width];
                Decoder::new(slice).decode_fixed(&self.ty)
            }
            Storage::Variable { offsets, data } => {
                let offsets: &[u64] = offsets.cast();
                let slice = &data.as_bytes()[offsets[row] as usize..offsets[row + 1] as usize];
                Decoder::new(slice).decode(&self.ty)
            }
        };
        // Columns are validated when built or loaded; a decoding failure here is a bug.
        decoded.unwrap_or_else(|e| panic!("corrupt column value at row {row}: {e}"))
    }

    /// The values of an INT64 or SERIAL column as a slice (NULL rows hold 0).
    pub fn int64_values(&self) -> Option<&[i64]> {
        match (&self.ty, &self.storage) {
            (LogicalType::Int64 | LogicalType::Serial, Storage::Fixed { bytes, .. }) => {
                Some(bytes.cast())
            }
            _ => None,
        }
    }

    /// The values of a DOUBLE column as a slice (NULL rows hold 0).
    pub fn double_values(&self) -> Option<&[f64]> {
        match (&self.ty, &self.storage) {
            (LogicalType::Double, Storage::Fixed { bytes, .. }) => Some(bytes.cast()),
            _ => None,
        }
    }

    /// The string at `row` without allocating, for STRING columns.
    pub fn str_at(&self, row: usize) -> Option<&str> {
        match (&self.ty, &self.storage) {
            (LogicalType::String, Storage::Variable { offsets, data }) if !self.is_null(row) => {
                let offsets: &[u64] = offsets.cast();
                let slice = &data.as_bytes()[offsets[row] as usize + 4..offsets[row + 1] as usize];
                std::str::from_utf8(slice).ok()
            }
            _ => None,
        }
    }

    pub fn has_nulls(&self) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.count_ones() > 0)
    }
}

/// Appends values to a new column.
#[derive(Debug)]
pub struct ColumnBuilder {
    ty: LogicalType,
    width: Option<usize>,
    values: Vec<u8>,
    offsets: Vec<u64>,
    null_words: Vec<u64>,
    any_null: bool,
    len: usize,
}

impl ColumnBuilder {
    pub fn new(ty: LogicalType) -> Self {
        let width = ty.fixed_width();
        Self {
            ty,
            width,
            values: Vec::new(),
            offsets: if width.is_some() { Vec::new() } else { vec![0] },
            null_words: Vec::new(),
            any_null: false,
            len: 0,
        }
    }

    /// A builder that starts with the rows of an existing column (for COPY into a non-empty
    /// table and for updates).
    pub fn from_column(column: &Column) -> Self {
        let mut builder = Self::new(column.ty.clone());
        match &column.storage {
            Storage::Fixed { bytes, .. } => builder.values.extend_from_slice(bytes.as_bytes()),
            Storage::Variable { offsets, data } => {
                builder.offsets = offsets.cast::<u64>().to_vec();
                builder.values.extend_from_slice(data.as_bytes());
            }
        }
        builder.len = column.len;
        builder.null_words = vec![0; column.len.div_ceil(64)];
        if let Some(nulls) = &column.nulls {
            for row in 0..column.len {
                if nulls.get(row) {
                    builder.null_words[row / 64] |= 1 << (row % 64);
                    builder.any_null = true;
                }
            }
        }
        builder
    }

    pub fn ty(&self) -> &LogicalType {
        &self.ty
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn reserve(&mut self, rows: usize) {
        if let Some(width) = self.width {
            self.values.reserve(rows * width);
        } else {
            self.offsets.reserve(rows);
        }
    }

    fn advance(&mut self, null: bool) {
        if self.len.is_multiple_of(64) {
            self.null_words.push(0);
        }
        if null {
            self.null_words[self.len / 64] |= 1 << (self.len % 64);
            self.any_null = true;
        }
        self.len += 1;
        if self.width.is_none() {
            self.offsets.push(self.values.len() as u64);
        }
    }

    pub fn push_null(&mut self) {
        if let Some(width) = self.width {
            self.values.resize(self.values.len() + width, 0);
        }
        self.advance(true);
    }

    /// Appends a value of the column's type, or NULL.
    pub fn push(&mut self, value: &Value) -> Result<(), String> {
        if value.is_null() {
            self.push_null();
            return Ok(());
        }
        let before = self.values.len();
        let written = if self.width.is_some() {
            value_codec::encode_fixed(&mut self.values, value, &self.ty)
        } else {
            value_codec::encode(&mut self.values, value, &self.ty)
        };
        if let Err(e) = written {
            self.values.truncate(before);
            return Err(e);
        }
        self.advance(false);
        Ok(())
    }

    /// Fast path for INT64 and SERIAL columns.
    pub fn push_i64(&mut self, value: i64) {
        debug_assert!(matches!(self.ty, LogicalType::Int64 | LogicalType::Serial));
        self.values.extend_from_slice(&value.to_le_bytes());
        self.advance(false);
    }

    /// Freezes the builder into an immutable column.
    pub fn finish(self) -> Column {
        let nulls = self.any_null.then(|| {
            let byte_len = self.null_words.len() * 8;
            Bitmap::from_bytes(Bytes::from_words(self.null_words, byte_len), self.len)
        });
        let storage = match self.width {
            Some(width) => Storage::Fixed {
                width,
                bytes: Bytes::from_slice(&self.values),
            },
            None => Storage::Variable {
                offsets: Bytes::from_vec(self.offsets),
                data: Bytes::from_slice(&self.values),
            },
        };
        Column {
            ty: self.ty,
            len: self.len,
            storage,
            nulls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_variable_columns_hold_values_and_nulls() {
        let ints = Column::from_values(
            LogicalType::Int64,
            &[Value::Int64(3), Value::Null, Value::Int64(-7)],
        )
        .unwrap();
        assert_eq!(ints.get(0), Value::Int64(3));
        assert!(ints.get(1).is_null());
        assert_eq!(ints.int64_values().unwrap(), &[3, 0, -7]);

        let strings =
            Column::from_values(LogicalType::String, &[Value::string("a"), Value::Null]).unwrap();
        assert_eq!(strings.get(0), Value::string("a"));
        assert_eq!(strings.str_at(0), Some("a"));
        assert!(strings.get(1).is_null());
    }

    #[test]
    fn builder_extends_an_existing_column() {
        let base = Column::from_values(LogicalType::String, &[Value::string("x")]).unwrap();
        let mut builder = ColumnBuilder::from_column(&base);
        builder.push(&Value::string("y")).unwrap();
        builder.push_null();
        let column = builder.finish();
        assert_eq!(column.len(), 3);
        assert_eq!(column.get(1), Value::string("y"));
        assert!(column.is_null(2));
    }

    #[test]
    fn parts_round_trip_and_reject_bad_offsets() {
        let column =
            Column::from_values(LogicalType::String, &[Value::string("ab"), Value::Null]).unwrap();
        let rebuilt = Column::from_parts(LogicalType::String, 2, column.parts()).unwrap();
        assert_eq!(rebuilt.get(0), Value::string("ab"));
        assert!(Column::from_parts(LogicalType::String, 3, column.parts()).is_err());
    }

    #[test]
    fn wrong_type_is_rejected_without_side_effects() {
        let mut builder = ColumnBuilder::new(LogicalType::Int64);
        assert!(builder.push(&Value::string("x")).is_err());
        assert_eq!(builder.len(), 0);
    }
}
