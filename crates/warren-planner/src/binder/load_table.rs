//! `LOAD FROM df` and `COPY t FROM df`: rows from a table passed as a query parameter, a STRUCT
//! whose fields are the columns, each a LIST of one value per row (the form Warren's Python
//! package gives pandas, pyarrow and polars data frames). A column's type is the common type of
//! its non-NULL values; a column of NULLs only is a STRING column.

use std::sync::Arc;

use warren_common::cast::{cast_value, common_type};
use warren_common::{Error, LogicalType, Result, Value};

use super::scope::{Scope, Variable};
use super::Binder;
use crate::plan::Plan;

/// A table parameter's columns, typed, and its rows after SKIP and LIMIT.
struct Table {
    columns: Vec<(String, LogicalType)>,
    rows: Vec<Vec<Value>>,
}

impl Binder<'_> {
    /// Binds `LOAD FROM name (options)`: every row of the table parameter `name`.
    pub(super) fn bind_load_table(
        &mut self,
        input: Plan,
        name: &str,
        options: &[(String, warren_cypher::ast::Expr)],
        scope: &mut Scope,
    ) -> Result<Plan> {
        let value = self
            .parameters
            .get(name)
            .ok_or_else(|| Error::binder(format!("Variable {name} is not in scope.")))?;
        let (skip, limit) = self.skip_and_limit(options)?;
        let table = read_table(name, value, skip, limit)?;
        let mut columns = Vec::with_capacity(table.columns.len());
        for (column, ty) in table.columns {
            let slot = self.new_slot();
            scope.insert(Variable {
                name: column,
                slot,
                kind: super::expression::kind_of(&ty),
            });
            columns.push(slot);
        }
        Ok(Plan::TableFunction {
            input: Box::new(input),
            name: format!("load_from_{name}"),
            rows: Arc::from(table.rows),
            columns,
        })
    }

    /// The `SKIP` and `LIMIT` options; no other option applies to a table parameter.
    fn skip_and_limit(
        &mut self,
        options: &[(String, warren_cypher::ast::Expr)],
    ) -> Result<(usize, usize)> {
        let (mut skip, mut limit) = (0, usize::MAX);
        for (option, expr) in options {
            let option = option.to_ascii_uppercase();
            if option != "SKIP" && option != "LIMIT" {
                return Err(Error::binder(format!(
                    "{option} Option not recognized by pyArrow scanner."
                )));
            }
            let count = self
                .constant(expr)?
                .as_i64()
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| {
                    Error::binder(format!(
                        "{option} Option must be a positive integer literal."
                    ))
                })?;
            if option == "SKIP" {
                skip = count;
            } else {
                limit = count;
            }
        }
        Ok((skip, limit))
    }
}

/// Reads a table parameter: a STRUCT of equally long LISTs.
fn read_table(name: &str, value: &Value, skip: usize, limit: usize) -> Result<Table> {
    let not_a_table = || {
        Error::binder(format!(
            "Trying to scan from unsupported data type {}. The only parameter types that can be scanned from are pandas/polars dataframes and pyarrow tables (parameter {name}).",
            value.logical_type()
        ))
    };
    let Value::Struct(table) = value else {
        return Err(not_a_table());
    };
    let mut columns = Vec::with_capacity(table.fields.len());
    let mut values = Vec::with_capacity(table.fields.len());
    for (column, list) in &table.fields {
        let list = list.as_list().ok_or_else(not_a_table)?;
        columns.push((column.to_string(), column_type(list)));
        values.push(list);
    }
    let height = values.first().map_or(0, |v| v.len());
    if values.iter().any(|v| v.len() != height) {
        return Err(not_a_table());
    }
    let end = skip.saturating_add(limit).min(height);
    let mut rows = Vec::with_capacity(end.saturating_sub(skip));
    for row in skip.min(end)..end {
        let mut cells = Vec::with_capacity(columns.len());
        for ((_, ty), column) in columns.iter().zip(&values) {
            cells.push(cast_value(&column[row], ty).map_err(Error::Conversion)?);
        }
        rows.push(cells);
    }
    Ok(Table { columns, rows })
}

/// The common type of a column's non-NULL values (STRING when all are NULL).
fn column_type(values: &[Value]) -> LogicalType {
    if let Some(union) = union_column_type(values) {
        return union;
    }
    let mut ty: Option<LogicalType> = None;
    for value in values.iter().filter(|v| !v.is_null()) {
        let next = value.logical_type();
        ty = Some(match ty {
            None => next,
            Some(current) => common_type(&current, &next).unwrap_or(LogicalType::String),
        });
    }
    match ty {
        None | Some(LogicalType::Any) => LogicalType::String,
        Some(ty) => ty,
    }
}

/// The UNION type of a column whose non-NULL values are all UNION values (an Arrow UNION column
/// of a data frame): one member per tag, in the order the tags first appear, each member's
/// type the common type of its values. `None` for any other column.
fn union_column_type(values: &[Value]) -> Option<LogicalType> {
    let mut members: Vec<(std::sync::Arc<str>, LogicalType)> = Vec::new();
    for value in values.iter().filter(|v| !v.is_null()) {
        let Value::Union(union) = value else {
            return None;
        };
        let ty = union.value.logical_type();
        match members.iter_mut().find(|(tag, _)| *tag == union.tag) {
            Some((_, member)) => {
                *member = common_type(member, &ty).unwrap_or(LogicalType::String);
            }
            None => members.push((union.tag.clone(), ty)),
        }
    }
    if members.is_empty() {
        return None;
    }
    let fields = members
        .into_iter()
        .map(|(name, ty)| warren_common::types::Field {
            name: name.to_string(),
            ty,
        })
        .collect();
    Some(LogicalType::Union(std::sync::Arc::new(fields)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use warren_common::value::UnionValue;

    use super::*;

    fn member(tag: &str, value: Value) -> Value {
        Value::Union(Arc::new(UnionValue {
            tag: Arc::from(tag),
            value,
        }))
    }

    #[test]
    fn a_column_of_union_values_has_one_member_per_tag_in_first_seen_order() {
        let values = [
            member("b", Value::String("x".into())),
            Value::Null,
            member("a", Value::Int32(1)),
            member("a", Value::Int64(2)),
        ];
        let ty = column_type(&values);
        assert_eq!(ty, LogicalType::parse("UNION(b STRING, a INT64)").unwrap());
        let cast = cast_value(&values[2], &ty).unwrap();
        assert_eq!(cast, member("a", Value::Int64(1)));
    }

    #[test]
    fn a_column_mixing_union_and_plain_values_takes_the_common_type() {
        let values = [member("a", Value::Int32(1)), Value::String("x".into())];
        assert_eq!(column_type(&values), LogicalType::String);
    }
}
