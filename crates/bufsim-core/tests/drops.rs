//! Drop requests (a file truncated, deleted or punched) through every engine: count mode, timed
//! mode, a first-level cache, the Linux policy's shadow entries and the page log.

use bufsim_core::engine::EngineConfig;
use bufsim_core::hierarchy::{second_level, FirstLevelConfig};
use bufsim_core::run::{run_requests, RunConfig, RunOptions, RunResult};
use bufsim_core::timed::{Think, TimingOptions};
use bufsim_core::trace::{AddressKind, Op, Request};

const KIB4: u64 = 4096;

/// A read of `blocks` 4 KiB blocks of `file` from block `block`.
fn read(file: u32, block: u64, blocks: u64) -> Request {
    Request::read(file, block * KIB4, blocks * KIB4)
}

fn write(file: u32, block: u64, blocks: u64) -> Request {
    Request { op: Op::Write, ..read(file, block, blocks) }
}

/// A drop of `file`'s bytes from `offset`, `size` of them (0: to the end of the file).
fn drop(file: u32, offset: u64, size: u64) -> Request {
    Request { op: Op::Drop, ..Request::read(file, offset, size) }
}

fn run(reqs: &[Request], policy: &str, cache: &str, opts: &RunOptions) -> RunResult {
    let opts = RunOptions { check: true, jobs: 1, ..opts.clone() };
    run_requests(reqs, AddressKind::File, &[RunConfig::new(policy, cache)], &opts).unwrap().remove(0)
}

#[test]
fn a_truncated_file_is_read_again_from_disk_except_its_partial_block() {
    // Ten blocks read, the file cut to 5000 bytes (blocks 0 and 1 keep data), read again: the
    // eight whole blocks past the cut miss, and they were dropped, not evicted.
    let reqs = [read(0, 0, 10), drop(0, 5000, 0), read(0, 0, 10)];
    for policy in ["lru", "arc", "lirs", "2q", "clock", "s3-fifo", "linux", "mglru", "dulo", "amp"] {
        let r = run(&reqs, policy, "64blocks", &RunOptions::default());
        let s = r.stats;
        assert_eq!((s.requests, s.accesses, s.hits, s.misses), (2, 20, 2, 18), "{policy}");
        assert_eq!((s.dropped, s.evictions), (8, 0), "{policy}");
    }
}

#[test]
fn a_deleted_file_leaves_the_cache_and_others_stay() {
    let reqs = [read(0, 0, 4), read(1, 0, 4), drop(0, 0, 0), read(0, 0, 4), read(1, 0, 4)];
    let r = run(&reqs, "lru", "64blocks", &RunOptions::default());
    assert_eq!((r.stats.hits, r.stats.misses, r.stats.dropped), (4, 12, 4));
    // A punched hole drops the whole blocks inside it: 1000..13288 covers blocks 1 and 2.
    let reqs = [read(0, 0, 4), drop(0, 1000, 12288), read(0, 0, 4)];
    let r = run(&reqs, "lru", "64blocks", &RunOptions::default());
    assert_eq!((r.stats.hits, r.stats.misses, r.stats.dropped), (2, 6, 2));
}

#[test]
fn room_freed_by_a_drop_is_filled_without_eviction() {
    // A full 4-block cache loses two blocks to a drop: the next two misses take their frames.
    let reqs = [read(0, 0, 4), drop(0, 2 * KIB4, 0), read(1, 0, 2), read(0, 0, 2)];
    let r = run(&reqs, "lru", "4blocks", &RunOptions::default());
    assert_eq!((r.stats.evictions, r.stats.dropped, r.stats.hits), (0, 2, 2));
}

#[test]
fn linux_forgets_the_shadows_of_a_truncated_range() {
    // File 0's two blocks are evicted (shadows), file 0 is truncated to nothing, then read
    // again: no refault is seen, so nothing is activated on the way back in. Without the drop
    // both come back as refaults.
    let mut reqs = vec![read(0, 0, 2), read(1, 0, 8)];
    let refaults = |reqs: &[Request]| {
        let r = run(reqs, "linux", "8blocks", &RunOptions::default());
        r.metrics.iter().find(|(k, _)| *k == "refaults").map(|&(_, v)| v).unwrap()
    };
    let mut without = reqs.clone();
    without.push(read(0, 0, 2));
    assert_eq!(refaults(&without), 2.0);
    reqs.push(drop(0, 0, 0));
    reqs.push(read(0, 0, 2));
    assert_eq!(refaults(&reqs), 0.0);
}

