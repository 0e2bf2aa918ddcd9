//! Operators with SQL semantics: three-valued logic, NULL propagation, numeric promotion with
//! overflow checks, string and list operators, and temporal arithmetic.

use std::cmp::Ordering;

use warren_common::temporal::{Interval, MICROS_PER_DAY};
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_planner::expr::{BinaryOp, UnaryOp};

/// Whether a predicate value admits a row: only TRUE does.
pub fn truthy(value: &Value) -> bool {
    value.as_bool() == Some(true)
}

pub fn and(l: &Value, r: &Value) -> Value {
    match (l.as_bool(), r.as_bool()) {
        (Some(false), _) | (_, Some(false)) => Value::Bool(false),
        (Some(true), Some(true)) => Value::Bool(true),
        _ => Value::Null,
    }
}

pub fn or(l: &Value, r: &Value) -> Value {
    match (l.as_bool(), r.as_bool()) {
        (Some(true), _) | (_, Some(true)) => Value::Bool(true),
        (Some(false), Some(false)) => Value::Bool(false),
        _ => Value::Null,
    }
}

pub fn unary(op: UnaryOp, value: Value) -> Result<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    match op {
        UnaryOp::Not => match value.as_bool() {
            Some(b) => Ok(Value::Bool(!b)),
            None => Err(Error::binder("NOT expects a boolean.")),
        },
        UnaryOp::Plus => Ok(value),
        UnaryOp::Minus => match value {
            Value::Double(v) => Ok(Value::Double(-v)),
            Value::Float(v) => Ok(Value::Float(-v)),
            Value::Interval(i) => Ok(Value::Interval(Interval {
                months: -i.months,
                days: -i.days,
                micros: -i.micros,
            })),
            other => {
                let v = other
                    .as_i128()
                    .ok_or_else(|| Error::runtime("Cannot negate a non-numeric value."))?;
                integer_result(&other, &other, -v)
            }
        },
    }
}

/// `value IN list`: NULL when the value is NULL, else whether the list holds an equal value.
pub fn value_in_list(value: &Value, list: &Value) -> Value {
    let Some(items) = list.as_list() else {
        return Value::Null;
    };
    if value.is_null() {
        return Value::Null;
    }
    // As in Kùzu, NULL elements are skipped: `2 IN [1, NULL]` is FALSE.
    Value::Bool(items.iter().any(|item| value.sql_eq(item) == Some(true)))
}

fn is_integer(v: &Value) -> bool {
    v.as_i128().is_some()
}

/// An integer result in the wider of the operands' types (INT64 at least), range-checked.
fn integer_result(a: &Value, b: &Value, result: i128) -> Result<Value> {
    let wide = matches!(a, Value::Int128(_)) || matches!(b, Value::Int128(_));
    if wide {
        return Ok(Value::Int128(result));
    }
    if matches!((a, b), (Value::UInt64(_), Value::UInt64(_))) {
        if let Ok(v) = u64::try_from(result) {
            return Ok(Value::UInt64(v));
        }
    }
    i64::try_from(result).map(Value::Int64).map_err(|_| {
        Error::runtime(format!(
            "Overflow exception: Value {result} is not within INT64 range."
        ))
    })
}

fn arithmetic(op: BinaryOp, a: &Value, b: &Value) -> Result<Value> {
    if is_integer(a) && is_integer(b) {
        let (x, y) = (a.as_i128().expect("integer"), b.as_i128().expect("integer"));
        let result = match op {
            BinaryOp::Add => x.checked_add(y),
            BinaryOp::Sub => x.checked_sub(y),
            BinaryOp::Mul => x.checked_mul(y),
            BinaryOp::Div if y == 0 => return Err(Error::runtime("Divide by zero.")),
            BinaryOp::Div => x.checked_div(y),
            BinaryOp::Mod if y == 0 => return Err(Error::runtime("Modulo by zero.")),
            BinaryOp::Mod => x.checked_rem(y),
            BinaryOp::Pow => return Ok(Value::Double((x as f64).powf(y as f64))),
            BinaryOp::BitAnd => Some(x & y),
            BinaryOp::BitOr => Some(x | y),
            BinaryOp::ShiftLeft => u32::try_from(y).ok().and_then(|s| x.checked_shl(s)),
            BinaryOp::ShiftRight => u32::try_from(y).ok().and_then(|s| x.checked_shr(s)),
            _ => return Err(Error::internal(format!("{op:?} is not arithmetic"))),
        };
        let result = result
            .ok_or_else(|| Error::runtime("Overflow exception: integer arithmetic overflowed."))?;
        return integer_result(a, b, result);
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return Err(Error::runtime(format!(
            "Cannot apply {op:?} to {} and {}.",
            a.logical_type(),
            b.logical_type()
        )));
    };
    let result = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Mod => x % y,
        BinaryOp::Pow => x.powf(y),
        _ => return Err(Error::runtime(format!("{op:?} needs integer operands."))),
    };
    Ok(match (a, b) {
        (Value::Float(_), Value::Float(_)) if op != BinaryOp::Pow => Value::Float(result as f32),
        _ => Value::Double(result),
    })
}

fn add_interval_to_micros(micros: i64, interval: &Interval, sign: i64) -> Option<i64> {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let time = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = warren_common::temporal::civil_from_days(days);
    let months = y * 12 + i64::from(m) - 1 + sign * i64::from(interval.months);
    let (year, month) = (months.div_euclid(12), (months.rem_euclid(12) + 1) as u32);
    let day = d.min(warren_common::temporal::days_in_month(year, month));
    let days = warren_common::temporal::days_from_civil(year, month, day)
        + sign * i64::from(interval.days);
    days.checked_mul(MICROS_PER_DAY)?
        .checked_add(time)?
        .checked_add(sign * interval.micros)
}

