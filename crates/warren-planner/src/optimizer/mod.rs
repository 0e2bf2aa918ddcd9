//! Plan rewrites applied after binding, one rule per file: dead-slot pruning (don't build path
//! values nobody reads), path counting (aggregate over path counts instead of paths), expansion
//! counting (aggregate over degrees instead of a last hop's rows) and top-k (ORDER BY ... LIMIT
//! as a bounded heap, or as a parallel vector scan).

mod count_expand;
mod count_paths;
mod prune;
mod top_k;

use warren_common::types::LogicalType;

use crate::plan::Plan;

/// Applies every rule. `slots` is the row width; rules may allocate new slots.
pub fn optimize(plan: Plan, columns: &[(String, usize, LogicalType)], slots: &mut usize) -> Plan {
    let plan = prune::prune(plan, columns);
    let plan = count_paths::count_paths(plan, slots);
    let plan = count_expand::count_expand(plan, slots);
    top_k::top_k(plan)
}
