//! Top-k: `ORDER BY ... [SKIP s] LIMIT k` keeps the first `s + k` rows in a bounded heap
//! ([`Plan::TopN`]) instead of sorting every row; and when the rows come from a scan of one
//! node table and the only sort key is an array distance function of one of its vector
//! columns and a constant vector (a literal or a parameter), the scan and the selection become
//! one [`Plan::VectorTopK`], a parallel scan of the contiguous column:
//!
//! ```text
//! Limit k                                   Project ...
//!   [Skip s]                                  VectorTopK #n f(column, query) [DESC] k [s]
//!     OrderBy f(#n.column, query) [DESC]  =>     Unit
//!       Project ...
//!         ScanNodes #n tables=[t] [filter]
//!           Unit
//! ```
//!
//! The sort key may be the function itself or a slot the projection assigns it to, and its
//! node may be the scan's slot or a slot the projection copies it to (`MATCH (n:T) WITH n
//! ORDER BY f(n.v, $q) LIMIT k`, the form that seeds a later clause).

use crate::constant::evaluate_constant;
use crate::expr::Expr;
use crate::plan::{Plan, VectorTopK};

/// Whether `operator` is one that [`top_k`] may change: a LIMIT (over an ORDER BY).
pub fn rewrites(operator: &Plan) -> bool {
    matches!(operator, Plan::Limit { .. })
}

pub fn top_k(plan: Plan) -> Plan {
    let plan = plan.map_children(&mut top_k);
    let Plan::Limit { input, count } = plan else {
        return plan;
    };
    let (skip, order_by) = match *input {
        Plan::Skip { input, count } if matches!(*input, Plan::OrderBy { .. }) => {
            (Some(count), *input)
        }
        other => (None, other),
    };
    let Plan::OrderBy { input, keys } = order_by else {
        // Not an ORDER BY: put the plan back together as it was.
        let inner = match skip {
            Some(skip) => Plan::Skip {
                input: Box::new(order_by),
                count: skip,
            },
            None => order_by,
        };
        return Plan::Limit {
            input: Box::new(inner),
            count,
        };
    };
    match vector_top_k(*input, &keys, skip.clone(), count.clone()) {
        Ok(plan) => plan,
        Err(input) => Plan::TopN {
            input,
            keys,
            skip,
            limit: count,
        },
    }
}

/// The vector form, or the unchanged input of the ORDER BY when the shape does not match.
fn vector_top_k(
    input: Plan,
    keys: &[(Expr, bool)],
    skip: Option<Expr>,
    limit: Expr,
) -> Result<Plan, Box<Plan>> {
    let [(key, descending)] = keys else {
        return Err(Box::new(input));
    };
    let Plan::Project {
        input: scan,
        assignments,
    } = input
    else {
        return Err(Box::new(input));
    };
    let key = match key {
        Expr::Slot(s) => assignments
            .iter()
            .rev()
            .find(|(slot, _)| slot == s)
            .map(|(_, e)| e),
        other => Some(other),
    };
    let matched = match (&*scan, key) {
        (
            Plan::ScanNodes {
                input,
                tables,
                slot,
                filter,
            },
            Some(key),
        ) if matches!(**input, Plan::Unit) && tables.len() == 1 => {
            // The scan's node and the slots the projection copies it to.
            let nodes: Vec<usize> = std::iter::once(*slot)
                .chain(
                    assignments
                        .iter()
                        .filter(|(_, e)| *e == Expr::Slot(*slot))
                        .map(|(copy, _)| *copy),
                )
                .collect();
            match_distance(key, &nodes, tables[0]).map(|(function, array_type, column, query)| {
                VectorTopK {
                    input: Plan::Unit,
                    table: tables[0],
                    slot: *slot,
                    column,
                    function,
                    array_type,
                    query,
                    descending: *descending,
                    filter: filter.clone(),
                    skip,
                    limit,
                }
            })
        }
        _ => None,
    };
    match matched {
        Some(top) => Ok(Plan::Project {
            input: Box::new(Plan::VectorTopK(Box::new(top))),
            assignments,
        }),
        None => Err(Box::new(Plan::Project {
            input: scan,
            assignments,
        })),
    }
}

/// `f(cast(#node.column), cast(constant))` in either argument order, `node` one of `nodes`
/// (slots holding the scanned node): the function, the array type, the column and the
/// constant.
fn match_distance(
    key: &Expr,
    nodes: &[usize],
    table: warren_common::TableId,
) -> Option<(
    crate::functions::ScalarFunction,
    warren_common::types::LogicalType,
    usize,
    Expr,
)> {
    let Expr::Function { function, args } = key else {
        return None;
    };
    if !function.is_array_distance() {
        return None;
    }
    let [Expr::Cast { expr: a, ty }, Expr::Cast { expr: b, .. }] = args.as_slice() else {
        return None;
    };
    let column_of = |e: &Expr| match e {
        Expr::Property { base, property } if matches!(**base, Expr::Slot(node) if nodes.contains(&node)) => {
            property.column(table)
        }
        _ => None,
    };
    let constant = |e: &Expr| evaluate_constant(e).map(Expr::Literal);
    let (column, query) = match (column_of(a), column_of(b)) {
        (Some(column), _) if constant(b).is_some() => (column, constant(b)?),
        (_, Some(column)) if constant(a).is_some() => (column, constant(a)?),
        _ => return None,
    };
    Some((*function, ty.clone(), column, query))
}
