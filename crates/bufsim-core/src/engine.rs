//! Count mode: requests split into block accesses, placed by the layout, driven through the
//! cache, with optional read-ahead and I/O clustering. No clock; hits, misses, prefetches and
//! disk requests as fast as the hardware allows.

use bufsim_device::ExpectedService;
use bufsim_trace::{Op, Request};

use crate::access::{self, Demanded, Drive, Step, LOOKAHEAD_POLICY};
use crate::cache::{Cache, Demand};
use crate::cluster::{Clusterer, DiskRequest};
use crate::layout::{block_key, Layout};
use crate::policy::{Access, Frame, Policy};

pub use crate::access::{for_each_block, included, EngineConfig, Future, FutureBuilder, Prefetching, Stats, LOOKAHEAD};

/// Requests [`Engine::run_slice`] runs between two checks of whether memory hints can help.
const HINT_CHECK: usize = 1024;

/// One-block reads [`Engine::run_slice`] took the short way ([`Engine::short_read`]) and how
/// many of them hit: their counters go into the stats once per slice, not once per request.
#[derive(Default)]
struct Tally {
    reads: u64,
    hits: u64,
}

impl Tally {
    #[inline(always)]
    fn count(&mut self, hit: bool) {
        self.reads += 1;
        self.hits += hit as u64;
    }
}

/// Sees every demand access and whether it hit.
pub type Observer<'a> = &'a mut dyn FnMut(&Access, bool);

pub struct Engine<'a, P: Policy> {
    pub cache: Cache<P>,
    step: Step<'a>,
    clusterer: Clusterer,
    pub stats: Stats,
    /// Told the outcome of every demand access (analyses such as the MQ paper's Table 3).
    observer: Option<Observer<'a>>,
    /// Expected service time of each device id, for storage-aware policies' wait times in
    /// count mode (empty: the policy is not told about disk requests).
    expected: Vec<ExpectedService>,
    expected_fallback: ExpectedService,
    /// Every per-access option is off (no read-ahead, observer or future) and the layout keeps
    /// a request's blocks together, and no hint has read blocks ahead: requests take
    /// [`Engine::plain_blocks`], which decides all that once per request instead of once per
    /// block.
    plain: bool,
    /// The cache's capacity over the trace ([`Engine::with_capacity_steps`]): (request index,
    /// blocks), in index order; `next_step` is the next to apply.
    steps: Vec<(u64, u64)>,
    next_step: usize,
    /// Requests until the next step is due, counted down by every request (those the engine
    /// leaves out too); `u64::MAX` when none is left, so a run without steps pays one decrement
    /// and one compare per request.
    until_step: u64,
}

impl<'a, P: Policy> Engine<'a, P> {
    pub fn new(policy: P, capacity: usize, cfg: EngineConfig, layout: &'a Layout, future: Option<&'a Future>) -> Self {
        Engine {
            cache: Cache::new(policy, capacity),
            step: Step::new(cfg, layout, future),
            clusterer: Clusterer::new(cfg.cluster_blocks()),
            stats: Stats::default(),
            observer: None,
            expected: Vec::new(),
            expected_fallback: ExpectedService::default(),
            plain: future.is_none() && layout.contiguous(),
            steps: Vec::new(),
            next_step: 0,
            until_step: u64::MAX,
        }
    }

