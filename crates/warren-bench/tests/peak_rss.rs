//! The peak-resident-memory reset, alone in its test process: tests running in parallel in
//! the same process would allocate beside it and move the process-wide peak.

use warren_bench::machine::{peak_rss_bytes, reset_peak_rss};

#[test]
fn a_reset_peak_forgets_a_big_allocation_freed_before_it() {
    if !reset_peak_rss() {
        eprintln!("the kernel does not allow resetting the peak; nothing to check");
        return;
    }
    let big = vec![1u8; 64 << 20];
    let with_big = peak_rss_bytes();
    assert!(with_big >= 64 << 20);
    drop(std::hint::black_box(big));
    // The kernel's resident-size counters are per-CPU and folded in lazily, so a reset right
    // after the free may still see part of it: allow a few attempts, a second in all.
    let mut after = u64::MAX;
    for _ in 0..20 {
        assert!(reset_peak_rss());
        after = peak_rss_bytes();
        if after < with_big {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        after < with_big,
        "peak {after} after the reset, {with_big} with the allocation"
    );
}
