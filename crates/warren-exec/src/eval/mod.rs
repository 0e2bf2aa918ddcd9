//! Expression evaluation over one row: slots, stored properties (through the snapshot), operators
//! with SQL NULL semantics, functions, list comprehensions and subqueries.

pub mod array_functions;
pub mod column_expr;
pub(crate) mod const_divisor;
pub mod extremes;
mod functions;
mod list_functions;
pub(crate) mod ops;
mod padding;
pub mod pass_bits;
pub mod prefilter;
pub mod prefiltered_rows;
mod regex_replace;

use std::sync::Arc;

use warren_common::value::{NodeValue, PathValue, RelValue, Value};
use warren_common::{Error, InternalId, Result};
use warren_planner::expr::{Expr, InternalProperty, PathPart, PropertyColumns, Quantifier};
use warren_storage::Snapshot;

use crate::context::ExecContext;

pub use ops::{binary, truthy, value_in_list};
pub use regex_replace::RegexCache;

/// Evaluates expressions against one snapshot.
pub struct Evaluator<'a> {
    pub snapshot: &'a Snapshot,
    pub ctx: &'a ExecContext,
}

impl<'a> Evaluator<'a> {
    pub fn new(snapshot: &'a Snapshot, ctx: &'a ExecContext) -> Self {
        Self { snapshot, ctx }
    }

    /// Evaluates a predicate: true only when the value is TRUE (NULL and FALSE reject).
    pub fn test(&self, expr: &Expr, row: &[Value]) -> Result<bool> {
        Ok(truthy(&self.eval(expr, row)?))
    }

