//! Thin bindings: convert Python arguments to Rust types, release the GIL for the simulation,
//! convert results back. No simulation logic lives here.

use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bufsim_core::engine::EngineConfig;
use bufsim_core::policy::registry;
use std::sync::Arc;

use bufsim_core::run::{run_trace, LoadedTrace, RunConfig, RunOptions, RunResult};
use bufsim_core::spec::Size;
use bufsim_core::timed::{Think, TimedStats, TimingOptions};
use bufsim_core::trace::{Format, ReadOptions, TraceErrorKind};
use bufsim_core::breakdown::breakdown_trace;
use bufsim_core::hierarchy::{filter_file, ClientBy, FirstLevelConfig, Forward, LevelSpec};
use bufsim_core::trace::BlockCsvWriter;
use bufsim_core::SimError;

create_exception!(_core, BufsimError, PyValueError, "Base class of bufsim's errors.");
create_exception!(_core, TraceFormatError, BufsimError, "A trace that cannot be read: unknown format or malformed record.");
create_exception!(_core, SpecError, BufsimError, "A policy spec, size or option that cannot be understood.");

fn to_py(e: SimError) -> PyErr {
    let msg = e.to_string();
    match e {
        SimError::Trace(t) => match t.kind {
            TraceErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            TraceErrorKind::Io => PyOSError::new_err(msg),
            TraceErrorKind::UnknownFormat | TraceErrorKind::Malformed => TraceFormatError::new_err(msg),
        },
        SimError::Spec(_) => SpecError::new_err(msg),
    }
}

fn parse_format(format: &str) -> PyResult<Option<Format>> {
    if format == "auto" {
        return Ok(None);
    }
    Format::parse(format).map(Some).map_err(SpecError::new_err)
}

/// Timed-mode arguments as Python passes them (`timing=False` leaves the rest unused).
struct TimingArgs<'a> {
    timing: bool,
    device: &'a str,
    scheduler: &'a str,
    think: &'a str,
    single_stream: bool,
    file_gap: &'a str,
}

/// Count mode, for calls that take no timing arguments.
const COUNT_MODE: TimingArgs<'static> =
    TimingArgs { timing: false, device: "st39102lw", scheduler: "noop", think: "trace", single_stream: false, file_gap: "0blocks" };

fn timing_options(t: &TimingArgs, block_size: u64) -> PyResult<(Option<TimingOptions>, u64)> {
    let gap = match Size::parse(t.file_gap).map_err(|e| SpecError::new_err(format!("file gap: {e}")))? {
        Size::Bytes(b) => b.div_ceil(block_size.max(1)),
        Size::Blocks(n) => n,
    };
    if !t.timing {
        return Ok((None, gap));
    }
    let think = Think::parse(t.think).map_err(SpecError::new_err)?;
    let opts = TimingOptions { device: t.device.to_string(), scheduler: t.scheduler.to_string(), think, single_stream: t.single_stream, ..TimingOptions::default() };
    Ok((Some(opts), gap))
}

/// The largest disk request the clusterer forms unless told otherwise (at least one block).
const DEFAULT_CLUSTER: &str = "64KiB";

#[allow(clippy::too_many_arguments)]
fn run_options(format: &str, block_size: u64, reads_only: bool, cluster: &str, seed: u64, jobs: usize, check: bool, skip_bad: bool, t: &TimingArgs) -> PyResult<RunOptions> {
    let cluster_bytes = match Size::parse(cluster).map_err(|e| SpecError::new_err(format!("cluster size: {e}")))? {
        Size::Bytes(b) => b,
        Size::Blocks(n) => n.saturating_mul(block_size),
    };
    // The default cluster, 64KiB, grows to one block when blocks are larger: a disk request is
    // at least one block. Any other cluster smaller than a block is refused.
    let cluster_bytes = if cluster_bytes < block_size && cluster == DEFAULT_CLUSTER { block_size } else { cluster_bytes };
    if cluster_bytes < block_size {
        return Err(SpecError::new_err(format!("cluster size `{cluster}` is smaller than one block ({block_size} B); give --cluster of at least the block size")));
    }
    let (timing, file_gap_blocks) = timing_options(t, block_size)?;
    Ok(RunOptions {
        engine: EngineConfig { block_size, reads_only, cluster_bytes },
        seed,
        format: parse_format(format)?,
        jobs,
        check,
        timing,
        file_gap_blocks,
        first_level: None,
        skip_bad,
        array: None,
    })
}

