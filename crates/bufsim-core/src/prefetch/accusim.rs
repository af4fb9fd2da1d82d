//! Linux 2.4 `generic_file_readahead` as AccuSim ran it, the simulator behind the prefetching
//! paper's evaluation (rules learned from AccuSim's public source, `asim/sim/prefetch.cc`:
//! `accessCache` and `perform_io`; MINRA = 3, MAXRA = 32 blocks). Sizes count blocks.
//!
//! Per file the kernel's four fields: `raend` (end of the read-ahead window), `rawin` (window
//! size), `ralen` (last read-ahead group) and `ramax` (next read-ahead size).
//! - At the start of each read request: if the request starts past `raend` or before the window
//!   (`first + rawin < raend`), the window is reset to nothing and read-ahead is "not OK" for
//!   this request; otherwise it is OK. Then `ramax` is 0 for a read of at most half a block at
//!   block 0; otherwise it is raised to the request's own size, `needed = (offset in the first
//!   block + bytes) / block + 1`, raised to MINRA only when read-ahead is OK, capped at MAXRA.
//!   So a non-sequential request reads ahead only its own block count, while a file's first read
//!   at block 0 continues the (empty) window and reads ahead at least MINRA.
//! - For each block the request reaches (blocks already demanded by an earlier block's
//!   read-ahead are skipped, as AccuSim skips them): if the block is not ready (a miss, or its
//!   I/O still in flight) and outside the current group, a synchronous read-ahead of `ramax`
//!   blocks follows it and the window restarts at it. If it is ready, read-ahead is OK, and it
//!   lies in the last group (`block <= raend <= block + ralen`), an asynchronous read-ahead of
//!   `ramax + 1` blocks starts at `raend` (a re-read inside the window switches read-ahead on
//!   asynchronously). Any other access reads nothing ahead.
//! - After a read-ahead of `n` blocks: `ralen += n`, `rawin += ralen`, `raend` moves past it and
//!   `ramax` doubles, up to MAXRA.
//!
//! Deviations: AccuSim also resets the window on a write request; bufsim's engines tell
//! read-ahead only of reads, so writes leave it alone. Hits are counted by the engine, not
//! here: timed mode counts as AccuSim does (a block read ahead is a hit only if its read had
//! completed when the request began, `hit_rule=completed`). The blocks of the request itself
//! that a read-ahead reaches are not read ahead: as in AccuSim's `perform_io`, the engine
//! demands them then, in order, before it reads the blocks past the request ahead
//! (`AnyReadAhead::demands_request_blocks_first`), so they are misses in either mode and the
//! policy sees them demanded before the read-ahead (docs/prefetching.md).

use super::{state, BlockEvent, Plan, ReadAhead};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    pub raend: u64,
    pub rawin: u64,
    pub ralen: u64,
    pub ramax: u64,
    /// Read-ahead is allowed for the current request (it continues the window).
    pub reada_ok: bool,
    /// Next block of the current request that still gets its own read-ahead decision.
    pub next: u64,
    /// End of the current request (exclusive).
    pub needed_end: u64,
}

pub struct AccuSim {
    min: u64,
    max: u64,
    files: Vec<RaState>,
}

impl AccuSim {
    pub fn new(min: u64, max: u64) -> Self {
        AccuSim { min, max, files: Vec::new() }
    }

    /// The read-ahead state of a file (tests).
    pub fn state(&self, file: u32) -> RaState {
        self.files.get(file as usize).copied().unwrap_or_default()
    }
}

impl ReadAhead for AccuSim {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        let (min, max) = (self.min, self.max);
        let s = state(&mut self.files, ev.file);
        let b = ev.block;
        let bs = ev.block_size.max(1);
        if b == ev.request_first {
            // A new read request: does it continue the window?
            if b > s.raend || b + s.rawin < s.raend {
                *s = RaState::default();
            } else {
                s.reada_ok = true;
            }
            if b == 0 && ev.request_bytes <= bs / 2 {
                s.ramax = 0;
            } else {
                let needed = ev.request_bytes / bs + 1;
                s.ramax = s.ramax.max(needed);
                if s.reada_ok {
                    s.ramax = s.ramax.max(min);
                }
                s.ramax = s.ramax.min(max);
            }
            s.next = b;
            s.needed_end = ev.request_first + ev.request_blocks;
        }
        if b < s.next {
            // Demanded already by an earlier block's read-ahead (AccuSim's `f_cb` moved past it).
            return None;
        }
        s.next = b + 1;
        let end = ev.file_blocks;
        let not_ready = ev.miss || ev.in_flight;
        let mut raend = s.raend;
        let mut max_ahead = 0;
        if not_ready {
            if s.ralen == 0 || b >= s.raend || b + s.rawin < s.raend {
                raend = b;
                if raend < end {
                    max_ahead = s.ramax;
                }
                s.rawin = 0;
                s.ralen = 1;
                if max_ahead == 0 {
                    s.raend = b + s.ralen;
                    s.rawin += s.ralen;
                }
            }
        } else if s.reada_ok && s.ramax > 0 && s.raend >= 1 && b <= s.raend && b + s.ralen >= s.raend {
            raend = s.raend - 1;
            if raend < end {
                max_ahead = s.ramax + 1;
                s.rawin = s.ralen;
                s.ralen = 0;
            }
        }
        // Blocks of this request up to the window's end are demanded now, in AccuSim's order.
        if max_ahead == 0 {
            s.next = s.next.max((raend + 1).min(s.needed_end));
            return None;
        }
        // The read-ahead loop counts the step that reaches the end of the file, then stops.
        let ahead = max_ahead.min(end - raend);
        let last = (raend + ahead).min(end - 1);
        s.next = s.next.max((last + 1).min(s.needed_end));
        s.ralen += ahead;
        s.rawin += s.ralen;
        s.raend = raend + ahead + 1;
        s.ramax = (s.ramax * 2).min(max);
        if last <= raend {
            return None;
        }
        Plan::clipped(raend + 1, last - raend, end, not_ready)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::*;

