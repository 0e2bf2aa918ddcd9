//! Operators: each pulls rows from its input and yields rows, one at a time. Rows are
//! fixed-width vectors of values indexed by the plan's slots. [`build`] turns a plan into an
//! operator tree.

mod aggregate;
mod column_keys;
mod count_all;
mod count_expand;
mod expand;
mod extend_each;
mod fold_columns;
mod load;
pub(crate) mod node_batches;
mod order;
mod procedure;
pub mod profiled;
mod scan;
mod simple;
mod subquery;
mod table_function;
mod top_nodes;
mod update;
mod vector_top_k;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::plan::Plan;

use crate::context::ExecContext;

pub type Row = Vec<Value>;

/// Rough bytes a materialized row holds, for memory accounting.
pub(crate) fn row_bytes(row: &Row) -> u64 {
    (row.len() * std::mem::size_of::<Value>() + 64) as u64
}

pub trait Operator: Send {
    /// The next row, or `None` when the operator is exhausted.
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>>;

    /// Whether this operator can yield its rows as [`RowRun`]s ([`Operator::next_run`]), which
    /// a consumer that reads slots may fold without making each row. A consumer asks before its
    /// first row and then uses either `next` or `next_run`, never both.
    fn yields_runs(&self) -> bool {
        false
    }

    /// The next run of rows, or `None` when the operator is exhausted. Called only when
    /// [`Operator::yields_runs`] is true.
    fn next_run(&mut self, _ctx: &ExecContext) -> Result<Option<RowRun>> {
        unreachable!("next_run is called only on operators that yield runs")
    }

    /// Takes back a row this operator returned and its consumer is done with, so that its
    /// buffer can be reused for a later row instead of a new allocation. Optional: by default
    /// the row is dropped.
    fn recycle(&mut self, row: Row) {
        drop(row);
    }
}

pub type BoxedOperator = Box<dyn Operator>;

/// Rows that share every slot but `columns`: row `i` is `base` with slot `columns[j]` holding
/// `rows`' value `i` of column `j` (a procedure call's rows for one input row).
pub struct RowRun {
    pub base: Row,
    pub columns: Vec<usize>,
    pub rows: crate::procedures::ProcedureRows,
}

impl RowRun {
    /// Where each slot's value comes from, for every slot of `base`: `Some(j)` for the run's
    /// column `j`, `None` for `base` itself.
    pub fn sources(&self) -> Vec<Option<usize>> {
        (0..self.base.len())
            .map(|slot| self.columns.iter().position(|&c| c == slot))
            .collect()
    }
}

/// Builds the operator tree of `plan` for rows of `width` slots. `argument` is the outer row
/// a subquery plan starts from.
pub fn build(plan: &Plan, width: usize, argument: Option<&Row>) -> BoxedOperator {
    build_with(plan, width, argument, &mut |_, operator| operator)
}

/// Called with each plan node and the operator built for it (children first); returns the
/// operator the tree uses in its place. [`profiled`] wraps every operator this way.
pub(crate) type Wrap<'a> = dyn FnMut(&Plan, BoxedOperator) -> BoxedOperator + 'a;

/// [`build`], passing every operator it builds through `wrap`.
pub(crate) fn build_with(
    plan: &Plan,
    width: usize,
    argument: Option<&Row>,
    wrap: &mut Wrap<'_>,
) -> BoxedOperator {
    let operator = build_operator(plan, width, argument, wrap);
    wrap(plan, operator)
}

