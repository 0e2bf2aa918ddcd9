//! The peak-resident-memory reset, alone in its test process: tests running in parallel in
//! the same process would allocate beside it and move the process-wide peak.

use warren_bench::machine::{peak_rss_bytes, reset_peak_rss};

#[test]
fn a_reset_peak_forgets_a_big_allocation_freed_before_it() {
    if !reset_peak_rss() {
        eprintln!("the kernel does not allow resetting the peak here; nothing to check");
        return;
    }
    let big = vec![1u8; 64 << 20];
    let with_big = peak_rss_bytes();
    assert!(with_big >= 64 << 20);
    drop(std::hint::black_box(big));
    if !reset_peak_rss() {
        // The kernel kept a peak no reset clears (an exited thread's): the reset says so.
        eprintln!("the reset did not take effect here; the peak covers the whole process");
        return;
    }
    assert!(peak_rss_bytes() < with_big);
}
