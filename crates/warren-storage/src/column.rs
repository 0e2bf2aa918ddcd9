//! A column: the values of one property across the rows of a table, in row order. Fixed-width
//! types are stored as a dense array; variable-size types (strings, blobs, nested values) as
//! offsets into a data area holding [`crate::value_codec`] encodings. NULLs live in a bitmap.
//!
//! Vector columns (`FLOAT[n]`, `DOUBLE[n]`) are one contiguous block of `rows * n` values, no
//! per-row header: row `r` is elements `r*n .. (r+1)*n`, readable in place as `&[f32]`/`&[f64]`
//! (the block starts 64-byte aligned in a segment and 8-byte aligned in memory; a row starts
//! at a multiple of the element size). A NULL row holds zeros; a NULL element (Kùzu allows
//! them) holds zero and is marked in an element bitmap of `rows * n` bits, absent when no
//! element is NULL, so the distance kernels read a NULL element as 0, as Kùzu does.

use warren_common::types::LogicalType;
use warren_common::value::Value;

use crate::buffer::{Bitmap, Bytes};
use crate::section_check::ChecksumMismatch;
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
    /// `len * dim` elements, contiguous; NULL elements marked in `element_nulls`.
    Vector {
        element: VectorElement,
        dim: usize,
        values: Bytes,
        element_nulls: Option<Bitmap>,
    },
}

/// The element type of a vector column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorElement {
    F32,
    F64,
}

impl VectorElement {
    pub fn bytes(self) -> usize {
        match self {
            VectorElement::F32 => 4,
            VectorElement::F64 => 8,
        }
    }
}

/// The contiguous layout of a type, if it has one: `FLOAT[n]` and `DOUBLE[n]` with `n > 0`.
pub fn vector_layout(ty: &LogicalType) -> Option<(VectorElement, usize)> {
    match ty {
        LogicalType::Array(element, n) if *n > 0 => match **element {
            LogicalType::Float => Some((VectorElement::F32, *n as usize)),
            LogicalType::Double => Some((VectorElement::F64, *n as usize)),
            _ => None,
        },
        _ => None,
    }
}

/// How a column's parts are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartsLayout {
    /// `values` holds fixed-width values or u64 offsets into `data` (by the type).
    Scalar,
    /// `values` holds the contiguous elements of a vector column; `data` its element-null
    /// bitmap (empty when no element is NULL).
    Vector,
}

