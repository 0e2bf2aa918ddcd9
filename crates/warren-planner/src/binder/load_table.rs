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
