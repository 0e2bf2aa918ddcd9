//! The decoder: reads bincode 1.3's default layout by hand. Every length is checked against the
//! bytes that remain before anything is allocated, nesting is bounded by
//! [`crate::limits::DEPTH_MAX`], and chunks are validated (offsets, bitmaps, UTF-8), so no input
//! makes it panic or allocate more than a small multiple of the input's size.

use std::fmt;
use std::io::Read;

use bytemuck::{AnyBitPattern, NoUninit};

use crate::column::{BlobColumn, ColumnData, ListColumn, MapColumn, NullableColumn, StringColumn};
use crate::limits::{CHUNK_ROWS_MAX, DEPTH_MAX, MESSAGE_BYTES_MAX};
use crate::message::{
    Chunk, ErrorMessage, Header, Message, QueryRequest, Trailer, FRAME_PREFIX_BYTES, VERSION,
};
use crate::types::{Column, Field, WireType};
use crate::value::{
    Decimal, InternalId, Interval, MapEntry, Node, Path, Property, Rel, UnionValue, WireValue,
};

/// Why bytes are not a valid message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended `needed` bytes early.
    Truncated {
        needed: u64,
    },
    /// An enum's variant index is out of range.
    Tag {
        what: &'static str,
        tag: u32,
    },
    Bool(u8),
    Utf8,
    /// A length or count beyond a limit.
    TooLarge {
        what: &'static str,
        len: u64,
        max: u64,
    },
    TooDeep,
    /// A chunk whose parts disagree (offsets, bitmap or field lengths).
    Invalid(&'static str),
    /// Bytes after the end of the message.
    TrailingBytes(u64),
    Version(u32),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { needed } => write!(f, "input ends {needed} bytes early"),
            DecodeError::Tag { what, tag } => write!(f, "invalid {what} variant {tag}"),
            DecodeError::Bool(byte) => write!(f, "invalid bool byte {byte}"),
            DecodeError::Utf8 => f.write_str("invalid UTF-8 in a string"),
            DecodeError::TooLarge { what, len, max } => {
                write!(f, "{what} of {len} exceeds the limit {max}")
            }
            DecodeError::TooDeep => write!(f, "nesting deeper than {DEPTH_MAX}"),
            DecodeError::Invalid(what) => write!(f, "invalid chunk: {what}"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} bytes after the message"),
            DecodeError::Version(v) => write!(f, "format version {v}, expected {VERSION}"),
        }
    }
}

impl std::error::Error for DecodeError {}

pub type DecodeResult<T> = Result<T, DecodeError>;

/// A cursor over the input.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    depth: u32,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, depth: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    fn take(&mut self, len: usize) -> DecodeResult<&'a [u8]> {
        if len > self.bytes.len() {
            return Err(DecodeError::Truncated {
                needed: (len - self.bytes.len()) as u64,
            });
        }
        let (head, tail) = self.bytes.split_at(len);
        self.bytes = tail;
        Ok(head)
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> DecodeResult<[u8; N]> {
        let bytes = self.take(N)?;
        Ok(bytes.try_into().expect("take returned N bytes"))
    }

    #[inline]
    fn tag(&mut self) -> DecodeResult<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A sequence length whose elements take at least `min_bytes` each: it cannot exceed what
    /// the remaining input could hold.
    #[inline]
    fn len(&mut self, min_bytes: usize, what: &'static str) -> DecodeResult<usize> {
        let len = u64::from_le_bytes(self.array()?);
        let fits = (self.bytes.len() / min_bytes.max(1)) as u64;
        if len > fits {
            if min_bytes == 0 {
                return Err(DecodeError::TooLarge {
                    what,
                    len,
                    max: fits,
                });
            }
            let needed = len.saturating_mul(min_bytes as u64) - self.bytes.len() as u64;
            return Err(DecodeError::Truncated { needed });
        }
        Ok(len as usize)
    }

    fn enter(&mut self) -> DecodeResult<()> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err(DecodeError::TooDeep);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A fixed-width slice: its length, then one copy of its bytes into a new vector.
    #[inline]
    fn pod_vec<T: NoUninit + AnyBitPattern>(&mut self) -> DecodeResult<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let len = self.len(size, "sequence")?;
        let bytes = self.take(len * size)?;
        // One pass over the memory: no zero-filling before the copy.
        let mut values: Vec<T> = Vec::with_capacity(len);
        // SAFETY: the vector has room for `len` values, i.e. `bytes.len()` bytes, and does not
        // overlap the input; every byte pattern is a valid `T` (`AnyBitPattern`), so the `len`
        // values are initialized once the bytes are copied.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                values.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
            values.set_len(len);
        }
        Ok(values)
    }

    fn seq<T: Decode>(&mut self) -> DecodeResult<Vec<T>> {
        let len = self.len(T::MIN_BYTES, "sequence")?;
        let mut values = Vec::with_capacity(len);
        for _ in 0..len {
            values.push(T::decode(self)?);
        }
        Ok(values)
    }

    fn bytes_vec(&mut self) -> DecodeResult<Vec<u8>> {
        let len = self.len(1, "bytes")?;
        Ok(self.take(len)?.to_vec())
    }

    fn bool_vec(&mut self) -> DecodeResult<Vec<bool>> {
        let len = self.len(1, "bools")?;
        let bytes = self.take(len)?;
        if let Some(&bad) = bytes.iter().find(|&&b| b > 1) {
            return Err(DecodeError::Bool(bad));
        }
        Ok(bytes.iter().map(|&b| b != 0).collect())
    }

    /// Reads a boxed value one nesting level down.
    fn nested<T: Decode>(&mut self) -> DecodeResult<T> {
        self.enter()?;
        let value = T::decode(self);
        self.leave();
        value
    }
}

