//! Procedure top: a top-N (`ORDER BY ... [SKIP s] LIMIT k`, [`Plan::TopN`]) whose first key
//! is a `spread_activation` call's activation, descending, keeps at most `s + k` rows, all of
//! them among the call's `s + k` most activated rows or tied with the last of those. So the
//! call needs to hand on only those rows: a spread reaches hundreds of thousands of nodes, and
//! the projection and the top-N above would otherwise read each one's properties and sort it
//! (100 ms for 131,000 nodes at Graph500 scale 18). The rule sets `Plan::Procedure::top`:
//!
//! ```text
//! TopN #7 DESC, #3.ID limit=100                  TopN #7 DESC, #3.ID limit=100
//!   Project #6=#3.ID, #7=#4              =>        Project #6=#3.ID, #7=#4
//!     Procedure spread_activation -> [3, 4, 5]       Procedure spread_activation -> [3, 4, 5] top 100
//! ```
//!
//! Only projections may stand between the two (they keep every row; a filter or a join would
//! not), and `s` and `k` must be constants. The top-N is per call: with several input rows the
//! rows the top-N keeps are still among each call's own first `s + k` or tied with them.

use warren_common::value::Value;

use crate::constant::evaluate_constant;
use crate::expr::Expr;
use crate::plan::Plan;
use crate::procedure::ProcedureKind;

/// The output column of `spread_activation` that its ranking sorts by, descending.
const ACTIVATION_COLUMN: usize = 1;

/// Whether `operator` is one that [`procedure_top`] may change: a top-N.
pub fn rewrites(operator: &Plan) -> bool {
    matches!(operator, Plan::TopN { .. })
}

pub fn procedure_top(plan: Plan) -> Plan {
    let plan = plan.map_children(&mut procedure_top);
    let Plan::TopN {
        input,
        keys,
        skip,
        limit,
    } = plan
    else {
        return plan;
    };
    let input = match (
        first_descending_slot(&keys),
        rows_kept(skip.as_ref(), &limit),
    ) {
        (Some(slot), Some(top)) => Box::new(mark(*input, slot, top)),
        _ => input,
    };
    Plan::TopN {
        input,
        keys,
        skip,
        limit,
    }
}

/// The slot of the first sort key when it is a plain slot sorted descending.
fn first_descending_slot(keys: &[(Expr, bool)]) -> Option<usize> {
    match keys.first() {
        Some((Expr::Slot(slot), true)) => Some(*slot),
        _ => None,
    }
}

/// `skip + limit` when both are non-negative integer constants.
fn rows_kept(skip: Option<&Expr>, limit: &Expr) -> Option<u64> {
    let count = |expr: &Expr| match evaluate_constant(expr)? {
        Value::Int64(count) => u64::try_from(count).ok(),
        _ => None,
    };
    let skip = match skip {
        Some(skip) => count(skip)?,
        None => 0,
    };
    skip.checked_add(count(limit)?)
}

/// Follows `slot` down through projections to a `spread_activation` call whose activation it
/// is, and sets that call's `top` to `rows` (or keeps a smaller one); any other operator ends
/// the walk unchanged.
fn mark(plan: Plan, slot: usize, rows: u64) -> Plan {
    match plan {
        Plan::Project { input, assignments } => {
            let below = match assignments.iter().find(|(assigned, _)| *assigned == slot) {
                Some((_, Expr::Slot(source))) => Some(*source),
                // Computed here: not the call's column.
                Some(_) => None,
                // Not assigned here: the slot passes through from below.
                None => Some(slot),
            };
            let input = match below {
                Some(source) => Box::new(mark(*input, source, rows)),
                None => input,
            };
            Plan::Project { input, assignments }
        }
        mut procedure @ Plan::Procedure { .. } => {
            if let Plan::Procedure {
                call, columns, top, ..
            } = &mut procedure
            {
                let ranked_by_slot = matches!(call.kind, ProcedureKind::SpreadActivation(_))
                    && columns.get(ACTIVATION_COLUMN) == Some(&slot);
                if ranked_by_slot {
                    *top = Some(top.map_or(rows, |old| old.min(rows)));
                }
            }
            procedure
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread() -> Plan {
        crate::optimizer::test_plans::spread_call(vec![3, 4, 5])
    }

    fn top_n(input: Plan, key: Expr, descending: bool, skip: Option<i64>) -> Plan {
        Plan::TopN {
            input: Box::new(input),
            keys: vec![(key, descending), (Expr::Slot(3), false)],
            skip: skip.map(|skip| Expr::Literal(Value::Int64(skip))),
            limit: Expr::Literal(Value::Int64(100)),
        }
    }

    fn project(input: Plan, assignments: Vec<(usize, Expr)>) -> Plan {
        Plan::Project {
            input: Box::new(input),
            assignments,
        }
    }

    /// The `top` of the call under the plan's projections, if the plan reaches one.
    fn call_top(plan: &Plan) -> Option<Option<u64>> {
        match plan {
            Plan::TopN { input, .. } | Plan::Project { input, .. } => call_top(input),
            Plan::Procedure { top, .. } => Some(*top),
            _ => None,
        }
    }

    #[test]
    fn a_top_n_by_activation_descending_marks_the_call() {
        let renamed = project(spread(), vec![(6, Expr::Slot(3)), (7, Expr::Slot(4))]);
        let plan = procedure_top(top_n(renamed, Expr::Slot(7), true, Some(20)));
        assert_eq!(call_top(&plan), Some(Some(120)));
        let direct = procedure_top(top_n(spread(), Expr::Slot(4), true, None));
        assert_eq!(call_top(&direct), Some(Some(100)));
    }

    #[test]
    fn other_orders_and_shapes_leave_the_call_whole() {
        // Ascending, another column, or a filter in between: every row may matter.
        let ascending = procedure_top(top_n(spread(), Expr::Slot(4), false, None));
        assert_eq!(call_top(&ascending), Some(None));
        let hops = procedure_top(top_n(spread(), Expr::Slot(5), true, None));
        assert_eq!(call_top(&hops), Some(None));
        let computed = project(spread(), vec![(7, Expr::Literal(Value::Int64(1)))]);
        let computed = procedure_top(top_n(computed, Expr::Slot(7), true, None));
        assert_eq!(call_top(&computed), Some(None));
        let filtered = Plan::Filter {
            input: Box::new(spread()),
            predicate: Expr::Literal(Value::Bool(true)),
        };
        let filtered = procedure_top(top_n(filtered, Expr::Slot(4), true, None));
        assert!(matches!(
            filtered,
            Plan::TopN { input, .. } if matches!(&*input, Plan::Filter { input, .. }
                if matches!(&**input, Plan::Procedure { top: None, .. }))
        ));
    }
}
