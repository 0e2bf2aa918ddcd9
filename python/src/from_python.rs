//! Python objects as Warren values, for query parameters. Follows Kùzu's Python package: `int`
//! is INT64 (the narrowest integer inside lists, widened to the list's common type), `float` is
//! DOUBLE, `dict` with exactly the keys `key` and `value` holding lists of one length is a MAP
//! and any other `dict` a STRUCT, and a list's elements are converted to one common type.

use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList,
    PyString, PyTuple,
};
use pyo3::types::{PyDateAccess, PyDeltaAccess, PyTimeAccess, PyTzInfoAccess};
use warren_common::temporal::{days_from_civil, Interval, MICROS_PER_DAY, MICROS_PER_SECOND};
use warren_common::types::LogicalType;
use warren_common::value::{StructValue, UnionValue, Value};

/// Converts a parameter value.
pub fn from_python(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    convert(object, false)
}

/// Converts a user function's result to its declared type: lists, maps and structs element by
/// element (a `dict` is a MAP or a STRUCT as `ty` says), other values converted and cast.
pub fn from_python_as(object: &Bound<'_, PyAny>, ty: &LogicalType) -> PyResult<Value> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    let is_sequence = object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>();
    match (ty, object.cast::<PyDict>()) {
        (LogicalType::List(element) | LogicalType::Array(element, _), _) if is_sequence => {
            let items = object
                .try_iter()?
                .map(|item| from_python_as(&item?, element))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Value::list(items))
        }
        (LogicalType::Map(key_type, value_type), Ok(dict)) => {
            let mut entries = Vec::with_capacity(dict.len());
            for (key, value) in dict.iter() {
                entries.push((
                    from_python_as(&key, key_type)?,
                    from_python_as(&value, value_type)?,
                ));
            }
            Ok(Value::Map(entries.into()))
        }
        (LogicalType::Struct(fields), Ok(dict)) => {
            let mut values = Vec::with_capacity(fields.len());
            for field in fields.iter() {
                let value = match dict.get_item(&field.name)? {
                    Some(value) => from_python_as(&value, &field.ty)?,
                    None => Value::Null,
                };
                values.push((Arc::<str>::from(field.name.as_str()), value));
            }
            Ok(Value::Struct(Arc::new(StructValue { fields: values })))
        }
        _ => {
            let value = convert(object, false)?;
            if value.logical_type() == *ty {
                Ok(value)
            } else {
                cast_declared(value, ty)
            }
        }
    }
}

/// `in_list`: integers take the narrowest type (they are widened when the list is unified).
fn convert(object: &Bound<'_, PyAny>, in_list: bool) -> PyResult<Value> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    if object.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(object.extract()?));
    }
    if object.is_instance_of::<PyInt>() {
        return integer(object, in_list);
    }
    if object.is_instance_of::<PyFloat>() {
        return Ok(Value::Double(object.extract()?));
    }
    if let Ok(text) = object.cast::<PyString>() {
        return Ok(Value::string(text.to_str()?));
    }
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return Ok(Value::Blob(bytes.as_bytes().into()));
    }
    if let Ok(bytes) = object.cast::<PyByteArray>() {
        return Ok(Value::Blob(bytes.to_vec().into()));
    }
    if let Ok(datetime) = object.cast::<PyDateTime>() {
        return timestamp(datetime);
    }
    if let Ok(date) = object.cast::<PyDate>() {
        let days = days_from_civil(
            i64::from(date.get_year()),
            u32::from(date.get_month()),
            u32::from(date.get_day()),
        );
        return Ok(Value::Date(days as i32));
    }
    if let Ok(delta) = object.cast::<PyDelta>() {
        return Ok(Value::Interval(Interval {
            months: 0,
            days: delta.get_days(),
            micros: i64::from(delta.get_seconds()) * MICROS_PER_SECOND
                + i64::from(delta.get_microseconds()),
        }));
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        return dictionary(dict);
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let items = object
            .try_iter()?
            .map(|item| convert(&item?, true))
            .collect::<PyResult<Vec<_>>>()?;
        return unify_list(items);
    }
    other(object)
}

/// UUID, Decimal and numpy values, recognized by their class.
fn other(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    let class = object.get_type();
    let module: String = class.getattr("__module__")?.extract()?;
    let name: String = class.getattr("__qualname__")?.extract()?;
    match (module.as_str(), name.as_str()) {
        ("warren._scan", "Columns") => columns(object),
        ("warren._scan", "UnionMember") => union_member(object),
        ("uuid", "UUID") => Ok(Value::Uuid(object.getattr("int")?.extract()?)),
        ("decimal", "Decimal") => Ok(Value::Double(object.call_method0("__float__")?.extract()?)),
        ("numpy", _) if object.hasattr("tolist")? => convert(&object.call_method0("tolist")?, false),
        _ => Err(PyRuntimeError::new_err(format!(
            "Runtime exception: Cannot convert Python object to Kuzu value : unsupported type {module}.{name}"
        ))),
    }
}

