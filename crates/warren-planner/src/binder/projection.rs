//! Binding WITH and RETURN: star expansion, aliases and column names, aggregation (group keys
//! are the non-aggregate items), DISTINCT, ORDER BY (which may read aliases, aggregates and,
//! without aggregation, any variable in scope), SKIP, LIMIT and WITH's WHERE.

use warren_common::types::LogicalType;
use warren_common::{Error, Result};
use warren_cypher::ast::{self, ExprKind};

use super::expression::AggregateSink;
use super::scope::{Scope, Variable, VariableKind};
use super::Binder;
use crate::expr::Expr;
use crate::plan::Plan;

/// One projected item after star expansion.
struct Item {
    expr: ast::Expr,
    name: String,
}

/// The result of binding a projection.
pub(crate) struct Projected {
    pub plan: Plan,
    pub scope: Scope,
    pub columns: Vec<(String, usize, LogicalType)>,
}

/// Replaces every subexpression equal to one of `keys` by its slot.
fn substitute(expr: Expr, keys: &[(usize, Expr)]) -> Expr {
    if let Some((slot, _)) = keys.iter().find(|(_, key)| *key == expr) {
        return Expr::Slot(*slot);
    }
    map_children(expr, &mut |child| substitute(child, keys))
}

/// Rebuilds `expr` with `f` applied to each direct child.
pub(crate) fn map_children(expr: Expr, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    let mut boxed = |e: Box<Expr>| Box::new(f(*e));
    match expr {
        Expr::Property { base, property } => Expr::Property {
            base: boxed(base),
            property,
        },
        Expr::InternalProperty { base, property } => Expr::InternalProperty {
            base: boxed(base),
            property,
        },
        Expr::Field { base, name } => Expr::Field {
            base: boxed(base),
            name,
        },
        Expr::Unary(op, e) => Expr::Unary(op, boxed(e)),
        Expr::Binary(op, a, b) => {
            let a = boxed(a);
            let b = Box::new(f(*b));
            Expr::Binary(op, a, b)
        }
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr: boxed(expr),
            negated,
        },
        Expr::Function { function, args } => Expr::Function {
            function,
            args: args.into_iter().map(&mut *f).collect(),
        },
        Expr::UserFunction { function, args } => Expr::UserFunction {
            function,
            args: args.into_iter().map(&mut *f).collect(),
        },
        Expr::List(items) => Expr::List(items.into_iter().map(&mut *f).collect()),
        Expr::Struct(fields) => Expr::Struct(fields.into_iter().map(|(n, e)| (n, f(e))).collect()),
        Expr::Cast { expr, ty } => Expr::Cast {
            expr: boxed(expr),
            ty,
        },
        Expr::Index { list, index } => {
            let list = boxed(list);
            Expr::Index {
                list,
                index: Box::new(f(*index)),
            }
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
        } => Expr::Case {
            operand: operand.map(|o| Box::new(f(*o))),
            whens: whens.into_iter().map(|(w, t)| (f(w), f(t))).collect(),
            otherwise: otherwise.map(|o| Box::new(f(*o))),
        },
        other => other,
    }
}

