//! The encoder: writes bincode 1.3's default layout by hand. Fixed-width columns are written as
//! their length and one copy of their bytes (the target is little-endian, as the format is).

use std::io::{self, Write};

use bytemuck::NoUninit;

use crate::column::{BlobColumn, ColumnData, ListColumn, MapColumn, NullableColumn, StringColumn};
use crate::copy;
use crate::message::{Chunk, ErrorMessage, Header, Message, QueryRequest, Trailer};
use crate::types::{Column, Field, WireType};
use crate::value::{
    Decimal, InternalId, Interval, MapEntry, Node, Path, Property, Rel, UnionValue, WireValue,
};

#[cfg(not(target_endian = "little"))]
compile_error!("warren-wire copies values' memory as little-endian bytes: big-endian targets would need a byte swap");

/// Where encoded bytes go. `put_bulk` receives the large payloads of fixed-width columns.
pub trait Sink {
    fn put(&mut self, bytes: &[u8]);
    fn put_bulk(&mut self, bytes: &[u8]) {
        self.put(bytes);
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn put_bulk(&mut self, bytes: &[u8]) {
        copy::append(self, bytes);
    }
}

/// Counts bytes instead of writing them (for frame lengths and exact reservations).
#[derive(Debug, Default)]
pub struct Counter(pub usize);

impl Sink for Counter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// Writes to an `io::Write`, keeping the first error and skipping the writes after it. Small
/// pieces are gathered in a buffer; bulk payloads go straight from the column to the writer.
struct WriteSink<W: Write> {
    inner: W,
    buffer: Vec<u8>,
    error: Option<io::Error>,
}

const WRITE_BUFFER_BYTES: usize = 8 << 10;

impl<W: Write> WriteSink<W> {
    fn flush_buffer(&mut self) {
        if self.error.is_none() && !self.buffer.is_empty() {
            if let Err(error) = self.inner.write_all(&self.buffer) {
                self.error = Some(error);
            }
        }
        self.buffer.clear();
    }
}

impl<W: Write> Sink for WriteSink<W> {
    fn put(&mut self, bytes: &[u8]) {
        if self.buffer.len() + bytes.len() > WRITE_BUFFER_BYTES {
            self.flush_buffer();
        }
        if bytes.len() > WRITE_BUFFER_BYTES {
            self.put_bulk(bytes);
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }

    fn put_bulk(&mut self, bytes: &[u8]) {
        self.flush_buffer();
        if self.error.is_none() {
            if let Err(error) = self.inner.write_all(bytes) {
                self.error = Some(error);
            }
        }
    }
}

/// A value with a hand-written bincode encoding.
pub trait Encode {
    fn encode<S: Sink>(&self, sink: &mut S);

    /// The encoded size in bytes.
    fn encoded_len(&self) -> usize {
        let mut counter = Counter(0);
        self.encode(&mut counter);
        counter.0
    }

    /// The encoding alone (what `bincode::serialize` returns).
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode(&mut out);
        out
    }
}

/// Appends one frame (u64 length, then the message) to `out`.
pub fn encode_frame(out: &mut Vec<u8>, message: &Message) {
    let prefix_at = out.len();
    put_u64(out, 0);
    let start = out.len();
    message.encode(out);
    let len = (out.len() - start) as u64;
    out[prefix_at..start].copy_from_slice(&len.to_le_bytes());
}

/// Writes one frame to `writer`; bulk columns are written from their own memory.
pub fn write_frame<W: Write>(writer: W, message: &Message) -> io::Result<()> {
    let mut sink = WriteSink {
        inner: writer,
        buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
        error: None,
    };
    put_u64(&mut sink, message.encoded_len() as u64);
    message.encode(&mut sink);
    sink.flush_buffer();
    match sink.error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

#[inline]
fn put_u64<S: Sink>(sink: &mut S, value: u64) {
    sink.put(&value.to_le_bytes());
}

#[inline]
fn put_tag<S: Sink>(sink: &mut S, tag: u32) {
    sink.put(&tag.to_le_bytes());
}

/// A fixed-width slice: its length, then its memory in one copy.
#[inline]
fn put_pod_slice<S: Sink, T: NoUninit>(sink: &mut S, values: &[T]) {
    put_u64(sink, values.len() as u64);
    sink.put_bulk(bytemuck::cast_slice(values));
}

fn put_seq<S: Sink, T: Encode>(sink: &mut S, values: &[T]) {
    put_u64(sink, values.len() as u64);
    for value in values {
        value.encode(sink);
    }
}

macro_rules! encode_le {
    ($($ty:ty),*) => {$(
        impl Encode for $ty {
            #[inline]
            fn encode<S: Sink>(&self, sink: &mut S) {
                sink.put(&self.to_le_bytes());
            }
        }
    )*};
}

encode_le!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);

impl Encode for bool {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        sink.put(&[u8::from(*self)]);
    }
}

