//! The access step both engines share: a request split into block accesses, each placed by the
//! layout, given to the cache, counted, and told to read-ahead, whose plan is carried out here.
//!
//! Count mode ([`crate::engine`]) and timed mode ([`crate::timed`]) differ only in what a
//! demand access and a block read do to their I/O state: they say so through [`Drive`], and
//! everything else (placement, OPT's future, counters, read-ahead plans and the pinning rules
//! of the prefetching paper §4) is written once, here.

use bufsim_trace::Request;
use rustc_hash::FxHashMap;

use crate::cache::{Cache, Demand};
use crate::cluster::RequestSizes;
use crate::layout::{block_key, Layout};
use crate::policy::{Access, Frame, Origin, Policy, NEVER};
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

impl EngineConfig {
    /// Blocks in the largest disk request the clusterer forms (at least one).
    pub fn cluster_blocks(&self) -> u64 {
        (self.cluster_bytes / self.block_size.max(1)).max(1)
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
    /// Cached blocks whose data the trace dropped (truncated or deleted files).
    pub dropped: u64,
    /// First demand accesses to blocks read ahead (hits thanks to prefetching).
    pub prefetch_hits: u64,
    /// Blocks read ahead and evicted before any demand access.
    pub prefetched_unused: u64,
    /// Disk requests by size in blocks (DULO's sequence-size distribution).
    pub request_sizes: RequestSizes,
    /// Cache steps whose request index the trace never reached: they never applied.
    pub cache_steps_unreached: u64,
}

impl Stats {
    pub fn hit_ratio(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.hits as f64 / self.accesses as f64
        }
    }

    /// Counts one demand access that the cache answered with `outcome` and that the engine
    /// judged a hit or not (timed mode: a block still in flight is a miss, whatever the cache
    /// found).
    #[inline]
    fn record(&mut self, outcome: Demand, hit: bool, write: bool) {
        self.accesses += 1;
        self.hits += hit as u64;
        self.misses += !hit as u64;
        self.write_accesses += write as u64;
        self.write_misses += (write && !hit) as u64;
        self.prefetch_hits += (outcome == Demand::PrefetchHit && hit) as u64;
    }

    /// Counts `n` demand accesses of one request, `hits` of them hits, none of a block read
    /// ahead: [`Stats::record`] added once per request (the engine's plain path). Every
    /// per-access counter is kept by these two.
    #[inline]
    pub(crate) fn record_request(&mut self, n: u64, hits: u64, write: bool) {
        self.accesses += n;
        self.hits += hits;
        self.misses += n - hits;
        if write {
            self.write_accesses += n;
            self.write_misses += n - hits;
        }
    }

    /// Counts `reads` one-block read requests, `hits` of which hit: each miss read its block
    /// in a disk request of its own, synchronous and one block long.
    #[inline]
    pub(crate) fn record_short_reads(&mut self, reads: u64, hits: u64) {
        let misses = reads - hits;
        self.requests += reads;
        self.record_request(reads, hits, false);
        self.disk_requests += misses;
        self.sync_requests += misses;
        self.blocks_read += misses;
        self.request_sizes.add(1, misses);
    }

    /// Counts one disk read request.
    #[inline]
    pub(crate) fn disk_read(&mut self, blocks: u64, sync: bool) {
        self.disk_requests += 1;
        self.blocks_read += blocks;
        self.request_sizes.add(blocks, 1);
        if sync {
            self.sync_requests += 1;
        } else {
            self.async_requests += 1;
        }
    }
}

/// Calls `f(device, device_block)` for every block `r` accesses, in order (a drop or a hint
/// accesses none).
#[inline]
pub fn for_each_block(r: &Request, cfg: &EngineConfig, layout: &Layout, mut f: impl FnMut(u16, u64)) {
    if !r.op.is_access() {
        return;
    }
    let (first, n) = r.block_range(cfg.block_size);
    for b in first..first + n {
        let (dev, blk) = layout.place(r.file, b);
        f(dev, blk);
    }
}

/// Whether the engine simulates this request at all (drops always: they are not writes).
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