#[test]
fn timed_mode_discards_dropped_dirty_blocks_without_writing_them() {
    // Four dirty blocks would be flushed at the end; deleting the file first writes nothing.
    let timing = TimingOptions { device: "avg".into(), think: Think::Fixed(1_000_000), ..TimingOptions::default() };
    let opts = RunOptions { timing: Some(timing), ..RunOptions::default() };
    let kept = run(&[write(0, 0, 4)], "lru", "8blocks", &opts);
    let t = kept.timing.as_ref().unwrap();
    assert_eq!((t.flush.requests, t.flush.blocks), (1, 4));
    let gone = run(&[write(0, 0, 4), drop(0, 0, 0)], "lru", "8blocks", &opts);
    let t = gone.timing.as_ref().unwrap();
    assert_eq!((t.flush.requests, t.write.requests, gone.stats.dropped, gone.stats.requests), (0, 0, 4, 1));
}

#[test]
fn a_first_level_drop_reaches_the_second_level() {
    // The client caches file 0; its deletion empties the client cache and goes down as a drop
    // of the same device blocks, so the second level forgets them too.
    let reqs = [read(0, 0, 3), drop(0, 0, 0), read(0, 0, 3)];
    let (l2, stats) =
        second_level(&reqs, AddressKind::File, &FirstLevelConfig::new("lru", "16blocks"), &EngineConfig::default(), 1)
            .unwrap();
    let ops: Vec<(Op, u64, u64)> = l2.iter().map(|r| (r.op, r.offset / KIB4, r.size / KIB4)).collect();
    assert_eq!(ops, vec![(Op::Read, 0, 3), (Op::Drop, 0, 3), (Op::Read, 0, 3)]);
    assert_eq!((stats[0].hits, stats[0].misses), (0, 6));
}

#[test]
fn drops_change_nothing_when_nothing_they_name_is_cached() {
    // Dropping blocks never read, or past the end, is a no-op for the results.
    let plain = [read(0, 0, 4), read(0, 0, 4)];
    let with = [read(0, 0, 4), drop(1, 0, 0), drop(0, 1 << 30, 0), read(0, 0, 4), drop(0, 0, 100)];
    let a = run(&plain, "arc", "8blocks", &RunOptions::default());
    let b = run(&with, "arc", "8blocks", &RunOptions::default());
    assert_eq!((a.stats.hits, a.stats.misses, b.stats.dropped), (b.stats.hits, b.stats.misses, 0));
}

#[test]
fn read_ahead_stops_where_a_truncated_file_ends_now() {
    // A 64-block file is truncated, 4 blocks are written again, their cache is dropped (a hole,
    // the size stays 4 blocks), and 4 blocks are read: Linux 6's first window of 8 blocks stops
    // at the file's end then: the miss on block 0 reads blocks 1 to 3 with it. Emptied by a hole
    // instead, the file keeps its 64 blocks, and the window reads blocks 1 to 7.
    let opts = RunOptions::default();
    let cfg = |reqs: &[Request]| {
        let c = RunConfig::new("lru", "256blocks").with_prefetch("linux-6(max=32,folios=0)");
        run_requests(reqs, AddressKind::File, &[c], &RunOptions { check: true, jobs: 1, ..opts.clone() })
            .unwrap()
            .remove(0)
    };
    let truncated = cfg(&[write(0, 0, 64), drop(0, 0, 0), write(0, 0, 4), drop(0, 0, 4 * KIB4), read(0, 0, 4)]);
    assert_eq!((truncated.stats.misses - 68, truncated.stats.prefetched), (1, 3));
    let punched = cfg(&[write(0, 0, 64), drop(0, 0, 64 * KIB4), write(0, 0, 4), drop(0, 0, 4 * KIB4), read(0, 0, 4)]);
    assert_eq!((punched.stats.misses - 68, punched.stats.prefetched), (1, 7));
}
