//! The recursive-join engine: the traversal graph and its masks, breadth-first search for
//! shortest paths, dynamic-programming walk counts, bounded-memory path enumeration, Dijkstra
//! for weighted paths, and the operator that runs them per source.

pub mod bfs;
pub mod counters;
pub mod graph;
pub mod masks;
mod operator;
pub mod stats;
pub mod walks;
pub mod weighted;

pub use operator::RecursiveJoin;