/// The raw parts of a column, as written to and read from a segment file.
#[derive(Clone, Debug)]
pub struct ColumnParts {
    pub layout: PartsLayout,
    /// Fixed-width values, the u64 offsets of a variable-size column, or a vector block.
    pub values: Bytes,
    /// The data area of a variable-size column, the element nulls of a vector column (empty
    /// for fixed-width columns).
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
        let storage = match (parts.layout, ty.fixed_width()) {
            (PartsLayout::Vector, _) => vector_storage(&ty, len, parts.values, parts.data)?,
            (PartsLayout::Scalar, Some(width)) => {
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
            (PartsLayout::Scalar, None) => {
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
            Storage::Vector {
                values,
                element_nulls,
                ..
            } => {
                values.verify()?;
                element_nulls
                    .as_ref()
                    .map_or(Ok(()), |n| n.bytes().verify())
            }
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
                layout: PartsLayout::Scalar,
                values: bytes.clone(),
                data: Bytes::empty(),
                nulls,
            },
            Storage::Vector {
                values,
                element_nulls,
                ..
            } => ColumnParts {
                layout: PartsLayout::Vector,
                values: values.clone(),
                data: element_nulls
                    .as_ref()
                    .map_or_else(Bytes::empty, |n| n.bytes().clone()),
                nulls,
            },
            Storage::Variable { offsets, data } => ColumnParts {
                layout: PartsLayout::Scalar,
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

    /// The null bitmap's words (bit `row % 64` of word `row / 64`), read once where a loop
    /// tests many rows; `None` when no row is NULL.
    pub fn null_words(&self) -> Option<&[u64]> {
        self.nulls.as_ref().map(|n| n.bytes().cast::<u64>())
    }

    pub fn is_null(&self, row: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.get(row))
    }

    /// Whether `row` is NULL, reading only its block of the bitmap.
    fn try_is_null(&self, row: usize) -> Result<bool, ChecksumMismatch> {
        self.nulls.as_ref().map_or(Ok(false), |n| n.try_get(row))
    }

    /// The value at `row`. Panics if `row` is out of range (callers iterate table rows) or on
    /// a checksum mismatch (see [`Column::try_get`]).
    pub fn get(&self, row: usize) -> Value {
        self.try_get(row)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The value at `row`, verifying only the blocks it is read from.
    pub fn try_get(&self, row: usize) -> Result<Value, ChecksumMismatch> {
        assert!(
            row < self.len,
            "row {row} out of range for a column of {}",
            self.len
        );
        if self.try_is_null(row)? {
            return Ok(Value::Null);
        }
        let decoded = match &self.storage {
            Storage::Fixed { width, bytes } => {
                let slice = bytes.try_range(row * width..(row + 1) * width)?;
                Decoder::new(slice).decode_fixed(&self.ty)
            }
            Storage::Variable { offsets, data } => {
                let range = offsets.try_range(row * 8..row * 8 + 16)?;
                let start = u64::from_le_bytes(range[..8].try_into().expect("8 bytes"));
                let end = u64::from_le_bytes(range[8..].try_into().expect("8 bytes"));
                let slice = data.try_range(start as usize..end as usize)?;
                Decoder::new(slice).decode(&self.ty)
            }
            Storage::Vector {
                values,
                element_nulls,
                ..
            } => {
                values.try_bytes()?;
                if let Some(nulls) = element_nulls {
                    nulls.bytes().try_bytes()?;
                }
                return Ok(self.vector_value(row));
            }
        };
        // Columns are validated when built or loaded; a decoding failure here is a bug.
        Ok(decoded.unwrap_or_else(|e| panic!("corrupt column value at row {row}: {e}")))
    }

    /// Whether the column holds INT64 or SERIAL values in place.
    pub fn is_int64(&self) -> bool {
        matches!(
            (&self.ty, &self.storage),
            (
                LogicalType::Int64 | LogicalType::Serial,
                Storage::Fixed { .. }
            )
        )
    }

    /// The INT64 value at `row` of an INT64 or SERIAL column (0 for a NULL row), verifying
    /// only its block.
    pub fn try_int64_at(&self, row: usize) -> Result<i64, ChecksumMismatch> {
        let Storage::Fixed { bytes, .. } = &self.storage else {
            panic!("try_int64_at on a column that is not INT64");
        };
        let slice = bytes.try_range(row * 8..row * 8 + 8)?;
        Ok(i64::from_le_bytes(slice.try_into().expect("8 bytes")))
    }

    /// Verifies every block of the column now (for readers of whole slices).
    pub fn try_verify(&self) -> Result<(), ChecksumMismatch> {
        if let Some(nulls) = &self.nulls {
            nulls.bytes().try_bytes()?;
        }
        match &self.storage {
            Storage::Fixed { bytes, .. } => bytes.try_bytes().map(|_| ()),
            Storage::Vector {
                values,
                element_nulls,
                ..
            } => {
                values.try_bytes()?;
                element_nulls
                    .as_ref()
                    .map_or(Ok(()), |n| n.bytes().try_bytes().map(|_| ()))
            }
            Storage::Variable { offsets, data } => {
                offsets.try_bytes()?;
                data.try_bytes().map(|_| ())
            }
        }
    }

    /// Whether every block of the column is verified, so that no read of it can meet a
    /// checksum mismatch (owned columns always are).
    pub fn is_verified(&self) -> bool {
        let nulls = self.nulls.as_ref().is_none_or(|n| n.bytes().is_verified());
        nulls
            && match &self.storage {
                Storage::Fixed { bytes, .. } => bytes.is_verified(),
                Storage::Variable { offsets, data } => offsets.is_verified() && data.is_verified(),
                Storage::Vector {
                    values,
                    element_nulls,
                    ..
                } => {
                    values.is_verified()
                        && element_nulls
                            .as_ref()
                            .is_none_or(|n| n.bytes().is_verified())
                }
            }
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

    /// The row's elements of a vector column as a list value (NULL elements as NULL).
    fn vector_value(&self, row: usize) -> Value {
        let Storage::Vector {
            element,
            dim,
            values,
            element_nulls,
        } = &self.storage
        else {
            unreachable!("vector_value on a non-vector column")
        };
        let is_null = |i: usize| element_nulls.as_ref().is_some_and(|n| n.get(row * dim + i));
        let items: Vec<Value> = match element {
            VectorElement::F32 => values.cast::<f32>()[row * dim..(row + 1) * dim]
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    if is_null(i) {
                        Value::Null
                    } else {
                        Value::Float(x)
                    }
                })
                .collect(),
            VectorElement::F64 => values.cast::<f64>()[row * dim..(row + 1) * dim]
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    if is_null(i) {
                        Value::Null
                    } else {
                        Value::Double(x)
                    }
                })
                .collect(),
        };
        Value::List(items.into())
    }

