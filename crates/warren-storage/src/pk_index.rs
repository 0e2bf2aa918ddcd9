//! The primary-key index of a node table: an open-addressing hash table of row offsets. Keys
//! are not copied; a probe compares against the key column itself. The hash function is fixed
//! (it is persisted with the table), and the table is at most half full.

use warren_common::value::Value;

use crate::buffer::{Bitmap, Bytes};
use crate::column::Column;
use crate::section_check::ChecksumMismatch;

const EMPTY: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct PrimaryKeyIndex {
    /// Power-of-two many u32 row offsets; `EMPTY` marks a free slot.
    slots: Bytes,
}

/// The finalizer of SplitMix64: a fast, well-mixing permutation of u64.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut hash = 0x9e37_79b9_7f4a_7c15u64 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash ^ u64::from_le_bytes(word));
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix(hash ^ u64::from_le_bytes(tail))
}

#[inline]
pub fn hash_i64(key: i64) -> u64 {
    mix(key as u64)
}

/// Kùzu's message for a primary key that is already taken (COPY, CREATE).
pub fn duplicate_key_message(key: &Value) -> String {
    format!(
        "Found duplicated primary key value {}, which violates the uniqueness constraint of the primary key column.",
        warren_common::format::to_kuzu_string(key, &warren_common::value::NoGraph)
    )
}

/// The hash of a key value; `None` for NULL and types that cannot be keys.
pub fn key_hash(key: &Value) -> Option<u64> {
    if let Some(v) = key.as_i128() {
        return Some(if let Ok(small) = i64::try_from(v) {
            hash_i64(small)
        } else {
            mix(v as u64 ^ mix((v >> 64) as u64))
        });
    }
    Some(match key {
        Value::String(s) => hash_bytes(s.as_bytes()),
        Value::Blob(b) => hash_bytes(b),
        Value::Date(d) => hash_i64(i64::from(*d)),
        Value::Timestamp(t)
        | Value::TimestampNs(t)
        | Value::TimestampMs(t)
        | Value::TimestampSec(t)
        | Value::TimestampTz(t) => hash_i64(*t),
        Value::Uuid(u) => mix(*u as u64 ^ mix((*u >> 64) as u64)),
        Value::Float(_) | Value::Double(_) => {
            let v = key.as_f64()?;
            if v.fract() == 0.0 && v.abs() < 9.0e18 {
                hash_i64(v as i64)
            } else {
                mix(v.to_bits())
            }
        }
        _ => return None,
    })
}

impl PrimaryKeyIndex {
    /// Indexes every live row of `keys`. Returns the first duplicate as an error: (row, key).
    pub fn build(keys: &Column, deleted: Option<&Bitmap>) -> Result<Self, (usize, Value)> {
        let capacity = (keys.len() * 2).next_power_of_two().max(16);
        let mut slots = vec![EMPTY; capacity];
        let mask = capacity - 1;
        let int_keys = keys.int64_values();
        for row in 0..keys.len() {
            if deleted.is_some_and(|d| d.get(row)) || keys.is_null(row) {
                continue;
            }
            let hash = match int_keys {
                Some(ints) => hash_i64(ints[row]),
                None => key_hash(&keys.get(row)).ok_or_else(|| (row, keys.get(row)))?,
            } as usize;
            let mut slot = hash & mask;
            loop {
                let existing = slots[slot];
                if existing == EMPTY {
                    slots[slot] = row as u32;
                    break;
                }
                let same = match int_keys {
                    Some(ints) => ints[existing as usize] == ints[row],
                    None => keys.get(existing as usize) == keys.get(row),
                };
                if same {
                    return Err((row, keys.get(row)));
                }
                slot = (slot + 1) & mask;
            }
        }
        Ok(Self {
            slots: Bytes::from_slice(&slots),
        })
    }

    pub fn from_bytes(slots: Bytes) -> Result<Self, String> {
        let count = slots.len() / 4;
        if !slots.len().is_multiple_of(4) || !count.is_power_of_two() {
            return Err("primary-key index size is not a power of two".into());
        }
        Ok(Self { slots })
    }

    pub fn bytes(&self) -> &Bytes {
        &self.slots
    }

    fn num_slots(&self) -> usize {
        self.slots.len() / 4
    }

    /// The row offset in `slot`, its block verified.
    #[inline]
    fn slot(&self, slot: usize) -> Result<u32, ChecksumMismatch> {
        let bytes = self.slots.try_range(slot * 4..slot * 4 + 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    /// The row holding `key`, if any. `keys` must be the column the index was built over.
    /// Panics on a checksum mismatch (see [`PrimaryKeyIndex::try_lookup`]).
    pub fn lookup(&self, keys: &Column, key: &Value) -> Option<u32> {
        self.try_lookup(keys, key)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The row holding `key`, if any, verifying only the blocks of the slots and keys it
    /// reads (a lookup in a freshly opened database reads a few blocks, not the index).
    pub fn try_lookup(&self, keys: &Column, key: &Value) -> Result<Option<u32>, ChecksumMismatch> {
        let int_key = key
            .as_i64()
            .filter(|_| key.as_f64().is_some_and(|f| f.fract() == 0.0));
        let hash = match int_key {
            Some(k) if keys.is_int64() => hash_i64(k),
            _ => match key_hash(key) {
                Some(hash) => hash,
                None => return Ok(None),
            },
        };
        let mask = self.num_slots() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let row = self.slot(slot)?;
            if row == EMPTY {
                return Ok(None);
            }
            let same = match int_key {
                Some(k) if keys.is_int64() => keys.try_int64_at(row as usize)? == k,
                _ => keys.try_get(row as usize)? == *key,
            };
            if same {
                return Ok(Some(row));
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Fast path for INT64 keys over a verified key column (COPY).
    #[inline]
    pub fn lookup_i64(&self, keys: &[i64], key: i64) -> Option<u32> {
        let slots: &[u32] = self.slots.cast();
        let mask = slots.len() - 1;
        let mut slot = hash_i64(key) as usize & mask;
        loop {
            let row = slots[slot];
            if row == EMPTY {
                return None;
            }
            if keys[row as usize] == key {
                return Some(row);
            }
            slot = (slot + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_common::types::LogicalType;

    #[test]
    fn finds_keys_and_reports_duplicates() {
        let keys = Column::from_values(
            LogicalType::String,
            &[Value::string("a"), Value::string("b"), Value::string("c")],
        )
        .unwrap();
        let index = PrimaryKeyIndex::build(&keys, None).unwrap();
        assert_eq!(index.lookup(&keys, &Value::string("b")), Some(1));
        assert_eq!(index.lookup(&keys, &Value::string("z")), None);

        let dup =
            Column::from_values(LogicalType::Int64, &[Value::Int64(1), Value::Int64(1)]).unwrap();
        assert_eq!(PrimaryKeyIndex::build(&dup, None).unwrap_err().0, 1);
        let deleted = Bitmap::from_bits(&[true, false]);
        let index = PrimaryKeyIndex::build(&dup, Some(&deleted)).unwrap();
        assert_eq!(index.lookup(&dup, &Value::Int64(1)), Some(1));
    }

    #[test]
    fn int_keys_match_across_integer_types() {
        let keys =
            Column::from_values(LogicalType::Int64, &[Value::Int64(7), Value::Int64(9)]).unwrap();
        let index = PrimaryKeyIndex::build(&keys, None).unwrap();
        assert_eq!(index.lookup(&keys, &Value::Int32(9)), Some(1));
        assert_eq!(index.lookup(&keys, &Value::Int64(8)), None);
    }
}
