//! A result stream that uses every chunk kind, for the integration tests.

use warren_wire::*;

fn id(table: u32, offset: u64) -> InternalId {
    InternalId { table, offset }
}

fn node(offset: u64) -> Node {
    Node {
        id: id(0, offset),
        label: "Person".into(),
        properties: vec![Property {
            name: "ID".into(),
            value: WireValue::Int64(offset as i64),
        }],
    }
}

fn rel(offset: u64) -> Rel {
    Rel {
        src: id(0, offset),
        dst: id(0, offset + 1),
        id: id(1, offset),
        label: "Knows".into(),
        properties: Vec::new(),
    }
}

/// One chunk of every kind, three rows each (where the kind has rows).
pub fn chunks() -> Vec<ColumnData> {
    let strings = StringColumn::from_strs(["a", "", "ñandú"]);
    let mut blobs = BlobColumn::default();
    for bytes in [&b"\x00\x01"[..], b"", b"xyz"] {
        blobs.push(bytes);
    }
    vec![
        ColumnData::Null(3),
        ColumnData::Bool(vec![true, false, true]),
        ColumnData::Int8(vec![-1, 0, 1]),
        ColumnData::Int16(vec![-300, 0, 300]),
        ColumnData::Int32(vec![19_000, -1, 0]),
        ColumnData::Int64(vec![i64::MIN, 0, i64::MAX]),
        ColumnData::Int128(vec![-1, 0, i128::MAX]),
        ColumnData::UInt8(vec![0, 1, 255]),
        ColumnData::UInt16(vec![0, 1, 65_535]),
        ColumnData::UInt32(vec![0, 1, u32::MAX]),
        ColumnData::UInt64(vec![0, 1, u64::MAX]),
        ColumnData::UInt128(vec![0, 1, u128::MAX]),
        ColumnData::Float(vec![0.5, -1.0, f32::INFINITY]),
        ColumnData::Double(vec![0.25, -2.0, 1e300]),
        ColumnData::Interval(vec![
            Interval {
                months: 1,
                days: 2,
                micros: 3,
            };
            3
        ]),
        ColumnData::InternalId(vec![id(0, 0), id(1, 7), id(2, 9)]),
        ColumnData::String(strings.clone()),
        ColumnData::Blob(blobs),
        ColumnData::List(ListColumn {
            offsets: vec![0, 2, 2, 3],
            values: Box::new(ColumnData::Int64(vec![1, 2, 3])),
        }),
        ColumnData::Struct(vec![
            ColumnData::Int32(vec![1, 2, 3]),
            ColumnData::String(strings.clone()),
        ]),
        ColumnData::Map(MapColumn {
            offsets: vec![0, 1, 1, 3],
            keys: Box::new(ColumnData::String(strings)),
            values: Box::new(ColumnData::Double(vec![1.0, 2.0, 3.0])),
        }),
        ColumnData::Node(vec![node(0), node(1), node(2)]),
        ColumnData::Rel(vec![rel(0), rel(1), rel(2)]),
        ColumnData::Path(vec![
            Path {
                nodes: vec![node(0), node(1)],
                rels: vec![rel(0)],
            },
            Path {
                nodes: Vec::new(),
                rels: Vec::new(),
            },
            Path {
                nodes: vec![node(5)],
                rels: Vec::new(),
            },
        ]),
        ColumnData::Values(vec![
            WireValue::Null,
            WireValue::List(vec![WireValue::String("x".into()), WireValue::Date(3)]),
            WireValue::Union(Box::new(UnionValue {
                tag: "a".into(),
                value: WireValue::Map(vec![MapEntry {
                    key: WireValue::Int8(1),
                    value: WireValue::Uuid(7),
                }]),
            })),
        ]),
        ColumnData::Nullable(NullableColumn {
            valid: vec![0b101],
            values: Box::new(ColumnData::Int64(vec![1, 0, 3])),
        }),
    ]
}

/// A header, one chunk per kind, and the end.
pub fn messages() -> Vec<Message> {
    let chunks = chunks();
    let columns = (0..chunks.len())
        .map(|i| Column {
            name: format!("c{i}"),
            ty: WireType::List(Box::new(WireType::Struct(vec![Field {
                name: "f".into(),
                ty: WireType::Int64,
            }]))),
        })
        .collect();
    let mut messages = vec![Message::Header(Header {
        version: VERSION,
        columns,
    })];
    for (column, data) in chunks.into_iter().enumerate() {
        messages.push(Message::Chunk(Chunk {
            column: column as u32,
            first_row: 0,
            data,
        }));
    }
    messages.push(Message::End(Trailer {
        rows: 3,
        compile_time_us: 10,
        execution_time_us: 20,
    }));
    messages
}

/// The messages as one framed stream.
pub fn stream() -> Vec<u8> {
    let mut bytes = Vec::new();
    for message in messages() {
        encode_frame(&mut bytes, &message);
    }
    bytes
}
