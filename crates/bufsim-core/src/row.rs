//! The result of a run as one flat row, its fields written once: name, kind, unit, what it
//! means and how it is read off a [`RunResult`]. Python's `Result`, sweep DataFrames and the
//! columns of a results database are all generated from [`RESULT_FIELDS`].

use serde_json::{json, Map, Value};

use crate::options::Options;
use crate::policy::partition::TimelineClock;
use crate::run::RunResult;
use crate::timed::TimedStats;

/// What a field holds (its Python type and SQL column type follow from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Float,
    Bool,
    /// A JSON object whose keys are integers (request sizes in blocks -> requests).
    Histogram,
    /// Any other structured value, kept as JSON.
    Json,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "str",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Histogram => "histogram",
            Kind::Json => "json",
        }
    }

    pub fn sql(self) -> &'static str {
        match self {
            Kind::Text => "VARCHAR",
            Kind::Int => "BIGINT",
            Kind::Float => "DOUBLE",
            Kind::Bool => "BOOLEAN",
            Kind::Histogram | Kind::Json => "JSON",
        }
    }
}

type Getter = fn(&RunResult, &Options) -> Value;

/// One field of the result row.
pub struct ResultField {
    pub name: &'static str,
    pub kind: Kind,
    /// Unit of the value (`""` for counts and names).
    pub unit: &'static str,
    /// Only timed runs fill it (`null` in count mode).
    pub timed: bool,
    pub doc: &'static str,
    get: Getter,
}

const MS: f64 = 1e6;
const S: f64 = 1e9;

fn timed(r: &RunResult, f: impl Fn(&TimedStats) -> Value) -> Value {
    r.timing.as_ref().map(f).unwrap_or(Value::Null)
}

/// The setting a timed run echoes (`null` in count mode).
fn when_timed(o: &Options, v: Value) -> Value {
    if o.timing == Some(true) {
        v
    } else {
        Value::Null
    }
}

macro_rules! field {
    ($name:literal, $kind:ident, $unit:literal, $timed:literal, $doc:literal, $get:expr) => {
        ResultField { name: $name, kind: Kind::$kind, unit: $unit, timed: $timed, doc: $doc, get: $get }
    };
}

