//! Count mode: requests split into block accesses, placed by the layout, driven through the
//! cache, with optional read-ahead and I/O clustering. No clock; hits, misses, prefetches and
//! disk requests as fast as the hardware allows.

use bufsim_trace::Request;
use rustc_hash::FxHashMap;

use crate::cache::{Cache, Demand};
use crate::cluster::{Clusterer, DiskRequest, RequestSizes};
use crate::layout::{block_key, Layout};
use crate::policy::{Access, Frame, Policy, NEVER};
use crate::prefetch::{AnyReadAhead, BlockEvent, Plan};

/// How requests become block accesses and disk requests.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Bytes per cache block (4 KiB by default).
    pub block_size: u64,
    /// Drop write requests instead of treating them as cache accesses.
    pub reads_only: bool,
    /// Largest disk request the clusterer forms, in bytes (64 KiB by default, §2.1).
    pub cluster_bytes: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { block_size: 4096, reads_only: false, cluster_bytes: 64 * 1024 }
    }
}

/// Counters of one run. `hits + misses == accesses` always.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests simulated (after `reads_only` filtering).
    pub requests: u64,
    /// Demand block accesses.
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub write_accesses: u64,
    pub write_misses: u64,
    /// Blocks given up to make room.
    pub evictions: u64,
    /// Disk read requests after clustering, and how many were synchronous (held a demand miss)
    /// or asynchronous (read-ahead only).
    pub disk_requests: u64,
    pub sync_requests: u64,
    pub async_requests: u64,
    /// Blocks read from disk (demand read misses plus blocks read ahead).
    pub blocks_read: u64,
    /// Blocks inserted by read-ahead.
    pub prefetched: u64,
    /// First demand accesses to blocks read ahead (hits thanks to prefetching).
    pub prefetch_hits: u64,
    /// Blocks read ahead and evicted before any demand access.
    pub prefetched_unused: u64,
    /// Disk requests by size in blocks (DULO's sequence-size distribution).
    pub request_sizes: RequestSizes,
}

impl Stats {
    pub fn hit_ratio(&self) -> f64 {
        if self.accesses == 0 { 0.0 } else { self.hits as f64 / self.accesses as f64 }
    }
}

/// Calls `f(device, device_block)` for every block `r` touches, in order.
#[inline]
pub fn for_each_block(r: &Request, cfg: &EngineConfig, layout: &Layout, mut f: impl FnMut(u16, u64)) {
    let (first, n) = r.block_range(cfg.block_size);
    for b in first..first + n {
        let (dev, blk) = layout.place(r.file, b);
        f(dev, blk);
    }
}

/// Whether the engine simulates this request at all.
#[inline]
pub fn included(r: &Request, cfg: &EngineConfig) -> bool {
    !(cfg.reads_only && r.op.is_write())
}

/// What OPT knows of the future: the next-use time of every demand access, and the first use
/// of every block (for blocks read ahead before their first demand).
#[derive(Default)]
pub struct Future {
    pub next_use: Vec<u64>,
    pub first_use: FxHashMap<u64, u64>,
}

/// Read-ahead for a run: the algorithm and the size of every file (it never reads past the end).
pub struct Prefetching<'a> {
    pub readahead: AnyReadAhead,
    /// Blocks of each file (block traces: of each device), indexed by `Request::file`.
    pub file_blocks: &'a [u64],
}

impl Prefetching<'_> {
    /// Tells the read-ahead algorithm of a demand access to block `b` of `r`'s file (`r` spans
    /// `n` blocks from `first`) and returns what to fetch, if anything. Both engines call this;
    /// only timed mode ever sees a block whose I/O is `in_flight`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_access(&mut self, r: &Request, b: u64, first: u64, n: u64, miss: bool, in_flight: bool, by_prefetch: bool) -> Option<Plan> {
        let ev = BlockEvent {
            file: r.file,
            block: b,
            file_blocks: self.file_blocks.get(r.file as usize).copied().unwrap_or(0),
            miss,
            in_flight,
            by_prefetch,
            request_first: first,
            request_blocks: n,
        };
        self.readahead.on_access(&ev)
    }
}

pub struct Engine<'a, P: Policy> {
    pub cache: Cache<P>,
    cfg: EngineConfig,
    layout: &'a Layout,
    future: Option<&'a [u64]>,
    /// Next demand time of every block, advanced as the trace is consumed (OPT with read-ahead).
    next_occurrence: Option<FxHashMap<u64, u64>>,
    prefetching: Option<Prefetching<'a>>,
    clusterer: Clusterer,
    /// Frames pinned while one read-ahead plan is carried out (reused: no allocation).
    group: Vec<Frame>,
    pub stats: Stats,
    time: u64,
    /// Told the outcome of every demand access (analyses such as the MQ paper's Table 3).
    observer: Option<&'a mut dyn FnMut(&Access, bool)>,
    /// Expected service time of each device id, for storage-aware policies' wait times in
    /// count mode (empty: the policy is not told about disk requests).
    expected: Vec<bufsim_device::ExpectedService>,
    expected_fallback: bufsim_device::ExpectedService,
}

