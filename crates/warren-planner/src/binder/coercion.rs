//! Implicit casts where values of different types meet, as Kùzu binds them: the items of a list
//! literal take one type (`[1, 2.0]` is a DOUBLE list), and `x IN list` needs `x` and the list's
//! elements to meet. Types meet at their common type; a STRING meeting another type yields to
//! it, and must then cast to it, which Kùzu refuses implicitly ("Implicit cast is not
//! supported"). Nodes, rels and paths are left alone.

use warren_common::types::LogicalType;
use warren_common::{Error, Result};
use warren_cypher::ast;

use super::scope::Scope;
use super::Binder;
use crate::expr::Expr;

/// Where two types meet, or `None` when they cannot.
fn meet(a: &LogicalType, b: &LogicalType) -> Option<LogicalType> {
    if let Some(common) = warren_common::cast::common_type(a, b) {
        return Some(common);
    }
    match (a, b) {
        (LogicalType::String, other) | (other, LogicalType::String) => Some(other.clone()),
        (LogicalType::List(x), LogicalType::List(y)) => Some(LogicalType::list(meet(x, y)?)),
        _ => None,
    }
}

fn is_graph_type(ty: &LogicalType) -> bool {
    matches!(
        ty,
        LogicalType::Node | LogicalType::Rel | LogicalType::RecursiveRel | LogicalType::InternalId
    )
}

/// Whether a value of `from` casts implicitly to `to`.
fn casts_to(from: &LogicalType, to: &LogicalType) -> bool {
    from == to
        || *from == LogicalType::Any
        || warren_common::cast::common_type(from, to).as_ref() == Some(to)
}

fn cast_error(expr: &ast::Expr, from: &LogicalType, to: &LogicalType) -> Error {
    Error::binder(format!(
        "Expression {} has data type {from} but expected {to}. Implicit cast is not supported.",
        crate::explain::kuzu_text(expr)
    ))
}

/// Whether two types have the same shape and differ at most in the names of struct or union
/// fields. Values keep their own field names then (Kùzu renames them to the list's type).
fn same_shape(a: &LogicalType, b: &LogicalType) -> bool {
    use LogicalType as T;
    let same_fields = |x: &[warren_common::types::Field], y: &[warren_common::types::Field]| {
        x.len() == y.len() && x.iter().zip(y).all(|(f, g)| same_shape(&f.ty, &g.ty))
    };
    match (a, b) {
        (T::List(x), T::List(y)) => same_shape(x, y),
        (T::Array(x, n), T::Array(y, m)) => n == m && same_shape(x, y),
        (T::Map(k1, v1), T::Map(k2, v2)) => same_shape(k1, k2) && same_shape(v1, v2),
        (T::Struct(x), T::Struct(y)) | (T::Union(x), T::Union(y)) => same_fields(x, y),
        _ => a == b,
    }
}

/// `ty` with the element types nobody fixed (`[]`'s) read as INT64, as Kùzu resolves them.
fn resolve_nested_any(ty: &LogicalType) -> LogicalType {
    use LogicalType as T;
    let resolve = |t: &LogicalType| match t {
        T::Any => T::Int64,
        other => resolve_nested_any(other),
    };
    match ty {
        T::List(x) => T::list(resolve(x)),
        T::Array(x, n) => T::Array(std::sync::Arc::new(resolve(x)), *n),
        T::Map(k, v) => T::Map(
            std::sync::Arc::new(resolve(k)),
            std::sync::Arc::new(resolve(v)),
        ),
        other => other.clone(),
    }
}

/// `expr` as a value of `to`: unchanged when it already is one, else cast.
fn cast_to(expr: Expr, from: &LogicalType, to: &LogicalType) -> Expr {
    if *from == LogicalType::Any || same_shape(from, to) {
        return expr;
    }
    Expr::Cast {
        expr: Box::new(expr),
        ty: to.clone(),
    }
}