/// Every field of a result row, in order.
pub static RESULT_FIELDS: &[ResultField] = &[
    field!("policy", Text, "", false, "policy spec as given", |r, _| r.policy.clone().into()),
    field!("prefetch", Text, "", false, "read-ahead spec as given", |r, _| r.prefetch.clone().into()),
    field!("cache_blocks", Int, "blocks", false, "cache size", |r, _| r.cache_blocks.into()),
    field!(
        "cache_steps",
        Text,
        "",
        false,
        "cache size over the trace: INDEX=SIZE steps (;-separated), if any",
        |_, o| o.cache_steps.clone().into()
    ),
    field!(
        "cache_steps_unreached",
        Int,
        "",
        false,
        "cache steps at request indices past the trace's end, which never applied",
        |r, _| r.stats.cache_steps_unreached.into()
    ),
    field!("block_size", Int, "B", false, "bytes per cache block", |_, o| o.block_size.into()),
    field!("requests", Int, "", false, "requests simulated (after reads_only)", |r, _| r.stats.requests.into()),
    field!("accesses", Int, "", false, "demand block accesses", |r, _| r.stats.accesses.into()),
    field!("hits", Int, "", false, "demand accesses found in the cache", |r, _| r.stats.hits.into()),
    field!("misses", Int, "", false, "demand accesses not found in the cache", |r, _| r.stats.misses.into()),
    field!("hit_ratio", Float, "", false, "hits / accesses (0 without accesses)", |r, _| r.stats.hit_ratio().into()),
    field!("miss_ratio", Float, "", false, "misses / accesses (0 without accesses)", |r, _| {
        let s = &r.stats;
        (if s.accesses == 0 { 0.0 } else { s.misses as f64 / s.accesses as f64 }).into()
    }),
    field!("write_accesses", Int, "", false, "demand accesses by writes", |r, _| r.stats.write_accesses.into()),
    field!("write_misses", Int, "", false, "write accesses that missed", |r, _| r.stats.write_misses.into()),
    field!("evictions", Int, "", false, "blocks given up to make room", |r, _| r.stats.evictions.into()),
    field!(
        "dropped",
        Int,
        "blocks",
        false,
        "cached blocks whose data the trace dropped (truncated or deleted files)",
        |r, _| r.stats.dropped.into()
    ),
    field!("disk_requests", Int, "", false, "disk read requests after clustering", |r, _| r.stats.disk_requests.into()),
    field!("sync_requests", Int, "", false, "disk requests holding a demand miss", |r, _| r.stats.sync_requests.into()),
    field!("async_requests", Int, "", false, "disk requests of read-ahead only", |r, _| r.stats.async_requests.into()),
    field!("blocks_read", Int, "blocks", false, "demand read misses plus blocks read ahead", |r, _| r
        .stats
        .blocks_read
        .into()),
    field!("prefetched", Int, "blocks", false, "blocks inserted by read-ahead", |r, _| r.stats.prefetched.into()),
    field!("prefetch_hits", Int, "", false, "first demand accesses to blocks read ahead", |r, _| r
        .stats
        .prefetch_hits
        .into()),
    field!(
        "prefetched_unused",
        Int,
        "blocks",
        false,
        "blocks read ahead and evicted before any demand access",
        |r, _| { r.stats.prefetched_unused.into() }
    ),
    field!(
        "request_sizes",
        Histogram,
        "blocks",
        false,
        "disk requests by size in blocks ({size: requests}; 128 stands for 128 or more)",
        |r, _| { Value::Object(r.stats.request_sizes.iter().map(|(size, n)| (size.to_string(), n.into())).collect()) }
    ),
    field!("policy_metrics", Json, "", false, "what the policy reports about itself ({name: value})", |r, _| {
        Value::Object(r.metrics.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect())
    }),
    field!(
        "partition_timeline",
        Json,
        "",
        false,
        "partitioned policies: {unit, samples: [[time, partition, blocks]]}, time in accesses or simulated seconds",
        |r, _| {
            let Some(t) = &r.timeline else { return Value::Null };
            let (unit, scale) = match t.clock {
                TimelineClock::Accesses => ("accesses", None),
                TimelineClock::Nanoseconds => ("s", Some(S)),
            };
            let samples: Vec<Value> = t
                .rows()
                .map(|(time, name, _, size)| match scale {
                    None => json!([time, name, size]),
                    Some(s) => json!([time as f64 / s, name, size]),
                })
                .collect();
            json!({"unit": unit, "samples": samples})
        }
    ),
    field!("device", Text, "", true, "device model of every device", |_, o| when_timed(o, o.device.clone().into())),
    field!("io_scheduler", Text, "", true, "I/O scheduler of each device queue", |_, o| when_timed(
        o,
        o.io_scheduler.clone().into()
    )),
    field!("think", Text, "", true, "think time setting", |_, o| when_timed(o, o.think.clone().into())),
    field!("single_stream", Bool, "", true, "all pids merged into one stream", |_, o| when_timed(
        o,
        o.single_stream.into()
    )),
    field!("final_flush", Bool, "", true, "dirty blocks written back at the end of the run", |_, o| when_timed(
        o,
        o.final_flush.into()
    )),
    field!("hit_rule", Text, "", true, "when a block read ahead counts as a hit", |_, o| when_timed(
        o,
        o.hit_rule.clone().into()
    )),
    field!("exec_time_s", Float, "s", true, "simulated execution time", |r, _| timed(r, |t| (t.exec_time_ns as f64
        / S)
        .into())),
    field!("io_time_s", Float, "s", true, "time some device was busy", |r, _| timed(r, |t| (t.io_time_ns as f64 / S)
        .into())),
    field!("stall_time_s", Float, "s", true, "time streams waited for I/O", |r, _| timed(r, |t| (t.stall_time_ns
        as f64
        / S)
        .into())),
    field!("think_time_s", Float, "s", true, "think time simulated", |r, _| timed(r, |t| (t.think_time_ns as f64 / S)
        .into())),
    field!("end_time_s", Float, "s", true, "time of the last event", |r, _| timed(r, |t| (t.end_time_ns as f64 / S)
        .into())),
    field!("streams", Int, "", true, "request streams (pids, or one)", |r, _| timed(r, |t| t.streams.into())),
    field!("inflight_misses", Int, "", true, "accesses that waited for a block already being read", |r, _| timed(
        r,
        |t| t.inflight_misses.into()
    )),
    field!("sync_blocks", Int, "blocks", true, "blocks read synchronously", |r, _| timed(r, |t| t.sync.blocks.into())),
    field!("sync_time_ms", Float, "ms", true, "mean time of a synchronous read", |r, _| timed(r, |t| (t
        .sync
        .mean_time_ns()
        / MS)
        .into())),
    field!("async_blocks", Int, "blocks", true, "blocks read ahead", |r, _| timed(r, |t| t.async_.blocks.into())),
    field!("async_time_ms", Float, "ms", true, "mean time of an asynchronous read", |r, _| timed(r, |t| (t
        .async_
        .mean_time_ns()
        / MS)
        .into())),
    field!("write_requests", Int, "", true, "disk write requests", |r, _| timed(r, |t| t.write.requests.into())),
    field!("write_blocks", Int, "blocks", true, "blocks written", |r, _| timed(r, |t| t.write.blocks.into())),
    field!("write_time_ms", Float, "ms", true, "mean time of a write", |r, _| timed(r, |t| (t.write.mean_time_ns()
        / MS)
        .into())),
    field!("flush_requests", Int, "", true, "write requests of the end-of-run flush", |r, _| timed(r, |t| t
        .flush
        .requests
        .into())),
    field!("flush_blocks", Int, "blocks", true, "dirty blocks written back at the end of the run", |r, _| timed(
        r,
        |t| t.flush.blocks.into()
    )),
    field!("flush_time_s", Float, "s", true, "time of the end-of-run flush (part of exec_time_s)", |r, _| timed(
        r,
        |t| (t.flush_time_ns as f64 / S).into()
    )),
    field!("service_mean_ms", Float, "ms", true, "mean device service time", |r, _| timed(r, |t| (t.service.mean_ns
        / MS)
        .into())),
    field!("service_p50_ms", Float, "ms", true, "median device service time", |r, _| timed(r, |t| (t.service.p50_ns
        / MS)
        .into())),
    field!("service_p90_ms", Float, "ms", true, "90th percentile of device service time", |r, _| timed(r, |t| (t
        .service
        .p90_ns
        / MS)
        .into())),
    field!("service_p99_ms", Float, "ms", true, "99th percentile of device service time", |r, _| timed(r, |t| (t
        .service
        .p99_ns
        / MS)
        .into())),
    field!("response_mean_ms", Float, "ms", true, "mean response time (queue and service)", |r, _| timed(r, |t| (t
        .response
        .mean_ns
        / MS)
        .into())),
    field!("response_p50_ms", Float, "ms", true, "median response time", |r, _| timed(r, |t| (t.response.p50_ns / MS)
        .into())),
    field!("response_p90_ms", Float, "ms", true, "90th percentile of response time", |r, _| timed(r, |t| (t
        .response
        .p90_ns
        / MS)
        .into())),
    field!("response_p99_ms", Float, "ms", true, "99th percentile of response time", |r, _| timed(r, |t| (t
        .response
        .p99_ns
        / MS)
        .into())),
    field!(
        "devices",
        Json,
        "",
        true,
        "per device: device, model, requests, busy_s, utilization, queue_wait_ms, max_queue, reads, wait_s",
        |r, _| {
            timed(r, |t| {
                t.devices
                .iter()
                .map(|x| {
                    json!({"device": x.device, "model": x.model, "requests": x.requests, "busy_s": x.busy_ns as f64 / S,
                           "utilization": x.utilization, "queue_wait_ms": x.queue_wait_mean_ns / MS, "max_queue": x.max_queue,
                           "reads": x.reads, "wait_s": x.wait_ns as f64 / S})
                })
                .collect()
            })
        }
    ),
    field!(
        "sequence_sizes",
        Histogram,
        "blocks",
        true,
        "blocks by the disk access sequence they were served in: a run of device requests each starting where the one before ended ({size: blocks}; 1024 stands for 1024 or more)",
        |r, _| timed(r, |t| Value::Object(t.sequences.iter().map(|(size, b)| (size.to_string(), b.into())).collect()))
    ),
    field!("throughput_mb_s", Float, "MB/s", true, "requested MB (10^6 bytes) per second of execution time", |r, _| {
        timed(r, |t| t.throughput_mb_s().into())
    }),
    field!("array", Text, "", false, "RAID-0 array the volume is striped over", |_, o| o.array.clone().into()),
    field!("device_for", Text, "", true, "device models of single devices (ID=SPEC;...)", |_, o| when_timed(
        o,
        o.device_for.clone().into()
    )),
    field!("network", Text, "", true, "network between cache and devices", |_, o| when_timed(
        o,
        o.network.clone().into()
    )),
    field!("closed", Int, "", true, "requests outstanding in a closed workload", |_, o| when_timed(o, o.closed.into())),
    field!("faults", Text, "", true, "performance faults (;-separated)", |_, o| when_timed(o, o.faults.clone().into())),
    field!("skipped_records", Int, "", false, "malformed trace records passed over (skip_bad)", |r, _| r
        .skipped
        .count
        .into()),
    field!("skipped", Text, "", false, "where the first skipped records are, one line", |r, _| {
        (if r.skipped.is_empty() { String::new() } else { r.skipped.summary() }).into()
    }),
];

