//! Plan rewrites applied after binding, one rule per file: dead-slot pruning (don't build path
//! values nobody reads) and path counting (aggregate over path counts instead of paths).

mod count_paths;
mod prune;

use warren_common::types::LogicalType;

use crate::plan::Plan;

/// Applies every rule. `slots` is the row width; rules may allocate new slots.
pub fn optimize(plan: Plan, columns: &[(String, usize, LogicalType)], slots: &mut usize) -> Plan {
    let plan = prune::prune(plan, columns);
    count_paths::count_paths(plan, slots)
}
