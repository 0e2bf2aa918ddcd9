//! The array distance functions (`array_cosine_similarity`, `array_inner_product` /
//! `array_dot_product`, `array_distance`, `array_squared_distance`) over FLOAT[n] and
//! DOUBLE[n] values, computed by warren-vector's kernels. The binder casts both arguments to
//! one array type; the vectors are read straight out of the cast's operand (a NULL element
//! reads as 0, as in Kùzu), and the result has the array's element type.

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_planner::expr::Expr;
use warren_planner::functions::ScalarFunction as F;
use warren_vector::distance;

use super::Evaluator;

pub(super) fn call(
    evaluator: &Evaluator<'_>,
    function: F,
    args: &[Expr],
    row: &[Value],
) -> Result<Value> {
    let [Expr::Cast { expr: left, ty }, Expr::Cast { expr: right, .. }] = args else {
        return Err(Error::internal(format!(
            "{} is bound with two casts to its array type",
            function.name()
        )));
    };
    let &LogicalType::Array(ref element, size) = ty else {
        return Err(Error::internal(
            "an array function's cast is to an ARRAY type",
        ));
    };
    let (left, right) = (evaluator.eval(left, row)?, evaluator.eval(right, row)?);
    if left.is_null() || right.is_null() {
        return Ok(Value::Null);
    }
    let size = size as usize;
    Ok(match **element {
        LogicalType::Float => {
            let (a, b) = (elements(&left, size)?, elements(&right, size)?);
            let a: Vec<f32> = a.iter().map(|&x| x as f32).collect();
            let b: Vec<f32> = b.iter().map(|&x| x as f32).collect();
            Value::Float(apply_f32(function, &a, &b))
        }
        _ => {
            let (a, b) = (elements(&left, size)?, elements(&right, size)?);
            Value::Double(apply_f64(function, &a, &b))
        }
    })
}

/// The elements of a list value of `size` numbers or NULLs (NULL as 0), or Kùzu's conversion
/// error for a list of another length.
pub fn elements(value: &Value, size: usize) -> Result<Vec<f64>> {
    let Value::List(items) = value else {
        return Err(Error::runtime(format!(
            "expected a FLOAT[] or DOUBLE[] value, got {}",
            value.logical_type()
        )));
    };
    if items.len() != size {
        return Err(Error::conversion(format!(
            "Unsupported casting LIST with incorrect list entry to ARRAY. Expected: {size}, \
             Actual: {}.",
            items.len()
        )));
    }
    items
        .iter()
        .map(|item| match item {
            Value::Null => Ok(0.0),
            other => other.as_f64().ok_or_else(|| {
                Error::runtime(format!(
                    "expected a number in an array, got {}",
                    other.logical_type()
                ))
            }),
        })
        .collect()
}

/// The function's value for two FLOAT vectors of one length.
pub fn apply_f32(function: F, a: &[f32], b: &[f32]) -> f32 {
    match function {
        F::ArrayCosineSimilarity => distance::cosine_similarity_f32(a, b),
        F::ArrayInnerProduct => distance::inner_product_f32(a, b),
        F::ArrayDistance => distance::squared_distance_f32(a, b).sqrt(),
        F::ArraySquaredDistance => distance::squared_distance_f32(a, b),
        other => unreachable!("{other:?} is not an array distance function"),
    }
}

/// The function's value for two DOUBLE vectors of one length.
pub fn apply_f64(function: F, a: &[f64], b: &[f64]) -> f64 {
    match function {
        F::ArrayCosineSimilarity => distance::cosine_similarity_f64(a, b),
        F::ArrayInnerProduct => distance::inner_product_f64(a, b),
        F::ArrayDistance => distance::squared_distance_f64(a, b).sqrt(),
        F::ArraySquaredDistance => distance::squared_distance_f64(a, b),
        other => unreachable!("{other:?} is not an array distance function"),
    }
}
