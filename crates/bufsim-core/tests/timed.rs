//! Timed mode: overlap of read-ahead with think time (prefetching paper §5.2, Fig. 4), the
//! paper's §6 finding on an I/O-bound sequential reader, DULO's Table 1 timing (§2.1), the
//! file gap of the layout, multi-stream interleaving and determinism.

use bufsim_core::run::{run_requests, RunConfig, RunOptions, RunResult};
use bufsim_core::timed::{HitRule, Think, TimedStats, TimingOptions};
use bufsim_core::trace::{AddressKind, Op, Request};

const MS: u64 = 1_000_000;

fn read(file: u32, block: u64, blocks: u64) -> Request {
    Request::read(file, block * 4096, blocks * 4096)
}

fn timing(device: &str, think: Think) -> TimingOptions {
    TimingOptions { device: device.into(), think, ..TimingOptions::default() }
}

fn run(reqs: &[Request], policy: &str, cache: &str, prefetch: &str, t: TimingOptions) -> RunResult {
    let opts = RunOptions { timing: Some(t), check: true, jobs: 1, ..RunOptions::default() };
    let cfg = RunConfig::new(policy, cache).with_prefetch(prefetch);
    run_requests(reqs, AddressKind::File, &[cfg], &opts).unwrap().remove(0)
}

fn timed(r: &RunResult) -> &TimedStats {
    r.timing.as_ref().expect("timed run")
}

/// One file read block after block, one block per request.
fn sequential(blocks: u64) -> Vec<Request> {
    (0..blocks).map(|b| read(0, b, 1)).collect()
}

#[test]
fn read_ahead_that_completes_during_think_time_costs_nothing() {
    // avg: every disk request takes 9.5 ms. Linux read-ahead: block 0 misses and reads 0..6
    // synchronously (one request, §2.1 footnote 1 doubles the first group); block 1 starts
    // asynchronous read-ahead of 7..18, block 7 of 19..42, ... each done long before the
    // 50 ms think time ends.
    let n = 40;
    let r = run(&sequential(n), "lru", "1000blocks", "linux", timing("avg", Think::Fixed(50 * MS)));
    let t = timed(&r);
    assert_eq!(t.sync.requests, 1);
    assert!(t.async_.requests >= 2, "{t:?}");
    assert_eq!(t.inflight_misses, 0);
    assert_eq!(r.stats.misses, 1);
    // Execution time = think time + the synchronous I/O only.
    assert_eq!(t.think_time_ns, (n - 1) * 50 * MS);
    assert_eq!(t.exec_time_ns, t.think_time_ns + 9_500_000);
    assert_eq!(t.stall_time_ns, 9_500_000);
    // The asynchronous requests still kept the disk busy.
    assert_eq!(t.io_time_ns, (t.sync.requests + t.async_.requests) * 9_500_000);
}

#[test]
fn read_ahead_still_in_flight_makes_the_reader_wait() {
    // Same reader, 1 ms think. t=0: block 0 misses, 0..6 arrive at 9.5 ms. t=10.5: block 1
    // starts async 7..18 (done at 20.0). Blocks 2..6 hit at 11.5..15.5. t=16.5: block 7 is
    // still in flight: a miss that waits 3.5 ms.
    let r = run(&sequential(8), "lru", "1000blocks", "linux", timing("avg", Think::Fixed(MS)));
    let t = timed(&r);
    assert_eq!(t.inflight_misses, 1);
    assert_eq!(r.stats.misses, 2);
    assert_eq!(r.stats.hits, 6);
    assert_eq!(t.stall_time_ns, 9_500_000 + 3_500_000);
    assert_eq!(t.exec_time_ns, 20 * MS);
    assert_eq!(t.exec_time_ns, t.think_time_ns + t.stall_time_ns + t.flush_time_ns);
    // The async request was waited for: its response time is its whole 9.5 ms.
    assert_eq!(t.async_.requests, 1);
    assert_eq!(t.async_.time_ns, 9_500_000);
}

#[test]
fn without_read_ahead_every_miss_is_waited_for() {
    let r = run(&sequential(10), "lru", "1000blocks", "none", timing("avg", Think::Fixed(MS)));
    let t = timed(&r);
    assert_eq!((t.sync.requests, t.async_.requests), (10, 0));
    assert_eq!(t.exec_time_ns, 9 * MS + 10 * 9_500_000);
    assert_eq!(t.service.p50_ns, 9_500_000.0);
    assert_eq!(t.service.p99_ns, 9_500_000.0);
    assert_eq!(t.devices.len(), 1);
    assert_eq!(t.devices[0].requests, 10);
    assert!((t.devices[0].utilization - 95.0 / 104.0).abs() < 1e-9);
}

