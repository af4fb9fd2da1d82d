//! Runs of (policy, cache size) configurations over one trace.
//!
//! One configuration streams the trace (constant memory, plus one pre-pass for file sizes or
//! OPT's future). Several configurations over a file also stream it: the trace is decoded once,
//! in chunks of [`CHUNK`] requests, and every chunk is fed to every configuration on `jobs`
//! threads, so memory stays constant whatever the trace length. Runs that need the whole trace
//! at once keep a copy decoded into memory: OPT (its next-use times span the trace), timed mode
//! (its streams interleave by simulated time), first-level caches (the filtered stream), and
//! inputs that cannot be read twice. Each run is independent and deterministic, so thread
//! scheduling never changes a number.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use std::cell::RefCell;

use bufsim_trace::progress::{Ticker, BATCH as PROGRESS_BATCH, IN_MEMORY};
use bufsim_trace::{AddressKind, Format, Meter, ReadOptions, Request, SkipReport, TraceError, TraceReader};

use crate::array::Raid0;
use crate::engine::{for_each_block, included, Engine, EngineConfig, Future, FutureBuilder, Prefetching, Stats};
use crate::hierarchy::{second_level, FirstLevelConfig};
use crate::layout::{FileExtents, Layout};
use crate::policy::partition::Timeline;
use crate::policy::partition::TimelineClock;
use crate::policy::storage::StorageView;
use crate::policy::{build, registry::needs_future, BuildEnv, Policy, PolicyVisitor};
use crate::spec::{parse_cache_blocks, SpecError};
use crate::timed::{Storage, StreamPlan, StreamPlanner, Streams, TimedEngine, TimedStats, TimingOptions};
use crate::SimError;

/// Options shared by every run over a trace.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub engine: EngineConfig,
    /// Seed of every random choice (policies, later read-ahead and devices).
    pub seed: u64,
    /// Trace format; `None` detects it from the content.
    pub format: Option<Format>,
    /// Worker threads for several configurations; 0 means all cores.
    pub jobs: usize,
    /// Check cache and policy invariants after the run (tests, strict runs).
    pub check: bool,
    /// Timed mode (devices, schedulers, think time); `None` runs count mode.
    pub timing: Option<TimingOptions>,
    /// Free blocks left between consecutive files of a file trace (first-touch layout).
    pub file_gap_blocks: u64,
    /// Simulate the second level of a hierarchy: the trace goes through these first-level
    /// caches first and the runs see their misses (MQ paper; `hierarchy.rs`).
    pub first_level: Option<FirstLevelConfig>,
    /// Count and pass over malformed trace records instead of stopping (`--skip-bad`); each
    /// result carries the report.
    pub skip_bad: bool,
    /// Simulate only the first this many requests of the trace (0: all of them).
    pub max_requests: u64,
    /// Stripe the trace's one logical volume over a RAID-0 array (storage-aware caching §4.1;
    /// [`crate::array`]); `None` keeps the trace's own devices.
    pub array: Option<Raid0>,
    /// Where the work's progress is counted (bytes of the trace read, requests simulated), for
    /// a progress bar; off by default.
    pub meter: Meter,
    /// The cache's capacity over the trace: from request index `i` on, `blocks` (count mode;
    /// [`Engine::with_capacity_steps`]). Before the first step a run has its own cache size.
    pub cache_steps: Vec<(u64, u64)>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            engine: EngineConfig::default(),
            seed: 42,
            format: None,
            jobs: 0,
            check: false,
            timing: None,
            file_gap_blocks: 0,
            first_level: None,
            skip_bad: false,
            max_requests: 0,
            array: None,
            meter: Meter::default(),
            cache_steps: Vec::new(),
        }
    }
}

/// One configuration: a policy spec, a cache size (`64MiB`, `2000blocks`) and a read-ahead
/// spec (`none`, `linux`, `simple(min=3,max=8)`).
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub policy: String,
    pub cache: String,
    pub prefetch: String,
}

impl RunConfig {
    /// A configuration without read-ahead.
    pub fn new(policy: &str, cache: &str) -> Self {
        RunConfig { policy: policy.to_string(), cache: cache.to_string(), prefetch: "none".to_string() }
    }

    pub fn with_prefetch(mut self, prefetch: &str) -> Self {
        self.prefetch = prefetch.to_string();
        self
    }

