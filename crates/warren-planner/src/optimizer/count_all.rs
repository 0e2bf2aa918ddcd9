//! Counting a whole table: an aggregation without keys that only counts the rows of an
//! unfiltered node scan (`MATCH (a:T) RETURN count(*)`, or `count(a)`), or sums the counted
//! single hop of one (`MATCH (a:T)-[:R]->(b:U) RETURN count(*)`, after `count_expand`), reads
//! the tables' live counts instead of a row per node: [`Plan::CountAll`] gives one row with the
//! number, and the aggregation sums it (no row when it is 0, so the sum is 0, as over no rows).
//!
//! Only a scan of one input row (`Unit`) and no filter anywhere is rewritten: the number is then
//! exactly the rows the scan would yield (its tables' live nodes), or the entries the counted
//! expansion would find from them (each step's live rels, when the step starts at one of the
//! scan's tables and ends at one of the target's).

use crate::expr::{AggregateExpr, AggregateFunction, Expr};
use crate::plan::Plan;

/// Whether `operator` is one that [`count_all`] may change: an aggregation without keys over
/// an unfiltered scan or a counted hop from one.
pub fn rewrites(operator: &Plan) -> bool {
    let Plan::Aggregate { input, keys, .. } = operator else {
        return false;
    };
    keys.is_empty()
        && match &**input {
            Plan::CountExpand { input, .. } => unfiltered_scan(input).is_some(),
            scan => unfiltered_scan(scan).is_some(),
        }
}

pub fn count_all(plan: Plan, slots: &mut usize) -> Plan {
    super::replace_aggregations(plan, &mut |input, keys, aggregates| {
        let (counted, aggregates) = rewritten(input, keys, aggregates, slots)?;
        Some((counted, (keys.to_vec(), aggregates)))
    })
}

/// The scan's (tables, slot) when `plan` is a node scan of the one input row, without filter.
fn unfiltered_scan(plan: &Plan) -> Option<(&Vec<warren_common::TableId>, usize)> {
    match super::scan_of_one_row(plan)? {
        (tables, slot, None) => Some((tables, slot)),
        _ => None,
    }
}