/// Prefetching paper §6.2.1, Table 6 (cscope): read-ahead cut disk requests by about 44%
/// but each request grew and took about 1.7x as long, so an I/O-bound application ran only 3%
/// faster. Here: files read sequentially in two-block chunks with 0.13 ms between system calls
/// (cscope's mean, Table 4), on the Cheetah 9LP.
#[test]
fn halving_disk_requests_with_read_ahead_does_not_halve_execution_time() {
    for (files, blocks, gap) in [(1u32, 4096u64, "0"), (64, 64, "1MiB")] {
        let mut reqs = Vec::new();
        for f in 0..files {
            for b in (0..blocks).step_by(2) {
                reqs.push(read(f, b, 2));
            }
        }
        let mut opts = RunOptions { jobs: 1, ..RunOptions::default() };
        opts.timing = Some(timing("st39102lw", Think::Fixed(130_000)));
        opts.file_gap_blocks = if gap == "0" { 0 } else { 256 };
        let cfgs = [RunConfig::new("lru", "64MiB"), RunConfig::new("lru", "64MiB").with_prefetch("linux")];
        let res = run_requests(&reqs, AddressKind::File, &cfgs, &opts).unwrap();
        let (plain, ra) = (&res[0], &res[1]);
        let (tp, tr) = (timed(plain), timed(ra));
        let reqs_p = plain.stats.disk_requests as f64;
        let reqs_r = ra.stats.disk_requests as f64;
        let per_req =
            |t: &TimedStats| (t.sync.time_ns + t.async_.time_ns) as f64 / (t.sync.requests + t.async_.requests) as f64;
        eprintln!(
            "{files} files: requests {reqs_p} -> {reqs_r}, time/request {:.3} -> {:.3} ms, exec {:.1} -> {:.1} ms",
            per_req(tp) / 1e6,
            per_req(tr) / 1e6,
            tp.exec_time_ns as f64 / 1e6,
            tr.exec_time_ns as f64 / 1e6
        );
        // I/O-bound: the disk is busy most of the time without read-ahead.
        assert!(tp.io_time_ns as f64 > 0.6 * tp.exec_time_ns as f64);
        // Read-ahead more than halves the disk requests...
        assert!(reqs_r < 0.5 * reqs_p, "{reqs_r} vs {reqs_p}");
        // ...because each one is larger and takes longer...
        assert!(per_req(tr) > 2.0 * per_req(tp));
        // ...so execution time falls by far less than half.
        let exec_ratio = tr.exec_time_ns as f64 / tp.exec_time_ns as f64;
        assert!(exec_ratio > 0.5 && exec_ratio < 1.0, "exec ratio {exec_ratio}");
    }
}

/// DULO §2.1, Table 1 ("traditional"): an 8-block cache, LRU, Linux-like read-ahead, random
/// blocks A-D, files X and Y of four blocks; every disk request costs the Ultrastar 18ZX's
/// average seek + rotation, 6.5 + 3.0 ms, transfer ignored. Ten misses, 95.0 ms.
#[test]
fn dulo_table_1_traditional_takes_95_ms() {
    // Files in first-touch order: A, B, C, D (one block each), X, Y.
    let (a, b, c, d, x, y) = (0, 1, 2, 3, 4, 5);
    let mut reqs: Vec<Request> = [a, b, c, d].iter().map(|&f| read(f, 0, 1)).collect();
    reqs.extend((0..4).map(|i| read(x, i, 1)));
    reqs.extend((0..4).map(|i| read(y, i, 1)));
    reqs.extend((0..4).map(|i| read(x, i, 1)));
    reqs.extend([a, b, c, d].iter().map(|&f| read(f, 0, 1)));
    assert_eq!(reqs.len(), 20);
    let r = run(&reqs, "lru", "8blocks", "linux", timing("avg(seek=6.5ms,rotation=3.0ms)", Think::Fixed(0)));
    let t = timed(&r);
    assert_eq!(r.stats.misses, 10);
    assert_eq!(r.stats.disk_requests, 10);
    assert_eq!(t.exec_time_ns, 95 * MS);
    // Without prefetching: 16 misses (the paper's count for both schemes).
    let r = run(&reqs, "lru", "8blocks", "none", timing("avg", Think::Fixed(0)));
    assert_eq!(r.stats.misses, 16);
    assert_eq!(timed(&r).exec_time_ns, 16 * 9_500_000);
}