    /// Every combination, in the order results come in: policy, then read-ahead, then cache
    /// size.
    pub fn cross(policies: &[String], prefetches: &[String], caches: &[String]) -> Vec<RunConfig> {
        let mut configs = Vec::with_capacity(policies.len() * prefetches.len() * caches.len());
        for p in policies {
            for f in prefetches {
                for c in caches {
                    configs.push(RunConfig::new(p, c).with_prefetch(f));
                }
            }
        }
        configs
    }
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub policy: String,
    pub prefetch: String,
    pub cache_blocks: u64,
    pub stats: Stats,
    /// Execution time and I/O timing (timed mode only).
    pub timing: Option<TimedStats>,
    /// What the policy reports about itself ([`Policy::metrics`]).
    pub metrics: Vec<(&'static str, f64)>,
    /// Partition sizes over time, for partitioned policies (AMP, PCC*, DEAR).
    pub timeline: Option<Timeline>,
    /// Malformed records passed over (`skip_bad`); empty otherwise.
    pub skipped: SkipReport,
}

/// Where the requests come from: the file again, a reader opened once (an input that cannot be
/// read twice: standard input, a pipe), or the copy decoded into memory.
pub(crate) enum Source<'a> {
    File { path: &'a str, format: Format, read: ReadOptions, max_requests: u64 },
    Once(std::sync::Mutex<Option<Box<TraceReader>>>),
    Memory(&'a [Request]),
}

impl Source<'_> {
    /// A reader from the start of the trace; an input read once gives its reader only once.
    fn reader(&self) -> Result<TraceReader, TraceError> {
        match self {
            Source::File { path, format, read, max_requests } => {
                Ok(TraceReader::open_with(path, Some(*format), read)?.limited(*max_requests))
            }
            Source::Once(cell) => cell
                .lock()
                .ok()
                .and_then(|mut r| r.take())
                .map(|r| *r)
                .ok_or_else(|| bufsim_trace::not_rewindable("-", "this run")),
            Source::Memory(_) => unreachable!("requests in memory need no reader"),
        }
    }
}

/// Everything a run needs besides its policy, computed once per trace.
pub(crate) struct Prepared {
    pub(crate) layout: Layout,
    pub(crate) future: Option<Future>,
    /// Blocks in each file (block traces: up to the highest block seen on each device), for
    /// read-ahead's end-of-file; empty when no run prefetches.
    pub(crate) file_blocks: Vec<u64>,
    /// Timed mode: the streams, and the devices the layout places blocks on.
    streams: Option<StreamPlan>,
    devices: Vec<u16>,
}

fn cache_blocks(cfg: &RunConfig, opts: &RunOptions) -> Result<u64, SpecError> {
    let blocks = parse_cache_blocks(&cfg.cache, opts.engine.block_size)?;
    if blocks > crate::cache::MAX_FRAMES {
        return Err(SpecError(format!("cache size `{}` is 2^31 blocks or more; use a larger block size", cfg.cache)));
    }
    Ok(blocks)
}

/// The frames a run of `blocks` needs: its cache, or the largest of its capacity steps.
pub(crate) fn cache_frames(blocks: u64, opts: &RunOptions) -> u64 {
    opts.cache_steps.iter().map(|&(_, b)| b).fold(blocks, u64::max)
}

/// What a policy is built with: the frames of [`cache_frames`], so that a cache whose capacity
/// rises (cache steps) has policy state for every frame.
pub(crate) fn build_env(blocks: u64, opts: &RunOptions) -> BuildEnv {
    BuildEnv { capacity: cache_frames(blocks, opts) as usize, block_size: opts.engine.block_size, seed: opts.seed }
}

/// Cache blocks are whole sectors and pages: a power of two from one 512-byte sector up to 1 GiB.
/// Anything else would split device sectors between blocks and give numbers no system has.
pub const MIN_BLOCK_SIZE: u64 = 512;
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;

/// Refuses a block size outside [`MIN_BLOCK_SIZE`]..=[`MAX_BLOCK_SIZE`] or not a power of two.
pub fn check_block_size(bs: u64) -> Result<(), SpecError> {
    if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&bs) || !bs.is_power_of_two() {
        return Err(block_size_refused(bs));
    }
    Ok(())
}

/// Why a block size of `shown` bytes is refused: the rule [`check_block_size`] holds to.
pub fn block_size_refused(shown: impl std::fmt::Display) -> SpecError {
    SpecError(format!("block size {shown} B must be a power of two from 512 B (a sector) to 1 GiB, such as 4KiB"))
}

/// Checks every configuration before touching the trace, so a bad spec never costs a read
/// and never leaves partial results.
pub fn validate(configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<u64>, SimError> {
    check_block_size(opts.engine.block_size)?;
    check_cache_steps(opts)?;
    if let Some(first) = &opts.first_level {
        first.validate(&opts.engine, opts.seed)?;
    }
    configs
        .iter()
        .map(|c| {
            let blocks = cache_blocks(c, opts)?;
            if !opts.cache_steps.is_empty() {
                check_resizable(&c.policy)?;
            }
            build(&c.policy, &build_env(blocks, opts))?;
            crate::prefetch::build(&c.prefetch)?;
            Ok(blocks)
        })
        .collect::<Result<Vec<u64>, SimError>>()
        .and_then(|blocks| {
            if let Some(t) = &opts.timing {
                t.validate(opts.seed)?;
            }
            Ok(blocks)
        })
}

/// Cache steps count the trace's requests in count mode: timed mode (its streams interleave)
/// and a first level (its misses are another stream) do not take them.
fn check_cache_steps(opts: &RunOptions) -> Result<(), SpecError> {
    if opts.cache_steps.is_empty() {
        return Ok(());
    }
    if opts.timing.is_some() {
        return Err(SpecError("cache_steps applies to count mode only; drop the timing options".into()));
    }
    if opts.first_level.is_some() {
        return Err(SpecError("cache_steps cannot be combined with a first level (first_level)".into()));
    }
    Ok(())
}

/// Refuses cache steps for a policy whose state depends on the cache size it was built for.
pub fn check_resizable(policy: &str) -> Result<(), SpecError> {
    let name = crate::spec::Spec::parse(policy)?.name;
    if crate::policy::registry::capabilities(&name).resizable {
        return Ok(());
    }
    let can: Vec<&str> = crate::policy::POLICIES.iter().filter(|p| p.caps.resizable).map(|p| p.name).collect();
    Err(SpecError(format!(
        "policy `{}` cannot change its cache size during a run (cache_steps); these can: {}",
        policy.trim(),
        can.join(", ")
    )))
}

fn for_each_request(source: &Source, mut f: impl FnMut(&Request)) -> Result<(), TraceError> {
    match source {
        Source::File { .. } | Source::Once(_) => {
            let mut reader = source.reader()?;
            while let Some(r) = reader.next_request()? {
                f(&r);
            }
        }
        Source::Memory(v) => v.iter().for_each(f),
    }
    Ok(())
}

fn prefetches(c: &RunConfig) -> bool {
    !matches!(crate::prefetch::build(&c.prefetch), Ok(None))
}

/// The layout (file sizes need a pass over a file trace), the file sizes read-ahead stops at,
/// and, if OPT is among the runs, the future (another pass, after the layout is known).
pub(crate) fn prepare(
    source: &Source,
    kind: AddressKind,
    need_future: bool,
    need_sizes: bool,
    opts: &RunOptions,
) -> Result<Prepared, SimError> {
    let mut extents = FileExtents::default();
    let mut planner = opts.timing.as_ref().map(|t| match t.closed {
        Some(n) => StreamPlanner::closed(n),
        None => StreamPlanner::new(t.single_stream),
    });
    let mut files_seen: Vec<bool> = Vec::new();
    if kind == AddressKind::File || need_sizes || planner.is_some() || opts.array.is_some() {
        for_each_request(source, |r| {
            extents.push(r, opts.engine.block_size);
            let f = r.file as usize;
            if let Some(p) = &mut planner {
                if included(r, &opts.engine) {
                    p.request(r);
                    if files_seen.len() <= f {
                        files_seen.resize(f + 1, false);
                    }
                    files_seen[f] = true;
                }
            }
        })?;
    }
    let blocks = extents.finish();
    let mut layout = match kind {
        AddressKind::Device => Layout::Identity,
        AddressKind::File => Layout::first_touch(&blocks, opts.file_gap_blocks)?,
    };
    // The devices timed mode must build: wherever the layout puts the files the run reads.
    let mut devices: Vec<u16> =
        (0..files_seen.len()).filter(|&f| files_seen[f]).map(|f| layout.place(f as u32, 0).0).collect();
    if let Some(array) = opts.array {
        // One logical volume: a block trace may name any one device (striping keeps only its
        // blocks), not two.
        if kind == AddressKind::Device {
            let mut named = (0..blocks.len()).filter(|&d| blocks[d] > 0);
            if let (Some(first), Some(d)) = (named.next(), named.next()) {
                return Err(SpecError(format!(
                    "an array stripes one logical volume, but the trace addresses device {d} as well as device \
                     {first}; run it without --array, or give a file trace or a one-device block trace"
                ))
                .into());
            }
        }
        // A cache key holds a block of a device other than 0 in its low 48 bits: striping a
        // volume so large that a member's blocks reach past them would give two blocks one key.
        let last = (0..blocks.len())
            .filter(|&f| blocks[f] > 0)
            .map(|f| layout.place(f as u32, blocks[f] - 1).1)
            .max()
            .unwrap_or(0);
        let member_end = (last / array.unit_blocks / array.devices as u64 + 1).saturating_mul(array.unit_blocks);
        if member_end > 1 << crate::layout::DEVICE_SHIFT {
            return Err(SpecError(format!(
                "striped over {} devices, this trace's blocks (up to block {last} of the volume) reach block {} \
                 of a member device, past the 2^{} blocks a device may have; give a larger --block-size or \
                 more devices in --array",
                array.devices,
                member_end - 1,
                crate::layout::DEVICE_SHIFT
            ))
            .into());
        }
        layout = Layout::Striped { base: Box::new(layout), array };
        devices = (0..array.devices).collect();
    }
    devices.sort_unstable();
    devices.dedup();
    let future = if need_future {
        let mut fb = FutureBuilder::default();
        for_each_request(source, |r| fb.request(r, &opts.engine, &layout))?;
        Some(fb.finish())
    } else {
        None
    };
    Ok(Prepared {
        layout,
        future,
        file_blocks: if need_sizes { blocks } else { Vec::new() },
        streams: planner.map(StreamPlanner::finish),
        devices,
    })
}

struct Simulate<'a> {
    source: &'a Source<'a>,
    /// Where a run that reads the file leaves its reader's skip report.
    skipped: &'a RefCell<SkipReport>,
    prepared: &'a Prepared,
    capacity: usize,
    future: bool,
    prefetch: &'a str,
    opts: &'a RunOptions,
}