fn build_operator(
    plan: &Plan,
    width: usize,
    argument: Option<&Row>,
    wrap: &mut Wrap<'_>,
) -> BoxedOperator {
    let mut child = |p: &Plan| build_with(p, width, argument, &mut *wrap);
    match plan {
        Plan::Unit => Box::new(simple::Once::new(Some(vec![Value::Null; width]))),
        Plan::Argument => Box::new(simple::Once::new(argument.cloned())),
        Plan::ScanNodes {
            input,
            tables,
            slot,
            filter,
        } => Box::new(scan::ScanNodes::new(
            child(input),
            tables.clone(),
            *slot,
            filter.clone(),
        )),
        Plan::LookupNode {
            input,
            tables,
            key,
            slot,
            filter,
        } => Box::new(scan::LookupNode::new(
            child(input),
            tables.clone(),
            key.clone(),
            *slot,
            filter.clone(),
        )),
        Plan::Expand {
            input,
            from,
            steps,
            rel_slot,
            target,
        } => Box::new(expand::Expand::new(
            child(input),
            *from,
            steps.clone(),
            *rel_slot,
            target.clone(),
        )),
        Plan::CountExpand {
            input,
            from,
            steps,
            tables,
            count_slot,
        } => Box::new(count_expand::CountExpand::new(
            child(input),
            *from,
            steps.clone(),
            tables.clone(),
            *count_slot,
        )),
        Plan::CountAll {
            tables,
            steps,
            targets,
            count_slot,
        } => Box::new(count_all::CountAll::new(
            tables.clone(),
            steps.clone(),
            targets.clone(),
            *count_slot,
            width,
        )),
        Plan::TopNodes {
            tables,
            slot,
            filter,
            keys,
            skip,
            limit,
        } => Box::new(top_nodes::TopNodes::new(
            tables.clone(),
            *slot,
            filter.clone(),
            keys.clone(),
            skip.clone(),
            limit.clone(),
            width,
        )),
        Plan::FoldColumns {
            tables,
            slot,
            filter,
            keys,
            folds,
        } => Box::new(fold_columns::FoldColumns::new(
            tables.clone(),
            *slot,
            filter.clone(),
            keys.clone(),
            folds.clone(),
            width,
        )),
        Plan::Recursive(recursive) => {
            let input = child(&recursive.input);
            Box::new(crate::recursive::RecursiveJoin::new(
                input,
                (**recursive).clone(),
            ))
        }
        Plan::Filter { input, predicate } => {
            Box::new(simple::Filter::new(child(input), predicate.clone()))
        }
        Plan::Project { input, assignments } => {
            Box::new(simple::Project::new(child(input), assignments.clone()))
        }
        Plan::Aggregate {
            input,
            keys,
            aggregates,
        } => Box::new(aggregate::Aggregate::new(
            child(input),
            width,
            keys.clone(),
            aggregates.clone(),
        )),
        Plan::Distinct { input, slots } => {
            Box::new(order::Distinct::new(child(input), slots.clone()))
        }
        Plan::OrderBy { input, keys } => Box::new(order::OrderBy::new(child(input), keys.clone())),
        Plan::TopN {
            input,
            keys,
            skip,
            limit,
        } => Box::new(order::TopN::new(
            child(input),
            keys.clone(),
            skip.clone(),
            limit.clone(),
        )),
        Plan::VectorTopK(top) => Box::new(vector_top_k::VectorTopKScan::new(
            child(&top.input),
            (**top).clone(),
        )),
        Plan::Skip { input, count } => Box::new(simple::Skip::new(child(input), count.clone())),
        Plan::Limit { input, count } => Box::new(simple::Limit::new(child(input), count.clone())),
        Plan::Unwind { input, expr, slot } => {
            Box::new(simple::Unwind::new(child(input), expr.clone(), *slot))
        }
        Plan::LoadCsv {
            input,
            files,
            options,
            columns,
        } => Box::new(load::LoadCsv::new(
            child(input),
            files.clone(),
            options.clone(),
            columns.clone(),
        )),
        Plan::TableFunction {
            input,
            rows,
            columns,
            ..
        } => Box::new(table_function::TableFunctionScan::new(
            child(input),
            rows.clone(),
            columns.clone(),
        )),
        Plan::Procedure {
            input,
            call,
            columns,
            dead,
            unread,
            ordered,
            top,
        } => Box::new(procedure::ProcedureScan::new(
            child(input),
            call.clone(),
            columns.clone(),
            dead.clone(),
            crate::procedures::OutputShape {
                ordered: *ordered,
                read: columns.iter().map(|slot| !unread.contains(slot)).collect(),
                top: *top,
            },
        )),
        Plan::Optional {
            input,
            inner,
            null_slots,
        } => Box::new(subquery::Optional::new(
            child(input),
            (**inner).clone(),
            width,
            null_slots.clone(),
        )),
        Plan::Union { inputs, output, .. } => {
            let inputs = inputs
                .iter()
                .map(|(p, slots)| (child(p), slots.clone()))
                .collect();
            Box::new(simple::Union::new(inputs, output.clone(), width))
        }
        Plan::Create { input, nodes, rels } => Box::new(update::Update::create(
            child(input),
            nodes.clone(),
            rels.clone(),
        )),
        Plan::Merge { input, merge } => Box::new(update::Update::merge(
            child(input),
            (**merge).clone(),
            width,
        )),
        Plan::SetProperties { input, items } => {
            Box::new(update::Update::set(child(input), items.clone()))
        }
        Plan::Delete {
            input,
            targets,
            detach,
        } => Box::new(update::Update::delete(
            child(input),
            targets.clone(),
            *detach,
        )),
    }
}

/// Runs a subquery plan for one outer row; returns how many rows it produced (stopping at the
/// first when `any` is set).
pub fn run_subquery(plan: &Plan, row: &[Value], ctx: &ExecContext, any: bool) -> Result<usize> {
    let argument = row.to_vec();
    let mut operator = build(plan, row.len(), Some(&argument));
    let mut count = 0;
    while operator.next(ctx)?.is_some() {
        count += 1;
        if any {
            break;
        }
    }
    Ok(count)
}
