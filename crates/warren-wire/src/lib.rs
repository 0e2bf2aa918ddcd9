//! Warren's binary result format (`application/x-warren-bincode`).
//!
//! A result is a stream of frames (a u64 length, then one [`Message`]): a [`Header`] with the
//! columns and their Kùzu types, [`Chunk`]s of up to N rows of one column, and an `End`
//! [`Trailer`] or an [`ErrorMessage`]. Every type here derives serde's `Serialize` and
//! `Deserialize`, and the bytes are exactly what `bincode` 1.3 writes for them with its default
//! options, so any Rust client decodes a message with `bincode::deserialize::<Message>` (or
//! with `wincode`, through the `wincode` feature's derives). Warren itself uses the
//! hand-written [`encode`] and [`decode`] modules: fixed-width columns are copied, not looped
//! over, and the decoder checks every length and never panics on bad input.
//!
//! This crate depends on no engine crate; `docs/format/wire.md` gives the byte layout.

pub mod column;
pub mod copy;
pub mod decode;
pub mod encode;
pub mod limits;
pub mod message;
pub mod sample;
pub mod types;
pub mod value;
#[cfg(any(test, feature = "wincode"))]
pub mod wincode_support;

pub use column::{BlobColumn, ColumnData, ListColumn, MapColumn, NullableColumn, StringColumn};
pub use decode::{decode, decode_frames, read_frame, split_frame, Decode, DecodeError};
pub use encode::{encode_frame, write_frame, Encode, Sink};
pub use message::{
    Chunk, ErrorMessage, Header, Message, QueryRequest, Trailer, CONTENT_TYPE, VERSION,
};
pub use types::{Column, Field, WireType};
pub use value::{
    Decimal, InternalId, Interval, MapEntry, Node, Path, Property, Rel, UnionValue, WireValue,
};

#[cfg(test)]
mod arbitrary;
#[cfg(test)]
mod compat_tests;