/// A first level as Python passes it: `(policy, cache, client, forward, [(client, policy,
/// cache)])` (see `bufsim.FirstLevel`).
type FirstLevelArg = (String, String, String, String, Vec<(u64, String, String)>);

fn first_level(arg: Option<FirstLevelArg>) -> PyResult<Option<FirstLevelConfig>> {
    let Some((policy, cache, client, forward, clients)) = arg else { return Ok(None) };
    let spec_err = |e: bufsim_core::spec::SpecError| SpecError::new_err(e.to_string());
    Ok(Some(FirstLevelConfig {
        default: LevelSpec { policy, cache },
        per_client: clients.into_iter().map(|(c, policy, cache)| (c, LevelSpec { policy, cache })).collect(),
        client_by: ClientBy::parse(&client).map_err(spec_err)?,
        forward: Forward::parse(&forward).map_err(spec_err)?,
    }))
}

/// Storage-aware settings as Python passes them (see `bufsim.api.storage_args`): `(array,
/// device_for, network, closed, faults)`.
type StorageArg = (Option<String>, Vec<(u16, String)>, String, Option<u32>, Vec<String>);

/// Applies storage-aware settings to run options: the array stripes in both modes; the rest
/// needs timed mode (Python turns it on).
fn apply_storage(opts: &mut RunOptions, arg: Option<StorageArg>) -> PyResult<()> {
    let Some((array, device_for, network, closed, faults)) = arg else { return Ok(()) };
    let spec_err = |e: bufsim_core::spec::SpecError| SpecError::new_err(e.to_string());
    if let Some(a) = array {
        opts.array = Some(bufsim_core::array::Raid0::parse(&a, opts.engine.block_size).map_err(spec_err)?);
    }
    let timed = !device_for.is_empty() || network != "none" || closed.is_some() || !faults.is_empty();
    match &mut opts.timing {
        Some(t) => {
            t.device_for = device_for;
            t.network = network;
            t.closed = closed;
            t.faults = faults.iter().map(|f| bufsim_core::timed::Fault::parse(f)).collect::<Result<_, _>>().map_err(spec_err)?;
        }
        None if timed => {
            return Err(SpecError::new_err("device_for, network, closed and faults only apply to timed runs"));
        }
        None => {}
    }
    Ok(())
}

/// The cross product in result order: policy, then read-ahead, then cache size.
fn cross(policies: &[String], prefetches: &[String], caches: &[String]) -> Vec<RunConfig> {
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

fn to_dicts(py: Python<'_>, results: Vec<RunResult>, block_size: u64) -> PyResult<Vec<Bound<'_, PyDict>>> {
    results
        .into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            let s = r.stats;
            d.set_item("policy", r.policy)?;
            d.set_item("prefetch", r.prefetch)?;
            d.set_item("cache_blocks", r.cache_blocks)?;
            d.set_item("block_size", block_size)?;
            d.set_item("requests", s.requests)?;
            d.set_item("accesses", s.accesses)?;
            d.set_item("hits", s.hits)?;
            d.set_item("misses", s.misses)?;
            d.set_item("hit_ratio", s.hit_ratio())?;
            d.set_item("write_accesses", s.write_accesses)?;
            d.set_item("write_misses", s.write_misses)?;
            d.set_item("evictions", s.evictions)?;
            d.set_item("disk_requests", s.disk_requests)?;
            d.set_item("sync_requests", s.sync_requests)?;
            d.set_item("async_requests", s.async_requests)?;
            d.set_item("blocks_read", s.blocks_read)?;
            d.set_item("prefetched", s.prefetched)?;
            d.set_item("prefetch_hits", s.prefetch_hits)?;
            d.set_item("prefetched_unused", s.prefetched_unused)?;
            let sizes: Vec<(u64, u64)> = s.request_sizes.iter().collect();
            d.set_item("request_sizes", sizes)?;
            let metrics = PyDict::new(py);
            for (k, v) in &r.metrics {
                metrics.set_item(*k, *v)?;
            }
            d.set_item("policy_metrics", metrics)?;
            if let Some(t) = &r.timeline {
                // The shape `bufsim plot partitions` and the report read (docs/plots.md).
                let tl = PyDict::new(py);
                match t.clock {
                    bufsim_core::policy::partition::TimelineClock::Accesses => {
                        let samples: Vec<(u64, &str, u32)> = t.rows().map(|(time, name, _, size)| (time, name, size)).collect();
                        tl.set_item("unit", "accesses")?;
                        tl.set_item("samples", samples)?;
                    }
                    // Storage-aware policies in timed mode sample simulated time (ns): seconds.
                    bufsim_core::policy::partition::TimelineClock::Nanoseconds => {
                        let samples: Vec<(f64, &str, u32)> = t.rows().map(|(time, name, _, size)| (time as f64 / 1e9, name, size)).collect();
                        tl.set_item("unit", "s")?;
                        tl.set_item("samples", samples)?;
                    }
                }
                d.set_item("partition_timeline", tl)?;
            }
            if let Some(t) = &r.timing {
                set_timing(py, &d, t)?;
            }
            d.set_item("skipped_records", r.skipped.count)?;
            d.set_item("skipped", if r.skipped.is_empty() { String::new() } else { r.skipped.summary() })?;
            Ok(d)
        })
        .collect()
}