/// A value with a hand-written bincode decoding.
pub trait Decode: Sized {
    /// The fewest bytes one encoded value takes (bounds sequence lengths before allocating).
    const MIN_BYTES: usize;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self>;
}

/// Decodes exactly one `T` from `bytes` (the counterpart of `bincode::deserialize`).
pub fn decode<T: Decode>(bytes: &[u8]) -> DecodeResult<T> {
    let mut reader = Reader::new(bytes);
    let value = T::decode(&mut reader)?;
    match reader.remaining() {
        0 => Ok(value),
        n => Err(DecodeError::TrailingBytes(n as u64)),
    }
}

/// Splits the first frame off `bytes`: `Ok(None)` when more bytes are needed, else the
/// message's bytes and the bytes the frame took.
pub fn split_frame(bytes: &[u8]) -> DecodeResult<Option<(&[u8], usize)>> {
    let Some(prefix) = bytes.get(..FRAME_PREFIX_BYTES) else {
        return Ok(None);
    };
    let len = u64::from_le_bytes(prefix.try_into().expect("8 bytes"));
    if len > MESSAGE_BYTES_MAX {
        return Err(DecodeError::TooLarge {
            what: "message",
            len,
            max: MESSAGE_BYTES_MAX,
        });
    }
    let end = FRAME_PREFIX_BYTES + len as usize;
    Ok(bytes
        .get(FRAME_PREFIX_BYTES..end)
        .map(|message| (message, end)))
}

/// Decodes every frame of a complete stream.
pub fn decode_frames(mut bytes: &[u8]) -> DecodeResult<Vec<Message>> {
    let mut messages = Vec::new();
    while !bytes.is_empty() {
        let Some((message, used)) = split_frame(bytes)? else {
            return Err(DecodeError::Truncated {
                needed: FRAME_PREFIX_BYTES as u64,
            });
        };
        messages.push(decode(message)?);
        bytes = &bytes[used..];
    }
    Ok(messages)
}

/// Reads one frame from a stream: `Ok(None)` at a clean end of input. The message buffer grows
/// with the bytes actually read, so a lying length prefix cannot allocate a gigabyte.
pub fn read_frame<R: Read>(reader: &mut R) -> std::io::Result<Option<Message>> {
    let invalid = |e: DecodeError| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let mut prefix = [0u8; FRAME_PREFIX_BYTES];
    let mut got = 0;
    while got < prefix.len() {
        match reader.read(&mut prefix[got..])? {
            0 if got == 0 => return Ok(None),
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => got += n,
        }
    }
    let len = u64::from_le_bytes(prefix);
    if len > MESSAGE_BYTES_MAX {
        return Err(invalid(DecodeError::TooLarge {
            what: "message",
            len,
            max: MESSAGE_BYTES_MAX,
        }));
    }
    let mut message = Vec::new();
    reader.take(len).read_to_end(&mut message)?;
    if message.len() as u64 != len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    decode(&message).map(Some).map_err(invalid)
}

macro_rules! decode_le {
    ($($ty:ty),*) => {$(
        impl Decode for $ty {
            const MIN_BYTES: usize = std::mem::size_of::<$ty>();
            #[inline]
            fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
                Ok(<$ty>::from_le_bytes(reader.array()?))
            }
        }
    )*};
}

decode_le!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);