/// A value of an Arrow UNION column (`warren._scan.UnionMember`): a UNION value tagged with its
/// member's name, which the column's declared UNION type then casts to the member's type.
fn union_member(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    let tag: String = object.getattr("tag")?.extract()?;
    let value = convert(&object.getattr("value")?, false)?;
    Ok(Value::Union(Arc::new(UnionValue {
        tag: Arc::from(tag),
        value,
    })))
}

/// A data frame as `warren._scan.Columns`: a STRUCT with one LIST per column. Each value is
/// converted on its own and cast to the column's declared type when the frame declares one (a
/// Kùzu type name); otherwise the binder finds the column's common type.
fn columns(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    let pairs: Vec<(String, Vec<Bound<'_, PyAny>>)> = object.getattr("columns")?.extract()?;
    let types: Vec<Option<String>> = object.getattr("types")?.extract()?;
    let mut fields = Vec::with_capacity(pairs.len());
    for ((name, values), type_name) in pairs.into_iter().zip(types) {
        let ty = type_name
            .map(|t| LogicalType::parse(&t).map_err(PyRuntimeError::new_err))
            .transpose()?;
        let values = values
            .iter()
            .map(|v| {
                let value = convert(v, false)?;
                match &ty {
                    Some(ty) => cast_declared(value, ty),
                    None => Ok(value),
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        fields.push((Arc::<str>::from(name), Value::list(values)));
    }
    Ok(Value::Struct(Arc::new(StructValue { fields })))
}

/// A frame value cast to its column's declared type, with Kùzu's error text.
fn cast_declared(value: Value, ty: &LogicalType) -> PyResult<Value> {
    warren_common::cast::cast_value(&value, ty).map_err(|_| {
        let shown = warren_common::format::to_kuzu_string(&value, &warren_common::value::NoGraph);
        PyRuntimeError::new_err(format!(
            "Conversion exception: Failed to cast value: Python value '{shown}' to {ty}"
        ))
    })
}

/// A Python int: INT64 (or the narrowest signed type inside a list); larger ones INT128.
fn integer(object: &Bound<'_, PyAny>, in_list: bool) -> PyResult<Value> {
    let value: i128 = object.extract().map_err(|_| {
        PyRuntimeError::new_err("Runtime exception: Python integer out of the INT128 range.")
    })?;
    Ok(match i64::try_from(value) {
        Err(_) => Value::Int128(value),
        Ok(v) if !in_list => Value::Int64(v),
        Ok(v) => match (i8::try_from(v), i16::try_from(v), i32::try_from(v)) {
            (Ok(v), _, _) => Value::Int8(v),
            (_, Ok(v), _) => Value::Int16(v),
            (_, _, Ok(v)) => Value::Int32(v),
            _ => Value::Int64(v),
        },
    })
}

/// A `datetime.datetime`: TIMESTAMP, or TIMESTAMP WITH TIME ZONE (in UTC) when it has a tzinfo.
fn timestamp(datetime: &Bound<'_, PyDateTime>) -> PyResult<Value> {
    let days = days_from_civil(
        i64::from(datetime.get_year()),
        u32::from(datetime.get_month()),
        u32::from(datetime.get_day()),
    );
    let seconds = i64::from(datetime.get_hour()) * 3600
        + i64::from(datetime.get_minute()) * 60
        + i64::from(datetime.get_second());
    let local =
        days * MICROS_PER_DAY + seconds * MICROS_PER_SECOND + i64::from(datetime.get_microsecond());
    if datetime.get_tzinfo().is_none() {
        return Ok(Value::Timestamp(local));
    }
    let offset = datetime.call_method0("utcoffset")?;
    let offset = offset.cast::<PyDelta>()?;
    let offset_micros = i64::from(offset.get_days()) * MICROS_PER_DAY
        + i64::from(offset.get_seconds()) * MICROS_PER_SECOND
        + i64::from(offset.get_microseconds());
    Ok(Value::TimestampTz(local - offset_micros))
}

/// A dict: a MAP when it is `{"key": [...], "value": [...]}` with lists of one length, else a
/// STRUCT. Struct field names must be strings.
fn dictionary(dict: &Bound<'_, PyDict>) -> PyResult<Value> {
    if let Some(map) = as_map(dict)? {
        return Ok(map);
    }
    let mut fields = Vec::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let name: String = key.str()?.extract()?;
        fields.push((Arc::<str>::from(name), convert(&value, false)?));
    }
    Ok(Value::Struct(Arc::new(StructValue { fields })))
}

fn as_map(dict: &Bound<'_, PyDict>) -> PyResult<Option<Value>> {
    if dict.len() != 2 {
        return Ok(None);
    }
    let (Some(keys), Some(values)) = (dict.get_item("key")?, dict.get_item("value")?) else {
        return Ok(None);
    };
    let (Ok(keys), Ok(values)) = (keys.cast::<PyList>(), values.cast::<PyList>()) else {
        return Ok(None);
    };
    if keys.len() != values.len() {
        return Ok(None);
    }
    let keys = keys
        .iter()
        .map(|k| convert(&k, true))
        .collect::<PyResult<Vec<_>>>()?;
    let values = values
        .iter()
        .map(|v| convert(&v, true))
        .collect::<PyResult<Vec<_>>>()?;
    let keys = unify(keys)?;
    let values = unify(values)?;
    Ok(Some(Value::Map(keys.into_iter().zip(values).collect())))
}

fn unify_list(items: Vec<Value>) -> PyResult<Value> {
    Ok(Value::list(unify(items)?))
}

/// Converts every value to the list's common type (integers keep the narrowest type that holds
/// them all, as Kùzu infers `[1, 2]` as INT8[]): integers widen, integers and doubles become
/// DOUBLE, anything next to a STRING becomes a STRING; other mixes are an error.
fn unify(items: Vec<Value>) -> PyResult<Vec<Value>> {
    let mut common: Option<LogicalType> = None;
    for item in items.iter().filter(|v| !v.is_null()) {
        let ty = item.logical_type();
        common = Some(match common {
            None => ty,
            Some(c) => common_type(&c, &ty).ok_or_else(|| {
                PyRuntimeError::new_err(format!(
                    "Runtime exception: Cannot convert Python object to Kuzu value : {c}  is incompatible with {ty}"
                ))
            })?,
        });
    }
    let Some(common) = common else {
        return Ok(items);
    };
    items.into_iter().map(|v| cast_to(v, &common)).collect()
}

fn common_type(a: &LogicalType, b: &LogicalType) -> Option<LogicalType> {
    if a == b {
        return Some(a.clone());
    }
    let rank = |t: &LogicalType| match t {
        LogicalType::Int8 => Some(1),
        LogicalType::Int16 => Some(2),
        LogicalType::Int32 => Some(3),
        LogicalType::Int64 => Some(4),
        LogicalType::Int128 => Some(5),
        LogicalType::Double => Some(6),
        _ => None,
    };
    match (a, b, rank(a), rank(b)) {
        (LogicalType::String, _, _, _) | (_, LogicalType::String, _, _) => {
            Some(LogicalType::String)
        }
        (_, _, Some(x), Some(y)) => Some(if x >= y { a.clone() } else { b.clone() }),
        (LogicalType::List(x), LogicalType::List(y), _, _) => {
            if **x == LogicalType::Any {
                Some(b.clone())
            } else if **y == LogicalType::Any {
                Some(a.clone())
            } else {
                common_type(x, y).map(LogicalType::list)
            }
        }
        (LogicalType::Map(..), LogicalType::Map(..), _, _) => Some(a.clone()),
        (LogicalType::Struct(_), LogicalType::Struct(_), _, _) => Some(a.clone()),
        _ => None,
    }
}

/// Converts a value of a narrower (or stringifiable) type to `target`.
fn cast_to(value: Value, target: &LogicalType) -> PyResult<Value> {
    if value.is_null() || value.logical_type() == *target {
        return Ok(value);
    }
    Ok(match target {
        LogicalType::String => Value::string(warren_common::format::to_kuzu_string(
            &value,
            &warren_common::value::NoGraph,
        )),
        LogicalType::Double => Value::Double(value.as_f64().unwrap_or_default()),
        LogicalType::Int16 => Value::Int16(value.as_i64().unwrap_or_default() as i16),
        LogicalType::Int32 => Value::Int32(value.as_i64().unwrap_or_default() as i32),
        LogicalType::Int64 => Value::Int64(value.as_i64().unwrap_or_default()),
        LogicalType::Int128 => Value::Int128(value.as_i128().unwrap_or_default()),
        LogicalType::List(element) => match value {
            Value::List(items) => Value::list(
                items
                    .iter()
                    .cloned()
                    .map(|v| cast_to(v, element))
                    .collect::<PyResult<Vec<_>>>()?,
            ),
            other => other,
        },
        _ => value,
    })
}