    /// Gives the cache `initial` blocks (at most what it was built with) and changes its
    /// capacity as the trace goes: from the request with index `i` (0-based, every request of
    /// the trace counted) on it holds `blocks`, for each `(i, blocks)` of `steps` (increasing
    /// indices). A fall evicts at once, the policy choosing the victims; a rise lets the
    /// next insertions fill the cache ([`Cache::set_capacity`]).
    pub fn with_capacity_steps(mut self, initial: u64, steps: &[(u64, u64)]) -> Self {
        debug_assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "steps in increasing request order");
        if initial as usize != self.cache.capacity() {
            let a = Access { time: self.step.time, ..Access::default() };
            self.cache.set_capacity(initial as usize, &a);
        }
        self.steps = steps.to_vec();
        self.next_step = 0;
        self.until_step = steps.first().map_or(u64::MAX, |&(i, _)| i.saturating_add(1));
        self
    }

    /// Applies the step due at this request and counts down to the next.
    #[cold]
    #[inline(never)]
    fn capacity_step(&mut self) {
        let Some(&(index, blocks)) = self.steps.get(self.next_step) else {
            self.until_step = u64::MAX;
            return;
        };
        let a = Access { time: self.step.time, ..Access::default() };
        self.cache.set_capacity(blocks as usize, &a);
        self.next_step += 1;
        self.until_step = self.steps.get(self.next_step).map_or(u64::MAX, |&(next, _)| next - index);
    }

    /// Tells the policy about the storage ([`Policy::storage`]) and, since count mode has no
    /// clock, reports every disk read to it as waited for its device's expected service time
    /// ([`Policy::device_done`], with logical time as `now`). Devices the view does not list
    /// cost what the first listed one costs, or `unlisted` if it lists none.
    pub fn with_storage(mut self, view: crate::policy::storage::StorageView, unlisted: ExpectedService) -> Self {
        self.cache.policy.storage(&view);
        self.expected_fallback = view.devices.first().map_or(unlisted, |d| d.expected);
        let len = view.devices.iter().map(|d| d.device as usize + 1).max().unwrap_or(0);
        self.expected = vec![self.expected_fallback; len.max(1)];
        for d in &view.devices {
            self.expected[d.device as usize] = d.expected;
        }
        self
    }

    /// Calls `f(access, hit)` for every demand block access, in order.
    pub fn with_observer(mut self, f: &'a mut dyn FnMut(&Access, bool)) -> Self {
        self.observer = Some(f);
        self.plain = false;
        self
    }

    /// Turns read-ahead on. With OPT (`future` given at construction), blocks read ahead carry
    /// the time of their next demand access.
    pub fn with_prefetching(mut self, p: Prefetching<'a>, future: Option<&'a Future>) -> Self {
        self.step.set_prefetching(p, future);
        self.plain = false;
        self
    }

    #[inline]
    fn issue(&mut self, r: Option<DiskRequest>) {
        if let Some(r) = r {
            self.report_read(r.device, r.blocks);
            self.stats.disk_read(r.blocks, r.sync);
        }
    }

    /// Tells the policy that a disk read of `blocks` blocks from `device` waited its device's
    /// expected service time, when the policy was told about the storage ([`Engine::with_storage`]).
    #[inline]
    fn report_read(&mut self, device: u16, blocks: u64) {
        if !self.expected.is_empty() {
            let e = self.expected.get(device as usize).unwrap_or(&self.expected_fallback);
            let wait = e.ns(blocks, self.step.cfg.block_size).round() as u64;
            self.cache.policy.device_done(device, wait, self.step.time);
            while self.cache.reallocate_one().is_some() {}
        }
    }

    #[inline]
    fn read_block(&mut self, device: u16, block: u64, sync: bool) {
        let done = self.clusterer.add(device, block, sync);
        self.issue(done);
    }

    /// Simulates one request.
    #[inline(always)]
    pub fn request(&mut self, r: &Request) {
        self.until_step -= 1;
        if self.until_step == 0 {
            self.capacity_step();
        }
        if !r.op.is_access() {
            if r.op.is_drop() {
                access::drop_range(self, r);
            } else {
                // Blocks a hint reads are demanded later as prefetch hits, which the plain
                // path does not count: from here on every request takes the full one.
                self.plain = false;
                access::hint_range(self, r);
                let last = self.clusterer.flush();
                self.issue(last);
            }
            return;
        }
        if !included(r, &self.step.cfg) {
            return;
        }
        self.stats.requests += 1;
        if self.plain {
            self.plain_blocks(r);
        } else {
            access::blocks(self, r);
        }
        let last = self.clusterer.flush();
        self.issue(last);
    }

    /// The run's read-ahead algorithm (its decision log, for `bufsim validate`).
    pub fn readahead(&self) -> Option<&crate::prefetch::AnyReadAhead> {
        self.step.readahead()
    }

    /// [`access::blocks`] when [`Engine::plain`] holds: the same accesses, counters and disk
    /// reads, with placement and the option checks done once per request, and the counters
    /// that follow from the hits added once per request. Always inlined into the request
    /// loop: as a call it saved and restored six registers per request.
    #[inline(always)]
    fn plain_blocks(&mut self, r: &Request) {
        let write = r.op.is_write();
        let (first, n) = r.block_range(self.step.cfg.block_size);
        if n == 0 {
            return;
        }
        let (device, start) = self.step.layout.place(r.file, first);
        // One access for the whole request, its block and time advanced in the loop: the
        // fields the request fixes are written once, not once per block.
        let mut a = Access {
            key: 0,
            device,
            block: start,
            time: self.step.time,
            ctx: r.ctx,
            pid: r.pid,
            write,
            ..Access::default()
        };
        let mut hits = 0;
        for i in 0..n {
            let block = start.wrapping_add(i);
            a.key = block_key(device, block);
            a.block = block;
            a.time = self.step.time;
            let outcome = self.cache.demand(&a);
            // Only read-ahead inserts blocks not yet demanded, and it is off.
            debug_assert!(outcome != Demand::PrefetchHit);
            let hit = outcome == Demand::Hit;
            hits += hit as u64;
            // Writes overwrite whole blocks in this model: a write miss reads nothing.
            if !write && !hit {
                if n == 1 {
                    // Nothing is queued between requests, so a one-block request's read is a
                    // disk request of its own: what the clusterer would queue and the flush
                    // after this request would issue, without the round trip through it.
                    self.issue(Some(DiskRequest { device, start: block, blocks: 1, sync: true }));
                } else {
                    self.read_block(device, block, true);
                }
            }
            self.step.time += 1;
        }
        self.stats.record_request(n, hits, write);
    }

    /// Simulates requests held in memory, hinting each one [`LOOKAHEAD`] requests before it
    /// runs; `each` is called once per request taken (progress).
    pub fn run_slice(&mut self, requests: &[Request], mut each: impl FnMut()) {
        // Whether hints can help is asked once every HINT_CHECK requests, not twice a request:
        // the index only grows, and a hint never changes a result. Each request's first key is
        // placed once for both hints: `keys[j % LOOKAHEAD]` holds request j's from its index
        // hint, LOOKAHEAD requests before it runs, until it runs.
        let len = requests.len();
        let mut keys = [None::<u64>; LOOKAHEAD];
        let mut warming = false;
        let mut short = self.takes_short_reads();
        let mut tally = Tally::default();
        let mut start = 0;
        while start < len {
            let end = (start + HINT_CHECK).min(len);
            let now = self.cache.worth_warming();
            if now && !warming {
                // Hints start here: the requests up to LOOKAHEAD ahead get their index hints.
                for j in start..(start + LOOKAHEAD).min(len) {
                    keys[j % LOOKAHEAD] = self.hint_index(&requests[j]);
                }
            }
            warming = now;
            if !warming {
                for r in &requests[start..end] {
                    each();
                    self.run_one(r, &mut short, &mut tally);
                }
                start = end;
                continue;
            }
            for i in start..end {
                each();
                if let Some(ahead) = requests.get(i + LOOKAHEAD) {
                    keys[i % LOOKAHEAD] = self.hint_index(ahead);
                }
                if let Some(key) = keys[(i + LOOKAHEAD_POLICY) % LOOKAHEAD].filter(|_| i + LOOKAHEAD_POLICY < len) {
                    self.cache.warm_policy(key);
                }
                self.run_one(&requests[i], &mut short, &mut tally);
            }
            start = end;
        }
        self.stats.record_short_reads(tally.reads, tally.hits);
    }

    /// One-block reads of device 0, of each of `blocks` in turn, with no context or process:
    /// the run [`Engine::run_slice`] makes of such read requests, for a reader that hands only
    /// their block numbers (an oracleGeneral trace's). Only while [`Engine::takes_short_reads`]
    /// holds. Memory hints as in [`Engine::run_slice`], the keys being the blocks themselves.
    pub fn run_blocks(&mut self, blocks: &[u64]) {
        debug_assert!(self.takes_short_reads());
        let mut tally = Tally::default();
        let warming = self.cache.worth_warming();
        for (i, &block) in blocks.iter().enumerate() {
            if warming {
                if let Some(&ahead) = blocks.get(i + LOOKAHEAD) {
                    self.cache.warm(ahead);
                }
                if let Some(&soon) = blocks.get(i + LOOKAHEAD_POLICY) {
                    self.cache.warm_policy(soon);
                }
            }
            let hit = self.short_read(block, 0, 0);
            tally.count(hit);
        }
        self.stats.record_short_reads(tally.reads, tally.hits);
    }

    /// [`Engine::request`], the short way for a one-block read while `short` holds
    /// ([`Engine::takes_short_reads`]); a request that turns the plain path off (a hint) turns
    /// `short` off with it.
    #[inline(always)]
    fn run_one(&mut self, r: &Request, short: &mut bool, tally: &mut Tally) {
        if *short && r.op == Op::Read && r.in_blocks && r.size == 1 && r.file == 0 {
            let hit = self.short_read(r.offset, r.ctx, r.pid);
            tally.count(hit);
        } else {
            self.request(r);
            *short &= self.plain;
        }
    }

    /// Whether one-block reads may skip [`Engine::request`]'s general path for
    /// [`Engine::short_read`]: the plain path, the identity layout (a block number is its cache
    /// key), and no capacity step to come (no countdown to keep). Each such read is then one
    /// access, and on a miss one disk request of one block, whose counters can be summed once
    /// per slice.
    pub fn takes_short_reads(&self) -> bool {
        self.plain && matches!(self.step.layout, Layout::Identity) && self.next_step >= self.steps.len()
    }

    /// A read of `block` of device 0 (context `ctx`, process `pid`) when
    /// [`Engine::takes_short_reads`] holds: what [`Engine::request`] does for it, less the
    /// counters ([`Stats::record_short_reads`]). Returns whether it hit.
    #[inline(always)]
    fn short_read(&mut self, block: u64, ctx: u64, pid: u32) -> bool {
        let a =
            Access { key: block, device: 0, block, time: self.step.time, ctx, pid, write: false, ..Access::default() };
        let outcome = self.cache.demand(&a);
        debug_assert!(outcome != Demand::PrefetchHit);
        debug_assert_eq!(a.key, block_key(0, block));
        let hit = outcome == Demand::Hit;
        if !hit {
            self.report_read(0, 1);
        }
        self.step.time += 1;
        hit
    }

    /// Starts loading the index slot of `r`'s first block; returns that block's key, for the
    /// hint's second step ([`Cache::warm_policy`]).
    #[inline]
    fn hint_index(&self, r: &Request) -> Option<u64> {
        let key = access::first_key(self.step.layout, self.step.cfg.block_size, r);
        if let Some(k) = key {
            self.cache.warm(k);
        }
        key
    }

    pub fn finish(self) -> (Stats, Cache<P>) {
        let mut s = self.stats;
        s.evictions = self.cache.evictions;
        s.prefetched_unused = self.cache.evicted_unused;
        s.dropped = self.cache.dropped;
        s.cache_steps_unreached = (self.steps.len() - self.next_step) as u64;
        (s, self.cache)
    }
}

