//! The options of a run, written once: name, section, default, documentation, how a value is
//! read and how the options become [`RunOptions`]. Python keywords, command-line flags, sweep
//! specs and the columns of a results database are all generated from [`Options::fields`].
//!
//! Options cross the Python binding as one JSON object holding only what the user set;
//! [`Options::from_json`] fills the defaults, [`Options::resolve`] validates them and settles the
//! rules that tie options together (any timing option turns timed mode on; cluster and block
//! sizes), and [`Options::to_json`] gives every option in its canonical form, which is what
//! results echo and sweeps store and hash.

use serde_json::{Map, Value};

use crate::array::Raid0;
use crate::engine::EngineConfig;
use crate::hierarchy::{ClientBy, FirstLevelConfig, Forward, LevelSpec};
use crate::run::{block_size_refused, check_block_size, RunOptions, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE};
use crate::spec::{Size, SpecError};
use crate::timed::{Fault, HitRule, Think, TimingOptions, DEFAULT_DEVICE, DEFAULT_SCHEDULER, MAX_CLOSED};
use crate::trace::Format;

/// Where an option belongs, and so when it is part of a run's identity in a sweep database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// How the trace is read and cut into blocks.
    Trace,
    /// The simulation itself (clustering, seed): always part of a run's identity.
    Run,
    /// Timed mode: part of a run's identity when timing is on.
    Timing,
    /// Placement of files on the device, first-level caches and storage: part of a run's
    /// identity when set to something other than the default.
    Layout,
    Hierarchy,
    Storage,
    /// How the runs are carried out (threads, checks): never changes a number.
    Execution,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Section::Trace => "trace",
            Section::Run => "run",
            Section::Timing => "timing",
            Section::Layout => "layout",
            Section::Hierarchy => "first_level",
            Section::Storage => "storage",
            Section::Execution => "execution",
        }
    }
}

/// One row of the option table.
#[derive(Clone, Debug)]
pub struct OptionField {
    pub name: &'static str,
    pub section: Section,
    /// The default in canonical form (`null`: unset; timed options then take `implied`).
    pub default: Value,
    /// What an unset option stands for once timing is on (device and I/O scheduler).
    pub implied: Option<&'static str>,
    /// SQL type of its column in a results database.
    pub sql: &'static str,
    /// Several values may be given (a list; on the command line a repeatable flag).
    pub many: bool,
    pub doc: &'static str,
    /// The whole numbers a numeric option takes, both bounds included (a block size's
    /// further rule, a power of two, is checked where it is read).
    pub range: Option<(u64, u64)>,
    /// A list of `ID=VALUE` entries keyed by what this names (`device`): an entry naming only
    /// keys an earlier entry named is refused, since the later would win silently.
    pub keyed: Option<&'static str>,
}

