//! Memory hints: asking the CPU to start loading data the simulation will touch a little later.
//!
//! On a large cache every structure a request touches (the residency index, a policy's lists,
//! its ghost index) is far bigger than the CPU's caches, and each touch waits on memory. The
//! engines know the requests a few steps ahead and the policies know their next victims, so
//! the loads can start early and overlap. A hint reads nothing architecturally and never
//! faults: it changes how long a run takes, never what it computes.

/// Starts loading the cache line of `x`.
#[inline(always)]
pub fn prefetch<T>(x: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch instruction only hints the cache hierarchy: it reads nothing the
    // program sees and does not fault on any address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(x as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
