//! Which candidates become a node's neighbours: the heuristic of Malkov & Yashunin (drop a
//! candidate when it is strictly closer to a neighbour kept so far than to the node), which
//! keeps edges pointing in diverse directions so clustered data stays navigable. Ties keep the
//! candidate, so copies of one vector (distance 0 to each other) stay linked and reachable.

use super::search::Neighbour;

/// Picks at most `degree` of `candidates` (sorted nearest first, distances to the node) into
/// `out`, nearest first. `pair_distance(a, b)` is the distance between two candidates.
pub fn select_neighbours<P>(
    candidates: &[Neighbour],
    degree: usize,
    pair_distance: P,
    out: &mut Vec<Neighbour>,
) where
    P: Fn(u32, u32) -> f32,
{
    debug_assert!(candidates.windows(2).all(|pair| pair[0] <= pair[1]));
    out.clear();
    for &candidate in candidates {
        if out.len() == degree {
            break;
        }
        let diverse = out
            .iter()
            .all(|kept| pair_distance(candidate.row, kept.row) >= candidate.distance);
        if diverse {
            out.push(candidate);
        }
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
        let pair = |a: u32, b: u32| (position(a) - position(b)).abs();
        select_neighbours(&candidates, 8, pair, &mut out);
        let rows: Vec<u32> = out.iter().map(|kept| kept.row).collect();
        assert_eq!(rows, [0, 2]);
        select_neighbours(&candidates, 1, pair, &mut out);
        assert_eq!(out.len(), 1);
    }
}
