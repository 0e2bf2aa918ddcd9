//! Warren's shared vocabulary: logical types, runtime values, table and node ids, limits and
//! the one error enum every layer returns. Everything here is plain data with no I/O; the
//! storage, planner and executor crates all speak these types.

pub mod cast;
pub mod column_batch;
pub mod error;
pub mod format;
pub mod ids;
pub mod limits;
pub mod temporal;
pub mod types;
pub mod value;

pub use error::{Error, Result};
pub use ids::{InternalId, TableId};
pub use limits::Limits;
pub use types::LogicalType;
pub use value::Value;
