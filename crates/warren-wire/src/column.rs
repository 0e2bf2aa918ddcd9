//! Column chunks: up to [`crate::limits::CHUNK_ROWS_MAX`] rows of one column. Fixed-width
//! columns without NULLs are a plain `Vec` of values, which bincode lays out as a u64 length
//! followed by the values' little-endian bytes: the encoder copies them with one `memcpy`.
//! Variable-width columns are Arrow-like: `rows + 1` u32 offsets into one buffer.

use serde::{Deserialize, Serialize};

use crate::value::{InternalId, Interval, Node, Path, Rel, WireValue};

/// The data of one column chunk. Variant order is part of the format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub enum ColumnData {
    /// `n` rows, every one NULL (a column of untyped NULLs).
    Null(u64),
    Bool(Vec<bool>),
    Int8(Vec<i8>),
    Int16(Vec<i16>),
    /// INT32 and DATE (days since 1970-01-01).
    Int32(Vec<i32>),
    /// INT64, SERIAL and the TIMESTAMP types (in their units since the epoch).
    Int64(Vec<i64>),
    /// INT128 and DECIMAL (unscaled).
    Int128(Vec<i128>),
    UInt8(Vec<u8>),
    UInt16(Vec<u16>),
    UInt32(Vec<u32>),
    UInt64(Vec<u64>),
    /// UUID.
    UInt128(Vec<u128>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Interval(Vec<Interval>),
    InternalId(Vec<InternalId>),
    String(StringColumn),
    Blob(BlobColumn),
    /// LIST and ARRAY.
    List(ListColumn),
    /// One child column per field, in the header's field order, each with the chunk's rows.
    Struct(Vec<ColumnData>),
    Map(MapColumn),
    Node(Vec<Node>),
    Rel(Vec<Rel>),
    /// RECURSIVE_REL and named paths.
    Path(Vec<Path>),
    /// Row-wise values, for columns of mixed or unknown type and for UNION.
    Values(Vec<WireValue>),
    /// A column with NULLs: a validity bitmap and the values (a default value in NULL rows).
    Nullable(NullableColumn),
}

/// Strings: row `i` is `text[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct StringColumn {
    pub offsets: Vec<u32>,
    pub text: String,
}

/// Blobs: row `i` is `bytes[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct BlobColumn {
    pub offsets: Vec<u32>,
    pub bytes: Vec<u8>,
}

/// Lists: row `i` holds the child rows `offsets[i]..offsets[i + 1]` of `values`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct ListColumn {
    pub offsets: Vec<u32>,
    #[cfg_attr(
        any(test, feature = "wincode"),
        wincode(with = "crate::wincode_support::Boxed<ColumnData>")
    )]
    pub values: Box<ColumnData>,
}

/// Maps: row `i` holds the entries `offsets[i]..offsets[i + 1]` of `keys` and `values`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct MapColumn {
    pub offsets: Vec<u32>,
    #[cfg_attr(
        any(test, feature = "wincode"),
        wincode(with = "crate::wincode_support::Boxed<ColumnData>")
    )]
    pub keys: Box<ColumnData>,
    #[cfg_attr(
        any(test, feature = "wincode"),
        wincode(with = "crate::wincode_support::Boxed<ColumnData>")
    )]
    pub values: Box<ColumnData>,
}

/// A column with NULLs: bit `i % 8` of `valid[i / 8]` is set when row `i` is not NULL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct NullableColumn {
    pub valid: Vec<u8>,
    #[cfg_attr(
        any(test, feature = "wincode"),
        wincode(with = "crate::wincode_support::Boxed<ColumnData>")
    )]
    pub values: Box<ColumnData>,
}

/// No rows: one offset, 0.
impl Default for StringColumn {
    fn default() -> Self {
        StringColumn {
            offsets: vec![0],
            text: String::new(),
        }
    }
}

impl StringColumn {
    /// Row `i`, or `None` when out of range or when the offsets are not valid for `text`.
    pub fn get(&self, row: usize) -> Option<&str> {
        let start = *self.offsets.get(row)? as usize;
        let end = *self.offsets.get(row + 1)? as usize;
        self.text.get(start..end)
    }

    pub fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Builds a column from strings (offsets start at 0).
    pub fn from_strs<'a>(strings: impl IntoIterator<Item = &'a str>) -> StringColumn {
        let mut column = StringColumn {
            offsets: vec![0],
            text: String::new(),
        };
        for text in strings {
            column.push(text);
        }
        column
    }

    pub fn push(&mut self, text: &str) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.text.push_str(text);
        let end = u32::try_from(self.text.len()).expect("a string chunk holds < 4 GiB");
        self.offsets.push(end);
    }
}

/// No rows: one offset, 0.
impl Default for BlobColumn {
    fn default() -> Self {
        BlobColumn {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }
}

impl BlobColumn {
    pub fn get(&self, row: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(row)? as usize;
        let end = *self.offsets.get(row + 1)? as usize;
        self.bytes.get(start..end)
    }

    pub fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.bytes.extend_from_slice(bytes);
        let end = u32::try_from(self.bytes.len()).expect("a blob chunk holds < 4 GiB");
        self.offsets.push(end);
    }
}

impl NullableColumn {
    /// Whether row `i` holds a value.
    pub fn is_valid(&self, row: usize) -> bool {
        self.valid
            .get(row / 8)
            .is_some_and(|byte| byte & (1 << (row % 8)) != 0)
    }
}

impl ColumnData {
    /// The number of rows in the chunk.
    pub fn rows(&self) -> usize {
        match self {
            ColumnData::Null(rows) => usize::try_from(*rows).unwrap_or(usize::MAX),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Int8(v) => v.len(),
            ColumnData::Int16(v) => v.len(),
            ColumnData::Int32(v) => v.len(),
            ColumnData::Int64(v) => v.len(),
            ColumnData::Int128(v) => v.len(),
            ColumnData::UInt8(v) => v.len(),
            ColumnData::UInt16(v) => v.len(),
            ColumnData::UInt32(v) => v.len(),
            ColumnData::UInt64(v) => v.len(),
            ColumnData::UInt128(v) => v.len(),
            ColumnData::Float(v) => v.len(),
            ColumnData::Double(v) => v.len(),
            ColumnData::Interval(v) => v.len(),
            ColumnData::InternalId(v) => v.len(),
            ColumnData::String(c) => c.rows(),
            ColumnData::Blob(c) => c.rows(),
            ColumnData::List(c) => c.offsets.len().saturating_sub(1),
            ColumnData::Map(c) => c.offsets.len().saturating_sub(1),
            ColumnData::Struct(fields) => fields.first().map_or(0, ColumnData::rows),
            ColumnData::Node(v) => v.len(),
            ColumnData::Rel(v) => v.len(),
            ColumnData::Path(v) => v.len(),
            ColumnData::Values(v) => v.len(),
            ColumnData::Nullable(c) => c.values.rows(),
        }
    }
}
