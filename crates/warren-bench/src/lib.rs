//! Dataset generators and benchmark workloads.

pub mod generate;
