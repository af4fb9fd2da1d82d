//! Linux on-demand read-ahead (2.6.23 and later, mm/readahead.c), for comparing the papers'
//! 2.4-era results with today's kernel. Facts from REFERENCES.md; sizes in blocks.
//! Deviation: the "read-ahead off after 256 cached pages" rule of mmap'ed reads is left out.
//!
//! Per file a window `start..start+size` with an asynchronous marker at
//! `start + size - async_size`.
//! - A miss at block 0, at the block after the previous access, or at the end of the window
//!   starts a window sized from the request (`init`): the request rounded up to a power of two,
//!   x4 if small, x2 if medium, else `max`; the marker is set after the request.
//! - A hit on the marker (or a sequential miss at the window's end) ramps up: the window moves
//!   past itself, `size = next(size)` (x4 below max/16, else x2, capped), all of it asynchronous.
//! - Any other miss reads only the request: no read-ahead.

use super::{state, BlockEvent, Plan, ReadAhead};

#[derive(Clone, Copy, Debug, Default)]
struct State {
    start: u64,
    size: u64,
    async_size: u64,
    prev: Option<u64>,
}

pub struct OnDemand {
    max: u64,
    files: Vec<State>,
}

impl OnDemand {
    pub fn new(max: u64) -> Self {
        OnDemand { max, files: Vec::new() }
    }

    /// First window for a request of `req` blocks.
    pub fn init_size(req: u64, max: u64) -> u64 {
        let n = req.max(1).next_power_of_two();
        if n <= max / 32 {
            (n * 4).min(max)
        } else if n <= max / 4 {
            (n * 2).min(max)
        } else {
            max
        }
    }

    /// The window after a successful one.
    pub fn next_size(cur: u64, max: u64) -> u64 {
        if cur < max / 16 { cur * 4 } else { cur * 2 }.min(max)
    }
}

impl ReadAhead for OnDemand {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        let max = self.max;
        let s = state(&mut self.files, ev.file);
        let b = ev.block;
        let prev = s.prev.replace(b);
        let marker = (s.size > 0).then(|| s.start + s.size - s.async_size);
        let window_end = s.start + s.size;
        if (!ev.miss && Some(b) == marker && !ev.in_flight) || (ev.miss && s.size > 0 && b == window_end) {
            // Ramp up: the next window follows the current one, all of it read asynchronously.
            s.start = window_end;
            s.size = Self::next_size(s.size, max);
            s.async_size = s.size;
            let start = s.start.max(b + 1);
            let len = s.start + s.size - start;
            return Plan::clipped(start, len, ev.file_blocks, ev.miss);
        }
        if !ev.miss {
            return None;
        }
        let sequential = b == 0 || prev.is_some_and(|p| b == p + 1 || b == p);
        if !sequential {
            return None;
        }
        // The rest of the request counts from this block.
        // req_size comes from the read's count (what it asked for), as in Linux 2.6's read path.
        let req = (ev.request_first + ev.request_asked_blocks).saturating_sub(b).max(1);
        s.start = b;
        s.size = Self::init_size(req, max);
        s.async_size = s.size.saturating_sub(req).min(s.size - 1);
        Plan::clipped(b + 1, s.size - 1, ev.file_blocks, true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::*;

    #[test]
    fn initial_sizes_follow_the_kernel_table() {
        // max 32 pages (128 KiB): 1-2 -> 4, 3-4 -> 8, 5-8 -> 16, more -> 32.
        let got: Vec<u64> = [1, 2, 3, 4, 5, 8, 9, 32].iter().map(|&r| OnDemand::init_size(r, 32)).collect();
        assert_eq!(got, vec![4, 4, 8, 8, 16, 16, 32, 32]);
        // x4 below max/16, else x2, capped.
        assert_eq!(OnDemand::next_size(1, 32), 4);
        assert_eq!(OnDemand::next_size(4, 32), 8);
        assert_eq!(OnDemand::next_size(16, 32), 32);
        assert_eq!(OnDemand::next_size(32, 32), 32);
    }

    #[test]
    fn sequential_reads_ramp_up_at_the_marker() {
        let mut ra = OnDemand::new(32);
        // Miss at block 0 of a 1-block read: window 0..4, marker at 0 + 4 - 3 = 1.
        let p = ra.on_access(&ev(0, true)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (1, 3, true));
        // Hit on the marker (block 1): window 4..12 (x2 since 4 >= 32/16), async.
        let p = ra.on_access(&ev(1, false)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (4, 8, false));
        // Hits before the new marker (4) do nothing.
        assert!(ra.on_access(&ev(2, false)).is_none());
        assert!(ra.on_access(&ev(3, false)).is_none());
        // Marker at 4: window 12..28.
        let p = ra.on_access(&ev(4, false)).unwrap();
        assert_eq!((p.start, p.len), (12, 16));
    }

    #[test]
    fn random_misses_read_only_the_request() {
        let mut ra = OnDemand::new(32);
        ra.on_access(&ev(0, true));
        assert!(ra.on_access(&ev(500, true)).is_none());
        assert!(ra.on_access(&ev(90, true)).is_none());
        // A sequential miss after a random one starts a new window.
        assert!(ra.on_access(&ev(91, true)).is_some());
    }
}
