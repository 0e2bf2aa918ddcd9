//! The streaming frame layout: frames written to a `Vec` and to an `io::Write` are the same
//! bytes, each is a u64 length then the bincode message, and every reader gets the messages
//! back.

mod common;

use warren_wire::{decode_frames, read_frame, split_frame, write_frame, Encode, Message};

#[test]
fn vec_and_writer_frames_are_identical() {
    let mut written = Vec::new();
    for message in common::messages() {
        write_frame(&mut written, &message).unwrap();
    }
    assert_eq!(written, common::stream());
}

#[test]
fn a_frame_is_a_length_then_the_message() {
    let bytes = common::stream();
    let (first, used) = split_frame(&bytes).unwrap().unwrap();
    let header = &common::messages()[0];
    assert_eq!(first, header.to_bytes());
    assert_eq!(used, 8 + first.len());
    assert_eq!(&bytes[..8], (first.len() as u64).to_le_bytes());
    assert_eq!(split_frame(&bytes[..used - 1]).unwrap(), None);
}

#[test]
fn every_reader_returns_the_messages() {
    let bytes = common::stream();
    let expected = common::messages();
    assert_eq!(decode_frames(&bytes).unwrap(), expected);
    let mut reader = &bytes[..];
    let mut read = Vec::new();
    while let Some(message) = read_frame(&mut reader).unwrap() {
        read.push(message);
    }
    assert_eq!(read, expected);
}

#[test]
fn every_sample_chunk_validates_and_counts_three_rows() {
    for data in common::chunks() {
        data.validate().unwrap();
        assert_eq!(data.rows(), 3, "{data:?}");
    }
}

#[test]
fn invalid_chunks_are_refused() {
    let bad = warren_wire::ColumnData::String(warren_wire::StringColumn {
        offsets: vec![0, 2],
        text: "é".into(),
    });
    assert!(bad.validate().is_ok());
    let inside = warren_wire::ColumnData::String(warren_wire::StringColumn {
        offsets: vec![0, 1, 2],
        text: "é".into(),
    });
    assert!(inside.validate().is_err());
    let message = Message::Chunk(warren_wire::Chunk {
        column: 0,
        first_row: 0,
        data: inside,
    });
    assert!(warren_wire::decode::<Message>(&message.to_bytes()).is_err());
}
