//! The recursive-join engine: the traversal graph and its masks, breadth-first search for
//! shortest paths, dynamic-programming walk counts, bounded-memory path enumeration, Dijkstra
//! for weighted paths, and the operator that runs them per source.

pub mod auto_k;
pub mod bfs;
pub mod binned_push;
pub mod counters;
pub mod counting;
pub mod frontier_bits;
pub mod frontier_morsels;
pub mod graph;
pub mod idle_pool;
pub mod lane_counter;
pub mod lanes;
pub mod level_pieces;
pub mod masks;
pub mod morsels;
pub mod multi_source_bfs;
mod operator;
pub mod parent_sums;
pub mod prefetch;
pub mod scheduler;
pub mod spread;
pub mod state_pool;
pub mod stats;
pub mod unvisited_bits;
pub mod var_length;
pub mod walk_counts;
pub mod walks;
pub mod weighted;

pub use operator::RecursiveJoin;
