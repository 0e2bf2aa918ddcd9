//! Whole-table counts (`Plan::CountAll`): the live nodes of some tables, or the entries a
//! single hop from all of them yields (the live rels of each step that starts at one of the
//! tables and ends at one of the targets), as one row, from the tables' row counts and
//! deletion bitmaps: O(tables), not a row per node.

use warren_common::value::Value;
use warren_common::{Result, TableId};
use warren_planner::plan::Step;
use warren_storage::Snapshot;

use super::{Operator, Row};
use crate::context::ExecContext;

pub struct CountAll {
    tables: Vec<TableId>,
    steps: Vec<Step>,
    targets: Vec<TableId>,
    count_slot: usize,
    width: usize,
    done: bool,
}

impl CountAll {
    pub fn new(
        tables: Vec<TableId>,
        steps: Vec<Step>,
        targets: Vec<TableId>,
        count_slot: usize,
        width: usize,
    ) -> Self {
        assert!(count_slot < width, "the count's slot is in the row");
        Self {
            tables,
            steps,
            targets,
            count_slot,
            width,
            done: false,
        }
    }

    /// The live nodes of the tables, or the live rels of the steps that go from them to the
    /// targets.
    fn count(&self, snapshot: &Snapshot) -> Result<u64> {
        let mut count = 0;
        if self.steps.is_empty() {
            for &table in &self.tables {
                count += snapshot.node_table(table).num_live_rows()?;
            }
            return Ok(count);
        }
        for step in &self.steps {
            let (start, end) = snapshot.pair_ends(step.pair, step.direction);
            if self.tables.contains(&start) && self.targets.contains(&end) {
                count += snapshot.rel_table(step.pair).num_live_rows()?;
            }
        }
        Ok(count)
    }
}

impl Operator for CountAll {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let count = self.count(&ctx.snapshot())?;
        if count == 0 {
            return Ok(None);
        }
        let mut row = vec![Value::Null; self.width];
        row[self.count_slot] = Value::Int64(i64::try_from(count).expect("a count fits in INT64"));
        Ok(Some(row))
    }
}
