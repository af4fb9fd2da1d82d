//! Hint requests (fadvise(WILLNEED), readahead(2)) through every engine: count mode, timed mode,
//! a first-level cache, and Linux 6's bound and decision log in the page log.

use bufsim_core::engine::EngineConfig;
use bufsim_core::hierarchy::{second_level, FirstLevelConfig};
use bufsim_core::page_log::page_log;
use bufsim_core::run::{run_requests, RunConfig, RunOptions, RunResult};
use bufsim_core::timed::{Think, TimingOptions};
use bufsim_core::trace::{AddressKind, Op, Request};

const KIB4: u64 = 4096;

/// A read of `blocks` 4 KiB blocks of `file` from block `block`.
fn read(file: u32, block: u64, blocks: u64) -> Request {
    Request::read(file, block * KIB4, blocks * KIB4)
}

/// A hint of `file`'s bytes from `offset`, `size` of them (0: to the end of the file).
fn hint(file: u32, offset: u64, size: u64) -> Request {
    Request { op: Op::Hint, ..Request::read(file, offset, size) }
}

fn run(reqs: &[Request], policy: &str, prefetch: &str, opts: &RunOptions) -> RunResult {
    let opts = RunOptions { check: true, jobs: 1, ..opts.clone() };
    let c = RunConfig::new(policy, "64blocks").with_prefetch(prefetch);
    run_requests(reqs, AddressKind::File, &[c], &opts).unwrap().remove(0)
}

#[test]
fn hinted_blocks_are_read_ahead_at_once_and_then_hit() {
    // PostgreSQL's hint of one 8 KiB page is two blocks, partial blocks rounded outwards: the
    // hint reads blocks 0 to 2 in one asynchronous disk request, none counted as an access, and
    // the reads that follow hit all three.
    let reqs = [hint(0, 100, 8192), read(0, 0, 3)];
    for policy in ["lru", "arc", "lirs", "2q", "clock", "s3-fifo", "linux", "mglru", "dulo", "amp"] {
        let s = run(&reqs, policy, "none", &RunOptions::default()).stats;
        assert_eq!((s.requests, s.accesses, s.hits, s.misses), (1, 3, 3, 0), "{policy}");
        assert_eq!((s.prefetched, s.prefetch_hits, s.disk_requests, s.async_requests), (3, 3, 1, 1), "{policy}");
    }
}

#[test]
fn a_hint_reads_no_further_than_the_file_and_skips_what_is_cached() {
    // File 0 spans 10 blocks (its reads say so); a hint of size 0 from byte 8192 reads blocks
    // 2 to 9 but 5, which is cached; a hint past the end or of a file never read reads nothing.
    let reqs = [read(0, 5, 1), hint(0, 8192, 0), hint(0, 1 << 30, 4096), hint(1, 0, 0), read(0, 9, 1), read(0, 2, 1)];
    let s = run(&reqs, "lru", "none", &RunOptions::default()).stats;
    assert_eq!((s.prefetched, s.hits, s.misses), (7, 2, 1));
    // Two disk requests: blocks 2-4 and 6-9 (the cached block splits the range).
    assert_eq!((s.disk_requests, s.async_requests), (3, 2));
}

#[test]
fn linux_6_reads_at_most_its_largest_window_in_2_mib_chunks() {
    // force_page_cache_ra: at most max(io_pages, ra_pages) pages (io_pages left out), read in
    // chunks of 512 pages, each logged as page_cache_ra_unbounded receives it (no lookahead).
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hints");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.csv");
    std::fs::write(&path, "op,file,offset,size\nH,f,0,0\nR,f,0,4096\nR,f,10240000,4096\n").unwrap();
    let log = page_log(
        path.to_str().unwrap(),
        "lru",
        4000,
        "linux-6(max=1280,folios=0)",
        &[("f".to_string(), 3000 * KIB4)],
        &[],
        &[],
        EngineConfig::default(),
    )
    .unwrap();
    let hinted: Vec<(u64, u64, u64)> = log.decisions.iter().take(3).map(|d| (d.start, d.size, d.async_size)).collect();
    assert_eq!(hinted, vec![(0, 512, 0), (512, 512, 0), (1024, 256, 0)]);
    // The read of block 0 hits; block 2500 was beyond the hint and misses (a random read: alone).
    assert_eq!((log.stats.prefetched, log.stats.hits, log.stats.misses), (1280, 1, 1));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn timed_mode_does_not_wait_for_a_hint() {
    // The hint's reads go out at once; a read a second later finds its blocks arrived.
    let timing = TimingOptions { device: "avg".into(), think: Think::Fixed(1_000_000_000), ..TimingOptions::default() };
    let opts = RunOptions { timing: Some(timing), ..RunOptions::default() };
    let r = run(&[hint(0, 0, 4 * KIB4), read(0, 0, 4)], "lru", "none", &opts);
    assert_eq!((r.stats.requests, r.stats.hits, r.stats.prefetched), (1, 4, 4));
    let t = r.timing.as_ref().unwrap();
    assert_eq!((t.async_.requests, t.sync.requests, t.stall_time_ns), (1, 0, 0));
}

#[test]
fn a_first_level_cache_reads_what_a_hint_names_from_the_second_level() {
    // The client reads blocks 0-2 ahead (one read run below), then its three reads hit.
    let reqs = [hint(0, 0, 3 * KIB4), read(0, 0, 3)];
    let (l2, stats) =
        second_level(&reqs, AddressKind::File, &FirstLevelConfig::new("lru", "16blocks"), &EngineConfig::default(), 1)
            .unwrap();
    let ops: Vec<(Op, u64, u64)> = l2.iter().map(|r| (r.op, r.offset / KIB4, r.size / KIB4)).collect();
    assert_eq!(ops, vec![(Op::Read, 0, 3)]);
    assert_eq!((stats[0].hits, stats[0].misses), (3, 0));
}
