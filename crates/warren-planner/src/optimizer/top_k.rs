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
//!
//! When instead every sort key is a property of the scanned node (`MATCH (n:T) RETURN n.name
//! ORDER BY n.score DESC LIMIT 10`) and the projection cannot fail, the scan and the selection
//! become one [`Plan::TopNodes`] under the projection: the kept nodes are chosen from the key
//! columns, and only they become rows.

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
    let input = match vector_top_k(*input, &keys, skip.clone(), count.clone()) {
        Ok(plan) => return plan,
        Err(input) => input,
    };
    match node_top_k(*input, &keys, skip.clone(), count.clone()) {
        Ok(plan) => plan,
        Err(input) => Plan::TopN {
            input,
            keys,
            skip,
            limit: count,
        },
    }
}

/// The node form (`Project` over [`Plan::TopNodes`]) when the ORDER BY's input is a projection
/// of a scan of the one input row, every sort key is a property of the scanned node (or a slot
/// the projection assigns one to), and the projection cannot fail (slots, literals and
/// properties: evaluated for the kept rows only, it then gives what it gives over every row);
/// else the unchanged input.
fn node_top_k(
    input: Plan,
    keys: &[(Expr, bool)],
    skip: Option<Expr>,
    limit: Expr,
) -> Result<Plan, Box<Plan>> {
    let infallible = |e: &Expr| match e {
        Expr::Slot(_) | Expr::Literal(_) => true,
        Expr::Property { base, .. } | Expr::InternalProperty { base, .. } => {
            matches!(**base, Expr::Slot(_))
        }
        _ => false,
    };
    over_projected_scan(input, |(tables, slot, filter), assignments| {
        if !assignments.iter().all(|(_, e)| infallible(e)) {
            return None;
        }
        let nodes = node_slots(slot, assignments);
        let property_of = |key: &Expr| match assigned(key, assignments)? {
            Expr::Property { base, property } if matches!(**base, Expr::Slot(node) if nodes.contains(&node)) => {
                Some(property.clone())
            }
            _ => None,
        };
        let keys = keys
            .iter()
            .map(|(key, descending)| property_of(key).map(|p| (p, *descending)))
            .collect::<Option<Vec<_>>>()?;
        Some(Plan::TopNodes {
            tables: tables.clone(),
            slot,
            filter: filter.clone(),
            keys,
            skip,
            limit,
        })
    })
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
    over_projected_scan(input, |(tables, slot, filter), assignments| {
        let key = assigned(key, assignments)?;
        let [table] = tables.as_slice() else {
            return None;
        };
        let nodes = node_slots(slot, assignments);
        let (function, array_type, column, query) = match_distance(key, &nodes, *table)?;
        Some(Plan::VectorTopK(Box::new(VectorTopK {
            input: Plan::Unit,
            table: *table,
            slot,
            column,
            function,
            array_type,
            query,
            descending: *descending,
            filter: filter.clone(),
            skip,
            limit,
        })))
    })
}

/// `Project` over what `select` makes of a projection's scan of the one input row (its
/// tables, slot and filter, and the projection's assignments), or the unchanged `input` when
/// it is no such projection or `select` makes nothing of it.
fn over_projected_scan(
    input: Plan,
    select: impl FnOnce(super::ScanOfOneRow<'_>, &[(usize, Expr)]) -> Option<Plan>,
) -> Result<Plan, Box<Plan>> {
    let Plan::Project {
        input: scan,
        assignments,
    } = input
    else {
        return Err(Box::new(input));
    };
    match super::scan_of_one_row(&scan).and_then(|found| select(found, &assignments)) {
        Some(selected) => Ok(Plan::Project {
            input: Box::new(selected),
            assignments,
        }),
        None => Err(Box::new(Plan::Project {
            input: scan,
            assignments,
        })),
    }
}

/// The scan's node slot and the slots the projection copies it to.
fn node_slots(slot: usize, assignments: &[(usize, Expr)]) -> Vec<usize> {
    std::iter::once(slot)
        .chain(
            assignments
                .iter()
                .filter(|(_, e)| *e == Expr::Slot(slot))
                .map(|(copy, _)| *copy),
        )
        .collect()
}

/// What a sort key stands for: the expression the projection last assigned to its slot when
/// it is a slot (`None` when the projection assigns none), else the key itself.
fn assigned<'a>(key: &'a Expr, assignments: &'a [(usize, Expr)]) -> Option<&'a Expr> {
    match key {
        Expr::Slot(s) => assignments
            .iter()
            .rev()
            .find(|(slot, _)| slot == s)
            .map(|(_, e)| e),
        other => Some(other),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use warren_common::value::Value;

    use super::*;
    use crate::expr::{BinaryOp, PropertyColumns};

    fn property(slot: usize, name: &str) -> Expr {
        Expr::Property {
            base: Box::new(Expr::Slot(slot)),
            property: PropertyColumns {
                name: Arc::from(name),
                columns: vec![(0, 1)],
            },
        }
    }

    /// `LIMIT 3 (ORDER BY keys (Project assignments (ScanNodes #0)))`.
    fn ordered(assignments: Vec<(usize, Expr)>, keys: Vec<(Expr, bool)>) -> Plan {
        Plan::Limit {
            input: Box::new(Plan::OrderBy {
                input: Box::new(Plan::Project {
                    input: Box::new(Plan::ScanNodes {
                        input: Box::new(Plan::Unit),
                        tables: vec![0, 1],
                        slot: 0,
                        filter: None,
                    }),
                    assignments,
                }),
                keys,
            }),
            count: Expr::Literal(Value::Int64(3)),
        }
    }

    fn top_nodes_keys(plan: &Plan) -> Option<Vec<(Arc<str>, bool)>> {
        let Plan::Project { input, .. } = plan else {
            return None;
        };
        let Plan::TopNodes { keys, tables, .. } = &**input else {
            return None;
        };
        assert_eq!(tables, &[0, 1]);
        Some(
            keys.iter()
                .map(|(p, descending)| (p.name.clone(), *descending))
                .collect(),
        )
    }

    #[test]
    fn property_keys_over_a_scan_choose_nodes_from_the_columns() {
        // ORDER BY a.score DESC, then an alias of a.name; the node copied to another slot.
        let plan = top_k(ordered(
            vec![
                (1, property(0, "name")),
                (2, Expr::Slot(0)),
                (3, Expr::Literal(Value::Int64(7))),
            ],
            vec![(property(2, "score"), true), (Expr::Slot(1), false)],
        ));
        assert_eq!(
            top_nodes_keys(&plan),
            Some(vec![(Arc::from("score"), true), (Arc::from("name"), false)])
        );
    }

    #[test]
    fn other_keys_and_fallible_projections_keep_the_rows() {
        let sum = Expr::Binary(
            BinaryOp::Add,
            Box::new(property(0, "x")),
            Box::new(Expr::Literal(Value::Int64(1))),
        );
        for (assignments, key) in [
            // A key that is an expression, the node itself, or an unknown slot.
            (vec![(1, property(0, "x"))], sum.clone()),
            (vec![(1, property(0, "x"))], Expr::Slot(0)),
            (vec![(1, property(0, "x"))], Expr::Slot(9)),
            // A projection that may fail on rows the sort would drop.
            (vec![(1, sum.clone())], property(0, "x")),
        ] {
            let plan = top_k(ordered(assignments, vec![(key, false)]));
            assert!(top_nodes_keys(&plan).is_none(), "{plan:?}");
            assert!(matches!(plan, Plan::TopN { .. }), "{plan:?}");
        }
    }
}
