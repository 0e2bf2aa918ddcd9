//! The `warren` process's malloc policy: on glibc, memory a query frees is kept for the next
//! query instead of going back to the kernel, up to stated bounds.
//!
//! glibc's defaults serve a query badly: a block of 128 KiB or more is mapped on its own and
//! unmapped when freed (the threshold then rises only to the largest block freed so far), and
//! free memory over 128 KiB at the top of a heap is given back. A query allocates its result
//! columns, frontier lists and rows afresh, so each one page-faulted and zeroed the same few MB
//! again: the spread workload at Graph500 scale 18 took about 770 page faults per query
//! (docs/OPTIMIZATION_LOG.md, entry 184).
//!
//! The bounds: blocks of [`MMAP_THRESHOLD_BYTES`] and more are still mapped and unmapped per
//! use, and at most [`TRIM_THRESHOLD_BYTES`] of free memory is kept at the top of each heap.
//! A user's own `MALLOC_MMAP_THRESHOLD_` or `MALLOC_TRIM_THRESHOLD_` in the environment wins
//! (the policy is then left alone). The library never sets it: an embedding program (Python)
//! keeps its own allocator's policy.

/// Blocks at least this large are mapped per allocation and returned to the kernel when freed.
pub const MMAP_THRESHOLD_BYTES: usize = 32 << 20;
/// Free memory at the top of a heap beyond this is returned to the kernel.
pub const TRIM_THRESHOLD_BYTES: usize = 64 << 20;

// glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2 (32 MiB on 64-bit targets).
const _: () = assert!(MMAP_THRESHOLD_BYTES <= 32 << 20);
const _: () = assert!(TRIM_THRESHOLD_BYTES >= MMAP_THRESHOLD_BYTES);

/// Environment variables through which a user sets glibc's thresholds.
const USER_SETTINGS: [&str; 2] = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"];

/// Sets the process's malloc thresholds (see the module doc), unless the environment sets
/// one. Call once, first thing in `main`, before other threads start.
pub fn apply() {
    if !user_sets_thresholds(|name| std::env::var_os(name).is_some()) {
        // Where glibc refuses (or is absent), its defaults stay: nothing else depends on it.
        set_thresholds();
    }
}

/// Whether the environment (`is_set` answers per variable) sets one of glibc's thresholds.
fn user_sets_thresholds(is_set: impl Fn(&str) -> bool) -> bool {
    USER_SETTINGS.iter().any(|name| is_set(name))
}

/// Sets both thresholds; false where glibc refused one, or on a target without glibc.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> bool {
    let as_int = |bytes: usize| i32::try_from(bytes).expect("thresholds fit an int");
    // SAFETY: mallopt only changes glibc's parameters; it is called before other threads run.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, as_int(MMAP_THRESHOLD_BYTES)) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, as_int(TRIM_THRESHOLD_BYTES)) == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_in_the_environment_leaves_the_policy_alone() {
        assert!(!user_sets_thresholds(|_| false));
        for name in USER_SETTINGS {
            assert!(user_sets_thresholds(|n| n == name), "{name}");
        }
        assert!(!user_sets_thresholds(|n| n == "MALLOC_ARENA_MAX"));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_accepts_the_thresholds() {
        assert!(set_thresholds());
    }
}
