//! Dataset generators and benchmark workloads: `warren generate`, `warren bench` (workloads
//! that check their answers against reference implementations and write JSON reports) and
//! `warren compare` (noise-aware verdicts between two reports), with the ksweep figure.

pub mod answer;
pub mod bench;
pub mod check;
pub mod compare;
pub mod counters;
pub mod dataset;
pub mod error;
pub mod generate;
pub mod ksweep;
pub mod load;
pub mod machine;
pub mod measure;
pub mod plot;
pub mod print;
pub mod query;
pub mod reference;
pub mod report;
pub mod serve;
pub mod stats;
pub mod vectors;
pub mod vectors_hybrid;
pub mod wire;
pub mod workload;
pub mod writes;

pub use bench::{run, Outcome};
pub use error::{BenchError, BenchResult};
pub use workload::{BenchOptions, VarlenOptions, Workload};
