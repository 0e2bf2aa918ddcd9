//! Columns of fixed-width types (and strings) straight into Arrow arrays, handed to pyarrow
//! through the Arrow C data interface: the values never become Python objects. Other columns
//! (nested, nodes, rels, DECIMAL, UUID) take the row path in `warren._arrow`.

use std::ops::Range;
use std::sync::Arc;

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use warren_common::column_batch::ColumnVector;

use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::types::{
    Date32Type, DurationMicrosecondType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, FixedSizeListArray,
    Float32Array, Float64Array, PrimitiveArray, StringArray,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use warren_common::temporal::MICROS_PER_DAY;
use warren_common::types::LogicalType;
use warren_common::Value;

/// A primitive array from each value's `get` (NULL where it answers `None`).
fn primitive<T: ArrowPrimitiveType>(
    values: &[&Value],
    get: impl Fn(&Value) -> Option<T::Native>,
) -> PrimitiveArray<T> {
    values.iter().map(|v| get(v)).collect()
}

/// The values of one column as an Arrow array, or `None` for types this path does not build
/// (or values that do not all have the column's type).
pub fn column_array(ty: &LogicalType, values: &[&Value]) -> Option<ArrayRef> {
    use LogicalType as T;
    let array: ArrayRef = match ty {
        T::Bool => Arc::new(values.iter().map(|v| v.as_bool()).collect::<BooleanArray>()),
        T::Int8 => Arc::new(primitive::<Int8Type>(values, |v| {
            v.as_i64().map(|x| x as i8)
        })),
        T::Int16 => Arc::new(primitive::<Int16Type>(values, |v| {
            v.as_i64().map(|x| x as i16)
        })),
        T::Int32 => Arc::new(primitive::<Int32Type>(values, |v| {
            v.as_i64().map(|x| x as i32)
        })),
        T::Int64 | T::Serial => Arc::new(primitive::<Int64Type>(values, Value::as_i64)),
        T::UInt8 => Arc::new(primitive::<UInt8Type>(values, |v| {
            v.as_i64().map(|x| x as u8)
        })),
        T::UInt16 => Arc::new(primitive::<UInt16Type>(values, |v| {
            v.as_i64().map(|x| x as u16)
        })),
        T::UInt32 => Arc::new(primitive::<UInt32Type>(values, |v| {
            v.as_i64().map(|x| x as u32)
        })),
        T::UInt64 => Arc::new(primitive::<UInt64Type>(values, |v| {
            v.as_i128().map(|x| x as u64)
        })),
        T::Float => Arc::new(primitive::<Float32Type>(values, |v| {
            v.as_f64().map(|x| x as f32)
        })),
        T::Double => Arc::new(primitive::<Float64Type>(values, Value::as_f64)),
        T::Date => Arc::new(primitive::<Date32Type>(values, |v| match v {
            Value::Date(d) => Some(*d),
            _ => None,
        })),
        T::Timestamp => Arc::new(primitive::<TimestampMicrosecondType>(values, micros)),
        T::TimestampTz => {
            Arc::new(primitive::<TimestampMicrosecondType>(values, micros).with_timezone("UTC"))
        }
        T::TimestampNs => Arc::new(primitive::<TimestampNanosecondType>(values, |v| match v {
            Value::TimestampNs(x) => Some(*x),
            _ => None,
        })),
        T::TimestampMs => Arc::new(primitive::<TimestampMillisecondType>(values, |v| match v {
            Value::TimestampMs(x) => Some(*x),
            _ => None,
        })),
        T::TimestampSec => Arc::new(primitive::<TimestampSecondType>(values, |v| match v {
            Value::TimestampSec(x) => Some(*x),
            _ => None,
        })),
        T::Interval => Arc::new(primitive::<DurationMicrosecondType>(values, |v| match v {
            Value::Interval(i) => {
                Some((i64::from(i.months) * 30 + i64::from(i.days)) * MICROS_PER_DAY + i.micros)
            }
            _ => None,
        })),
        T::String => Arc::new(values.iter().map(|v| v.as_str()).collect::<StringArray>()),
        T::Blob => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Value::Blob(b) => Some(b.as_ref()),
                    _ => None,
                })
                .collect::<BinaryArray>(),
        ),
        T::Array(element, size) => fixed_size_list(element, *size as usize, values)?,
        _ => return None,
    };
    // A value of another type than the column's would have become NULL: take the row path.
    let nulls = values.iter().filter(|v| v.is_null()).count();
    (array.null_count() == nulls).then_some(array)
}

