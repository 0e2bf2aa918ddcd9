//! Evaluation of constant expressions at bind time (COPY options, settings, DEFAULT values,
//! SKIP and LIMIT): literals, lists, structs, negation and casts of constants.

use std::sync::Arc;

use warren_common::value::{StructValue, Value};
use warren_cypher::ast::UnaryOp;

use crate::expr::Expr;
use crate::functions::ScalarFunction;

/// The value of `expr` if it is constant and simple enough to fold here.
pub fn evaluate_constant(expr: &Expr) -> Option<Value> {
    Some(match expr {
        Expr::Literal(value) => value.clone(),
        Expr::List(items) => {
            Value::list(items.iter().map(evaluate_constant).collect::<Option<_>>()?)
        }
        Expr::Struct(fields) => Value::Struct(Arc::new(StructValue {
            fields: fields
                .iter()
                .map(|(name, e)| Some((name.clone(), evaluate_constant(e)?)))
                .collect::<Option<_>>()?,
        })),
        Expr::Unary(UnaryOp::Minus, inner) => match evaluate_constant(inner)? {
            Value::Int64(v) => Value::Int64(v.checked_neg()?),
            Value::Int128(v) => Value::Int128(v.checked_neg()?),
            Value::Double(v) => Value::Double(-v),
            _ => return None,
        },
        Expr::Unary(UnaryOp::Plus, inner) => evaluate_constant(inner)?,
        Expr::Cast { expr, ty } => {
            warren_common::cast::cast_value(&evaluate_constant(expr)?, ty).ok()?
        }
        Expr::Function { function, args } if args.len() == 1 => {
            let text = evaluate_constant(&args[0])?;
            let ty = match function {
                ScalarFunction::Date => warren_common::LogicalType::Date,
                ScalarFunction::Timestamp => warren_common::LogicalType::Timestamp,
                ScalarFunction::Interval => warren_common::LogicalType::Interval,
                _ => return None,
            };
            warren_common::cast::cast_value(&text, &ty).ok()?
        }
        _ => return None,
    })
}
