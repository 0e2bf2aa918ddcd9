//! Aggregating a node scan's properties from the stored columns: an aggregation over a node
//! scan of one input row (`MATCH (a:T) [WHERE ...] RETURN [keys,] min(a.x), avg(a.y),
//! count(*)`), whose aggregates are all `count(*)`, `count(a)`, or `count`, `sum`, `min`, `max`
//! or `avg` of a property of the scanned node, none DISTINCT, and whose keys are expressions
//! over the scanned node alone (`a.x`, `a.x % 4`, `a`), reads each property's column in one
//! pass ([`Plan::FoldColumns`]) instead of building a row per node and evaluating the
//! property per row. The fold gives one row per group (one group without keys), in order of
//! the group's first node, holding its keys and each aggregate's value over it (no row when no
//! node passes the filter); the aggregation then folds each group's one row: a count by
//! `SumCounts` (0 over no row), the others by the same function, which gives back the value
//! it is handed (NULL over no row, as over no nodes), grouped by the keys' slots.
//!
//! The rule leaves the plan unchanged when a count-only aggregation of an unfiltered scan is
//! already answered from the live counts (`count_all`, run first).

use super::scan_of_one_row;
use crate::expr::{AggregateExpr, AggregateFunction, Expr};
use crate::plan::{ColumnFold, Plan};

/// Whether `operator` is one that [`fold_columns`] may change.
pub fn rewrites(operator: &Plan) -> bool {
    let Plan::Aggregate {
        input,
        keys,
        aggregates,
    } = operator
    else {
        return false;
    };
    scan_of_one_row(input).is_some_and(|(_, slot, _)| folds_all(keys, aggregates, slot))
}

/// Whether the fold computes every aggregate and key over the node in `slot`.
fn folds_all(keys: &[(usize, Expr)], aggregates: &[(usize, AggregateExpr)], slot: usize) -> bool {
    !(keys.is_empty() && aggregates.is_empty())
        && aggregates.iter().all(|(_, a)| foldable(a, slot))
        && keys.iter().all(|(_, key)| over_node_alone(key, slot))
}

/// Whether `key` reads no slot but `slot` and runs no subquery: its value for a node is then
/// what it gives over the scan's row, whose other slots are empty.
fn over_node_alone(key: &Expr, slot: usize) -> bool {
    fn has_subquery(expr: &Expr) -> bool {
        let mut found = matches!(expr, Expr::Subquery { .. });
        expr.for_each_child(&mut |child| found |= has_subquery(child));
        found
    }
    key.slots().iter().all(|&s| s == slot) && !has_subquery(key)
}

pub fn fold_columns(plan: Plan, slots: &mut usize) -> Plan {
    super::replace_aggregations(plan, &mut |input, keys, aggregates| {
        rewritten(input, keys, aggregates, slots)
    })
}

/// Whether the fold computes `aggregate` over the node in `slot`.
fn foldable(aggregate: &AggregateExpr, slot: usize) -> bool {
    fold_of(aggregate, slot, 0).is_some()
}

/// The fold into `fold_slot` that computes `aggregate` over the node in `slot`, if one does.
fn fold_of(aggregate: &AggregateExpr, slot: usize, fold_slot: usize) -> Option<ColumnFold> {
    if aggregate.distinct {
        return None;
    }
    let property = match &aggregate.arg {
        Some(Expr::Property { base, property }) if **base == Expr::Slot(slot) => {
            Some(property.clone())
        }
        _ => None,
    };
    let function = match (aggregate.function, &aggregate.arg, property.is_some()) {
        (AggregateFunction::CountStar, _, _) => AggregateFunction::CountStar,
        // A scanned node is never NULL: counting it counts the rows.
        (AggregateFunction::Count, Some(Expr::Slot(s)), _) if *s == slot => {
            AggregateFunction::CountStar
        }
        (
            function @ (AggregateFunction::Count
            | AggregateFunction::Sum
            | AggregateFunction::Min
            | AggregateFunction::Max
            | AggregateFunction::Avg),
            _,
            true,
        ) => function,
        _ => return None,
    };
    Some(ColumnFold {
        slot: fold_slot,
        function,
        property: property.filter(|_| function != AggregateFunction::CountStar),
    })
}

