//! Properties of timed mode over random multi-stream traces, for every registered policy,
//! read-ahead algorithm, device model and scheduler: hits + misses = accesses, every issued I/O
//! completes, streams never run longer than the run, a single stream's execution time is its
//! think time plus its stalls, and when no access ever finds its block in flight the counts are
//! exactly those of count mode.

use bufsim_core::device::SCHEDULERS;
use bufsim_core::policy::registry;
use bufsim_core::prefetch;
use bufsim_core::run::{run_requests, RunConfig, RunOptions, RunResult};
use bufsim_core::timed::{Think, TimingOptions};
use bufsim_core::trace::{AddressKind, Op, Request};
use proptest::prelude::*;

/// (pid, write, file, block, blocks, gap before it in us, traced duration in us)
type Row = (u32, bool, u32, u64, u64, u64, u64);

fn row(max_blocks: u64) -> impl Strategy<Value = Row> {
    (0u32..3, prop::bool::weighted(0.2), 0u32..3, 0u64..40, 1..=max_blocks, 0u64..3000, 0u64..500)
}

fn requests(rows: &[Row]) -> Vec<Request> {
    let mut t = 0;
    rows.iter()
        .map(|&(pid, write, file, block, blocks, gap_us, dur_us)| {
            t += gap_us * 1000;
            Request {
                time_ns: t,
                dur_ns: dur_us * 1000,
                pid,
                ctx: 0,
                op: if write { Op::Write } else { Op::Read },
                file,
                offset: block * 4096,
                size: blocks * 4096,
                in_blocks: false,
                unfilled: 0,
                opened: false,
            }
        })
        .collect()
}

fn run(reqs: &[Request], policy: &str, cache: u64, prefetch: &str, timing: Option<TimingOptions>) -> RunResult {
    let opts = RunOptions { timing, check: true, jobs: 1, ..RunOptions::default() };
    let cfg = RunConfig::new(policy, &format!("{cache}blocks")).with_prefetch(prefetch);
    run_requests(reqs, AddressKind::File, &[cfg], &opts).unwrap().remove(0)
}

const DEVICES: [&str; 4] = ["avg", "avg(transfer=0.05ms,contiguous=free)", "st39102lw", "ssd(channels=2)"];

fn policies() -> Vec<&'static str> {
    registry::all().map(|p| p.name).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn accounting_holds_for_every_configuration(
        rows in prop::collection::vec(row(4), 1..80),
        cache in 1u64..24,
        pick in 0usize..1000,
        think_us in prop::option::of(0u64..2000),
        single in any::<bool>(),
    ) {
        let reqs = requests(&rows);
        let pols = policies();
        let policy = pols[pick % pols.len()];
        let prefetch = prefetch::all().nth(pick / 7 % prefetch::all().count()).unwrap().name;
        let device = DEVICES[pick / 3 % DEVICES.len()];
        let scheduler = SCHEDULERS[pick / 11 % SCHEDULERS.len()].name;
        // OPT knows the future only of a single stream.
        let single = single || policy == "opt";
        let think = think_us.map_or(Think::Trace, |us| Think::Fixed(us * 1000));
        let t = TimingOptions { device: device.into(), scheduler: scheduler.into(), think, single_stream: single, ..TimingOptions::default() };
        let r = run(&reqs, policy, cache, prefetch, Some(t));
        let (s, tm) = (&r.stats, r.timing.as_ref().unwrap());
        let what = format!("{policy} {prefetch} {device} {scheduler} cache {cache}");
        prop_assert_eq!(s.hits + s.misses, s.accesses, "{}", what);
        prop_assert_eq!(s.disk_requests, s.sync_requests + s.async_requests);
        prop_assert_eq!(s.sync_requests, tm.sync.requests);
        prop_assert_eq!(s.async_requests, tm.async_.requests);
        prop_assert_eq!(s.blocks_read, tm.sync.blocks + tm.async_.blocks);
        // Every issued I/O completed, and each was one device request.
        let issued = tm.sync.requests + tm.async_.requests + tm.write.requests + tm.flush.requests;
        prop_assert_eq!(tm.response.count, issued, "{}", what);
        prop_assert_eq!(tm.service.count, issued);
        prop_assert_eq!(tm.devices.iter().map(|d| d.requests).sum::<u64>(), issued);
        prop_assert!(tm.inflight_misses <= s.misses);
        // Streams run within the run: the sum of their busy spans fits in streams x exec.
        prop_assert!(tm.end_time_ns >= tm.exec_time_ns);
        prop_assert!(tm.exec_time_ns >= tm.think_time_ns / tm.streams.max(1) as u64, "{}", what);
        prop_assert!(tm.think_time_ns + tm.stall_time_ns <= tm.streams as u64 * tm.exec_time_ns, "{}", what);
        if tm.streams == 1 && think_us.is_some() {
            // One stream starting at 0: it is always thinking or waiting.
            prop_assert_eq!(tm.exec_time_ns, tm.think_time_ns + tm.stall_time_ns + tm.flush_time_ns, "{}", what);
        }
        for d in &tm.devices {
            prop_assert!(d.busy_ns <= tm.end_time_ns);
            prop_assert!((0.0..=1.0).contains(&d.utilization));
        }
        prop_assert!(tm.io_time_ns <= tm.end_time_ns * tm.devices.len() as u64);
    }

    #[test]
    fn without_in_flight_waits_counts_equal_count_mode(
        rows in prop::collection::vec(row(1), 1..80),
        cache in 1u64..24,
        pick in 0usize..1000,
    ) {
        // One stream of one-block requests with 100 s of think time: every I/O is done before
        // the next request, so no access finds its block in flight, with or without read-ahead.
        let reqs = requests(&rows);
        let pols = policies();
        let policy = pols[pick % pols.len()];
        let prefetch = prefetch::all().nth(pick / 7 % prefetch::all().count()).unwrap().name;
        let t = TimingOptions { device: "avg".into(), think: Think::Fixed(100_000_000_000), single_stream: true, ..TimingOptions::default() };
        let timed = run(&reqs, policy, cache, prefetch, Some(t));
        let count = run(&reqs, policy, cache, prefetch, None);
        prop_assert_eq!(timed.timing.as_ref().unwrap().inflight_misses, 0);
        prop_assert_eq!(timed.stats, count.stats, "{} {}", policy, prefetch);
    }

    #[test]
    fn multi_block_requests_without_read_ahead_equal_count_mode_for_lru_and_fifo(
        rows in prop::collection::vec(row(4), 1..80),
        cache in 4u64..24,
        think_us in 0u64..2000,
    ) {
        // Blocks of one request stay pinned while their reads are in flight; with LRU and FIFO
        // and room for a whole request they are never the victims anyway.
        let reqs = requests(&rows);
        for policy in ["lru", "fifo"] {
            let t = TimingOptions { device: "st39102lw".into(), think: Think::Fixed(think_us * 1000), single_stream: true, ..TimingOptions::default() };
            let timed = run(&reqs, policy, cache, "none", Some(t));
            let count = run(&reqs, policy, cache, "none", None);
            prop_assert_eq!(timed.stats, count.stats, "{}", policy);
        }
    }
}
