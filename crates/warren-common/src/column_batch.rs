//! Column batches: a slice of a query result as one typed vector per column. INT64, DOUBLE, BOOL
//! and STRING columns are plain arrays with a validity mask (what Arrow, a wire codec or a
//! DataFrame wants); every other type falls back to a vector of [`Value`]s. A batch holds at
//! most a few thousand rows, so a consumer that reads batch by batch holds a bounded amount.

use crate::types::LogicalType;
use crate::value::Value;

/// One column of a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnVector {
    /// INT64 and SERIAL values (0 where NULL).
    Int64 {
        values: Vec<i64>,
        validity: Validity,
    },
    /// DOUBLE values (0.0 where NULL).
    Double {
        values: Vec<f64>,
        validity: Validity,
    },
    Bool {
        values: Vec<bool>,
        validity: Validity,
    },
    /// UTF-8 strings: row `i` is `data[offsets[i]..offsets[i + 1]]` (empty where NULL).
    String {
        offsets: Vec<i32>,
        data: Vec<u8>,
        validity: Validity,
    },
    /// Any other type, one value per row.
    Values(Vec<Value>),
}

/// Which rows of a typed vector are valid (not NULL): `None` when all are.
pub type Validity = Option<Vec<bool>>;

impl ColumnVector {
    pub fn len(&self) -> usize {
        match self {
            ColumnVector::Int64 { values, .. } => values.len(),
            ColumnVector::Double { values, .. } => values.len(),
            ColumnVector::Bool { values, .. } => values.len(),
            ColumnVector::String { offsets, .. } => offsets.len() - 1,
            ColumnVector::Values(values) => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn validity(&self) -> Option<&[bool]> {
        match self {
            ColumnVector::Int64 { validity, .. }
            | ColumnVector::Double { validity, .. }
            | ColumnVector::Bool { validity, .. }
            | ColumnVector::String { validity, .. } => validity.as_deref(),
            ColumnVector::Values(_) => None,
        }
    }

    pub fn is_null(&self, row: usize) -> bool {
        match self {
            ColumnVector::Values(values) => values[row].is_null(),
            other => other.validity().is_some_and(|v| !v[row]),
        }
    }

    /// The string at `row` of a STRING vector (`None` where NULL or for other vectors).
    pub fn str_at(&self, row: usize) -> Option<&str> {
        match self {
            ColumnVector::String {
                offsets,
                data,
                validity,
            } if validity.as_ref().is_none_or(|v| v[row]) => {
                let bytes = &data[offsets[row] as usize..offsets[row + 1] as usize];
                // Built from `&str`s only, so always UTF-8.
                Some(std::str::from_utf8(bytes).expect("string vectors hold UTF-8"))
            }
            _ => None,
        }
    }

    /// The value at `row`, as the row path would give it.
    pub fn value(&self, row: usize) -> Value {
        if self.is_null(row) {
            return Value::Null;
        }
        match self {
            ColumnVector::Int64 { values, .. } => Value::Int64(values[row]),
            ColumnVector::Double { values, .. } => Value::Double(values[row]),
            ColumnVector::Bool { values, .. } => Value::Bool(values[row]),
            ColumnVector::String { .. } => Value::string(self.str_at(row).unwrap_or_default()),
            ColumnVector::Values(values) => values[row].clone(),
        }
    }

    /// Bytes the vector holds (for memory accounting).
    pub fn bytes(&self) -> usize {
        let validity = self.validity().map_or(0, <[bool]>::len);
        validity
            + match self {
                ColumnVector::Int64 { values, .. } => values.len() * 8,
                ColumnVector::Double { values, .. } => values.len() * 8,
                ColumnVector::Bool { values, .. } => values.len(),
                ColumnVector::String { offsets, data, .. } => offsets.len() * 4 + data.len(),
                ColumnVector::Values(values) => values.len() * std::mem::size_of::<Value>(),
            }
    }
}

/// Rows `[0, len)` of a result, one vector per column.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnBatch {
    pub columns: Vec<ColumnVector>,
    len: usize,
}

impl ColumnBatch {
    /// A batch of `len` rows; every column must have `len` rows.
    pub fn new(columns: Vec<ColumnVector>, len: usize) -> Self {
        assert!(
            columns.iter().all(|c| c.len() == len),
            "every column of a batch has the batch's row count"
        );
        Self { columns, len }
    }

