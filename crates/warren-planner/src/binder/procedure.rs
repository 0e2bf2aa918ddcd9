//! Binding `CALL` of a graph procedure ([`crate::procedure`]): names and options that must be
//! constant are resolved against the catalog here; arguments that may come from earlier
//! clauses are bound as expressions over the query's scope and evaluated per row. Errors name
//! the argument and its position in the query.

use std::sync::Arc;

use warren_common::types::LogicalType;
use warren_common::value::Value;
use warren_common::{Error, Result};
use warren_cypher::ast;
use warren_storage::Direction;

use super::scope::{Scope, Variable, VariableKind};
use super::Binder;
use crate::expr::Expr;
use crate::plan::{Plan, Step};
use crate::procedure::{ProcedureCall, ProcedureKind, SpreadActivation};

/// Whether `name` is a graph procedure.
pub(crate) fn is_procedure(name: &str) -> bool {
    name.eq_ignore_ascii_case("spread_activation")
        || name.eq_ignore_ascii_case("query_vector_index")
}

/// " (line L, column C)" for an argument's position in the query.
pub(crate) fn at(span: ast::Span) -> String {
    format!(" (line {}, column {})", span.line, span.column)
}

/// A call's arguments split into positional ones and `name := value` ones.
pub(crate) struct CallArguments<'a> {
    pub(crate) positional: Vec<&'a ast::Expr>,
    pub(crate) named: Vec<(&'a str, &'a ast::Expr, ast::Span)>,
}

pub(crate) fn split_arguments(call: &ast::CallClause) -> Result<CallArguments<'_>> {
    let mut arguments = CallArguments {
        positional: Vec::new(),
        named: Vec::new(),
    };
    for arg in &call.args {
        match &arg.kind {
            ast::ExprKind::NamedArgument(name, value) => {
                if arguments
                    .named
                    .iter()
                    .any(|(n, ..)| n.eq_ignore_ascii_case(name))
                {
                    return Err(Error::binder(format!(
                        "Duplicate argument {name} in {}{}.",
                        call.name,
                        at(arg.span)
                    )));
                }
                arguments.named.push((name, value, arg.span));
            }
            _ if !arguments.named.is_empty() => {
                return Err(Error::binder(format!(
                    "Positional arguments of {} must come before named ones{}.",
                    call.name,
                    at(arg.span)
                )));
            }
            _ => arguments.positional.push(arg),
        }
    }
    Ok(arguments)
}

const SPREAD_OPTIONS: &str = "decay, threshold, max_hops, weight, direction";

fn unknown_argument(name: &str, span: ast::Span) -> Error {
    Error::binder(format!(
        "Unknown argument {name} of spread_activation{}; it takes {SPREAD_OPTIONS}.",
        at(span)
    ))
}

