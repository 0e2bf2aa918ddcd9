//! The decoder's limits: input beyond them is an error, never a huge allocation or a deep
//! recursion.

/// The largest message a frame may carry.
pub const MESSAGE_BYTES_MAX: u64 = 1 << 30;
/// The most rows a chunk may hold (`Null(n)` chunks are checked against it too).
pub const CHUNK_ROWS_MAX: u64 = 1 << 26;
/// The deepest nesting of types, chunks and values (lists of lists of ...).
pub const DEPTH_MAX: u32 = 64;
