//! Dead-slot pruning: projections whose slots nobody reads are dropped, and recursive joins and
//! expansions stop producing rel, path, length or cost values nobody reads. This is what lets
//! `count(*)` or `length(p)` skip building path values.

use std::collections::HashSet;

use warren_common::types::LogicalType;

use crate::plan::{Plan, RecursiveOutput};

/// Rounds of pruning (each round can expose more dead slots).
const ROUNDS_MAX: usize = 8;

/// Whether `operator` is one that [`prune`] may change: a projection, an expansion that binds
/// its rel, a recursive join that produces paths.
pub fn rewrites(operator: &Plan) -> bool {
    match operator {
        Plan::Project { .. } => true,
        Plan::Expand { rel_slot, .. } => rel_slot.is_some(),
        Plan::Recursive(recursive) => matches!(recursive.output, RecursiveOutput::Paths { .. }),
        _ => false,
    }
}

pub fn prune(mut plan: Plan, columns: &[(String, usize, LogicalType)]) -> Plan {
    for _ in 0..ROUNDS_MAX {
        let mut reads = columns.iter().map(|(_, slot, _)| *slot).collect::<Vec<_>>();
        plan.read_slots(&mut reads);
        let live: HashSet<usize> = reads.into_iter().collect();
        let mut changed = false;
        plan = rewrite(plan, &live, &mut changed);
        if !changed {
            break;
        }
    }
    plan
}

fn rewrite(plan: Plan, live: &HashSet<usize>, changed: &mut bool) -> Plan {
    let plan = plan.map_children(&mut |child| rewrite(child, live, changed));
    match plan {
        Plan::Project {
            input,
            mut assignments,
        } => {
            let before = assignments.len();
            assignments.retain(|(slot, _)| live.contains(slot));
            *changed |= assignments.len() != before;
            if assignments.is_empty() {
                *input
            } else {
                Plan::Project { input, assignments }
            }
        }
        Plan::Expand {
            input,
            from,
            steps,
            rel_slot: Some(slot),
            target,
        } if !live.contains(&slot) => {
            *changed = true;
            Plan::Expand {
                input,
                from,
                steps,
                rel_slot: None,
                target,
            }
        }
        Plan::Recursive(mut recursive) => {
            if let RecursiveOutput::Paths {
                rel_slot,
                length_slot,
                cost_slot,
            } = &mut recursive.output
            {
                for slot in [rel_slot, length_slot, cost_slot] {
                    if slot.is_some_and(|s| !live.contains(&s)) {
                        *slot = None;
                        *changed = true;
                    }
                }
            }
            Plan::Recursive(recursive)
        }
        other => other,
    }
}