    /// Typed vectors from rows of values, for columns of `types` (a column whose values do not
    /// all have the column's type keeps them as values).
    pub fn from_rows(types: &[LogicalType], rows: &[Vec<Value>]) -> Self {
        let columns = types
            .iter()
            .enumerate()
            .map(|(index, ty)| {
                let mut builder = VectorBuilder::new(ty, rows.len());
                for row in rows {
                    builder.push(&row[index]);
                }
                builder.finish()
            })
            .collect();
        Self::new(columns, rows.len())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Row `row` as values.
    pub fn row(&self, row: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c.value(row)).collect()
    }

    pub fn bytes(&self) -> usize {
        self.columns.iter().map(ColumnVector::bytes).sum()
    }
}

/// Appends values to one column vector, typed when the column's type allows it. A value of
/// another type than the column's turns the vector into a vector of values (nothing is lost).
#[derive(Debug)]
pub struct VectorBuilder {
    vector: ColumnVector,
    capacity: usize,
}

impl VectorBuilder {
    pub fn new(ty: &LogicalType, capacity: usize) -> Self {
        Self {
            vector: empty_vector(ty, capacity),
            capacity,
        }
    }

    pub fn len(&self) -> usize {
        self.vector.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vector.is_empty()
    }

    pub fn push_null(&mut self) {
        match &mut self.vector {
            ColumnVector::Int64 { values, validity } => {
                push_validity(validity, values.len(), false);
                values.push(0);
            }
            ColumnVector::Double { values, validity } => {
                push_validity(validity, values.len(), false);
                values.push(0.0);
            }
            ColumnVector::Bool { values, validity } => {
                push_validity(validity, values.len(), false);
                values.push(false);
            }
            ColumnVector::String {
                offsets,
                data: _,
                validity,
            } => {
                push_validity(validity, offsets.len() - 1, false);
                offsets.push(*offsets.last().expect("offsets start with 0"));
            }
            ColumnVector::Values(values) => values.push(Value::Null),
        }
    }

    #[inline]
    pub fn push_i64(&mut self, value: i64) {
        match &mut self.vector {
            ColumnVector::Int64 { values, validity } => {
                if let Some(validity) = validity {
                    validity.push(true);
                }
                values.push(value);
            }
            _ => self.push(&Value::Int64(value)),
        }
    }

    /// Appends valid INT64 values.
    pub fn extend_i64(&mut self, new: impl ExactSizeIterator<Item = i64>) {
        match &mut self.vector {
            ColumnVector::Int64 { values, validity } => {
                if let Some(validity) = validity {
                    validity.resize(validity.len() + new.len(), true);
                }
                values.extend(new);
            }
            _ => new.for_each(|v| self.push(&Value::Int64(v))),
        }
    }

    #[inline]
    pub fn push_f64(&mut self, value: f64) {
        match &mut self.vector {
            ColumnVector::Double { values, validity } => {
                if let Some(validity) = validity {
                    validity.push(true);
                }
                values.push(value);
            }
            _ => self.push(&Value::Double(value)),
        }
    }

    #[inline]
    pub fn push_str(&mut self, text: &str) {
        match &mut self.vector {
            ColumnVector::String {
                offsets,
                data,
                validity,
            } if data.len() + text.len() <= i32::MAX as usize => {
                if let Some(validity) = validity {
                    validity.push(true);
                }
                data.extend_from_slice(text.as_bytes());
                offsets.push(data.len() as i32);
            }
            _ => self.push(&Value::string(text)),
        }
    }