fn temporal(op: BinaryOp, a: &Value, b: &Value) -> Option<Result<Value>> {
    let sign = match op {
        BinaryOp::Add => 1,
        BinaryOp::Sub => -1,
        _ => return None,
    };
    Some(Ok(match (a, b) {
        (Value::Date(d), Value::Interval(i)) => {
            let micros = add_interval_to_micros(i64::from(*d) * MICROS_PER_DAY, i, sign)?;
            Value::Date(micros.div_euclid(MICROS_PER_DAY) as i32)
        }
        (Value::Interval(i), Value::Date(d)) if sign == 1 => {
            let micros = add_interval_to_micros(i64::from(*d) * MICROS_PER_DAY, i, 1)?;
            Value::Date(micros.div_euclid(MICROS_PER_DAY) as i32)
        }
        (Value::Timestamp(t), Value::Interval(i)) => {
            Value::Timestamp(add_interval_to_micros(*t, i, sign)?)
        }
        (Value::Date(x), Value::Date(y)) if sign == -1 => {
            Value::Int64(i64::from(*x) - i64::from(*y))
        }
        (Value::Date(d), other) if other.as_i64().is_some() => {
            Value::Date(d.checked_add(sign as i32 * other.as_i64()? as i32)?)
        }
        (Value::Timestamp(x), Value::Timestamp(y)) if sign == -1 => {
            let micros = x - y;
            Value::Interval(Interval {
                months: 0,
                days: (micros / MICROS_PER_DAY) as i32,
                micros: micros % MICROS_PER_DAY,
            })
        }
        (Value::Interval(x), Value::Interval(y)) => Value::Interval(Interval {
            months: x.months + sign as i32 * y.months,
            days: x.days + sign as i32 * y.days,
            micros: x.micros + sign * y.micros,
        }),
        _ => return None,
    }))
}

fn concat(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::List(x), Value::List(y)) => {
            Ok(Value::list(x.iter().chain(y.iter()).cloned().collect()))
        }
        _ => {
            let to_text = |v: &Value| match v {
                Value::String(s) => s.to_string(),
                other => {
                    warren_common::format::to_kuzu_string(other, &warren_common::value::NoGraph)
                }
            };
            Ok(Value::string(format!("{}{}", to_text(a), to_text(b))))
        }
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

/// A STRING compared with a number, date or timestamp is cast to the other side's type, as
/// Kùzu casts it; a string that does not convert is a conversion error.
fn implicit_string_cast(a: &Value, b: &Value) -> Result<Option<(Value, Value)>> {
    let castable = |v: &Value| v.is_numeric() || matches!(v, Value::Date(_) | Value::Timestamp(_));
    let cast = |text: &str, other: &Value| {
        warren_common::cast::cast_string(text, &other.logical_type()).map_err(Error::Conversion)
    };
    Ok(match (a, b) {
        (Value::String(text), other) if castable(other) => {
            Some((cast(text, other)?, other.clone()))
        }
        (other, Value::String(text)) if castable(other) => {
            Some((other.clone(), cast(text, other)?))
        }
        _ => None,
    })
}

pub fn binary(op: BinaryOp, a: Value, b: Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(match op {
            BinaryOp::In if !a.is_null() => value_in_list(&a, &b),
            _ => Value::Null,
        });
    }
    if is_comparison(op) {
        if let Some((a, b)) = implicit_string_cast(&a, &b)? {
            return binary(op, a, b);
        }
    }
    let compare = |accept: fn(Ordering) -> bool| -> Value {
        match a.sql_cmp(&b) {
            Some(order) => Value::Bool(accept(order)),
            None => Value::Null,
        }
    };
    Ok(match op {
        BinaryOp::Eq => a.sql_eq(&b).map_or(Value::Null, Value::Bool),
        BinaryOp::Ne => a.sql_eq(&b).map_or(Value::Null, |eq| Value::Bool(!eq)),
        BinaryOp::Lt => compare(|o| o == Ordering::Less),
        BinaryOp::Le => compare(|o| o != Ordering::Greater),
        BinaryOp::Gt => compare(|o| o == Ordering::Greater),
        BinaryOp::Ge => compare(|o| o != Ordering::Less),
        BinaryOp::Xor => match (a.as_bool(), b.as_bool()) {
            (Some(x), Some(y)) => Value::Bool(x != y),
            _ => Value::Null,
        },
        BinaryOp::In => value_in_list(&a, &b),
        BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains => {
            let (Some(x), Some(y)) = (a.as_str(), b.as_str()) else {
                return Err(Error::runtime("String predicates need STRING operands."));
            };
            Value::Bool(match op {
                BinaryOp::StartsWith => x.starts_with(y),
                BinaryOp::EndsWith => x.ends_with(y),
                _ => x.contains(y),
            })
        }
        BinaryOp::RegexMatch => {
            let (Some(x), Some(pattern)) = (a.as_str(), b.as_str()) else {
                return Err(Error::runtime("=~ needs STRING operands."));
            };
            let regex = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                Error::runtime(format!("Invalid regular expression {pattern}: {e}"))
            })?;
            Value::Bool(regex.is_match(x))
        }
        BinaryOp::Concat => concat(&a, &b)?,
        BinaryOp::Add if matches!(a, Value::String(_)) || matches!(b, Value::String(_)) => {
            concat(&a, &b)?
        }
        BinaryOp::Add if matches!(a, Value::List(_)) && matches!(b, Value::List(_)) => {
            concat(&a, &b)?
        }
        BinaryOp::And => and(&a, &b),
        BinaryOp::Or => or(&a, &b),
        _ => {
            if let Some(result) = temporal(op, &a, &b) {
                return result;
            }
            arithmetic(op, &a, &b)?
        }
    })
}