/// The counting operator and the aggregates that sum its count, when the aggregation over
/// `input` only counts.
fn rewritten(
    input: &Plan,
    keys: &[(usize, Expr)],
    aggregates: &[(usize, AggregateExpr)],
    slots: &mut usize,
) -> Option<(Plan, Vec<(usize, AggregateExpr)>)> {
    if !keys.is_empty() || aggregates.is_empty() || aggregates.iter().any(|(_, a)| a.distinct) {
        return None;
    }
    let (counted, count_slot) = match input {
        Plan::CountExpand {
            input: scan,
            from,
            steps,
            tables: targets,
            count_slot,
        } => {
            let (tables, slot) = unfiltered_scan(scan)?;
            let sums_the_count = |a: &AggregateExpr| {
                a.function == AggregateFunction::SumCounts && a.arg == Some(Expr::Slot(*count_slot))
            };
            if *from != slot || !aggregates.iter().all(|(_, a)| sums_the_count(a)) {
                return None;
            }
            let counted = Plan::CountAll {
                tables: tables.clone(),
                steps: steps.clone(),
                targets: targets.clone(),
                count_slot: *count_slot,
            };
            (counted, *count_slot)
        }
        scan => {
            let (tables, slot) = unfiltered_scan(scan)?;
            let counts_rows = |a: &AggregateExpr| match (a.function, &a.arg) {
                (AggregateFunction::CountStar, _) => true,
                (AggregateFunction::Count, Some(Expr::Slot(s))) => *s == slot,
                _ => false,
            };
            if !aggregates.iter().all(|(_, a)| counts_rows(a)) {
                return None;
            }
            let count_slot = *slots;
            *slots += 1;
            let counted = Plan::CountAll {
                tables: tables.clone(),
                steps: Vec::new(),
                targets: Vec::new(),
                count_slot,
            };
            (counted, count_slot)
        }
    };
    Some((counted, super::summing_counts(aggregates, count_slot)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Step;

    fn scan(filter: Option<Expr>) -> Plan {
        Plan::ScanNodes {
            input: Box::new(Plan::Unit),
            tables: vec![0, 2],
            slot: 0,
            filter,
        }
    }

    fn aggregate(input: Plan, function: AggregateFunction, arg: Option<Expr>) -> Plan {
        Plan::Aggregate {
            input: Box::new(input),
            keys: Vec::new(),
            aggregates: vec![(
                7,
                AggregateExpr {
                    function,
                    distinct: false,
                    arg,
                },
            )],
        }
    }

    fn rewrite(plan: Plan) -> Plan {
        let mut slots = 10;
        count_all(plan, &mut slots)
    }

    fn counted_input(plan: &Plan) -> Option<&Plan> {
        match plan {
            Plan::Aggregate {
                input, aggregates, ..
            } if aggregates
                .iter()
                .all(|(_, a)| a.function == AggregateFunction::SumCounts) =>
            {
                matches!(**input, Plan::CountAll { .. }).then_some(&**input)
            }
            _ => None,
        }
    }

    #[test]
    fn counts_of_an_unfiltered_scan_read_the_live_count() {
        for (function, arg) in [
            (AggregateFunction::CountStar, None),
            (AggregateFunction::Count, Some(Expr::Slot(0))),
        ] {
            let plan = rewrite(aggregate(scan(None), function, arg));
            let Some(Plan::CountAll {
                tables,
                steps,
                count_slot,
                ..
            }) = counted_input(&plan)
            else {
                panic!("not counted: {plan:?}");
            };
            assert_eq!(
                (tables.as_slice(), steps.len(), *count_slot),
                (&[0, 2][..], 0, 10)
            );
        }
    }

    #[test]
    fn filters_other_aggregates_and_keys_stay_as_they_are() {
        let filtered = aggregate(
            scan(Some(Expr::Slot(0))),
            AggregateFunction::CountStar,
            None,
        );
        assert_eq!(rewrite(filtered.clone()), filtered);
        let other_slot = aggregate(scan(None), AggregateFunction::Count, Some(Expr::Slot(3)));
        assert_eq!(rewrite(other_slot.clone()), other_slot);
        let summed = aggregate(scan(None), AggregateFunction::Sum, Some(Expr::Slot(0)));
        assert_eq!(rewrite(summed.clone()), summed);
        let Plan::Aggregate {
            input, aggregates, ..
        } = aggregate(scan(None), AggregateFunction::CountStar, None)
        else {
            unreachable!()
        };
        let grouped = Plan::Aggregate {
            input,
            keys: vec![(5, Expr::Slot(0))],
            aggregates,
        };
        assert_eq!(rewrite(grouped.clone()), grouped);
        let over_argument = aggregate(
            Plan::ScanNodes {
                input: Box::new(Plan::Argument),
                tables: vec![0],
                slot: 0,
                filter: None,
            },
            AggregateFunction::CountStar,
            None,
        );
        assert_eq!(rewrite(over_argument.clone()), over_argument);
    }

    #[test]
    fn a_counted_hop_from_an_unfiltered_scan_reads_the_rels_live_counts() {
        let steps = vec![Step {
            pair: 4,
            direction: warren_storage::Direction::Forward,
        }];
        let hop = |from: usize| Plan::CountExpand {
            input: Box::new(scan(None)),
            from,
            steps: steps.clone(),
            tables: vec![1],
            count_slot: 9,
        };
        let plan = rewrite(aggregate(
            hop(0),
            AggregateFunction::SumCounts,
            Some(Expr::Slot(9)),
        ));
        let Some(Plan::CountAll {
            steps: counted,
            targets,
            count_slot,
            ..
        }) = counted_input(&plan)
        else {
            panic!("not counted: {plan:?}");
        };
        assert_eq!(
            (counted, targets.as_slice(), *count_slot),
            (&steps, &[1][..], 9)
        );
        // A hop from another slot than the scan's is left alone.
        let other = aggregate(hop(3), AggregateFunction::SumCounts, Some(Expr::Slot(9)));
        assert_eq!(rewrite(other.clone()), other);
    }
}