    /// Appends `value`.
    pub fn push(&mut self, value: &Value) {
        match (&mut self.vector, value) {
            (_, Value::Null) => self.push_null(),
            (ColumnVector::Int64 { .. }, Value::Int64(v)) => self.push_i64(*v),
            (ColumnVector::Double { .. }, Value::Double(v)) => self.push_f64(*v),
            (ColumnVector::Bool { values, validity }, Value::Bool(v)) => {
                if let Some(validity) = validity {
                    validity.push(true);
                }
                values.push(*v);
            }
            (ColumnVector::String { data, .. }, Value::String(s))
                if data.len() + s.len() <= i32::MAX as usize =>
            {
                self.push_str(s);
            }
            (ColumnVector::Values(values), value) => values.push(value.clone()),
            (_, value) => {
                self.switch_to_values();
                self.push(value);
            }
        }
    }

    /// Turns a typed vector into a vector of values.
    fn switch_to_values(&mut self) {
        let len = self.vector.len();
        let mut values = Vec::with_capacity(self.capacity.max(len + 1));
        values.extend((0..len).map(|row| self.vector.value(row)));
        self.vector = ColumnVector::Values(values);
    }

    pub fn finish(self) -> ColumnVector {
        self.vector
    }
}

fn empty_vector(ty: &LogicalType, capacity: usize) -> ColumnVector {
    match ty {
        LogicalType::Int64 | LogicalType::Serial => ColumnVector::Int64 {
            values: Vec::with_capacity(capacity),
            validity: None,
        },
        LogicalType::Double => ColumnVector::Double {
            values: Vec::with_capacity(capacity),
            validity: None,
        },
        LogicalType::Bool => ColumnVector::Bool {
            values: Vec::with_capacity(capacity),
            validity: None,
        },
        LogicalType::String => {
            let mut offsets = Vec::with_capacity(capacity + 1);
            offsets.push(0);
            ColumnVector::String {
                offsets,
                data: Vec::new(),
                validity: None,
            }
        }
        _ => ColumnVector::Values(Vec::with_capacity(capacity)),
    }
}

/// Records one row's validity; the mask is created (all valid so far) at the first NULL.
fn push_validity(validity: &mut Validity, len: usize, valid: bool) {
    match validity {
        Some(mask) => mask.push(valid),
        None if valid => {}
        None => {
            let mut mask = vec![true; len];
            mask.push(false);
            *validity = Some(mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_typed_vectors() {
        let types = [
            LogicalType::Int64,
            LogicalType::Double,
            LogicalType::Bool,
            LogicalType::String,
            LogicalType::Date,
        ];
        let rows = vec![
            vec![
                Value::Int64(1),
                Value::Double(0.5),
                Value::Bool(true),
                Value::string("x"),
                Value::Date(3),
            ],
            vec![
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
            vec![
                Value::Int64(-7),
                Value::Double(2.0),
                Value::Bool(false),
                Value::string(""),
                Value::Date(-1),
            ],
        ];
        let batch = ColumnBatch::from_rows(&types, &rows);
        assert!(matches!(batch.columns[0], ColumnVector::Int64 { .. }));
        assert!(matches!(batch.columns[3], ColumnVector::String { .. }));
        assert!(matches!(batch.columns[4], ColumnVector::Values(_)));
        for (index, row) in rows.iter().enumerate() {
            assert_eq!(&batch.row(index), row);
        }
    }

    #[test]
    fn a_value_of_another_type_keeps_the_column_as_values() {
        let rows = vec![
            vec![Value::Int64(1)],
            vec![Value::Int32(2)],
            vec![Value::Null],
        ];
        let batch = ColumnBatch::from_rows(&[LogicalType::Int64], &rows);
        assert!(matches!(batch.columns[0], ColumnVector::Values(_)));
        assert_eq!(batch.row(1), vec![Value::Int32(2)]);
        assert_eq!(batch.row(2), vec![Value::Null]);
    }
}
