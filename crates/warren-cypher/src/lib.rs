//! Cypher text to syntax tree: lexer, recursive-descent parser with Pratt expressions, spans.
//!
//! The entry points are [`parse_statement`] and [`parse_script`]; [`split_statements`] and
//! [`is_complete`] let a shell or a script runner cut text into statements without parsing it.
//! Every error is a [`warren_common::Error::Syntax`] whose message follows Kùzu's wording.

pub mod ast;
pub mod lexer;
pub mod parser;
mod split;
pub mod token;

#[cfg(test)]
mod tests;

pub use parser::{parse_script, parse_statement};
pub use split::{is_complete, split_statements, StatementText};
