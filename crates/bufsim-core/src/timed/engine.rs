//! The timed engine: the count-mode pipeline (layout, cache, read-ahead, clustering) driven by
//! discrete events, with the in-flight state of every block visible to the cache and the
//! read-ahead algorithms.
//!
//! One application request is handled at one instant, as AccuSim issues "all blocks within an
//! I/O request at the same time as the original I/O request" (prefetching paper §5.1): each
//! block is looked up, misses and read-ahead are queued in the clusterer, and the end of the
//! request issues the disk requests. The stream then waits for every I/O that holds one of its
//! blocks (synchronous misses, and in-flight blocks it touched) and thinks before its next
//! request; asynchronous read-ahead runs on meanwhile (§5.2, Fig. 4).

use crate::frames::FrameVec;
use bufsim_trace::Request;

use super::events::{Event, EventQueue};
use super::histogram::LatencyHistogram;
use super::stats::{DeviceStats, Summary, TimedStats};
use super::storage::{CacheIo, Storage};
use super::streams::Streams;
use crate::access::{self, Demanded, Drive, EngineConfig, Future, Prefetching, Stats, Step};
use crate::cache::{Cache, Demand};
use crate::cluster::{Clusterer, DiskRequest};
use crate::layout::{block_key, Layout};
use crate::policy::{Access, Frame, Policy};

/// A frame whose block has no I/O in flight.
const SETTLED: u32 = u32::MAX;
/// A frame whose read is queued in the clusterer's open run (issued at the end of the
/// current request).
const QUEUED: u32 = u32::MAX - 1;
const NO_WAITER: u32 = u32::MAX;

/// What the engine keeps per cache frame besides the cache's own state (one cache line
/// holds several frames' worth).
#[derive(Clone, Copy)]
struct FrameState {
    /// I/O slot of the read in flight for the block, [`QUEUED`] or [`SETTLED`].
    io: u32,
    /// Written since it was read (write-back on eviction).
    dirty: bool,
    device: u16,
    block: u64,
}

/// One cache-level I/O in flight.
struct Io {
    what: CacheIo,
    issued_ns: u64,
    /// The application request that issued it.
    request: u64,
    /// Device requests not yet completed.
    parts: u32,
    /// Head of the list of streams waiting for it.
    waiters: u32,
    /// Last application request registered as a waiter (one registration per request).
    last_waiter: u64,
    /// A write of the end-of-run flush.
    flush: bool,
}

struct Waiter {
    stream: u32,
    next: u32,
}

/// Per-stream progress.
#[derive(Clone, Copy, Default)]
struct StreamState {
    current: Option<Request>,
    /// I/Os the current request still waits for.
    pending: u32,
    issued_ns: u64,
}

pub struct TimedEngine<'a, P: Policy> {
    pub cache: Cache<P>,
    step: Step<'a>,
    reads: Clusterer,
    writes: Clusterer,
    /// Frames in the read clusterer's open run, and whether the current request waits for it.
    open_frames: Vec<Frame>,
    open_awaited: bool,
    frames: FrameVec<FrameState>,
    in_flight_frames: u32,
    ios: Vec<Io>,
    free_ios: Vec<u32>,
    waiters: Vec<Waiter>,
    free_waiters: u32,
    storage: Storage,
    events: EventQueue,
    streams: Streams,
    state: Vec<StreamState>,
    starts: Vec<u64>,
    pub stats: Stats,
    t: TimedStats,
    response: LatencyHistogram,
    now: u64,
    /// Application requests issued so far; the current one's number.
    request: u64,
    stream: u32,
    /// Write back the dirty blocks when the last stream ends.
    final_flush: bool,
    /// Whether a block the current request's own read is bringing counts as a hit.
    own_reads_hit: bool,
    /// Streams not finished yet.
    streams_left: usize,
    /// Writes of the end-of-run flush still in flight, and when the flush began.
    flush_ios: u32,
    flush_start: u64,
    flushing: bool,
}

