//! Path counting: when the only consumer of a recursive join is an aggregation that needs path
//! counts and length statistics (`count(*)`, `sum/min/max(length(p))`), the join counts paths
//! by dynamic programming instead of enumerating them, and the aggregation sums the counts.
//! `MATCH (a)-[*1..5]->(b) ... RETURN count(*)` then costs a few sweeps over the edges instead of
//! one step per walk.

use crate::expr::{AggregateExpr, AggregateFunction, Expr};
use crate::plan::{Destination, Plan, RecursiveOutput, RecursivePlan};

/// What one rewritten aggregate reads from the join.
enum Stat {
    Count,
    LengthSum,
    LengthMin,
    LengthMax,
}

/// Whether `operator` is one that [`count_paths`] may change: an aggregation over a recursive
/// join.
pub fn rewrites(operator: &Plan) -> bool {
    matches!(operator, Plan::Aggregate { input, .. } if matches!(**input, Plan::Recursive(_)))
}

pub fn count_paths(plan: Plan, slots: &mut usize) -> Plan {
    let plan = plan.map_children(&mut |child| count_paths(child, slots));
    match plan {
        Plan::Aggregate {
            input,
            keys,
            aggregates,
        } => match *input {
            Plan::Recursive(recursive) => rewrite(*recursive, keys, aggregates, slots),
            other => Plan::Aggregate {
                input: Box::new(other),
                keys,
                aggregates,
            },
        },
        other => other,
    }
}

fn classify(
    aggregate: &AggregateExpr,
    recursive: &RecursivePlan,
    (rel_slot, length_slot): (Option<usize>, Option<usize>),
) -> Option<Stat> {
    if aggregate.distinct {
        return None;
    }
    let endpoint = |slot: usize| {
        slot == recursive.source
            || matches!(recursive.destination, Destination::Bind { slot: s, .. } if s == slot)
    };
    match (aggregate.function, &aggregate.arg) {
        (AggregateFunction::CountStar, _) => Some(Stat::Count),
        (AggregateFunction::Count, Some(Expr::Slot(s))) if endpoint(*s) => Some(Stat::Count),
        // The path value itself is never NULL: counting it counts paths.
        (AggregateFunction::Count, Some(Expr::Slot(s))) if Some(*s) == rel_slot => {
            Some(Stat::Count)
        }
        (function, Some(Expr::Slot(s))) if Some(*s) == length_slot => match function {
            AggregateFunction::Sum => Some(Stat::LengthSum),
            AggregateFunction::Min => Some(Stat::LengthMin),
            AggregateFunction::Max => Some(Stat::LengthMax),
            _ => None,
        },
        _ => None,
    }
}

fn rewrite(
    mut recursive: RecursivePlan,
    keys: Vec<(usize, Expr)>,
    aggregates: Vec<(usize, AggregateExpr)>,
    slots: &mut usize,
) -> Plan {
    let RecursiveOutput::Paths {
        rel_slot,
        length_slot,
        cost_slot: None,
    } = recursive.output
    else {
        return unchanged(recursive, keys, aggregates);
    };
    if recursive.kind.is_weighted() {
        return unchanged(recursive, keys, aggregates);
    }
    let stats: Option<Vec<Stat>> = aggregates
        .iter()
        .map(|(_, a)| classify(a, &recursive, (rel_slot, length_slot)))
        .collect();
    let Some(stats) = stats else {
        return unchanged(recursive, keys, aggregates);
    };
    let path_slots = [rel_slot, length_slot];
    if keys
        .iter()
        .any(|(_, e)| path_slots.iter().flatten().any(|s| e.slots().contains(s)))
    {
        return unchanged(recursive, keys, aggregates);
    }
    let per_destination = match &recursive.destination {
        Destination::Bind { slot, .. } => keys.iter().any(|(_, e)| e.slots().contains(slot)),
        Destination::Check { .. } => false,
    };
    let mut new_slot = || {
        *slots += 1;
        *slots - 1
    };
    let count_slot = new_slot();
    let (mut sum, mut min, mut max) = (None, None, None);
    let mut rewritten = Vec::with_capacity(aggregates.len());
    for ((out, _), stat) in aggregates.into_iter().zip(stats) {
        let (function, slot) = match stat {
            Stat::Count => (AggregateFunction::SumCounts, count_slot),
            Stat::LengthSum => (
                AggregateFunction::Sum,
                *sum.get_or_insert_with(&mut new_slot),
            ),
            Stat::LengthMin => (
                AggregateFunction::Min,
                *min.get_or_insert_with(&mut new_slot),
            ),
            Stat::LengthMax => (
                AggregateFunction::Max,
                *max.get_or_insert_with(&mut new_slot),
            ),
        };
        rewritten.push((
            out,
            AggregateExpr {
                function,
                distinct: false,
                arg: Some(Expr::Slot(slot)),
            },
        ));
    }
    recursive.output = RecursiveOutput::Counts {
        per_destination,
        count_slot,
        length_sum_slot: sum,
        length_min_slot: min,
        length_max_slot: max,
    };
    Plan::Aggregate {
        input: Box::new(Plan::Recursive(Box::new(recursive))),
        keys,
        aggregates: rewritten,
    }
}

fn unchanged(
    recursive: RecursivePlan,
    keys: Vec<(usize, Expr)>,
    aggregates: Vec<(usize, AggregateExpr)>,
) -> Plan {
    Plan::Aggregate {
        input: Box::new(Plan::Recursive(Box::new(recursive))),
        keys,
        aggregates,
    }
}