const MS: f64 = 1e6;
const S: f64 = 1e9;

/// The timed-mode fields of a result dict (names as in docs/timing.md).
fn set_timing(py: Python<'_>, d: &Bound<'_, PyDict>, t: &TimedStats) -> PyResult<()> {
    d.set_item("exec_time_s", t.exec_time_ns as f64 / S)?;
    d.set_item("throughput_mb_s", t.throughput_mb_s())?;
    d.set_item("io_time_s", t.io_time_ns as f64 / S)?;
    d.set_item("stall_time_s", t.stall_time_ns as f64 / S)?;
    d.set_item("think_time_s", t.think_time_ns as f64 / S)?;
    d.set_item("end_time_s", t.end_time_ns as f64 / S)?;
    d.set_item("streams", t.streams)?;
    d.set_item("inflight_misses", t.inflight_misses)?;
    d.set_item("sync_blocks", t.sync.blocks)?;
    d.set_item("sync_time_ms", t.sync.mean_time_ns() / MS)?;
    d.set_item("async_blocks", t.async_.blocks)?;
    d.set_item("async_time_ms", t.async_.mean_time_ns() / MS)?;
    d.set_item("write_requests", t.write.requests)?;
    d.set_item("write_blocks", t.write.blocks)?;
    d.set_item("write_time_ms", t.write.mean_time_ns() / MS)?;
    for (name, sum) in [("service", &t.service), ("response", &t.response)] {
        d.set_item(format!("{name}_mean_ms"), sum.mean_ns / MS)?;
        d.set_item(format!("{name}_p50_ms"), sum.p50_ns / MS)?;
        d.set_item(format!("{name}_p90_ms"), sum.p90_ns / MS)?;
        d.set_item(format!("{name}_p99_ms"), sum.p99_ns / MS)?;
    }
    let devices = t
        .devices
        .iter()
        .map(|x| {
            let e = PyDict::new(py);
            e.set_item("device", x.device)?;
            e.set_item("model", &x.model)?;
            e.set_item("requests", x.requests)?;
            e.set_item("busy_s", x.busy_ns as f64 / S)?;
            e.set_item("utilization", x.utilization)?;
            e.set_item("queue_wait_ms", x.queue_wait_mean_ns / MS)?;
            e.set_item("max_queue", x.max_queue)?;
            e.set_item("reads", x.reads)?;
            e.set_item("wait_s", x.wait_ns as f64 / S)?;
            Ok(e)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("devices", devices)?;
    Ok(())
}

/// Runs every (policy, read-ahead, cache) combination over the trace; one dict per run, in order.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, *, prefetches=vec!["none".to_string()], format="auto", block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false, timing=false, device="st39102lw", scheduler="noop", think="trace", single_stream=false, file_gap="0blocks", first_level=None, skip_bad=false, storage=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    path: &str,
    policies: Vec<String>,
    caches: Vec<String>,
    prefetches: Vec<String>,
    format: &str,
    block_size: u64,
    reads_only: bool,
    cluster: &str,
    seed: u64,
    jobs: usize,
    check: bool,
    timing: bool,
    device: &str,
    scheduler: &str,
    think: &str,
    single_stream: bool,
    file_gap: &str,
    first_level: Option<FirstLevelArg>,
    skip_bad: bool,
    storage: Option<StorageArg>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let t = TimingArgs { timing, device, scheduler, think, single_stream, file_gap };
    let mut opts = run_options(format, block_size, reads_only, cluster, seed, jobs, check, skip_bad, &t)?;
    opts.first_level = self::first_level(first_level)?;
    apply_storage(&mut opts, storage)?;
    let configs = cross(&policies, &prefetches, &caches);
    let path = path.to_string();
    let results = py.allow_threads(|| run_trace(&path, &configs, &opts)).map_err(to_py)?;
    to_dicts(py, results, block_size)
}

/// A trace decoded into memory once; `run` may be called many times, from several threads
/// at once (the GIL is released while simulating).
#[pyclass(frozen, module = "bufsim._core")]
struct Trace {
    inner: Arc<LoadedTrace>,
    #[pyo3(get)]
    path: String,
}

#[pymethods]
impl Trace {
    #[new]
    #[pyo3(signature = (path, *, format="auto", skip_bad=false))]
    fn new(py: Python<'_>, path: &str, format: &str, skip_bad: bool) -> PyResult<Self> {
        let fmt = parse_format(format)?;
        let p = path.to_string();
        let read = ReadOptions { skip_bad };
        let loaded = py.allow_threads(|| LoadedTrace::load_with(&p, fmt, &read)).map_err(|e| to_py(SimError::Trace(e)))?;
        Ok(Trace { inner: Arc::new(loaded), path: path.to_string() })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format.name()
    }

    fn __len__(&self) -> usize {
        self.inner.requests.len()
    }

    #[pyo3(signature = (policies, caches, *, prefetches=vec!["none".to_string()], block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false, timing=false, device="st39102lw", scheduler="noop", think="trace", single_stream=false, file_gap="0blocks", first_level=None, storage=None))]
    #[allow(clippy::too_many_arguments)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        policies: Vec<String>,
        caches: Vec<String>,
        prefetches: Vec<String>,
        block_size: u64,
        reads_only: bool,
        cluster: &str,
        seed: u64,
        jobs: usize,
        check: bool,
        timing: bool,
        device: &str,
        scheduler: &str,
        think: &str,
        single_stream: bool,
        file_gap: &str,
        first_level: Option<FirstLevelArg>,
        storage: Option<StorageArg>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let t = TimingArgs { timing, device, scheduler, think, single_stream, file_gap };
        let mut opts = run_options("auto", block_size, reads_only, cluster, seed, jobs, check, false, &t)?;
        opts.first_level = self::first_level(first_level)?;
        apply_storage(&mut opts, storage)?;
        let configs = cross(&policies, &prefetches, &caches);
        let inner = Arc::clone(&self.inner);
        let results = py.allow_threads(|| inner.run(&configs, &opts)).map_err(to_py)?;
        to_dicts(py, results, block_size)
    }
}