impl Encode for str {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_u64(sink, self.len() as u64);
        sink.put(self.as_bytes());
    }
}

impl Encode for String {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.as_str().encode(sink);
    }
}

impl<T: Encode> Encode for Box<T> {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        (**self).encode(sink);
    }
}

impl Encode for InternalId {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&self.table.to_le_bytes());
        bytes[4..].copy_from_slice(&self.offset.to_le_bytes());
        sink.put(&bytes);
    }
}

impl Encode for Interval {
    #[inline]
    fn encode<S: Sink>(&self, sink: &mut S) {
        sink.put(bytemuck::bytes_of(self));
    }
}

impl Encode for Decimal {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.value.encode(sink);
        sink.put(&[self.precision, self.scale]);
    }
}

impl Encode for Property {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.name.encode(sink);
        self.value.encode(sink);
    }
}

impl Encode for MapEntry {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.key.encode(sink);
        self.value.encode(sink);
    }
}

impl Encode for UnionValue {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.tag.encode(sink);
        self.value.encode(sink);
    }
}

impl Encode for Node {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.id.encode(sink);
        self.label.encode(sink);
        put_seq(sink, &self.properties);
    }
}

impl Encode for Rel {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.src.encode(sink);
        self.dst.encode(sink);
        self.id.encode(sink);
        self.label.encode(sink);
        put_seq(sink, &self.properties);
    }
}

impl Encode for Path {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_seq(sink, &self.nodes);
        put_seq(sink, &self.rels);
    }
}

impl Encode for WireValue {
    fn encode<S: Sink>(&self, sink: &mut S) {
        let tag = self.tag();
        put_tag(sink, tag);
        match self {
            WireValue::Null => {}
            WireValue::Bool(v) => v.encode(sink),
            WireValue::Int8(v) => v.encode(sink),
            WireValue::Int16(v) => v.encode(sink),
            WireValue::Int32(v) | WireValue::Date(v) => v.encode(sink),
            WireValue::Int64(v)
            | WireValue::Timestamp(v)
            | WireValue::TimestampNs(v)
            | WireValue::TimestampMs(v)
            | WireValue::TimestampSec(v)
            | WireValue::TimestampTz(v) => v.encode(sink),
            WireValue::Int128(v) => v.encode(sink),
            WireValue::UInt8(v) => v.encode(sink),
            WireValue::UInt16(v) => v.encode(sink),
            WireValue::UInt32(v) => v.encode(sink),
            WireValue::UInt64(v) => v.encode(sink),
            WireValue::Float(v) => v.encode(sink),
            WireValue::Double(v) => v.encode(sink),
            WireValue::Decimal(v) => v.encode(sink),
            WireValue::Interval(v) => v.encode(sink),
            WireValue::String(v) => v.encode(sink),
            WireValue::Blob(v) => put_pod_slice(sink, v),
            WireValue::Uuid(v) => v.encode(sink),
            WireValue::List(v) => put_seq(sink, v),
            WireValue::Struct(v) => put_seq(sink, v),
            WireValue::Map(v) => put_seq(sink, v),
            WireValue::Union(v) => v.encode(sink),
            WireValue::InternalId(v) => v.encode(sink),
            WireValue::Node(v) => v.encode(sink),
            WireValue::Rel(v) => v.encode(sink),
            WireValue::Path(v) => v.encode(sink),
        }
    }
}

