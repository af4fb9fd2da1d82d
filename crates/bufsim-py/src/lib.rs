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
use bufsim_core::trace::{Format, ReadOptions, TraceErrorKind};
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

#[allow(clippy::too_many_arguments)]
fn run_options(format: &str, block_size: u64, reads_only: bool, cluster: &str, seed: u64, jobs: usize, check: bool, skip_bad: bool) -> PyResult<RunOptions> {
    let cluster_bytes = match Size::parse(cluster).map_err(|e| SpecError::new_err(format!("cluster size: {e}")))? {
        Size::Bytes(b) => b,
        Size::Blocks(n) => n.saturating_mul(block_size),
    };
    if cluster_bytes < block_size {
        return Err(SpecError::new_err(format!("cluster size `{cluster}` is smaller than one block")));
    }
    Ok(RunOptions {
        engine: EngineConfig { block_size, reads_only, cluster_bytes },
        seed,
        format: parse_format(format)?,
        jobs,
        check,
        skip_bad,
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
            d.set_item("skipped_records", r.skipped.count)?;
            d.set_item("skipped", if r.skipped.is_empty() { String::new() } else { r.skipped.summary() })?;
            Ok(d)
        })
        .collect()
}

/// Runs every (policy, read-ahead, cache) combination over the trace; one dict per run, in order.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, *, prefetches=vec!["none".to_string()], format="auto", block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false, skip_bad=false))]
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
    skip_bad: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let opts = run_options(format, block_size, reads_only, cluster, seed, jobs, check, skip_bad)?;
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

    #[pyo3(signature = (policies, caches, *, prefetches=vec!["none".to_string()], block_size=4096, reads_only=false, cluster="64KiB", seed=42, jobs=0, check=false))]
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
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let opts = run_options("auto", block_size, reads_only, cluster, seed, jobs, check, false)?;
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
    m.add_function(wrap_pyfunction!(size_to_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add("BufsimError", m.py().get_type::<BufsimError>())?;
    m.add("TraceFormatError", m.py().get_type::<TraceFormatError>())?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("FORMATS", Format::NAMES.to_vec())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