/// Read-ahead for a run: the algorithm and the size of every file (it never reads past the end).
pub struct Prefetching<'a> {
    pub readahead: AnyReadAhead,
    /// Blocks of each file (block traces: of each device), indexed by `Request::file`.
    pub file_blocks: &'a [u64],
    /// Bytes per block (read-ahead sizes some windows from a request's bytes).
    pub block_size: u64,
    /// Where each file ends since the trace truncated it (a drop of size 0), grown by the
    /// writes after; [`NOT_TRUNCATED`] for a file never truncated, which keeps its size.
    truncated: Vec<u64>,
}

const NOT_TRUNCATED: u64 = u64::MAX;

impl<'a> Prefetching<'a> {
    pub fn new(readahead: AnyReadAhead, file_blocks: &'a [u64], block_size: u64) -> Self {
        Prefetching { readahead, file_blocks, block_size, truncated: Vec::new() }
    }

    /// Blocks of `file` now: its size, or where it ends since it was truncated. Linux reads
    /// ahead no further than the file's size at the time (mm/readahead.c), and a file truncated
    /// and written again is read while it is shorter than it ends up.
    #[inline]
    pub fn blocks_of(&self, file: u32) -> u64 {
        let n = self.file_blocks.get(file as usize).copied().unwrap_or(0);
        match self.truncated.get(file as usize) {
            Some(&t) if t != NOT_TRUNCATED => t.min(n),
            _ => n,
        }
    }

    /// `file` was truncated to `blocks` blocks.
    fn truncate(&mut self, file: u32, blocks: u64) {
        let f = file as usize;
        if self.truncated.len() <= f {
            self.truncated.resize(f + 1, NOT_TRUNCATED);
        }
        self.truncated[f] = blocks;
    }

    /// A read or write reached block `end` (exclusive) of `file`: a truncated file is at least
    /// that long now (written there, or read from there: its data exists).
    #[inline]
    fn reached(&mut self, file: u32, end: u64) {
        if let Some(t) = self.truncated.get_mut(file as usize) {
            if *t != NOT_TRUNCATED {
                *t = (*t).max(end);
            }
        }
    }

    /// Tells the read-ahead algorithm of a demand access to block `b` of `r`'s file (`r` spans
    /// `n` blocks from `first`) and returns what to fetch, if anything. Only timed mode ever
    /// sees a block whose I/O is `in_flight`.
    #[allow(clippy::too_many_arguments)]
    pub fn on_access(
        &mut self,
        r: &Request,
        b: u64,
        first: u64,
        n: u64,
        end: u64,
        miss: bool,
        in_flight: bool,
        by_prefetch: bool,
        cached: &dyn Fn(u64) -> bool,
    ) -> Option<Plan> {
        let bs = self.block_size.max(1);
        let request_bytes = if r.in_blocks { n * self.block_size } else { r.offset % bs + r.size };
        let asked = if r.in_blocks || r.unfilled == 0 {
            n
        } else {
            (r.offset + r.size).saturating_add(r.unfilled as u64).div_ceil(bs) - first
        };
        let ev = BlockEvent {
            file: r.file,
            pid: r.pid,
            opened: r.opened && b == first,
            block: b,
            file_blocks: self.blocks_of(r.file),
            miss,
            in_flight,
            by_prefetch,
            request_first: first,
            request_blocks: n,
            request_asked_blocks: asked,
            request_end: end,
            request_bytes,
            block_size: self.block_size,
        };
        self.readahead.on_access(&ev, cached)
    }
}

/// How many requests ahead the engines hint the cache: far enough for a memory load to land,
/// near enough that the hinted lines are still cached when used.
pub const LOOKAHEAD: usize = 8;

/// Starts loading the cache index slot of `r`'s first block, a few requests before `r` runs,
/// unless the index is small enough to be in the CPU's caches already.
#[inline]
pub fn warm<P: Policy>(cache: &Cache<P>, layout: &Layout, block_size: u64, r: &Request) {
    if cache.worth_warming() {
        if let Some(key) = first_key(layout, block_size, r) {
            cache.warm(key);
        }
    }
}

/// The key of `r`'s first block, if it has one: what the hints start from.
#[inline]
pub(crate) fn first_key(layout: &Layout, block_size: u64, r: &Request) -> Option<u64> {
    let (first, n) = r.block_range(block_size);
    (n > 0).then(|| {
        let (device, block) = layout.place(r.file, first);
        block_key(device, block)
    })
}