    /// A read of `bytes` bytes from the start of `block`, found or not.
    fn read(block: u64, bytes: u64, miss: bool) -> BlockEvent {
        let mut e = ev(block, miss);
        e.request_bytes = bytes;
        e.request_blocks = bytes.div_ceil(4096).max(1);
        e
    }

    #[test]
    fn a_non_sequential_read_reads_ahead_its_own_block_count() {
        let mut ra = AccuSim::new(3, 32);
        // A 4 KiB read at block 500: needed = 4096 / 4096 + 1 = 2, no MINRA (window reset).
        let p = ra.on_access(&read(500, 4096, true)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (501, 2, true));
        let s = ra.state(0);
        // ralen = 1 + 2, rawin = 3, raend = 500 + 2 + 1, ramax doubled.
        assert_eq!((s.raend, s.rawin, s.ralen, s.ramax), (503, 3, 3, 4));
        // A 12 KiB read far away: needed = 4 blocks ahead.
        let p = ra.on_access(&read(100, 12288, true)).unwrap();
        assert_eq!((p.start, p.len), (101, 4));
    }

    #[test]
    fn a_re_read_inside_the_window_reads_ahead_asynchronously() {
        let mut ra = AccuSim::new(3, 32);
        ra.on_access(&read(500, 4096, true));
        // Block 501 was read ahead and is ready: the request continues the window (501 <= 503,
        // 501 + 3 >= 503), ramax = max(4, 2, MINRA) = 4; 501 + ralen 3 >= raend 503, so an
        // asynchronous read-ahead of ramax + 1 = 5 blocks from raend - 1 = 502: blocks 503..508.
        let p = ra.on_access(&read(501, 4096, false)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (503, 5, false));
        let s = ra.state(0);
        assert_eq!((s.raend, s.rawin, s.ralen, s.ramax), (508, 8, 5, 8));
        // 502 is ready but before the last group (502 + 5 < 508): nothing.
        assert!(ra.on_access(&read(502, 4096, false)).is_none());
        // 503 starts the last group: 9 blocks from 508.
        let p = ra.on_access(&read(503, 4096, false)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (508, 9, false));
    }

    #[test]
    fn random_records_sharing_a_block_read_ahead_asynchronously() {
        // The prefetching paper's tpc-h (§6.2.2): random records, two consecutive reads on the
        // same block. Each first read is a synchronous read-ahead, each re-read an asynchronous
        // one, so there are as many asynchronous read-aheads as synchronous ones. The paper's
        // prose rule (`linux`) sees the re-read in the previous group and reads nothing.
        let (mut accusim, mut prose) = (AccuSim::new(3, 32), super::super::Linux24::new(3, 32));
        let (mut sync, mut async_, mut prose_async) = (0, 0, 0);
        for i in 1..=200u64 {
            let b = i * 7919 % 997;
            for (miss, e) in [(true, read(b, 512, true)), (false, read(b, 512, false))] {
                if let Some(p) = accusim.on_access(&e) {
                    if p.sync {
                        sync += 1;
                    } else {
                        async_ += 1;
                    }
                }
                let p = prose.on_access(&e);
                prose_async += (!miss && p.is_some_and(|p| !p.sync)) as u32;
            }
        }
        assert_eq!((sync, async_, prose_async), (200, 200, 0));
    }

    #[test]
    fn a_small_read_at_block_zero_reads_nothing_ahead() {
        let mut ra = AccuSim::new(3, 32);
        assert!(ra.on_access(&read(0, 2048, true)).is_none());
        let s = ra.state(0);
        assert_eq!((s.raend, s.rawin, s.ralen, s.ramax), (1, 1, 1, 0));
        // Just over half a block: needed = 2049 / 4096 + 1 = 1, but a first read at block 0
        // continues the empty window (0 is not past raend = 0), so MINRA applies: 3 blocks.
        let mut ra = AccuSim::new(3, 32);
        let p = ra.on_access(&read(0, 2049, true)).unwrap();
        assert_eq!((p.start, p.len, p.sync), (1, 3, true));
    }

    #[test]
    fn a_block_in_flight_inside_the_group_reads_nothing() {
        let mut ra = AccuSim::new(3, 32);
        ra.on_access(&read(500, 4096, true));
        let mut e = read(501, 4096, false);
        e.in_flight = true;
        assert!(ra.on_access(&e).is_none());
    }

    #[test]
    fn blocks_of_the_request_read_ahead_get_no_decision_of_their_own() {
        let mut ra = AccuSim::new(3, 32);
        // A 16 KiB read at block 40: needed = 5; read-ahead 41..46 covers the request's 41..44.
        let mut e = read(40, 16384, true);
        let p = ra.on_access(&e).unwrap();
        assert_eq!((p.start, p.len), (41, 5));
        for b in 41..44 {
            e.block = b;
            e.miss = false;
            assert!(ra.on_access(&e).is_none(), "block {b}");
        }
        assert_eq!(ra.state(0).next, 44);
    }

    #[test]
    fn read_ahead_stops_at_the_end_of_the_file_and_caps_at_max() {
        let mut ra = AccuSim::new(3, 32);
        let mut e = read(998, 4096, true);
        e.file_blocks = 1000;
        let p = ra.on_access(&e).unwrap();
        assert_eq!((p.start, p.len), (999, 1));
        let mut ra = AccuSim::new(3, 8);
        let p = ra.on_access(&read(10, 65536, true)).unwrap();
        assert_eq!(p.len, 8);
    }
}
