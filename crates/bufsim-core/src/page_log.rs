//! A page-level log of one run over a file trace, for setting the model beside the kernel's own
//! page cache (`bufsim validate`, docs/validation.md): every block the cache inserted (a demand
//! miss or read-ahead) and every block it evicted, as (file, block of the file), and every
//! read-ahead decision of an algorithm that keeps them (Linux 6's).
//!
//! Files may be given their real sizes: the kernel's read-ahead stops at the end of the file, not
//! at the furthest byte the trace happened to read.

use bufsim_trace::{AddressKind, Request};

use crate::engine::{Engine, EngineConfig, Prefetching, Stats};
use crate::layout::{FileExtents, Layout};
use crate::policy::storage::StorageView;
use crate::policy::{build, Access, BuildEnv, Frame, Origin, Pins, Policy, PolicyVisitor, Removal};
use crate::prefetch::{AnyReadAhead, Decision};
use crate::run::LoadedTrace;
use crate::spec::SpecError;
use crate::SimError;

/// What [`page_log`] returns.
#[derive(Debug, Default)]
pub struct PageLog {
    pub file_names: Vec<String>,
    /// Blocks of each file the run used (its real size when given, at least what the trace read).
    pub file_blocks: Vec<u64>,
    /// (file, block, brought by read-ahead), in insertion order.
    pub inserted: Vec<(u32, u64, bool)>,
    /// (file, block), in eviction order.
    pub evicted: Vec<(u32, u64)>,
    /// (file, block) of cached blocks whose data the trace dropped (truncation, deletion), in
    /// order.
    pub dropped: Vec<(u32, u64)>,
    pub decisions: Vec<Decision>,
    pub stats: Stats,
    /// The policy's own figures ([`Policy::metrics`]).
    pub metrics: Vec<(&'static str, f64)>,
}

/// A policy that logs the keys it is given and loses; everything else goes to `inner`. The
/// methods left out change no result: memory hints, the shared ghost index, `insert_cold`
/// (which a partitioned manager calls on the policies it holds, never the cache on its own)
/// and `replace` (logged as the `remove` and `insert` it stands for).
struct Logged {
    inner: Box<dyn Policy>,
    keys: Keys,
}

/// The keys a [`Logged`] policy saw come and go.
#[derive(Default)]
struct Keys {
    inserted: Vec<(u64, bool)>,
    evicted: Vec<u64>,
    dropped: Vec<u64>,
}

impl Policy for Logged {
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        self.inner.prepare_insert(a, origin)
    }
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.keys.inserted.push((a.key, origin == Origin::Prefetch));
        self.inner.insert(frame, a, origin)
    }
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.inner.hit(frame, a)
    }
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.inner.first_demand(frame, a)
    }
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        self.inner.victim(pins, incoming)
    }
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        if why == Removal::Dropped {
            self.keys.dropped.push(key);
        } else {
            self.keys.evicted.push(key);
        }
        self.inner.remove(frame, key, why)
    }
    fn surplus(&mut self, pins: &Pins) -> Option<Frame> {
        self.inner.surplus(pins)
    }
    fn reallocate(&mut self, pins: &Pins) -> Option<Frame> {
        self.inner.reallocate(pins)
    }
    fn forget(&mut self, key: u64) {
        self.inner.forget(key)
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.inner.check(resident)
    }
    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        self.inner.metrics(out)
    }
    fn keeps_ghosts(&self) -> bool {
        self.inner.keeps_ghosts()
    }
    fn ghost_hit(&self, key: u64) -> bool {
        self.inner.ghost_hit(key)
    }
    fn ghost_len(&self) -> usize {
        self.inner.ghost_len()
    }
    fn partition_timeline(&self) -> Option<&crate::policy::partition::Timeline> {
        self.inner.partition_timeline()
    }
    fn storage(&mut self, view: &StorageView) {
        self.inner.storage(view)
    }
    fn device_done(&mut self, device: u16, wait_ns: u64, now: u64) {
        self.inner.device_done(device, wait_ns, now)
    }
}

struct Replay<'a> {
    requests: &'a [Request],
    layout: &'a Layout,
    file_blocks: &'a [u64],
    capacity: usize,
    frames: usize,
    steps: &'a [(u64, u64)],
    engine: EngineConfig,
    readahead: Option<AnyReadAhead>,
}

type ReplayOutput = (Stats, Keys, Vec<Decision>, Vec<(&'static str, f64)>);

impl PolicyVisitor for Replay<'_> {
    type Output = ReplayOutput;

    fn visit<P: Policy + 'static>(self, policy: P) -> Self::Output {
        // Every policy replays on one engine, calling the policy through its vtable: a page log
        // is not a hot path, and an engine per policy type would add a copy of the engine and
        // the cache per policy to this crate's compile (as many again as the simulations have).
        self.replay(Box::new(policy))
    }
}

