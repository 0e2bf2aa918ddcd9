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
            // As in Kùzu, the columns take the first query's names; only their number must agree.
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
                    let (inner, paths) =
                        self.bind_match_with_paths(Plan::Argument, clause, &mut inner_scope)?;
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
                    if !paths.is_empty() {
                        // A row the pattern did not match still gets a path from its bound parts.
                        plan = Plan::Project {
                            input: Box::new(plan),
                            assignments: paths,
                        };
                    }
                    scope = inner_scope;
                }
                ast::Clause::Unwind { expr, alias, .. } => {
                    let (expr, ty) = self.bind_expr(expr, &scope)?;
                    let element = match &ty {
                        warren_common::LogicalType::List(_)
                        | warren_common::LogicalType::Array(..)
                        | warren_common::LogicalType::Any => ty
                            .element()
                            .cloned()
                            .unwrap_or(warren_common::LogicalType::Any),
                        other => {
                            let ast::Clause::Unwind { expr, .. } = clause else {
                                unreachable!("an UNWIND clause")
                            };
                            return Err(Error::binder(format!(
                                "{} has data type {other} but LIST was expected.",
                                crate::explain::kuzu_text(expr)
                            )));
                        }
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
                    patterns,
                    on_create,
                    on_match,
                    ..
                } => {
                    plan = self.bind_merge(plan, patterns, on_create, on_match, &mut scope)?;
                }
                ast::Clause::Set { items, .. } => {
                    plan = self.bind_set(plan, items, &scope)?;
                }
                ast::Clause::Delete { detach, exprs, .. } => {
                    plan = self.bind_delete(plan, *detach, exprs, &scope)?;
                }
                ast::Clause::Call(call) => {
                    plan = self.bind_call(plan, call, &mut scope, index == last)?;
                }
                ast::Clause::LoadFrom(load) => {
                    plan = self.bind_load_from(plan, load, &mut scope)?;
                }
            }
        }
        Ok((plan, columns))
    }

    /// `LOAD [WITH HEADERS (...)] FROM 'file' (options) [WHERE ...]`: columns come from the
    /// explicit headers, or from the file (header row names, detected types).
    fn bind_load_from(
        &mut self,
        input: Plan,
        load: &ast::LoadFromClause,
        scope: &mut Scope,
    ) -> Result<Plan> {
        if let Some(name) = &load.parameter {
            let plan = self.bind_load_table(input, name, &load.options, scope)?;
            return self.filter_loaded(plan, load, scope);
        }
        let files: Vec<std::path::PathBuf> =
            load.files.iter().map(|f| self.resolve_path(f)).collect();
        if files.iter().any(|f| {
            f.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
        }) {
            return Err(Error::binder(
                "LOAD FROM reads CSV files; Parquet files are not supported.",
            ));
        }
        let mut options = Vec::with_capacity(load.options.len());
        for (name, expr) in &load.options {
            options.push((name.clone(), self.constant(expr)?));
        }
        let options = warren_storage::import::CsvOptions::from_pairs(&options)?;
        let columns: Vec<(String, warren_common::LogicalType)> = if load.headers.is_empty() {
            let first = files
                .first()
                .ok_or_else(|| Error::binder("LOAD FROM needs a file."))?;
            warren_storage::import::sniff_columns(first, &options)?
        } else {
            load.headers
                .iter()
                .map(|(name, ty)| {
                    Ok((
                        name.clone(),
                        warren_common::LogicalType::parse(ty).map_err(Error::Catalog)?,
                    ))
                })
                .collect::<Result<_>>()?
        };
        let mut slots = Vec::with_capacity(columns.len());
        for (name, ty) in columns {
            let slot = self.new_slot();
            scope.insert(super::scope::Variable {
                name,
                slot,
                kind: super::expression::kind_of(&ty),
            });
            slots.push((slot, ty));
        }
        let plan = Plan::LoadCsv {
            input: Box::new(input),
            files,
            options,
            columns: slots,
        };
        self.filter_loaded(plan, load, scope)
    }

    /// The `WHERE` of a `LOAD FROM` over the loaded rows.
    fn filter_loaded(
        &mut self,
        plan: Plan,
        load: &ast::LoadFromClause,
        scope: &Scope,
    ) -> Result<Plan> {
        let Some(predicate) = &load.where_clause else {
            return Ok(plan);
        };
        let (predicate, _) = self.bind_expr(predicate, scope)?;
        Ok(Plan::Filter {
            input: Box::new(plan),
            predicate,
        })
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

fn unwind_kind(element: &warren_common::LogicalType) -> super::scope::VariableKind {
    super::expression::kind_of(element)
}
