//! Scalar function implementations. NULL arguments give NULL unless a function says otherwise
//! (`coalesce`, `ifnull`, list functions that skip NULL elements).

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::{NodeValue, PathValue, RelValue, Value};
use warren_common::{Error, Result};
use warren_planner::expr::{Expr, PropertyColumns};
use warren_planner::functions::ScalarFunction as F;

use super::{list_functions, padding, regex_replace, Evaluator};

pub(super) fn call(
    evaluator: &Evaluator<'_>,
    function: F,
    args: &[Expr],
    row: &[Value],
) -> Result<Value> {
    match function {
        F::ListTransform | F::ListFilter | F::ListReduce => {
            let list = evaluator.eval(&args[0], row)?;
            return lambda_function(evaluator, function, &list, &args[1], row);
        }
        _ if function.is_array_distance() => {
            return super::array_functions::call(evaluator, function, args, row);
        }
        F::Coalesce | F::IfNull => {
            for arg in args {
                let value = evaluator.eval(arg, row)?;
                if !value.is_null() {
                    return Ok(value);
                }
            }
            return Ok(Value::Null);
        }
        _ => {}
    }
    let values = args
        .iter()
        .map(|a| evaluator.eval(a, row))
        .collect::<Result<Vec<_>>>()?;
    if values.iter().any(Value::is_null) && !matches!(function, F::ListContains | F::Concat) {
        return Ok(Value::Null);
    }
    scalar(evaluator, function, &values)
}

fn path_parts(value: &Value) -> Result<&PathValue> {
    match value {
        Value::Path(path) => Ok(path),
        other => Err(Error::runtime(format!(
            "Expected a path but got {}.",
            other.logical_type()
        ))),
    }
}

fn int(value: &Value, what: &str) -> Result<i64> {
    value
        .as_i64()
        .ok_or_else(|| Error::runtime(format!("{what} expects an integer.")))
}

fn text(value: &Value) -> Result<&str> {
    value.as_str().ok_or_else(|| {
        Error::runtime(format!(
            "Expected a STRING but got {}.",
            value.logical_type()
        ))
    })
}

fn list(value: &Value) -> Result<&[Value]> {
    value
        .as_list()
        .ok_or_else(|| Error::runtime(format!("Expected a LIST but got {}.", value.logical_type())))
}

fn cast(value: &Value, ty: LogicalType) -> Result<Value> {
    warren_common::cast::cast_value(value, &ty).map_err(Error::Conversion)
}

