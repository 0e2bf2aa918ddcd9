//! Degree statistics of generated edge lists, for tests, reports and sanity checks.

/// The out-degree of every node `0..node_count`.
pub fn out_degrees(edges: &[(u32, u32)], node_count: u64) -> Vec<u32> {
    let mut degrees = vec![0u32; node_count as usize];
    for &(from, _) in edges {
        degrees[from as usize] += 1;
    }
    degrees
}

/// The in-degree of every node `0..node_count`.
pub fn in_degrees(edges: &[(u32, u32)], node_count: u64) -> Vec<u32> {
    let mut degrees = vec![0u32; node_count as usize];
    for &(_, to) in edges {
        degrees[to as usize] += 1;
    }
    degrees
}

/// Asserts that `edges` form a simple directed graph over `0..node_count`: endpoints in range,
/// no self loops, no repeated (from, to) pair.
#[cfg(test)]
pub fn assert_simple(edges: &[(u32, u32)], node_count: u64) {
    assert!(edges
        .iter()
        .all(|&(from, to)| u64::from(from) < node_count && u64::from(to) < node_count));
    assert!(edges.iter().all(|&(from, to)| from != to), "self loop");
    let mut sorted = edges.to_vec();
    sorted.sort_unstable();
    assert!(
        sorted.windows(2).all(|pair| pair[0] != pair[1]),
        "duplicate edge"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_count_endpoints() {
        let edges = [(0, 1), (0, 2), (2, 1)];
        assert_eq!(out_degrees(&edges, 3), vec![2, 0, 1]);
        assert_eq!(in_degrees(&edges, 3), vec![0, 2, 1]);
        assert_simple(&edges, 3);
    }
}