impl WireValue {
    /// The variant index bincode writes.
    pub fn tag(&self) -> u32 {
        match self {
            WireValue::Null => 0,
            WireValue::Bool(_) => 1,
            WireValue::Int8(_) => 2,
            WireValue::Int16(_) => 3,
            WireValue::Int32(_) => 4,
            WireValue::Int64(_) => 5,
            WireValue::Int128(_) => 6,
            WireValue::UInt8(_) => 7,
            WireValue::UInt16(_) => 8,
            WireValue::UInt32(_) => 9,
            WireValue::UInt64(_) => 10,
            WireValue::Float(_) => 11,
            WireValue::Double(_) => 12,
            WireValue::Decimal(_) => 13,
            WireValue::Date(_) => 14,
            WireValue::Timestamp(_) => 15,
            WireValue::TimestampNs(_) => 16,
            WireValue::TimestampMs(_) => 17,
            WireValue::TimestampSec(_) => 18,
            WireValue::TimestampTz(_) => 19,
            WireValue::Interval(_) => 20,
            WireValue::String(_) => 21,
            WireValue::Blob(_) => 22,
            WireValue::Uuid(_) => 23,
            WireValue::List(_) => 24,
            WireValue::Struct(_) => 25,
            WireValue::Map(_) => 26,
            WireValue::Union(_) => 27,
            WireValue::InternalId(_) => 28,
            WireValue::Node(_) => 29,
            WireValue::Rel(_) => 30,
            WireValue::Path(_) => 31,
        }
    }
}

impl Encode for StringColumn {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_pod_slice(sink, &self.offsets);
        put_pod_slice(sink, self.text.as_bytes());
    }
}

impl Encode for BlobColumn {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_pod_slice(sink, &self.offsets);
        put_pod_slice(sink, &self.bytes);
    }
}

impl Encode for ListColumn {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_pod_slice(sink, &self.offsets);
        self.values.encode(sink);
    }
}

impl Encode for MapColumn {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_pod_slice(sink, &self.offsets);
        self.keys.encode(sink);
        self.values.encode(sink);
    }
}

impl Encode for NullableColumn {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_pod_slice(sink, &self.valid);
        self.values.encode(sink);
    }
}

impl Encode for ColumnData {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_tag(sink, self.tag());
        match self {
            ColumnData::Null(rows) => rows.encode(sink),
            ColumnData::Bool(v) => put_pod_slice(sink, v),
            ColumnData::Int8(v) => put_pod_slice(sink, v),
            ColumnData::Int16(v) => put_pod_slice(sink, v),
            ColumnData::Int32(v) => put_pod_slice(sink, v),
            ColumnData::Int64(v) => put_pod_slice(sink, v),
            ColumnData::Int128(v) => put_pod_slice(sink, v),
            ColumnData::UInt8(v) => put_pod_slice(sink, v),
            ColumnData::UInt16(v) => put_pod_slice(sink, v),
            ColumnData::UInt32(v) => put_pod_slice(sink, v),
            ColumnData::UInt64(v) => put_pod_slice(sink, v),
            ColumnData::UInt128(v) => put_pod_slice(sink, v),
            ColumnData::Float(v) => put_pod_slice(sink, v),
            ColumnData::Double(v) => put_pod_slice(sink, v),
            ColumnData::Interval(v) => put_pod_slice(sink, v),
            ColumnData::InternalId(v) => put_seq(sink, v),
            ColumnData::String(c) => c.encode(sink),
            ColumnData::Blob(c) => c.encode(sink),
            ColumnData::List(c) => c.encode(sink),
            ColumnData::Struct(fields) => put_seq(sink, fields),
            ColumnData::Map(c) => c.encode(sink),
            ColumnData::Node(v) => put_seq(sink, v),
            ColumnData::Rel(v) => put_seq(sink, v),
            ColumnData::Path(v) => put_seq(sink, v),
            ColumnData::Values(v) => put_seq(sink, v),
            ColumnData::Nullable(c) => c.encode(sink),
        }
    }
}

impl ColumnData {
    /// The variant index bincode writes.
    pub fn tag(&self) -> u32 {
        match self {
            ColumnData::Null(_) => 0,
            ColumnData::Bool(_) => 1,
            ColumnData::Int8(_) => 2,
            ColumnData::Int16(_) => 3,
            ColumnData::Int32(_) => 4,
            ColumnData::Int64(_) => 5,
            ColumnData::Int128(_) => 6,
            ColumnData::UInt8(_) => 7,
            ColumnData::UInt16(_) => 8,
            ColumnData::UInt32(_) => 9,
            ColumnData::UInt64(_) => 10,
            ColumnData::UInt128(_) => 11,
            ColumnData::Float(_) => 12,
            ColumnData::Double(_) => 13,
            ColumnData::Interval(_) => 14,
            ColumnData::InternalId(_) => 15,
            ColumnData::String(_) => 16,
            ColumnData::Blob(_) => 17,
            ColumnData::List(_) => 18,
            ColumnData::Struct(_) => 19,
            ColumnData::Map(_) => 20,
            ColumnData::Node(_) => 21,
            ColumnData::Rel(_) => 22,
            ColumnData::Path(_) => 23,
            ColumnData::Values(_) => 24,
            ColumnData::Nullable(_) => 25,
        }
    }
}