fn scalar(evaluator: &Evaluator<'_>, function: F, v: &[Value]) -> Result<Value> {
    if matches!(function, F::ListToString | F::Concat | F::ToString) {
        // These print their arguments, nodes and rels with their properties: the blocks
        // printing reads are verified first, so a damaged one is this query's error.
        for value in v {
            evaluator.snapshot.verify_value(value)?;
        }
    }
    Ok(match function {
        F::Length => match &v[0] {
            Value::Path(path) => Value::Int64(path.rels.len() as i64),
            Value::String(s) => Value::Int64(s.chars().count() as i64),
            Value::List(items) => Value::Int64(items.len() as i64),
            other => {
                return Err(Error::runtime(format!(
                    "LENGTH does not accept {}.",
                    other.logical_type()
                )))
            }
        },
        F::Nodes => Value::list(
            path_parts(&v[0])?
                .nodes
                .iter()
                .cloned()
                .map(Value::Node)
                .collect(),
        ),
        F::Rels => Value::list(
            path_parts(&v[0])?
                .rels
                .iter()
                .cloned()
                .map(Value::Rel)
                .collect(),
        ),
        F::Properties => {
            let key = text(&v[1])?;
            let property = PropertyColumns {
                name: key.into(),
                columns: Vec::new(),
            };
            let values = list(&v[0])?
                .iter()
                .map(|item| match key.to_ascii_lowercase().as_str() {
                    "_id" | "_label" | "_src" | "_dst" => evaluator.field(item, key),
                    _ => evaluator.property(item, &property),
                })
                .collect::<Result<Vec<_>>>()?;
            Value::list(values)
        }
        F::Id => v[0]
            .internal_id()
            .map(Value::InternalId)
            .unwrap_or(Value::Null),
        F::Label => match &v[0] {
            Value::Node(NodeValue { id, .. }) | Value::Rel(RelValue { id, .. }) => {
                Value::string(evaluator.snapshot.catalog().label(id.table))
            }
            _ => Value::Null,
        },
        F::Offset => v[0]
            .internal_id()
            .map(|id| Value::Int64(id.offset as i64))
            .unwrap_or(Value::Null),
        F::IsTrail => {
            let path = path_parts(&v[0])?;
            let mut ids: Vec<_> = path.rels.iter().map(|r| r.id).collect();
            ids.sort_unstable();
            let before = ids.len();
            ids.dedup();
            Value::Bool(before == ids.len())
        }
        F::IsAcyclic => {
            let path = path_parts(&v[0])?;
            let mut ids: Vec<_> = path.nodes.iter().map(|n| n.id).collect();
            ids.sort_unstable();
            let before = ids.len();
            ids.dedup();
            Value::Bool(before == ids.len())
        }
        F::StartNode => evaluator.field(&v[0], "_src")?,
        F::EndNode => evaluator.field(&v[0], "_dst")?,
        F::Cost => {
            return Err(Error::runtime(format!(
                "{} is not defined for this value.",
                function.name()
            )))
        }
        F::Size => match &v[0] {
            Value::List(items) => Value::Int64(items.len() as i64),
            Value::Map(entries) => Value::Int64(entries.len() as i64),
            Value::String(s) => Value::Int64(s.chars().count() as i64),
            other => {
                return Err(Error::runtime(format!(
                    "SIZE does not accept {}.",
                    other.logical_type()
                )))
            }
        },
        F::Range => {
            let (start, end) = (int(&v[0], "RANGE")?, int(&v[1], "RANGE")?);
            let step = if v.len() > 2 { int(&v[2], "RANGE")? } else { 1 };
            if step == 0 {
                return Err(Error::runtime("Step of range cannot be 0."));
            }
            let mut out = Vec::new();
            let mut x = start;
            while (step > 0 && x <= end) || (step < 0 && x >= end) {
                out.push(Value::Int64(x));
                x += step;
                if out.len() > 100_000_000 {
                    return Err(Error::LimitExceeded(
                        "RANGE would produce too many values.".into(),
                    ));
                }
            }
            Value::list(out)
        }
        F::ListContains => {
            if v[0].is_null() || v[1].is_null() {
                return Ok(Value::Null);
            }
            Value::Bool(
                list(&v[0])?
                    .iter()
                    .any(|item| item.sql_eq(&v[1]) == Some(true)),
            )
        }
        F::ListExtract => list_extract(&v[0], &v[1])?,
        F::ListReverse => Value::list(list(&v[0])?.iter().rev().cloned().collect()),
        F::ListConcat => Value::list(list(&v[0])?.iter().chain(list(&v[1])?).cloned().collect()),
        F::ListAppend => Value::list(
            list(&v[0])?
                .iter()
                .cloned()
                .chain(std::iter::once(v[1].clone()))
                .collect(),
        ),
        F::ListPrepend => Value::list(
            std::iter::once(v[1].clone())
                .chain(list(&v[0])?.iter().cloned())
                .collect(),
        ),
        F::ListSort | F::ListReverseSort => {
            list_functions::sort(list(&v[0])?, &v[1..], function == F::ListReverseSort)?
        }
        F::ListUnique => list_functions::unique_count(list(&v[0])?),
        F::ListToString => {
            let separator = match &v[0] {
                Value::String(text) => text.to_string(),
                other => warren_common::format::to_kuzu_string(other, evaluator.snapshot),
            };
            list_functions::join(&separator, list(&v[1])?, evaluator.snapshot)
        }
        F::ListHasAll => list_functions::has_all(list(&v[0])?, list(&v[1])?),
        F::ListPosition => list_functions::position(list(&v[0])?, &v[1]),
        F::ListSlice => slice(&v[0], Some(&v[1]), Some(&v[2]))?,
        F::Map => list_functions::map(list(&v[0])?, list(&v[1])?)?,
        F::UnionValue => Value::Union(Arc::new(warren_common::value::UnionValue {
            tag: text(&v[0])?.into(),
            value: v[1].clone(),
        })),
        F::ListDistinct => {
            let mut out: Vec<Value> = Vec::new();
            for item in list(&v[0])? {
                if !item.is_null() && !out.contains(item) {
                    out.push(item.clone());
                }
            }
            Value::list(out)
        }
        F::ListSum | F::ListProduct => {
            let (op, empty) = if function == F::ListSum {
                (warren_planner::expr::BinaryOp::Add, Value::Int64(0))
            } else {
                (warren_planner::expr::BinaryOp::Mul, Value::Int64(1))
            };
            // Starting from the first element keeps its type (a FLOAT list multiplies floats).
            let mut items = list(&v[0])?.iter().filter(|i| !i.is_null());
            match items.next() {
                None => empty,
                Some(first) => items.try_fold(first.clone(), |accumulator, item| {
                    super::ops::binary(op, accumulator, item.clone())
                })?,
            }
        }
        F::ArrayCosineSimilarity
        | F::ArrayInnerProduct
        | F::ArrayDistance
        | F::ArraySquaredDistance => {
            return Err(Error::internal(
                "array functions are evaluated before their arguments",
            ))
        }
        F::ListAnyValue => list(&v[0])?
            .iter()
            .find(|i| !i.is_null())
            .cloned()
            .unwrap_or(Value::Null),
        F::Head => list(&v[0])?.first().cloned().unwrap_or(Value::Null),
        F::Last => list(&v[0])?.last().cloned().unwrap_or(Value::Null),
        F::Tail => Value::list(list(&v[0])?.iter().skip(1).cloned().collect()),
        F::Lower => Value::string(text(&v[0])?.to_lowercase()),
        F::Upper => Value::string(text(&v[0])?.to_uppercase()),
        F::Trim => Value::string(text(&v[0])?.trim()),
        F::LeftTrim => Value::string(text(&v[0])?.trim_start()),
        F::RightTrim => Value::string(text(&v[0])?.trim_end()),
        F::Substring => {
            let chars: Vec<char> = text(&v[0])?.chars().collect();
            let start = (int(&v[1], "SUBSTRING")?.max(1) - 1) as usize;
            let length = int(&v[2], "SUBSTRING")?.max(0) as usize;
            Value::string(chars.iter().skip(start).take(length).collect::<String>())
        }
        F::Left | F::Right => {
            let chars: Vec<char> = text(&v[0])?.chars().collect();
            let n = int(&v[1], "LEFT")?;
            let n = if n < 0 {
                chars.len().saturating_sub(n.unsigned_abs() as usize)
            } else {
                (n as usize).min(chars.len())
            };
            let slice = if function == F::Left {
                &chars[..n]
            } else {
                &chars[chars.len() - n..]
            };
            Value::string(slice.iter().collect::<String>())
        }
        F::Concat => {
            let mut out = String::new();
            for value in v.iter().filter(|x| !x.is_null()) {
                match value {
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&warren_common::format::to_kuzu_string(
                        other,
                        evaluator.snapshot,
                    )),
                }
            }
            Value::string(out)
        }
        F::Reverse => match &v[0] {
            Value::List(items) => Value::list(items.iter().rev().cloned().collect()),
            other => Value::string(text(other)?.chars().rev().collect::<String>()),
        },
        F::StartsWith => Value::Bool(text(&v[0])?.starts_with(text(&v[1])?)),
        F::EndsWith => Value::Bool(text(&v[0])?.ends_with(text(&v[1])?)),
        F::Contains => Value::Bool(text(&v[0])?.contains(text(&v[1])?)),
        F::Repeat => {
            let count = int(&v[1], "REPEAT")?.max(0) as usize;
            let s = text(&v[0])?;
            if s.len().saturating_mul(count) > warren_common::limits::STRING_BYTES_MAX {
                return Err(Error::LimitExceeded(
                    "REPEAT would produce a string that is too long.".into(),
                ));
            }
            Value::string(s.repeat(count))
        }
        F::Replace => Value::string(text(&v[0])?.replace(text(&v[1])?, text(&v[2])?)),
        F::LeftPad | F::RightPad => {
            let side = if function == F::LeftPad {
                padding::Side::Left
            } else {
                padding::Side::Right
            };
            let count = int(&v[1], "LPAD")?;
            Value::string(padding::pad(text(&v[0])?, count, text(&v[2])?, side)?)
        }
        F::RegexpReplace => {
            let global = regex_replace::global_option(v.get(3).map(text).transpose()?)?;
            let input = text(&v[0])?;
            match evaluator.ctx.regex_cache.get(text(&v[1])?) {
                Some(regex) => {
                    Value::string(regex_replace::replace(&regex, input, text(&v[2])?, global))
                }
                None => v[0].clone(),
            }
        }
        F::Split => Value::list(
            text(&v[0])?
                .split(text(&v[1])?)
                .map(Value::string)
                .collect(),
        ),
        F::Abs => match &v[0] {
            Value::Double(x) => Value::Double(x.abs()),
            Value::Float(x) => Value::Float(x.abs()),
            other => Value::Int64(
                other
                    .as_i64()
                    .ok_or_else(|| Error::runtime("ABS expects a number."))?
                    .checked_abs()
                    .ok_or_else(|| Error::runtime("Overflow exception: ABS overflowed."))?,
            ),
        },
        F::Floor | F::Ceil | F::Round => match &v[0] {
            x @ (Value::Double(_) | Value::Float(_)) => {
                let f = x.as_f64().expect("float");
                let r = match function {
                    F::Floor => f.floor(),
                    F::Ceil => f.ceil(),
                    _ => {
                        let digits = v.get(1).and_then(Value::as_i64).unwrap_or(0) as i32;
                        let scale = 10f64.powi(digits);
                        (f * scale).round() / scale
                    }
                };
                if matches!(x, Value::Float(_)) {
                    Value::Float(r as f32)
                } else {
                    Value::Double(r)
                }
            }
            other => other.clone(),
        },
        F::Sqrt => Value::Double(
            v[0].as_f64()
                .ok_or_else(|| Error::runtime("SQRT expects a number."))?
                .sqrt(),
        ),
        F::Pow => {
            let (x, y) = (v[0].as_f64(), v[1].as_f64());
            match (x, y) {
                (Some(x), Some(y)) => Value::Double(x.powf(y)),
                _ => return Err(Error::runtime("POW expects numbers.")),
            }
        }
        F::Sign => Value::Int64(
            v[0].as_f64()
                .map(|x| {
                    if x > 0.0 {
                        1
                    } else if x < 0.0 {
                        -1
                    } else {
                        0
                    }
                })
                .unwrap_or(0),
        ),
        F::ToString => match &v[0] {
            Value::String(_) => v[0].clone(),
            other => Value::string(warren_common::format::to_kuzu_string(
                other,
                evaluator.snapshot,
            )),
        },
        F::ToInt64 => cast(&v[0], LogicalType::Int64)?,
        F::ToInt32 => cast(&v[0], LogicalType::Int32)?,
        F::ToInt16 => cast(&v[0], LogicalType::Int16)?,
        F::ToInt8 => cast(&v[0], LogicalType::Int8)?,
        F::ToInt128 => cast(&v[0], LogicalType::Int128)?,
        F::ToUInt64 => cast(&v[0], LogicalType::UInt64)?,
        F::ToUInt32 => cast(&v[0], LogicalType::UInt32)?,
        F::ToUInt16 => cast(&v[0], LogicalType::UInt16)?,
        F::ToUInt8 => cast(&v[0], LogicalType::UInt8)?,
        F::ToSerial => cast(&v[0], LogicalType::Int64)?,
        F::ToDouble => cast(&v[0], LogicalType::Double)?,
        F::ToFloat => cast(&v[0], LogicalType::Float)?,
        F::ToBool => cast(&v[0], LogicalType::Bool)?,
        F::Date => cast(&v[0], LogicalType::Date)?,
        F::Blob => cast(&v[0], LogicalType::Blob)?,
        F::Uuid => cast(&v[0], LogicalType::Uuid)?,
        F::Timestamp => cast(&v[0], LogicalType::Timestamp)?,
        F::Interval => cast(&v[0], LogicalType::Interval)?,
        F::Hash => {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            v[0].hash(&mut hasher);
            Value::Int64(hasher.finish() as i64)
        }
        F::ListTransform | F::ListFilter | F::ListReduce | F::Coalesce | F::IfNull => {
            return Err(Error::internal("handled by call"))
        }
    })
}

