//! Thin bindings: convert Python arguments to Rust types, release the GIL for the simulation,
//! convert results back. No simulation logic lives here.

use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use bufsim_core::engine::EngineConfig;
use bufsim_core::policy::registry as policies;
use std::sync::Arc;

/// Large tables on huge pages (see `bufsim_core::huge_pages`).
#[global_allocator]
static ALLOC: bufsim_core::huge_pages::HugePageAlloc = bufsim_core::huge_pages::HugePageAlloc;

use bufsim_core::breakdown::breakdown_trace;
use bufsim_core::hierarchy::filter_file;
use bufsim_core::options::Options;
use bufsim_core::row::{row, RESULT_FIELDS};
use bufsim_core::run::{run_trace, LoadedTrace, RunConfig, RunOptions};
use bufsim_core::spec::Size;
use bufsim_core::trace::BlockCsvWriter;
use bufsim_core::trace::{Format, Meter, ReadOptions, TraceErrorKind};
use bufsim_core::SimError;

create_exception!(_core, BufsimError, PyValueError, "Base class of bufsim's errors.");
create_exception!(
    _core,
    TraceFormatError,
    BufsimError,
    "A trace that cannot be read: unknown format or malformed record."
);
create_exception!(_core, SpecError, BufsimError, "A policy spec, size or option that cannot be understood.");

fn to_py(e: SimError) -> PyErr {
    let msg = e.to_string();
    match e {
        SimError::Trace(t) => match t.kind {
            TraceErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            TraceErrorKind::Io => PyOSError::new_err(msg),
            TraceErrorKind::UnknownFormat | TraceErrorKind::Malformed => TraceFormatError::new_err(msg),
            // Only a cancelled call stops so, and `interruptible` raises the handler's exception
            // in its place.
            TraceErrorKind::Interrupted => PyKeyboardInterrupt::new_err(msg),
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

/// Options from the JSON object of those the caller set: resolved (defaults filled in,
/// validated) into the canonical options results echo and the engine's options.
fn options(json: &str) -> PyResult<(Options, RunOptions)> {
    Options::parse_resolved(json).map_err(|e| SpecError::new_err(e.to_string()))
}

/// Counters a long call updates while it runs (stage, done, total), polled from another
/// thread to draw a progress bar (`bufsim.progress`).
#[pyclass(frozen, module = "bufsim._core")]
struct Progress {
    inner: Arc<bufsim_core::trace::Progress>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress { inner: Arc::new(Default::default()) }
    }

    /// `(serial, what, unit, done, total)`: serial changes when a new stage starts; total 0
    /// when unknown.
    fn snapshot(&self) -> (u64, String, &'static str, u64, u64) {
        let s = self.inner.snapshot();
        (s.serial, s.what, s.unit, s.done, s.total)
    }
}

/// The counters a call reports to: the caller's (it draws a bar), or fresh ones. Either way they
/// carry the call's cancel flag, which [`interruptible`] sets on Ctrl-C.
fn counters(progress: Option<&Bound<'_, Progress>>) -> Arc<bufsim_core::trace::Progress> {
    progress.map_or_else(Default::default, |p| Arc::clone(&p.get().inner))
}

/// How often a waiting call lets Python run its signal handlers.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The stack of the thread a call computes on: what the main thread of a process gets, so
/// moving the work off it changes nothing.
const WORK_STACK: usize = 8 << 20;

/// Runs `work` on a thread of its own while this one, the GIL released, waits for it and every
/// 50 ms lets Python run its signal handlers. Python runs them only between bytecodes, so
/// without this a Ctrl-C in a Python session waited for the whole call. When a handler raises
/// (KeyboardInterrupt), `counters` is cancelled, the work stops at its next read of the trace
/// or batch of requests, and the call raises that exception once the work has ended. Outside
/// the main thread Python runs no handlers, and the call just waits.
fn interruptible<T: Send>(
    py: Python<'_>,
    counters: &bufsim_core::trace::Progress,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    /// Tells the waiting thread the work has ended, also when it unwinds from a panic.
    struct Ended<'a>(&'a AtomicBool, std::thread::Thread);
    impl Drop for Ended<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
            self.1.unpark();
        }
    }
    let ended = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiter = std::thread::current();
        let handle = std::thread::Builder::new()
            .name("bufsim".into())
            .stack_size(WORK_STACK)
            .spawn_scoped(s, || {
                let _ended = Ended(&ended, waiter);
                work()
            })
            .map_err(|e| PyOSError::new_err(format!("cannot start a thread for the computation: {e}")))?;
        let mut raised = None;
        while !ended.load(Ordering::Acquire) {
            py.allow_threads(|| std::thread::park_timeout(SIGNAL_POLL));
            if raised.is_none() && !ended.load(Ordering::Acquire) {
                if let Err(e) = py.check_signals() {
                    counters.cancel();
                    raised = Some(e);
                }
            }
        }
        let out = py.allow_threads(|| handle.join()).unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if raised.is_none() {
            // A signal the work ended too soon to be asked about still comes first (as it would
            // at Python's next bytecode).
            raised = py.check_signals().err();
        }
        match raised {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Runs every (policy, read-ahead, cache) combination over the trace with `options` (a JSON
/// object of the options set); one row (a dict of the result table's fields) per run, in order.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, prefetches, options, progress=None))]
fn run(
    py: Python<'_>,
    path: &str,
    policies: Vec<String>,
    caches: Vec<String>,
    prefetches: Vec<String>,
    options: &str,
    progress: Option<&Bound<'_, Progress>>,
) -> PyResult<Vec<PyObject>> {
    let (o, mut opts) = self::options(options)?;
    let counters = counters(progress);
    opts.meter = Meter::new(Arc::clone(&counters));
    let configs = RunConfig::cross(&policies, &prefetches, &caches);
    let path = path.to_string();
    let results = interruptible(py, &counters, || run_trace(&path, &configs, &opts))?.map_err(to_py)?;
    results.iter().map(|r| to_object(py, &serde_json::Value::Object(row(r, &o)))).collect()
}

/// Checks options and every configuration without reading a trace; returns the canonical
/// options (every option, defaults filled in) as a JSON object.
#[pyfunction]
#[pyo3(signature = (options, policies=vec![], caches=vec![], prefetches=vec![]))]
fn resolve_options(
    options: &str,
    policies: Vec<String>,
    caches: Vec<String>,
    prefetches: Vec<String>,
) -> PyResult<String> {
    let (o, opts) = self::options(options)?;
    bufsim_core::run::validate(&RunConfig::cross(&policies, &prefetches, &caches), &opts).map_err(to_py)?;
    Ok(serde_json::Value::Object(o.to_json()).to_string())
}

/// The option table: name, section, default (canonical form), implied (what an unset timed
/// option stands for), sql type, many (a list), doc.
#[pyfunction]
fn option_fields(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    Options::fields()
        .into_iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", f.name)?;
            d.set_item("section", f.section.name())?;
            d.set_item("default", f.default.to_string())?;
            d.set_item("implied", f.implied)?;
            d.set_item("sql", f.sql)?;
            d.set_item("many", f.many)?;
            d.set_item("doc", f.doc)?;
            let flag = bufsim_cli::run_args::flag(&f);
            d.set_item("flags", [Some(flag.long.as_str()), flag.short].into_iter().flatten().collect::<Vec<_>>())?;
            d.set_item("range", f.range)?;
            d.set_item("keyed", f.keyed)?;
            Ok(d)
        })
        .collect()
}