/// A count-mode engine for `policy` over the prepared layout: the storage view that costs its
/// disk reads, and the run's read-ahead (fed `future` when a policy looks ahead).
fn count_engine<'a, P: Policy>(
    policy: P,
    capacity: usize,
    prefetch: &str,
    opts: &RunOptions,
    prepared: &'a Prepared,
    future: Option<&'a Future>,
) -> Result<Engine<'a, P>, SimError> {
    let block_size = opts.engine.block_size;
    let expected = bufsim_device::build_device(crate::timed::DEFAULT_DEVICE, 0)?.expected_service();
    let frames = cache_frames(capacity as u64, opts) as usize;
    let mut engine = Engine::new(policy, frames, opts.engine, &prepared.layout, future)
        .with_storage(count_mode_view(&prepared.devices, block_size, expected), expected);
    if !opts.cache_steps.is_empty() {
        engine = engine.with_capacity_steps(capacity as u64, &opts.cache_steps);
    }
    if let Some(readahead) = crate::prefetch::build(prefetch)? {
        let p = Prefetching::new(readahead, &prepared.file_blocks, block_size);
        engine = engine.with_prefetching(p, future);
    }
    Ok(engine)
}

impl PolicyVisitor for Simulate<'_> {
    type Output = Result<Simulated, SimError>;

    fn visit<P: Policy + 'static>(self, policy: P) -> Self::Output {
        if let Some(t) = &self.opts.timing {
            return self.visit_timed(policy, t);
        }
        let future = if self.future { self.prepared.future.as_ref() } else { None };
        let mut engine = count_engine(policy, self.capacity, self.prefetch, self.opts, self.prepared, future)?;
        match self.source {
            Source::File { .. } | Source::Once(_) => {
                // Decoded a batch at a time into one buffer: the engine then runs from memory.
                let mut reader = self.source.reader()?;
                let mut batch = Vec::with_capacity(BATCH);
                // A block trace's one-block reads skip building requests while they can.
                let by_block = reader.gives_blocks();
                let mut blocks = Vec::with_capacity(if by_block { BATCH } else { 0 });
                loop {
                    let n = if by_block && engine.takes_short_reads() {
                        reader.fill_blocks(&mut blocks, BATCH)?
                    } else {
                        0
                    };
                    if n == 0 && reader.fill(&mut batch, BATCH)? == 0 {
                        break;
                    }
                    // Also for readers that bypass the counted stream (a `.bst` read at positions).
                    if self.opts.meter.is_cancelled() {
                        return Err(TraceError::interrupted(&reader.path()).into());
                    }
                    if n > 0 {
                        engine.run_blocks(&blocks);
                        blocks.clear();
                    } else {
                        engine.run_slice(&batch, || {});
                        batch.clear();
                    }
                }
                *self.skipped.borrow_mut() = reader.skipped().clone();
            }
            Source::Memory(v) => {
                // A batch at a time, so the counters move and a cancelled run stops between
                // batches; where the slices are cut changes no result (hints only).
                let meter = &self.opts.meter;
                for batch in v.chunks(PROGRESS_BATCH as usize) {
                    meter.go_on(IN_MEMORY)?;
                    engine.run_slice(batch, || {});
                    meter.add(batch.len() as u64);
                }
            }
        }
        let (stats, cache) = engine.finish();
        Simulated::new(stats, None, &cache, self.opts.check)
    }
}

