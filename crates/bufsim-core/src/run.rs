//! Runs of (policy, cache size) configurations over one trace.
//!
//! One configuration streams the trace (constant memory, plus one pre-pass for file sizes or
//! OPT's future). Several decode the trace once into memory and run in parallel on all cores;
//! each run is independent and deterministic, so thread scheduling never changes a number.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use std::cell::RefCell;

use bufsim_trace::{AddressKind, Format, ReadOptions, Request, SkipReport, TraceError, TraceReader};

use crate::engine::{for_each_block, included, Engine, EngineConfig, Future, FutureBuilder, Prefetching, Stats};
use crate::layout::Layout;
use crate::policy::{build, registry::needs_future, BuildEnv, Policy, PolicyVisitor};
use crate::spec::{parse_cache_blocks, SpecError};
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
    /// Count and pass over malformed trace records instead of stopping (`--skip-bad`); each
    /// result carries the report.
    pub skip_bad: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { engine: EngineConfig::default(), seed: 42, format: None, jobs: 0, check: false, skip_bad: false }
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
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub policy: String,
    pub prefetch: String,
    pub cache_blocks: u64,
    pub stats: Stats,
    /// Malformed records passed over (`skip_bad`); empty otherwise.
    pub skipped: SkipReport,
}

/// Where the requests come from: the file again, or the copy decoded into memory.
enum Source<'a> {
    File { path: &'a str, format: Format, read: ReadOptions },
    Memory(&'a [Request]),
}

/// Everything a run needs besides its policy, computed once per trace.
struct Prepared {
    layout: Layout,
    future: Option<Future>,
    /// Blocks in each file (block traces: up to the highest block seen on each device), for
    /// read-ahead's end-of-file; empty when no run prefetches.
    file_blocks: Vec<u64>,
}

fn cache_blocks(cfg: &RunConfig, opts: &RunOptions) -> Result<u64, SpecError> {
    let blocks = parse_cache_blocks(&cfg.cache, opts.engine.block_size)?;
    if blocks >= u32::MAX as u64 {
        return Err(SpecError(format!("cache size `{}` is over 2^32 blocks; use a larger block size", cfg.cache)));
    }
    Ok(blocks)
}

fn build_env(blocks: u64, opts: &RunOptions) -> BuildEnv {
    BuildEnv { capacity: blocks as usize, block_size: opts.engine.block_size, seed: opts.seed }
}

/// Checks every configuration before touching the trace, so a bad spec never costs a read
/// and never leaves partial results.
pub fn validate(configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<u64>, SimError> {
    if opts.engine.block_size == 0 {
        return Err(SpecError("block size must be at least 1 byte".into()).into());
    }
    configs
        .iter()
        .map(|c| {
            let blocks = cache_blocks(c, opts)?;
            build(&c.policy, &build_env(blocks, opts))?;
            crate::prefetch::build(&c.prefetch)?;
            Ok(blocks)
        })
        .collect()
}

fn for_each_request(source: &Source, mut f: impl FnMut(&Request)) -> Result<(), TraceError> {
    match source {
        Source::File { path, format, read } => {
            let mut reader = TraceReader::open_with(path, Some(*format), read)?;
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
fn prepare(source: &Source, kind: AddressKind, need_future: bool, need_sizes: bool, opts: &RunOptions) -> Result<Prepared, TraceError> {
    let mut blocks: Vec<u64> = Vec::new();
    if kind == AddressKind::File || need_sizes {
        for_each_request(source, |r| {
            let (first, n) = r.block_range(opts.engine.block_size);
            let f = r.file as usize;
            if blocks.len() <= f {
                blocks.resize(f + 1, 0);
            }
            blocks[f] = blocks[f].max(first.saturating_add(n));
        })?;
    }
    let layout = match kind {
        AddressKind::Device => Layout::Identity,
        AddressKind::File => Layout::first_touch(&blocks, 0),
    };
    let future = if need_future {
        let mut fb = FutureBuilder::default();
        for_each_request(source, |r| fb.request(r, &opts.engine, &layout))?;
        Some(fb.finish())
    } else {
        None
    };
    Ok(Prepared { layout, future, file_blocks: if need_sizes { blocks } else { Vec::new() } })
}

struct Simulate<'a> {
    source: &'a Source<'a>,
    prepared: &'a Prepared,
    capacity: usize,
    future: bool,
    prefetch: &'a str,
    opts: &'a RunOptions,
    /// Where a run that reads the file leaves its reader's skip report.
    skipped: &'a RefCell<SkipReport>,
}

impl PolicyVisitor for Simulate<'_> {
    type Output = Result<Stats, SimError>;

    fn visit<P: Policy>(self, policy: P) -> Self::Output {
        let future = if self.future { self.prepared.future.as_ref() } else { None };
        let mut engine = Engine::new(policy, self.capacity, self.opts.engine, &self.prepared.layout, future);
        if let Some(readahead) = crate::prefetch::build(self.prefetch)? {
            let p = Prefetching { readahead, file_blocks: &self.prepared.file_blocks };
            engine = engine.with_prefetching(p, future);
        }
        match self.source {
            Source::File { path, format, read } => {
                let mut reader = TraceReader::open_with(path, Some(*format), read)?;
                engine.run(|| reader.next_request())?;
                *self.skipped.borrow_mut() = reader.skipped().clone();
            }
            Source::Memory(v) => {
                let mut it = v.iter().copied();
                engine.run(|| Ok::<_, SimError>(it.next()))?;
            }
        }
        let (stats, cache) = engine.finish();
        if self.opts.check {
            cache.check().map_err(|e| SpecError(format!("invariant broken after the run: {e}")))?;
        }
        Ok(stats)
    }
}

fn run_one(source: &Source, prepared: &Prepared, cfg: &RunConfig, blocks: u64, opts: &RunOptions) -> Result<RunResult, SimError> {
    let policy = build(&cfg.policy, &build_env(blocks, opts))?;
    let skipped = RefCell::new(SkipReport::default());
    let stats = policy.visit(Simulate {
        source,
        prepared,
        capacity: blocks as usize,
        future: needs_future(&cfg.policy),
        prefetch: &cfg.prefetch,
        opts,
        skipped: &skipped,
    })?;
    Ok(RunResult { policy: cfg.policy.clone(), prefetch: cfg.prefetch.clone(), cache_blocks: blocks, stats, skipped: skipped.into_inner() })
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

/// Resolves the format (detecting it if not given).
pub fn resolve_format(path: &str, format: Option<Format>) -> Result<Format, TraceError> {
    // A missing file is reported before anything else; a bst's header tells its address kind.
    bufsim_trace::resolve(path, format)
}

/// Runs every configuration over the trace at `path`; results come back in the order given.
pub fn run_trace(path: &str, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<RunResult>, SimError> {
    let blocks = validate(configs, opts)?;
    let format = resolve_format(path, opts.format)?;
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let need_sizes = configs.iter().any(prefetches);
    let read = ReadOptions { skip_bad: opts.skip_bad };
    if configs.len() == 1 {
        let source = Source::File { path, format, read };
        let prepared = prepare(&source, format.address_kind(), need_future, need_sizes, opts)?;
        return Ok(vec![run_one(&source, &prepared, &configs[0], blocks[0], opts)?]);
    }
    let (requests, skipped) = decode_with(path, format, &read)?;
    let source = Source::Memory(&requests);
    let prepared = prepare(&source, format.address_kind(), need_future, need_sizes, opts)?;
    with_skipped(run_parallel(&source, &prepared, configs, &blocks, opts), &skipped)
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

    pub fn load_with(path: &str, format: Option<Format>, read: &ReadOptions) -> Result<LoadedTrace, TraceError> {
        let format = resolve_format(path, format)?;
        let mut reader = TraceReader::open_with(path, Some(format), read)?;
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
pub fn run_requests(requests: &[Request], kind: AddressKind, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<RunResult>, SimError> {
    let blocks = validate(configs, opts)?;
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let need_sizes = configs.iter().any(prefetches);
    let source = Source::Memory(requests);
    let prepared = prepare(&source, kind, need_future, need_sizes, opts)?;
    run_parallel(&source, &prepared, configs, &blocks, opts)
}

fn run_parallel(source: &Source, prepared: &Prepared, configs: &[RunConfig], blocks: &[u64], opts: &RunOptions) -> Result<Vec<RunResult>, SimError> {
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        opts.jobs
    }
    .min(configs.len())
    .max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, SimError>>>> = Mutex::new((0..configs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= configs.len() {
                    break;
                }
                let r = run_one(source, prepared, &configs[i], blocks[i], opts);
                let failed = r.is_err();
                results.lock().unwrap()[i] = Some(r);
                if failed {
                    // Stop handing out work; the first error by configuration order is reported.
                    next.store(configs.len(), Ordering::Relaxed);
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut out = Vec::with_capacity(configs.len());
    for r in results {
        match r {
            Some(Ok(x)) => out.push(x),
            Some(Err(e)) => return Err(e),
            None => unreachable!("a run was skipped without an error"),
        }
    }
    Ok(out)
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