/// The run table of result rows (a JSON list of objects with the result table's fields), or
/// with `as_json` one JSON object per line: what `bufsim run` prints, natively or not.
#[pyfunction]
fn results_text(rows: &str, as_json: bool) -> PyResult<String> {
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(rows).map_err(|e| SpecError::new_err(format!("result rows: {e}")))?;
    Ok(if as_json {
        rows.iter().map(bufsim_cli::text::json_line).collect::<Vec<_>>().join("\n")
    } else {
        bufsim_cli::text::results_table(&rows)
    })
}

/// An aligned text table (cells already text; `right`: right-aligned columns).
#[pyfunction]
fn format_table(headers: Vec<String>, rows: Vec<Vec<String>>, right: Vec<bool>) -> String {
    bufsim_cli::text::format_table(&headers, &rows, &right)
}

/// A byte count in binary units as tables show it (`64MiB`, `1.5KiB`).
#[pyfunction]
fn human_bytes(n: u64) -> String {
    bufsim_cli::text::human_bytes(n)
}

/// The result table: name, kind (str, int, float, bool, histogram, json), sql type, unit,
/// timed (only timed runs fill it), doc.
#[pyfunction]
fn result_fields(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    RESULT_FIELDS
        .iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", f.name)?;
            d.set_item("kind", f.kind.name())?;
            d.set_item("sql", f.kind.sql())?;
            d.set_item("unit", f.unit)?;
            d.set_item("timed", f.timed)?;
            d.set_item("doc", f.doc)?;
            Ok(d)
        })
        .collect()
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
    #[pyo3(signature = (path, *, format="auto", skip_bad=false, progress=None))]
    fn new(
        py: Python<'_>,
        path: &str,
        format: &str,
        skip_bad: bool,
        progress: Option<&Bound<'_, Progress>>,
    ) -> PyResult<Self> {
        let fmt = parse_format(format)?;
        let p = path.to_string();
        let counters = counters(progress);
        let read = ReadOptions { skip_bad, meter: Meter::new(Arc::clone(&counters)) };
        let loaded = interruptible(py, &counters, || LoadedTrace::load_with(&p, fmt, &read))?
            .map_err(|e| to_py(SimError::Trace(e)))?;
        Ok(Trace { inner: Arc::new(loaded), path: path.to_string() })
    }

    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format.name()
    }

    fn __len__(&self) -> usize {
        self.inner.requests.len()
    }

    /// Runs every combination over the decoded trace; options as a JSON object (`options`)
    /// and/or as keywords (keywords win). The trace's own format and skip report hold. One
    /// row (a dict of the result table's fields) per run, in order.
    #[pyo3(signature = (policies, caches, prefetches=vec!["none".to_string()], options="{}", **keywords))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        policies: Vec<String>,
        caches: Vec<String>,
        prefetches: Vec<String>,
        options: &str,
        keywords: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Vec<PyObject>> {
        let options = with_keywords(py, options, keywords)?;
        let (o, mut opts) = self::options(&options)?;
        let counters = counters(None);
        opts.meter = Meter::new(Arc::clone(&counters));
        let configs = RunConfig::cross(&policies, &prefetches, &caches);
        let inner = Arc::clone(&self.inner);
        let results = interruptible(py, &counters, || inner.run(&configs, &opts))?.map_err(to_py)?;
        results.iter().map(|r| to_object(py, &serde_json::Value::Object(row(r, &o)))).collect()
    }
}