/// What one run produces: its counters, timing (timed mode) and what the policy reports.
pub(crate) struct Simulated {
    stats: Stats,
    timing: Option<TimedStats>,
    metrics: Vec<(&'static str, f64)>,
    timeline: Option<Timeline>,
}

impl Simulated {
    fn new<P: Policy>(
        stats: Stats,
        timing: Option<TimedStats>,
        cache: &crate::cache::Cache<P>,
        check: bool,
    ) -> Result<Self, SimError> {
        if check {
            cache.check().map_err(|e| SpecError(format!("invariant broken after the run: {e}")))?;
        }
        let mut metrics = Vec::new();
        cache.policy.metrics(&mut metrics);
        Ok(Simulated { stats, timing, metrics, timeline: cache.policy.partition_timeline().cloned() })
    }
}

impl Simulate<'_> {
    /// Timed mode: the same pipeline driven by events (see [`crate::timed`]).
    fn visit_timed<P: Policy>(self, policy: P, t: &TimingOptions) -> Result<Simulated, SimError> {
        let plan = self.prepared.streams.as_ref().expect("timed runs prepare a stream plan");
        if self.future && plan.starts.len() > 1 {
            return Err(SpecError(format!(
                "policy opt needs the order of accesses in advance, but the trace has {} streams (pids) whose \
                 order timed mode decides; add --single-stream (Python: single_stream=True)",
                plan.starts.len()
            ))
            .into());
        }
        let future = if self.future { self.prepared.future.as_ref() } else { None };
        let storage = Storage::build(&self.prepared.devices, t, self.opts.seed, self.opts.engine.block_size)?;
        let streams = Streams::new(plan, t.think);
        let starts = plan
            .starts
            .iter()
            .map(|&(_, start)| if t.think == crate::timed::Think::Trace { start } else { 0 })
            .collect();
        let mut engine = TimedEngine::new(
            policy,
            self.capacity,
            self.opts.engine,
            &self.prepared.layout,
            future,
            storage,
            streams,
            starts,
        )
        .with_final_flush(t.final_flush)
        .with_hit_rule(t.hit_rule);
        if let Some(readahead) = crate::prefetch::build(self.prefetch)? {
            let p = Prefetching::new(readahead, &self.prepared.file_blocks, self.opts.engine.block_size);
            engine = engine.with_prefetching(p, future);
        }
        let cfg = self.opts.engine;
        match self.source {
            Source::File { .. } | Source::Once(_) => {
                let mut reader = self.source.reader()?;
                engine.run(|| loop {
                    match reader.next_request()? {
                        Some(r) if !included(&r, &cfg) => continue,
                        other => return Ok::<_, SimError>(other),
                    }
                })?;
                *self.skipped.borrow_mut() = reader.skipped().clone();
            }
            Source::Memory(v) => {
                let mut ticks = Ticker::new(&self.opts.meter, IN_MEMORY);
                let mut it = v.iter();
                engine.run(|| loop {
                    let next = it.next();
                    if next.is_some() {
                        ticks.tick()?;
                    }
                    match next {
                        Some(r) if !included(r, &cfg) => continue,
                        other => return Ok::<_, SimError>(other.copied()),
                    }
                })?;
            }
        }
        let (stats, timing, cache) = engine.finish();
        if timing.end_time_ns == u64::MAX {
            // Event times saturate rather than wrap: a run that reached the end of the clock
            // has no meaningful times left to report.
            return Err(SpecError(
                "simulated time ran past its limit (2^64 ns, about 584 years): the think time is far too long, or a \
                 device or the network far too slow, for this trace; check the think time (think), the device specs \
                 (device, device_for, ages), fault slowdowns (faults) and the network (network)"
                    .into(),
            )
            .into());
        }
        Simulated::new(stats, Some(timing), &cache, self.opts.check)
    }
}

/// What policies learn of the storage in count mode, which has no device models: the devices
/// the layout uses (all of an array), each with timed mode's default device's expected service
/// time. Their wait times are then requests x expected service time.
fn count_mode_view(devices: &[u16], block_size: u64, expected: bufsim_device::ExpectedService) -> StorageView {
    StorageView::uniform(devices.iter().copied(), expected, block_size, TimelineClock::Accesses)
}

fn run_one(
    source: &Source,
    prepared: &Prepared,
    cfg: &RunConfig,
    blocks: u64,
    opts: &RunOptions,
) -> Result<RunResult, SimError> {
    let policy = build(&cfg.policy, &build_env(blocks, opts))?;
    let skipped = RefCell::new(SkipReport::default());
    let s = policy.visit(Simulate {
        source,
        skipped: &skipped,
        prepared,
        capacity: blocks as usize,
        future: needs_future(&cfg.policy),
        prefetch: &cfg.prefetch,
        opts,
    })?;
    Ok(result_of(cfg, blocks, s, skipped.into_inner()))
}

/// Decodes the whole trace into memory (several runs share it).
pub fn decode(path: &str, format: Format) -> Result<Vec<Request>, TraceError> {
    Ok(decode_with(path, format, &ReadOptions::default())?.0)
}

/// [`decode`], passing over malformed records if `read` says so (and reporting them).
pub fn decode_with(path: &str, format: Format, read: &ReadOptions) -> Result<(Vec<Request>, SkipReport), TraceError> {
    let mut reader = TraceReader::open_with(path, Some(format), read)?;
    let mut requests = Vec::new();
    while let Some(r) = reader.next_request()? {
        requests.push(r);
    }
    Ok((requests, reader.skipped().clone()))
}