fn lambda_function(
    evaluator: &Evaluator<'_>,
    function: F,
    list_value: &Value,
    lambda: &Expr,
    row: &[Value],
) -> Result<Value> {
    if list_value.is_null() {
        return Ok(Value::Null);
    }
    let items = list(list_value)?;
    match function {
        F::ListTransform => {
            let out = items
                .iter()
                .map(|item| evaluator.call_lambda(lambda, std::slice::from_ref(item), row))
                .collect::<Result<Vec<_>>>()?;
            Ok(Value::list(out))
        }
        F::ListFilter => {
            let mut out = Vec::new();
            for item in items {
                if super::truthy(&evaluator.call_lambda(lambda, std::slice::from_ref(item), row)?) {
                    out.push(item.clone());
                }
            }
            Ok(Value::list(out))
        }
        _ => {
            let mut iter = items.iter();
            let Some(first) = iter.next() else {
                return Err(Error::runtime(
                    "Cannot execute list_reduce on an empty list.",
                ));
            };
            let mut accumulator = first.clone();
            for item in iter {
                accumulator = evaluator.call_lambda(lambda, &[accumulator, item.clone()], row)?;
            }
            Ok(accumulator)
        }
    }
}

/// `list[index]` with Kùzu's 1-based positions (negative positions count from the end).
pub(super) fn list_extract(list_value: &Value, index: &Value) -> Result<Value> {
    if list_value.is_null() || index.is_null() {
        return Ok(Value::Null);
    }
    let position = int(index, "list_extract")?;
    let items: Arc<[Value]> = match list_value {
        Value::List(items) => items.clone(),
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len() as i64;
            if position == 0 || position.abs() > n {
                return Ok(Value::string(""));
            }
            let i = if position > 0 {
                position - 1
            } else {
                n + position
            };
            return Ok(Value::string(chars[i as usize].to_string()));
        }
        Value::Map(entries) => {
            return Ok(entries
                .iter()
                .find(|(k, _)| k.sql_eq(index) == Some(true))
                .map(|(_, v)| v.clone())
                .unwrap_or(Value::Null));
        }
        other => {
            return Err(Error::runtime(format!(
                "Cannot extract from {}.",
                other.logical_type()
            )))
        }
    };
    let length = items.len() as i64;
    if position == 0 {
        return Err(Error::runtime("List extract takes 1-based position."));
    }
    if position.abs() > length {
        return Err(Error::runtime(format!(
            "list_extract(list, index): index={position} is out of range."
        )));
    }
    let i = if position > 0 {
        position - 1
    } else {
        length + position
    };
    Ok(items[i as usize].clone())
}

/// `list[start:end]` and `list_slice(list, start, end)` with 1-based inclusive bounds, as Kùzu
/// slices lists and strings (see [`list_functions::slice_range`]).
pub(super) fn slice(value: &Value, start: Option<&Value>, end: Option<&Value>) -> Result<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let bound = |v: Option<&Value>, default: i64| -> Result<i64> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(v) => int(v, "slice"),
        }
    };
    let (start, end) = (bound(start, 1)?, bound(end, -1)?);
    match value {
        Value::List(items) => {
            let range = list_functions::slice_range(items.len(), start, end);
            Ok(Value::list(items[range].to_vec()))
        }
        Value::String(text_value) => {
            let chars: Vec<char> = text_value.chars().collect();
            let range = list_functions::slice_range(chars.len(), start, end);
            Ok(Value::string(chars[range].iter().collect::<String>()))
        }
        other => Err(Error::runtime(format!(
            "Cannot slice {}.",
            other.logical_type()
        ))),
    }
}