impl Binder<'_> {
    /// A list literal: every item cast to the type where all items meet (the first item's type
    /// when they do not, so that the first item that cannot cast is the one reported).
    pub(crate) fn bind_list_literal(
        &mut self,
        items: &[ast::Expr],
        scope: &Scope,
        sink: &mut Option<&mut super::expression::AggregateSink>,
    ) -> Result<(Expr, LogicalType)> {
        let mut bound = Vec::with_capacity(items.len());
        let mut element = LogicalType::Any;
        let mut meets = true;
        for item in items {
            let (expr, ty) = self.bind_expr_with(item, scope, sink)?;
            if meets && !is_graph_type(&ty) && !is_graph_type(&element) {
                match meet(&element, &ty) {
                    Some(common) => element = common,
                    None => meets = false,
                }
            } else if element == LogicalType::Any {
                element = ty.clone();
            }
            bound.push((expr, ty));
        }
        let element = resolve_nested_any(&element);
        let mut exprs = Vec::with_capacity(bound.len());
        for ((expr, ty), item) in bound.into_iter().zip(items) {
            if is_graph_type(&ty) || is_graph_type(&element) {
                exprs.push(expr);
                continue;
            }
            if !casts_to(&ty, &element) {
                return Err(cast_error(item, &ty, &element));
            }
            exprs.push(cast_to(expr, &ty, &element));
        }
        Ok((Expr::List(exprs), LogicalType::list(element)))
    }

    /// Checks that the two sides of `left IN right` can be compared, as Kùzu's
    /// `list_contains` binds them.
    pub(crate) fn check_in(
        &self,
        left: (&ast::Expr, &LogicalType),
        right: (&ast::Expr, &LogicalType),
    ) -> Result<()> {
        let (Some(element), value) = (right.1.element(), left.1) else {
            return Ok(());
        };
        let known = |t: &LogicalType| *t != LogicalType::Any && !is_graph_type(t);
        if !known(element) || !known(value) {
            return Ok(());
        }
        let Some(target) = meet(element, value) else {
            return Err(Error::binder(format!(
                "Cannot compare {element} and {value} in list_contains function."
            )));
        };
        if !casts_to(value, &target) {
            return Err(cast_error(left.0, value, &target));
        }
        if !casts_to(element, &target) {
            return Err(cast_error(right.0, right.1, &LogicalType::list(target)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn types_meet_as_in_kuzu() {
        let int = LogicalType::Int64;
        let double = LogicalType::Double;
        let string = LogicalType::String;
        assert_eq!(meet(&int, &double), Some(double.clone()));
        assert_eq!(meet(&LogicalType::Any, &int), Some(int.clone()));
        assert_eq!(meet(&int, &string), Some(int.clone()));
        assert_eq!(meet(&string, &int), Some(int.clone()));
        assert_eq!(
            meet(
                &LogicalType::list(int.clone()),
                &LogicalType::list(string.clone())
            ),
            Some(LogicalType::list(int.clone()))
        );
        assert_eq!(meet(&int, &LogicalType::Date), None);
        assert_eq!(meet(&int, &LogicalType::Bool), None);
        assert!(casts_to(&int, &double));
        assert!(!casts_to(&string, &int));
        assert!(!casts_to(&LogicalType::Date, &int));
        let struct_ab = LogicalType::Struct(Arc::new(vec![warren_common::types::Field {
            name: "a".into(),
            ty: int.clone(),
        }]));
        assert_eq!(meet(&struct_ab, &int), None);
        let empty = LogicalType::list(LogicalType::Any);
        assert_eq!(resolve_nested_any(&empty), LogicalType::list(int.clone()));
        assert_eq!(resolve_nested_any(&LogicalType::Any), LogicalType::Any);
        let struct_b = LogicalType::Struct(Arc::new(vec![warren_common::types::Field {
            name: "b".into(),
            ty: int.clone(),
        }]));
        assert!(same_shape(&struct_ab, &struct_b));
        assert!(!same_shape(&int, &double));
    }
}
