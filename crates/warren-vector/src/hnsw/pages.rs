//! Transparent huge pages for the index's large arrays. A search reads a few lines at random
//! places of the lower layer's blocks (768 MB at 1M x 128): with 4 KiB pages nearly every one
//! of those reads also misses the TLB and walks the page table; 2 MiB pages cover the blocks
//! with a few hundred TLB entries. Linux serves huge pages to a range advised `MADV_HUGEPAGE`
//! where transparent huge pages are set to `madvise` (the default of many distributions); the
//! advice is a hint, and elsewhere this is a no-op.

/// Arrays smaller than this keep ordinary pages (a few TLB entries cover them anyway).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// The huge page size the advice aligns to.
#[cfg(target_os = "linux")]
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Advises the whole 2 MiB pages inside `bytes` bytes from `start` for huge pages, when the
/// range is at least `HUGE_PAGE_MIN_BYTES`. Call it before the memory is first written, so
/// that the first faults get huge pages. The contents are not changed.
pub fn advise_huge_pages(start: *const u8, bytes: usize) {
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let first = (start as usize).next_multiple_of(HUGE_PAGE_BYTES);
        let end = (start as usize + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
        if end > first {
            // SAFETY: the range lies inside one live allocation of the caller; the advice only
            // changes how the kernel backs it, never its contents.
            let advised = unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE)
            };
            // EINVAL where the kernel has no transparent huge pages: the advice is optional.
            let _ = advised;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = start;
}
