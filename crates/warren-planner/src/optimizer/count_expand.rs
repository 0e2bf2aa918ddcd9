//! Factorized counting: when an aggregation only counts the rows of the single-hop expansion
//! right under it (`count(*)`, or `count(x)` of a variable that is never NULL there) and reads
//! neither the far node nor the rel, the expansion counts each input row's entries (its
//! degree along the steps, delta included) instead of producing one row per entry, and the
//! aggregation sums the counts. `MATCH (a {ID: $id})-[:K]->()-[:K]->(c) RETURN count(*)` then
//! costs one degree per first-hop neighbour instead of one row per two-hop path.
//!
//! The rows counted are exactly the rows the expansion would yield: an entry counts when its
//! step starts at the input node's table and ends at one of the target's tables, rels deleted
//! in the delta are not counted, and an input row with no such entry yields no row (so a group
//! of the aggregation that only it would have formed still does not appear).

use crate::expr::{AggregateExpr, AggregateFunction, Expr};
use crate::plan::{Plan, Target};

/// Whether `operator` is one that [`count_expand`] may change: an aggregation over an
/// expansion.
pub fn rewrites(operator: &Plan) -> bool {
    matches!(operator, Plan::Aggregate { input, .. } if matches!(**input, Plan::Expand { .. }))
}

pub fn count_expand(plan: Plan, slots: &mut usize) -> Plan {
    super::map_aggregates(plan, &mut |(input, keys, aggregates)| {
        if !countable(&input, &keys, &aggregates) {
            return (input, keys, aggregates);
        }
        let Plan::Expand {
            input: below,
            from,
            steps,
            target: Target::Bind { tables, .. },
            ..
        } = *input
        else {
            unreachable!("countable() accepts expansions that bind their target only");
        };
        let count_slot = *slots;
        *slots += 1;
        let aggregates = super::summing_counts(&aggregates, count_slot);
        let counted = Plan::CountExpand {
            input: below,
            from,
            steps,
            tables,
            count_slot,
        };
        (Box::new(counted), keys, aggregates)
    })
}

/// Whether the aggregation over `input` counts the expansion's rows and nothing else.
fn countable(input: &Plan, keys: &[(usize, Expr)], aggregates: &[(usize, AggregateExpr)]) -> bool {
    let Plan::Expand {
        input: below,
        from,
        rel_slot,
        target: Target::Bind { slot, .. },
        ..
    } = input
    else {
        return false;
    };
    if aggregates.is_empty() || from == slot {
        return false;
    }
    let hidden = |s: usize| s == *slot || Some(s) == *rel_slot;
    if keys.iter().any(|(_, e)| e.slots().into_iter().any(hidden)) {
        return false;
    }
    let never_null = never_null_slots(below);
    aggregates.iter().all(|(_, aggregate)| {
        !aggregate.distinct
            && match (aggregate.function, &aggregate.arg) {
                (AggregateFunction::CountStar, _) => true,
                (AggregateFunction::Count, Some(Expr::Slot(s))) => {
                    hidden(*s) || never_null.contains(s)
                }
                _ => false,
            }
    })
}

/// Node slots that every row of `plan` holds a node in: those bound by the scans, lookups and
/// expansions of its chain of such operators (and filters), down to its first other operator.
fn never_null_slots(plan: &Plan) -> Vec<usize> {
    let mut slots = Vec::new();
    let mut node = plan;
    loop {
        match node {
            Plan::ScanNodes { input, slot, .. } | Plan::LookupNode { input, slot, .. } => {
                slots.push(*slot);
                node = input;
            }
            Plan::Expand {
                input,
                rel_slot,
                target,
                ..
            } => {
                slots.push(target.slot());
                slots.extend(rel_slot);
                node = input;
            }
            Plan::Filter { input, .. } => node = input,
            _ => return slots,
        }
    }
}

#[cfg(test)]
mod tests {
    use warren_storage::Direction;

    use super::*;
    use crate::plan::Step;

    fn expand(input: Plan, from: usize, target: usize, rel_slot: Option<usize>) -> Plan {
        Plan::Expand {
            input: Box::new(input),
            from,
            steps: vec![Step {
                pair: 1,
                direction: Direction::Forward,
            }],
            rel_slot,
            target: Target::Bind {
                slot: target,
                tables: vec![0],
            },
        }
    }

    fn scan(slot: usize) -> Plan {
        Plan::ScanNodes {
            input: Box::new(Plan::Unit),
            tables: vec![0],
            slot,
            filter: None,
        }
    }

    fn aggregate(input: Plan, keys: Vec<(usize, Expr)>, aggregates: Vec<AggregateExpr>) -> Plan {
        Plan::Aggregate {
            input: Box::new(input),
            keys,
            aggregates: aggregates
                .into_iter()
                .enumerate()
                .map(|(i, a)| (10 + i, a))
                .collect(),
        }
    }

    fn count(arg: Option<usize>, distinct: bool) -> AggregateExpr {
        AggregateExpr {
            function: if arg.is_some() {
                AggregateFunction::Count
            } else {
                AggregateFunction::CountStar
            },
            distinct,
            arg: arg.map(Expr::Slot),
        }
    }

    fn rewritten(plan: Plan) -> bool {
        let mut slots = 20;
        let out = count_expand(plan, &mut slots);
        let Plan::Aggregate { input, .. } = out else {
            panic!("the aggregation stays on top");
        };
        matches!(*input, Plan::CountExpand { count_slot: 20, .. })
    }

    #[test]
    fn counts_of_the_last_hop_are_rewritten() {
        let two_hops = || expand(expand(scan(0), 0, 1, None), 1, 2, Some(3));
        assert!(rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(None, false)]
        )));
        assert!(rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(Some(2), false)]
        )));
        assert!(rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(Some(3), false)]
        )));
        assert!(rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(Some(0), false)]
        )));
        let by_middle = vec![(9, Expr::Slot(1))];
        assert!(rewritten(aggregate(
            two_hops(),
            by_middle,
            vec![count(None, false)]
        )));
    }

    #[test]
    fn reads_of_the_last_hop_keep_the_rows() {
        let two_hops = || expand(expand(scan(0), 0, 1, None), 1, 2, Some(3));
        assert!(!rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(Some(2), true)]
        )));
        let by_target = vec![(9, Expr::Slot(2))];
        assert!(!rewritten(aggregate(
            two_hops(),
            by_target,
            vec![count(None, false)]
        )));
        let by_rel = vec![(9, Expr::Slot(3))];
        assert!(!rewritten(aggregate(
            two_hops(),
            by_rel,
            vec![count(None, false)]
        )));
        // A slot the chain does not bind may be NULL: count(x) must skip those rows.
        assert!(!rewritten(aggregate(
            two_hops(),
            vec![],
            vec![count(Some(7), false)]
        )));
        let check = Plan::Expand {
            input: Box::new(scan(0)),
            from: 0,
            steps: vec![],
            rel_slot: None,
            target: Target::Check { slot: 0 },
        };
        assert!(!rewritten(aggregate(
            check,
            vec![],
            vec![count(None, false)]
        )));
    }
}
