//! Large allocations on huge pages: the memory allocator of the `bufsim` program and of the
//! Python module.
//!
//! A large simulation spends most of its time waiting on memory: each request touches the
//! residency index, a policy's lists and its ghost index at places no CPU cache holds. With
//! 4 KiB pages each of those touches also misses the CPU's address translation cache (a TLB of
//! some 2,000 entries covers 8 MiB), and a memory hint (`memory_hint`) that misses it waits for
//! the page walk before it can start loading. Backed by 2 MiB pages the same TLB covers
//! gigabytes. Linux gives huge pages to a region only when asked (`madvise(MADV_HUGEPAGE)`,
//! the default setting of `/sys/kernel/mm/transparent_hugepage/enabled`), so this allocator
//! places every allocation of at least one huge page on a huge-page boundary and asks, before
//! the memory is first touched. Smaller allocations go to the system allocator unchanged.
//!
//! It changes how long a run takes, never what it computes. Elsewhere than Linux, or where the
//! kernel refuses, the advice is a no-op and the allocations are ordinary ones.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size of a huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, with allocations of at least [`HUGE_PAGE`] bytes aligned to it and
/// advised onto huge pages. Install with `#[global_allocator]` in a program or a cdylib.
pub struct HugePageAlloc;

/// The layout a request is served with: huge-page aligned when it is that large. Computed the
/// same way from the caller's layout on allocation and release, so the two always agree.
#[inline]
fn served(layout: Layout) -> Layout {
    if layout.size() >= HUGE_PAGE && layout.align() < HUGE_PAGE {
        // A size too close to isize::MAX to round up to the larger alignment keeps its own.
        Layout::from_size_align(layout.size(), HUGE_PAGE).unwrap_or(layout)
    } else {
        layout
    }
}

/// Asks the kernel to back `[ptr, ptr + len)` with huge pages. Advice only: a refusal (an old
/// kernel, huge pages switched off) leaves ordinary pages and is not an error.
#[inline]
fn advise(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside an allocation just made, and MADV_HUGEPAGE changes only
    // how the kernel backs it, not its contents or its mapping.
    unsafe {
        libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

// SAFETY: every block is obtained from and returned to `System` with the layout `served`
// derives from the caller's layout, which is the same on both sides.
unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let l = served(layout);
        let p = System.alloc(l);
        if !p.is_null() && l.align() >= HUGE_PAGE {
            advise(p, l.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let l = served(layout);
        // Fresh mappings come zeroed and untouched, so the advice still precedes the first
        // touch.
        let p = System.alloc_zeroed(l);
        if !p.is_null() && l.align() >= HUGE_PAGE {
            advise(p, l.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, served(layout))
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if served(layout) == layout && served(new_layout) == new_layout {
            return System.realloc(ptr, layout, new_size);
        }
        // Growing into (or within, or out of) huge pages: a new block, since the system
        // allocator cannot change a block's alignment in place. Tables grow by doubling, so
        // the copies cost as much as the insertions that filled them, once.
        let q = self.alloc(new_layout);
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(ptr, q, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_huge_page_aligned_and_round_trip() {
        let a = HugePageAlloc;
        for size in [16, 4096, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 5] {
            let l = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: a non-zero layout; the block is written within its size and released
            // with the layout it was made with.
            unsafe {
                let p = a.alloc(l);
                assert!(!p.is_null());
                if size >= HUGE_PAGE {
                    assert_eq!(p as usize % HUGE_PAGE, 0, "{size} bytes not on a huge page");
                }
                p.write_bytes(7, size);
                // Grow across the threshold and back: contents survive each move.
                let q = a.realloc(p, l, size * 2);
                assert_eq!(*q.add(size - 1), 7);
                let r = a.realloc(q, Layout::from_size_align(size * 2, 8).unwrap(), size / 2 + 1);
                assert_eq!(*r.add(size / 2), 7);
                a.dealloc(r, Layout::from_size_align(size / 2 + 1, 8).unwrap());
                let z = a.alloc_zeroed(l);
                assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                a.dealloc(z, l);
            }
        }
    }
}