/// Writes the second-level stream of `path` through `first_level` to `out` (block-csv); one
/// dict of first-level counters per client.
#[pyfunction]
#[pyo3(signature = (path, out, first_level, *, format="auto", block_size=4096, reads_only=false, seed=42))]
#[allow(clippy::too_many_arguments)]
fn filter_trace<'py>(
    py: Python<'py>,
    path: &str,
    out: &str,
    first_level: FirstLevelArg,
    format: &str,
    block_size: u64,
    reads_only: bool,
    seed: u64,
) -> PyResult<(u64, Vec<Bound<'py, PyDict>>)> {
    let cfg = self::first_level(Some(first_level))?.expect("given");
    let fmt = parse_format(format)?;
    let engine = EngineConfig { block_size, reads_only, ..EngineConfig::default() };
    let (path, out) = (path.to_string(), out.to_string());
    let (written, stats) = py
        .allow_threads(|| -> Result<_, SimError> {
            cfg.validate(&engine, seed)?;
            let file = std::fs::File::create(&out).map_err(|e| bufsim_core::trace::TraceError::io(&out, &e))?;
            let mut w = BlockCsvWriter::new(std::io::BufWriter::new(file), &out, block_size)?;
            let stats = filter_file(&path, fmt, &cfg, &engine, seed, |r| w.write(r))?;
            Ok((w.finish()?, stats))
        })
        .map_err(to_py)?;
    let rows = stats
        .into_iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("client", c.client)?;
            d.set_item("cache_blocks", c.cache_blocks)?;
            d.set_item("accesses", c.accesses)?;
            d.set_item("hits", c.hits)?;
            d.set_item("misses", c.misses)?;
            d.set_item("write_backs", c.write_backs)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((written, rows))
}