macro_rules! options {
    ($( $(#[doc = $doc:literal])+ $section:ident $name:ident : $ty:ty = $default:expr,
        read $read:ident, sql $sql:literal $(, many $many:literal)? $(, keyed $keyed:literal)?
        $(, implied $implied:expr)? $(, range $range:expr)? ; )*) => {
        /// Every option of a run, in canonical form (see the module documentation).
        #[derive(Clone, Debug, PartialEq)]
        pub struct Options {
            $( $(#[doc = $doc])+ pub $name: $ty, )*
        }

        impl Default for Options {
            fn default() -> Self {
                Options { $( $name: $default, )* }
            }
        }

        impl Options {
            /// The option table, in order.
            pub fn fields() -> Vec<OptionField> {
                let d = Options::default();
                vec![$( OptionField {
                    name: stringify!($name),
                    section: Section::$section,
                    default: Value::from(d.$name.clone()),
                    implied: None $( .or(Some($implied)) )?,
                    sql: $sql,
                    many: false $( || $many )?,
                    doc: concat!($($doc),+).trim_ascii(),
                    range: None $( .or(Some($range)) )?,
                    keyed: None $( .or(Some($keyed)) )?,
                }, )*]
            }

            fn set(&mut self, key: &str, v: &Value) -> Result<(), SpecError> {
                match key {
                    $( stringify!($name) => self.$name = $read(stringify!($name), v)?, )*
                    _ => {
                        let known: Vec<&str> = vec![$( stringify!($name) ),*];
                        return Err(SpecError(format!("unknown option `{key}`; known: {}", known.join(", "))));
                    }
                }
                Ok(())
            }

            /// Every option by name, in canonical form.
            pub fn to_json(&self) -> Map<String, Value> {
                let mut m = Map::new();
                $( m.insert(stringify!($name).to_string(), Value::from(self.$name.clone())); )*
                m
            }
        }
    };
}

options! {
    /// Trace format: `auto` (detect from the content) or a format name.
    Trace format: String = "auto".into(), read text, sql "VARCHAR";
    /// Cache block size in bytes (or a size such as 4KiB): a power of two from 512 B to 1 GiB.
    Trace block_size: u64 = 4096, read bytes, sql "BIGINT", range (MIN_BLOCK_SIZE, MAX_BLOCK_SIZE);
    /// Drop write requests (by default reads and writes are both cache accesses).
    Trace reads_only: bool = false, read boolean, sql "BOOLEAN";
    /// Largest disk request the I/O clusterer forms, such as 64KiB or 16blocks (in Python an
    /// integer counts blocks).
    Run cluster: String = "64KiB".into(), read size, sql "VARCHAR";
    /// Seed of every random choice: the same inputs and seed give identical results.
    Run seed: u64 = 42, read uint, sql "UBIGINT", range (0, u64::MAX);
    /// Simulate only the first this many requests of the trace (0: all of them).
    Run max_requests: u64 = 0, read uint, sql "BIGINT", range (0, u64::MAX);
    /// The cache size over the trace, as INDEX=SIZE steps such as 5000=32MiB: from the request
    /// with that index on (0-based, every request of the trace counted) the cache holds SIZE
    /// (an integer counts blocks); before the first step it holds the run's cache size. A
    /// smaller size evicts at once in the policy's order. Count mode; policies lru, fifo, mru,
    /// linux.
    Run cache_steps: Option<String> = None, read cache_steps, sql "VARCHAR", many true;
    /// Simulate time (think time, synchronous and asynchronous I/O, device queues); unset, any
    /// timing or storage option but array and file_gap turns it on.
    Timing timing: Option<bool> = None, read opt_boolean, sql "BOOLEAN";
    /// Device model of every device id, such as st39102lw, ibm-9lzx(age=5), avg(seek=6.5ms) or ssd
    /// (`bufsim devices` lists them).
    Timing device: Option<String> = None, read opt_text, sql "VARCHAR", many true, implied DEFAULT_DEVICE;
    /// I/O scheduler of each device queue: noop, sstf, cscan, deadline(...).
    Timing io_scheduler: Option<String> = None, read opt_text, sql "VARCHAR", many true, implied DEFAULT_SCHEDULER;
    /// Think time before each request: `trace` (as traced) or a time such as 0.1ms (in Python
    /// a number counts seconds).
    Timing think: Option<String> = None, read think, sql "VARCHAR", implied "trace";
    /// Merge all processes (pids) into one stream, as the prefetching paper's AccuSim did.
    Timing single_stream: bool = false, read boolean, sql "BOOLEAN";
    /// Write back the dirty blocks still cached when the last stream ends, the execution time
    /// ending with the flush (its writes and time are counted apart: flush_blocks, flush_time_s).
    Timing final_flush: bool = true, read boolean, sql "BOOLEAN";
    /// When the first demand access to a block read ahead counts as a hit: `completed` (only if
    /// its read had completed when the request began, as the prefetching paper's §5.1 and
    /// AccuSim count) or `own-reads` (also when the request's own read-ahead is reading it).
    /// Count mode has no time: there a block read ahead is a hit at its first demand access.
    /// `linux-accusim` reads no block of the request itself ahead, so the rule changes nothing.
    Timing hit_rule: Option<String> = None, read hit_rule, sql "VARCHAR", implied HitRule::Completed.name();
    /// Free space between consecutive files of a file trace on the device, such as 1MiB or
    /// 256blocks (in Python an integer counts blocks; count mode too).
    Layout file_gap: String = "0blocks".into(), read gap, sql "VARCHAR";
    /// Simulate the second level of a hierarchy behind these first-level client caches (MQ
    /// paper; docs/hierarchy.md).
    Hierarchy first_level: Option<String> = None, read first_level, sql "VARCHAR";
    /// Stripe the trace's logical volume over a RAID-0 array: raid0(devices=16,unit=8KiB) or a
    /// device count (count mode too).
    Storage array: Option<String> = None, read array, sql "VARCHAR";
    /// Device models of single devices: ID=SPEC, such as 3=ibm-9lzx(age=10), 0-7=ibm-9lzx(age=2)
    /// or 2,5=ssd; the others use device.
    Storage device_for: Option<String> = None, read device_for, sql "VARCHAR", many true, keyed "device";
    /// Network between cache and devices: none, or loggp(latency=1us,overhead=0.4us,gap=76ns,
    /// bandwidth=10Gb/s,header=64B).
    Storage network: Option<String> = None, read opt_text, sql "VARCHAR";
    /// Closed workload: this many requests outstanding, the next one issued as soon as one
    /// completes (the trace's think times taken as 0).
    Storage closed: Option<u64> = None, read closed, sql "BIGINT", range CLOSED_RANGE;
    /// Performance faults such as device=6,at=500s,slowdown=2 (on one device the latest in
    /// force wins).
    Storage faults: Option<String> = None, read faults, sql "VARCHAR", many true;
    /// Worker threads for several runs (0: all cores).
    Execution jobs: u64 = 0, read uint, sql "BIGINT", range (0, u64::MAX);
    /// Verify cache and policy invariants after each run.
    Execution check: bool = false, read boolean, sql "BOOLEAN";
    /// Count and pass over malformed trace records instead of stopping at the first.
    Execution skip_bad: bool = false, read boolean, sql "BOOLEAN";
}

/// Separates list items in the canonical text of a list option (device_for, faults).
const LIST_SEP: char = ';';

fn type_err(name: &str, want: &str, v: &Value) -> SpecError {
    SpecError(format!("{} must be {want}, not {v}", name.replace('_', " ")))
}

fn text(name: &str, v: &Value) -> Result<String, SpecError> {
    v.as_str().map(|s| s.trim().to_string()).ok_or_else(|| type_err(name, "a string", v))
}

fn opt_text(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    if v.is_null() {
        Ok(None)
    } else {
        text(name, v).map(Some)
    }
}

fn boolean(name: &str, v: &Value) -> Result<bool, SpecError> {
    v.as_bool().ok_or_else(|| type_err(name, "true or false", v))
}

fn opt_boolean(name: &str, v: &Value) -> Result<Option<bool>, SpecError> {
    if v.is_null() {
        Ok(None)
    } else {
        boolean(name, v).map(Some)
    }
}

fn uint(name: &str, v: &Value) -> Result<u64, SpecError> {
    // A number is shown as given (2^70 as its digits, not as a float), with the range it missed.
    let what = if v.is_number() { "a whole number from 0 to 2^64 - 1" } else { "a whole number (zero or more)" };
    v.as_u64().ok_or_else(|| type_err(name, what, v))
}

/// Bytes: an integer is bytes, a string carries its unit (`4KiB`).
fn bytes(name: &str, v: &Value) -> Result<u64, SpecError> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    match v.as_str().map(Size::parse) {
        Some(Ok(Size::Bytes(b))) => Ok(b),
        Some(Ok(Size::Blocks(_))) => Err(SpecError(format!(
            "{} `{}` must be in bytes, such as 4KiB",
            name.replace('_', " "),
            v.as_str().unwrap_or_default().trim()
        ))),
        Some(Err(e)) => Err(SpecError(format!("{}: {e}", name.replace('_', " ")))),
        // Only the block size is read in bytes.
        None if v.is_number() => Err(block_size_refused(v)),
        None => Err(type_err(name, "bytes or a string such as '4KiB'", v)),
    }
}

/// A size: an integer counts blocks (and must be positive), a string carries its unit.
fn size(name: &str, v: &Value) -> Result<String, SpecError> {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(b) if b > 0 => Ok(format!("{b}blocks")),
            _ => Err(SpecError(format!(
                "{} {n} must be a positive number of blocks (from 1 to 2^64 - 1)",
                name.replace('_', " ")
            ))),
        },
        Value::String(s) => Ok(s.trim().to_string()),
        _ => Err(type_err(name, "a number of blocks or a string such as '64MiB'", v)),
    }
}

