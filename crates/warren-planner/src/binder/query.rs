//! Binding a query clause by clause: each reading clause wraps the plan built so far, WITH and
//! RETURN reshape the scope, updating clauses add write operators, and UNION joins single
//! queries whose columns agree.

use warren_common::{Error, Result};
use warren_cypher::ast;

use super::scope::Scope;
use super::Binder;
use crate::plan::{Plan, QueryPlan};

impl Binder<'_> {
    pub(crate) fn bind_query(&mut self, query: &ast::Query) -> Result<QueryPlan> {
        let mut parts = Vec::with_capacity(query.parts.len());
        for part in &query.parts {
            parts.push(self.bind_single_query(part)?);
        }
        let (plan, columns) = if parts.len() == 1 {
            parts.pop().expect("one part")
        } else {
            self.bind_union(parts, &query.union_all)?
        };
        let updates = plan.updates();
        let plan = crate::optimizer::optimize(plan, &columns, &mut self.slots);
        Ok(QueryPlan {
            plan,
            columns,
            slots: self.slots,
            updates,
        })
    }

    #[allow(clippy::type_complexity)]
    fn bind_union(
        &mut self,
        parts: Vec<(Plan, Vec<(String, usize, warren_common::LogicalType)>)>,
        union_all: &[bool],
    ) -> Result<(Plan, Vec<(String, usize, warren_common::LogicalType)>)> {
        let first_columns = parts[0].1.clone();
        for (_, columns) in &parts[1..] {
            if columns.len() != first_columns.len() {
                return Err(Error::binder(
                    "The number of columns to union/union all must be the same.",
                ));
            }
            for ((a, ..), (b, ..)) in first_columns.iter().zip(columns) {
                if a != b {
                    return Err(Error::binder(format!(
                        "Cannot union/union all columns with different names: {a} and {b}."
                    )));
                }
            }
        }
        let output: Vec<usize> = first_columns.iter().map(|_| self.new_slot()).collect();
        let all = union_all.iter().all(|a| *a);
        let inputs = parts
            .into_iter()
            .map(|(plan, columns)| (plan, columns.iter().map(|(_, slot, _)| *slot).collect()))
            .collect();
        let mut plan = Plan::Union {
            inputs,
            output: output.clone(),
            all,
        };
        if !all {
            plan = Plan::Distinct {
                input: Box::new(plan),
                slots: output.clone(),
            };
        }
        let columns = first_columns
            .into_iter()
            .zip(output)
            .map(|((name, _, ty), slot)| (name, slot, ty))
            .collect();
        Ok((plan, columns))
    }

    #[allow(clippy::type_complexity)]
    fn bind_single_query(
        &mut self,
        query: &ast::SingleQuery,
    ) -> Result<(Plan, Vec<(String, usize, warren_common::LogicalType)>)> {
        let mut scope = Scope::default();
        let mut plan = Plan::Unit;
        let mut columns = Vec::new();
        let last = query.clauses.len().saturating_sub(1);
        for (index, clause) in query.clauses.iter().enumerate() {
            match clause {
                ast::Clause::Match(clause) if !clause.optional => {
                    plan = self.bind_match(plan, clause, &mut scope)?;
                }
                ast::Clause::Match(clause) => {
                    let before: Vec<usize> = scope.variables().iter().map(|v| v.slot).collect();
                    let mut inner_scope = scope.clone();
                    let inner = self.bind_match(Plan::Argument, clause, &mut inner_scope)?;
                    let null_slots = inner_scope
                        .variables()
                        .iter()
                        .map(|v| v.slot)
                        .filter(|s| !before.contains(s))
                        .collect();
                    plan = Plan::Optional {
                        input: Box::new(plan),
                        inner: Box::new(inner),
                        null_slots,
                    };
                    scope = inner_scope;
                }
                ast::Clause::Unwind { expr, alias, .. } => {
                    let (expr, ty) = self.bind_expr(expr, &scope)?;
                    let element = match &ty {
                        warren_common::LogicalType::RecursiveRel => {
                            return Err(Error::binder(format!(
                                "{} has data type RECURSIVE_REL but LIST was expected.",
                                unwind_name(clause)
                            )))
                        }
                        other => other
                            .element()
                            .cloned()
                            .unwrap_or(warren_common::LogicalType::Any),
                    };
                    let slot = self.new_slot();
                    scope.insert(super::scope::Variable {
                        name: alias.clone(),
                        slot,
                        kind: unwind_kind(&element),
                    });
                    plan = Plan::Unwind {
                        input: Box::new(plan),
                        expr,
                        slot,
                    };
                }
                ast::Clause::With(projection) => {
                    let projected = self.bind_projection(plan, projection, &scope, false)?;
                    plan = projected.plan;
                    scope = projected.scope;
                }
                ast::Clause::Return(projection) => {
                    if index != last {
                        return Err(Error::binder("RETURN must be the last clause of a query."));
                    }
                    let projected = self.bind_projection(plan, projection, &scope, true)?;
                    plan = projected.plan;
                    columns = projected.columns;
                }
                ast::Clause::Create { patterns, .. } => {
                    plan = self.bind_create(plan, patterns, &mut scope)?;
                }
                ast::Clause::Merge {
                    pattern,
                    on_create,
                    on_match,
                    ..
                } => {
                    plan = self.bind_merge(plan, pattern, on_create, on_match, &mut scope)?;
                }
                ast::Clause::Set { items, .. } => {
                    plan = self.bind_set(plan, items, &scope)?;
                }
                ast::Clause::Delete { detach, exprs, .. } => {
                    plan = self.bind_delete(plan, *detach, exprs, &scope)?;
                }
                ast::Clause::Call(call) => {
                    return Err(Error::binder(format!(
                        "Table function {} is not supported.",
                        call.name.to_ascii_uppercase()
                    )));
                }
                ast::Clause::LoadFrom(_) => {
                    return Err(Error::binder("LOAD FROM is not supported."));
                }
            }
        }
        Ok((plan, columns))
    }

    /// Binds the body of `EXISTS { ... }` / `COUNT { ... }` as a plan over the outer row.
    pub(crate) fn bind_subquery(
        &mut self,
        subquery: &ast::Subquery,
        scope: &Scope,
    ) -> Result<Plan> {
        let clause = ast::MatchClause {
            optional: false,
            patterns: subquery.patterns.clone(),
            where_clause: subquery.where_clause.clone(),
            hint: subquery.hint.clone(),
            span: ast::Span::default(),
        };
        let mut inner = scope.clone();
        self.bind_match(Plan::Argument, &clause, &mut inner)
    }
}

fn unwind_name(clause: &ast::Clause) -> String {
    match clause {
        ast::Clause::Unwind {
            expr:
                ast::Expr {
                    kind: ast::ExprKind::Variable(name),
                    ..
                },
            ..
        } => name.clone(),
        _ => String::new(),
    }
}

fn unwind_kind(element: &warren_common::LogicalType) -> super::scope::VariableKind {
    super::expression::kind_of(element)
}
