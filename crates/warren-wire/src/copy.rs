//! Bulk copies of column payloads into an output buffer. `memcpy` is the fastest copy except,
//! reportedly, in one placement on AMD Zen cores: glibc copies large buffers with `rep movsb`,
//! which was measured (on the project's earlier Zen 4 machine) to slow down to about 2 GB/s when
//! the destination lies a few bytes past the source modulo 4 KiB. A chunk's values land at a
//! fixed offset inside a frame, so that placement happens. On AMD CPUs such a copy takes a
//! vector loop instead; elsewhere `memcpy` always: on the Intel Xeon this was measured on, the
//! placement costs `memcpy` under 10% and the loop is slower than `memcpy` there (see
//! `docs/OPTIMIZATION_LOG.md`, "Wire"). `WARREN_WIRE_COPY=memcpy` or `=guarded` overrides the
//! choice (read once).

use std::sync::OnceLock;

/// Copies shorter than this go to `memcpy`: glibc does not use `rep movsb` for them.
pub const GUARD_MIN_BYTES: usize = 2048;
/// Destinations `1..ALIAS_WINDOW_BYTES` bytes past the source modulo 4 KiB take the vector loop.
pub const ALIAS_WINDOW_BYTES: usize = 64;
const PAGE_BYTES: usize = 4096;

/// Whether bulk copies guard against the aliasing placement on this machine: on AMD CPUs,
/// unless `WARREN_WIRE_COPY` says `memcpy` (or `guarded`, to force it anywhere).
pub fn guard_enabled() -> bool {
    static GUARD: OnceLock<bool> = OnceLock::new();
    *GUARD.get_or_init(|| match std::env::var("WARREN_WIRE_COPY").as_deref() {
        Ok("memcpy") => false,
        Ok("guarded") => true,
        _ => is_amd(),
    })
}

fn is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID leaf 0 exists on every x86_64 CPU.
        let leaf = unsafe { std::arch::x86_64::__cpuid(0) };
        let vendor = [leaf.ebx, leaf.edx, leaf.ecx];
        let bytes: Vec<u8> = vendor.iter().flat_map(|r| r.to_le_bytes()).collect();
        bytes == b"AuthenticAMD"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Appends `bytes` to `out`: [`copy_guarded`] where [`guard_enabled`], else `memcpy`.
#[inline]
pub fn append(out: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() >= GUARD_MIN_BYTES && guard_enabled() {
        append_guarded(out, bytes);
    } else {
        out.extend_from_slice(bytes);
    }
}

/// Appends `bytes` to `out` with [`copy_guarded`], whatever the machine.
#[inline]
pub fn append_guarded(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len());
    let len = out.len();
    // SAFETY: `reserve` made room for `bytes.len()` more bytes after `len`; `bytes` cannot
    // overlap the spare capacity of a vector we hold mutably.
    unsafe {
        copy_guarded(out.as_mut_ptr().add(len), bytes.as_ptr(), bytes.len());
        out.set_len(len + bytes.len());
    }
}