/// How many requests ahead the engines take the second step of a hint ([`warm_policy`]): the
/// index slot warmed [`LOOKAHEAD`] requests ahead has had time to arrive.
pub const LOOKAHEAD_POLICY: usize = LOOKAHEAD / 2;

/// What both engines keep to turn requests into block accesses.
pub struct Step<'a> {
    pub cfg: EngineConfig,
    pub layout: &'a Layout,
    future: Option<&'a [u64]>,
    /// Next demand time of every block, advanced as the trace is consumed (OPT with read-ahead).
    next_occurrence: Option<FxHashMap<u64, u64>>,
    prefetching: Option<Prefetching<'a>>,
    /// Frames read ahead by the plan being carried out (reused: no allocation).
    pub group: Vec<Frame>,
    /// Logical time: demand block accesses so far.
    pub time: u64,
}

impl<'a> Step<'a> {
    pub fn new(cfg: EngineConfig, layout: &'a Layout, future: Option<&'a Future>) -> Self {
        Step {
            cfg,
            layout,
            future: future.map(|f| f.next_use.as_slice()),
            next_occurrence: None,
            prefetching: None,
            group: Vec::new(),
            time: 0,
        }
    }

    /// Turns read-ahead on. With OPT (`future` given), blocks read ahead carry the time of
    /// their next demand access.
    pub fn set_prefetching(&mut self, p: Prefetching<'a>, future: Option<&'a Future>) {
        if let Some(f) = future {
            self.next_occurrence = Some(f.first_use.clone());
        }
        self.prefetching = Some(p);
    }

    /// The read-ahead algorithm of the run, if any.
    pub fn readahead(&self) -> Option<&crate::prefetch::AnyReadAhead> {
        self.prefetching.as_ref().map(|p| &p.readahead)
    }

    /// The demand access to block `b` of `r`'s file, at the current logical time.
    #[inline]
    fn access(&mut self, r: &Request, b: u64, write: bool) -> Access {
        let (device, block) = self.layout.place(r.file, b);
        let key = block_key(device, block);
        let next_use = match self.future {
            Some(f) => f[self.time as usize],
            None => NEVER,
        };
        if let Some(occ) = &mut self.next_occurrence {
            occ.insert(key, next_use);
        }
        Access { key, device, block, time: self.time, ctx: r.ctx, pid: r.pid, write, next_use, ..Access::default() }
    }
}

/// What a demand access found, as the engine judges it.
#[derive(Clone, Copy)]
pub struct Demanded {
    pub outcome: Demand,
    /// Counted as a hit (timed mode: not if an earlier request's I/O for it is in flight).
    pub hit: bool,
    /// The block's I/O was in flight (timed mode only).
    pub in_flight: bool,
}

impl Demanded {
    /// Whether the block was resident (possibly still arriving) when demanded.
    #[inline]
    fn resident(&self) -> bool {
        matches!(self.outcome, Demand::Hit | Demand::PrefetchHit)
    }
}

/// An engine's side of the access step: how it reaches the shared state, and what a demand
/// access and a block read ahead do to its I/O.
pub trait Drive<'a> {
    type P: Policy;

    fn step(&mut self) -> &mut Step<'a>;
    fn cache(&mut self) -> &mut Cache<Self::P>;
    fn stats(&mut self) -> &mut Stats;

    /// Looks up `a` in the cache and starts whatever read it needs.
    fn demand(&mut self, a: &Access) -> Demanded;

    /// Whether the demanded block `frame` must be pinned while its read-ahead is carried out
    /// (timed mode: not when its I/O in flight pins it already).
    fn hold(&self, frame: Frame) -> bool;

    /// Read-ahead inserted block (`device`, `block`) in `frame`: read it, as part of the
    /// synchronous request when `sync`. `pin_group`: blocks read together must not evict each
    /// other for the rest of the plan.
    fn fetched(&mut self, frame: Frame, device: u16, block: u64, sync: bool, pin_group: bool);

    /// Inserts a block read ahead unless the victim is one of the plan's group (Table 1's
    /// rule, [`Cache::insert_unless_evicting`]).
    fn insert_unless_evicting(&mut self, a: &Access) -> Option<Frame>;

    /// The plan is carried out: lift what [`Drive::fetched`] pinned for it alone.
    fn plan_done(&mut self, pin_group: bool);

    /// The trace drops the data of the cached block in `frame`: whether it may leave now
    /// (timed mode keeps a block whose read is in flight, and forgets that it was written).
    fn dropping(&mut self, frame: Frame) -> bool;
}