/// The options JSON with keyword arguments set on top.
fn with_keywords(py: Python<'_>, options: &str, keywords: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let Some(kw) = keywords.filter(|k| !k.is_empty()) else { return Ok(options.to_string()) };
    let text: String = py.import("json")?.call_method1("dumps", (kw,))?.extract()?;
    let parse =
        |t: &str| serde_json::from_str::<serde_json::Value>(t).map_err(|e| SpecError::new_err(format!("options: {e}")));
    let (mut base, extra) = (parse(options)?, parse(&text)?);
    match (base.as_object_mut(), extra.as_object()) {
        (Some(b), Some(e)) => b.extend(e.clone()),
        _ => return Err(SpecError::new_err("options must be a JSON object")),
    }
    Ok(base.to_string())
}

/// A JSON value as the Python object it reads as.
fn to_object(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any().unbind(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any().unbind(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any().unbind(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            a.iter().map(|x| to_object(py, x)).collect::<PyResult<Vec<_>>>()?.into_pyobject(py)?.into_any().unbind()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_object(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// Writes the second-level stream of `path` through `first_level` to `out` (block-csv); one
/// dict of first-level counters per client.
#[pyfunction]
#[pyo3(signature = (path, out, options))]
fn filter_trace<'py>(
    py: Python<'py>,
    path: &str,
    out: &str,
    options: &str,
) -> PyResult<(u64, Vec<Bound<'py, PyDict>>)> {
    let (_, opts) = self::options(options)?;
    let cfg = opts
        .first_level
        .clone()
        .ok_or_else(|| SpecError::new_err("filtering a trace needs a first level (first_level)"))?;
    let (fmt, engine, seed, block_size) = (opts.format, opts.engine, opts.seed, opts.engine.block_size);
    let (path, out) = (path.to_string(), out.to_string());
    let counters = counters(None);
    let meter = Meter::new(Arc::clone(&counters));
    let (written, stats) = interruptible(py, &counters, || -> Result<_, SimError> {
        // Before the output is created (truncated): it may be the input itself.
        bufsim_core::trace::check_not_input(&path, &out)?;
        // Written as `convert` writes: whole or not at all, and into a FIFO only once a program
        // reads it.
        let (mut stats, mut refused) = (Vec::new(), None);
        let written = bufsim_core::trace::write_atomically(&out, &meter, |file| {
            let mut w = BlockCsvWriter::new(std::io::BufWriter::with_capacity(1 << 20, file), &out, block_size)?;
            match filter_file(&path, fmt, &cfg, &engine, seed, &meter, |r| w.write(r)) {
                Ok(s) => stats = s,
                Err(SimError::Trace(e)) => return Err(e),
                // A spec error is not the output's: kept whole, and the output not written.
                Err(e) => {
                    let stand_in = bufsim_core::trace::TraceError::interrupted(&out);
                    refused = Some(e);
                    return Err(stand_in);
                }
            }
            let (buf, n) = w.finish()?;
            Ok((buf.into_inner().map_err(|e| bufsim_core::trace::TraceError::io(&out, e.error()))?, n))
        });
        match (refused, written) {
            (Some(e), _) => Err(e),
            (None, w) => Ok((w?.0, stats)),
        }
    })?
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

/// The file names of a file trace, in the order its reader numbers them.
#[pyfunction]
fn trace_file_names(py: Python<'_>, path: &str) -> PyResult<Vec<String>> {
    let p = path.to_string();
    let t = py.allow_threads(|| LoadedTrace::load(&p, None)).map_err(|e| to_py(e.into()))?;
    Ok(t.file_names)
}

/// Bits of a page key below the file: (file << PAGE_KEY_SHIFT) | block, so blocks up to 2^40
/// (4 PiB files of 4 KiB pages). Python reads it as `_core.PAGE_KEY_SHIFT`.
const PAGE_KEY_SHIFT: u32 = 40;

/// (file, block) pairs as little-endian u64 page keys, 8 bytes each: a long run logs tens of
/// millions of pages, which as Python tuples took gigabytes (numpy reads the bytes in place).
fn page_keys(pairs: impl Iterator<Item = (u32, u64)>) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(pairs.size_hint().0 * 8);
    for (f, b) in pairs {
        if b >> PAGE_KEY_SHIFT != 0 {
            return Err(SpecError::new_err(format!(
                "block {b} of file {f} is past the page log's 2^{PAGE_KEY_SHIFT} blocks"
            )));
        }
        out.extend_from_slice(&((u64::from(f) << PAGE_KEY_SHIFT) | b).to_le_bytes());
    }
    Ok(out)
}

/// One run's page-level log over a file trace (`bufsim validate`): blocks inserted and evicted as
/// page keys ((file << 40) | block, little-endian u64 bytes; `inserted_prefetch` one byte per
/// inserted page, 1 if read-ahead brought it), read-ahead decisions, counters. `sizes` gives files
/// their real size in bytes; `steps` (request index, blocks) change the cache size as the trace
/// goes.
#[pyfunction]
#[pyo3(signature = (path, policy, cache_blocks, prefetch, sizes, file_max, reads_only=false, steps=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn page_log<'py>(
    py: Python<'py>,
    path: &str,
    policy: &str,
    cache_blocks: u64,
    prefetch: &str,
    sizes: Vec<(String, u64)>,
    file_max: Vec<(String, u64)>,
    reads_only: bool,
    steps: Vec<(u64, u64)>,
) -> PyResult<Bound<'py, PyDict>> {
    let engine = EngineConfig { reads_only, ..EngineConfig::default() };
    let (p, pol, pre) = (path.to_string(), policy.to_string(), prefetch.to_string());
    let log = py
        .allow_threads(|| {
            bufsim_core::page_log::page_log(&p, &pol, cache_blocks, &pre, &sizes, &file_max, &steps, engine)
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("file_names", log.file_names)?;
    d.set_item("file_blocks", log.file_blocks)?;
    d.set_item("inserted", PyBytes::new(py, &page_keys(log.inserted.iter().map(|&(f, b, _)| (f, b)))?))?;
    let prefetched: Vec<u8> = log.inserted.iter().map(|&(_, _, ra)| u8::from(ra)).collect();
    d.set_item("inserted_prefetch", PyBytes::new(py, &prefetched))?;
    d.set_item("evicted", PyBytes::new(py, &page_keys(log.evicted.iter().copied())?))?;
    d.set_item("dropped", PyBytes::new(py, &page_keys(log.dropped.iter().copied())?))?;
    d.set_item("decisions", log.decisions.iter().map(|x| (x.file, x.start, x.size, x.async_size)).collect::<Vec<_>>())?;
    d.set_item("requests", log.stats.requests)?;
    d.set_item("evictions", log.stats.evictions)?;
    d.set_item("accesses", log.stats.accesses)?;
    d.set_item("hits", log.stats.hits)?;
    d.set_item("misses", log.stats.misses)?;
    d.set_item("prefetched", log.stats.prefetched)?;
    d.set_item("disk_requests", log.stats.disk_requests)?;
    let m = PyDict::new(py);
    for (k, v) in log.metrics {
        m.set_item(k, v)?;
    }
    d.set_item("metrics", m)?;
    Ok(d)
}

/// The MQ paper's Table 3 for each (policy, cache): hits and misses of accesses whose temporal
/// distance is below or at least the cache size.
#[pyfunction]
#[pyo3(signature = (path, policies, caches, options))]
fn breakdown<'py>(
    py: Python<'py>,
    path: &str,
    policies: Vec<String>,
    caches: Vec<String>,
    options: &str,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let (_, mut opts) = self::options(options)?;
    let counters = counters(None);
    opts.meter = Meter::new(Arc::clone(&counters));
    let configs = RunConfig::cross(&policies, &["none".to_string()], &caches);
    let p = path.to_string();
    let rows = interruptible(py, &counters, || breakdown_trace(&p, &configs, &opts))?.map_err(to_py)?;
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

/// One registry as Python sees it: `kind` is `policy`, `prefetch`, `device`, `scheduler` or
/// `generator`. Each entry: kind, name, aliases, paper, summary, the spec a preset stands for,
/// parameters `(name, default, doc)` with their `ranges` in the same order, and the capability
/// flags of what it stands for (`needs_future`, `partitioned`).
#[pyfunction]
fn registry<'py>(py: Python<'py>, kind: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    use bufsim_core::config::registry::{Capabilities, Info, Kind};
    let k = Kind::from_noun(kind).ok_or_else(|| {
        let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.noun()).collect();
        SpecError::new_err(format!("unknown registry `{kind}`; use one of {}", kinds.join(", ")))
    })?;
    let entries: Vec<(&Info, Capabilities)> = match k {
        Kind::Policy => policies::all().map(|p| (p, policies::capabilities(p.name))).collect(),
        Kind::Prefetch => bufsim_core::prefetch::all().map(|p| (p, p.caps)).collect(),
        Kind::Device => bufsim_core::device::DEVICES.iter().map(|p| (p, p.caps)).collect(),
        Kind::Scheduler => bufsim_core::device::SCHEDULERS.iter().map(|p| (p, p.caps)).collect(),
        Kind::Generator => bufsim_core::trace::synth::generators().map(|p| (p, p.caps)).collect(),
    };
    entries
        .into_iter()
        .map(|(p, caps)| {
            let d = PyDict::new(py);
            d.set_item("kind", k.noun())?;
            d.set_item("name", p.name)?;
            d.set_item("aliases", p.aliases.to_vec())?;
            d.set_item("paper", p.paper)?;
            d.set_item("summary", p.summary)?;
            d.set_item("preset_of", p.preset_of)?;
            let params: Vec<(&str, &str, &str)> = p.params.iter().map(|x| (x.name, x.default, x.doc)).collect();
            d.set_item("params", params)?;
            let ranges: Vec<String> = p.params.iter().map(|x| x.range.to_string()).collect();
            d.set_item("ranges", ranges)?;
            d.set_item("needs_future", caps.needs_future)?;
            d.set_item("partitioned", caps.partitioned())?;
            Ok(d)
        })
        .collect()
}

/// `block_size` if the engine takes it, else the engine's own refusal: every function here that
/// divides by a block size checks it first, so a 0 is a SpecError and not a division panic.
fn checked_block_size(block_size: u64) -> PyResult<u64> {
    bufsim_core::run::check_block_size(block_size).map_err(|e| SpecError::new_err(e.to_string()))?;
    Ok(block_size)
}

/// Parses a size (`64MiB`, `2000blocks`) into whole blocks of `block_size` bytes.
#[pyfunction]
#[pyo3(signature = (text, block_size=4096))]
fn size_to_blocks(text: &str, block_size: u64) -> PyResult<u64> {
    let block_size = checked_block_size(block_size)?;
    Size::parse(text).map(|s| s.to_blocks(block_size)).map_err(|e| SpecError::new_err(e.to_string()))
}

/// The one spelling of a policy spec (`LRU`, ` lru`, `lru()` are `lru`); sweeps key runs by it.
#[pyfunction]
fn canonical_policy(spec: &str) -> PyResult<String> {
    policies::canonical(spec).map_err(|e| SpecError::new_err(e.to_string()))
}

/// The one spelling of a read-ahead spec (`LINUX`, `linux()`, `linux(min=3)` are `linux`);
/// sweeps key runs by it.
#[pyfunction]
fn canonical_prefetch(spec: &str) -> PyResult<String> {
    bufsim_core::prefetch::canonical(spec).map_err(|e| SpecError::new_err(e.to_string()))
}

/// Tells a trace's format from its content.
#[pyfunction]
fn detect_format(py: Python<'_>, path: &str) -> PyResult<&'static str> {
    let p = path.to_string();
    py.allow_threads(|| bufsim_core::trace::detect(&p)).map(|f| f.name()).map_err(|e| to_py(SimError::Trace(e)))
}

// --- AMP: partition timelines, synthetic streams, Table 1, pattern detection ---

/// Runs one policy with every option of `run` and returns its partition timeline: the clock
/// (`accesses` or `ns`) and rows `(time, partition, tag, blocks, value)` (`value` is NaN when
/// the policy keeps none; storage-aware policies: tag = target blocks, value = wait ms).
/// A partition timeline as it crosses to Python: the clock, then `(time, partition, tag, blocks,
/// value)` rows.
/// The partitioned policies, from their capability flags.
fn partitioned_names() -> String {
    let names: Vec<&str> =
        policies::all().filter(|p| policies::capabilities(p.name).partitioned()).map(|p| p.name).collect();
    names.join(", ")
}

type TimelineRows = (&'static str, Vec<(u64, String, u64, u32, f64)>);

#[pyfunction]
#[pyo3(signature = (path, policy, cache, prefetch, options))]
fn run_timeline(
    py: Python<'_>,
    path: &str,
    policy: &str,
    cache: &str,
    prefetch: &str,
    options: &str,
) -> PyResult<TimelineRows> {
    let (_, mut opts) = self::options(options)?;
    opts.jobs = 1;
    let counters = counters(None);
    opts.meter = Meter::new(Arc::clone(&counters));
    let configs = vec![RunConfig::new(policy, cache).with_prefetch(prefetch)];
    let p = path.to_string();
    let mut results = interruptible(py, &counters, || run_trace(&p, &configs, &opts))?.map_err(to_py)?;
    let r = results.pop().expect("one configuration, one result");
    let tl = r.timeline.ok_or_else(|| {
        let partitioned = bufsim_core::spec::Spec::parse(policy)
            .map(|s| policies::capabilities(&s.name).partitioned())
            .unwrap_or(false);
        SpecError::new_err(if partitioned {
            // A partitioned policy records nothing only when its own parameter says so.
            format!("policy `{policy}` records no partition timeline with timeline=0; give timeline=N, the accesses between samples")
        } else {
            format!(
                "policy `{policy}` records no partition timeline; use a partitioned policy (see `bufsim policies`: {})",
                partitioned_names()
            )
        })
    })?;
    let n = tl.names.len();
    let rows = (0..tl.samples())
        .flat_map(|i| (0..n).map(move |p| (i, p)))
        .map(|(i, p)| {
            (tl.times[i], tl.names[p].clone(), tl.tag(i, p), tl.size(i, p), tl.value(i, p).unwrap_or(f64::NAN))
        })
        .collect();
    Ok((tl.clock.name(), rows))
}

/// Writes the synthetic trace `spec` (`amp-a`, `amp-mix(loop1=2000)`) from `seed` to `path`
/// as interchange CSV; returns the number of requests.
#[pyfunction]
#[pyo3(signature = (spec, path, *, seed=1))]
fn generate(py: Python<'_>, spec: &str, path: &str, seed: u64) -> PyResult<usize> {
    let counters = counters(None);
    let m = Meter::new(Arc::clone(&counters));
    interruptible(py, &counters, || -> Result<usize, SimError> {
        let synth = bufsim_core::trace::synth::generate_until(spec, seed, &m)?;
        synth.write_file(path, &m)?;
        Ok(synth.requests.len())
    })?
    .map_err(to_py)
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
    let cfg = engine_config(checked_block_size(block_size)?, reads_only);
    let (p, spec) = (path.to_string(), detector.to_string());
    let counters = counters(None);
    let read = ReadOptions { skip_bad: false, meter: Meter::new(Arc::clone(&counters)) };
    let reports = interruptible(py, &counters, || -> Result<_, SimError> {
        let trace = LoadedTrace::load_with(&p, fmt, &read)?;
        let acc = bufsim_core::run::block_accesses(&trace.requests, trace.format.address_kind(), &cfg);
        bufsim_core::policy::amp::classify(&acc, &spec, &read.meter)
    })?
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
#[pyo3(signature = (path, *, format="auto", block_size=4096, reads_only=false, working_set=true, contexts=8, hill_fraction=0.1, jobs=0, breakdown_policies=None, breakdown_cache=None, seed, progress=None))]
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
    progress: Option<&Bound<'_, Progress>>,
) -> PyResult<String> {
    let block_size = checked_block_size(block_size)?;
    let breakdown = match (breakdown_policies, breakdown_cache) {
        (Some(p), Some(c)) => {
            let blocks =
                bufsim_core::spec::parse_cache_blocks(&c, block_size).map_err(|e| SpecError::new_err(e.to_string()))?;
            Some((p, blocks))
        }
        (None, None) => None,
        _ => return Err(SpecError::new_err("the breakdown needs both policies and a cache size")),
    };
    let counters = counters(progress);
    let opts = bufsim_analysis::AnalysisOptions {
        engine: engine_config(block_size, reads_only),
        format: parse_format(format)?,
        working_set,
        contexts,
        hill_fraction,
        jobs,
        breakdown,
        seed,
        meter: Meter::new(Arc::clone(&counters)),
    };
    let p = path.to_string();
    let a = interruptible(py, &counters, || bufsim_analysis::analyze_trace(&p, &opts))?.map_err(to_py)?;
    Ok(a.to_json())
}

/// LRU miss ratio curves (`bufsim mrc`): exact and/or SHARDS, as a JSON object. `sizes` are
/// size strings (`64MiB`, `2000blocks`); `None` is a geometric grid, `all_sizes` every size.
#[pyfunction]
#[pyo3(signature = (path, *, sizes=None, all_sizes=false, exact=true, shards_rate=None, shards_size=None, seed, format="auto", block_size=4096, reads_only=false, progress=None))]
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
    progress: Option<&Bound<'_, Progress>>,
) -> PyResult<String> {
    use bufsim_analysis::{ShardsMode, Sizes};
    let block_size = checked_block_size(block_size)?;
    let sizes = match (sizes, all_sizes) {
        (Some(_), true) => return Err(SpecError::new_err("give cache sizes or ask for all sizes, not both")),
        (None, true) => Sizes::All,
        (None, false) => Sizes::Grid,
        (Some(list), false) => Sizes::List(
            list.iter()
                .map(|s| bufsim_core::spec::parse_cache_blocks(s, block_size))
                .collect::<Result<_, _>>()
                .map_err(|e| SpecError::new_err(e.to_string()))?,
        ),
    };
    let shards = match (shards_rate, shards_size) {
        (Some(_), Some(_)) => {
            return Err(SpecError::new_err("SHARDS samples at a fixed rate or a fixed size, not both"))
        }
        (Some(rate), None) => Some(ShardsMode::FixedRate { rate }),
        (None, Some(blocks)) => Some(ShardsMode::FixedSize { blocks }),
        (None, None) => None,
    };
    let counters = counters(progress);
    let opts = bufsim_analysis::MrcOptions {
        engine: engine_config(block_size, reads_only),
        format: parse_format(format)?,
        sizes,
        exact,
        shards,
        seed,
        meter: Meter::new(Arc::clone(&counters)),
    };
    let p = path.to_string();
    let r = interruptible(py, &counters, || bufsim_analysis::mrc_trace(&p, &opts))?.map_err(to_py)?;
    Ok(r.to_json())
}

/// Miss ratio curve of any policy by miniature simulation at sampling rate `rate` (`bufsim mrc
/// --policy SPEC --sample RATE`), as a JSON object. `sizes` as for [`mrc`]; `None` is the grid.
#[pyfunction]
#[pyo3(signature = (path, policy, *, rate, sizes=None, scale=None, seed, format="auto", block_size=4096, reads_only=false, jobs=0))]
#[allow(clippy::too_many_arguments)]
fn mrc_miniature(
    py: Python<'_>,
    path: &str,
    policy: &str,
    rate: f64,
    sizes: Option<Vec<String>>,
    scale: Option<&str>,
    seed: u64,
    format: &str,
    block_size: u64,
    reads_only: bool,
    jobs: usize,
) -> PyResult<String> {
    let block_size = checked_block_size(block_size)?;
    let how = scale
        .map(bufsim_analysis::MiniatureScale::parse)
        .transpose()
        .map_err(|e| SpecError::new_err(e.to_string()))?
        .unwrap_or_default();
    let sizes: Option<Vec<u64>> = sizes
        .map(|list| {
            list.iter()
                .map(|s| bufsim_core::spec::parse_cache_blocks(s, block_size))
                .collect::<Result<Vec<u64>, _>>()
                .map_err(|e| SpecError::new_err(e.to_string()))
        })
        .transpose()?;
    let counters = counters(None);
    let opts = RunOptions {
        engine: engine_config(block_size, reads_only),
        format: parse_format(format)?,
        seed,
        jobs,
        meter: Meter::new(Arc::clone(&counters)),
        ..RunOptions::default()
    };
    let (p, pol) = (path.to_string(), policy.to_string());
    let r = interruptible(py, &counters, || {
        bufsim_analysis::miniature_trace(&p, &pol, sizes.as_deref(), rate, how, seed, &opts)
    })?
    .map_err(to_py)?;
    Ok(r.to_json())
}

/// Converts a trace into bufsim's binary format (`.bst`); returns what was read and written.
/// Converts a trace into bufsim's binary format (`.bst`), or into libCacheSim's oracleGeneral
/// binary or csv (`to="oracle"`, `"lcs-csv"`: one record per block access of `block_size`
/// bytes); returns what was read and written.
#[pyfunction]
#[pyo3(signature = (path, out, *, format="auto", skip_bad=false, progress=None, to="bst", block_size=4096, reads_only=false))]
#[allow(clippy::too_many_arguments)]
fn convert<'py>(
    py: Python<'py>,
    path: &str,
    out: &str,
    format: &str,
    skip_bad: bool,
    progress: Option<&Bound<'_, Progress>>,
    to: &str,
    block_size: u64,
    reads_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    use bufsim_analysis::LcsFormat;
    let fmt = parse_format(format)?;
    let (p, o) = (path.to_string(), out.to_string());
    let lcs = match to {
        "bst" => None,
        "oracle" | "oraclegeneral" | "oracleGeneral" => Some(LcsFormat::Oracle),
        "lcs-csv" => Some(LcsFormat::Csv),
        _ => return Err(SpecError::new_err(format!("unknown output format `{to}`; use bst, oracle or lcs-csv"))),
    };
    let d = PyDict::new(py);
    if let Some(lcs) = lcs {
        if skip_bad {
            return Err(SpecError::new_err(
                "skipping malformed records is for conversions to .bst; convert to .bst with it first, then from that .bst",
            ));
        }
        let engine = engine_config(checked_block_size(block_size)?, reads_only);
        let counters = counters(progress);
        let m = Meter::new(Arc::clone(&counters));
        let s = interruptible(py, &counters, || bufsim_analysis::export_lcs(&p, fmt, &o, lcs, &engine, &m))?
            .map_err(to_py)?;
        d.set_item("format", s.format.name())?;
        d.set_item("requests", s.records)?;
        d.set_item("names", 0)?;
        d.set_item("bytes", s.bytes)?;
        d.set_item("skipped_records", 0)?;
        d.set_item("skipped", "")?;
        d.set_item("drops_left_out", s.drops)?;
        d.set_item("hints_left_out", s.hints)?;
        return Ok(d);
    }
    let counters = counters(progress);
    let read = ReadOptions { skip_bad, meter: Meter::new(Arc::clone(&counters)) };
    let s = interruptible(py, &counters, || bufsim_core::trace::convert(&p, fmt, &o, &read))?
        .map_err(|e| to_py(SimError::Trace(e)))?;
    d.set_item("format", s.format.name())?;
    d.set_item("requests", s.requests)?;
    d.set_item("names", s.names)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("skipped_records", s.skipped.count)?;
    d.set_item("skipped", if s.skipped.is_empty() { String::new() } else { s.skipped.summary() })?;
    d.set_item("drops_left_out", 0)?;
    d.set_item("hints_left_out", 0)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(page_log, m)?)?;
    m.add_function(wrap_pyfunction!(trace_file_names, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_options, m)?)?;
    m.add_function(wrap_pyfunction!(option_fields, m)?)?;
    m.add_function(wrap_pyfunction!(results_text, m)?)?;
    m.add_function(wrap_pyfunction!(format_table, m)?)?;
    m.add_function(wrap_pyfunction!(human_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(result_fields, m)?)?;
    m.add_class::<Trace>()?;
    m.add_class::<Progress>()?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(size_to_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_policy, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_prefetch, m)?)?;
    m.add_function(wrap_pyfunction!(filter_trace, m)?)?;
    m.add_function(wrap_pyfunction!(breakdown, m)?)?;
    m.add_function(wrap_pyfunction!(run_timeline, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(amp_table1, m)?)?;
    m.add_function(wrap_pyfunction!(detect, m)?)?;

    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(mrc, m)?)?;
    m.add_function(wrap_pyfunction!(mrc_miniature, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add("BufsimError", m.py().get_type::<BufsimError>())?;
    m.add("TraceFormatError", m.py().get_type::<TraceFormatError>())?;
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add("PAGE_KEY_SHIFT", PAGE_KEY_SHIFT)?;
    m.add("FORMATS", Format::NAMES.to_vec())?;
    m.add("MAX_CLOSED", bufsim_core::timed::MAX_CLOSED)?;
    m.add("GRID_OPTIONS", bufsim_cli::run_args::GRID_OPTIONS.to_vec())?;
    m.add("RUN_SECTIONS", bufsim_cli::run_args::RUN_SECTIONS.iter().map(|s| s.name()).collect::<Vec<_>>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