/// The first `n` requests (0: all of them).
fn first(requests: &[Request], n: u64) -> &[Request] {
    if n == 0 {
        requests
    } else {
        &requests[..requests.len().min(n.try_into().unwrap_or(usize::MAX))]
    }
}

/// Resolves the format (detecting it if not given).
pub fn resolve_format(path: &str, format: Option<Format>) -> Result<Format, TraceError> {
    // A missing file is reported before anything else; a bst's header tells its address kind.
    bufsim_trace::resolve(path, format)
}

/// Runs every configuration over the trace at `path`; results come back in the order given.
pub fn run_trace(path: &str, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<RunResult>, SimError> {
    let blocks = validate(configs, opts)?;
    let read = ReadOptions { skip_bad: opts.skip_bad, meter: opts.meter.clone() };
    let max_requests = opts.max_requests;
    if !bufsim_trace::rewindable(path) {
        return run_once(path, configs, &blocks, opts, &read);
    }
    let format = resolve_format(path, opts.format)?;
    if opts.first_level.is_some() {
        let (requests, skipped) = decode_with(path, format, &read)?;
        return with_skipped(run_requests(&requests, format.address_kind(), configs, opts), &skipped);
    }
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let need_sizes = configs.iter().any(prefetches);
    if configs.len() == 1 {
        let source = Source::File { path, format, read, max_requests };
        let prepared = prepare(&source, format.address_kind(), need_future, need_sizes, opts)?;
        return Ok(vec![run_one(&source, &prepared, &configs[0], blocks[0], opts)?]);
    }
    if !need_future && opts.timing.is_none() {
        let source = Source::File { path, format, read, max_requests };
        let prepared = prepare(&source, format.address_kind(), false, need_sizes, opts)?;
        return run_streaming(&source, &prepared, configs, &blocks, opts);
    }
    let (requests, skipped) = decode_with(path, format, &read)?;
    let source = Source::Memory(first(&requests, max_requests));
    let prepared = prepare(&source, format.address_kind(), need_future, need_sizes, opts)?;
    with_skipped(run_parallel(&source, &prepared, configs, &blocks, opts), &skipped)
}

/// Requests decoded at a time when several configurations stream one trace: large enough that
/// handing a chunk to a thread costs nothing per request, small enough (3.5 MiB) that the
/// chunks in flight are a few megabytes.
pub const CHUNK: usize = 1 << 16;

/// Requests a single configuration decodes at a time before simulating them from memory:
/// 256 of 56 bytes (14 KiB) are still in the core's first-level cache when the simulation
/// reads them back (1,024, 56 KiB, were not: a first-level miss per request), and take nothing
/// of its second-level cache from the simulation's tables (4,096 took 229 KiB and 2% more
/// time on ARC over Zipf at 1%).
const BATCH: usize = 256;

/// Chunks each worker may have waiting: the reader stays at most this far ahead of the slowest.
const CHUNKS_AHEAD: usize = 2;

/// A count-mode run fed its trace a chunk at a time.
trait Fed {
    fn feed(&mut self, chunk: &Chunk);
    /// Whether it can be fed [`Chunk::Blocks`] ([`Engine::takes_short_reads`]).
    fn takes_blocks(&self) -> bool;
    fn finish(self: Box<Self>) -> Result<Simulated, SimError>;
}

/// A piece of the trace that several runs share: its requests, or for an oracleGeneral trace
/// whose runs all take them ([`Fed::takes_blocks`]) only the block each request reads, an
/// eighth of the bytes to write and read back.
enum Chunk {
    Requests(Vec<Request>),
    Blocks(Vec<u64>),
}

struct FedEngine<'a, P: Policy> {
    engine: Engine<'a, P>,
    check: bool,
}

impl<P: Policy> Fed for FedEngine<'_, P> {
    fn feed(&mut self, chunk: &Chunk) {
        // Feeding chunk by chunk is the same run as one stream: the look-ahead only warms the
        // CPU cache and never changes what is simulated.
        match chunk {
            Chunk::Requests(requests) => self.engine.run_slice(requests, || {}),
            Chunk::Blocks(blocks) => self.engine.run_blocks(blocks),
        }
    }

    fn takes_blocks(&self) -> bool {
        self.engine.takes_short_reads()
    }

    fn finish(self: Box<Self>) -> Result<Simulated, SimError> {
        let (stats, cache) = self.engine.finish();
        Simulated::new(stats, None, &cache, self.check)
    }
}

/// Builds the count-mode engine of one configuration, as [`Simulate`] does, to be fed chunks.
struct BuildFed<'a> {
    prepared: &'a Prepared,
    capacity: usize,
    prefetch: &'a str,
    opts: &'a RunOptions,
}

impl<'a> PolicyVisitor for BuildFed<'a> {
    type Output = Result<Box<dyn Fed + 'a>, SimError>;

    fn visit<P: Policy + 'static>(self, policy: P) -> Self::Output {
        let engine = count_engine(policy, self.capacity, self.prefetch, self.opts, self.prepared, None)?;
        Ok(Box::new(FedEngine { engine, check: self.opts.check }))
    }
}

/// The next chunk of `reader` for [`run_streaming`]'s runs (`None` at the end): block numbers
/// while the reader gives them and the runs take them (`by_block`), else requests. A record
/// that needs the request path's care (a malformed one) comes alone, as a chunk of requests.
fn next_chunk(reader: &mut TraceReader, by_block: bool) -> Result<Option<Chunk>, TraceError> {
    if by_block {
        let mut blocks = Vec::with_capacity(CHUNK);
        if reader.fill_blocks(&mut blocks, CHUNK)? > 0 {
            return Ok(Some(Chunk::Blocks(blocks)));
        }
    }
    let want = if by_block { 1 } else { CHUNK };
    let mut requests = Vec::with_capacity(want);
    Ok((reader.fill(&mut requests, want)? > 0).then_some(Chunk::Requests(requests)))
}