impl<'a, P: Policy> TimedEngine<'a, P> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        policy: P,
        capacity: usize,
        cfg: EngineConfig,
        layout: &'a Layout,
        future: Option<&'a Future>,
        storage: Storage,
        streams: Streams,
        starts: Vec<u64>,
    ) -> Self {
        let cluster_blocks = cfg.cluster_blocks();
        let n = streams.len();
        let mut cache = Cache::new(policy, capacity);
        cache.policy.storage(&storage.view());
        TimedEngine {
            cache,
            step: Step::new(cfg, layout, future),
            reads: Clusterer::new(cluster_blocks),
            writes: Clusterer::new(cluster_blocks),
            open_frames: Vec::new(),
            open_awaited: false,
            frames: FrameVec::filled(FrameState { io: SETTLED, dirty: false, device: 0, block: 0 }, capacity),
            in_flight_frames: 0,
            ios: Vec::new(),
            free_ios: Vec::new(),
            waiters: Vec::new(),
            free_waiters: NO_WAITER,
            storage,
            events: EventQueue::default(),
            streams,
            state: vec![StreamState::default(); n],
            starts,
            stats: Stats::default(),
            t: TimedStats::default(),
            response: LatencyHistogram::default(),
            now: 0,
            request: 0,
            stream: 0,
            final_flush: false,
            own_reads_hit: false,
            streams_left: n,
            flush_ios: 0,
            flush_start: 0,
            flushing: false,
        }
    }

    /// Writes back every dirty block when the last stream ends ([`super::TimingOptions::final_flush`]).
    pub fn with_final_flush(mut self, on: bool) -> Self {
        self.final_flush = on;
        self
    }

    /// When a block read ahead counts as a hit ([`super::HitRule`]).
    pub fn with_hit_rule(mut self, rule: super::HitRule) -> Self {
        self.own_reads_hit = rule == super::HitRule::OwnReads;
        self
    }

    /// Turns read-ahead on (see [`crate::engine::Engine::with_prefetching`]).
    pub fn with_prefetching(mut self, p: Prefetching<'a>, future: Option<&'a Future>) -> Self {
        self.step.set_prefetching(p, future);
        self
    }

    /// Runs the whole trace: every stream to its end, then every I/O still in flight.
    pub fn run<E>(&mut self, mut source: impl FnMut() -> Result<Option<Request>, E>) -> Result<(), E> {
        if self.state.is_empty() {
            self.streams.end_without_streams(&mut source)?;
        }
        for s in 0..self.state.len() {
            let start = self.starts[s];
            self.schedule_next(s, start, &mut source)?;
        }
        while let Some((now, ev)) = self.events.pop() {
            debug_assert!(now >= self.now, "time went backwards");
            self.now = now;
            match ev {
                Event::Wake { stream } => {
                    let s = stream as usize;
                    self.issue_request(s);
                    if self.state[s].pending == 0 {
                        // Nothing to wait for: done at the instant it was issued.
                        self.schedule_next(s, now, &mut source)?;
                    }
                }
                Event::Done { device, io } => {
                    let what = self.ios[io as usize].what;
                    if self.storage.complete(device, &what, io, now, &mut self.events) {
                        self.io_done(device, io, &mut source)?;
                    }
                }
                Event::Arrive { io, .. } => {
                    let what = self.ios[io as usize].what;
                    self.storage.arrive(&what, io, now, &mut self.events);
                }
                Event::Delivered { device, io } => self.io_done(device, io, &mut source)?,
            }
        }
        assert!(self.streams.drained(), "timed run ended with requests left in a stream");
        debug_assert!(self.storage.idle() && self.in_flight_frames == 0);
        Ok(())
    }

    /// Takes stream `s`'s next request and schedules it after its think time, from `after`;
    /// or records that the stream is done.
    fn schedule_next<E>(
        &mut self,
        s: usize,
        after: u64,
        source: &mut impl FnMut() -> Result<Option<Request>, E>,
    ) -> Result<(), E> {
        let (cache, layout, block_size) = (&self.cache, self.step.layout, self.step.cfg.block_size);
        // Start loading the index slot of each request's first block as it is read, a few
        // requests before it is issued.
        let mut hint = |r: &Request| access::warm(cache, layout, block_size, r);
        match self.streams.next(s, source, &mut hint)? {
            Some((r, think)) => {
                self.t.think_time_ns = self.t.think_time_ns.saturating_add(think);
                self.state[s].current = Some(r);
                self.events.push(after.saturating_add(think), Event::Wake { stream: s as u32 });
            }
            None => {
                self.state[s].current = None;
                self.t.exec_time_ns = self.t.exec_time_ns.max(after);
                self.streams_left = self.streams_left.saturating_sub(1);
                if self.streams_left == 0 && self.final_flush {
                    self.flush_dirty();
                }
            }
        }
        Ok(())
    }

    /// Stream `s` issues its current request now.
    fn issue_request(&mut self, s: usize) {
        let r = self.state[s].current.take().expect("a woken stream has a request");
        if r.op.is_drop() {
            // Done at the instant it is issued: nothing is read, written or waited for.
            access::drop_range(self, &r);
            return;
        }
        if r.op.is_hint() {
            // Done at the instant it is issued too: its reads go out asynchronously and nobody
            // waits for them (a later demand of a block still arriving does).
            self.stream = s as u32;
            access::hint_range(self, &r);
            if let Some(c) = self.reads.flush() {
                self.issue_read(c);
            }
            return;
        }
        self.request += 1;
        self.stream = s as u32;
        self.state[s].issued_ns = self.now;
        self.stats.requests += 1;
        self.t.bytes += if r.in_blocks { r.size.saturating_mul(self.step.cfg.block_size) } else { r.size };
        access::blocks(self, &r);
        // The end of the request unplugs the queues.
        if let Some(c) = self.reads.flush() {
            self.issue_read(c);
        }
        if let Some(c) = self.writes.flush() {
            self.issue_write(c);
        }
    }

    /// The block in `frame` just arrived (demand or read-ahead) at `device`, `block`: write
    /// back the dirty block the insertion evicted, if any, then note the new block.
    #[inline]
    fn placed(&mut self, frame: Frame, device: u16, block: u64) {
        if let Some((v, _)) = self.cache.take_victim() {
            self.written_back(v);
        }
        self.frames[frame as usize] = FrameState { io: SETTLED, dirty: false, device, block };
    }

    /// The block in frame `v` was evicted: written back if dirty.
    #[inline]
    fn written_back(&mut self, v: Frame) {
        let v = v as usize;
        debug_assert_eq!(self.frames[v].io, SETTLED, "evicted a block in flight");
        if self.frames[v].dirty {
            self.frames[v].dirty = false;
            self.write_block(self.frames[v].device, self.frames[v].block);
        }
    }

    /// The end of the run: every dirty block still cached is written back, in device and block
    /// order so that neighbours share a request; the flush's writes are counted apart.
    fn flush_dirty(&mut self) {
        let mut dirty: Vec<(u16, u64)> = Vec::new();
        // Frames never written hold the fill, which is clean.
        for f in self.frames.stored_mut().filter(|f| f.dirty) {
            f.dirty = false;
            dirty.push((f.device, f.block));
        }
        if dirty.is_empty() {
            return;
        }
        dirty.sort_unstable();
        self.flushing = true;
        self.flush_start = self.now;
        for (device, block) in dirty {
            self.write_block(device, block);
        }
        if let Some(c) = self.writes.flush() {
            self.issue_write(c);
        }
        self.flushing = false;
    }

    /// The current request waits for `io` (or for the clusterer's open run).
    #[inline]
    fn await_io(&mut self, io: u32) {
        if io == QUEUED {
            self.open_awaited = true;
            return;
        }
        let rec = &mut self.ios[io as usize];
        if rec.last_waiter == self.request {
            return;
        }
        rec.last_waiter = self.request;
        let node = Waiter { stream: self.stream, next: rec.waiters };
        let at = if self.free_waiters != NO_WAITER {
            let at = self.free_waiters;
            self.free_waiters = self.waiters[at as usize].next;
            self.waiters[at as usize] = node;
            at
        } else {
            self.waiters.push(node);
            (self.waiters.len() - 1) as u32
        };
        self.ios[io as usize].waiters = at;
        self.state[self.stream as usize].pending += 1;
    }

    /// Queues a block read in the clusterer; `frame` (if cached) is in flight from now on.
    #[inline]
    fn read_block(&mut self, device: u16, block: u64, sync: bool, frame: Option<Frame>, awaited: bool) {
        if let Some(c) = self.reads.add(device, block, sync) {
            self.issue_read(c);
        }
        if let Some(f) = frame {
            self.frames[f as usize].io = QUEUED;
            self.in_flight_frames += 1;
            self.cache.pin(f);
            self.open_frames.push(f);
        }
        self.open_awaited |= awaited;
    }

    #[inline]
    fn write_block(&mut self, device: u16, block: u64) {
        if let Some(c) = self.writes.add(device, block, false) {
            self.issue_write(c);
        }
    }

    fn new_io(&mut self, what: CacheIo) -> u32 {
        let io = Io {
            what,
            issued_ns: self.now,
            request: self.request,
            parts: 0,
            waiters: NO_WAITER,
            last_waiter: 0,
            flush: self.flushing,
        };
        match self.free_ios.pop() {
            Some(slot) => {
                self.ios[slot as usize] = io;
                slot
            }
            None => {
                self.ios.push(io);
                (self.ios.len() - 1) as u32
            }
        }
    }

    /// Issues the clusterer's closed run: its frames learn their I/O, the current request
    /// waits for it if it holds one of its blocks.
    fn issue_read(&mut self, c: DiskRequest) {
        let what = CacheIo { device: c.device, start: c.start, blocks: c.blocks, write: false, sync: c.sync };
        let slot = self.new_io(what);
        for &f in &self.open_frames {
            self.frames[f as usize].io = slot;
        }
        self.open_frames.clear();
        if std::mem::take(&mut self.open_awaited) {
            self.await_io(slot);
        }
        self.stats.disk_read(c.blocks, c.sync);
        let class = if c.sync { &mut self.t.sync } else { &mut self.t.async_ };
        class.requests += 1;
        class.blocks += c.blocks;
        self.ios[slot as usize].parts = self.storage.submit(&what, slot, self.now, &mut self.events);
    }

    fn issue_write(&mut self, c: DiskRequest) {
        let what = CacheIo { device: c.device, start: c.start, blocks: c.blocks, write: true, sync: false };
        let slot = self.new_io(what);
        let class = if self.flushing {
            self.flush_ios += 1;
            &mut self.t.flush
        } else {
            &mut self.t.write
        };
        class.requests += 1;
        class.blocks += c.blocks;
        self.ios[slot as usize].parts = self.storage.submit(&what, slot, self.now, &mut self.events);
    }

    /// A device finished part of I/O `slot`. When the whole I/O is done its blocks settle and
    /// the streams waiting only for it go on.
    fn io_done<E>(
        &mut self,
        device: u16,
        slot: u32,
        source: &mut impl FnMut() -> Result<Option<Request>, E>,
    ) -> Result<(), E> {
        let io = &mut self.ios[slot as usize];
        io.parts -= 1;
        let (what, waited) = (io.what, self.now - io.issued_ns);
        if !what.write {
            // Storage-aware caching's wait time (§3.1): how long the cache waited for the read.
            self.storage.waited(device, waited);
            self.cache.policy.device_done(device, waited, self.now);
            while let Some(v) = self.cache.reallocate_one() {
                self.written_back(v);
            }
        }
        if self.ios[slot as usize].parts > 0 {
            return Ok(());
        }
        let took = waited;
        self.response.record(took);
        let flush = self.ios[slot as usize].flush;
        if flush {
            self.flush_ios -= 1;
            if self.flush_ios == 0 {
                self.t.flush_time_ns = self.now - self.flush_start;
                self.t.exec_time_ns = self.t.exec_time_ns.max(self.now);
            }
        }
        let class = if flush {
            &mut self.t.flush
        } else if what.write {
            &mut self.t.write
        } else if what.sync {
            &mut self.t.sync
        } else {
            &mut self.t.async_
        };
        class.time_ns += took;
        if !what.write && self.in_flight_frames > 0 {
            for b in what.start..what.start + what.blocks {
                let key = block_key(what.device, b);
                if let Some(f) = self.cache.frame_of(key) {
                    if self.frames[f as usize].io == slot {
                        self.frames[f as usize].io = SETTLED;
                        self.in_flight_frames -= 1;
                        self.cache.unpin(f);
                    }
                }
            }
        }
        let mut w = self.ios[slot as usize].waiters;
        self.free_ios.push(slot);
        while w != NO_WAITER {
            let Waiter { stream, next } = self.waiters[w as usize];
            self.waiters[w as usize].next = self.free_waiters;
            self.free_waiters = w;
            w = next;
            let s = stream as usize;
            self.state[s].pending -= 1;
            if self.state[s].pending == 0 {
                self.t.stall_time_ns += self.now - self.state[s].issued_ns;
                self.schedule_next(s, self.now, source)?;
            }
        }
        Ok(())
    }

    /// Counters, timing and the cache (for invariant checks).
    pub fn finish(mut self) -> (Stats, TimedStats, Cache<P>) {
        let mut s = self.stats;
        s.evictions = self.cache.evictions;
        s.prefetched_unused = self.cache.evicted_unused;
        s.dropped = self.cache.dropped;
        let t = &mut self.t;
        t.end_time_ns = self.now.max(t.exec_time_ns);
        t.io_time_ns = self.storage.busy_ns();
        t.streams = self.state.len() as u32;
        t.service = Summary::of(&self.storage.measures.service);
        self.storage.close_sequences();
        t.sequences = std::mem::take(&mut self.storage.measures.sequences);
        t.response = Summary::of(&self.response);
        let end = t.end_time_ns;
        t.devices = self
            .storage
            .devices()
            .map(|(d, q)| DeviceStats {
                device: d,
                model: q.describe(),
                requests: q.requests,
                busy_ns: q.busy_ns,
                utilization: if end == 0 { 0.0 } else { q.busy_ns as f64 / end as f64 },
                queue_wait_mean_ns: if q.requests == 0 { 0.0 } else { q.queue_wait_ns as f64 / q.requests as f64 },
                max_queue: q.max_queue as u64,
                reads: q.reads,
                wait_ns: q.wait_ns,
            })
            .collect();
        (s, self.t, self.cache)
    }
}