impl Decode for bool {
    const MIN_BYTES: usize = 1;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        match u8::decode(reader)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError::Bool(other)),
        }
    }
}

impl Decode for String {
    const MIN_BYTES: usize = 8;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        let len = reader.len(1, "string")?;
        let bytes = reader.take(len)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| DecodeError::Utf8)
    }
}

impl<T: Decode> Decode for Box<T> {
    const MIN_BYTES: usize = T::MIN_BYTES;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        reader.nested::<T>().map(Box::new)
    }
}

impl Decode for InternalId {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(InternalId {
            table: u32::decode(reader)?,
            offset: u64::decode(reader)?,
        })
    }
}

impl Decode for Interval {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(bytemuck::pod_read_unaligned(reader.take(16)?))
    }
}

impl Decode for Decimal {
    const MIN_BYTES: usize = 18;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Decimal {
            value: i128::decode(reader)?,
            precision: u8::decode(reader)?,
            scale: u8::decode(reader)?,
        })
    }
}

impl Decode for Property {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Property {
            name: String::decode(reader)?,
            value: WireValue::decode(reader)?,
        })
    }
}

impl Decode for MapEntry {
    const MIN_BYTES: usize = 8;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(MapEntry {
            key: WireValue::decode(reader)?,
            value: WireValue::decode(reader)?,
        })
    }
}

impl Decode for UnionValue {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(UnionValue {
            tag: String::decode(reader)?,
            value: WireValue::decode(reader)?,
        })
    }
}

impl Decode for Node {
    const MIN_BYTES: usize = 28;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Node {
            id: InternalId::decode(reader)?,
            label: String::decode(reader)?,
            properties: reader.seq()?,
        })
    }
}

impl Decode for Rel {
    const MIN_BYTES: usize = 52;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Rel {
            src: InternalId::decode(reader)?,
            dst: InternalId::decode(reader)?,
            id: InternalId::decode(reader)?,
            label: String::decode(reader)?,
            properties: reader.seq()?,
        })
    }
}

impl Decode for Path {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Path {
            nodes: reader.seq()?,
            rels: reader.seq()?,
        })
    }
}

impl Decode for WireValue {
    const MIN_BYTES: usize = 4;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        reader.enter()?;
        let value = decode_value(reader);
        reader.leave();
        value
    }
}

fn decode_value(r: &mut Reader<'_>) -> DecodeResult<WireValue> {
    Ok(match r.tag()? {
        0 => WireValue::Null,
        1 => WireValue::Bool(bool::decode(r)?),
        2 => WireValue::Int8(i8::decode(r)?),
        3 => WireValue::Int16(i16::decode(r)?),
        4 => WireValue::Int32(i32::decode(r)?),
        5 => WireValue::Int64(i64::decode(r)?),
        6 => WireValue::Int128(i128::decode(r)?),
        7 => WireValue::UInt8(u8::decode(r)?),
        8 => WireValue::UInt16(u16::decode(r)?),
        9 => WireValue::UInt32(u32::decode(r)?),
        10 => WireValue::UInt64(u64::decode(r)?),
        11 => WireValue::Float(f32::decode(r)?),
        12 => WireValue::Double(f64::decode(r)?),
        13 => WireValue::Decimal(Decimal::decode(r)?),
        14 => WireValue::Date(i32::decode(r)?),
        15 => WireValue::Timestamp(i64::decode(r)?),
        16 => WireValue::TimestampNs(i64::decode(r)?),
        17 => WireValue::TimestampMs(i64::decode(r)?),
        18 => WireValue::TimestampSec(i64::decode(r)?),
        19 => WireValue::TimestampTz(i64::decode(r)?),
        20 => WireValue::Interval(Interval::decode(r)?),
        21 => WireValue::String(String::decode(r)?),
        22 => WireValue::Blob(r.bytes_vec()?),
        23 => WireValue::Uuid(u128::decode(r)?),
        24 => WireValue::List(r.seq()?),
        25 => WireValue::Struct(r.seq()?),
        26 => WireValue::Map(r.seq()?),
        27 => WireValue::Union(Box::new(UnionValue::decode(r)?)),
        28 => WireValue::InternalId(InternalId::decode(r)?),
        29 => WireValue::Node(Node::decode(r)?),
        30 => WireValue::Rel(Rel::decode(r)?),
        31 => WireValue::Path(Path::decode(r)?),
        tag => return Err(DecodeError::Tag { what: "value", tag }),
    })
}

impl Decode for StringColumn {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(StringColumn {
            offsets: reader.pod_vec()?,
            text: String::decode(reader)?,
        })
    }
}