/// The MQ paper's Table 3 for each (policy, cache): hits and misses of accesses whose temporal
/// distance is below or at least the cache size.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, *, format="auto", block_size=4096, reads_only=false, seed=42, first_level=None))]
#[allow(clippy::too_many_arguments)]
fn breakdown<'py>(
    py: Python<'py>,
    path: &str,
    policies: Vec<String>,
    caches: Vec<String>,
    format: &str,
    block_size: u64,
    reads_only: bool,
    seed: u64,
    first_level: Option<FirstLevelArg>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut opts = run_options(format, block_size, reads_only, "64KiB", seed, 1, false, false, &COUNT_MODE)?;
    opts.first_level = self::first_level(first_level)?;
    let configs = cross(&policies, &["none".to_string()], &caches);
    let p = path.to_string();
    let rows = py.allow_threads(|| breakdown_trace(&p, &configs, &opts))
        .map_err(to_py)?;
    rows.into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("policy", r.policy)?;
            d.set_item("cache_blocks", r.cache_blocks)?;
            d.set_item("below_hits", r.below_hits)?;
            d.set_item("below_misses", r.below_misses)?;
            d.set_item("above_hits", r.above_hits)?;
            d.set_item("above_misses", r.above_misses)?;
            d.set_item("first", r.first)?;
            Ok(d)
        })
        .collect()
}

/// The policy registry: name, aliases, paper, summary, parameters with defaults.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    // Policies, then presets (AccuSim's defaults and others): `bufsim policies` lists both.
    registry::all()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("aliases", p.aliases.to_vec())?;
            d.set_item("paper", p.paper)?;
            d.set_item("summary", p.summary)?;
            d.set_item("preset_of", p.preset_of)?;
            let params: Vec<(&str, &str, &str)> = p.params.iter().map(|x| (x.name, x.default, x.doc)).collect();
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

/// The read-ahead algorithms: name, source, parameters `(name, default, doc)`.
#[pyfunction]
fn prefetchers(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    bufsim_core::prefetch::PREFETCHERS
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("paper", p.paper)?;
            d.set_item("params", p.params.to_vec())?;
            Ok(d)
        })
        .collect()
}

/// The device registry: device models and presets, then I/O schedulers; each with kind
/// (`device`, `preset` or `scheduler`), name, aliases, source, summary, the spec a preset
/// stands for, and parameters `(name, default, doc)`.
#[pyfunction]
fn devices(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let models = bufsim_core::device::DEVICES.iter().map(|m| (if m.preset_of.is_some() { "preset" } else { "device" }, m));
    let scheds = bufsim_core::device::SCHEDULERS.iter().map(|m| ("scheduler", m));
    models
        .chain(scheds)
        .map(|(kind, m)| {
            let d = PyDict::new(py);
            d.set_item("kind", kind)?;
            d.set_item("name", m.name)?;
            d.set_item("aliases", m.aliases.to_vec())?;
            d.set_item("source", m.source)?;
            d.set_item("summary", m.summary)?;
            d.set_item("preset_of", m.preset_of)?;
            let params: Vec<(&str, &str, &str)> = m.params.iter().map(|x| (x.name, x.default, x.doc)).collect();
            d.set_item("params", params)?;
            Ok(d)
        })
        .collect()
}

/// Parses a size (`64MiB`, `2000blocks`) into whole blocks of `block_size` bytes.
#[pyfunction]
#[pyo3(signature = (text, block_size=4096))]
fn size_to_blocks(text: &str, block_size: u64) -> PyResult<u64> {
    Size::parse(text)
        .map(|s| s.to_blocks(block_size))
        .map_err(|e| SpecError::new_err(e.to_string()))
}

