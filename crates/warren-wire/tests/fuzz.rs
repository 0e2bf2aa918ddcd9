//! The decoder never panics and never allocates without bound, whatever the input: random
//! bytes, and valid frames with bytes flipped, truncated, or lengths overwritten.

mod common;

use proptest::prelude::*;
use warren_wire::{decode, decode_frames, split_frame, Message};

/// Decoding must return (Ok or Err); a panic fails the test.
fn survive(bytes: &[u8]) {
    let _ = decode::<Message>(bytes);
    let _ = decode_frames(bytes);
    let _ = split_frame(bytes);
    let _ = warren_wire::read_frame(&mut &bytes[..]);
}

fn message_bytes() -> Vec<Vec<u8>> {
    common::messages()
        .iter()
        .map(warren_wire::Encode::to_bytes)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        survive(&bytes);
    }

    #[test]
    fn random_bytes_after_a_valid_tag_never_panic(
        tag in 0u32..4,
        data_tag in 0u32..27,
        bytes in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut input = tag.to_le_bytes().to_vec();
        if tag == 1 {
            input.extend([0u8; 12]);
            input.extend(data_tag.to_le_bytes());
        }
        input.extend(bytes);
        survive(&input);
    }

    #[test]
    fn mutated_messages_never_panic(
        which in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let all = message_bytes();
        let mut bytes = all[which.index(all.len())].clone();
        for (at, value) in &flips {
            let i = at.index(bytes.len());
            bytes[i] = *value;
        }
        survive(&bytes);
        survive(&bytes[..cut.index(bytes.len() + 1)]);
    }

    #[test]
    fn huge_lengths_never_allocate(
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        len in prop_oneof![Just(u64::MAX), Just(u64::MAX / 2), Just(1u64 << 40), any::<u64>()],
    ) {
        let all = message_bytes();
        let mut bytes = all[which.index(all.len())].clone();
        if bytes.len() >= 8 {
            let i = at.index(bytes.len() - 7);
            bytes[i..i + 8].copy_from_slice(&len.to_le_bytes());
        }
        survive(&bytes);
    }

    #[test]
    fn mutated_streams_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut bytes = common::stream();
        for (at, value) in &flips {
            let i = at.index(bytes.len());
            bytes[i] = *value;
        }
        survive(&bytes);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // A LIST chunk whose values are a LIST chunk whose values are ..., 100,000 deep.
    let mut bytes = Vec::new();
    for _ in 0..100_000 {
        bytes.extend(18u32.to_le_bytes());
        bytes.extend(1u64.to_le_bytes());
        bytes.extend(0u32.to_le_bytes());
    }
    let error = decode::<warren_wire::ColumnData>(&bytes).unwrap_err();
    assert_eq!(error, warren_wire::DecodeError::TooDeep);
}

#[test]
fn a_lying_frame_length_is_refused_before_reading() {
    let mut bytes = (1u64 << 40).to_le_bytes().to_vec();
    bytes.extend([0u8; 16]);
    assert!(split_frame(&bytes).is_err());
    assert!(warren_wire::read_frame(&mut &bytes[..]).is_err());
}