impl<'a, P: Policy> Drive<'a> for Engine<'a, P> {
    type P = P;

    #[inline]
    fn step(&mut self) -> &mut Step<'a> {
        &mut self.step
    }

    #[inline]
    fn cache(&mut self) -> &mut Cache<P> {
        &mut self.cache
    }

    #[inline]
    fn stats(&mut self) -> &mut Stats {
        &mut self.stats
    }

    #[inline]
    fn demand(&mut self, a: &Access) -> Demanded {
        let outcome = self.cache.demand(a);
        let hit = matches!(outcome, Demand::Hit | Demand::PrefetchHit);
        if let Some(f) = self.observer.as_mut() {
            f(a, hit);
        }
        // Writes overwrite whole blocks in this model: a write miss reads nothing.
        if !a.write && !hit {
            self.read_block(a.device, a.block, true);
        }
        Demanded { outcome, hit, in_flight: false }
    }

    #[inline]
    fn hold(&self, _frame: Frame) -> bool {
        true
    }

    #[inline]
    fn fetched(&mut self, frame: Frame, device: u16, block: u64, sync: bool, pin_group: bool) {
        if pin_group {
            self.cache.pin(frame);
        }
        self.read_block(device, block, sync);
    }

    #[inline]
    fn insert_unless_evicting(&mut self, a: &Access) -> Option<Frame> {
        self.cache.insert_unless_evicting(a, &self.step.group)
    }

    #[inline]
    fn plan_done(&mut self, pin_group: bool) {
        if pin_group {
            for &f in &self.step.group {
                self.cache.unpin(f);
            }
        }
    }

    #[inline]
    fn dropping(&mut self, _frame: Frame) -> bool {
        // Nothing is in flight between requests in count mode.
        true
    }
}