/// A file gap: like a size, but 0 (no gap) is allowed.
fn gap(name: &str, v: &Value) -> Result<String, SpecError> {
    if v.as_u64() == Some(0) {
        Ok("0blocks".into())
    } else {
        size(name, v)
    }
}

fn think(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_string())),
        Value::Number(n) => {
            let secs = n.as_f64().unwrap_or(f64::NAN);
            if !(secs >= 0.0 && secs.is_finite()) {
                return Err(SpecError(format!("think time {n} must not be negative")));
            }
            Ok(Some(if secs == 0.0 { "0".into() } else { format!("{secs}s") }))
        }
        _ => Err(type_err(name, "'trace', a time such as '0.1ms' or seconds", v)),
    }
}

fn hit_rule(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    let Some(s) = opt_text(name, v)? else { return Ok(None) };
    HitRule::parse(&s).map(|r| Some(r.name().to_string()))
}

fn array(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    match v {
        Value::Null => Ok(None),
        // The spec's parser holds a count to its range and names it.
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::String(s) => Ok(Some(s.trim().to_string())),
        _ => Err(type_err(name, "a spec such as 'raid0(devices=16,unit=8KiB)' or a device count", v)),
    }
}

/// The outstanding requests a closed workload takes.
const CLOSED_RANGE: (u64, u64) = (1, MAX_CLOSED as u64);

fn closed(name: &str, v: &Value) -> Result<Option<u64>, SpecError> {
    let (least, most) = CLOSED_RANGE;
    match v.as_u64() {
        _ if v.is_null() => Ok(None),
        Some(n) if (least..=most).contains(&n) => Ok(Some(n)),
        _ => Err(type_err(name, &format!("a number of outstanding requests from {least} to {most}"), v)),
    }
}

