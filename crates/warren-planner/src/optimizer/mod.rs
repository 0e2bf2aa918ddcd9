//! Plan rewrites applied after binding, one rule per file: dead-slot pruning (don't build path
//! values nobody reads), path counting (aggregate over path counts instead of paths), expansion
//! counting (aggregate over degrees instead of a last hop's rows), whole-table counting (an
//! unfiltered scan's or hop's count from the tables' live counts) and top-k (ORDER BY ... LIMIT
//! as a bounded heap, or as a parallel vector scan), procedure top (a spread hands on only the
//! rows a top-N by its activation can keep) and procedure order (a procedure's rows need not
//! come in its documented order when nothing above depends on it).

mod count_all;
mod count_expand;
mod count_paths;
mod fold_columns;
mod procedure_order;
mod procedure_top;
mod prune;
mod top_k;

use warren_common::types::LogicalType;

use crate::plan::Plan;

/// Applies every rule. `slots` is the row width; rules may allocate new slots. A rule runs only
/// when the plan holds an operator it rewrites (a rule leaves every other operator as it is), so
/// that a small statement's plan, such as a single-row write's, is not rebuilt four times.
pub fn optimize(plan: Plan, columns: &[(String, usize, LogicalType)], slots: &mut usize) -> Plan {
    let mut plan = plan;
    if plan.any(&prune::rewrites) {
        plan = prune::prune(plan, columns);
    }
    if plan.any(&count_paths::rewrites) {
        plan = count_paths::count_paths(plan, slots);
    }
    if plan.any(&count_expand::rewrites) {
        plan = count_expand::count_expand(plan, slots);
    }
    if plan.any(&count_all::rewrites) {
        plan = count_all::count_all(plan, slots);
    }
    if plan.any(&fold_columns::rewrites) {
        plan = fold_columns::fold_columns(plan, slots);
    }
    if plan.any(&top_k::rewrites) {
        plan = top_k::top_k(plan);
    }
    if plan.any(&procedure_top::rewrites) {
        plan = procedure_top::procedure_top(plan);
    }
    if plan.any(&procedure_order::rewrites) {
        plan = procedure_order::mark_order(plan);
    }
    plan
}

/// The parts of an aggregation: its input, keys and aggregates.
type AggregateParts = (
    Box<Plan>,
    Vec<(usize, crate::expr::Expr)>,
    Vec<(usize, crate::expr::AggregateExpr)>,
);

/// Rebuilds `plan` bottom-up, handing every aggregation's parts to `rewrite`, which returns the
/// parts to rebuild it from (the counting rules' common walk).
fn map_aggregates(plan: Plan, rewrite: &mut dyn FnMut(AggregateParts) -> AggregateParts) -> Plan {
    let plan = plan.map_children(&mut |child| map_aggregates(child, &mut *rewrite));
    let Plan::Aggregate {
        input,
        keys,
        aggregates,
    } = plan
    else {
        return plan;
    };
    let (input, keys, aggregates) = rewrite((input, keys, aggregates));
    Plan::Aggregate {
        input,
        keys,
        aggregates,
    }
}

/// An aggregation's keys and aggregates.
type Grouping = (
    Vec<(usize, crate::expr::Expr)>,
    Vec<(usize, crate::expr::AggregateExpr)>,
);

/// What a counting or folding rule makes of an aggregation's (input, keys, aggregates): its new
/// input, keys and aggregates, or `None` to leave it.
type AggregationRewrite<'a> = dyn FnMut(
        &Plan,
        &[(usize, crate::expr::Expr)],
        &[(usize, crate::expr::AggregateExpr)],
    ) -> Option<(Plan, Grouping)>
    + 'a;

/// Rebuilds `plan` with every aggregation that `rewrite` changes given its new input, keys and
/// aggregates.
fn replace_aggregations(plan: Plan, rewrite: &mut AggregationRewrite<'_>) -> Plan {
    map_aggregates(
        plan,
        &mut |(input, keys, aggregates)| match rewrite(&input, &keys, &aggregates) {
            Some((replaced, (keys, aggregates))) => (Box::new(replaced), keys, aggregates),
            None => (input, keys, aggregates),
        },
    )
}

/// The scan's (tables, slot, filter) when `plan` is a node scan of the one input row (the
/// shape the whole-table rules rewrite).
type ScanOfOneRow<'a> = (
    &'a Vec<warren_common::TableId>,
    usize,
    &'a Option<crate::expr::Expr>,
);

fn scan_of_one_row(plan: &Plan) -> Option<ScanOfOneRow<'_>> {
    match plan {
        Plan::ScanNodes {
            input,
            tables,
            slot,
            filter,
        } if **input == Plan::Unit => Some((tables, *slot, filter)),
        _ => None,
    }
}

/// `aggregates` with each one replaced by the sum of the count in `count_slot`: what a counting
/// rule's aggregation computes over the counting operator it puts under it.
fn summing_counts(
    aggregates: &[(usize, crate::expr::AggregateExpr)],
    count_slot: usize,
) -> Vec<(usize, crate::expr::AggregateExpr)> {
    let sum = crate::expr::AggregateExpr {
        function: crate::expr::AggregateFunction::SumCounts,
        distinct: false,
        arg: Some(crate::expr::Expr::Slot(count_slot)),
    };
    aggregates
        .iter()
        .map(|(out, _)| (*out, sum.clone()))
        .collect()
}

/// Plans the rules' unit tests share.
#[cfg(test)]
pub(crate) mod test_plans {
    use std::sync::Arc;

    use crate::plan::Plan;
    use crate::procedure::{ProcedureCall, ProcedureKind, SpreadActivation};

    /// A `spread_activation` call over `R` on one empty input row, its rows in `columns`
    /// (node, activation, hops), ordered and without a top.
    pub fn spread_call(columns: Vec<usize>) -> Plan {
        Plan::Procedure {
            input: Box::new(Plan::Unit),
            call: Arc::new(ProcedureCall {
                name: "spread_activation".into(),
                arguments: Vec::new(),
                columns: Vec::new(),
                kind: ProcedureKind::SpreadActivation(SpreadActivation {
                    rel_table: "R".into(),
                    steps: Vec::new(),
                    both: false,
                    weight: None,
                    node_tables: Vec::new(),
                }),
            }),
            columns,
            dead: Vec::new(),
            unread: Vec::new(),
            ordered: true,
            top: None,
        }
    }
}
