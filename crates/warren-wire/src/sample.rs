//! Deterministic data for the wire benchmark (`warren bench wire`) and its bincode peer
//! (`bench/peers/wire-bincode`), which must encode exactly the same values: chunks of a given
//! payload size, and a mixed result of N rows x 8 columns both as columnar frames and as a
//! row-per-`Vec<value>` serde frame (what a serializer of row values would send).

use serde::{Deserialize, Serialize};

use crate::column::{ColumnData, ListColumn, NullableColumn, StringColumn};
use crate::message::{Chunk, Header, Message, Trailer, VERSION};
use crate::types::{Column, WireType};
use crate::value::WireValue;

/// The row-oriented alternative: every value tagged, every row its own vector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    any(test, feature = "wincode"),
    derive(wincode::SchemaWrite, wincode::SchemaRead)
)]
pub struct RowFrame {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<WireValue>>,
}

/// A small deterministic generator (64-bit LCG, high bits).
#[derive(Debug)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 16
    }
}

/// An INT64 chunk of `bytes / 8` values.
pub fn int64_chunk(bytes: usize) -> ColumnData {
    let mut rng = Lcg::new(1);
    ColumnData::Int64((0..bytes / 8).map(|_| rng.next_u64() as i64).collect())
}

/// A DOUBLE chunk of `bytes / 8` values.
pub fn double_chunk(bytes: usize) -> ColumnData {
    let mut rng = Lcg::new(2);
    ColumnData::Double(
        (0..bytes / 8)
            .map(|_| rng.next_u64() as f64 / 1024.0)
            .collect(),
    )
}

fn word(rng: &mut Lcg, out: &mut String) {
    let len = 4 + (rng.next_u64() % 25) as usize;
    for _ in 0..len {
        out.push(char::from(b'a' + (rng.next_u64() % 26) as u8));
    }
}

/// A STRING chunk of about `bytes` payload bytes (offsets and text), strings of 4 to 28 bytes.
pub fn string_chunk(bytes: usize) -> ColumnData {
    let mut rng = Lcg::new(3);
    let mut column = StringColumn::default();
    let mut text = String::new();
    while column.text.len() + column.offsets.len() * 4 < bytes {
        text.clear();
        word(&mut rng, &mut text);
        column.push(&text);
    }
    ColumnData::String(column)
}

/// The mixed result's columns: int64, double, string, bool, date, nullable int64, list of
/// int64, int32.
pub fn mixed_header() -> Header {
    let column = |name: &str, ty: WireType| Column {
        name: name.into(),
        ty,
    };
    Header {
        version: VERSION,
        columns: vec![
            column("id", WireType::Int64),
            column("score", WireType::Double),
            column("name", WireType::String),
            column("active", WireType::Bool),
            column("born", WireType::Date),
            column("manager", WireType::Int64),
            column("friends", WireType::List(Box::new(WireType::Int64))),
            column("age", WireType::Int32),
        ],
    }
}

/// The mixed result's rows, row-wise (`manager` is NULL in every fifth row).
pub fn mixed_rows(rows: usize) -> RowFrame {
    let mut rng = Lcg::new(4);
    let mut name = String::new();
    let rows = (0..rows)
        .map(|i| {
            name.clear();
            word(&mut rng, &mut name);
            let friends = (0..rng.next_u64() % 5)
                .map(|_| WireValue::Int64((rng.next_u64() % 1_000_000) as i64))
                .collect();
            vec![
                WireValue::Int64(i as i64),
                WireValue::Double(rng.next_u64() as f64 / 65_536.0),
                WireValue::String(name.clone()),
                WireValue::Bool(rng.next_u64() & 1 == 0),
                WireValue::Date((rng.next_u64() % 20_000) as i32),
                if i % 5 == 0 {
                    WireValue::Null
                } else {
                    WireValue::Int64((rng.next_u64() % 100_000) as i64)
                },
                WireValue::List(friends),
                WireValue::Int32((rng.next_u64() % 100) as i32),
            ]
        })
        .collect();
    RowFrame {
        columns: mixed_header().columns,
        rows,
    }
}

fn int64(value: &WireValue) -> i64 {
    match value {
        WireValue::Int64(v) => *v,
        _ => 0,
    }
}

/// Rows `range` of the mixed result as one chunk per column.
fn mixed_chunks(rows: &[Vec<WireValue>]) -> Vec<ColumnData> {
    let pick = |column: usize| rows.iter().map(move |row| &row[column]);
    let mut names = StringColumn::default();
    pick(2).for_each(|v| names.push(if let WireValue::String(s) = v { s } else { "" }));
    let mut valid = vec![0u8; rows.len().div_ceil(8)];
    for (i, value) in pick(5).enumerate() {
        if !matches!(value, WireValue::Null) {
            valid[i / 8] |= 1 << (i % 8);
        }
    }
    let mut offsets = vec![0u32];
    let mut friends = Vec::new();
    for value in pick(6) {
        if let WireValue::List(items) = value {
            friends.extend(items.iter().map(int64));
        }
        offsets.push(friends.len() as u32);
    }
    vec![
        ColumnData::Int64(pick(0).map(int64).collect()),
        ColumnData::Double(
            pick(1)
                .map(|v| {
                    if let WireValue::Double(d) = v {
                        *d
                    } else {
                        0.0
                    }
                })
                .collect(),
        ),
        ColumnData::String(names),
        ColumnData::Bool(
            pick(3)
                .map(|v| matches!(v, WireValue::Bool(true)))
                .collect(),
        ),
        ColumnData::Int32(
            pick(4)
                .map(|v| if let WireValue::Date(d) = v { *d } else { 0 })
                .collect(),
        ),
        ColumnData::Nullable(NullableColumn {
            valid,
            values: Box::new(ColumnData::Int64(pick(5).map(int64).collect())),
        }),
        ColumnData::List(ListColumn {
            offsets,
            values: Box::new(ColumnData::Int64(friends)),
        }),
        ColumnData::Int32(
            pick(7)
                .map(|v| if let WireValue::Int32(d) = v { *d } else { 0 })
                .collect(),
        ),
    ]
}

/// The mixed result as a columnar stream: header, chunks of `chunk_rows` rows per column, end.
pub fn mixed_messages(frame: &RowFrame, chunk_rows: usize) -> Vec<Message> {
    let mut messages = vec![Message::Header(mixed_header())];
    for (batch, rows) in frame.rows.chunks(chunk_rows.max(1)).enumerate() {
        for (column, data) in mixed_chunks(rows).into_iter().enumerate() {
            messages.push(Message::Chunk(Chunk {
                column: column as u32,
                first_row: (batch * chunk_rows) as u64,
                data,
            }));
        }
    }
    messages.push(Message::End(Trailer {
        rows: frame.rows.len() as u64,
        compile_time_us: 0,
        execution_time_us: 0,
    }));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_chunks_hold_every_row() {
        let frame = mixed_rows(1000);
        let messages = mixed_messages(&frame, 300);
        assert_eq!(messages.len(), 1 + 4 * 8 + 1);
        for message in &messages {
            if let Message::Chunk(chunk) = message {
                chunk.data.validate().unwrap();
                let expected = (1000 - chunk.first_row as usize).min(300);
                assert_eq!(chunk.data.rows(), expected);
            }
        }
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(int64_chunk(4096).rows(), 512);
        let ColumnData::String(strings) = string_chunk(4096) else {
            unreachable!()
        };
        assert!(strings.text.len() + strings.offsets.len() * 4 >= 4096);
    }
}