/// The fold and the aggregates over its row, when every aggregate folds.
fn rewritten(
    input: &Plan,
    keys: &[(usize, Expr)],
    aggregates: &[(usize, AggregateExpr)],
    slots: &mut usize,
) -> Option<(Plan, super::Grouping)> {
    let (tables, slot, filter) = scan_of_one_row(input)?;
    if !folds_all(keys, aggregates, slot) {
        return None;
    }
    let mut fold_keys = Vec::with_capacity(keys.len());
    let mut over_keys = Vec::with_capacity(keys.len());
    for (out, key) in keys {
        fold_keys.push((*slots, key.clone()));
        over_keys.push((*out, Expr::Slot(*slots)));
        *slots += 1;
    }
    let mut folds = Vec::with_capacity(aggregates.len());
    let mut over_folds = Vec::with_capacity(aggregates.len());
    for (out, aggregate) in aggregates {
        let fold = fold_of(aggregate, slot, *slots).expect("checked foldable");
        *slots += 1;
        let function = match fold.function {
            AggregateFunction::CountStar | AggregateFunction::Count => AggregateFunction::SumCounts,
            other => other,
        };
        over_folds.push((
            *out,
            AggregateExpr {
                function,
                distinct: false,
                arg: Some(Expr::Slot(fold.slot)),
            },
        ));
        folds.push(fold);
    }
    let folded = Plan::FoldColumns {
        tables: tables.clone(),
        slot,
        filter: filter.clone(),
        keys: fold_keys,
        folds,
    };
    Some((folded, (over_keys, over_folds)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::expr::PropertyColumns;

    fn scan(input: Plan, filter: Option<Expr>) -> Plan {
        Plan::ScanNodes {
            input: Box::new(input),
            tables: vec![0, 2],
            slot: 0,
            filter,
        }
    }

    fn property(slot: usize) -> Expr {
        Expr::Property {
            base: Box::new(Expr::Slot(slot)),
            property: PropertyColumns {
                name: Arc::from("x"),
                columns: vec![(0, 1)],
            },
        }
    }

    fn aggregate_of(function: AggregateFunction, arg: Option<Expr>) -> AggregateExpr {
        AggregateExpr {
            function,
            distinct: false,
            arg,
        }
    }

    fn aggregation(input: Plan, aggregates: Vec<AggregateExpr>) -> Plan {
        Plan::Aggregate {
            input: Box::new(input),
            keys: Vec::new(),
            aggregates: aggregates
                .into_iter()
                .enumerate()
                .map(|(i, a)| (5 + i, a))
                .collect(),
        }
    }

    fn rewrite(plan: Plan) -> Plan {
        let mut slots = 10;
        fold_columns(plan, &mut slots)
    }

    #[test]
    fn properties_and_counts_of_a_scan_fold_from_the_columns() {
        let filter = Some(Expr::Slot(0));
        let plan = rewrite(aggregation(
            scan(Plan::Unit, filter.clone()),
            vec![
                aggregate_of(AggregateFunction::Min, Some(property(0))),
                aggregate_of(AggregateFunction::CountStar, None),
                aggregate_of(AggregateFunction::Count, Some(Expr::Slot(0))),
                aggregate_of(AggregateFunction::Count, Some(property(0))),
                aggregate_of(AggregateFunction::Avg, Some(property(0))),
            ],
        ));
        let Plan::Aggregate {
            input, aggregates, ..
        } = plan
        else {
            panic!("not an aggregation: {plan:?}");
        };
        let Plan::FoldColumns {
            tables,
            slot,
            filter: folded_filter,
            keys,
            folds,
        } = *input
        else {
            panic!("not folded: {input:?}");
        };
        assert_eq!((tables, slot, folded_filter), (vec![0, 2], 0, filter));
        assert!(keys.is_empty());
        let functions: Vec<(usize, AggregateFunction, bool)> = folds
            .iter()
            .map(|fold| (fold.slot, fold.function, fold.property.is_some()))
            .collect();
        assert_eq!(
            functions,
            [
                (10, AggregateFunction::Min, true),
                (11, AggregateFunction::CountStar, false),
                (12, AggregateFunction::CountStar, false),
                (13, AggregateFunction::Count, true),
                (14, AggregateFunction::Avg, true),
            ]
        );
        let over: Vec<(usize, AggregateFunction, Option<Expr>)> = aggregates
            .into_iter()
            .map(|(out, a)| (out, a.function, a.arg))
            .collect();
        assert_eq!(
            over,
            [
                (5, AggregateFunction::Min, Some(Expr::Slot(10))),
                (6, AggregateFunction::SumCounts, Some(Expr::Slot(11))),
                (7, AggregateFunction::SumCounts, Some(Expr::Slot(12))),
                (8, AggregateFunction::SumCounts, Some(Expr::Slot(13))),
                (9, AggregateFunction::Avg, Some(Expr::Slot(14))),
            ]
        );
    }

    #[test]
    fn other_shapes_stay_as_they_are() {
        let unchanged = |plan: Plan| assert_eq!(rewrite(plan.clone()), plan);
        // DISTINCT, collect(), another slot's property, an expression over the property.
        let mut distinct = aggregate_of(AggregateFunction::Sum, Some(property(0)));
        distinct.distinct = true;
        unchanged(aggregation(scan(Plan::Unit, None), vec![distinct]));
        unchanged(aggregation(
            scan(Plan::Unit, None),
            vec![aggregate_of(AggregateFunction::Collect, Some(property(0)))],
        ));
        unchanged(aggregation(
            scan(Plan::Unit, None),
            vec![aggregate_of(AggregateFunction::Max, Some(property(3)))],
        ));
        unchanged(aggregation(
            scan(Plan::Unit, None),
            vec![aggregate_of(
                AggregateFunction::Sum,
                Some(Expr::Unary(
                    crate::expr::UnaryOp::Minus,
                    Box::new(property(0)),
                )),
            )],
        ));
        // One aggregate that does not fold keeps them all on rows.
        unchanged(aggregation(
            scan(Plan::Unit, None),
            vec![
                aggregate_of(AggregateFunction::Min, Some(property(0))),
                aggregate_of(AggregateFunction::Collect, Some(property(0))),
            ],
        ));
        // A scan per outer row, and keys that read another slot or run a subquery.
        unchanged(aggregation(
            scan(Plan::Argument, None),
            vec![aggregate_of(AggregateFunction::Min, Some(property(0)))],
        ));
        for key in [
            property(3),
            Expr::Binary(
                crate::expr::BinaryOp::Add,
                Box::new(property(0)),
                Box::new(Expr::Slot(1)),
            ),
            Expr::Subquery {
                plan: Arc::new(Plan::Unit),
                count: true,
            },
        ] {
            unchanged(grouped(vec![(20, key)]));
        }
    }

    /// A count and a minimum over the scan, grouped by `keys`.
    fn grouped(keys: Vec<(usize, Expr)>) -> Plan {
        let Plan::Aggregate {
            input, aggregates, ..
        } = aggregation(
            scan(Plan::Unit, None),
            vec![
                aggregate_of(AggregateFunction::CountStar, None),
                aggregate_of(AggregateFunction::Min, Some(property(0))),
            ],
        )
        else {
            unreachable!()
        };
        Plan::Aggregate {
            input,
            keys,
            aggregates,
        }
    }

    #[test]
    fn keys_over_the_node_alone_fold_into_groups() {
        let modulo = Expr::Binary(
            crate::expr::BinaryOp::Mod,
            Box::new(property(0)),
            Box::new(Expr::literal(4i64)),
        );
        let plan = rewrite(grouped(vec![
            (20, property(0)),
            (21, modulo.clone()),
            (22, Expr::Slot(0)),
            (23, Expr::literal(1i64)),
        ]));
        let Plan::Aggregate {
            input,
            keys,
            aggregates,
        } = plan
        else {
            panic!("not an aggregation: {plan:?}");
        };
        assert_eq!(
            keys,
            [
                (20, Expr::Slot(10)),
                (21, Expr::Slot(11)),
                (22, Expr::Slot(12)),
                (23, Expr::Slot(13)),
            ]
        );
        let functions: Vec<(usize, AggregateFunction)> = aggregates
            .iter()
            .map(|(out, a)| (out.to_owned(), a.function))
            .collect();
        assert_eq!(
            functions,
            [
                (5, AggregateFunction::SumCounts),
                (6, AggregateFunction::Min)
            ]
        );
        let Plan::FoldColumns { keys, folds, .. } = *input else {
            panic!("not folded: {input:?}");
        };
        assert_eq!(
            keys,
            [
                (10, property(0)),
                (11, modulo),
                (12, Expr::Slot(0)),
                (13, Expr::literal(1i64)),
            ]
        );
        let slots: Vec<usize> = folds.iter().map(|fold| fold.slot).collect();
        assert_eq!(slots, [14, 15]);
    }
}