/// The one spelling of a policy spec (`LRU`, ` lru`, `lru()` are `lru`); sweeps key runs by it.
#[pyfunction]
fn canonical_policy(spec: &str) -> PyResult<String> {
    bufsim_core::policy::registry::canonical(spec).map_err(|e| SpecError::new_err(e.to_string()))
}

/// Tells a trace's format from its content.
#[pyfunction]
fn detect_format(py: Python<'_>, path: &str) -> PyResult<&'static str> {
    let p = path.to_string();
    py.allow_threads(|| bufsim_core::trace::detect(&p))
        .map(|f| f.name())
        .map_err(|e| to_py(SimError::Trace(e)))
}

// --- AMP (issue 7): partition timelines, synthetic streams, Table 1, pattern detection ---

/// Runs one policy with every option of `run` and returns its partition timeline: the clock
/// (`accesses` or `ns`) and rows `(time, partition, tag, blocks, value)` (`value` is NaN when
/// the policy keeps none; storage-aware policies: tag = target blocks, value = wait ms).
#[pyfunction]
#[pyo3(signature = (path, policy, cache, *, prefetch="none", format="auto", block_size=4096, reads_only=false, cluster="64KiB", seed=42, timing=false, device="st39102lw", scheduler="noop", think="trace", single_stream=false, file_gap="0blocks", storage=None))]
#[allow(clippy::too_many_arguments)]
fn run_timeline(
    py: Python<'_>,
    path: &str,
    policy: &str,
    cache: &str,
    prefetch: &str,
    format: &str,
    block_size: u64,
    reads_only: bool,
    cluster: &str,
    seed: u64,
    timing: bool,
    device: &str,
    scheduler: &str,
    think: &str,
    single_stream: bool,
    file_gap: &str,
    storage: Option<StorageArg>,
) -> PyResult<(&'static str, Vec<(u64, String, u64, u32, f64)>)> {
    let t = TimingArgs { timing, device, scheduler, think, single_stream, file_gap };
    let mut opts = run_options(format, block_size, reads_only, cluster, seed, 1, false, false, &t)?;
    apply_storage(&mut opts, storage)?;
    let configs = vec![RunConfig::new(policy, cache).with_prefetch(prefetch)];
    let p = path.to_string();
    let mut results = py.allow_threads(|| run_trace(&p, &configs, &opts)).map_err(to_py)?;
    let r = results.pop().expect("one configuration, one result");
    let tl = r.timeline.ok_or_else(|| {
        SpecError::new_err(format!(
            "policy `{policy}` records no partition timeline; use a partitioned policy (amp, pcc, dear, static, eager-lru, lazy-lru, lazy-clock)"
        ))
    })?;
    let n = tl.names.len();
    let rows = (0..tl.samples())
        .flat_map(|i| (0..n).map(move |p| (i, p)))
        .map(|(i, p)| (tl.times[i], tl.names[p].clone(), tl.tag(i, p), tl.size(i, p), tl.value(i, p).unwrap_or(f64::NAN)))
        .collect();
    Ok((tl.clock.name(), rows))
}

/// Writes the synthetic trace `spec` (`amp-a`, `amp-mix(loop1=2000)`) from `seed` to `path`
/// as interchange CSV; returns the number of requests.
#[pyfunction]
#[pyo3(signature = (spec, path, *, seed=1))]
fn generate(py: Python<'_>, spec: &str, path: &str, seed: u64) -> PyResult<usize> {
    let synth = bufsim_core::trace::synth::generate(spec, seed).map_err(|e| SpecError::new_err(e.to_string()))?;
    let p = path.to_string();
    py.allow_threads(|| -> std::io::Result<usize> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&p)?);
        synth.write_csv(&mut out)?;
        std::io::Write::flush(&mut out)?;
        Ok(synth.requests.len())
    })
    .map_err(|e| PyOSError::new_err(format!("{path}: {e}")))
}

/// The synthetic trace generators: name, paper, summary, parameters `(name, default, doc)`.
#[pyfunction]
fn generators(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    bufsim_core::trace::synth::generators()
        .map(|g| {
            let d = PyDict::new(py);
            d.set_item("name", g.name)?;
            d.set_item("paper", g.paper)?;
            d.set_item("summary", g.summary)?;
            d.set_item("params", g.params.to_vec())?;
            Ok(d)
        })
        .collect()
}