impl<'a, P: Policy> Engine<'a, P> {
    pub fn new(policy: P, capacity: usize, cfg: EngineConfig, layout: &'a Layout, future: Option<&'a Future>) -> Self {
        let cluster_blocks = (cfg.cluster_bytes / cfg.block_size.max(1)).max(1);
        Engine {
            cache: Cache::new(policy, capacity),
            cfg,
            layout,
            future: future.map(|f| f.next_use.as_slice()),
            next_occurrence: None,
            prefetching: None,
            clusterer: Clusterer::new(cluster_blocks),
            group: Vec::new(),
            stats: Stats::default(),
            time: 0,
            observer: None,
            expected: Vec::new(),
            expected_fallback: bufsim_device::ExpectedService::default(),
        }
    }

    /// Tells the policy about the storage ([`Policy::storage`]) and, since count mode has no
    /// clock, reports every disk read to it as waited for its device's expected service time
    /// ([`Policy::device_done`], with logical time as `now`).
    pub fn with_storage(mut self, view: crate::policy::storage::StorageView) -> Self {
        self.cache.policy.storage(&view);
        // Devices the view does not list cost what the first listed one (or timed mode's
        // default device) costs.
        self.expected_fallback = view.devices.first().map(|d| d.expected).unwrap_or_else(|| {
            bufsim_device::build_device(crate::timed::DEFAULT_DEVICE, 0).map(|d| d.expected_service()).unwrap_or_default()
        });
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
        self
    }

    /// Turns read-ahead on. With OPT (`future` given at construction), blocks read ahead carry
    /// the time of their next demand access.
    pub fn with_prefetching(mut self, p: Prefetching<'a>, future: Option<&'a Future>) -> Self {
        if let Some(f) = future {
            self.next_occurrence = Some(f.first_use.clone());
        }
        self.prefetching = Some(p);
        self
    }

    #[inline]
    fn issue(&mut self, r: Option<DiskRequest>) {
        if let Some(r) = r {
            if !self.expected.is_empty() {
                let e = self.expected.get(r.device as usize).unwrap_or(&self.expected_fallback);
                let wait = e.ns(r.blocks, self.cfg.block_size).round() as u64;
                self.cache.policy.device_done(r.device, wait, self.time);
            }
            self.stats.disk_requests += 1;
            self.stats.blocks_read += r.blocks;
            self.stats.request_sizes.add(r.blocks);
            if r.sync {
                self.stats.sync_requests += 1;
            } else {
                self.stats.async_requests += 1;
            }
        }
    }

    #[inline]
    fn read_block(&mut self, device: u16, block: u64, sync: bool) {
        let done = self.clusterer.add(device, block, sync);
        self.issue(done);
    }

    /// Simulates one request.
    #[inline]
    pub fn request(&mut self, r: &Request) {
        if !included(r, &self.cfg) {
            return;
        }
        self.stats.requests += 1;
        let write = r.op.is_write();
        let (first, n) = r.block_range(self.cfg.block_size);
        for b in first..first + n {
            let (device, block) = self.layout.place(r.file, b);
            let key = block_key(device, block);
            let next_use = match self.future {
                Some(f) => f[self.time as usize],
                None => NEVER,
            };
            if let Some(occ) = &mut self.next_occurrence {
                occ.insert(key, next_use);
            }
            let a = Access { key, device, block, time: self.time, ctx: r.ctx, pid: r.pid, write, next_use, cost: 1.0 };
            let outcome = self.cache.demand(&a);
            let hit = matches!(outcome, Demand::Hit | Demand::PrefetchHit);
            self.stats.accesses += 1;
            self.stats.hits += hit as u64;
            self.stats.misses += !hit as u64;
            self.stats.write_accesses += write as u64;
            self.stats.write_misses += (write && !hit) as u64;
            self.stats.prefetch_hits += (outcome == Demand::PrefetchHit) as u64;
            if let Some(f) = self.observer.as_mut() {
                f(&a, hit);
            }
            // Writes overwrite whole blocks in this model: a write miss reads nothing.
            if !write {
                if !hit {
                    self.read_block(device, block, true);
                }
                if self.prefetching.is_some() {
                    self.read_ahead(r, b, first, n, !hit, &a);
                }
            }
            self.time += 1;
        }
        let last = self.clusterer.flush();
        self.issue(last);
    }

