//! Thin bindings: convert Python arguments to Rust types, release the GIL for the simulation,
//! convert results back. No simulation logic lives here.

use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use bufsim_core::engine::EngineConfig;
use bufsim_core::policy::POLICIES;
use std::sync::Arc;

use bufsim_core::run::{run_trace, LoadedTrace, RunConfig, RunOptions, RunResult};
use bufsim_core::spec::Size;
use bufsim_core::timed::{Think, TimedStats, TimingOptions};
use bufsim_core::trace::{Format, TraceErrorKind};
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
    Format::from_name(format).map(Some).ok_or_else(|| {
        SpecError::new_err(format!(
            "unknown trace format `{format}`; use auto or one of {}",
            Format::NAMES.join(", ")
        ))
    })
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

fn timing_options(t: &TimingArgs, block_size: u64) -> PyResult<(Option<TimingOptions>, u64)> {
    let gap = match Size::parse(t.file_gap).map_err(|e| SpecError::new_err(format!("file gap: {e}")))? {
        Size::Bytes(b) => b.div_ceil(block_size.max(1)),
        Size::Blocks(n) => n,
    };
    if !t.timing {
        return Ok((None, gap));
    }
    let think = Think::parse(t.think).map_err(SpecError::new_err)?;
    let opts = TimingOptions { device: t.device.to_string(), scheduler: t.scheduler.to_string(), think, single_stream: t.single_stream };
    Ok((Some(opts), gap))
}

#[allow(clippy::too_many_arguments)]
fn run_options(format: &str, block_size: u64, reads_only: bool, cluster: &str, seed: u64, jobs: usize, check: bool, t: &TimingArgs) -> PyResult<RunOptions> {
    let cluster_bytes = match Size::parse(cluster).map_err(|e| SpecError::new_err(format!("cluster size: {e}")))? {
        Size::Bytes(b) => b,
        Size::Blocks(n) => n.saturating_mul(block_size),
    };
    if cluster_bytes < block_size {
        return Err(SpecError::new_err(format!("cluster size `{cluster}` is smaller than one block")));
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
    })
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
            if let Some(t) = &r.timing {
                set_timing(py, &d, t)?;
            }
            Ok(d)
        })
        .collect()
}

const MS: f64 = 1e6;
const S: f64 = 1e9;

/// The timed-mode fields of a result dict (names as in docs/timing.md).
fn set_timing(py: Python<'_>, d: &Bound<'_, PyDict>, t: &TimedStats) -> PyResult<()> {
    d.set_item("exec_time_s", t.exec_time_ns as f64 / S)?;
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
            Ok(e)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("devices", devices)?;
    Ok(())
}

/// Runs every (policy, read-ahead, cache) combination over the trace; one dict per run, in order.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, *, prefetches=vec!["none".to_string()], format="auto", block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false, timing=false, device="st39102lw", scheduler="noop", think="trace", single_stream=false, file_gap="0blocks"))]
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
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let t = TimingArgs { timing, device, scheduler, think, single_stream, file_gap };
    let opts = run_options(format, block_size, reads_only, cluster, seed, jobs, check, &t)?;
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
    #[pyo3(signature = (path, *, format="auto"))]
    fn new(py: Python<'_>, path: &str, format: &str) -> PyResult<Self> {
        let fmt = parse_format(format)?;
        let p = path.to_string();
        let loaded = py.allow_threads(|| LoadedTrace::load(&p, fmt)).map_err(|e| to_py(SimError::Trace(e)))?;
        Ok(Trace { inner: Arc::new(loaded), path: path.to_string() })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format.name()
    }

    fn __len__(&self) -> usize {
        self.inner.requests.len()
    }

    #[pyo3(signature = (policies, caches, *, prefetches=vec!["none".to_string()], block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false, timing=false, device="st39102lw", scheduler="noop", think="trace", single_stream=false, file_gap="0blocks"))]
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
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let t = TimingArgs { timing, device, scheduler, think, single_stream, file_gap };
        let opts = run_options("auto", block_size, reads_only, cluster, seed, jobs, check, &t)?;
        let configs = cross(&policies, &prefetches, &caches);
        let inner = Arc::clone(&self.inner);
        let results = py.allow_threads(|| inner.run(&configs, &opts)).map_err(to_py)?;
        to_dicts(py, results, block_size)
    }
}

/// The policy registry: name, aliases, paper, summary, parameters with defaults.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    POLICIES
        .iter()
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

/// Tells a trace's format from its content.
#[pyfunction]
fn detect_format(py: Python<'_>, path: &str) -> PyResult<&'static str> {
    let p = path.to_string();
    py.allow_threads(|| bufsim_core::trace::detect(&p))
        .map(|f| f.name())
        .map_err(|e| to_py(SimError::Trace(e)))
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
    m.add("BufsimError", m.py().get_type::<BufsimError>())?;
    m.add("TraceFormatError", m.py().get_type::<TraceFormatError>())?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("FORMATS", Format::NAMES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