    /// The contiguous block of a `FLOAT[n]` column with `n` (NULL rows and elements hold 0).
    pub fn vector_f32(&self) -> Option<(&[f32], usize)> {
        match &self.storage {
            Storage::Vector {
                element: VectorElement::F32,
                dim,
                values,
                ..
            } => Some((values.cast(), *dim)),
            _ => None,
        }
    }

    /// A weak handle on the contiguous block of a vector column: it names this block (and no
    /// later one) for as long as the block is alive. Caches of copies of the block key on it.
    pub fn vector_block_handle(&self) -> Option<crate::buffer::WeakBytes> {
        match &self.storage {
            Storage::Vector { values, .. } => Some(values.downgrade()),
            _ => None,
        }
    }

    /// Whether `handle` names this column's vector block.
    pub fn has_vector_block(&self, handle: &crate::buffer::WeakBytes) -> bool {
        match &self.storage {
            Storage::Vector { values, .. } => handle.is_of(values),
            _ => false,
        }
    }

    /// The contiguous block of a `DOUBLE[n]` column with `n` (NULL rows and elements hold 0).
    pub fn vector_f64(&self) -> Option<(&[f64], usize)> {
        match &self.storage {
            Storage::Vector {
                element: VectorElement::F64,
                dim,
                values,
                ..
            } => Some((values.cast(), *dim)),
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

/// The storage of a vector column read from disk: `len * dim` elements, and an element-null
/// bitmap of `len * dim` bits or nothing.
fn vector_storage(
    ty: &LogicalType,
    len: usize,
    values: Bytes,
    element_nulls: Bytes,
) -> Result<Storage, String> {
    let (element, dim) =
        vector_layout(ty).ok_or_else(|| format!("a {ty} column has no vector layout"))?;
    let elements = len * dim;
    if values.len() != elements * element.bytes() {
        return Err(format!(
            "vector column has {} bytes, expected {}",
            values.len(),
            elements * element.bytes()
        ));
    }
    let element_nulls = match element_nulls.len() {
        0 => None,
        bytes if bytes * 8 >= elements => Some(Bitmap::from_bytes(element_nulls, elements)),
        _ => return Err("element null bitmap shorter than the vector column".into()),
    };
    Ok(Storage::Vector {
        element,
        dim,
        values,
        element_nulls,
    })
}

/// Appends values to a new column.
#[derive(Debug)]
pub struct ColumnBuilder {
    ty: LogicalType,
    width: Option<usize>,
    vector: Option<(VectorElement, usize)>,
    /// Element-null bits of a vector column (grown only once an element is NULL).
    element_null_words: Vec<u64>,
    values: Vec<u8>,
    offsets: Vec<u64>,
    null_words: Vec<u64>,
    any_null: bool,
    len: usize,
}

impl ColumnBuilder {
    pub fn new(ty: LogicalType) -> Self {
        let vector = vector_layout(&ty);
        let width = vector.map(|(e, dim)| e.bytes() * dim).or(ty.fixed_width());
        Self {
            ty,
            width,
            vector,
            element_null_words: Vec::new(),
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
        if builder.vector.is_some() && !matches!(column.storage, Storage::Vector { .. }) {
            // A vector column read from a segment written before the contiguous layout:
            // rewritten value by value.
            for row in 0..column.len {
                builder
                    .push(&column.get(row))
                    .unwrap_or_else(|e| panic!("stored vector at row {row} is invalid: {e}"));
            }
            return builder;
        }
        match &column.storage {
            Storage::Fixed { bytes, .. } => builder.values.extend_from_slice(bytes.as_bytes()),
            Storage::Vector {
                values,
                element_nulls,
                ..
            } => {
                builder.values.extend_from_slice(values.as_bytes());
                if let Some(nulls) = element_nulls {
                    builder.element_null_words = nulls
                        .bytes()
                        .as_bytes()
                        .chunks(8)
                        .map(|chunk| {
                            let mut word = [0u8; 8];
                            word[..chunk.len()].copy_from_slice(chunk);
                            u64::from_le_bytes(word)
                        })
                        .collect();
                }
            }
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
        if let Some((element, dim)) = self.vector {
            self.push_vector(value, element, dim)?;
            self.advance(false);
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

    /// Appends the elements of a vector value (a list of exactly `dim` FLOAT or DOUBLE values
    /// or NULLs, as the cast to the column's type leaves it).
    fn push_vector(
        &mut self,
        value: &Value,
        element: VectorElement,
        dim: usize,
    ) -> Result<(), String> {
        let Value::List(items) = value else {
            return Err(format!("expected a {} value, got {value:?}", self.ty));
        };
        if items.len() != dim {
            return Err(format!(
                "Unsupported casting LIST with incorrect list entry to ARRAY. Expected: {dim}, \
                 Actual: {}.",
                items.len()
            ));
        }
        // Checked before anything is written, so that a refused value leaves no trace.
        if !items.iter().all(|v| v.is_null() || v.as_f64().is_some()) {
            return Err(format!("expected a {} value, got {value:?}", self.ty));
        }
        let first_element = self.len * dim;
        for (i, item) in items.iter().enumerate() {
            let x = item.as_f64().unwrap_or_else(|| {
                self.mark_element_null(first_element + i);
                0.0
            });
            match element {
                VectorElement::F32 => self.values.extend_from_slice(&(x as f32).to_le_bytes()),
                VectorElement::F64 => self.values.extend_from_slice(&x.to_le_bytes()),
            }
        }
        Ok(())
    }

    fn mark_element_null(&mut self, index: usize) {
        let words = index / 64 + 1;
        if self.element_null_words.len() < words {
            self.element_null_words.resize(words, 0);
        }
        self.element_null_words[index / 64] |= 1 << (index % 64);
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
        let storage = match (self.vector, self.width) {
            (Some((element, dim)), _) => {
                let elements = self.len * dim;
                let element_nulls = (!self.element_null_words.is_empty()).then(|| {
                    let mut words = self.element_null_words;
                    words.resize(elements.div_ceil(64), 0);
                    let bytes = words.len() * 8;
                    Bitmap::from_bytes(Bytes::from_words(words, bytes), elements)
                });
                Storage::Vector {
                    element,
                    dim,
                    values: Bytes::from_slice(&self.values),
                    element_nulls,
                }
            }
            (None, Some(width)) => Storage::Fixed {
                width,
                bytes: Bytes::from_slice(&self.values),
            },
            (None, None) => Storage::Variable {
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

    fn floats(values: &[Option<f32>]) -> Value {
        Value::List(
            values
                .iter()
                .map(|v| v.map_or(Value::Null, Value::Float))
                .collect::<Vec<_>>()
                .into(),
        )
    }

    #[test]
    fn vector_columns_are_one_contiguous_block() {
        let ty = LogicalType::Array(std::sync::Arc::new(LogicalType::Float), 3);
        let rows = [
            floats(&[Some(1.0), Some(2.0), Some(3.0)]),
            Value::Null,
            floats(&[Some(4.0), None, Some(6.0)]),
        ];
        let column = Column::from_values(ty.clone(), &rows).unwrap();
        let (block, dim) = column.vector_f32().unwrap();
        assert_eq!(dim, 3);
        assert_eq!(block, &[1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 0.0, 6.0]);
        assert_eq!(column.get(0), rows[0]);
        assert!(column.get(1).is_null());
        assert_eq!(column.get(2), rows[2]);
        assert!(column.vector_f64().is_none());

        let parts = column.parts();
        assert_eq!(parts.layout, PartsLayout::Vector);
        let rebuilt = Column::from_parts(ty.clone(), 3, parts).unwrap();
        assert_eq!(rebuilt.get(2), rows[2]);
        assert!(Column::from_parts(ty.clone(), 4, column.parts()).is_err());

        let mut builder = ColumnBuilder::from_column(&rebuilt);
        builder
            .push(&floats(&[None, Some(8.0), Some(9.0)]))
            .unwrap();
        let extended = builder.finish();
        assert_eq!(extended.get(2), rows[2]);
        assert_eq!(extended.get(3), floats(&[None, Some(8.0), Some(9.0)]));
    }

    #[test]
    fn legacy_variable_vector_columns_are_read_and_rewritten_contiguously() {
        let ty = LogicalType::Array(std::sync::Arc::new(LogicalType::Float), 2);
        let rows = [floats(&[Some(1.0), None]), Value::Null];
        // The layout segments had before: offsets into value_codec encodings.
        let mut offsets = vec![0u64];
        let mut data = Vec::new();
        for row in &rows {
            if !row.is_null() {
                value_codec::encode(&mut data, row, &ty).unwrap();
            }
            offsets.push(data.len() as u64);
        }
        let legacy = Column::from_parts(
            ty.clone(),
            2,
            ColumnParts {
                layout: PartsLayout::Scalar,
                values: Bytes::from_vec(offsets),
                data: Bytes::from_slice(&data),
                nulls: Some(Bitmap::from_bits(&[false, true]).bytes().clone()),
            },
        )
        .unwrap();
        assert_eq!(legacy.get(0), rows[0]);
        assert!(legacy.vector_f32().is_none());
        let mut builder = ColumnBuilder::from_column(&legacy);
        builder.push(&floats(&[Some(3.0), Some(4.0)])).unwrap();
        let rewritten = builder.finish();
        assert_eq!(
            rewritten.vector_f32().unwrap().0,
            &[1.0, 0.0, 0.0, 0.0, 3.0, 4.0]
        );
        assert_eq!(rewritten.get(0), rows[0]);
        assert!(rewritten.get(1).is_null());
    }

    #[test]
    fn vector_of_the_wrong_length_is_refused_with_kuzus_message() {
        let ty = LogicalType::Array(std::sync::Arc::new(LogicalType::Double), 2);
        let mut builder = ColumnBuilder::new(ty);
        let error = builder
            .push(&Value::List(vec![Value::Double(1.0)].into()))
            .unwrap_err();
        assert!(error.contains("Expected: 2, Actual: 1."), "{error}");
        assert_eq!(builder.len(), 0);
        builder
            .push(&Value::List(
                vec![Value::Double(1.0), Value::Double(2.5)].into(),
            ))
            .unwrap();
        let column = builder.finish();
        assert_eq!(column.vector_f64().unwrap(), (&[1.0, 2.5][..], 2));
    }
}
