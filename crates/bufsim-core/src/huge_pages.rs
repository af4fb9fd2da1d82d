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
//! maps every block of at least one huge page on its own, on a huge-page boundary, and asks
//! before the memory is first touched. Smaller blocks go to the system allocator unchanged.
//!
//! It changes how long a run takes, never what it computes. Elsewhere than Linux, or where the
//! kernel refuses, the advice is a no-op and the allocations are ordinary ones.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size of a huge page on x86-64 and most arm64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator for small blocks; blocks of at least [`HUGE_PAGE`] bytes mapped on
/// their own, on a huge-page boundary, and advised onto huge pages unless they were asked for
/// zeroed. Install with `#[global_allocator]` in a program or a cdylib.
///
/// Zeroed blocks stay on ordinary pages because a zeroed table may be touched sparsely (a
/// sketch or an array sized for a 1 TiB cache that a small trace barely uses): its untouched
/// pages cost nothing, and a scattered touch costs 4 KiB, where a huge page would cost 2 MiB.
/// Blocks asked for uninitialised are filled by their owner (an index laid out whole, a list
/// that grows by doubling), so huge pages cost them nothing extra.
pub struct HugePageAlloc;

/// Whether a block is served by its own mapping: decided from the caller's layout alone, the
/// same way on allocation and release.
#[inline]
fn mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE_PAGE && layout.align() <= HUGE_PAGE
}

/// The length of the mapping that serves `size` bytes.
#[inline]
fn mapping_len(size: usize) -> usize {
    size.div_ceil(HUGE_PAGE) * HUGE_PAGE
}

/// A fresh anonymous mapping of at least `size` bytes on a huge-page boundary (zero-filled and
/// untouched, as every fresh mapping), advised onto huge pages when `huge`; null on failure.
#[cfg(target_os = "linux")]
unsafe fn map(size: usize, huge: bool) -> *mut u8 {
    let len = mapping_len(size);
    let Some(span) = len.checked_add(HUGE_PAGE) else { return std::ptr::null_mut() };
    let p = libc::mmap(
        std::ptr::null_mut(),
        span,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // Map one huge page more than needed, then give back the parts before the first boundary
    // and after the block.
    let start = p as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    if aligned > start {
        libc::munmap(p, aligned - start);
    }
    let tail = start + span - (aligned + len);
    if tail > 0 {
        libc::munmap((aligned + len) as *mut libc::c_void, tail);
    }
    if huge {
        // Advice only: a kernel that refuses (huge pages switched off) leaves ordinary pages.
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    aligned as *mut u8
}

#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: *mut u8, size: usize) {
    libc::munmap(ptr.cast(), mapping_len(size));
}

#[cfg(not(target_os = "linux"))]
unsafe fn map(_size: usize, _huge: bool) -> *mut u8 {
    unreachable!("only Linux maps blocks on their own")
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_ptr: *mut u8, _size: usize) {
    unreachable!("only Linux maps blocks on their own")
}

// SAFETY: a block is served by its own mapping exactly when `mapped` says so of the caller's
// layout, which the caller passes unchanged to `dealloc` and `realloc`; every other block is
// the system allocator's, obtained and returned with the caller's layout.
unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size(), true)
        } else {
            System.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size(), false)
        } else {
            System.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout) {
            unmap(ptr, layout.size())
        } else {
            System.dealloc(ptr, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (mapped(layout), mapped(new_layout)) {
            (false, false) => return System.realloc(ptr, layout, new_size),
            // Within the same mapping's length nothing moves.
            (true, true) if mapping_len(new_size) == mapping_len(layout.size()) => return ptr,
            _ => {}
        }
        // A new block and a copy. Tables grow by doubling, so the copies cost as much as the
        // insertions that filled them, once.
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
                if mapped(l) {
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