/// Carries out a drop request ([`bufsim_trace::Op::Drop`]: a file truncated, deleted or
/// punched): every cached block of its range leaves the cache unless the engine keeps it
/// ([`Drive::dropping`]), and the policy forgets what it remembers of the others. Not an
/// access: neither counted nor timed.
pub fn drop_range<'a, D: Drive<'a>>(d: &mut D, r: &Request) {
    let layout = d.step().layout;
    let (first, end) = layout.dropped_blocks(r, d.step().cfg.block_size);
    if r.size == 0 {
        // A truncation: the file ends here until writes extend it (read-ahead stops here).
        if let Some(p) = d.step().prefetching.as_mut() {
            p.truncate(r.file, first);
        }
    }
    for b in first..end {
        let (device, block) = layout.place(r.file, b);
        let key = block_key(device, block);
        match d.cache().frame_of(key) {
            Some(f) => {
                if d.dropping(f) {
                    d.cache().drop_frame(f);
                }
            }
            None => d.cache().forget(key),
        }
    }
}

/// Carries out a hint request ([`bufsim_trace::Op::Hint`]: fadvise(WILLNEED), readahead(2)):
/// the blocks of its range, up to where the file ends now and as many as the read-ahead
/// algorithm allows ([`crate::prefetch::AnyReadAhead::on_hint`]; without one, all), that are
/// not cached are read ahead asynchronously, as force_page_cache_ra reads them: counted as
/// prefetched, none marked accessed. Not an access: neither counted nor timed.
pub fn hint_range<'a, D: Drive<'a>>(d: &mut D, r: &Request) {
    let layout = d.step().layout;
    let bs = d.step().cfg.block_size;
    let file_end = d.step().prefetching.as_ref().map(|p| p.blocks_of(r.file));
    let (first, end) = layout.hinted_blocks(r, bs, file_end);
    if first >= end {
        return;
    }
    let n = match d.step().prefetching.take() {
        Some(mut p) => {
            let cache = d.cache();
            let cached = |fb: u64| {
                let (device, block) = layout.place(r.file, fb);
                cache.contains(block_key(device, block))
            };
            let n = p.readahead.on_hint(r.file, first, end - first, &cached);
            d.step().prefetching = Some(p);
            n
        }
        None => end - first,
    };
    let Some(plan) = Plan::clipped(first, n, end, false) else { return };
    let (device, block) = layout.place(r.file, first);
    let time = d.step().time;
    let a = Access { device, block, time, ctx: r.ctx, pid: r.pid, ..Access::default() };
    carry_out(d, plan, r, None, false, &a);
}

/// Simulates the block accesses of request `r`: each is placed, demanded, counted and told to
/// read-ahead. The caller counts the request and issues the disk requests it leaves queued.
#[inline]
pub fn blocks<'a, D: Drive<'a>>(d: &mut D, r: &Request) {
    let write = r.op.is_write();
    let (first, n) = r.block_range(d.step().cfg.block_size);
    if let Some(p) = d.step().prefetching.as_mut() {
        p.reached(r.file, first + n);
    }
    let mut b = first;
    while b < first + n {
        let (a, got) = demand_block(d, r, b, write, false);
        // Writes overwrite whole blocks in this model: they trigger no read-ahead. A read-ahead
        // may demand the request's next blocks itself (AccuSim's order).
        b = if !write && d.step().prefetching.is_some() { read_ahead(d, r, b, first, n, &got, &a) } else { b + 1 };
    }
}

/// Demands block `b` of request `r`: looked up, counted and timed. The engine's loop calls it
/// for each block, and AccuSim's read-ahead for the request's blocks it reaches
/// ([`crate::prefetch::AnyReadAhead::demands_request_blocks_first`]), which then get no
/// read-ahead decision of their own; `looked_up` marks those its read-ahead loop looked up
/// first ([`Access::looked_up_by_read_ahead`]).
#[inline]
fn demand_block<'a, D: Drive<'a>>(d: &mut D, r: &Request, b: u64, write: bool, looked_up: bool) -> (Access, Demanded) {
    let a = Access { looked_up_by_read_ahead: looked_up, ..d.step().access(r, b, write) };
    let got = d.demand(&a);
    d.stats().record(got.outcome, got.hit, write);
    d.step().time += 1;
    (a, got)
}