    /// Asks the read-ahead algorithm about one demand read and carries out its plan.
    fn read_ahead(&mut self, r: &Request, b: u64, first: u64, n: u64, miss: bool, a: &Access) {
        let frame = self.cache.frame_of(a.key);
        let by_prefetch = !miss && frame.is_some_and(|f| self.cache.by_prefetch(f));
        let p = self.prefetching.as_mut().expect("read_ahead without prefetching");
        if let Some(plan) = p.on_access(r, b, first, n, miss, false, by_prefetch) {
            self.carry_out(plan, r, frame, miss, a);
        }
    }

    /// Reads the blocks of `plan` that are not cached. The demanded block is pinned (its I/O is
    /// in flight). The blocks read ahead with it are pinned too, so they never evict each other
    /// (prefetching paper §4), except under Table 1's rule, where choosing one of them as the
    /// victim ends the plan instead.
    fn carry_out(&mut self, plan: Plan, r: &Request, demanded: Option<Frame>, miss: bool, a: &Access) {
        // Blocks read along with a demand miss share its synchronous disk request.
        let sync = plan.sync && miss;
        let pin_group = !plan.stop_before_group_eviction;
        self.group.clear();
        if let Some(f) = demanded {
            self.cache.pin(f);
        }
        for fb in plan.start..plan.start + plan.len {
            let (device, block) = self.layout.place(r.file, fb);
            let key = block_key(device, block);
            if self.cache.contains(key) {
                if plan.stop_at_cached {
                    break;
                }
                continue;
            }
            let next_use = self.next_occurrence.as_ref().and_then(|m| m.get(&key).copied()).unwrap_or(NEVER);
            let pa = Access { key, device, block, write: false, next_use, ..*a };
            let inserted = if pin_group {
                self.cache.insert(&pa, crate::policy::Origin::Prefetch)
            } else {
                self.cache.insert_unless_evicting(&pa, &self.group)
            };
            let Some(f) = inserted else { break };
            if pin_group {
                self.cache.pin(f);
            }
            self.group.push(f);
            self.stats.prefetched += 1;
            self.read_block(device, block, sync);
        }
        if pin_group {
            for i in 0..self.group.len() {
                let f = self.group[i];
                self.cache.unpin(f);
            }
        }
        if let Some(f) = demanded {
            self.cache.unpin(f);
        }
    }

    /// Hints that `r` will be simulated soon: starts loading the index slot of its first block.
    #[inline]
    pub fn prefetch_hint(&self, r: &Request) {
        let (first, n) = r.block_range(self.cfg.block_size);
        if n > 0 {
            let (device, block) = self.layout.place(r.file, first);
            self.cache.prefetch(block_key(device, block));
        }
    }

    /// Simulates a stream of requests, hinting each one [`LOOKAHEAD`] requests before it runs.
    pub fn run<E>(&mut self, mut next: impl FnMut() -> Result<Option<Request>, E>) -> Result<(), E> {
        let mut ring = [None::<Request>; LOOKAHEAD];
        let mut pending = 0usize;
        let mut ended = false;
        let mut i = 0;
        loop {
            let incoming = if ended { None } else { next()? };
            match &incoming {
                Some(r) => {
                    self.prefetch_hint(r);
                    pending += 1;
                }
                None => ended = true,
            }
            if let Some(r) = std::mem::replace(&mut ring[i], incoming) {
                self.request(&r);
                pending -= 1;
            }
            if ended && pending == 0 {
                return Ok(());
            }
            i = (i + 1) % LOOKAHEAD;
        }
    }

    pub fn finish(self) -> (Stats, Cache<P>) {
        let mut s = self.stats;
        s.evictions = self.cache.evictions;
        s.prefetched_unused = self.cache.evicted_unused;
        (s, self.cache)
    }
}

/// How many requests ahead [`Engine::run`] hints the cache: far enough for a memory load to
/// land, near enough that the hinted lines are still cached when used.
pub const LOOKAHEAD: usize = 8;

/// Builds [`Future`] in one pass over the demand accesses.
#[derive(Default)]
pub struct FutureBuilder {
    last: FxHashMap<u64, u64>,
    future: Future,
}

impl FutureBuilder {
    #[inline]
    pub fn push(&mut self, key: u64) {
        let i = self.future.next_use.len() as u64;
        self.future.next_use.push(NEVER);
        match self.last.insert(key, i) {
            Some(prev) => self.future.next_use[prev as usize] = i,
            None => {
                self.future.first_use.insert(key, i);
            }
        }
    }

    pub fn request(&mut self, r: &Request, cfg: &EngineConfig, layout: &Layout) {
        if included(r, cfg) {
            for_each_block(r, cfg, layout, |d, b| self.push(block_key(d, b)));
        }
    }

    pub fn finish(self) -> Future {
        self.future
    }
}