impl Replay<'_> {
    fn replay(self, policy: Box<dyn Policy>) -> ReplayOutput {
        let logged = Logged { inner: policy, keys: Keys::default() };
        let mut engine = Engine::new(logged, self.frames, self.engine, self.layout, None);
        if self.frames != self.capacity || !self.steps.is_empty() {
            engine = engine.with_capacity_steps(self.capacity as u64, self.steps);
        }
        if let Some(readahead) = self.readahead {
            engine =
                engine.with_prefetching(Prefetching::new(readahead, self.file_blocks, self.engine.block_size), None);
        }
        for r in self.requests {
            engine.request(r);
        }
        let decisions = engine.readahead().map(|r| r.decisions().to_vec()).unwrap_or_default();
        let (stats, cache) = engine.finish();
        let mut metrics = Vec::new();
        cache.policy.metrics(&mut metrics);
        (stats, cache.policy.keys, decisions, metrics)
    }
}

/// Runs `policy` with `cache_blocks` blocks and read-ahead `prefetch` over the file trace at
/// `path` and logs its pages. `sizes` gives files (by the trace's name) their real size in bytes,
/// `file_max` their own largest read-ahead window in blocks (Linux 6 read-ahead: what fadvise set).
/// `steps` change the cache size as the trace goes (request index, blocks; the `cache_steps` run
/// option), from `cache_blocks` at the start.
#[allow(clippy::too_many_arguments)]
pub fn page_log(
    path: &str,
    policy: &str,
    cache_blocks: u64,
    prefetch: &str,
    sizes: &[(String, u64)],
    file_max: &[(String, u64)],
    steps: &[(u64, u64)],
    engine: EngineConfig,
) -> Result<PageLog, SimError> {
    let trace = LoadedTrace::load(path, None)?;
    if trace.format.address_kind() != AddressKind::File {
        return Err(
            SpecError(format!("{path}: a page log needs a file trace (bufsim collect), not a block trace")).into()
        );
    }
    if cache_blocks == 0 || steps.iter().any(|&(_, b)| b == 0) {
        return Err(SpecError("the cache must hold at least one block".into()).into());
    }
    if steps.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(SpecError("cache steps must come in increasing request order".into()).into());
    }
    if !steps.is_empty() {
        crate::run::check_resizable(policy)?;
    }
    let frames = steps.iter().map(|&(_, b)| b).fold(cache_blocks, u64::max);
    if frames > crate::cache::MAX_FRAMES {
        return Err(SpecError("a cache of 2^31 blocks or more; use a larger block size".into()).into());
    }
    let mut ext = FileExtents::default();
    for r in &trace.requests {
        ext.push(r, engine.block_size);
    }
    let mut blocks = ext.finish();
    blocks.resize(trace.file_names.len().max(blocks.len()), 0);
    for (name, bytes) in sizes {
        if let Some(i) = trace.file_names.iter().position(|n| n == name) {
            blocks[i] = blocks[i].max(bytes.div_ceil(engine.block_size));
        }
    }
    let layout = Layout::first_touch(&blocks, 0)?;
    let env = BuildEnv { capacity: frames as usize, block_size: engine.block_size, seed: 42 };
    let built = build(policy, &env)?;
    let mut maxima = vec![0u64; trace.file_names.len()];
    for (name, m) in file_max {
        if let Some(i) = trace.file_names.iter().position(|n| n == name) {
            maxima[i] = *m;
        }
    }
    let readahead = crate::prefetch::build(prefetch)?.map(|r| match r {
        AnyReadAhead::Linux6(l) => AnyReadAhead::Linux6(l.with_log().with_file_max(maxima)),
        other => other,
    });
    let (stats, keys, decisions, metrics) = built.visit(Replay {
        requests: &trace.requests,
        layout: &layout,
        file_blocks: &blocks,
        capacity: cache_blocks as usize,
        frames: frames as usize,
        steps,
        engine,
        readahead,
    });
    let Layout::FirstTouch { base, .. } = &layout else { unreachable!("file traces use first-touch placement") };
    // A key is the device block; the file is the last one starting at or before it that holds it.
    let locate = |key: u64| -> (u32, u64) {
        let mut i = base.partition_point(|&b| b <= key).saturating_sub(1);
        while i > 0 && key - base[i] >= blocks[i] {
            i -= 1;
        }
        (i as u32, key - base[i])
    };
    Ok(PageLog {
        file_names: trace.file_names,
        inserted: keys
            .inserted
            .into_iter()
            .map(|(k, ra)| {
                let (f, b) = locate(k);
                (f, b, ra)
            })
            .collect(),
        evicted: keys.evicted.into_iter().map(locate).collect(),
        dropped: keys.dropped.into_iter().map(locate).collect(),
        file_blocks: blocks.clone(),
        decisions,
        stats,
        metrics,
    })
}
