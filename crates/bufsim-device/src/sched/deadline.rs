//! Linux 2.6 deadline I/O scheduler as DULO §4 ran it (deadline-iosched.c of 2.6.11):
//! deadline_dispatch_requests, including the early-2.6 rules that a batch ends on a
//! non-contiguous request and that a new batch without a next request restarts at the lowest
//! sector. Deviation: requests at the same block are kept (ordered by id), not dispatched at
//! once as Linux does with rb-tree aliases; there is no request merging here.

use std::collections::VecDeque;

use bufsim_config::SpecError;

use super::SortedQueue;
use crate::params::{Args, Capabilities, Info, Param, Range};
use crate::{round_ns, IoRequest, Scheduler};

pub const INFO: Info = Info {
    name: "deadline",
    aliases: &[],
    paper: "Linux 2.6 block/deadline-iosched.c (read_expire 500 ms, write_expire 5 s, \
             writes_starved 2, fifo_batch 16), the scheduler of DULO §4",
    summary: "sector-ordered batches of reads or writes; an expired FIFO head starts the next \
              batch; reads preferred until writes have been passed over writes-starved times",
    params: &[
        Param {
            name: "read-expire",
            default: "500ms",
            doc: "a read is due this long after it is queued",
            range: Range::Time(0.0, 1e12),
        },
        Param {
            name: "write-expire",
            default: "5s",
            doc: "a write is due this long after it is queued",
            range: Range::Time(0.0, 1e12),
        },
        Param {
            name: "writes-starved",
            default: "2",
            doc: "read batches that may start while writes wait before a write batch must",
            range: Range::Whole(0, u32::MAX as u64),
        },
        Param {
            name: "fifo-batch",
            default: "16",
            doc: "requests in one batch",
            range: Range::Whole(1, u32::MAX as u64),
        },
    ],
    preset_of: None,
    caps: Capabilities::NONE,
};

const READ: usize = 0;
const WRITE: usize = 1;

#[inline]
fn dir(r: &IoRequest) -> usize {
    if r.write {
        WRITE
    } else {
        READ
    }
}

/// A queued request's place in its FIFO: when it expires and how to find it in sort order.
#[derive(Clone, Copy)]
struct Due {
    expires: u64,
    block: u64,
    id: u64,
}

pub struct Deadline {
    expire_ns: [u64; 2],
    writes_starved: u32,
    fifo_batch: u32,
    sorted: [SortedQueue; 2],
    /// Arrival order. Dispatched requests are dropped lazily when they reach the front.
    fifo: [VecDeque<Due>; 2],
    /// Next request in sort order after the last dispatched one, in the last direction only.
    next: [Option<(u64, u64)>; 2],
    /// Block just after the last dispatched request (Linux's last_sector).
    last_end: Option<u64>,
    batching: u32,
    starved: u32,
}

impl Deadline {
    pub fn build(p: &Args) -> Result<Deadline, SpecError> {
        Ok(Deadline::new(
            round_ns(p.time_ns("read-expire")?),
            round_ns(p.time_ns("write-expire")?),
            p.u64("writes-starved")? as u32,
            p.u64("fifo-batch")? as u32,
        ))
    }

    pub fn new(read_expire_ns: u64, write_expire_ns: u64, writes_starved: u32, fifo_batch: u32) -> Self {
        Deadline {
            expire_ns: [read_expire_ns, write_expire_ns],
            writes_starved,
            fifo_batch,
            sorted: [SortedQueue::default(), SortedQueue::default()],
            fifo: [VecDeque::new(), VecDeque::new()],
            next: [None, None],
            last_end: None,
            batching: 0,
            starved: 0,
        }
    }

    /// The oldest request still queued in direction `d`, dropping dispatched ones.
    fn fifo_head(&mut self, d: usize) -> Option<Due> {
        while let Some(due) = self.fifo[d].front().copied() {
            if self.sorted[d].find(due.block, due.id).is_some() {
                return Some(due);
            }
            self.fifo[d].pop_front();
        }
        None
    }

    /// deadline_check_fifo: has the oldest request of direction `d` passed its deadline?
    fn expired(&mut self, d: usize, now: u64) -> Option<Due> {
        self.fifo_head(d).filter(|due| now > due.expires)
    }

    /// deadline_move_request: dispatch the request at `idx` of direction `d`.
    fn dispatch(&mut self, d: usize, idx: usize) -> IoRequest {
        let req = self.sorted[d].remove(idx);
        self.next = [None, None];
        // After removal the successor in sort order sits at the same index.
        self.next[d] = self.sorted[d].get(idx).map(|r| (r.block, r.id));
        self.last_end = Some(req.end_block());
        self.batching += 1;
        req
    }
}

impl Scheduler for Deadline {
    fn push(&mut self, req: IoRequest, now_ns: u64) {
        let d = dir(&req);
        self.fifo[d].push_back(Due { expires: now_ns.saturating_add(self.expire_ns[d]), block: req.block, id: req.id });
        self.sorted[d].insert(req);
    }