impl Decode for BlobColumn {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(BlobColumn {
            offsets: reader.pod_vec()?,
            bytes: reader.bytes_vec()?,
        })
    }
}

impl Decode for ListColumn {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(ListColumn {
            offsets: reader.pod_vec()?,
            values: Box::decode(reader)?,
        })
    }
}

impl Decode for MapColumn {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(MapColumn {
            offsets: reader.pod_vec()?,
            keys: Box::decode(reader)?,
            values: Box::decode(reader)?,
        })
    }
}

impl Decode for NullableColumn {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(NullableColumn {
            valid: reader.bytes_vec()?,
            values: Box::decode(reader)?,
        })
    }
}

impl Decode for ColumnData {
    const MIN_BYTES: usize = 4;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        reader.enter()?;
        let data = decode_column(reader);
        reader.leave();
        data
    }
}

fn decode_column(r: &mut Reader<'_>) -> DecodeResult<ColumnData> {
    Ok(match r.tag()? {
        0 => {
            let rows = u64::decode(r)?;
            if rows > CHUNK_ROWS_MAX {
                return Err(DecodeError::TooLarge {
                    what: "NULL chunk rows",
                    len: rows,
                    max: CHUNK_ROWS_MAX,
                });
            }
            ColumnData::Null(rows)
        }
        1 => ColumnData::Bool(r.bool_vec()?),
        2 => ColumnData::Int8(r.pod_vec()?),
        3 => ColumnData::Int16(r.pod_vec()?),
        4 => ColumnData::Int32(r.pod_vec()?),
        5 => ColumnData::Int64(r.pod_vec()?),
        6 => ColumnData::Int128(r.pod_vec()?),
        7 => ColumnData::UInt8(r.bytes_vec()?),
        8 => ColumnData::UInt16(r.pod_vec()?),
        9 => ColumnData::UInt32(r.pod_vec()?),
        10 => ColumnData::UInt64(r.pod_vec()?),
        11 => ColumnData::UInt128(r.pod_vec()?),
        12 => ColumnData::Float(r.pod_vec()?),
        13 => ColumnData::Double(r.pod_vec()?),
        14 => ColumnData::Interval(r.pod_vec()?),
        15 => ColumnData::InternalId(r.seq()?),
        16 => ColumnData::String(StringColumn::decode(r)?),
        17 => ColumnData::Blob(BlobColumn::decode(r)?),
        18 => ColumnData::List(ListColumn::decode(r)?),
        19 => ColumnData::Struct(r.seq()?),
        20 => ColumnData::Map(MapColumn::decode(r)?),
        21 => ColumnData::Node(r.seq()?),
        22 => ColumnData::Rel(r.seq()?),
        23 => ColumnData::Path(r.seq()?),
        24 => ColumnData::Values(r.seq()?),
        25 => ColumnData::Nullable(NullableColumn::decode(r)?),
        tag => return Err(DecodeError::Tag { what: "chunk", tag }),
    })
}

impl Decode for WireType {
    const MIN_BYTES: usize = 4;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        reader.enter()?;
        let ty = decode_type(reader);
        reader.leave();
        ty
    }
}

fn decode_type(r: &mut Reader<'_>) -> DecodeResult<WireType> {
    Ok(match r.tag()? {
        0 => WireType::Any,
        1 => WireType::Bool,
        2 => WireType::Int8,
        3 => WireType::Int16,
        4 => WireType::Int32,
        5 => WireType::Int64,
        6 => WireType::Int128,
        7 => WireType::UInt8,
        8 => WireType::UInt16,
        9 => WireType::UInt32,
        10 => WireType::UInt64,
        11 => WireType::Float,
        12 => WireType::Double,
        13 => WireType::Decimal {
            precision: u8::decode(r)?,
            scale: u8::decode(r)?,
        },
        14 => WireType::Serial,
        15 => WireType::Date,
        16 => WireType::Timestamp,
        17 => WireType::TimestampNs,
        18 => WireType::TimestampMs,
        19 => WireType::TimestampSec,
        20 => WireType::TimestampTz,
        21 => WireType::Interval,
        22 => WireType::String,
        23 => WireType::Blob,
        24 => WireType::Uuid,
        25 => WireType::List(Box::decode(r)?),
        26 => WireType::Array(Box::decode(r)?, u32::decode(r)?),
        27 => WireType::Struct(r.seq()?),
        28 => WireType::Map(Box::decode(r)?, Box::decode(r)?),
        29 => WireType::Union(r.seq()?),
        30 => WireType::InternalId,
        31 => WireType::Node,
        32 => WireType::Rel,
        33 => WireType::RecursiveRel,
        tag => return Err(DecodeError::Tag { what: "type", tag }),
    })
}

