//! Software prefetch: a hint that a cache line will be read soon. The neighbour loops use it
//! in two stages, `prefetch_distance` entries ahead (see `docs/OPTIMIZATION_LOG.md` for where
//! it pays and where it does not). A no-op on targets without a prefetch instruction.

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
}