    fn pop(&mut self, now_ns: u64, _head_block: u64) -> Option<IoRequest> {
        // Batches are reads XOR writes: only the last direction has a next request.
        let continuing = match self.next {
            [_, Some(k)] => Some((WRITE, k)),
            [Some(k), None] => Some((READ, k)),
            [None, None] => None,
        };
        if let Some((d, (block, id))) = continuing {
            if self.last_end != Some(block) {
                // End the batch on a non-sequential request.
                self.batching = self.batching.saturating_add(self.fifo_batch);
            }
            if self.batching < self.fifo_batch {
                if let Some(idx) = self.sorted[d].find(block, id) {
                    return Some(self.dispatch(d, idx));
                }
            }
        }

        // Not in a batch: choose a direction. Reads go first unless writes have been passed
        // over writes_starved times (the counter moves only while writes wait).
        let reads = !self.sorted[READ].is_empty();
        let writes = !self.sorted[WRITE].is_empty();
        let d = if reads
            && !(writes && {
                let starved = self.starved >= self.writes_starved;
                self.starved += 1;
                starved
            }) {
            READ
        } else if writes {
            self.starved = 0;
            WRITE
        } else {
            return None;
        };

        let idx = if let Some(due) = self.expired(d, now_ns) {
            // An expired request exists: serve it and start a batch from there.
            self.batching = 0;
            self.sorted[d].find(due.block, due.id)?
        } else if let Some(idx) = self.next[d].and_then(|(b, id)| self.sorted[d].find(b, id)) {
            // Same direction as the last batch and a next request in sort order: carry on
            // from it. Linux does not reset the batch count here.
            idx
        } else {
            // The last batch went the other way or ran out of higher sectors: back to the
            // lowest sector (one-way elevator).
            self.batching = 0;
            0
        };
        Some(self.dispatch(d, idx))
    }

    fn len(&self) -> usize {
        self.sorted[READ].len() + self.sorted[WRITE].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::req;

    const MS: u64 = 1_000_000;

    fn write(id: u64, block: u64) -> IoRequest {
        IoRequest { write: true, ..req(id, block) }
    }

    fn linux() -> Deadline {
        Deadline::new(500 * MS, 5000 * MS, 2, 16)
    }

    #[test]
    fn an_expired_read_goes_before_the_lowest_sector() {
        // A (block 500) queued at 0, B (block 100) at 400 ms.
        let mut s = linux();
        s.push(req(1, 500), 0);
        s.push(req(2, 100), 400 * MS);
        // At 600 ms A has waited past read_expire (500 ms): it goes first.
        assert_eq!(s.pop(600 * MS, 0).unwrap().block, 500);

        // The same queue at 450 ms: nothing expired, lowest sector first.
        let mut s = linux();
        s.push(req(1, 500), 0);
        s.push(req(2, 100), 400 * MS);
        assert_eq!(s.pop(450 * MS, 0).unwrap().block, 100);
        // A is due at exactly 500 ms; Linux's time_after is strict, so still not expired.
        // B was dispatched, next is A (500) but not contiguous: new batch, A from sort order.
        assert_eq!(s.pop(500 * MS, 0).unwrap().block, 500);
    }

    #[test]
    fn a_batch_runs_sixteen_contiguous_requests_then_yields_to_an_expired_one() {
        let mut s = linux();
        // FIFO: X (block 9000) first, then 20 contiguous one-block reads at blocks 0..19.
        s.push(req(100, 9000), 0);
        for b in 0..20 {
            s.push(req(b, b), 0);
        }
        // Pops 1..16 at time 0: lowest sector, then contiguous successors. Pop 5 happens at
        // 600 ms, when X has expired, but a running batch does not look at the FIFO.
        let mut got = Vec::new();
        for i in 0..16 {
            let now = if i == 4 { 600 * MS } else { 0 };
            got.push(s.pop(now, 0).unwrap().block);
        }
        assert_eq!(got, (0..16).collect::<Vec<_>>());
        // Batch full (16): a new batch starts with the expired FIFO head X...
        assert_eq!(s.pop(600 * MS, 0).unwrap().block, 9000);
        // ...X has no successor above it, so the next batch checks the FIFO again: the read at
        // block 16 (queued at 0) has expired too.
        assert_eq!(s.pop(600 * MS, 0).unwrap().block, 16);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn writes_get_a_batch_after_two_read_batches() {
        // Reads at 0, 100, 200 and a write at 50; nothing expires.
        let mut s = linux();
        for (id, b) in [(1, 0), (2, 100), (3, 200)] {
            s.push(req(id, b), 0);
        }
        s.push(write(4, 50), 0);
        let order: Vec<(u64, bool)> = std::iter::from_fn(|| s.pop(0, 0).map(|r| (r.block, r.write))).collect();
        // starved 0 -> read batch {0}; starved 1 -> read batch {100} (not contiguous with 0,
        // so one request); starved reached 2 -> write batch {50}; then reads again from the
        // lowest remaining sector.
        assert_eq!(order, [(0, false), (100, false), (50, true), (200, false)]);
    }

    #[test]
    fn contiguous_writes_batch_and_reads_wait_only_until_starvation() {
        let mut s = linux();
        for b in 0..4 {
            s.push(write(10 + b, 1000 + b), 0);
        }
        s.push(req(1, 5), 0);
        s.push(req(2, 7), 0);
        let order: Vec<u64> = std::iter::from_fn(|| s.pop(0, 0).map(|r| r.block)).collect();
        // Read 5 (starved 0->1); read 7 is not contiguous: new batch, starved 1->2, read 7;
        // then the writes in one contiguous batch.
        assert_eq!(order, [5, 7, 1000, 1001, 1002, 1003]);
    }
}
