//! OPTIONAL MATCH: the inner plan runs once per input row (its leaf is that row); when it
//! finds nothing, the input row comes out with the inner pattern's variables set to NULL.

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::plan::Plan;

use super::{build, BoxedOperator, Operator, Row};
use crate::context::ExecContext;

pub struct Optional {
    input: BoxedOperator,
    inner_plan: Plan,
    width: usize,
    null_slots: Vec<usize>,
    /// The inner operator for the current input row and whether it produced anything.
    current: Option<(BoxedOperator, Row, bool)>,
}

impl Optional {
    pub fn new(
        input: BoxedOperator,
        inner_plan: Plan,
        width: usize,
        null_slots: Vec<usize>,
    ) -> Self {
        Self {
            input,
            inner_plan,
            width,
            null_slots,
            current: None,
        }
    }
}

impl Operator for Optional {
    fn next(&mut self, ctx: &ExecContext) -> Result<Option<Row>> {
        loop {
            if let Some((inner, _, produced)) = &mut self.current {
                if let Some(out) = inner.next(ctx)? {
                    *produced = true;
                    return Ok(Some(out));
                }
                let (_, mut row, produced) = self.current.take().expect("current");
                if !produced {
                    for &slot in &self.null_slots {
                        row[slot] = Value::Null;
                    }
                    return Ok(Some(row));
                }
                continue;
            }
            let Some(row) = self.input.next(ctx)? else {
                return Ok(None);
            };
            let inner = build(&self.inner_plan, self.width, Some(&row));
            self.current = Some((inner, row, false));
        }
    }
}
