//! Columns of fixed-width types (and strings) straight into Arrow arrays, handed to pyarrow
//! through the Arrow C data interface: the values never become Python objects. Other columns
//! (nested, nodes, rels, DECIMAL, UUID) take the row path in `warren._arrow`.

use std::sync::Arc;

use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::types::{
    Date32Type, DurationMicrosecondType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, PrimitiveArray, StringArray,
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
        _ => return None,
    };
    // A value of another type than the column's would have become NULL: take the row path.
    let nulls = values.iter().filter(|v| v.is_null()).count();
    (array.null_count() == nulls).then_some(array)
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
