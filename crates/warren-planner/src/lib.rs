//! Binding and planning: resolves a parsed statement against the catalog and produces a
//! physical [`plan::Plan`] of operators over fixed-width rows, then rewrites it with the
//! [`optimizer`] rules. `explain` renders plans as text.

pub mod binder;
pub mod constant;
pub mod cost;
pub mod explain;
pub mod expr;
pub mod functions;
pub mod optimizer;
pub mod plan;
pub mod procedure;
pub mod user_function;

pub use binder::{bind_statement, AlterTable, BindSettings, BoundStatement, DefaultSemantic};
pub use plan::{Plan, QueryPlan};
pub use user_function::{UserFunction, UserFunctionRef, UserFunctions};
