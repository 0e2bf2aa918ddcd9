//! Dead-slot pruning: projections whose slots nobody reads are dropped, and recursive joins and
//! expansions stop producing rel, path, length or cost values nobody reads. This is what lets
//! `count(*)` or `length(p)` skip building path values. A procedure call, which multiplies its
//! input row into many output rows, is also told which input slots nothing above it reads
//! (positional liveness), so that its output rows do not copy them.

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
        Plan::Procedure { .. } => true,
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
    let outputs: HashSet<usize> = columns.iter().map(|(_, slot, _)| *slot).collect();
    mark_dead_slots(plan, &outputs)
}

/// Sets each procedure call's `dead` slots: the slots written below it that neither the query's
/// outputs nor any operator above it reads. `live_above` holds the slots read above `plan`
/// (a superset is safe: an operator that rebuilds its rows, like an aggregation, still passes
/// down what was live above it).
fn mark_dead_slots(plan: Plan, live_above: &HashSet<usize>) -> Plan {
    let mut reads = Vec::new();
    plan.own_read_slots(&mut reads);
    if let Plan::Optional { inner, .. } = &plan {
        // The inner plan starts from each input row: what it reads is live in the input.
        inner.read_slots(&mut reads);
    }
    let mut live_below = live_above.clone();
    live_below.extend(reads);
    let plan = plan.map_children(&mut |child| mark_dead_slots(child, &live_below));
    match plan {
        Plan::Procedure {
            input,
            call,
            columns,
            dead: _,
            unread: _,
            ordered,
            top,
        } => {
            let mut written = Vec::new();
            input.all_written_slots(&mut written);
            written.retain(|slot| !live_above.contains(slot) && !columns.contains(slot));
            written.sort_unstable();
            written.dedup();
            let unread = columns
                .iter()
                .copied()
                .filter(|slot| !live_above.contains(slot))
                .collect();
            Plan::Procedure {
                input,
                call,
                columns,
                dead: written,
                unread,
                ordered,
                top,
            }
        }
        other => other,
    }
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
