//! Single-hop expansion: from the node in one slot, along the CSR of each (rel pair,
//! direction) step that starts at the node's table, binding the rel and the far node (or
//! checking that the far node is the one already bound).

use warren_common::value::{NodeValue, RelValue, Value};
use warren_common::{InternalId, Result};
use warren_planner::plan::{Step, Target};

use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct Expand {
    input: BoxedOperator,
    from: usize,
    steps: Vec<Step>,
    rel_slot: Option<usize>,
    target: Target,
    /// The current input row and its pending (far node, rel) results.
    current: Option<(Row, Vec<(InternalId, InternalId)>)>,
}

impl Expand {
    pub fn new(
        input: BoxedOperator,
        from: usize,
        steps: Vec<Step>,
        rel_slot: Option<usize>,
        target: Target,
    ) -> Self {
        Self {
            input,
            from,
            steps,
            rel_slot,
            target,
            current: None,
        }
    }

    fn neighbours(
        &self,
        ctx: &ExecContext,
        node: InternalId,
    ) -> Result<Vec<(InternalId, InternalId)>> {
        let snapshot = ctx.snapshot();
        let mut out = Vec::new();
        for step in &self.steps {
            let (start, end) = snapshot.pair_ends(step.pair, step.direction);
            if start != node.table || node.offset > u64::from(u32::MAX) {
                continue;
            }
            // Read in place from the segment and the delta: a one-hop lookup never pays for
            // merging a whole CSR.
            let entries = snapshot
                .rel_table(step.pair)
                .try_entries(node.offset as u32, step.direction)?;
            for (neighbour, rel) in entries {
                out.push((
                    InternalId::new(end, u64::from(neighbour)),
                    InternalId::new(step.pair, u64::from(rel)),
                ));
            }
        }
        out.reverse();
        Ok(out)
    }
}

impl Operator for Expand {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some((row, pending)) = &mut self.current {
                while let Some((node, rel)) = pending.pop() {
                    ctx.tick()?;
                    let accepted = match &self.target {
                        Target::Bind { tables, .. } => tables.contains(&node.table),
                        Target::Check { slot } => row[*slot].internal_id() == Some(node),
                    };
                    if !accepted {
                        continue;
                    }
                    let mut out = row.clone();
                    if let Target::Bind { slot, .. } = &self.target {
                        out[*slot] = Value::Node(NodeValue {
                            id: node,
                            projection: None,
                        });
                    }
                    if let Some(slot) = self.rel_slot {
                        out[slot] = Value::Rel(RelValue {
                            id: rel,
                            projection: None,
                        });
                    }
                    return Ok(Some(out));
                }
                self.current = None;
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let Value::Node(node) = &row[self.from] else {
                continue;
            };
            let pending = self.neighbours(ctx, node.id)?;
            self.current = Some((row, pending));
        }
    }
}