impl Binder<'_> {
    /// Binds `CALL` of a graph procedure over `input`; its output columns become variables.
    pub(crate) fn bind_procedure(
        &mut self,
        input: Plan,
        call: &ast::CallClause,
        scope: &mut Scope,
    ) -> Result<Plan> {
        let bound = if call.name.eq_ignore_ascii_case("query_vector_index") {
            self.bind_query_vector_index(call, scope)?
        } else {
            self.bind_spread_activation(call, scope)?
        };
        let names = super::table_function::yield_names(&bound.columns, &call.yields)?;
        let mut columns = Vec::with_capacity(names.len());
        for (name, (_, ty)) in names.into_iter().zip(&bound.columns) {
            if scope.contains(&name) {
                return Err(Error::binder(format!("Variable {name} already exists.")));
            }
            let slot = self.new_slot();
            let kind = match (ty, &bound.kind) {
                (LogicalType::Node, ProcedureKind::SpreadActivation(spread)) => {
                    VariableKind::Node {
                        tables: spread.node_tables.clone(),
                    }
                }
                (LogicalType::Node, ProcedureKind::QueryVectorIndex(query)) => VariableKind::Node {
                    tables: vec![query.index.table],
                },
                _ => super::expression::kind_of(ty),
            };
            scope.insert(Variable { name, slot, kind });
            columns.push(slot);
        }
        let mut plan = Plan::Procedure {
            input: Box::new(input),
            call: Arc::new(bound),
            columns,
            dead: Vec::new(),
            unread: Vec::new(),
            ordered: true,
            top: None,
        };
        if let Some(predicate) = &call.where_clause {
            let (predicate, _) = self.bind_expr(predicate, scope)?;
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        Ok(plan)
    }

    fn bind_spread_activation(
        &mut self,
        call: &ast::CallClause,
        scope: &Scope,
    ) -> Result<ProcedureCall> {
        let arguments = split_arguments(call)?;
        let [table, seeds] = arguments.positional.as_slice() else {
            return Err(Error::binder(format!(
                "Function SPREAD_ACTIVATION did not receive correct arguments: expected (rel table name, seeds) and named options ({SPREAD_OPTIONS}), got {} positional arguments{}.",
                arguments.positional.len(),
                at(call.span)
            )));
        };
        let table_name = self.constant_text(table, "the rel table name")?;
        let schema = self.catalog.rel_table(&table_name).ok_or_else(|| {
            let what = if self.catalog.node_table(&table_name).is_some() {
                "is a node table; spread_activation needs a rel table"
            } else {
                "does not exist"
            };
            Error::binder(format!("Table {table_name} {what}{}.", at(table.span)))
        })?;
        let pairs: Vec<_> = schema.pairs.clone();
        let mut node_tables: Vec<_> = pairs.iter().flat_map(|p| [p.from, p.to]).collect();
        node_tables.sort_unstable();
        node_tables.dedup();
        let seeds = self.bind_seeds(seeds, scope)?;
        let mut spread = SpreadActivation {
            rel_table: table_name.clone(),
            steps: Vec::new(),
            both: false,
            weight: None,
            node_tables,
        };
        let mut direction = Direction::Forward;
        let mut decay = Expr::Literal(Value::Double(SpreadActivation::DECAY_DEFAULT));
        let mut threshold = Expr::Literal(Value::Double(SpreadActivation::THRESHOLD_DEFAULT));
        let mut max_hops = Expr::Literal(Value::Int64(SpreadActivation::MAX_HOPS_DEFAULT));
        for &(name, value, span) in &arguments.named {
            match name.to_ascii_lowercase().as_str() {
                "decay" => decay = self.bind_number(value, scope, "decay", false)?,
                "threshold" => threshold = self.bind_number(value, scope, "threshold", false)?,
                "max_hops" => max_hops = self.bind_number(value, scope, "max_hops", true)?,
                "weight" => {
                    let property = self.constant_text(value, "weight")?;
                    let pair_ids: Vec<_> = pairs.iter().map(|p| p.id).collect();
                    let (columns, ty) = self.rel_property_columns(&pair_ids, &property);
                    if columns.len() != pair_ids.len() {
                        return Err(Error::binder(format!(
                            "Cannot find property {property} for {table_name}{}.",
                            at(value.span)
                        )));
                    }
                    if !ty.is_numeric() || matches!(ty, LogicalType::Int128) {
                        return Err(Error::binder(format!(
                            "{ty} weight type is not supported for spread_activation{}.",
                            at(value.span)
                        )));
                    }
                    spread.weight = Some(columns);
                }
                "direction" => {
                    let text = self.constant_text(value, "direction")?;
                    (direction, spread.both) = match text.to_ascii_lowercase().as_str() {
                        "out" => (Direction::Forward, false),
                        "in" => (Direction::Backward, false),
                        "both" => (Direction::Forward, true),
                        _ => {
                            return Err(Error::binder(format!(
                                "direction must be 'out', 'in' or 'both', not '{text}'{}.",
                                at(value.span)
                            )))
                        }
                    };
                }
                _ => return Err(unknown_argument(name, span)),
            }
        }
        spread.steps = pairs
            .iter()
            .map(|p| Step {
                pair: p.id,
                direction,
            })
            .collect();
        Ok(ProcedureCall {
            name: call.name.clone(),
            kind: ProcedureKind::SpreadActivation(spread),
            arguments: vec![seeds, decay, threshold, max_hops],
            columns: vec![
                ("node".into(), LogicalType::Node),
                ("activation".into(), LogicalType::Double),
                ("hops".into(), LogicalType::Int64),
            ],
        })
    }

    /// A constant string argument (a literal or a parameter).
    pub(crate) fn constant_text(&mut self, expr: &ast::Expr, what: &str) -> Result<String> {
        let (bound, _) = self.bind_expr(expr, &Scope::default()).map_err(|_| {
            Error::binder(format!(
                "{what} must be a constant string{}.",
                at(expr.span)
            ))
        })?;
        match crate::constant::evaluate_constant(&bound) {
            Some(Value::String(text)) => Ok(text.to_string()),
            _ => Err(Error::binder(format!(
                "{what} must be a constant string{}.",
                at(expr.span)
            ))),
        }
    }

    /// The seeds: a node, an internal id, a struct or map with `node`/`id` and `activation`,
    /// or a list of those (checked per row when the type is not known here).
    fn bind_seeds(&mut self, expr: &ast::Expr, scope: &Scope) -> Result<Expr> {
        let (bound, ty) = self.bind_expr(expr, scope)?;
        let element = match &ty {
            LogicalType::List(inner) | LogicalType::Array(inner, _) => inner.as_ref().clone(),
            other => other.clone(),
        };
        let accepted = matches!(
            element,
            LogicalType::Node
                | LogicalType::InternalId
                | LogicalType::Struct(_)
                | LogicalType::Map(..)
                | LogicalType::Any
        );
        if !accepted {
            return Err(Error::binder(format!(
                "spread_activation seeds must be nodes, internal ids, or {{node: n, activation: a}} structs (or a list of them), not {ty}{}.",
                at(expr.span)
            )));
        }
        Ok(bound)
    }

    /// A numeric option; `integer` when it must be an integer.
    pub(crate) fn bind_number(
        &mut self,
        expr: &ast::Expr,
        scope: &Scope,
        what: &str,
        integer: bool,
    ) -> Result<Expr> {
        let (bound, ty) = self.bind_expr(expr, scope)?;
        let fits = if integer {
            ty.is_integer()
        } else {
            ty.is_numeric()
        };
        if !fits && ty != LogicalType::Any {
            let expected = if integer { "an integer" } else { "a number" };
            return Err(Error::binder(format!(
                "{what} must be {expected}, not {ty}{}.",
                at(expr.span)
            )));
        }
        Ok(bound)
    }
}