/// A list of strings: one string (which may already join several with `;`) or a list.
fn strings(name: &str, v: &Value) -> Result<Vec<String>, SpecError> {
    let items: Vec<&Value> = match v {
        Value::Null => vec![],
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for item in items {
        let s = item.as_str().ok_or_else(|| type_err(name, "a string or a list of strings", item))?;
        out.extend(s.split(LIST_SEP).map(str::trim).filter(|s| !s.is_empty()).map(String::from));
    }
    Ok(out)
}

fn joined(items: Vec<String>) -> Option<String> {
    if items.is_empty() {
        None
    } else {
        Some(items.join(&LIST_SEP.to_string()))
    }
}

/// Cache steps: `[[INDEX, SIZE], ...]`, `{"INDEX": SIZE}` or strings `INDEX=SIZE` (`;` joins
/// several); canonical form `INDEX=SIZE;...` in request order (sizes in blocks once resolved).
fn cache_steps(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    let index = |k: &str| {
        k.trim().parse::<u64>().map_err(|_| {
            SpecError(format!("cache step `{k}`: the request index must be a whole number of requests from 0"))
        })
    };
    let step_size = |s: &Value| size("cache step size", s);
    let mut steps: Vec<(u64, String)> = Vec::new();
    match v {
        Value::Null => return Ok(None),
        Value::Object(m) => {
            for (k, s) in m {
                steps.push((index(k)?, step_size(s)?));
            }
        }
        Value::Array(a) if a.iter().all(|x| x.is_array()) => {
            for p in a {
                match p.as_array().map(Vec::as_slice) {
                    Some([i, s]) if i.is_u64() => steps.push((i.as_u64().unwrap_or(0), step_size(s)?)),
                    Some([i, _]) if i.is_number() => {
                        return Err(SpecError(format!(
                        "cache step {p}: the request index {i} must be a whole number of requests from 0 to 2^64 - 1"
                    )))
                    }
                    _ => return Err(SpecError(format!("cache step {p} must be an (index, size) pair"))),
                }
            }
        }
        _ => {
            for item in strings(name, v)? {
                match item.split_once('=') {
                    // `10=50,20=80`: a comma is what a user reaches for, and reading the
                    // rest as a size would blame its unit.
                    Some((_, s)) if s.contains('=') => {
                        return Err(SpecError(format!(
                            "cache step `{item}` holds more than one step: separate steps with `{LIST_SEP}` \
                             (such as 10=50{LIST_SEP}20=80) or give each as its own value"
                        )))
                    }
                    Some((k, s)) if !s.trim().is_empty() => {
                        // A bare integer counts blocks, as a number does.
                        let s = s.trim();
                        let v = s.parse::<u64>().map_or_else(|_| Value::from(s), Value::from);
                        steps.push((index(k)?, step_size(&v)?))
                    }
                    _ => {
                        return Err(SpecError(format!(
                            "cache step `{item}` must be INDEX=SIZE, such as 5000=32MiB (from request 5000 on)"
                        )))
                    }
                }
            }
        }
    }
    steps.sort_by_key(|s| s.0);
    if let Some(w) = steps.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(SpecError(format!("two cache steps at request {}: give one size per request", w[0].0)));
    }
    Ok(joined(steps.into_iter().map(|(i, s)| format!("{i}={s}")).collect()))
}

fn faults(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    let items = strings(name, v)?;
    if items.is_empty() && !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()) {
        return Err(SpecError("faults: the fault is empty; write it as device=6,at=500s,slowdown=2".into()));
    }
    Ok(joined(items))
}