#[test]
fn a_file_gap_moves_the_next_file_away() {
    // Two one-block files: with no gap the second sits right after the first and costs only its
    // transfer on a disk (contiguous); 1 MiB apart it needs a seek and a rotation.
    let reqs = [read(0, 0, 1), read(1, 0, 1)];
    let cost = |gap: u64| {
        let opts = RunOptions {
            timing: Some(timing("st39102lw", Think::Fixed(0))),
            file_gap_blocks: gap,
            jobs: 1,
            ..RunOptions::default()
        };
        let r = run_requests(&reqs, AddressKind::File, &[RunConfig::new("lru", "8blocks")], &opts).unwrap();
        let t = r[0].timing.clone().unwrap();
        t.exec_time_ns
    };
    let (near, far) = (cost(0), cost(256));
    assert!(far > near + 500_000, "near {near} far {far}");
}

#[test]
fn a_file_gap_past_the_last_block_is_refused_not_wrapped() {
    // Three one-block files read once each: three misses. A gap that pushes the third file past
    // block 2^64 once wrapped it onto another file's block, and made a miss a hit.
    let reqs = [read(0, 0, 1), read(1, 0, 1), read(2, 0, 1)];
    let run_gap = |gap: u64| {
        let opts = RunOptions { file_gap_blocks: gap, jobs: 1, ..RunOptions::default() };
        run_requests(&reqs, AddressKind::File, &[RunConfig::new("lru", "8blocks")], &opts)
    };
    assert_eq!(run_gap(1 << 62).unwrap()[0].stats.misses, 3);
    let e = run_gap(u64::MAX / 2).err().unwrap().to_string();
    assert!(e.contains("need more than 2^64 blocks") && e.contains("--file-gap"), "{e}");
}

#[test]
fn streams_interleave_by_time_and_single_stream_merges_them() {
    // Two pids reading different files, 10 ms apart in the trace each. Concurrently, their
    // misses queue on the one disk; merged, they run one after the other.
    let mut reqs = Vec::new();
    for i in 0..20u64 {
        for pid in 0..2u32 {
            reqs.push(Request { time_ns: i * 10 * MS, pid, ..read(pid, i * 50, 1) });
        }
    }
    let both = run(&reqs, "lru", "1000blocks", "none", timing("avg", Think::Trace));
    let merged =
        run(&reqs, "lru", "1000blocks", "none", TimingOptions { single_stream: true, ..timing("avg", Think::Trace) });
    let (tb, tm) = (timed(&both), timed(&merged));
    assert_eq!(tb.streams, 2);
    assert_eq!(tm.streams, 1);
    assert_eq!(both.stats.misses, merged.stats.misses);
    // Concurrent: each stream's request takes 9.5 ms and sometimes queues 9.5 ms behind the
    // other's, then thinks 10 ms - 0 = 10 ms (the trace's gap; traced durations are 0).
    assert!(tb.devices[0].queue_wait_mean_ns > 0.0);
    // Merged: think times are the gaps of the merged trace (10 ms then 0 ms, alternately).
    assert_eq!(tm.think_time_ns, 19 * 10 * MS);
    assert_eq!(tm.exec_time_ns, tm.think_time_ns + tm.stall_time_ns + tm.flush_time_ns);
    assert!(tb.exec_time_ns < tm.exec_time_ns, "{} vs {}", tb.exec_time_ns, tm.exec_time_ns);
}

#[test]
fn a_stream_that_started_before_the_traces_first_request_starts_first() {
    // pid 1 comes first in the trace at 1 s; pid 0 issued its requests at 0 and 10 ms. As
    // traced, pid 0 is done long before pid 1 starts: the run takes 1 s plus pid 1's read,
    // whatever order the trace lists them in.
    let reqs = [
        Request { time_ns: 1000 * MS, pid: 1, ..read(1, 0, 1) },
        Request { time_ns: 0, pid: 0, ..read(0, 0, 1) },
        Request { time_ns: 10 * MS, pid: 0, ..read(0, 50, 1) },
    ];
    let mut sorted = reqs.to_vec();
    sorted.sort_by_key(|r| r.time_ns);
    let (a, b) = (
        run(&reqs, "lru", "1000blocks", "none", timing("avg", Think::Trace)),
        run(&sorted, "lru", "1000blocks", "none", timing("avg", Think::Trace)),
    );
    let (ta, tb) = (timed(&a), timed(&b));
    assert_eq!(ta.exec_time_ns, 1000 * MS + 9_500_000);
    assert_eq!(
        (ta.exec_time_ns, ta.stall_time_ns, ta.think_time_ns),
        (tb.exec_time_ns, tb.stall_time_ns, tb.think_time_ns)
    );
    // No request waited for another stream's.
    assert_eq!(ta.stall_time_ns, 3 * 9_500_000);
}

