//! Hierarchies (MQ paper): the second-level stream is exactly the first-level misses in order,
//! a zero-size first level passes the whole trace down, LRU never misses below distance C
//! (Table 3), and on the real trace the second level's temporal distances move past the first
//! level's size (the paper's central observation, §3).
// `iter::repeat_n` needs Rust 1.82; the workspace supports 1.80.
#![allow(clippy::manual_repeat_n)]

use std::collections::VecDeque;

use bufsim_core::breakdown::breakdown;
use bufsim_core::engine::EngineConfig;
use bufsim_core::hierarchy::{second_level, ClientBy, FirstLevelConfig};
use bufsim_core::run::{decode, RunConfig, RunOptions};
use bufsim_core::trace::{AddressKind, Format, Op, Request};
use proptest::prelude::*;

const CLOUDPHYSICS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/cloudphysics_vscsi.csv");

fn req(pid: u32, block: u64, blocks: u64, write: bool) -> Request {
    Request {
        time_ns: 0,
        dur_ns: 0,
        pid,
        ctx: 0,
        op: if write { Op::Write } else { Op::Read },
        file: 0,
        offset: block * 4096,
        size: blocks * 4096,
        in_blocks: false,
        unfilled: 0,
        opened: false,
    }
}

/// The block accesses of a stream, in order.
fn blocks_of(stream: &[Request]) -> Vec<(u32, u64)> {
    stream.iter().flat_map(|r| (0..r.size / 4096).map(move |i| (r.pid, r.offset / 4096 + i))).collect()
}

/// A reference LRU per client, written independently of the engine: a deque, most recent last.
fn reference_misses(reqs: &[Request], capacity: usize) -> Vec<(u32, u64)> {
    let mut caches: std::collections::HashMap<u32, VecDeque<u64>> = Default::default();
    let mut out = Vec::new();
    for r in reqs {
        for b in r.offset / 4096..(r.offset + r.size) / 4096 {
            let c = caches.entry(r.pid).or_default();
            if let Some(i) = c.iter().position(|&x| x == b) {
                c.remove(i);
            } else {
                out.push((r.pid, b));
                if c.len() == capacity {
                    c.pop_front();
                }
            }
            c.push_back(b);
        }
    }
    out
}

fn requests() -> impl Strategy<Value = Vec<Request>> {
    prop::collection::vec((0u32..3, 0u64..40, 1u64..4, any::<bool>()), 1..300)
        .prop_map(|v| v.into_iter().map(|(p, b, n, w)| req(p, b, n, w)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_second_level_sees_exactly_the_first_level_misses_in_order(reqs in requests(), cap in 1usize..20) {
        let mut cfg = FirstLevelConfig::new("lru", &format!("{cap}blocks"));
        cfg.client_by = ClientBy::Pid;
        let (l2, stats) = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap();
        prop_assert_eq!(blocks_of(&l2), reference_misses(&reqs, cap));
        let accesses: u64 = stats.iter().map(|s| s.accesses).sum();
        prop_assert_eq!(accesses, reqs.iter().map(|r| r.size / 4096).sum::<u64>());
        prop_assert!(stats.iter().all(|s| s.hits + s.misses == s.accesses));
    }

    #[test]
    fn a_zero_size_first_level_passes_the_whole_trace(reqs in requests()) {
        let (l2, _) = second_level(&reqs, AddressKind::Device, &FirstLevelConfig::new("lru", "0blocks"), &EngineConfig::default(), 1).unwrap();
        prop_assert_eq!(blocks_of(&l2), blocks_of(&reqs));
        let ops = |s: &[Request]| s.iter().flat_map(|r| std::iter::repeat(r.op).take((r.size / 4096) as usize)).collect::<Vec<_>>();
        prop_assert_eq!(ops(&l2), ops(&reqs));
    }

    #[test]
    fn lru_never_misses_below_distance_c(reqs in requests(), cap in 1u64..30) {
        let rows = breakdown(&reqs, AddressKind::Device, &[RunConfig::new("lru", &format!("{cap}blocks"))], &RunOptions::default()).unwrap();
        let r = &rows[0];
        prop_assert_eq!(r.below_misses, 0);
        let accesses: u64 = reqs.iter().map(|r| r.size / 4096).sum();
        prop_assert_eq!(r.below_hits + r.below_misses + r.above_hits + r.above_misses + r.first, accesses);
    }
}

/// Temporal distances in power-of-two bins (MQ paper §3: distances are rounded up to the next
/// power of two): `bins[k]` counts distances in (2^(k-1), 2^k].
fn distance_bins(stream: &[Request]) -> Vec<u64> {
    let mut last = std::collections::HashMap::new();
    let mut bins = vec![0u64; 64];
    for (t, (_, b)) in blocks_of(stream).into_iter().enumerate() {
        if let Some(p) = last.insert(b, t as u64) {
            let d = t as u64 - p;
            bins[d.next_power_of_two().trailing_zeros() as usize] += 1;
        }
    }
    bins
}

#[test]
fn on_the_real_trace_second_level_distances_peak_beyond_the_first_level() {
    let reqs = decode(CLOUDPHYSICS, Format::CloudPhysics).unwrap();
    let l1 = 4096u64; // 16 MiB of 4 KiB blocks
    let (l2, _) = second_level(
        &reqs,
        AddressKind::Device,
        &FirstLevelConfig::new("lru", "4096blocks"),
        &EngineConfig::default(),
        1,
    )
    .unwrap();
    let bins = distance_bins(&l2);
    let peak = (0..64).max_by_key(|&k| (bins[k], std::cmp::Reverse(k))).unwrap();
    assert!(
        1u64 << peak > l1,
        "second-level peak at distance 2^{peak}, not beyond the first level's {l1} blocks: {bins:?}"
    );
    // Below the first level's size almost nothing is left: LRU kept those references.
    let below: u64 = bins[..=12].iter().sum();
    let total: u64 = bins.iter().sum();
    assert!((below as f64) < 0.05 * total as f64, "{below} of {total} correlated references below 4096");
}

#[test]
fn lru_on_the_real_second_level_stream_has_no_misses_below_c() {
    let reqs = decode(CLOUDPHYSICS, Format::CloudPhysics).unwrap();
    let (l2, _) = second_level(
        &reqs,
        AddressKind::Device,
        &FirstLevelConfig::new("lru", "4096blocks"),
        &EngineConfig::default(),
        1,
    )
    .unwrap();
    let configs: Vec<RunConfig> = ["16384blocks", "65536blocks"].iter().map(|c| RunConfig::new("lru", c)).collect();
    for r in breakdown(&l2, AddressKind::Device, &configs, &RunOptions::default()).unwrap() {
        assert_eq!(r.below_misses, 0, "{r:?}");
        assert!(r.above_misses > 0 && r.below_hits > 0, "{r:?}");
    }
}