/// Several count-mode configurations over one pass of a file: this thread decodes chunks and
/// hands each (shared, not copied) to `jobs` workers, each feeding its share of the
/// configurations in turn. Memory: the configurations' own state plus a few chunks.
fn run_streaming(
    source: &Source,
    prepared: &Prepared,
    configs: &[RunConfig],
    blocks: &[u64],
    opts: &RunOptions,
) -> Result<Vec<RunResult>, SimError> {
    use std::sync::mpsc::sync_channel;
    use std::sync::Arc;
    let n = configs.len();
    let jobs =
        if opts.jobs == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { opts.jobs }
            .min(n)
            .max(1);
    let mut reader = source.reader()?;
    let trace = match source {
        Source::File { path, .. } => path,
        _ => "-",
    };
    // Each worker says, once its runs are built, whether they all take block numbers.
    let (ready_tx, ready) = sync_channel::<bool>(jobs);
    let results: Vec<Result<Vec<(usize, RunResult)>, SimError>> = std::thread::scope(|s| {
        let mut senders = Vec::with_capacity(jobs);
        let mut workers = Vec::with_capacity(jobs);
        for t in 0..jobs {
            let (tx, rx) = sync_channel::<Arc<Chunk>>(CHUNKS_AHEAD);
            senders.push(tx);
            let ready_tx = ready_tx.clone();
            workers.push(s.spawn(move || -> Result<Vec<(usize, RunResult)>, SimError> {
                let mine: Vec<usize> = (t..n).step_by(jobs).collect();
                let mut runs = Vec::with_capacity(mine.len());
                let mut failed = None;
                for &i in &mine {
                    let cfg = &configs[i];
                    let env = build_env(blocks[i], opts);
                    let built = build(&cfg.policy, &env).map_err(SimError::from).and_then(|p| {
                        p.visit(BuildFed { prepared, capacity: blocks[i] as usize, prefetch: &cfg.prefetch, opts })
                    });
                    match built {
                        Ok(f) => runs.push(f),
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                if let Some(e) = failed {
                    // Dropping the receiver tells the reader to stop.
                    return Err(e);
                }
                let _ = ready_tx.send(runs.iter().all(|r| r.takes_blocks()));
                drop(ready_tx);
                for chunk in rx {
                    // A cancelled run stops here rather than after the chunks queued for it.
                    opts.meter.go_on(trace)?;
                    for r in runs.iter_mut() {
                        r.feed(&chunk);
                    }
                }
                let mut out = Vec::with_capacity(mine.len());
                for (&i, r) in mine.iter().zip(runs) {
                    let sim = r.finish()?;
                    out.push((i, result_of(&configs[i], blocks[i], sim, SkipReport::default())));
                }
                Ok(out)
            }));
        }
        drop(ready_tx);
        // A worker that failed to build its runs sends nothing (its error is reported below),
        // and the answers end when every worker has answered or stopped.
        let by_block = reader.gives_blocks() && ready.iter().take(jobs).all(|b| b);
        let mut read_error = None;
        loop {
            let chunk = match next_chunk(&mut reader, by_block) {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    read_error = Some(e);
                    break;
                }
            };
            let chunk = Arc::new(chunk);
            for tx in &senders {
                // A worker that stopped (it failed to build) reports its error below.
                let _ = tx.send(Arc::clone(&chunk));
            }
        }
        drop(senders);
        let mut out: Vec<_> = workers.into_iter().map(|w| w.join().expect("a run thread panicked")).collect();
        if let Some(e) = read_error {
            out.insert(0, Err(e.into()));
        }
        out
    });
    let mut all: Vec<Option<RunResult>> = (0..n).map(|_| None).collect();
    for r in results {
        for (i, res) in r? {
            all[i] = Some(res);
        }
    }
    let skipped = reader.skipped().clone();
    Ok(all
        .into_iter()
        .map(|r| {
            let mut r = r.expect("every configuration ran");
            r.skipped = skipped.clone();
            r
        })
        .collect())
}

fn result_of(cfg: &RunConfig, blocks: u64, s: Simulated, skipped: SkipReport) -> RunResult {
    RunResult {
        policy: cfg.policy.clone(),
        prefetch: cfg.prefetch.clone(),
        cache_blocks: blocks,
        stats: s.stats,
        timing: s.timing,
        metrics: s.metrics,
        timeline: s.timeline,
        skipped,
    }
}

/// [`run_trace`] over an input that can be read only once (standard input, a pipe, a FIFO):
/// the trace is detected and read in one pass. Runs that need no pre-pass stream it (several
/// count-mode runs share one pass, in constant memory, as over a file); several runs that need
/// one share a copy decoded into memory, and one such run alone is refused (OPT's future, file
/// sizes: it would hold the whole trace only to read it twice).
fn run_once(
    path: &str,
    configs: &[RunConfig],
    blocks: &[u64],
    opts: &RunOptions,
    read: &ReadOptions,
) -> Result<Vec<RunResult>, SimError> {
    // One run that needs a pre-pass is refused before the input is opened (a FIFO's open waits
    // for its writer), when the reason does not depend on the trace's format.
    let alone = opts.first_level.is_none() && configs.len() <= 1;
    if let Some(what) = pre_pass_of(configs, opts, None).filter(|_| alone) {
        return Err(bufsim_trace::not_rewindable(path, what).into());
    }
    let reader = TraceReader::open_with(path, opts.format, read)?.limited(opts.max_requests);
    let kind = reader.format().address_kind();
    let pre_pass = pre_pass_of(configs, opts, Some(kind));
    if opts.first_level.is_some() || (configs.len() > 1 && pre_pass.is_some()) {
        let (requests, skipped) = drain(reader)?;
        return with_skipped(run_requests(&requests, kind, configs, opts), &skipped);
    }
    if let Some(what) = pre_pass {
        return Err(bufsim_trace::not_rewindable(path, what).into());
    }
    let source = Source::Once(std::sync::Mutex::new(Some(Box::new(reader))));
    let prepared = prepare(&source, kind, false, false, opts)?;
    if configs.len() > 1 {
        return run_streaming(&source, &prepared, configs, blocks, opts);
    }
    Ok(vec![run_one(&source, &prepared, &configs[0], blocks[0], opts)?])
}

/// What in these runs needs a pass over the trace before the simulation, if anything; a file
/// trace's layout counts only once the trace's `kind` is known.
fn pre_pass_of(configs: &[RunConfig], opts: &RunOptions, kind: Option<AddressKind>) -> Option<&'static str> {
    if configs.iter().any(|c| needs_future(&c.policy)) {
        Some("policy opt (its future)")
    } else if kind == Some(AddressKind::File) {
        Some("a file trace (its files' sizes, for the layout)")
    } else if configs.iter().any(prefetches) {
        Some("read-ahead (its files' sizes)")
    } else if opts.timing.is_some() {
        Some("timed mode (its streams)")
    } else if opts.array.is_some() {
        Some("an array (its devices)")
    } else {
        None
    }
}