/// A FLOAT[n] or DOUBLE[n] column as an Arrow `FixedSizeList` of `n` float32 or float64
/// values (NULL rows and NULL elements as Arrow nulls).
fn fixed_size_list(element: &LogicalType, size: usize, values: &[&Value]) -> Option<ArrayRef> {
    let mut elements: Vec<Option<f64>> = Vec::with_capacity(values.len() * size);
    let mut valid = Vec::with_capacity(values.len());
    for value in values {
        match value {
            Value::List(items) if items.len() == size => {
                valid.push(true);
                elements.extend(items.iter().map(Value::as_f64));
            }
            Value::Null => {
                valid.push(false);
                elements.extend(std::iter::repeat_n(None, size));
            }
            _ => return None,
        }
    }
    let child: ArrayRef = match element {
        LogicalType::Float => Arc::new(
            elements
                .iter()
                .map(|x| x.map(|x| x as f32))
                .collect::<Float32Array>(),
        ),
        LogicalType::Double => Arc::new(elements.into_iter().collect::<Float64Array>()),
        _ => return None,
    };
    let field = Arc::new(arrow_schema::Field::new(
        "item",
        child.data_type().clone(),
        true,
    ));
    let size = i32::try_from(size).ok()?;
    let list = FixedSizeListArray::try_new(field, size, child, Some(NullBuffer::from(valid)));
    list.ok().map(|list| Arc::new(list) as ArrayRef)
}

/// Whether [`column_array`] builds columns of `ty`.
pub fn has_arrow_form(ty: &LogicalType) -> bool {
    use LogicalType as T;
    matches!(
        ty,
        T::Bool
            | T::Int8
            | T::Int16
            | T::Int32
            | T::Int64
            | T::Serial
            | T::UInt8
            | T::UInt16
            | T::UInt32
            | T::UInt64
            | T::Float
            | T::Double
            | T::Date
            | T::Timestamp
            | T::TimestampTz
            | T::TimestampNs
            | T::TimestampMs
            | T::TimestampSec
            | T::Interval
            | T::String
            | T::Blob
    ) || matches!(ty, T::Array(element, _) if matches!(**element, T::Float | T::Double))
}

fn micros(value: &Value) -> Option<i64> {
    match value {
        Value::Timestamp(x) | Value::TimestampTz(x) => Some(*x),
        _ => None,
    }
}

/// Hands `array` to pyarrow (`pyarrow.Array._import_from_c`), which takes ownership of its
/// buffers through the C data interface's release callbacks.
pub fn to_pyarrow<'py>(py: Python<'py>, array: &ArrayRef) -> PyResult<Bound<'py, PyAny>> {
    let (ffi_array, ffi_schema) =
        to_ffi(&array.to_data()).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let ffi_array: Box<FFI_ArrowArray> = Box::new(ffi_array);
    let ffi_schema: Box<FFI_ArrowSchema> = Box::new(ffi_schema);
    let array_address = std::ptr::from_ref::<FFI_ArrowArray>(&ffi_array) as usize;
    let schema_address = std::ptr::from_ref::<FFI_ArrowSchema>(&ffi_schema) as usize;
    let class = py.import("pyarrow")?.getattr("Array")?;
    // pyarrow moves the structs' contents out (leaving them released), so dropping the boxes
    // afterwards frees nothing twice.
    let imported = class.call_method1("_import_from_c", (array_address, schema_address))?;
    drop(ffi_array);
    drop(ffi_schema);
    Ok(imported)
}

/// One column of an Arrow chunk being filled from column batches: typed vectors are appended
/// as they are (no value is built), other columns as values.
#[derive(Debug)]
pub enum ColumnAccumulator {
    Int64(Vec<i64>, Vec<bool>, bool),
    Double(Vec<f64>, Vec<bool>, bool),
    Bool(Vec<bool>, Vec<bool>, bool),
    String(Vec<i32>, Vec<u8>, Vec<bool>, bool),
    Values(Vec<Value>),
}