impl Binder<'_> {
    fn expand_items(&self, projection: &ast::ProjectionClause, scope: &Scope) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        if projection.star {
            let mut any = false;
            for variable in scope.variables() {
                if Scope::is_anonymous(&variable.name) || variable.name.contains('\0') {
                    continue;
                }
                any = true;
                let expr = ast::Expr {
                    kind: ExprKind::Variable(variable.name.clone()),
                    span: projection.span,
                };
                items.push(Item {
                    expr,
                    name: variable.name.clone(),
                });
            }
            if !any && projection.items.is_empty() {
                return Err(Error::binder(
                    "RETURN or WITH * is not allowed when there are no variables in scope.",
                ));
            }
        }
        for item in &projection.items {
            if let ExprKind::AllProperties(var) = &item.expr.kind {
                items.extend(self.expand_all_properties(var, scope, item.expr.span)?);
                continue;
            }
            let name = item.alias.clone().unwrap_or_else(|| item.text.clone());
            items.push(Item {
                expr: item.expr.clone(),
                name,
            });
        }
        Ok(items)
    }

    /// `n.*`: one item per property of n's tables, in schema order.
    fn expand_all_properties(
        &self,
        var: &str,
        scope: &Scope,
        span: ast::Span,
    ) -> Result<Vec<Item>> {
        let variable = scope
            .get(var)
            .ok_or_else(|| Error::binder(format!("Variable {var} is not in scope.")))?;
        let mut names: Vec<String> = Vec::new();
        match &variable.kind {
            VariableKind::Node { tables } => {
                for &table in tables {
                    for property in &self
                        .catalog
                        .node_table_by_id(table)
                        .expect("table")
                        .properties
                    {
                        if !names.iter().any(|n| n.eq_ignore_ascii_case(&property.name)) {
                            names.push(property.name.clone());
                        }
                    }
                }
            }
            VariableKind::Rel { pairs } => {
                for &pair in pairs {
                    let (schema, _) = self.catalog.rel_pair(pair).expect("pair");
                    for property in &schema.properties {
                        if !names.iter().any(|n| n.eq_ignore_ascii_case(&property.name)) {
                            names.push(property.name.clone());
                        }
                    }
                }
            }
            other => {
                return Err(Error::binder(format!(
                    "Expected {var} to be a node or rel, but it has data type {}.",
                    other.logical_type()
                )))
            }
        }
        Ok(names
            .into_iter()
            .map(|name| Item {
                expr: ast::Expr {
                    kind: ExprKind::Property(
                        Box::new(ast::Expr {
                            kind: ExprKind::Variable(var.to_string()),
                            span,
                        }),
                        name.clone(),
                    ),
                    span,
                },
                name: format!("{var}.{name}"),
            })
            .collect())
    }

    /// Binds a WITH (`is_return = false`) or RETURN projection on top of `input`.
    pub(crate) fn bind_projection(
        &mut self,
        input: Plan,
        projection: &ast::ProjectionClause,
        scope: &Scope,
        is_return: bool,
    ) -> Result<Projected> {
        if !is_return
            && !projection.order_by.is_empty()
            && projection.skip.is_none()
            && projection.limit.is_none()
        {
            return Err(Error::binder(
                "In WITH clause, ORDER BY must be followed by SKIP or LIMIT.",
            ));
        }
        let items = self.expand_items(projection, scope)?;
        let mut sink = AggregateSink::default();
        let mut bound = Vec::with_capacity(items.len());
        for item in &items {
            let before = sink.aggregates.len();
            let (expr, ty) = self.bind_expr_with(&item.expr, scope, &mut Some(&mut sink))?;
            let has_aggregate = sink.aggregates.len() > before;
            bound.push((expr, ty, has_aggregate));
        }
        if !is_return {
            let unaliased = projection.items.iter().find(|item| {
                item.alias.is_none()
                    && !matches!(
                        item.expr.kind,
                        ExprKind::Variable(_) | ExprKind::AllProperties(_)
                    )
            });
            if unaliased.is_some() {
                return Err(Error::binder(
                    "Expression in WITH must be aliased (use AS).",
                ));
            }
        }
        let aggregating = !sink.aggregates.is_empty();
        let mut plan = input;
        let mut out_scope = Scope::default();
        let mut columns = Vec::with_capacity(items.len());
        let mut order_scope = if aggregating {
            Scope::default()
        } else {
            scope.clone()
        };
        let mut keys: Vec<(usize, Expr)> = Vec::new();
        let mut assignments = Vec::with_capacity(items.len());
        for (item, (expr, ty, has_aggregate)) in items.iter().zip(bound) {
            let kind = match &item.expr.kind {
                ExprKind::Variable(name) => scope
                    .get(name)
                    .map(|v| v.kind.clone())
                    .unwrap_or(VariableKind::Value(ty.clone())),
                _ => VariableKind::Value(ty.clone()),
            };
            let slot = match (&expr, aggregating && !has_aggregate) {
                // A grouped variable keeps its slot so its properties stay readable.
                (Expr::Slot(s), true) => {
                    keys.push((*s, expr.clone()));
                    *s
                }
                (_, true) => {
                    let slot = self.new_slot();
                    keys.push((slot, expr.clone()));
                    slot
                }
                _ => {
                    let slot = self.new_slot();
                    assignments.push((slot, expr.clone()));
                    slot
                }
            };
            if let ExprKind::Variable(name) = &item.expr.kind {
                // Derived slots (length, cost) follow their variable.
                for derived in ["length", "cost"] {
                    if let Some(v) = scope.get(&format!("{derived}\0{name}")) {
                        let alias = format!("{derived}\0{}", item.name);
                        if aggregating {
                            keys.push((v.slot, Expr::Slot(v.slot)));
                        }
                        out_scope.insert(Variable {
                            name: alias.clone(),
                            ..v.clone()
                        });
                        order_scope.insert(Variable {
                            name: alias,
                            ..v.clone()
                        });
                    }
                }
            }
            let variable = Variable {
                name: item.name.clone(),
                slot,
                kind,
            };
            out_scope.insert(variable.clone());
            order_scope.insert(variable);
            columns.push((item.name.clone(), slot, ty));
        }
        let (order_keys, extra_aggregates) =
            self.bind_order_by(projection, &order_scope, scope, aggregating, &keys, &sink)?;
        if aggregating {
            let mut aggregates = sink.aggregates;
            aggregates.extend(extra_aggregates);
            plan = Plan::Aggregate {
                input: Box::new(plan),
                keys: keys.clone(),
                aggregates,
            };
        }
        if !assignments.is_empty() {
            let assignments = assignments
                .into_iter()
                .map(|(slot, e)| (slot, substitute(e, &keys)))
                .collect();
            plan = Plan::Project {
                input: Box::new(plan),
                assignments,
            };
        }
        if projection.distinct {
            let slots = columns.iter().map(|(_, slot, _)| *slot).collect();
            plan = Plan::Distinct {
                input: Box::new(plan),
                slots,
            };
        }
        if !order_keys.is_empty() {
            plan = Plan::OrderBy {
                input: Box::new(plan),
                keys: order_keys,
            };
        }
        if let Some(skip) = &projection.skip {
            let count = self.bind_count(skip, "SKIP")?;
            plan = Plan::Skip {
                input: Box::new(plan),
                count,
            };
        }
        if let Some(limit) = &projection.limit {
            let count = self.bind_count(limit, "LIMIT")?;
            plan = Plan::Limit {
                input: Box::new(plan),
                count,
            };
        }
        if let Some(where_clause) = &projection.where_clause {
            let (predicate, _) = self.bind_expr(where_clause, &out_scope)?;
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        if projection.star && !is_return {
            // `WITH *` keeps derived variables too.
            for variable in scope.variables() {
                if variable.name.contains('\0') && !Scope::is_anonymous(&variable.name) {
                    out_scope.insert(variable.clone());
                }
            }
        }
        Ok(Projected {
            plan,
            scope: out_scope,
            columns,
        })
    }

    fn bind_count(&mut self, expr: &ast::Expr, what: &str) -> Result<Expr> {
        let value = self.constant(expr)?;
        match value.as_i64() {
            Some(n) if n >= 0 => Ok(Expr::Literal(value)),
            _ => Err(Error::binder(format!(
                "The number of rows to {} must be a non-negative integer.",
                what.to_ascii_lowercase()
            ))),
        }
    }

    #[allow(clippy::type_complexity)]
    fn bind_order_by(
        &mut self,
        projection: &ast::ProjectionClause,
        order_scope: &Scope,
        scope: &Scope,
        aggregating: bool,
        keys: &[(usize, Expr)],
        sink: &AggregateSink,
    ) -> Result<(Vec<(Expr, bool)>, Vec<(usize, crate::expr::AggregateExpr)>)> {
        let mut order_keys = Vec::with_capacity(projection.order_by.len());
        let mut extra = Vec::new();
        for sort in &projection.order_by {
            let expr = if aggregating {
                let mut order_sink = AggregateSink::default();
                let mut combined = scope.clone();
                for v in order_scope.variables() {
                    combined.insert(v.clone());
                }
                let (expr, _) =
                    self.bind_expr_with(&sort.expr, &combined, &mut Some(&mut order_sink))?;
                let mut expr = substitute(expr, keys);
                for (slot, aggregate) in order_sink.aggregates {
                    let existing = sink
                        .aggregates
                        .iter()
                        .chain(extra.iter())
                        .find(|(_, a)| *a == aggregate)
                        .map(|(s, _)| *s);
                    match existing {
                        Some(existing) => expr = replace_slot(expr, slot, existing),
                        None => extra.push((slot, aggregate)),
                    }
                }
                expr
            } else {
                self.bind_expr(&sort.expr, order_scope)?.0
            };
            order_keys.push((expr, sort.descending));
        }
        Ok((order_keys, extra))
    }
}

fn replace_slot(expr: Expr, from: usize, to: usize) -> Expr {
    match expr {
        Expr::Slot(s) if s == from => Expr::Slot(to),
        other => map_children(other, &mut |e| replace_slot(e, from, to)),
    }
}
