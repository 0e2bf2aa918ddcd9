//! Per-operator profiling for `PROFILE`: a wrapper around each operator built from a plan that
//! counts the rows the operator produces and the wall time spent inside its `next` calls
//! (children included). Only [`build_profiled`] adds the wrappers, so ordinary queries run the
//! bare operator tree and pay nothing.
//!
//! Time is wall time on the thread that pulls the operator: an operator that fans work out to
//! worker threads (the recursive join) reports the elapsed time, not the CPU time summed over
//! its workers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use warren_common::Result;
use warren_planner::plan::Plan;

use super::{build_with, BoxedOperator, Operator, Row};
use crate::context::ExecContext;

/// Counters of one operator, written only by its wrapper and read by the [`PlanProfile`].
#[derive(Debug, Default)]
struct OperatorStats {
    rows: AtomicU64,
    calls: AtomicU64,
    nanos: AtomicU64,
}

/// Wraps one operator: times each `next` call and counts the rows it returns. It keeps the
/// running totals itself and publishes them with plain stores (it is the only writer), which
/// costs less per row than atomic read-modify-writes.
struct Profiled {
    inner: BoxedOperator,
    stats: Arc<OperatorStats>,
    rows: u64,
    calls: u64,
    nanos: u64,
}

impl Profiled {
    fn new(inner: BoxedOperator, stats: Arc<OperatorStats>) -> Self {
        Self {
            inner,
            stats,
            rows: 0,
            calls: 0,
            nanos: 0,
        }
    }

    fn record(&mut self, elapsed: Duration, produced_row: bool) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.nanos = self.nanos.saturating_add(nanos);
        self.calls += 1;
        self.rows += u64::from(produced_row);
        self.stats.nanos.store(self.nanos, Ordering::Relaxed);
        self.stats.calls.store(self.calls, Ordering::Relaxed);
        self.stats.rows.store(self.rows, Ordering::Relaxed);
    }
}

impl Operator for Profiled {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        let started = Instant::now();
        let result = self.inner.next(ctx);
        self.record(started.elapsed(), matches!(result, Ok(Some(_))));
        result
    }

    fn recycle(&mut self, row: Row) {
        self.inner.recycle(row);
    }
}

/// What one operator did over the query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperatorProfile {
    /// Rows the operator returned.
    pub rows: u64,
    /// Calls to its `next` (rows plus the final end-of-input call, if it was reached).
    pub calls: u64,
    /// Wall time inside its `next` calls, its children's included.
    pub inclusive: Duration,
    /// `inclusive` minus its measured children's `inclusive`.
    pub self_time: Duration,
}

/// One plan node in pre-order: its operator's counters (`None` when the node was not built as
/// part of the operator tree, such as the inner plan of OPTIONAL MATCH, which is built afresh
/// for every input row) and the pre-order indexes of its children.
#[derive(Debug)]
struct ProfileNode {
    stats: Option<Arc<OperatorStats>>,
    children: Vec<usize>,
}

/// The counters of every operator built from one plan, indexed by the plan node's position in
/// pre-order (a node, then its children as [`Plan::children`] lists them) — the order of
/// `warren_planner::explain::plan_lines`.
#[derive(Debug)]
pub struct PlanProfile {
    nodes: Vec<ProfileNode>,
}

impl PlanProfile {
    /// Number of plan nodes (profiled or not).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every plan node's profile in pre-order; `None` for nodes that had no operator of their
    /// own in the tree (their work counts in their parent's self time).
    pub fn operators(&self) -> Vec<Option<OperatorProfile>> {
        (0..self.nodes.len()).map(|i| self.operator(i)).collect()
    }

    fn inclusive(&self, index: usize) -> Option<Duration> {
        let stats = self.nodes[index].stats.as_ref()?;
        Some(Duration::from_nanos(stats.nanos.load(Ordering::Relaxed)))
    }

    fn operator(&self, index: usize) -> Option<OperatorProfile> {
        let node = &self.nodes[index];
        let stats = node.stats.as_ref()?;
        let inclusive = self.inclusive(index)?;
        let children: Duration = node
            .children
            .iter()
            .filter_map(|&child| self.inclusive(child))
            .sum();
        Some(OperatorProfile {
            rows: stats.rows.load(Ordering::Relaxed),
            calls: stats.calls.load(Ordering::Relaxed),
            inclusive,
            // Children run inside their parent's `next`, so this only saturates if an operator
            // pulled a child outside its own `next` (none does).
            self_time: inclusive.saturating_sub(children),
        })
    }
}

