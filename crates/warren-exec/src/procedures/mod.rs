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
    fn call(&self, arguments: &[Value], ctx: &ExecContext) -> Result<Vec<Vec<Value>>>;
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
