//! Byte compatibility: for random values of every chunk kind, message and value, Warren's
//! encoder writes exactly what `bincode` 1.3.3 (default options) and `wincode` write, and both
//! crates decode Warren's bytes back to the same values (compared by their encodings, so that
//! NaN payloads count as equal).

use proptest::prelude::*;

use crate::arbitrary;
use crate::decode::{decode, Decode};
use crate::encode::Encode;

fn check<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Encode
        + Decode
        + serde::Serialize
        + serde::de::DeserializeOwned
        + wincode::SchemaWrite<wincode::config::DefaultConfig, Src = T>
        + for<'de> wincode::SchemaRead<'de, wincode::config::DefaultConfig, Dst = T>,
{
    let ours = value.to_bytes();
    prop_assert_eq!(ours.len(), value.encoded_len());
    let bincode_bytes = bincode::serialize(value).expect("bincode serializes");
    prop_assert_eq!(
        &ours,
        &bincode_bytes,
        "Warren's bytes differ from bincode's"
    );
    let wincode_bytes = wincode::serialize(value).expect("wincode serializes");
    prop_assert_eq!(
        &ours,
        &wincode_bytes,
        "Warren's bytes differ from wincode's"
    );

    let by_bincode: T = bincode::deserialize(&ours).expect("bincode decodes Warren's bytes");
    prop_assert_eq!(by_bincode.to_bytes(), ours.clone());
    let by_wincode: T = wincode::deserialize(&ours).expect("wincode decodes Warren's bytes");
    prop_assert_eq!(by_wincode.to_bytes(), ours.clone());
    let by_warren: T = decode(&ours).expect("Warren decodes its bytes");
    prop_assert_eq!(by_warren.to_bytes(), ours);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunks_match_bincode_and_wincode(data in arbitrary::chunk()) {
        check(&data)?;
    }

    #[test]
    fn values_match_bincode_and_wincode(value in arbitrary::value()) {
        check(&value)?;
    }

    #[test]
    fn messages_match_bincode_and_wincode(message in arbitrary::message()) {
        check(&message)?;
    }

    #[test]
    fn requests_match_bincode_and_wincode(request in arbitrary::request()) {
        check(&request)?;
    }

    #[test]
    fn types_match_bincode_and_wincode(ty in arbitrary::wire_type()) {
        check(&ty)?;
    }
}

#[test]
fn a_fixed_width_chunk_is_its_length_then_its_bytes() {
    let data = crate::ColumnData::Int64(vec![1, -1]);
    let bytes = data.to_bytes();
    let mut expected = 5u32.to_le_bytes().to_vec();
    expected.extend(2u64.to_le_bytes());
    expected.extend(1i64.to_le_bytes());
    expected.extend((-1i64).to_le_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(bytes, bincode::serialize(&data).unwrap());
}

/// wincode's default configuration refuses sequences of more than 4 MiB, when writing and when
/// reading: a 16 MiB chunk neither encodes nor decodes with it (`docs/format/wire.md`). Warren
/// streams chunks of 2,048 rows, far below that limit.
#[test]
fn wincode_refuses_chunks_over_its_preallocation_limit() {
    let data = crate::sample::int64_chunk(16 << 20);
    let bytes = data.to_bytes();
    assert!(matches!(
        wincode::deserialize::<crate::ColumnData>(&bytes),
        Err(wincode::error::ReadError::PreallocationSizeLimit { .. })
    ));
    assert!(wincode::serialize(&data).is_err());
    let small = crate::sample::int64_chunk(4 << 20);
    assert_eq!(
        wincode::deserialize::<crate::ColumnData>(&small.to_bytes()).unwrap(),
        small
    );
}