    pub fn eval(&self, expr: &Expr, row: &[Value]) -> Result<Value> {
        match expr {
            Expr::Literal(value) => Ok(value.clone()),
            Expr::Slot(slot) => Ok(row[*slot].clone()),
            Expr::Property { base, property } => {
                let base = self.eval(base, row)?;
                self.property(&base, property)
            }
            Expr::InternalProperty { base, property } => {
                let base = self.eval(base, row)?;
                self.internal_property(&base, *property)
            }
            Expr::Field { base, name } => {
                let base = self.eval(base, row)?;
                self.field(&base, name)
            }
            Expr::Unary(op, inner) => ops::unary(*op, self.eval(inner, row)?),
            Expr::Binary(op, left, right) => self.binary(*op, left, right, row),
            Expr::IsNull { expr, negated } => {
                let is_null = self.eval(expr, row)?.is_null();
                Ok(Value::Bool(is_null != *negated))
            }
            Expr::Function { function, args } => functions::call(self, *function, args, row),
            Expr::UserFunction { function, args } => {
                let values = args
                    .iter()
                    .map(|e| self.eval(e, row))
                    .collect::<Result<Vec<_>>>()?;
                function.call(&values)
            }
            Expr::Lambda { .. } => Err(Error::internal(
                "a lambda evaluated outside a list function",
            )),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => self.case(operand.as_deref(), whens, otherwise.as_deref(), row),
            Expr::List(items) => {
                let values = items
                    .iter()
                    .map(|e| self.eval(e, row))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Value::list(values))
            }
            Expr::Struct(fields) => {
                let mut values = Vec::with_capacity(fields.len());
                for (name, e) in fields {
                    values.push((name.clone(), self.eval(e, row)?));
                }
                Ok(Value::Struct(Arc::new(warren_common::value::StructValue {
                    fields: values,
                })))
            }
            Expr::Index { list, index } => {
                let list = self.eval(list, row)?;
                let index = self.eval(index, row)?;
                functions::list_extract(&list, &index)
            }
            Expr::Slice { list, start, end } => {
                let list = self.eval(list, row)?;
                let start = match start {
                    Some(e) => Some(self.eval(e, row)?),
                    None => None,
                };
                let end = match end {
                    Some(e) => Some(self.eval(e, row)?),
                    None => None,
                };
                functions::slice(&list, start.as_ref(), end.as_ref())
            }
            Expr::ListComprehension {
                list,
                variable,
                filter,
                map,
            } => self.comprehension(list, *variable, filter.as_deref(), map.as_deref(), row),
            Expr::Quantifier {
                kind,
                list,
                variable,
                predicate,
            } => self.quantifier(*kind, list, *variable, predicate, row),
            Expr::Subquery { plan, count } => {
                let rows = crate::operators::run_subquery(plan, row, self.ctx, !*count)?;
                Ok(if *count {
                    Value::Int64(rows as i64)
                } else {
                    Value::Bool(rows > 0)
                })
            }
            Expr::Path(parts) => Ok(self.build_path(parts, row)),
            Expr::Cast { expr, ty } => {
                let value = self.eval(expr, row)?;
                warren_common::cast::cast_value(&value, ty).map_err(Error::Conversion)
            }
        }
    }

    fn binary(
        &self,
        op: warren_planner::expr::BinaryOp,
        left: &Expr,
        right: &Expr,
        row: &[Value],
    ) -> Result<Value> {
        use warren_planner::expr::BinaryOp;
        match op {
            BinaryOp::And => {
                let l = self.eval(left, row)?;
                if l.as_bool() == Some(false) {
                    return Ok(Value::Bool(false));
                }
                let r = self.eval(right, row)?;
                Ok(ops::and(&l, &r))
            }
            BinaryOp::Or => {
                let l = self.eval(left, row)?;
                if l.as_bool() == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let r = self.eval(right, row)?;
                Ok(ops::or(&l, &r))
            }
            _ => ops::binary(op, self.eval(left, row)?, self.eval(right, row)?),
        }
    }

    fn case(
        &self,
        operand: Option<&Expr>,
        whens: &[(Expr, Expr)],
        otherwise: Option<&Expr>,
        row: &[Value],
    ) -> Result<Value> {
        let operand = match operand {
            Some(o) => Some(self.eval(o, row)?),
            None => None,
        };
        for (when, then) in whens {
            let condition = self.eval(when, row)?;
            let matched = match &operand {
                Some(value) => value.sql_eq(&condition) == Some(true),
                None => truthy(&condition),
            };
            if matched {
                return self.eval(then, row);
            }
        }
        match otherwise {
            Some(e) => self.eval(e, row),
            None => Ok(Value::Null),
        }
    }

    fn comprehension(
        &self,
        list: &Expr,
        variable: usize,
        filter: Option<&Expr>,
        map: Option<&Expr>,
        row: &[Value],
    ) -> Result<Value> {
        let list = self.eval(list, row)?;
        let Some(items) = list.as_list() else {
            return Ok(Value::Null);
        };
        let mut scratch = row.to_vec();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            scratch[variable] = item.clone();
            if let Some(filter) = filter {
                if !self.test(filter, &scratch)? {
                    continue;
                }
            }
            out.push(match map {
                Some(map) => self.eval(map, &scratch)?,
                None => item.clone(),
            });
        }
        Ok(Value::list(out))
    }

    fn quantifier(
        &self,
        kind: Quantifier,
        list: &Expr,
        variable: usize,
        predicate: &Expr,
        row: &[Value],
    ) -> Result<Value> {
        let list = self.eval(list, row)?;
        let Some(items) = list.as_list() else {
            return Ok(Value::Null);
        };
        let mut scratch = row.to_vec();
        let mut matches = 0usize;
        for item in items {
            scratch[variable] = item.clone();
            if self.test(predicate, &scratch)? {
                matches += 1;
            }
        }
        Ok(Value::Bool(match kind {
            Quantifier::Any => matches > 0,
            Quantifier::All => matches == items.len(),
            Quantifier::None => matches == 0,
            Quantifier::Single => matches == 1,
        }))
    }

    /// Calls a lambda with `args` bound to its parameters.
    pub(crate) fn call_lambda(
        &self,
        lambda: &Expr,
        args: &[Value],
        row: &[Value],
    ) -> Result<Value> {
        let Expr::Lambda { params, body } = lambda else {
            return Err(Error::internal("expected a lambda"));
        };
        let mut scratch = row.to_vec();
        for (slot, value) in params.iter().zip(args) {
            scratch[*slot] = value.clone();
        }
        self.eval(body, &scratch)
    }

    /// A stored property of a node or rel; NULL when the value is NULL, the table lacks the
    /// property, or the value is a projected path element without that property.
    /// A checksum mismatch in the block the value is read from is a `corrupt database` error.
    pub fn property(&self, base: &Value, property: &PropertyColumns) -> Result<Value> {
        let (id, is_rel, projection) = match base {
            Value::Node(NodeValue { id, projection }) => (*id, false, projection),
            Value::Rel(RelValue { id, projection }) => (*id, true, projection),
            other => return self.field(other, &property.name),
        };
        if let Some(projection) = projection {
            if !projection
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&property.name))
            {
                return Ok(Value::Null);
            }
        }
        let column = match property.column(id.table) {
            Some(column) => Some(column),
            None if property.columns.is_empty() => self.column_by_name(id, is_rel, &property.name),
            None => None,
        };
        Ok(match column {
            Some(column) if is_rel => {
                let table = self.snapshot.rel_table(id.table);
                table.try_value(id.offset, column)?
            }
            Some(column) => {
                let table = self.snapshot.node_table(id.table);
                table.try_value(id.offset, column)?
            }
            None => Value::Null,
        })
    }

    fn column_by_name(&self, id: InternalId, is_rel: bool, name: &str) -> Option<usize> {
        if is_rel {
            self.snapshot.catalog().rel_pair(id.table)?.0.property(name)
        } else {
            self.snapshot
                .catalog()
                .node_table_by_id(id.table)?
                .property(name)
        }
    }

    pub fn internal_property(&self, base: &Value, property: InternalProperty) -> Result<Value> {
        let (id, is_rel) = match base {
            Value::Node(node) => (node.id, false),
            Value::Rel(rel) => (rel.id, true),
            _ => return Ok(Value::Null),
        };
        Ok(match property {
            InternalProperty::Id => Value::InternalId(id),
            InternalProperty::Label => Value::string(self.snapshot.catalog().label(id.table)),
            InternalProperty::Source if is_rel => {
                Value::InternalId(self.snapshot.try_rel_endpoints(id)?.0)
            }
            InternalProperty::Destination if is_rel => {
                Value::InternalId(self.snapshot.try_rel_endpoints(id)?.1)
            }
            _ => Value::Null,
        })
    }

    /// `value.name` on structs, unions, maps, nodes and rels (dynamically resolved).
    pub fn field(&self, base: &Value, name: &str) -> Result<Value> {
        Ok(match base {
            Value::Struct(s) => s
                .fields
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .unwrap_or(Value::Null),
            Value::Union(u) if u.tag.eq_ignore_ascii_case(name) => u.value.clone(),
            Value::Node(_) | Value::Rel(_) => {
                if let Some(internal) = match name.to_ascii_lowercase().as_str() {
                    "_id" => Some(InternalProperty::Id),
                    "_label" => Some(InternalProperty::Label),
                    "_src" => Some(InternalProperty::Source),
                    "_dst" => Some(InternalProperty::Destination),
                    _ => None,
                } {
                    return self.internal_property(base, internal);
                }
                let dynamic = PropertyColumns {
                    name: name.into(),
                    columns: Vec::new(),
                };
                return self.property(base, &dynamic);
            }
            _ => Value::Null,
        })
    }

    /// Builds a named path from node slots, rel slots and recursive rel slots. A row that an
    /// OPTIONAL MATCH did not match has NULL parts, and Kùzu still builds its path: an absent
    /// recursive rel adds no nodes and no rels, and a path without rels is its first node alone.
    /// A path that would hold a NULL node or rel is NULL, since Warren's path values have no
    /// NULL elements (where Kùzu prints such a path with empty elements).
    fn build_path(&self, parts: &[PathPart], row: &[Value]) -> Value {
        let mut path = PathValue {
            nodes: Vec::new(),
            rels: Vec::new(),
        };
        let mut skip_next_node = false;
        let mut has_single_rel = false;
        let mut has_absent_part = false;
        for part in parts {
            match part {
                PathPart::Node(slot) => match &row[*slot] {
                    // After a zero-length segment the next node is the same node again.
                    Value::Node(_) if std::mem::take(&mut skip_next_node) => {}
                    Value::Node(node) => path.nodes.push(node.clone()),
                    _ => has_absent_part = true,
                },
                PathPart::Rel(slot) => {
                    has_single_rel = true;
                    match &row[*slot] {
                        Value::Rel(rel) => path.rels.push(rel.clone()),
                        _ => has_absent_part = true,
                    }
                }
                PathPart::RecursiveRel(slot) => match &row[*slot] {
                    Value::Path(inner) => {
                        skip_next_node = inner.rels.is_empty();
                        path.nodes.extend(inner.nodes.iter().cloned());
                        path.rels.extend(inner.rels.iter().cloned());
                    }
                    _ => skip_next_node = false,
                },
            }
        }
        if !has_single_rel && path.rels.is_empty() {
            return match parts.first().map(|part| (part, row)) {
                Some((PathPart::Node(slot), row)) => match &row[*slot] {
                    Value::Node(node) => Value::Path(Arc::new(PathValue {
                        nodes: vec![node.clone()],
                        rels: Vec::new(),
                    })),
                    _ => Value::Null,
                },
                _ => Value::Null,
            };
        }
        if has_absent_part {
            return Value::Null;
        }
        Value::Path(Arc::new(path))
    }
}
