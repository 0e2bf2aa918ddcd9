//! Software prefetch: a hint that a cache line will be read soon. The neighbour loops use it
//! in two stages, `prefetch_distance` entries ahead (see `docs/OPTIMIZATION_LOG.md` for where
//! it pays and where it does not). A no-op on targets without a prefetch instruction.

use warren_storage::adjacency::AdjacencyView;

/// Hints the processor to bring the cache line holding `value` into the cache.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let address = (value as *const T).cast::<i8>();
        // SAFETY: prefetching is a hint with no architectural effect; any address is allowed,
        // and this one comes from a reference. SSE is part of the x86_64 baseline.
        #[allow(unused_unsafe)]
        unsafe {
            core::arch::x86_64::_mm_prefetch(address, core::arch::x86_64::_MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = value;
    }
}

/// Two-stage prefetch for position `i` of a frontier walked over an adjacency: the offsets of
/// the node `2 * distance` ahead, then the first neighbours of the node `distance` ahead, whose
/// offsets the first stage fetched one distance ago. Positions past the frontier's end are
/// skipped.
#[inline]
pub fn prefetch_adjacency(
    adjacency: &AdjacencyView<'_>,
    frontier: &[u32],
    i: usize,
    distance: usize,
) {
    if let Some(&far) = frontier.get(i + 2 * distance) {
        if let Some(offset) = adjacency.offset_address(far) {
            prefetch(offset);
        }
    }
    if let Some(&near) = frontier.get(i + distance) {
        if let Some(first) = adjacency.first_neighbour(near) {
            prefetch(first);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefetch_accepts_any_reference() {
        let values = [1u64, 2, 3];
        for value in &values {
            super::prefetch(value);
        }
        super::prefetch(&values);
    }

    #[test]
    fn adjacency_prefetch_stays_in_bounds() {
        // Node 1 has no neighbours and is last: its offset equals the neighbours' length.
        let offsets = [0u64, 2, 2];
        let neighbours = [1u32, 0];
        let edges = [0u32, 1];
        let adjacency = super::AdjacencyView::csr(&offsets, &neighbours, &edges);
        let frontier = [0u32, 1, 1, 0];
        for distance in 0..6 {
            for i in 0..frontier.len() {
                super::prefetch_adjacency(&adjacency, &frontier, i, distance);
            }
        }
    }
}
