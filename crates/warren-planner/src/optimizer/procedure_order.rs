//! Procedure order: tells each procedure call whether anything above it depends on the order
//! of its rows. `spread_activation` documents its rows ordered by activation; ranking 100,000
//! reached nodes costs milliseconds, wasted when an aggregation folds them into groups whose
//! order is fixed by an ORDER BY (or a single group). The pass walks the plan top-down with what
//! the operator above needs of each operator's output order ([`Need`]), and clears
//! `Plan::Procedure::ordered` where the answer is "nothing".

use std::collections::HashSet;

use crate::expr::{AggregateFunction, Expr};
use crate::plan::Plan;

/// Whether `operator` is one that [`mark_order`] may change.
pub fn rewrites(operator: &Plan) -> bool {
    matches!(operator, Plan::Procedure { ordered: true, .. })
}

/// What the operators above need of an operator's output order.
#[derive(Clone, Debug, PartialEq)]
enum Need {
    /// The order may be visible: kept as it is.
    Order,
    /// The rows are stably sorted above by keys that include these slots, unchanged on the way:
    /// rows that differ in them end up in the same order whatever their order here.
    SortedBy(HashSet<usize>),
    /// Nothing above depends on the order (only on which rows there are).
    Nothing,
}

/// Clears `ordered` of every procedure call whose row order nothing above depends on.
pub fn mark_order(plan: Plan) -> Plan {
    mark(plan, Need::Order)
}

fn mark(plan: Plan, need: Need) -> Plan {
    let child_need = need_of_input(&plan, &need);
    let mut plan = plan.map_children(&mut |child| mark(child, child_need.clone()));
    if let Plan::Procedure { ordered, .. } = &mut plan {
        *ordered = *ordered && need != Need::Nothing;
    }
    plan
}

/// What `plan` needs of its inputs' order, given what is needed of its own (`need`).
/// Operators not listed keep the input order visible (a LIMIT, a DISTINCT keeping first rows,
/// a write creating ids in order, a subquery), so they need it whatever is needed above.
fn need_of_input(plan: &Plan, need: &Need) -> Need {
    match (plan, need) {
        (Plan::OrderBy { .. }, Need::Nothing) => Need::Nothing,
        // A stable sort: ties keep their input order, which matters as much as the order of
        // the sorted rows does above.
        (Plan::OrderBy { keys, .. }, Need::Order) => Need::SortedBy(
            keys.iter()
                .filter_map(|(key, _)| match key {
                    Expr::Slot(slot) => Some(*slot),
                    _ => None,
                })
                .collect(),
        ),
        (
            Plan::Aggregate {
                keys, aggregates, ..
            },
            _,
        ) => {
            let order_sensitive = aggregates
                .iter()
                .any(|(_, a)| a.function == AggregateFunction::Collect);
            // Groups come out in the order of their first rows: that order is free when there
            // is one group, when nothing above needs it, or when a sort above orders the groups
            // by all their keys (no two groups share them).
            let groups_free = match need {
                Need::Nothing => true,
                _ if keys.is_empty() => true,
                Need::SortedBy(slots) => keys.iter().all(|(slot, _)| slots.contains(slot)),
                Need::Order => false,
            };
            if order_sensitive || !groups_free {
                Need::Order
            } else {
                Need::Nothing
            }
        }
        (Plan::Project { assignments, .. }, Need::SortedBy(slots)) => {
            let mut kept = slots.clone();
            for (slot, _) in assignments {
                kept.remove(slot);
            }
            Need::SortedBy(kept)
        }
        (Plan::Filter { .. } | Plan::Project { .. }, _) => need.clone(),
        (Plan::Procedure { .. } | Plan::Expand { .. } | Plan::Unwind { .. }, Need::Nothing) => {
            Need::Nothing
        }
        _ => Need::Order,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::AggregateExpr;

    fn procedure() -> Plan {
        crate::optimizer::test_plans::spread_call(vec![0, 1])
    }

    fn aggregate(input: Plan, keys: &[usize], function: AggregateFunction) -> Plan {
        Plan::Aggregate {
            input: Box::new(input),
            keys: keys.iter().map(|&s| (s, Expr::Slot(s))).collect(),
            aggregates: vec![(
                5,
                AggregateExpr {
                    function,
                    arg: Some(Expr::Slot(1)),
                    distinct: false,
                },
            )],
        }
    }

    fn order_by(input: Plan, slots: &[usize]) -> Plan {
        Plan::OrderBy {
            input: Box::new(input),
            keys: slots.iter().map(|&s| (Expr::Slot(s), true)).collect(),
        }
    }

    fn ordered(plan: &Plan) -> bool {
        let found = std::cell::Cell::new(None);
        plan.any(&|p| {
            if let Plan::Procedure { ordered, .. } = p {
                found.set(Some(*ordered));
            }
            false
        });
        found.get().expect("a procedure in the plan")
    }

    #[test]
    fn rows_returned_as_they_are_keep_their_order() {
        assert!(ordered(&mark_order(procedure())));
        let sorted = order_by(procedure(), &[0]);
        assert!(
            ordered(&mark_order(sorted)),
            "ties keep the procedure's order"
        );
    }

    #[test]
    fn aggregations_whose_groups_are_ordered_free_the_order() {
        use AggregateFunction::{Collect, Sum};
        let one_group = aggregate(procedure(), &[], Sum);
        assert!(!ordered(&mark_order(one_group)));
        let sorted_groups = order_by(aggregate(procedure(), &[0], Sum), &[0]);
        assert!(!ordered(&mark_order(sorted_groups)));
        let unsorted_groups = aggregate(procedure(), &[0], Sum);
        assert!(
            ordered(&mark_order(unsorted_groups)),
            "groups in first-row order"
        );
        let other_sort = order_by(aggregate(procedure(), &[0], Sum), &[5]);
        assert!(ordered(&mark_order(other_sort)), "ties among sums");
        let collected = order_by(aggregate(procedure(), &[0], Collect), &[0]);
        assert!(
            ordered(&mark_order(collected)),
            "collect keeps the row order"
        );
        let limited = Plan::Limit {
            input: Box::new(procedure()),
            count: Expr::Literal(warren_common::value::Value::Int64(1)),
        };
        let counted = aggregate(limited, &[], Sum);
        assert!(
            ordered(&mark_order(counted)),
            "a LIMIT keeps the first rows"
        );
    }
}