#[test]
fn writes_are_written_back_when_evicted() {
    // Write 8 blocks into a 4-block cache, then read 4 others: the 8 dirty blocks go back to
    // the disk as they are evicted (asynchronously), write misses read nothing.
    let mut reqs: Vec<Request> = (0..8).map(|b| Request { op: Op::Write, ..read(0, b * 10, 1) }).collect();
    reqs.extend((0..4).map(|b| read(0, 1000 + b * 10, 1)));
    let r = run(&reqs, "lru", "4blocks", "none", timing("avg", Think::Fixed(MS)));
    let t = timed(&r);
    assert_eq!(r.stats.write_misses, 8);
    assert_eq!(t.write.requests, 8);
    assert_eq!(t.sync.requests, 4);
    // The reader waits for its own reads, queued behind the write-backs (noop is FCFS).
    assert!(t.stall_time_ns > 4 * 9_500_000);
    assert_eq!(t.response.count, 12, "every issued I/O completes");
}

#[test]
fn dirty_blocks_are_flushed_at_the_end_and_counted_apart() {
    // Four writes of neighbouring blocks stay dirty in an 8-block cache: the end-of-run flush
    // writes them back as one request (avg: 9.5 ms), after the stream's 4 ms, and the execution
    // time ends with it. Turned off, the run ends when the stream does and writes nothing.
    let reqs: Vec<Request> = (0..4).map(|b| Request { op: Op::Write, ..read(0, b, 1) }).collect();
    let r = run(&reqs, "lru", "8blocks", "none", timing("avg", Think::Fixed(MS)));
    let t = timed(&r);
    assert_eq!((t.write.requests, t.flush.requests, t.flush.blocks), (0, 1, 4));
    assert_eq!(t.flush_time_ns, 9_500_000);
    assert_eq!(t.exec_time_ns, t.think_time_ns + t.flush_time_ns);
    let off = TimingOptions { final_flush: false, ..timing("avg", Think::Fixed(MS)) };
    let r = run(&reqs, "lru", "8blocks", "none", off);
    let t = timed(&r);
    assert_eq!((t.flush.requests, t.flush_time_ns, t.exec_time_ns), (0, 0, t.think_time_ns));
}

#[test]
fn blocks_a_request_reads_itself_are_misses_unless_own_reads_count() {
    // Two 4-block reads of a cold file, 64 KiB apart, with the 2.6 read-ahead: each misses its
    // first block and reads the rest ahead with it in one synchronous request. The request
    // waits for that read, so under §5.1's rule none of its blocks is a hit; `own-reads` counts
    // the three read ahead with the first as prefetch hits. Nothing else moves: the same
    // requests, blocks and times.
    let reqs = [read(0, 0, 4), read(0, 16, 4)];
    let go = |rule, ra| {
        let t = TimingOptions { hit_rule: rule, ..timing("avg", Think::Fixed(MS)) };
        run(&reqs, "lru", "100blocks", ra, t)
    };
    let (completed, own) = (go(HitRule::Completed, "linux"), go(HitRule::OwnReads, "linux"));
    assert_eq!((completed.stats.hits, completed.stats.misses, completed.stats.prefetch_hits), (0, 8, 0));
    assert_eq!((own.stats.hits, own.stats.misses, own.stats.prefetch_hits), (6, 2, 6));
    let (a, b) = (timed(&completed), timed(&own));
    assert_eq!((a.sync.requests, a.sync.blocks), (2, 11));
    assert_eq!((a.sync, a.async_, a.exec_time_ns, a.inflight_misses), (b.sync, b.async_, b.exec_time_ns, 0));
    assert_eq!(completed.stats.blocks_read, own.stats.blocks_read);
    // AccuSim's read-ahead demands a request's own blocks as it reaches them (they are misses,
    // read in the same synchronous request of 5 blocks), so no rule counts them as hits.
    for rule in HitRule::ALL {
        let r = go(rule, "linux-accusim");
        assert_eq!((r.stats.hits, r.stats.misses, r.stats.prefetch_hits), (0, 8, 0), "{rule:?}");
        assert_eq!((timed(&r).sync.requests, timed(&r).sync.blocks), (2, 10), "{rule:?}");
    }
    // A block read ahead by an earlier request and arrived since is a hit under both rules.
    let later = [read(0, 0, 1), read(0, 1, 1)];
    for rule in HitRule::ALL {
        let t = TimingOptions { hit_rule: rule, ..timing("avg", Think::Fixed(50 * MS)) };
        let r = run(&later, "lru", "100blocks", "linux-accusim", t);
        assert_eq!((r.stats.hits, r.stats.prefetch_hits), (1, 1), "{rule:?}");
    }
}