fn drain(mut reader: TraceReader) -> Result<(Vec<Request>, SkipReport), TraceError> {
    let mut requests = Vec::new();
    while let Some(r) = reader.next_request()? {
        requests.push(r);
    }
    Ok((requests, reader.skipped().clone()))
}

/// Gives every result the report of the one read their trace came from.
fn with_skipped(results: Result<Vec<RunResult>, SimError>, skipped: &SkipReport) -> Result<Vec<RunResult>, SimError> {
    let mut results = results?;
    for r in &mut results {
        r.skipped = skipped.clone();
    }
    Ok(results)
}

/// A trace decoded into memory once, for many runs (sweeps, bindings).
pub struct LoadedTrace {
    pub requests: Vec<Request>,
    pub format: Format,
    pub file_names: Vec<String>,
    /// Malformed records passed over while loading (`skip_bad`).
    pub skipped: SkipReport,
}

impl LoadedTrace {
    pub fn load(path: &str, format: Option<Format>) -> Result<LoadedTrace, TraceError> {
        Self::load_with(path, format, &ReadOptions::default())
    }

    /// Reads the trace once (standard input and pipes too), detecting its format if not given.
    pub fn load_with(path: &str, format: Option<Format>, read: &ReadOptions) -> Result<LoadedTrace, TraceError> {
        let mut reader = TraceReader::open_with(path, format, read)?;
        let format = reader.format();
        let mut requests = Vec::new();
        while let Some(r) = reader.next_request()? {
            requests.push(r);
        }
        let file_names = reader.file_names().to_vec();
        Ok(LoadedTrace { requests, format, file_names, skipped: reader.skipped().clone() })
    }

    pub fn run(&self, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<RunResult>, SimError> {
        with_skipped(run_requests(&self.requests, self.format.address_kind(), configs, opts), &self.skipped)
    }
}

/// Runs configurations over requests already in memory (Python callers, generators, tests).
pub fn run_requests(
    requests: &[Request],
    kind: AddressKind,
    configs: &[RunConfig],
    opts: &RunOptions,
) -> Result<Vec<RunResult>, SimError> {
    let requests = first(requests, opts.max_requests);
    if let Some(first) = &opts.first_level {
        validate(configs, opts)?;
        let (l2, _) = second_level(requests, kind, first, &opts.engine, opts.seed)?;
        let below = RunOptions { first_level: None, ..opts.clone() };
        return run_requests(&l2, AddressKind::Device, configs, &below);
    }
    let blocks = validate(configs, opts)?;
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let need_sizes = configs.iter().any(prefetches);
    let source = Source::Memory(requests);
    let prepared = prepare(&source, kind, need_future, need_sizes, opts)?;
    run_parallel(&source, &prepared, configs, &blocks, opts)
}

fn run_parallel(
    source: &Source,
    prepared: &Prepared,
    configs: &[RunConfig],
    blocks: &[u64],
    opts: &RunOptions,
) -> Result<Vec<RunResult>, SimError> {
    if let Source::Memory(v) = source {
        let runs = configs.len();
        let what = if runs == 1 { "simulating 1 run".to_string() } else { format!("simulating {runs} runs") };
        opts.meter.stage(&what, "request", v.len() as u64 * runs as u64);
    }
    parallel_map(configs.len(), opts.jobs, |i| run_one(source, prepared, &configs[i], blocks[i], opts))
}

/// `f(0..n)` on `jobs` threads (0: all cores), results in index order. Each index is independent,
/// so thread scheduling never changes a result. After an error no new index starts, and the
/// first error by index is returned.
pub(crate) fn parallel_map<T: Send>(
    n: usize,
    jobs: usize,
    f: impl Fn(usize) -> Result<T, SimError> + Sync,
) -> Result<Vec<T>, SimError> {
    let jobs =
        if jobs == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { jobs }.min(n).max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T, SimError>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                let failed = r.is_err();
                results.lock().unwrap()[i] = Some(r);
                if failed {
                    next.store(n, Ordering::Relaxed);
                }
            });
        }
    });
    // Indices are handed out in order, so every index before a failed one has finished.
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("an index was skipped without an earlier error"))
        .collect()
}

/// Block accesses a trace expands to (for oracles and tests): the cache keys in order.
pub fn block_keys(requests: &[Request], kind: AddressKind, cfg: &EngineConfig) -> Vec<u64> {
    let source = Source::Memory(requests);
    let opts = RunOptions { engine: *cfg, ..RunOptions::default() };
    let prepared = prepare(&source, kind, false, false, &opts).expect("memory source cannot fail");
    let mut keys = Vec::new();
    for r in requests.iter().filter(|r| included(r, cfg)) {
        for_each_block(r, cfg, &prepared.layout, |d, b| keys.push(crate::layout::block_key(d, b)));
    }
    keys
}

