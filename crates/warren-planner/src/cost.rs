//! A plan's cost class, decided from its shape before it runs: heavy plans (a recursive join,
//! a scan or fold of whole node tables, a vector search, a procedure or file read, or rows expanded
//! over more than one hop) may take milliseconds to seconds; light ones (key lookups and at
//! most one expansion, counted hops included) take microseconds per row they return. A server
//! runs the two classes in separate lanes so that light queries never wait behind heavy ones.

use crate::plan::Plan;

/// Whether running `plan` may take long enough that cheap queries should not wait behind it.
pub fn is_heavy(plan: &Plan) -> bool {
    let mut expansions = 0;
    heavy_operator(plan, &mut expansions) || expansions > 1
}

/// Whether `plan` or a child is heavy by itself; counts the row expansions on the way.
fn heavy_operator(plan: &Plan, expansions: &mut usize) -> bool {
    match plan {
        Plan::Recursive(_)
        | Plan::ScanNodes { .. }
        | Plan::FoldColumns { .. }
        | Plan::TopNodes { .. }
        | Plan::VectorTopK(_)
        | Plan::LoadCsv { .. }
        | Plan::Procedure { .. } => return true,
        Plan::Expand { .. } => *expansions += 1,
        Plan::Merge { merge, .. } if heavy_operator(&merge.matcher, expansions) => return true,
        _ => {}
    }
    plan.children()
        .into_iter()
        .any(|child| heavy_operator(child, expansions))
}

#[cfg(test)]
mod tests {
    use warren_storage::Direction;

    use super::*;
    use crate::expr::Expr;
    use crate::plan::{Step, Target};

    fn lookup() -> Plan {
        Plan::LookupNode {
            input: Box::new(Plan::Unit),
            tables: vec![0],
            key: Expr::Slot(9),
            slot: 0,
            filter: None,
        }
    }

    fn expand(input: Plan, from: usize, to: usize) -> Plan {
        Plan::Expand {
            input: Box::new(input),
            from,
            steps: vec![Step {
                pair: 1,
                direction: Direction::Forward,
            }],
            rel_slot: None,
            target: Target::Bind {
                slot: to,
                tables: vec![0],
            },
        }
    }

    #[test]
    fn lookups_and_one_hop_are_light_more_hops_and_scans_heavy() {
        assert!(!is_heavy(&lookup()));
        assert!(!is_heavy(&expand(lookup(), 0, 1)));
        let counted = Plan::CountExpand {
            input: Box::new(expand(lookup(), 0, 1)),
            from: 1,
            steps: vec![],
            tables: vec![0],
            count_slot: 2,
        };
        assert!(!is_heavy(&counted));
        assert!(is_heavy(&expand(expand(lookup(), 0, 1), 1, 2)));
        let scan = Plan::ScanNodes {
            input: Box::new(Plan::Unit),
            tables: vec![0],
            slot: 0,
            filter: None,
        };
        assert!(is_heavy(&scan));
        assert!(!is_heavy(&Plan::Unit));
    }
}
