//! Every limit Warren enforces, in one place. Exceeding one is a typed error
//! ([`crate::Error::LimitExceeded`]), never a hang or an out-of-memory kill.

/// The largest upper bound a recursive pattern may have unless the user raises
/// `var_length_extend_max_depth`.
pub const HOPS_MAX_DEFAULT: u32 = 30;
/// The hard ceiling on `var_length_extend_max_depth`.
pub const HOPS_MAX_CEILING: u32 = 255;
/// Rows per result batch handed to consumers.
pub const BATCH_ROWS: usize = 2048;
/// Node offsets are stored as u32 in adjacency lists; a node table holds fewer rows than this.
pub const NODE_TABLE_ROWS_MAX: u64 = u32::MAX as u64;
/// Longest string value accepted by import and literals.
pub const STRING_BYTES_MAX: usize = 256 * 1024 * 1024;
/// Longest query text.
pub const QUERY_BYTES_MAX: usize = 16 * 1024 * 1024;
/// Nesting depth of expressions and nested values (guards the recursive-descent parser).
pub const NESTING_DEPTH_MAX: usize = 256;
/// Default per-query memory budget: 8 GiB or a quarter less than it where the machine is small.
pub const QUERY_MEMORY_BYTES_DEFAULT: u64 = 8 << 30;
/// The most worker threads a query may use.
pub const THREADS_MAX: usize = 1024;
/// The warnings a connection keeps by default (`warning_limit`, Kùzu's default).
pub const WARNINGS_KEPT_DEFAULT: u64 = 8192;
/// The hard ceiling on `warning_limit`: each warning holds a copy of its input line.
pub const WARNINGS_KEPT_CEILING: u64 = 1 << 20;

/// Per-query limits, set from settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `var_length_extend_max_depth`: the largest upper bound of a recursive pattern.
    pub hops_max: u32,
    /// `memory_limit`: bytes a query may hold in intermediate results and path state.
    pub query_memory_bytes: u64,
    /// `timeout`: milliseconds a query may run; 0 means no timeout.
    pub timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            hops_max: HOPS_MAX_DEFAULT,
            query_memory_bytes: QUERY_MEMORY_BYTES_DEFAULT,
            timeout_ms: 0,
        }
    }
}
