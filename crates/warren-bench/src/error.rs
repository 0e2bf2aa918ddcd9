//! The one error type of the benchmark library; its variant says who is to blame.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The engine refused or failed a statement the benchmark ran.
    #[error("{0}")]
    Engine(#[from] warren::Error),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// The command line asked for something inconsistent.
    #[error("{0}")]
    Usage(String),
    /// A database or dataset folder is not what the workload needs.
    #[error("{0}")]
    Dataset(String),
    /// The engine's rows do not have the shape the workload's query promises.
    #[error("unexpected result: {0}")]
    Result(String),
    /// A figure could not be drawn.
    #[error("plot: {0}")]
    Plot(String),
}

impl BenchError {
    pub fn io(path: &Path, error: &std::io::Error) -> BenchError {
        BenchError::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        }
    }
}

pub type BenchResult<T> = Result<T, BenchError>;
