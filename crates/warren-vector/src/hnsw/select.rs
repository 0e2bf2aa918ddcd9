//! Which candidates become a node's neighbours: the heuristic of Malkov & Yashunin (drop a
//! candidate when it is strictly closer to a neighbour kept so far than to the node), which
//! keeps edges pointing in diverse directions so clustered data stays navigable. Ties keep the
//! candidate, so copies of one vector (distance 0 to each other) stay linked and reachable.

use super::search::Neighbour;

/// Picks at most `degree` of `candidates` (sorted nearest first, distances to the node) into
/// `out`, nearest first. `pair_distances(a, [b0, b1, b2, b3])` is the distances between a kept
/// candidate `a` and four others (a group of fewer repeats its last). Each candidate kept is
/// measured against the later candidates still standing, four at a time, and drops those it
/// hides: every candidate meets the kept ones nearer than itself in the order they were kept,
/// until one hides it, so this keeps what testing each candidate in turn against the kept ones
/// keeps, from the same distances in whole groups (and, when `degree` is reached, also those
/// of the candidates past the last one kept). `standing` is scratch space.
pub fn select_neighbours<P>(
    candidates: &[Neighbour],
    degree: usize,
    pair_distances: P,
    standing: &mut Vec<u32>,
    out: &mut Vec<Neighbour>,
) where
    P: Fn(u32, [u32; 4]) -> [f32; 4],
{
    debug_assert!(candidates.windows(2).all(|pair| pair[0] <= pair[1]));
    out.clear();
    if degree == 0 {
        return;
    }
    // The indices of the candidates not hidden yet, nearest first.
    standing.clear();
    standing.extend(0..candidates.len() as u32);
    let mut next = 0;
    while next < standing.len() {
        let kept = candidates[standing[next] as usize];
        out.push(kept);
        if out.len() == degree {
            break;
        }
        let mut still = next + 1;
        for start in (next + 1..standing.len()).step_by(4) {
            let group = start..(start + 4).min(standing.len());
            let last = group.end - 1;
            let others: [u32; 4] = std::array::from_fn(|lane| {
                candidates[standing[(start + lane).min(last)] as usize].row
            });
            let distances = pair_distances(kept.row, others);
            for (lane, index) in group.enumerate() {
                let candidate = standing[index];
                standing[still] = candidate;
                still += usize::from(distances[lane] >= candidates[candidate as usize].distance);
            }
        }
        standing.truncate(still);
        next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_candidates_hidden_behind_a_kept_one() {
        // Points on a line; the node is at 0. 1 and 2 lie in the same direction: 2 is closer to
        // 1 than to the node, so it is dropped; -3 lies the other way and is kept.
        let position = |row: u32| [1.0f32, 2.0, -3.0][row as usize];
        let candidates = [
            Neighbour {
                row: 0,
                distance: 1.0,
            },
            Neighbour {
                row: 1,
                distance: 2.0,
            },
            Neighbour {
                row: 2,
                distance: 3.0,
            },
        ];
        let mut out = Vec::new();
        let pair = |a: u32, b: [u32; 4]| b.map(|b| (position(a) - position(b)).abs());
        let mut standing = Vec::new();
        select_neighbours(&candidates, 8, pair, &mut standing, &mut out);
        let rows: Vec<u32> = out.iter().map(|kept| kept.row).collect();
        assert_eq!(rows, [0, 2]);
        select_neighbours(&candidates, 1, pair, &mut standing, &mut out);
        assert_eq!(out.len(), 1);
    }

    /// Testing each candidate in turn against the kept ones, the heuristic as written.
    fn select_one_by_one(
        candidates: &[Neighbour],
        degree: usize,
        pair: impl Fn(u32, u32) -> f32,
    ) -> (Vec<Neighbour>, usize) {
        let mut out: Vec<Neighbour> = Vec::new();
        let mut measured = 0;
        for &candidate in candidates {
            if out.len() == degree {
                break;
            }
            let diverse = out.iter().all(|kept| {
                measured += 1;
                pair(candidate.row, kept.row) >= candidate.distance
            });
            if diverse {
                out.push(candidate);
            }
        }
        (out, measured)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// On random points in the plane (with repeated points and ties), the grouped
        /// selection keeps the same candidates as testing each one in turn and, when the
        /// degree is not reached, measures the same pairs in whole groups (at most one
        /// part-filled group per kept candidate).
        #[test]
        fn grouped_selection_keeps_what_one_by_one_keeps(
            points in proptest::collection::vec((-8i32..8, -8i32..8), 1..80),
            node in (-8i32..8, -8i32..8),
            degree in 1usize..20,
        ) {
            let length = |a: (i32, i32), b: (i32, i32)| {
                (((a.0 - b.0).pow(2) + (a.1 - b.1).pow(2)) as f32).sqrt()
            };
            let mut candidates: Vec<Neighbour> = points
                .iter()
                .enumerate()
                .map(|(row, &point)| Neighbour { row: row as u32, distance: length(point, node) })
                .collect();
            candidates.sort_unstable();
            let pair = |a: u32, b: u32| length(points[a as usize], points[b as usize]);
            let (expected, measured) = select_one_by_one(&candidates, degree, pair);
            let groups = std::cell::Cell::new(0usize);
            let four = |a: u32, others: [u32; 4]| {
                groups.set(groups.get() + 1);
                others.map(|b| pair(a, b))
            };
            let (mut standing, mut out) = (Vec::new(), Vec::new());
            select_neighbours(&candidates, degree, four, &mut standing, &mut out);
            proptest::prop_assert_eq!(&out, &expected);
            proptest::prop_assert!(groups.get() * 4 >= measured);
            if out.len() < degree {
                proptest::prop_assert!(groups.get() <= measured / 4 + out.len());
            }
        }
    }
}