/// Block accesses a trace expands to with the program context of each: `(key, ctx)` in order
/// (access-pattern detection over a whole trace, `bufsim detect`).
pub fn block_accesses(requests: &[Request], kind: AddressKind, cfg: &EngineConfig) -> Vec<(u64, u64)> {
    let source = Source::Memory(requests);
    let opts = RunOptions { engine: *cfg, ..RunOptions::default() };
    let prepared = prepare(&source, kind, false, false, &opts).expect("memory source cannot fail");
    let mut out = Vec::new();
    for r in requests.iter().filter(|r| included(r, cfg)) {
        for_each_block(r, cfg, &prepared.layout, |d, b| out.push((crate::layout::block_key(d, b), r.ctx)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bufsim_trace::Op;

    fn read(block: u64) -> Request {
        Request {
            time_ns: 0,
            dur_ns: 0,
            pid: 1,
            ctx: 0,
            op: Op::Read,
            file: 0,
            offset: block * 4096,
            size: 4096,
            in_blocks: false,
            unfilled: 0,
            opened: false,
        }
    }

    fn run(policy: &str, cache: &str, steps: Vec<(u64, u64)>, blocks: &[u64]) -> Result<Stats, SimError> {
        let requests: Vec<Request> = blocks.iter().map(|&b| read(b)).collect();
        let opts = RunOptions { jobs: 1, check: true, cache_steps: steps, ..RunOptions::default() };
        let r = run_requests(&requests, AddressKind::Device, &[RunConfig::new(policy, cache)], &opts)?;
        Ok(r[0].stats)
    }

    #[test]
    fn cache_steps_change_the_capacity_at_their_request() {
        // A loop over 4 blocks: with 4 cached every pass after the first hits; with 3 (LRU)
        // every access misses.
        let pass = [1, 2, 3, 4];
        let trace: Vec<u64> = pass.iter().cycle().take(16).copied().collect();
        let full = run("lru", "4blocks", vec![], &trace).unwrap();
        let small = run("lru", "3blocks", vec![], &trace).unwrap();
        assert_eq!((full.misses, small.misses), (4, 16));
        // 4 blocks until request 8, then 3: the first two passes as `full`, then every access
        // misses and evicts, after the fall itself evicted the LRU block.
        let stepped = run("lru", "4blocks", vec![(8, 3)], &trace).unwrap();
        assert_eq!((stepped.misses, stepped.evictions), (4 + 8, 1 + 8));
        // 3 blocks, then 4 from request 8: the one block missing (1) comes back without an
        // eviction, and everything after hits.
        let grown = run("lru", "3blocks", vec![(8, 4)], &trace).unwrap();
        assert_eq!((grown.misses, grown.evictions), (8 + 1, 5));
        // A step at request 0 is the same as that cache size from the start, but for the
        // frames the policy was built with.
        let at0 = run("lru", "4blocks", vec![(0, 3)], &trace).unwrap();
        assert_eq!((at0.misses, at0.evictions), (small.misses, small.evictions));
    }

    #[test]
    fn a_block_trace_runs_by_block_numbers_as_its_requests_do() {
        // An oracleGeneral file read straight into block numbers (Engine::run_blocks) gives the
        // run its requests give in memory: around a malformed record (skipped), a first-n
        // limit that ends inside a batch.
        let mut rng = 7u64;
        let mut blocks: Vec<u64> = (0..5000)
            .map(|_| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (rng >> 33) % 1500
            })
            .collect();
        blocks[1234] = u64::MAX; // one past the last block: malformed
        let mut bytes = Vec::new();
        for (i, &b) in blocks.iter().enumerate() {
            bytes.extend_from_slice(&bufsim_trace::encode_oracle_record(i as u32, b, 4096, -1));
        }
        let path = std::env::temp_dir().join(format!("bufsim-by-block-{}.oracleGeneral", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let path_str = path.to_str().unwrap().to_string();
        for (policy, cache, first_n) in
            [("lru", "100blocks", 0), ("arc", "400blocks", 3001), ("lirs", "40000blocks", 0)]
        {
            let opts = RunOptions {
                jobs: 1,
                check: true,
                skip_bad: true,
                max_requests: first_n,
                format: Some(Format::Oracle),
                ..RunOptions::default()
            };
            let by_file = run_trace(&path_str, &[RunConfig::new(policy, cache)], &opts).unwrap();
            let (all, skipped) =
                decode_with(&path_str, Format::Oracle, &ReadOptions { skip_bad: true, ..ReadOptions::default() })
                    .unwrap();
            assert_eq!(skipped.count, 1);
            let in_memory =
                run_requests(first(&all, first_n), AddressKind::Device, &[RunConfig::new(policy, cache)], &opts)
                    .unwrap();
            assert_eq!(by_file[0].stats, in_memory[0].stats, "{policy} {cache}");
            assert_eq!(by_file[0].skipped.count, 1);
            assert_eq!(by_file[0].stats.requests, if first_n == 0 { 4999 } else { first_n });
        }
        // Several runs share one pass (run_streaming): block numbers when every run takes them,
        // requests when one does not (read-ahead), the same results either way.
        let opts =
            RunOptions { jobs: 2, check: true, skip_bad: true, format: Some(Format::Oracle), ..RunOptions::default() };
        let (all, _) =
            decode_with(&path_str, Format::Oracle, &ReadOptions { skip_bad: true, ..ReadOptions::default() }).unwrap();
        let plain =
            [RunConfig::new("lru", "100blocks"), RunConfig::new("arc", "400blocks"), RunConfig::new("lfu", "64blocks")];
        let mixed = [RunConfig::new("lru", "100blocks"), RunConfig::new("lru", "100blocks").with_prefetch("linux")];
        for configs in [&plain[..], &mixed[..]] {
            let streamed = run_trace(&path_str, configs, &opts).unwrap();
            let in_memory = run_requests(&all, AddressKind::Device, configs, &opts).unwrap();
            for (a, b) in streamed.iter().zip(&in_memory) {
                assert_eq!(a.stats, b.stats, "{} {}", a.policy, a.prefetch);
                assert_eq!(a.skipped.count, 1);
            }
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn cache_steps_are_refused_where_they_cannot_apply() {
        let e = run("arc", "4blocks", vec![(2, 3)], &[1, 2, 3]).unwrap_err().to_string();
        assert!(e.contains("policy `arc` cannot change its cache size") && e.contains("lru"), "{e}");
        assert!(run("linux", "4blocks", vec![(2, 3)], &[1, 2, 3]).is_ok());
    }
}
