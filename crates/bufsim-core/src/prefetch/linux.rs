//! Linux 2.4 read-ahead as the prefetching paper describes it (§2.1, Fig. 2).
//! Deviation: sizes count blocks, not pages, and an access is one block (as §2.1 assumes).
//!
//! Per file: the current read-ahead group, the previous group, and the window (both groups).
//! - First access, or an access outside the window: synchronous ("conservative") read-ahead of
//!   `min` blocks after the demanded one; the window is reset to that group. A first access to
//!   block 0 is taken as sequential (§2.1 footnote 1): its group is already doubled.
//! - An access in the current group: the previous group proved useful, so asynchronous
//!   read-ahead of twice the last group size (at most `max`) follows the current group; the
//!   current group becomes the previous one.
//! - An access in the previous group, or to a block whose I/O is still in flight: nothing.
//!
//! Blocks of a group that are already cached are not read but still belong to the group (§2.1).

use super::{state, BlockEvent, Plan, ReadAhead};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// Current read-ahead group: `cur_start..cur_start+cur_len`.
    pub cur_start: u64,
    pub cur_len: u64,
    /// Previous group.
    pub prev_start: u64,
    pub prev_len: u64,
    /// Size of the last read-ahead, for doubling.
    pub size: u64,
    pub seen: bool,
}

impl Window {
    fn in_cur(&self, b: u64) -> bool {
        b >= self.cur_start && b < self.cur_start + self.cur_len
    }
    fn in_prev(&self, b: u64) -> bool {
        b >= self.prev_start && b < self.prev_start + self.prev_len
    }
}

pub struct Linux24 {
    min: u64,
    max: u64,
    files: Vec<Window>,
}

impl Linux24 {
    pub fn new(min: u64, max: u64) -> Self {
        Linux24 { min, max, files: Vec::new() }
    }

    /// The window of a file (tests).
    pub fn window(&self, file: u32) -> Window {
        self.files.get(file as usize).copied().unwrap_or_default()
    }
}

impl ReadAhead for Linux24 {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        let (min, max) = (self.min, self.max);
        let w = state(&mut self.files, ev.file);
        let b = ev.block;
        if w.seen && (w.in_cur(b) || w.in_prev(b)) {
            if ev.in_flight || !w.in_cur(b) {
                // §2.1: the disk is busy with this group, or the access is in the previous group.
                return None;
            }
            // Asynchronous read-ahead after the current group, twice as large.
            let n = (w.size * 2).min(max);
            let start = w.cur_start + w.cur_len;
            w.prev_start = w.cur_start;
            w.prev_len = w.cur_len;
            w.cur_start = start;
            w.cur_len = n;
            w.size = n;
            return Plan::clipped(start, n, ev.file_blocks, false);
        }
        // Outside the window (or the first access): synchronous read-ahead, window reset.
        let first_at_zero = !w.seen && b == 0;
        let n = if first_at_zero { (min * 2).min(max) } else { min };
        w.seen = true;
        w.prev_start = b;
        w.prev_len = 1;
        w.cur_start = b + 1;
        w.cur_len = n;
        w.size = n;
        Plan::clipped(b + 1, n, ev.file_blocks, true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::*;

    #[test]
    fn window_grows_on_sequential_reads() {
        let mut ra = Linux24::new(3, 32);
        // Block 10, first access: sync group 11..14, window = [10] + [11..14).
        let p = ra.on_access(&ev(10, true)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (11, 3, true));
        // 11 is in the current group: async group 14..20 (3 doubled), 11..14 becomes previous.
        let p = ra.on_access(&ev(11, false)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (14, 6, false));
        // 12 and 13 are in the previous group: nothing.
        assert!(ra.on_access(&ev(12, false)).is_none());
        assert!(ra.on_access(&ev(13, false)).is_none());
        // 14 enters the current group: 20..32.
        let p = ra.on_access(&ev(14, false)).unwrap();
        assert_eq!((p.start, p.len), (20, 12));
        // 20: 32..56; 32: 56..88 capped at 32 blocks.
        assert_eq!(ra.on_access(&ev(20, false)).unwrap().len, 24);
        assert_eq!(ra.on_access(&ev(32, false)).unwrap().len, 32);
        assert_eq!(ra.on_access(&ev(56, false)).unwrap().len, 32);
    }

    #[test]
    fn a_jump_resets_to_conservative() {
        let mut ra = Linux24::new(3, 32);
        ra.on_access(&ev(10, true));
        ra.on_access(&ev(11, false));
        let p = ra.on_access(&ev(500, true)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (501, 3, true));
        assert_eq!(ra.window(0).prev_start, 500);
    }

    #[test]
    fn block_zero_is_taken_as_sequential_and_in_flight_stops_it() {
        let mut ra = Linux24::new(3, 32);
        assert_eq!(ra.on_access(&ev(0, true)).unwrap().len, 6);
        let mut e = ev(1, false);
        e.in_flight = true;
        assert!(ra.on_access(&e).is_none());
    }

    #[test]
    fn read_ahead_stops_at_the_end_of_the_file() {
        let mut ra = Linux24::new(3, 32);
        let mut e = ev(998, true);
        e.file_blocks = 1000;
        assert_eq!(ra.on_access(&e).unwrap().len, 1);
        e.block = 999;
        e.miss = false;
        assert!(ra.on_access(&e).is_none());
    }
}