/// The row of one result: every field of [`RESULT_FIELDS`] by name, in order.
pub fn row(r: &RunResult, o: &Options) -> Map<String, Value> {
    RESULT_FIELDS.iter().map(|f| (f.name.to_string(), (f.get)(r, o))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run_requests, RunConfig};
    use crate::trace::{AddressKind, Request};

    #[test]
    fn a_row_has_every_field_once_and_timed_fields_stay_null_in_count_mode() {
        let reqs: Vec<Request> = [0u64, 1, 0, 2, 0].iter().map(|&b| Request::read(0, b * 4096, 4096)).collect();
        let (o, run) = Options::parse_resolved("{}").unwrap();
        let results = run_requests(&reqs, AddressKind::Device, &[RunConfig::new("lru", "2blocks")], &run).unwrap();
        let row = row(&results[0], &o);
        assert_eq!(row.len(), RESULT_FIELDS.len());
        // 0 1 0 2 0 through two LRU blocks: 0 hits twice, 1 and 2 miss once each.
        assert_eq!((row["hits"].as_u64(), row["misses"].as_u64()), (Some(2), Some(3)));
        assert_eq!(row["miss_ratio"].as_f64(), Some(0.6));
        for f in RESULT_FIELDS.iter().filter(|f| f.timed) {
            assert!(row[f.name].is_null(), "{} filled in count mode", f.name);
        }
    }
}
