//! The streaming protocol: a result travels as a sequence of frames, each a u64 little-endian
//! byte length followed by one bincode-encoded [`Message`]: one `Header`, then any number of
//! `Chunk`s, then one `End` (or one `Error`, which may come at any point and ends the stream).
//! A request that asks for every statement's result gets `Results(n)` first, then `n` such
//! results back to back (an `Error` ends the whole stream). Requests themselves may travel as
//! a bincode [`QueryRequest`], which carries typed parameters.

use serde::{Deserialize, Serialize};

use crate::column::ColumnData;
use crate::types::Column;
use crate::value::Property;

/// The HTTP content type of a framed result stream.
pub const CONTENT_TYPE: &str = "application/x-warren-bincode";
/// The format version a header carries; a decoder rejects others.
pub const VERSION: u32 = 1;
/// The bytes of the length prefix that opens every frame.
pub const FRAME_PREFIX_BYTES: usize = 8;

/// The result's columns, sent first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Header {
    pub version: u32,
    pub columns: Vec<Column>,
}

/// Rows `first_row..first_row + data.rows()` of column `column`. A server sends the chunks of
/// one batch of rows column by column, then the next batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Chunk {
    pub column: u32,
    pub first_row: u64,
    pub data: ColumnData,
}

/// The end of a successful result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct Trailer {
    pub rows: u64,
    pub compile_time_us: u64,
    pub execution_time_us: u64,
}

/// A failed query: the error's kind (`Syntax`, `Binder`, `Runtime`, ...) and its message. It
/// may follow chunks already sent; the rows received before it are incomplete.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct ErrorMessage {
    pub kind: String,
    pub message: String,
}

/// One message of a result stream. Variant order is part of the format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub enum Message {
    Header(Header),
    Chunk(Chunk),
    End(Trailer),
    Error(ErrorMessage),
    /// How many results follow: sent first, and only, to a request with `every_statement`.
    Results(u64),
}

/// A `POST /query` body in binary form (`Content-Type: application/x-warren-bincode`): the
/// query text, its parameters as typed values (a JSON body cannot say DATE, UUID, BLOB, ...),
/// whether to answer every statement's result (`Results(n)`, then `n` results) rather than the
/// last one's only, and an id the client chose, by which `POST /cancel` stops the query
/// (0: none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct QueryRequest {
    pub query: String,
    pub parameters: Vec<Property>,
    pub every_statement: bool,
    pub query_id: u64,
}