/// Appends `bytes` to `out` with plain `memcpy` (the baseline the bench compares with).
#[inline]
pub fn append_plain(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

/// Whether copying from `src` to `dst` hits the 4K-aliasing placement.
#[inline]
pub fn aliases(dst: *const u8, src: *const u8) -> bool {
    let distance = (dst as usize).wrapping_sub(src as usize) % PAGE_BYTES;
    (1..ALIAS_WINDOW_BYTES).contains(&distance)
}

/// Copies `len` bytes: `memcpy`, or a vector loop in the aliasing placement.
///
/// # Safety
/// `src` must be valid for `len` bytes of reads, `dst` for `len` bytes of writes, and the two
/// ranges must not overlap.
#[inline]
pub unsafe fn copy_guarded(dst: *mut u8, src: *const u8, len: usize) {
    if len >= GUARD_MIN_BYTES && aliases(dst, src) {
        // SAFETY: the caller's contract.
        unsafe { copy_vector_loop(dst, src, len) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    }
}

/// A forward copy with 32-byte (AVX2) or 16-byte (SSE2) unaligned loads and stores, four per
/// iteration, then `memcpy` for the tail.
///
/// # Safety
/// As [`copy_guarded`].
pub unsafe fn copy_vector_loop(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present; the caller's contract covers the ranges.
            return unsafe { x86::copy_avx2(dst, src, len) };
        }
        // SAFETY: SSE2 is part of x86_64; the caller's contract covers the ranges.
        unsafe { x86::copy_sse2(dst, src, len) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_loadu_si256, _mm256_storeu_si256, _mm_loadu_si128,
        _mm_storeu_si128,
    };

    /// # Safety
    /// AVX2 must be available; `src`/`dst` valid for `len` bytes and not overlapping.
    #[target_feature(enable = "avx2")]
    pub unsafe fn copy_avx2(dst: *mut u8, src: *const u8, len: usize) {
        const STEP: usize = 128;
        let mut i = 0;
        while i + STEP <= len {
            // SAFETY: `i + STEP <= len`, within both ranges.
            unsafe {
                let s = src.add(i).cast::<__m256i>();
                let d = dst.add(i).cast::<__m256i>();
                let a = _mm256_loadu_si256(s);
                let b = _mm256_loadu_si256(s.add(1));
                let c = _mm256_loadu_si256(s.add(2));
                let e = _mm256_loadu_si256(s.add(3));
                _mm256_storeu_si256(d, a);
                _mm256_storeu_si256(d.add(1), b);
                _mm256_storeu_si256(d.add(2), c);
                _mm256_storeu_si256(d.add(3), e);
            }
            i += STEP;
        }
        // SAFETY: the tail `i..len` lies within both ranges.
        unsafe { std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i) }
    }

    /// # Safety
    /// `src`/`dst` valid for `len` bytes and not overlapping.
    pub unsafe fn copy_sse2(dst: *mut u8, src: *const u8, len: usize) {
        const STEP: usize = 64;
        let mut i = 0;
        while i + STEP <= len {
            // SAFETY: `i + STEP <= len`, within both ranges; SSE2 is baseline on x86_64.
            unsafe {
                let s = src.add(i).cast::<__m128i>();
                let d = dst.add(i).cast::<__m128i>();
                let a = _mm_loadu_si128(s);
                let b = _mm_loadu_si128(s.add(1));
                let c = _mm_loadu_si128(s.add(2));
                let e = _mm_loadu_si128(s.add(3));
                _mm_storeu_si128(d, a);
                _mm_storeu_si128(d.add(1), b);
                _mm_storeu_si128(d.add(2), c);
                _mm_storeu_si128(d.add(3), e);
            }
            i += STEP;
        }
        // SAFETY: the tail `i..len` lies within both ranges.
        unsafe { std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placement_copies_exactly() {
        let source: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
        for shift in [0usize, 1, 7, 8, 15, 63, 64, 100] {
            for len in [0usize, 1, 127, 128, 2047, 2048, 4097, 9_000] {
                let mut out = vec![0xAAu8; shift];
                append(&mut out, &source[..len]);
                assert_eq!(&out[shift..], &source[..len], "shift {shift} len {len}");
                let mut out = vec![0xAAu8; shift];
                append_guarded(&mut out, &source[..len]);
                assert_eq!(&out[shift..], &source[..len], "shift {shift} len {len}");
                let mut looped = vec![0u8; len];
                // SAFETY: both buffers hold `len` bytes and are distinct.
                unsafe { copy_vector_loop(looped.as_mut_ptr(), source.as_ptr(), len) };
                assert_eq!(looped, &source[..len]);
            }
        }
    }

    #[test]
    fn aliasing_window() {
        let base = 0x10_000usize as *const u8;
        assert!(!aliases(base, base));
        assert!(aliases(base.wrapping_add(8), base));
        assert!(aliases(base.wrapping_add(4096 + 8), base));
        assert!(!aliases(base.wrapping_add(64), base));
        assert!(!aliases(base.wrapping_sub(8), base));
    }
}
