//! Counted single-hop expansion: for each input row, the number of entries the expansion from
//! the node in one slot would yield (its live degree along each step that starts at the node's
//! table and reaches a target table), written to a count slot. Reads the segment's CSR offsets
//! and the delta in place, so a node costs O(1) without a delta and O(its delta) with one. The
//! blocks of a node's stored entries are verified as they are first read; a checksum mismatch
//! is the query's error.

use warren_common::value::Value;
use warren_common::{InternalId, Result, TableId};
use warren_planner::plan::Step;
use warren_storage::Snapshot;

use super::{BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct CountExpand {
    input: BoxedOperator,
    from: usize,
    steps: Vec<Step>,
    tables: Vec<TableId>,
    count_slot: usize,
}

impl CountExpand {
    pub fn new(
        input: BoxedOperator,
        from: usize,
        steps: Vec<Step>,
        tables: Vec<TableId>,
        count_slot: usize,
    ) -> Self {
        Self {
            input,
            from,
            steps,
            tables,
            count_slot,
        }
    }

    /// The entries of `node` the expansion would bind, counted.
    fn count(&self, snapshot: &Snapshot, node: InternalId) -> Result<u64> {
        let Ok(offset) = u32::try_from(node.offset) else {
            return Ok(0);
        };
        let mut count = 0;
        for step in &self.steps {
            let (start, end) = snapshot.pair_ends(step.pair, step.direction);
            if start == node.table && self.tables.contains(&end) {
                count += snapshot
                    .rel_table(step.pair)
                    .try_degree(offset, step.direction)?;
            }
        }
        Ok(count)
    }
}

impl Operator for CountExpand {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        let snapshot = ctx.snapshot();
        loop {
            let Some(mut row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            ctx.tick()?;
            let Value::Node(node) = &row[self.from] else {
                continue;
            };
            let count = self.count(&snapshot, node.id)?;
            if count == 0 {
                self.input.recycle(row);
                continue;
            }
            let count = i64::try_from(count).expect("a degree fits in INT64");
            row[self.count_slot] = Value::Int64(count);
            return Ok(Some(row));
        }
    }

    fn recycle(&mut self, row: Row) {
        self.input.recycle(row);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use warren_storage::delta::AppendedRel;
    use warren_storage::{Direction, RelTable};

    fn degrees(table: &RelTable, direction: Direction) -> Vec<u64> {
        (0..4)
            .map(|v| table.try_degree(v, direction).expect("no corruption"))
            .collect()
    }

    fn entries_counted(table: &RelTable, direction: Direction) -> Vec<u64> {
        (0..4)
            .map(|v| table.entries(v, direction).len() as u64)
            .collect()
    }

    #[test]
    fn degrees_count_the_entries_an_expansion_lists() {
        let table = RelTable::build(vec![0, 0, 2], vec![1, 2, 0], Vec::new(), None, 3, 3)
            .expect("a valid rel table");
        assert_eq!(degrees(&table, Direction::Forward), [2, 0, 1, 0]);
        assert_eq!(degrees(&table, Direction::Backward), [1, 1, 1, 0]);
        // Delete a stored rel, append two, delete one of those again.
        let changed = table.with_delta(4, 4, |delta, stored_rows| {
            let rel = |source, target| AppendedRel {
                source,
                target,
                values: Arc::from(Vec::new()),
            };
            delta.deleted.insert(0);
            RelTable::append_to(delta, stored_rows, rel(0, 3));
            let again = RelTable::append_to(delta, stored_rows, rel(3, 0));
            delta.deleted.insert(again);
        });
        assert_eq!(degrees(&changed, Direction::Forward), [2, 0, 1, 0]);
        assert_eq!(degrees(&changed, Direction::Backward), [1, 0, 1, 1]);
        for direction in [Direction::Forward, Direction::Backward] {
            assert_eq!(
                degrees(&changed, direction),
                entries_counted(&changed, direction)
            );
        }
    }
}