/// AMP's Table 1: R̄ and the AMP, DEAR and PCC classifications of the seven streams, beside
/// the paper's.
#[pyfunction]
#[pyo3(signature = (*, seed=1, length=2000, sampling=1.0))]
fn amp_table1(py: Python<'_>, seed: u64, length: usize, sampling: f64) -> PyResult<Vec<Bound<'_, PyDict>>> {
    if !(sampling > 0.0 && sampling <= 1.0) || length < 2 {
        return Err(SpecError::new_err("sampling must be in (0, 1] and length at least 2"));
    }
    bufsim_core::policy::amp::table1::table1(seed, length, sampling)
        .into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("stream", r.paper.stream.to_string())?;
            d.set_item("description", r.paper.description)?;
            d.set_item("r_bar", r.r_bar)?;
            d.set_item("paper_r_bar", r.paper.r_bar)?;
            d.set_item("amp", r.amp.name())?;
            d.set_item("dear", r.dear.name())?;
            d.set_item("pcc", r.pcc.name())?;
            d.set_item("paper_amp", r.paper.amp.name())?;
            d.set_item("paper_dear", r.paper.dear.name())?;
            d.set_item("paper_pcc", r.paper.pcc.name())?;
            d.set_item("correct", r.paper.correct.name())?;
            Ok(d)
        })
        .collect()
}

/// Classifies every program context of a trace with the detector of `detector` (amp, pcc,
/// dear): one detection over the whole trace.
#[pyfunction]
#[pyo3(signature = (path, detector="amp", *, format="auto", block_size=4096, reads_only=false))]
fn detect<'py>(
    py: Python<'py>,
    path: &str,
    detector: &str,
    format: &str,
    block_size: u64,
    reads_only: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let fmt = parse_format(format)?;
    let cfg = EngineConfig { block_size, reads_only, ..EngineConfig::default() };
    let (p, spec) = (path.to_string(), detector.to_string());
    let reports = py
        .allow_threads(|| -> Result<_, SimError> {
            let trace = LoadedTrace::load(&p, fmt)?;
            let acc = bufsim_core::run::block_accesses(&trace.requests, trace.format.address_kind(), &cfg);
            Ok(bufsim_core::policy::amp::classify(&acc, &spec)?)
        })
        .map_err(to_py)?;
    reports
        .into_iter()
        .map(|(ctx, r)| {
            let d = PyDict::new(py);
            d.set_item("ctx", ctx)?;
            d.set_item("pattern", r.pattern.name())?;
            d.set_item("r_bar", r.r_bar)?;
            d.set_item("accesses", r.accesses)?;
            d.set_item("unique_blocks", r.unique_blocks)?;
            d.set_item("loop_size", r.loop_size)?;
            d.set_item("loop_time", r.loop_time.map(|t| t.0))?;
            d.set_item("loop_time_dev", r.loop_time.map(|t| t.1))?;
            Ok(d)
        })
        .collect()
}

// ---- Trace analyses (bufsim-analysis): `analyze` and `mrc`, each returning its report as JSON.

fn engine_config(block_size: u64, reads_only: bool) -> EngineConfig {
    EngineConfig { block_size, reads_only, ..EngineConfig::default() }
}

/// Every characterization of a trace (`bufsim analyze`), as a JSON object;
/// `breakdown_policies` and `breakdown_cache` (a size string) add the MQ paper's Table 3.
#[pyfunction]
#[pyo3(signature = (path, *, format="auto", block_size=4096, reads_only=false, working_set=true, contexts=8, hill_fraction=0.1, jobs=0, breakdown_policies=None, breakdown_cache=None, seed=42))]
#[allow(clippy::too_many_arguments)]
fn analyze(
    py: Python<'_>,
    path: &str,
    format: &str,
    block_size: u64,
    reads_only: bool,
    working_set: bool,
    contexts: usize,
    hill_fraction: f64,
    jobs: usize,
    breakdown_policies: Option<Vec<String>>,
    breakdown_cache: Option<String>,
    seed: u64,
) -> PyResult<String> {
    let breakdown = match (breakdown_policies, breakdown_cache) {
        (Some(p), Some(c)) => {
            let blocks = bufsim_core::spec::parse_cache_blocks(&c, block_size.max(1)).map_err(|e| SpecError::new_err(e.to_string()))?;
            Some((p, blocks))
        }
        (None, None) => None,
        _ => return Err(SpecError::new_err("the breakdown needs both policies and a cache size")),
    };
    let opts = bufsim_analysis::AnalysisOptions {
        engine: engine_config(block_size, reads_only),
        format: parse_format(format)?,
        working_set,
        contexts,
        hill_fraction,
        jobs,
        breakdown,
        seed,
    };
    let p = path.to_string();
    let a = py.allow_threads(|| bufsim_analysis::analyze_trace(&p, &opts)).map_err(to_py)?;
    Ok(a.to_json())
}

