//! Graph procedures at run time: a [`GraphProcedure`] turns one input row's evaluated
//! arguments into rows (`CALL spread_activation(...)`). The binder fixed everything constant in
//! a [`ProcedureKind`]; [`procedure_for`] picks the implementation. A new procedure adds a
//! variant there and an implementation here.

mod query_vector_index;
mod spread_activation;

use warren_common::value::Value;
use warren_common::Result;
use warren_planner::procedure::ProcedureKind;

use crate::context::ExecContext;

/// A procedure over the graph: bound arguments in, rows out (one value per output column).
pub trait GraphProcedure: Send + Sync {
    fn call(&self, arguments: &[Value], ctx: &ExecContext) -> Result<ProcedureRows>;
}

/// The rows of one procedure call, one flat array of values, `width` per row (no allocation
/// per row: a spread returns one row per reached node, hundreds of thousands of them).
#[derive(Debug, Default)]
pub struct ProcedureRows {
    width: usize,
    values: Vec<Value>,
}

impl ProcedureRows {
    /// Room for `rows` rows of `width` values.
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        assert!(width > 0, "a procedure returns at least one column");
        Self {
            width,
            values: Vec::with_capacity(width * rows),
        }
    }

    /// Appends one row.
    pub fn push(&mut self, row: impl IntoIterator<Item = Value>) {
        let before = self.values.len();
        self.values.extend(row);
        assert_eq!(
            self.values.len() - before,
            self.width,
            "a procedure row has one value per column"
        );
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values, row after row.
    pub fn into_values(self) -> std::vec::IntoIter<Value> {
        self.values.into_iter()
    }
}

/// The implementation of a bound procedure.
pub fn procedure_for(kind: &ProcedureKind) -> Box<dyn GraphProcedure> {
    match kind {
        ProcedureKind::SpreadActivation(spec) => Box::new(
            spread_activation::SpreadActivationProcedure::new(spec.clone()),
        ),
        ProcedureKind::QueryVectorIndex(spec) => Box::new(
            query_vector_index::QueryVectorIndexProcedure::new(spec.clone()),
        ),
    }
}
