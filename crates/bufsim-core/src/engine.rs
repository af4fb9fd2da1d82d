//! Count mode: requests split into block accesses, placed by the layout, driven through the
//! cache. No clock; hits, misses and evictions as fast as the hardware allows.

use bufsim_trace::Request;

use crate::cache::{Cache, Demand};
use crate::layout::{block_key, Layout};
use crate::policy::{Access, Policy, NEVER};

/// How requests become block accesses.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Bytes per cache block (4 KiB by default).
    pub block_size: u64,
    /// Drop write requests instead of treating them as cache accesses.
    pub reads_only: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { block_size: 4096, reads_only: false }
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

pub struct Engine<'a, P: Policy> {
    pub cache: Cache<P>,
    cfg: EngineConfig,
    layout: &'a Layout,
    /// Next-use time of each demand access, from a pre-pass (OPT only).
    future: Option<&'a [u64]>,
    pub stats: Stats,
    time: u64,
}

impl<'a, P: Policy> Engine<'a, P> {
    pub fn new(policy: P, capacity: usize, cfg: EngineConfig, layout: &'a Layout, future: Option<&'a [u64]>) -> Self {
        Engine { cache: Cache::new(policy, capacity), cfg, layout, future, stats: Stats::default(), time: 0 }
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
            let next_use = match self.future {
                Some(f) => f[self.time as usize],
                None => NEVER,
            };
            let a = Access {
                key: block_key(device, block),
                device,
                block,
                time: self.time,
                ctx: r.ctx,
                pid: r.pid,
                write,
                next_use,
                cost: 1.0,
            };
            let hit = matches!(self.cache.demand(&a), Demand::Hit | Demand::PrefetchHit);
            self.stats.accesses += 1;
            self.stats.hits += hit as u64;
            self.stats.misses += !hit as u64;
            self.stats.write_accesses += write as u64;
            self.stats.write_misses += (write && !hit) as u64;
            self.time += 1;
        }
    }

    /// Hints that `r` will be simulated soon: starts loading the index slot of its first block.
    #[inline]
    pub fn prefetch(&self, r: &Request) {
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
                    self.prefetch(r);
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
        (s, self.cache)
    }
}

/// How many requests ahead [`Engine::run`] hints the cache: far enough for a memory load to
/// land, near enough that the hinted lines are still cached when used.
pub const LOOKAHEAD: usize = 8;

/// Next-use times for OPT: entry `i` is the index of the next demand access to the block of
/// access `i`, or [`NEVER`].
#[derive(Default)]
pub struct FutureBuilder {
    last: rustc_hash::FxHashMap<u64, u64>,
    next_use: Vec<u64>,
}

impl FutureBuilder {
    #[inline]
    pub fn push(&mut self, key: u64) {
        let i = self.next_use.len() as u64;
        self.next_use.push(NEVER);
        if let Some(prev) = self.last.insert(key, i) {
            self.next_use[prev as usize] = i;
        }
    }

    pub fn request(&mut self, r: &Request, cfg: &EngineConfig, layout: &Layout) {
        if included(r, cfg) {
            for_each_block(r, cfg, layout, |d, b| self.push(block_key(d, b)));
        }
    }

    pub fn finish(self) -> Vec<u64> {
        self.next_use
    }
}