/// LRU miss ratio curves (`bufsim mrc`): exact and/or SHARDS, as a JSON object. `sizes` are
/// size strings (`64MiB`, `2000blocks`); `None` is a geometric grid, `all_sizes` every size.
#[pyfunction]
#[pyo3(signature = (path, *, sizes=None, all_sizes=false, exact=true, shards_rate=None, shards_size=None, seed=42, format="auto", block_size=4096, reads_only=false))]
#[allow(clippy::too_many_arguments)]
fn mrc(
    py: Python<'_>,
    path: &str,
    sizes: Option<Vec<String>>,
    all_sizes: bool,
    exact: bool,
    shards_rate: Option<f64>,
    shards_size: Option<u64>,
    seed: u64,
    format: &str,
    block_size: u64,
    reads_only: bool,
) -> PyResult<String> {
    use bufsim_analysis::{ShardsMode, Sizes};
    let sizes = match (sizes, all_sizes) {
        (Some(_), true) => return Err(SpecError::new_err("give cache sizes or ask for all sizes, not both")),
        (None, true) => Sizes::All,
        (None, false) => Sizes::Grid,
        (Some(list), false) => Sizes::List(
            list.iter()
                .map(|s| bufsim_core::spec::parse_cache_blocks(s, block_size.max(1)))
                .collect::<Result<_, _>>()
                .map_err(|e| SpecError::new_err(e.to_string()))?,
        ),
    };
    let shards = match (shards_rate, shards_size) {
        (Some(_), Some(_)) => return Err(SpecError::new_err("SHARDS samples at a fixed rate or a fixed size, not both")),
        (Some(rate), None) => Some(ShardsMode::FixedRate { rate }),
        (None, Some(blocks)) => Some(ShardsMode::FixedSize { blocks }),
        (None, None) => None,
    };
    let opts = bufsim_analysis::MrcOptions { engine: engine_config(block_size, reads_only), format: parse_format(format)?, sizes, exact, shards, seed };
    let p = path.to_string();
    let r = py.allow_threads(|| bufsim_analysis::mrc_trace(&p, &opts)).map_err(to_py)?;
    Ok(r.to_json())
}

/// Converts a trace into bufsim's binary format (`.bst`); returns what was read and written.
#[pyfunction]
#[pyo3(signature = (path, out, *, format="auto", skip_bad=false))]
fn convert<'py>(py: Python<'py>, path: &str, out: &str, format: &str, skip_bad: bool) -> PyResult<Bound<'py, PyDict>> {
    let fmt = parse_format(format)?;
    let (p, o) = (path.to_string(), out.to_string());
    let read = ReadOptions { skip_bad };
    let s = py
        .allow_threads(|| bufsim_core::trace::convert(&p, fmt, &o, &read))
        .map_err(|e| to_py(SimError::Trace(e)))?;
    let d = PyDict::new(py);
    d.set_item("format", s.format.name())?;
    d.set_item("requests", s.requests)?;
    d.set_item("names", s.names)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("skipped_records", s.skipped.count)?;
    d.set_item("skipped", if s.skipped.is_empty() { String::new() } else { s.skipped.summary() })?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<Trace>()?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(prefetchers, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(size_to_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_policy, m)?)?;
    m.add_function(wrap_pyfunction!(filter_trace, m)?)?;
    m.add_function(wrap_pyfunction!(breakdown, m)?)?;
    m.add_function(wrap_pyfunction!(run_timeline, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(amp_table1, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;

    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(mrc, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add("BufsimError", m.py().get_type::<BufsimError>())?;
    m.add("TraceFormatError", m.py().get_type::<TraceFormatError>())?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("FORMATS", Format::NAMES.to_vec())?;
    m.add("MAX_CLOSED", bufsim_core::timed::MAX_CLOSED)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
