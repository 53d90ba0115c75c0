//! A cache hint, the engine's only `unsafe` (benches/RESULTS.md, "Engine speed, sixth
//! step"): the event loop of a large world asks the CPU to fetch what the next event will
//! read while the current one runs (world/mod.rs `prefetch_next`).

/// Hint the CPU to bring every cache line of `*r` into its caches. Safe to call: a
/// prefetch neither reads nor writes anything the program can observe, so no output can
/// depend on it; it only changes how soon a later load finds its line. On targets other
/// than x86_64 it does nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (r as *const T).cast::<i8>();
        let size = std::mem::size_of::<T>();
        let mut off = 0;
        while off < size {
            // SAFETY: `_mm_prefetch` (SSE, part of every x86_64) is a hint: it cannot
            // fault whatever the address, and the program observes no memory through it.
            // The addresses lie inside the live `*r`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
            off += 64;
        }
        if size > 0 {
            // SAFETY: as above; the line holding the last byte, for a value that is not
            // line-aligned.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(size - 1)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