impl<'a, P: Policy> Drive<'a> for TimedEngine<'a, P> {
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
        let (key, device, block, write) = (a.key, a.device, a.block, a.write);
        // Only look for an in-flight copy when some block is in flight at all.
        let before = if self.in_flight_frames > 0 { self.cache.frame_of(key) } else { None };
        let in_flight = before.map(|f| self.frames[f as usize].io).filter(|&io| io != SETTLED);
        let (outcome, frame) = self.cache.demand_frame(a);
        let mut hit = matches!(outcome, Demand::Hit | Demand::PrefetchHit);
        if let Some(io) = in_flight {
            // The data is on its way: wait for the rest. The block was not ready when the
            // request began, so it counts as a miss (§5.1: "access to a prefetched block is
            // counted as a hit if the prefetching is completed and as a miss otherwise"). Time
            // stands still within a request, so a read in flight now was in flight then. The
            // `own-reads` rule keeps as hits the blocks this request's own read is bringing.
            let earlier = io != QUEUED && self.ios[io as usize].request != self.request;
            if earlier {
                self.t.inflight_misses += 1;
            }
            if earlier || !self.own_reads_hit {
                hit = false;
            }
            self.await_io(io);
        }
        match outcome {
            Demand::Miss => {
                let f = frame.expect("a miss not bypassed is inserted");
                self.placed(f, device, block);
                if write {
                    // Whole-block overwrite: nothing to read; written back on eviction.
                    self.frames[f as usize].dirty = true;
                } else {
                    self.read_block(device, block, true, Some(f), true);
                }
            }
            Demand::MissBypassed => {
                // Every frame is pinned: the block goes straight to or from the device.
                if write {
                    self.write_block(device, block);
                } else {
                    self.read_block(device, block, true, None, true);
                }
            }
            Demand::Hit | Demand::PrefetchHit => {
                if write {
                    let f = frame.expect("a hit is resident");
                    self.frames[f as usize].dirty = true;
                }
            }
        }
        Demanded { outcome, hit, in_flight: in_flight.is_some() }
    }

    /// The demanded block must survive its own read-ahead; if its I/O is in flight it is
    /// pinned already.
    #[inline]
    fn hold(&self, frame: Frame) -> bool {
        self.frames[frame as usize].io == SETTLED
    }

    /// Every block read stays pinned until its I/O completes, which keeps blocks fetched
    /// together from evicting each other (§4) without pinning them for the plan alone.
    #[inline]
    fn fetched(&mut self, frame: Frame, device: u16, block: u64, sync: bool, _pin_group: bool) {
        self.placed(frame, device, block);
        self.read_block(device, block, sync, Some(frame), false);
    }

    #[inline]
    fn insert_unless_evicting(&mut self, a: &Access) -> Option<Frame> {
        // Table 1's rule: choosing a block of the group as the victim ends the plan, so the
        // group's in-flight pins are lifted while the victim is chosen.
        for &g in &self.step.group {
            self.cache.unpin(g);
        }
        let got = self.cache.insert_unless_evicting(a, &self.step.group);
        for &g in &self.step.group {
            self.cache.pin(g);
        }
        got
    }

    #[inline]
    fn plan_done(&mut self, _pin_group: bool) {}

    /// A block still being read stays (Linux's truncation waits for the read, then removes the
    /// page; here the read completes into the cache). One that was written leaves without its
    /// write-back: truncation discards dirty data.
    #[inline]
    fn dropping(&mut self, frame: Frame) -> bool {
        let st = &mut self.frames[frame as usize];
        if st.io != SETTLED {
            return false;
        }
        st.dirty = false;
        true
    }
}