/// Builds the operator tree of `plan` (as [`super::build`] does) with every operator wrapped
/// in a profiler, and the [`PlanProfile`] that reads their counters.
pub fn build_profiled(plan: &Plan, width: usize) -> (BoxedOperator, PlanProfile) {
    // Plan nodes are identified by address while `plan` is borrowed, then by pre-order index.
    let mut by_node: HashMap<*const Plan, Arc<OperatorStats>> = HashMap::new();
    let root = build_with(plan, width, None, &mut |node, operator| {
        let stats = Arc::new(OperatorStats::default());
        let previous = by_node.insert(std::ptr::from_ref(node), stats.clone());
        assert!(previous.is_none(), "a plan node was built twice");
        Box::new(Profiled::new(operator, stats))
    });
    let mut nodes = Vec::new();
    collect_nodes(plan, &mut by_node, &mut nodes);
    assert!(
        by_node.is_empty(),
        "an operator was built for a node outside the plan tree"
    );
    (root, PlanProfile { nodes })
}

/// Appends `plan`'s subtree in pre-order; returns `plan`'s index.
fn collect_nodes(
    plan: &Plan,
    by_node: &mut HashMap<*const Plan, Arc<OperatorStats>>,
    nodes: &mut Vec<ProfileNode>,
) -> usize {
    let index = nodes.len();
    nodes.push(ProfileNode {
        stats: by_node.remove(&std::ptr::from_ref(plan)),
        children: Vec::new(),
    });
    let children: Vec<usize> = plan
        .children()
        .into_iter()
        .map(|child| collect_nodes(child, by_node, nodes))
        .collect();
    nodes[index].children = children;
    index
}

#[cfg(test)]
mod tests {
    use warren_common::Value;
    use warren_planner::expr::{BinaryOp, Expr};

    use super::*;

    /// `UNWIND range(1, 10) AS x WITH x WHERE x > 3 ... LIMIT 4` as a plan.
    fn plan() -> Plan {
        let unwind = Plan::Unwind {
            input: Box::new(Plan::Unit),
            expr: Expr::List((1..=10).map(|i| Expr::Literal(Value::Int64(i))).collect()),
            slot: 0,
        };
        let filter = Plan::Filter {
            input: Box::new(unwind),
            predicate: Expr::Binary(
                BinaryOp::Gt,
                Box::new(Expr::Slot(0)),
                Box::new(Expr::Literal(Value::Int64(3))),
            ),
        };
        Plan::Limit {
            input: Box::new(filter),
            count: Expr::Literal(Value::Int64(4)),
        }
    }

    #[test]
    fn rows_per_operator_and_nested_times() {
        let plan = plan();
        let (mut root, profile) = build_profiled(&plan, 1);
        let ctx = ExecContext::for_tests();
        let mut produced = Vec::new();
        while let Some(row) = root.next(&ctx).expect("next") {
            produced.push(row[0].clone());
        }
        assert_eq!(produced, (4..=7).map(Value::Int64).collect::<Vec<_>>());
        let operators: Vec<OperatorProfile> = profile
            .operators()
            .into_iter()
            .map(|o| o.expect("every node is an operator"))
            .collect();
        // Pre-order: Limit, Filter, Unwind, Unit.
        let rows: Vec<u64> = operators.iter().map(|o| o.rows).collect();
        assert_eq!(rows, vec![4, 4, 7, 1]);
        for pair in operators.windows(2) {
            assert!(pair[0].inclusive >= pair[1].inclusive);
            assert_eq!(pair[0].self_time, pair[0].inclusive - pair[1].inclusive);
        }
        assert!(operators.iter().all(|o| o.self_time <= o.inclusive));
        assert_eq!(operators[3].self_time, operators[3].inclusive);
    }

    #[test]
    fn unbuilt_nodes_have_no_profile() {
        let plan = Plan::Optional {
            input: Box::new(Plan::Unit),
            inner: Box::new(Plan::Argument),
            null_slots: vec![],
        };
        let (mut root, profile) = build_profiled(&plan, 1);
        let ctx = ExecContext::for_tests();
        while root.next(&ctx).expect("next").is_some() {}
        let operators = profile.operators();
        assert_eq!(operators.len(), 3);
        assert_eq!(operators[0].map(|o| o.rows), Some(1));
        assert_eq!(operators[1].map(|o| o.rows), Some(1));
        assert_eq!(operators[2], None, "the per-row inner plan is not profiled");
    }
}
