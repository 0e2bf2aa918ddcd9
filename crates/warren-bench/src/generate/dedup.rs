//! Removal of self loops and repeated directed edges, keeping each edge's first occurrence.
//!
//! Hashing would make the cost depend on a hash function and its memory traffic; instead every
//! edge becomes a packed integer `key << position_bits | position` with `key = from * n + to`,
//! and one sort brings the occurrences of each key together with the earliest first. Edges are
//! then kept in their original order, so the result is exactly "the first occurrence of every
//! distinct pair, in input order". When key and position do not fit in 64 bits together, the
//! same is done with (key, position) pairs.

/// Drops self loops and every repeat of a (from, to) pair, keeping the first occurrence and the
/// input order. `node_count` bounds every endpoint.
pub fn dedup_keep_first(edges: &mut Vec<(u32, u32)>, node_count: u64) {
    edges.retain(|&(from, to)| from != to);
    if edges.len() < 2 {
        return;
    }
    let keep = first_occurrences(edges, node_count);
    let mut position = 0;
    edges.retain(|_| {
        let kept = keep[position];
        position += 1;
        kept
    });
}

/// For each position in `edges`, whether it is the first occurrence of its pair.
fn first_occurrences(edges: &[(u32, u32)], node_count: u64) -> Vec<bool> {
    let key_bits = bits_needed(node_count.saturating_mul(node_count).saturating_sub(1));
    let position_bits = bits_needed(edges.len() as u64 - 1);
    if key_bits + position_bits <= 64 {
        first_occurrences_packed(edges, node_count, position_bits)
    } else {
        first_occurrences_wide(edges, node_count)
    }
}

fn first_occurrences_packed(
    edges: &[(u32, u32)],
    node_count: u64,
    position_bits: u32,
) -> Vec<bool> {
    let mut packed: Vec<u64> = edges
        .iter()
        .enumerate()
        .map(|(position, &edge)| pair_key(edge, node_count) << position_bits | position as u64)
        .collect();
    packed.sort_unstable();
    let position_mask = (1u64 << position_bits) - 1;
    let mut keep = vec![false; edges.len()];
    let mut previous_key = None;
    for value in packed {
        let key = value >> position_bits;
        if previous_key != Some(key) {
            keep[(value & position_mask) as usize] = true;
            previous_key = Some(key);
        }
    }
    keep
}

fn first_occurrences_wide(edges: &[(u32, u32)], node_count: u64) -> Vec<bool> {
    let mut pairs: Vec<(u64, usize)> = edges
        .iter()
        .enumerate()
        .map(|(position, &edge)| (pair_key(edge, node_count), position))
        .collect();
    pairs.sort_unstable();
    let mut keep = vec![false; edges.len()];
    let mut previous_key = None;
    for (key, position) in pairs {
        if previous_key != Some(key) {
            keep[position] = true;
            previous_key = Some(key);
        }
    }
    keep
}

/// A dense key for a pair: `from * node_count + to`, below `node_count^2`.
#[inline]
fn pair_key((from, to): (u32, u32), node_count: u64) -> u64 {
    debug_assert!(u64::from(from) < node_count && u64::from(to) < node_count);
    u64::from(from) * node_count + u64::from(to)
}

/// The number of bits needed to write `value` (0 for 0).
fn bits_needed(value: u64) -> u32 {
    u64::BITS - value.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_first_occurrence_in_input_order() {
        let mut edges = vec![(3, 1), (1, 1), (0, 2), (3, 1), (2, 0), (0, 2), (1, 3)];
        dedup_keep_first(&mut edges, 4);
        assert_eq!(edges, vec![(3, 1), (0, 2), (2, 0), (1, 3)]);
    }

    #[test]
    fn packed_and_wide_paths_agree() {
        let edges: Vec<(u32, u32)> = (0..5000u32)
            .map(|i| ((i * 7) % 13, (i * 11) % 17))
            .collect();
        let packed = first_occurrences_packed(&edges, 17, bits_needed(edges.len() as u64));
        let wide = first_occurrences_wide(&edges, 17);
        assert_eq!(packed, wide);
        assert_eq!(packed.iter().filter(|&&kept| kept).count(), 13 * 17);
    }

    #[test]
    fn huge_node_counts_use_the_wide_path() {
        let mut edges = vec![(u32::MAX, 0), (5, u32::MAX), (u32::MAX, 0)];
        dedup_keep_first(&mut edges, 1 << 32);
        assert_eq!(edges, vec![(u32::MAX, 0), (5, u32::MAX)]);
    }

    #[test]
    fn bits_needed_counts_significant_bits() {
        assert_eq!(bits_needed(0), 0);
        assert_eq!(bits_needed(1), 1);
        assert_eq!(bits_needed(255), 8);
        assert_eq!(bits_needed(u64::MAX), 64);
    }
}