/// Per-device specs: `{"3": SPEC}`, `[[3, SPEC]]`, or strings `3=SPEC`, `0-3=SPEC` (a range),
/// `2,5=SPEC` (a list); canonical form `ID=SPEC;ID=SPEC`, one device per entry, in order.
fn device_for(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    match v {
        Value::Object(m) => {
            for (k, s) in m {
                pairs.push((k.clone(), text(name, s)?));
            }
        }
        Value::Array(a) if a.iter().all(|x| x.is_array()) => {
            for p in a {
                match p.as_array().map(Vec::as_slice) {
                    Some([id, spec]) => pairs.push((id.to_string().trim_matches('"').to_string(), text(name, spec)?)),
                    _ => return Err(SpecError(format!("device spec {p} must be ID=SPEC or a (device, spec) pair"))),
                }
            }
        }
        _ => {
            for item in strings(name, v)? {
                match item.split_once('=') {
                    Some((k, s)) if !s.trim().is_empty() => pairs.push((k.to_string(), s.trim().to_string())),
                    _ => {
                        return Err(SpecError(format!(
                            "device spec `{item}` must be ID=SPEC, such as 3=ibm-9lzx(age=10) or 0-7=ibm-9lzx"
                        )))
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (key, spec) in pairs {
        for part in key.split(',') {
            let part = part.trim();
            let bad = || {
                SpecError(format!(
                    "device `{part}` in `{key}={spec}` must be a device id, a range such as 0-7, or ids separated by commas"
                ))
            };
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => {
                    (lo.trim().parse::<u64>().map_err(|_| bad())?, hi.trim().parse::<u64>().map_err(|_| bad())?)
                }
                None => {
                    let d = part.parse::<u64>().map_err(|_| bad())?;
                    (d, d)
                }
            };
            if lo > hi {
                return Err(SpecError(format!(
                    "device range `{part}` in `{key}={spec}` is empty; write it low-high, such as 0-7"
                )));
            }
            for d in lo..=hi {
                if d >= u16::MAX as u64 {
                    return Err(SpecError(format!("device {d} in `{key}={spec}` is not a device id (0 to 65534)")));
                }
                out.push(format!("{d}={spec}"));
            }
        }
    }
    Ok(joined(out))
}

/// A first level: canonical text `[policy, cache, client, forward, [[client, policy, cache]]]`,
/// or a table `{policy, cache, client, write_back, clients: {ID: [policy, cache]}}`.
fn first_level(name: &str, v: &Value) -> Result<Option<String>, SpecError> {
    let level_size = |v: &Value| -> Result<String, SpecError> {
        if v.as_u64() == Some(0) {
            Ok("0blocks".into())
        } else {
            size("first-level cache size", v)
        }
    };
    let canon = match v {
        Value::Null => return Ok(None),
        Value::String(s) => {
            let parsed: Value = serde_json::from_str(s).map_err(|_| type_err(name, "a first-level table", v))?;
            if !parsed.is_array() {
                return Err(type_err(name, "a first-level table", v));
            }
            return first_level_list(name, &parsed).map(Some);
        }
        Value::Array(_) => return first_level_list(name, v).map(Some),
        Value::Object(m) => {
            let known = ["policy", "cache", "client", "write_back", "clients"];
            let mut unknown: Vec<&str> = m.keys().map(String::as_str).filter(|k| !known.contains(k)).collect();
            unknown.sort_unstable();
            if !unknown.is_empty() {
                return Err(SpecError(format!(
                    "{name}: unknown key(s) {}; known: cache, client, clients, policy, write_back",
                    unknown.join(", ")
                )));
            }
            let policy =
                m.get("policy").map(|p| text("first-level policy", p)).transpose()?.unwrap_or_else(|| "lru".into());
            let cache = m.get("cache").map(level_size).transpose()?.unwrap_or_else(|| "8MiB".into());
            let client = m.get("client").map(|c| text("client", c)).transpose()?.unwrap_or_else(|| "all".into());
            let write_back = m.get("write_back").map(|w| boolean("write_back", w)).transpose()?.unwrap_or(false);
            let mut clients = Vec::new();
            if let Some(c) = m.get("clients") {
                let table = c.as_object().ok_or_else(|| type_err("clients", "a table of ID = [policy, size]", c))?;
                for (id, level) in table {
                    let id: u64 = id.trim().parse().map_err(|_| {
                        let why = if !id.trim().is_empty() && id.trim().bytes().all(|b| b.is_ascii_digit()) {
                            "at most 2^64-1"
                        } else {
                            "integers"
                        };
                        SpecError(format!("{name}.clients: client ids are {why}, not {id:?}"))
                    })?;
                    match level.as_array().map(Vec::as_slice) {
                        Some([p, s]) => {
                            clients.push(serde_json::json!([id, text("first-level policy", p)?, level_size(s)?]))
                        }
                        _ => return Err(SpecError(format!("client {id}: give (policy, size), not {level}"))),
                    }
                }
            }
            let forward = if write_back { "write-back" } else { "misses" };
            serde_json::json!([policy, cache, client, forward, clients])
        }
        _ => return Err(type_err(name, "a first-level table", v)),
    };
    first_level_list(name, &canon).map(Some)
}

fn first_level_list(name: &str, v: &Value) -> Result<String, SpecError> {
    let bad = || type_err(name, "[policy, cache, client, forward, clients]", v);
    let a = v.as_array().filter(|a| a.len() == 5).ok_or_else(bad)?;
    let s = |i: usize| a[i].as_str().map(str::to_string).ok_or_else(bad);
    ClientBy::parse(&s(2)?)?;
    Forward::parse(&s(3)?)?;
    let clients = a[4].as_array().ok_or_else(bad)?;
    let mut sorted = clients.clone();
    sorted.sort_by_key(|c| c.get(0).and_then(Value::as_u64));
    Ok(serde_json::json!([s(0)?, s(1)?, s(2)?, s(3)?, sorted]).to_string())
}

impl Options {
    /// Options from a JSON object of the ones set; every other option keeps its default.
    pub fn from_json(text: &str) -> Result<Options, SpecError> {
        let v: Value = serde_json::from_str(text).map_err(|e| SpecError(format!("options are not valid JSON: {e}")))?;
        let m = v.as_object().ok_or_else(|| SpecError("options must be a JSON object".into()))?;
        Options::from_map(m)
    }

    pub fn from_map(m: &Map<String, Value>) -> Result<Options, SpecError> {
        let mut o = Options::default();
        for (k, v) in m {
            o.set(k, v)?;
        }
        Ok(o)
    }

    /// Whether the options turn timed mode on: asked for, or any timing or storage option set
    /// (the array stripes in count mode too).
    fn timing_given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        for (name, set) in [
            ("device", self.device.is_some()),
            ("io_scheduler", self.io_scheduler.is_some()),
            ("think", self.think.is_some()),
            ("single_stream", self.single_stream),
            ("device_for", self.device_for.is_some()),
            ("network", self.network.is_some()),
            ("closed", self.closed.is_some()),
            ("faults", self.faults.is_some()),
            ("hit_rule", self.hit_rule.is_some()),
        ] {
            if set {
                given.push(name);
            }
        }
        given
    }

    /// Validates the options, settles the rules between them (canonical form: `timing` decided,
    /// timed defaults filled in, first-level sizes in blocks) and builds the engine's options.
    pub fn resolve(&mut self) -> Result<RunOptions, SpecError> {
        let given = self.timing_given();
        match self.timing {
            Some(false) if !given.is_empty() => {
                return Err(SpecError(format!("{} only apply to timed runs; drop timing=False", given.join(", "))));
            }
            None => self.timing = Some(!given.is_empty()),
            _ => {}
        }
        let timed = self.timing == Some(true);
        if timed {
            self.device.get_or_insert_with(|| DEFAULT_DEVICE.into());
            self.io_scheduler.get_or_insert_with(|| DEFAULT_SCHEDULER.into());
            self.think.get_or_insert_with(|| "trace".into());
            self.hit_rule.get_or_insert_with(|| HitRule::default().name().into());
        }
        let block_size = self.block_size;
        check_block_size(block_size)?;
        let cluster_bytes = match Size::parse(&self.cluster).map_err(|e| SpecError(format!("cluster size: {e}")))? {
            Size::Bytes(b) => b,
            Size::Blocks(n) => n.saturating_mul(block_size),
        };
        // The default cluster grows to one block when blocks are larger than it: a disk request
        // is at least one block. A cluster the user gave that is smaller than a block is refused.
        let default_cluster = Options::default().cluster;
        let cluster_bytes =
            if cluster_bytes < block_size && self.cluster == default_cluster { block_size } else { cluster_bytes };
        if cluster_bytes < block_size {
            return Err(SpecError(format!(
                "cluster size `{}` is smaller than one block ({block_size} B); give a cluster of at least the block size",
                self.cluster
            )));
        }
        let file_gap_blocks = match Size::parse(&self.file_gap).map_err(|e| SpecError(format!("file gap: {e}")))? {
            Size::Bytes(b) => b.div_ceil(block_size),
            Size::Blocks(n) => n,
        };
        let format = if self.format == "auto" { None } else { Some(Format::parse(&self.format).map_err(SpecError)?) };
        let engine = EngineConfig { block_size, reads_only: self.reads_only, cluster_bytes };
        let timing = if timed {
            let t = TimingOptions {
                device: self.device.clone().unwrap_or_default(),
                scheduler: self.io_scheduler.clone().unwrap_or_default(),
                think: Think::parse(self.think.as_deref().unwrap_or("trace")).map_err(SpecError)?,
                single_stream: self.single_stream,
                final_flush: self.final_flush,
                hit_rule: self.hit_rule.as_deref().map_or(Ok(HitRule::default()), HitRule::parse)?,
                device_for: self.device_for_pairs()?,
                network: self.network.clone().unwrap_or_else(|| TimingOptions::default().network),
                closed: self.closed.map(|n| n as u32),
                faults: self.fault_list().iter().map(|f| Fault::parse(f)).collect::<Result<_, _>>()?,
            };
            t.validate(self.seed)?;
            Some(t)
        } else {
            None
        };
        let array = self.array.as_deref().map(|a| Raid0::parse(a, block_size)).transpose()?;
        let cache_steps = self.cache_step_blocks()?;
        if !cache_steps.is_empty() {
            self.cache_steps = joined(cache_steps.iter().map(|(i, b)| format!("{i}={b}blocks")).collect());
            if timed {
                return Err(SpecError("cache_steps applies to count mode only; drop the timing options".into()));
            }
            if self.first_level.is_some() {
                return Err(SpecError("cache_steps cannot be combined with a first level (first_level)".into()));
            }
        }
        let first_level = match &self.first_level {
            Some(text) => {
                let cfg = self.first_level_config(text)?;
                cfg.validate(&engine, self.seed)?;
                // Sizes in blocks, so equal first levels get equal text (and equal sweep keys).
                let level = |s: &LevelSpec| -> Result<String, SpecError> {
                    let blocks = Size::parse(&s.cache)
                        .map_err(|e| SpecError(format!("first-level cache size: {e}")))?
                        .to_blocks(block_size);
                    Ok(format!("{blocks}blocks"))
                };
                let mut v: Value = serde_json::from_str(text).expect("canonical first level");
                v[1] = Value::from(level(&cfg.default)?);
                for (i, (_, s)) in cfg.per_client.iter().enumerate() {
                    v[4][i][2] = Value::from(level(s)?);
                }
                self.first_level = Some(v.to_string());
                Some(cfg)
            }
            None => None,
        };
        Ok(RunOptions {
            engine,
            seed: self.seed,
            format,
            jobs: self.jobs as usize,
            check: self.check,
            timing,
            file_gap_blocks,
            first_level,
            skip_bad: self.skip_bad,
            max_requests: self.max_requests,
            array,
            meter: bufsim_trace::Meter::default(),
            cache_steps,
        })
    }

    /// The first level as the engine takes it.
    pub fn first_level_config(&self, text: &str) -> Result<FirstLevelConfig, SpecError> {
        let v: Value = serde_json::from_str(text).map_err(|e| SpecError(format!("first level: {e}")))?;
        let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
        let per_client = v[4]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        (
                            c[0].as_u64().unwrap_or(0),
                            LevelSpec {
                                policy: c[1].as_str().unwrap_or_default().into(),
                                cache: c[2].as_str().unwrap_or_default().into(),
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(FirstLevelConfig {
            default: LevelSpec { policy: s(0), cache: s(1) },
            per_client,
            client_by: ClientBy::parse(&s(2))?,
            forward: Forward::parse(&s(3))?,
        })
    }

    fn device_for_pairs(&self) -> Result<Vec<(u16, String)>, SpecError> {
        let Some(text) = &self.device_for else { return Ok(Vec::new()) };
        text.split(LIST_SEP)
            .map(|item| {
                let (d, spec) = item.split_once('=').expect("canonical ID=SPEC");
                Ok((d.parse().map_err(|_| SpecError(format!("device `{d}` is not a device id")))?, spec.to_string()))
            })
            .collect()
    }

    /// The cache steps in blocks: (request index, blocks), each at least one block.
    fn cache_step_blocks(&self) -> Result<Vec<(u64, u64)>, SpecError> {
        let Some(text) = &self.cache_steps else { return Ok(Vec::new()) };
        text.split(LIST_SEP)
            .map(|item| {
                let (i, s) = item.split_once('=').expect("canonical INDEX=SIZE");
                let blocks = Size::parse(s)
                    .map_err(|e| SpecError(format!("cache step `{item}`: {e}")))?
                    .to_blocks(self.block_size);
                if blocks == 0 {
                    return Err(SpecError(format!("cache step `{item}` is smaller than one block")));
                }
                if blocks > crate::cache::MAX_FRAMES {
                    return Err(SpecError(format!(
                        "cache step `{item}` is 2^31 blocks or more; use a larger block size"
                    )));
                }
                Ok((i.parse().expect("canonical index"), blocks))
            })
            .collect()
    }

    fn fault_list(&self) -> Vec<String> {
        self.faults.as_deref().map(|f| f.split(LIST_SEP).map(String::from).collect()).unwrap_or_default()
    }

    /// Options from the JSON the user set, resolved: the canonical options and the engine's.
    pub fn parse_resolved(text: &str) -> Result<(Options, RunOptions), SpecError> {
        let mut o = Options::from_json(text)?;
        let run = o.resolve()?;
        Ok((o, run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_to_count_mode_with_the_engine_defaults() {
        let (o, run) = Options::parse_resolved("{}").unwrap();
        assert_eq!(o.timing, Some(false));
        assert_eq!(o.device, None);
        assert_eq!(run.engine.cluster_bytes, 64 * 1024);
        assert_eq!(run.seed, 42);
        assert!(run.timing.is_none());
    }

    #[test]
    fn any_timing_option_turns_timing_on_and_fills_the_other_defaults() {
        let (o, run) = Options::parse_resolved(r#"{"io_scheduler": "deadline"}"#).unwrap();
        assert_eq!(o.timing, Some(true));
        assert_eq!(o.device.as_deref(), Some(DEFAULT_DEVICE));
        assert_eq!(o.think.as_deref(), Some("trace"));
        assert_eq!(run.timing.unwrap().scheduler, "deadline");
        let e = Options::parse_resolved(r#"{"timing": false, "device": "ssd"}"#).unwrap_err();
        assert!(e.0.contains("device only apply to timed runs"), "{e}");
        let (o, _) = Options::parse_resolved(r#"{"closed": 4}"#).unwrap();
        assert_eq!(o.timing, Some(true));
        // An array alone stripes in count mode.
        let (o, run) = Options::parse_resolved(r#"{"array": 4}"#).unwrap();
        assert_eq!((o.timing, run.array.map(|a| a.devices)), (Some(false), Some(4)));
    }

    #[test]
    fn bad_values_name_the_option() {
        for (json, want) in [
            (r#"{"colour": 1}"#, "unknown option `colour`"),
            (r#"{"seed": -1}"#, "seed must be a whole number from 0 to 2^64 - 1, not -1"),
            (r#"{"seed": 2.5}"#, "seed must be a whole number from 0 to 2^64 - 1, not 2.5"),
            (r#"{"jobs": "2"}"#, "jobs must be a whole number (zero or more), not \"2\""),
            // Past 2^64 a number is shown as given, not as the float it would round to.
            (
                r#"{"seed": 1180591620717411303424}"#,
                "seed must be a whole number from 0 to 2^64 - 1, not 1180591620717411303424",
            ),
            (r#"{"closed": 1180591620717411303424}"#, "from 1 to 1000000, not 1180591620717411303424"),
            (
                r#"{"block_size": 1180591620717411303424}"#,
                "block size 1180591620717411303424 B must be a power of two from 512 B",
            ),
            (
                r#"{"cluster": 1180591620717411303424}"#,
                "cluster 1180591620717411303424 must be a positive number of blocks (from 1 to 2^64 - 1)",
            ),
            (
                r#"{"cache_steps": [[1180591620717411303424, 5]]}"#,
                "the request index 1180591620717411303424 must be a whole number of requests from 0 to 2^64 - 1",
            ),
            (
                r#"{"array": 1180591620717411303424}"#,
                "devices=`1180591620717411303424` must be a whole number from 1 to 254",
            ),
            (r#"{"cluster": "1KiB"}"#, "smaller than one block"),
            (r#"{"block_size": 3}"#, "power of two"),
            (r#"{"block_size": "8blocks"}"#, "must be in bytes"),
            (r#"{"think": -1.0}"#, "must not be negative"),
            (r#"{"file_gap": "lots"}"#, "file gap"),
            (r#"{"closed": 0}"#, "from 1 to 1000000, not 0"),
            (r#"{"device_for": "3"}"#, "ID=SPEC"),
            (r#"{"device_for": "3-1=ssd"}"#, "is empty"),
        ] {
            let e = Options::parse_resolved(json).unwrap_err();
            assert!(e.0.contains(want), "{json}: {e}");
        }
    }

    #[test]
    fn list_options_have_one_canonical_text() {
        let a = Options::from_json(r#"{"device_for": ["0-1=ssd", "3=avg"]}"#).unwrap();
        let b = Options::from_json(r#"{"device_for": {"0": "ssd", "1": "ssd", "3": "avg"}}"#).unwrap();
        let c = Options::from_json(r#"{"device_for": "0,1=ssd;3=avg"}"#).unwrap();
        assert_eq!(a.device_for.as_deref(), Some("0=ssd;1=ssd;3=avg"));
        assert_eq!((&a, &b), (&c, &c));
        // What to_json gives, from_json reads back to the same options.
        let (o, _) = Options::parse_resolved(r#"{"first_level": {"cache": "16MiB", "client": "pid", "clients": {"3": ["fifo", 8]}}, "faults": "device=0,at=1s,slowdown=2"}"#).unwrap();
        assert_eq!(o.first_level.as_deref(), Some(r#"["lru","4096blocks","pid","misses",[[3,"fifo","8blocks"]]]"#));
        let again = Options::from_map(&o.to_json()).unwrap();
        assert_eq!(again, o);
    }

    #[test]
    fn cache_steps_have_one_canonical_text_in_blocks() {
        let forms = [
            r#"{"cache_steps": ["5000=1MiB", "10=64"]}"#,
            r#"{"cache_steps": "10=64;5000=1MiB"}"#,
            r#"{"cache_steps": [[5000, "1MiB"], [10, 64]]}"#,
            r#"{"cache_steps": {"10": 64, "5000": "256blocks"}}"#,
        ];
        for json in forms {
            let (o, run) = Options::parse_resolved(json).unwrap();
            assert_eq!(o.cache_steps.as_deref(), Some("10=64blocks;5000=256blocks"), "{json}");
            assert_eq!(run.cache_steps, vec![(10, 64), (5000, 256)], "{json}");
        }
        for (json, want) in [
            (r#"{"cache_steps": "x=1MiB"}"#, "request index must be a whole number"),
            (r#"{"cache_steps": "5=1MiB;5=2MiB"}"#, "two cache steps at request 5"),
            (r#"{"cache_steps": "5"}"#, "must be INDEX=SIZE"),
            (r#"{"cache_steps": "10=50,20=80"}"#, "holds more than one step: separate steps with `;`"),
            (r#"{"cache_steps": "5=1KiB"}"#, "smaller than one block"),
            (r#"{"cache_steps": "5=0"}"#, "positive number of blocks"),
            (r#"{"cache_steps": "5=1MiB", "device": "ssd"}"#, "count mode only"),
        ] {
            let e = Options::parse_resolved(json).unwrap_err();
            assert!(e.0.contains(want), "{json}: {e}");
        }
    }

    #[test]
    fn the_table_lists_every_option_once_with_its_default() {
        let fields = Options::fields();
        let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert_eq!(Options::default().to_json().len(), fields.len());
        let seed = fields.iter().find(|f| f.name == "seed").unwrap();
        assert_eq!((seed.default.as_u64(), seed.section), (Some(42), Section::Run));
        assert!(fields.iter().all(|f| !f.doc.is_empty()));
    }
}