/// Asks the read-ahead algorithm about one demand read and carries out its plan; returns the
/// request's next block still to demand.
fn read_ahead<'a, D: Drive<'a>>(d: &mut D, r: &Request, b: u64, first: u64, n: u64, got: &Demanded, a: &Access) -> u64 {
    let miss = !got.resident();
    let frame = d.cache().frame_of(a.key);
    let by_prefetch = !miss && frame.is_some_and(|f| d.cache().by_prefetch(f));
    let bs = d.step().cfg.block_size;
    let end = if r.in_blocks { first + n } else { (r.offset + r.size) / bs };
    let mut p = d.step().prefetching.take().expect("read_ahead without prefetching");
    let plan = if p.readahead.looks_at_cache() {
        let layout = d.step().layout;
        let file_blocks = p.blocks_of(r.file);
        let cache = d.cache();
        // Blocks past the end belong to no file (the layout would place them in the next one).
        let cached = |fb: u64| {
            fb < file_blocks && {
                let (device, block) = layout.place(r.file, fb);
                cache.contains(block_key(device, block))
            }
        };
        p.on_access(r, b, first, n, end, miss, got.in_flight, by_prefetch, &cached)
    } else {
        p.on_access(r, b, first, n, end, miss, got.in_flight, by_prefetch, &|_| false)
    };
    let own = p.readahead.demands_request_blocks_first();
    d.step().prefetching = Some(p);
    let Some(plan) = plan else { return b + 1 };
    if !own {
        carry_out(d, plan, r, frame, miss, a);
        return b + 1;
    }
    // AccuSim: the request's blocks up to the plan's end are demanded first, in order (those
    // before the plan's start too), then the blocks past the request are read ahead, in the
    // synchronous disk request if any of those demands missed (its queue_io keeps a request
    // synchronous once a demanded block is in it). The read-ahead counts as made at the last
    // demand. Those from the plan's start on are the read-ahead loop's, which looks each up
    // in the cache before demanding it.
    let end = plan.start + plan.len;
    let own_end = (first + n).min(end);
    let (mut last, mut missed) = (*a, miss);
    for fb in b + 1..own_end {
        let (fa, got) = demand_block(d, r, fb, false, fb >= plan.start);
        (last, missed) = (fa, missed || !got.hit);
    }
    let start = plan.start.max(own_end);
    if end > start {
        carry_out(d, Plan { start, len: end - start, ..plan }, r, frame, missed, &last);
    }
    own_end.max(b + 1)
}

/// Reads the blocks of `plan` that are not cached. The demanded block is pinned (its I/O is in
/// flight). The blocks read ahead with it are pinned too, so they never evict each other
/// (prefetching paper §4), except under Table 1's rule, where choosing one of them as the
/// victim ends the plan instead.
fn carry_out<'a, D: Drive<'a>>(d: &mut D, plan: Plan, r: &Request, demanded: Option<Frame>, miss: bool, a: &Access) {
    // Blocks read along with a demand miss share its synchronous disk request.
    let sync = plan.sync && miss;
    let pin_group = !plan.stop_before_group_eviction;
    d.step().group.clear();
    let held = demanded.filter(|&f| d.hold(f));
    if let Some(f) = held {
        d.cache().pin(f);
    }
    for fb in plan.start..plan.start + plan.len {
        let (device, block) = d.step().layout.place(r.file, fb);
        let key = block_key(device, block);
        if d.cache().contains(key) {
            if plan.stop_at_cached {
                break;
            }
            continue;
        }
        let next_use = d.step().next_occurrence.as_ref().and_then(|m| m.get(&key).copied()).unwrap_or(NEVER);
        let pa = Access { key, device, block, write: false, next_use, ..*a };
        let inserted = if pin_group { d.cache().insert(&pa, Origin::Prefetch) } else { d.insert_unless_evicting(&pa) };
        let Some(f) = inserted else { break };
        d.step().group.push(f);
        d.stats().prefetched += 1;
        d.fetched(f, device, block, sync, pin_group);
    }
    d.plan_done(pin_group);
    if let Some(f) = held {
        d.cache().unpin(f);
    }
}