impl Encode for WireType {
    fn encode<S: Sink>(&self, sink: &mut S) {
        put_tag(sink, self.tag());
        match self {
            WireType::Decimal { precision, scale } => sink.put(&[*precision, *scale]),
            WireType::List(element) => element.encode(sink),
            WireType::Array(element, size) => {
                element.encode(sink);
                size.encode(sink);
            }
            WireType::Struct(fields) | WireType::Union(fields) => put_seq(sink, fields),
            WireType::Map(key, value) => {
                key.encode(sink);
                value.encode(sink);
            }
            _ => {}
        }
    }
}

impl WireType {
    /// The variant index bincode writes.
    pub fn tag(&self) -> u32 {
        match self {
            WireType::Any => 0,
            WireType::Bool => 1,
            WireType::Int8 => 2,
            WireType::Int16 => 3,
            WireType::Int32 => 4,
            WireType::Int64 => 5,
            WireType::Int128 => 6,
            WireType::UInt8 => 7,
            WireType::UInt16 => 8,
            WireType::UInt32 => 9,
            WireType::UInt64 => 10,
            WireType::Float => 11,
            WireType::Double => 12,
            WireType::Decimal { .. } => 13,
            WireType::Serial => 14,
            WireType::Date => 15,
            WireType::Timestamp => 16,
            WireType::TimestampNs => 17,
            WireType::TimestampMs => 18,
            WireType::TimestampSec => 19,
            WireType::TimestampTz => 20,
            WireType::Interval => 21,
            WireType::String => 22,
            WireType::Blob => 23,
            WireType::Uuid => 24,
            WireType::List(_) => 25,
            WireType::Array(..) => 26,
            WireType::Struct(_) => 27,
            WireType::Map(..) => 28,
            WireType::Union(_) => 29,
            WireType::InternalId => 30,
            WireType::Node => 31,
            WireType::Rel => 32,
            WireType::RecursiveRel => 33,
        }
    }
}

impl Encode for Field {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.name.encode(sink);
        self.ty.encode(sink);
    }
}

impl Encode for Column {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.name.encode(sink);
        self.ty.encode(sink);
    }
}

impl Encode for Header {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.version.encode(sink);
        put_seq(sink, &self.columns);
    }
}

impl Encode for Chunk {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.column.encode(sink);
        self.first_row.encode(sink);
        self.data.encode(sink);
    }
}

impl Encode for Trailer {
    fn encode<S: Sink>(&self, sink: &mut S) {
        let mut bytes = [0u8; 24];
        bytes[..8].copy_from_slice(&self.rows.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.compile_time_us.to_le_bytes());
        bytes[16..].copy_from_slice(&self.execution_time_us.to_le_bytes());
        sink.put(&bytes);
    }
}

impl Encode for ErrorMessage {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.kind.encode(sink);
        self.message.encode(sink);
    }
}

impl Encode for Message {
    fn encode<S: Sink>(&self, sink: &mut S) {
        match self {
            Message::Header(header) => {
                put_tag(sink, 0);
                header.encode(sink);
            }
            Message::Chunk(chunk) => {
                put_tag(sink, 1);
                chunk.encode(sink);
            }
            Message::End(trailer) => {
                put_tag(sink, 2);
                trailer.encode(sink);
            }
            Message::Error(error) => {
                put_tag(sink, 3);
                error.encode(sink);
            }
            Message::Results(count) => {
                put_tag(sink, 4);
                count.encode(sink);
            }
        }
    }
}

impl Encode for QueryRequest {
    fn encode<S: Sink>(&self, sink: &mut S) {
        self.query.encode(sink);
        put_seq(sink, &self.parameters);
        self.every_statement.encode(sink);
        self.query_id.encode(sink);
    }
}