impl ColumnAccumulator {
    /// An empty accumulator for a column of `ty`.
    pub fn new(ty: &LogicalType) -> Self {
        match ty {
            LogicalType::Int64 | LogicalType::Serial => Self::Int64(Vec::new(), Vec::new(), false),
            LogicalType::Double => Self::Double(Vec::new(), Vec::new(), false),
            LogicalType::Bool => Self::Bool(Vec::new(), Vec::new(), false),
            LogicalType::String => Self::String(vec![0], Vec::new(), Vec::new(), false),
            _ => Self::Values(Vec::new()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Int64(v, ..) => v.len(),
            Self::Double(v, ..) => v.len(),
            Self::Bool(v, ..) => v.len(),
            Self::String(offsets, ..) => offsets.len() - 1,
            Self::Values(v) => v.len(),
        }
    }

    /// Appends rows `rows` of `vector`.
    pub fn append(&mut self, vector: &ColumnVector, rows: Range<usize>) {
        match (self, vector) {
            (
                Self::Int64(values, valid, nulls),
                ColumnVector::Int64 {
                    values: v,
                    validity,
                },
            ) => append_fixed(values, valid, nulls, v, validity.as_deref(), rows),
            (
                Self::Double(values, valid, nulls),
                ColumnVector::Double {
                    values: v,
                    validity,
                },
            ) => append_fixed(values, valid, nulls, v, validity.as_deref(), rows),
            (
                Self::Bool(values, valid, nulls),
                ColumnVector::Bool {
                    values: v,
                    validity,
                },
            ) => append_fixed(values, valid, nulls, v, validity.as_deref(), rows),
            (
                Self::String(offsets, data, valid, nulls),
                ColumnVector::String {
                    offsets: o,
                    data: d,
                    validity,
                },
            ) if data.len() + (o[rows.end] - o[rows.start]) as usize <= i32::MAX as usize => {
                append_validity(
                    valid,
                    nulls,
                    offsets.len() - 1,
                    validity.as_deref(),
                    rows.clone(),
                );
                let base = *offsets.last().expect("offsets start with 0") - o[rows.start];
                offsets.extend(o[rows.start + 1..=rows.end].iter().map(|x| x + base));
                data.extend_from_slice(&d[o[rows.start] as usize..o[rows.end] as usize]);
            }
            (this, vector) => {
                this.switch_to_values();
                let Self::Values(values) = this else {
                    unreachable!("just turned into values")
                };
                values.extend(rows.map(|r| vector.value(r)));
            }
        }
    }

    /// Appends every row of `other`.
    pub fn extend(&mut self, mut other: ColumnAccumulator) {
        let len = other.len();
        let vector = other.take_vector();
        self.append(&vector, 0..len);
    }

    /// Turns the accumulator into one of values (for a batch whose vector is not typed).
    fn switch_to_values(&mut self) {
        if matches!(self, Self::Values(_)) {
            return;
        }
        let len = self.len();
        let mut taken = std::mem::replace(self, Self::Values(Vec::new()));
        let vector = taken.take_vector();
        *self = Self::Values((0..len).map(|r| vector.value(r)).collect());
    }

    /// The accumulated rows as a column vector (leaving the accumulator empty).
    fn take_vector(&mut self) -> ColumnVector {
        let validity = |valid: &mut Vec<bool>, nulls: bool| nulls.then(|| std::mem::take(valid));
        match self {
            Self::Int64(values, valid, nulls) => ColumnVector::Int64 {
                values: std::mem::take(values),
                validity: validity(valid, *nulls),
            },
            Self::Double(values, valid, nulls) => ColumnVector::Double {
                values: std::mem::take(values),
                validity: validity(valid, *nulls),
            },
            Self::Bool(values, valid, nulls) => ColumnVector::Bool {
                values: std::mem::take(values),
                validity: validity(valid, *nulls),
            },
            Self::String(offsets, data, valid, nulls) => ColumnVector::String {
                offsets: std::mem::replace(offsets, vec![0]),
                data: std::mem::take(data),
                validity: validity(valid, *nulls),
            },
            Self::Values(values) => ColumnVector::Values(std::mem::take(values)),
        }
    }

    /// The accumulated rows as an Arrow array of `ty` (moving the buffers, not copying them),
    /// or `None` when `ty` has no Arrow form here or a value does not have it.
    pub fn finish(mut self, ty: &LogicalType) -> Option<ArrayRef> {
        vector_array(ty, self.take_vector())
    }
}

/// Appends rows `rows` of a fixed-width vector (`source`, with its validity) to an
/// accumulator's values and validity.
fn append_fixed<T: Copy>(
    values: &mut Vec<T>,
    valid: &mut Vec<bool>,
    nulls: &mut bool,
    source: &[T],
    validity: Option<&[bool]>,
    rows: Range<usize>,
) {
    append_validity(valid, nulls, values.len(), validity, rows.clone());
    values.extend_from_slice(&source[rows]);
}

/// Keeps the validity of appended rows; the mask is only filled once a NULL has been seen.
fn append_validity(
    valid: &mut Vec<bool>,
    nulls: &mut bool,
    len: usize,
    validity: Option<&[bool]>,
    rows: Range<usize>,
) {
    match validity {
        Some(mask) if mask[rows.clone()].iter().any(|v| !v) => {
            if !*nulls {
                *nulls = true;
                valid.clear();
                valid.resize(len, true);
            }
            valid.extend_from_slice(&mask[rows]);
        }
        _ if *nulls => valid.resize(valid.len() + rows.len(), true),
        _ => {}
    }
}

fn null_buffer(validity: Option<Vec<bool>>) -> Option<NullBuffer> {
    validity.map(NullBuffer::from)
}

/// A column vector as an Arrow array of `ty`: typed vectors hand their buffers over.
pub fn vector_array(ty: &LogicalType, vector: ColumnVector) -> Option<ArrayRef> {
    Some(match vector {
        ColumnVector::Int64 { values, validity } => Arc::new(PrimitiveArray::<Int64Type>::new(
            ScalarBuffer::from(values),
            null_buffer(validity),
        )),
        ColumnVector::Double { values, validity } => Arc::new(PrimitiveArray::<Float64Type>::new(
            ScalarBuffer::from(values),
            null_buffer(validity),
        )),
        ColumnVector::Bool { values, validity } => Arc::new(BooleanArray::new(
            BooleanBuffer::from(values),
            null_buffer(validity),
        )),
        ColumnVector::String {
            offsets,
            data,
            validity,
        } => Arc::new(
            StringArray::try_new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                Buffer::from_vec(data),
                null_buffer(validity),
            )
            .ok()?,
        ),
        ColumnVector::Values(values) => {
            let refs: Vec<&Value> = values.iter().collect();
            return column_array(ty, &refs);
        }
    })
}
