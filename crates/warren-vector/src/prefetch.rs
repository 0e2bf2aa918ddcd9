//! Software prefetch hints over vector memory: one cache line (the HNSW search, a node it is
//! about to read), a row read soon (the index ranking its beam) and a scan's run of bytes a
//! fixed distance ahead (the FLOAT and quantized scans). A prefetch is a hint: it never faults
//! and reads nothing the program sees; off x86-64 these are no-ops.

/// How far ahead of the row (or block) being read a scan over contiguous memory prefetches:
/// 8 KiB measured best for the quantized kernels (`OPTIMIZATION_LOG` 165: 94-95% of a plain
/// read at 1M x 128, against 64% without) and 27-29% faster FLOAT scans (173).
pub const SCAN_AHEAD_BYTES: usize = 8192;

/// Asks the CPU to start loading the cache line holding `address`.
#[inline(always)]
pub(crate) fn line(address: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Asks the CPU to start loading every cache line of `run` (a row read soon, out of order).
#[inline(always)]
pub(crate) fn lines<T>(run: &[T]) {
    let bytes = std::mem::size_of_val(run);
    if bytes == 0 {
        return;
    }
    let start = run.as_ptr().cast::<i8>();
    let first_line = start as usize / 64;
    let last_line = (start as usize + bytes - 1) / 64;
    for index in 0..=last_line - first_line {
        line(start.wrapping_add(index * 64));
    }
}

/// Asks for the cache lines [`SCAN_AHEAD_BYTES`] past each 64 bytes of `run` (the row or
/// block being read), for a scan that reads its memory in order (an address past the end is
/// never read).
#[inline(always)]
pub fn scan_ahead<T>(run: &[T]) {
    let ahead = run.as_ptr().cast::<i8>().wrapping_add(SCAN_AHEAD_BYTES);
    for offset in (0..std::mem::size_of_val(run)).step_by(64) {
        line(ahead.wrapping_add(offset));
    }
}
