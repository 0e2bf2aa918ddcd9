//! The executor: turns a plan into a tree of row operators and runs it against a snapshot.
//! Expressions are evaluated by [`eval`], operators live in [`operators`], and recursive
//! patterns are run by the engine in [`recursive`].

pub mod columnar;
pub mod context;
pub mod eval;
pub mod operators;
pub mod procedures;
pub mod recursive;
pub mod vector_copy;
pub mod vector_index;
pub mod vector_index_file;
pub mod warnings;
pub mod workers;

pub use context::{EngineSettings, ExecContext, ExecSettings, Interrupt, MemoryTracker};
pub use operators::{build, BoxedOperator, Operator, Row};
pub use warnings::{WarningLog, WarningSink};