impl Decode for Field {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Field {
            name: String::decode(reader)?,
            ty: WireType::decode(reader)?,
        })
    }
}

impl Decode for Column {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Column {
            name: String::decode(reader)?,
            ty: WireType::decode(reader)?,
        })
    }
}

impl Decode for Header {
    const MIN_BYTES: usize = 12;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        let version = u32::decode(reader)?;
        if version != VERSION {
            return Err(DecodeError::Version(version));
        }
        Ok(Header {
            version,
            columns: reader.seq()?,
        })
    }
}

impl Decode for Chunk {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        let chunk = Chunk {
            column: u32::decode(reader)?,
            first_row: u64::decode(reader)?,
            data: ColumnData::decode(reader)?,
        };
        chunk.data.validate()?;
        Ok(chunk)
    }
}

impl Decode for Trailer {
    const MIN_BYTES: usize = 24;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(Trailer {
            rows: u64::decode(reader)?,
            compile_time_us: u64::decode(reader)?,
            execution_time_us: u64::decode(reader)?,
        })
    }
}

impl Decode for ErrorMessage {
    const MIN_BYTES: usize = 16;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(ErrorMessage {
            kind: String::decode(reader)?,
            message: String::decode(reader)?,
        })
    }
}

impl Decode for Message {
    const MIN_BYTES: usize = 4;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(match reader.tag()? {
            0 => Message::Header(Header::decode(reader)?),
            1 => Message::Chunk(Chunk::decode(reader)?),
            2 => Message::End(Trailer::decode(reader)?),
            3 => Message::Error(ErrorMessage::decode(reader)?),
            4 => Message::Results(u64::decode(reader)?),
            tag => {
                return Err(DecodeError::Tag {
                    what: "message",
                    tag,
                })
            }
        })
    }
}

impl Decode for QueryRequest {
    const MIN_BYTES: usize = 25;
    fn decode(reader: &mut Reader<'_>) -> DecodeResult<Self> {
        Ok(QueryRequest {
            query: String::decode(reader)?,
            parameters: reader.seq()?,
            every_statement: bool::decode(reader)?,
            query_id: u64::decode(reader)?,
        })
    }
}

/// Offsets that start at 0, never decrease, and end at `end`.
fn check_offsets(offsets: &[u32], end: usize, what: &'static str) -> DecodeResult<()> {
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err(DecodeError::Invalid(what));
    };
    if first != 0 || last as usize != end || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(DecodeError::Invalid(what));
    }
    Ok(())
}

impl ColumnData {
    /// Checks that a chunk's parts agree: offsets within their buffers and on character
    /// boundaries, bitmaps as long as the rows, struct fields of equal length. The decoder
    /// calls it on every chunk; a client that decodes with serde may call it too.
    pub fn validate(&self) -> DecodeResult<()> {
        match self {
            ColumnData::String(c) => {
                check_offsets(&c.offsets, c.text.len(), "string offsets")?;
                if c.offsets
                    .iter()
                    .any(|&o| !c.text.is_char_boundary(o as usize))
                {
                    return Err(DecodeError::Invalid("string offset inside a character"));
                }
            }
            ColumnData::Blob(c) => check_offsets(&c.offsets, c.bytes.len(), "blob offsets")?,
            ColumnData::List(c) => {
                c.values.validate()?;
                check_offsets(&c.offsets, c.values.rows(), "list offsets")?;
            }
            ColumnData::Map(c) => {
                c.keys.validate()?;
                c.values.validate()?;
                if c.keys.rows() != c.values.rows() {
                    return Err(DecodeError::Invalid("map keys and values differ in length"));
                }
                check_offsets(&c.offsets, c.keys.rows(), "map offsets")?;
            }
            ColumnData::Struct(fields) => {
                let rows = self.rows();
                for field in fields {
                    field.validate()?;
                    if field.rows() != rows {
                        return Err(DecodeError::Invalid("struct fields differ in length"));
                    }
                }
            }
            ColumnData::Nullable(c) => {
                c.values.validate()?;
                if c.valid.len() != c.values.rows().div_ceil(8) {
                    return Err(DecodeError::Invalid("validity bitmap length"));
                }
            }
            _ => {}
        }
        if self.rows() as u64 > CHUNK_ROWS_MAX {
            return Err(DecodeError::TooLarge {
                what: "chunk rows",
                len: self.rows() as u64,
                max: CHUNK_ROWS_MAX,
            });
        }
        Ok(())
    }
}