#[test]
fn same_seed_same_times() {
    // A mixed trace on a disk with seeded random rotation.
    let mut reqs = Vec::new();
    for i in 0..300u64 {
        let f = (i * 7 % 5) as u32;
        reqs.push(Request {
            time_ns: i * 300_000,
            dur_ns: 50_000,
            pid: (i % 3) as u32,
            ..read(f, (i * 13) % 97, 1 + i % 3)
        });
    }
    let go = |seed: u64| {
        let opts = RunOptions {
            timing: Some(TimingOptions {
                scheduler: "deadline".into(),
                ..timing("disk(rotation=random)", Think::Trace)
            }),
            seed,
            jobs: 1,
            ..RunOptions::default()
        };
        let r =
            run_requests(&reqs, AddressKind::File, &[RunConfig::new("lru", "32blocks").with_prefetch("linux")], &opts)
                .unwrap();
        (r[0].stats, r[0].timing.clone().unwrap())
    };
    let a = go(5);
    assert_eq!(a, go(5));
    assert_ne!(a.1, go(6).1);
}

#[test]
fn opt_needs_one_stream() {
    let reqs = [Request { pid: 1, ..read(0, 0, 1) }, Request { pid: 2, ..read(0, 1, 1) }];
    let opts = RunOptions { timing: Some(timing("avg", Think::Trace)), ..RunOptions::default() };
    let e = run_requests(&reqs, AddressKind::File, &[RunConfig::new("opt", "8blocks")], &opts).unwrap_err().to_string();
    assert!(e.contains("--single-stream"), "{e}");
    let opts = RunOptions {
        timing: Some(TimingOptions { single_stream: true, ..timing("avg", Think::Trace) }),
        ..RunOptions::default()
    };
    assert!(run_requests(&reqs, AddressKind::File, &[RunConfig::new("opt", "8blocks")], &opts).is_ok());
}

#[test]
fn bad_timing_specs_are_refused_before_the_run() {
    for (device, scheduler, want) in [("floppy", "noop", "unknown device"), ("avg", "elevator", "unknown scheduler")] {
        let opts = RunOptions {
            timing: Some(TimingOptions {
                device: device.into(),
                scheduler: scheduler.into(),
                ..TimingOptions::default()
            }),
            ..RunOptions::default()
        };
        let e = run_requests(&[read(0, 0, 1)], AddressKind::File, &[RunConfig::new("lru", "8blocks")], &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn each_device_id_of_a_block_trace_has_its_own_queue() {
    // Two processes, one on device 0 and one on device 3, ten random one-block reads each.
    let reqs: Vec<Request> =
        (0..10u64).flat_map(|i| (0..2u32).map(move |p| Request { pid: p, ..read(p * 3, i * 1000, 1) })).collect();
    let opts = RunOptions { timing: Some(timing("avg", Think::Fixed(0))), jobs: 1, ..RunOptions::default() };
    let r = run_requests(&reqs, AddressKind::Device, &[RunConfig::new("lru", "64blocks")], &opts).unwrap().remove(0);
    let t = r.timing.unwrap();
    assert_eq!(t.devices.iter().map(|d| d.device).collect::<Vec<_>>(), [0, 3]);
    assert!(t.devices.iter().all(|d| d.requests == 10 && d.queue_wait_mean_ns == 0.0));
    // In parallel: 10 x 9.5 ms, not 20 x 9.5 ms; the disks were busy 190 ms together.
    assert_eq!(t.exec_time_ns, 95 * MS);
    assert_eq!(t.io_time_ns, 190 * MS);
}
