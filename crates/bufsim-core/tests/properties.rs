//! Properties over random traces, for every registered policy: capacity is never exceeded,
//! hits + misses = accesses, invariants hold after every step, OPT never loses, LRU's misses
//! never grow with the cache, and the same seed gives the same result.

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::engine::FutureBuilder;
use bufsim_core::policy::{build, registry, Access, BuildEnv, Origin};
use proptest::prelude::*;

fn misses(spec: &str, capacity: usize, blocks: &[u64], seed: u64, check: bool) -> u64 {
    let mut fb = FutureBuilder::default();
    blocks.iter().for_each(|&b| fb.push(b));
    let next = fb.finish().next_use;
    let env = BuildEnv { capacity, block_size: 4096, seed };
    let mut cache = Cache::new(build(spec, &env).unwrap(), capacity);
    let (mut hits, mut miss) = (0u64, 0u64);
    for (t, &b) in blocks.iter().enumerate() {
        let a = Access { key: b, block: b, time: t as u64, next_use: next[t], ..Access::default() };
        match cache.demand(&a) {
            Demand::Hit | Demand::PrefetchHit => hits += 1,
            _ => miss += 1,
        }
        assert!(cache.len() <= capacity);
        if check {
            cache.check().unwrap_or_else(|e| panic!("{spec} at step {t}: {e}"));
        }
    }
    assert_eq!(hits + miss, blocks.len() as u64);
    miss
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    // Small alphabets make hits and evictions frequent; a skew makes some blocks hot.
    (2u64..60).prop_flat_map(|n| prop::collection::vec((0..n, 0..n).prop_map(|(a, b)| a.min(b)), 1..400))
}

/// Settings that stress bounds the defaults leave slack: tight ghost lists (2Q's A1out, LRU-K's
/// retained history, FBR's remembered counts) and LIRS's stack at its smallest (the cache).
const EXTRA_SPECS: &[&str] = &[
    "2q(kin=50%,kout=25%)",
    "2q(kin=0,kout=1)",
    "lirs(stack=1x,hir=25%)",
    "lirs(hir-min=1,stack=150%,variant=libcachesim)",
    "lru-k(k=3,crp=2,history=50%)",
    "lrfu(lambda=0)",
    "lrfu(lambda=1)",
    "fbr(new=10%,old=50%,amax=2,cmax=3,history=100%)",
    "gdsf(variant=libcachesim)",
    "w-tinylfu(variant=libcachesim)",
    "w-tinylfu(adaptive=true,window=0%,doorkeeper=false)",
    "hyperbolic(samples=1)",
    "lhd(associativity=1)",
];

fn all_specs() -> Vec<&'static str> {
    registry::all().map(|p| p.name).chain(EXTRA_SPECS.iter().copied()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_policy_keeps_its_invariants(blocks in trace(), cap in 1usize..24) {
        for spec in all_specs() {
            misses(spec, cap, &blocks, 3, true);
        }
    }

    #[test]
    fn opt_never_loses(blocks in trace(), cap in 1usize..24) {
        let opt = misses("opt", cap, &blocks, 3, false);
        // OPT must cache every missed block; a policy that may refuse one (libCacheSim's GDSF
        // entry rule) is not bound by it.
        for spec in all_specs().into_iter().filter(|s| *s != "gdsf(variant=libcachesim)") {
            prop_assert!(opt <= misses(spec, cap, &blocks, 3, false), "{} beat OPT", spec);
        }
    }

    #[test]
    fn lru_misses_never_grow_with_the_cache(blocks in trace(), cap in 1usize..40) {
        prop_assert!(misses("lru", cap + 1, &blocks, 0, false) <= misses("lru", cap, &blocks, 0, false));
        prop_assert!(misses("opt", cap + 1, &blocks, 0, false) <= misses("opt", cap, &blocks, 0, false));
    }

    #[test]
    fn same_seed_same_result(blocks in trace(), cap in 1usize..24, seed in any::<u64>()) {
        for spec in all_specs() {
            prop_assert_eq!(misses(spec, cap, &blocks, seed, false), misses(spec, cap, &blocks, seed, false));
        }
    }

    /// Drops (a truncated or deleted file's blocks) mixed with demand accesses and read-ahead:
    /// every policy keeps its invariants, a dropped block is gone at once and its next demand
    /// access misses, and drops are counted apart from evictions.
    #[test]
    fn dropped_blocks_leave_every_policy_consistent(
        ops in prop::collection::vec((0u64..30, 0u8..6), 1..400),
        cap in 1usize..16,
    ) {
        for spec in all_specs().into_iter().filter(|s| !registry::needs_future(s)) {
            let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
            let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
            let mut gone = std::collections::HashSet::new();
            let mut dropped = 0u64;
            for (t, &(b, kind)) in ops.iter().enumerate() {
                let a = Access { key: b, block: b, time: t as u64, ..Access::default() };
                match kind {
                    0 => {
                        match cache.frame_of(b) {
                            Some(f) => {
                                let evictions = cache.evictions;
                                cache.drop_frame(f);
                                dropped += 1;
                                prop_assert_eq!(cache.evictions, evictions, "{} counted a drop as an eviction", spec);
                            }
                            None => cache.forget(b),
                        }
                        prop_assert!(!cache.contains(b), "{} kept a dropped block", spec);
                        gone.insert(b);
                    }
                    1 => {
                        if !cache.contains(b) {
                            cache.insert(&a, Origin::Prefetch);
                            gone.remove(&b);
                        }
                    }
                    _ => {
                        let outcome = cache.demand(&a);
                        if gone.remove(&b) {
                            prop_assert!(
                                matches!(outcome, Demand::Miss | Demand::MissBypassed),
                                "{} hit block {} after its data was dropped", spec, b
                            );
                        }
                    }
                }
                prop_assert_eq!(cache.dropped, dropped);
                prop_assert!(cache.len() <= cap);
                cache.check().map_err(|e| TestCaseError::fail(format!("{spec} step {t}: {e}")))?;
            }
        }
    }

    /// Prefetch inserts and pins mixed with demand accesses: residency stays consistent, a
    /// pinned frame is never evicted, an unused prefetch is counted once when evicted.
    #[test]
    fn prefetch_and_pins_keep_the_cache_consistent(
        ops in prop::collection::vec((0u64..40, 0u8..4), 1..400),
        cap in 2usize..16,
    ) {
        for spec in all_specs() {
            let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
            let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
            let mut pinned: Option<(u64, u32)> = None;
            for (t, &(b, kind)) in ops.iter().enumerate() {
                let a = Access { key: b, block: b, time: t as u64, ..Access::default() };
                match kind {
                    0 | 1 => { cache.demand(&a); }
                    2 => {
                        if !cache.contains(b) {
                            cache.insert(&a, Origin::Prefetch);
                        }
                    }
                    _ => {
                        if let Some((_, f)) = pinned.take() {
                            cache.unpin(f);
                        } else if let Some(f) = cache.frame_of(b) {
                            cache.pin(f);
                            pinned = Some((b, f));
                        }
                    }
                }
                if let Some((pb, pf)) = pinned {
                    prop_assert_eq!(cache.frame_of(pb), Some(pf), "{} evicted a pinned block", spec);
                }
                cache.check().map_err(|e| TestCaseError::fail(format!("{spec} step {t}: {e}")))?;
            }
        }
    }
}

mod with_prefetching {
    use bufsim_core::run::{run_requests, RunConfig, RunOptions};
    use bufsim_core::trace::{AddressKind, Op, Request};
    use proptest::prelude::*;

    fn requests() -> impl Strategy<Value = Vec<Request>> {
        // A few files, mostly sequential runs with jumps, 1 to 8 blocks per read, some writes.
        prop::collection::vec(
            (0u32..3, 0u64..200, 1u64..9, prop::bool::weighted(0.1), prop::bool::weighted(0.7)),
            1..150,
        )
        .prop_map(|v| {
            let mut next = [0u64; 3];
            v.into_iter()
                .map(|(file, jump, blocks, write, sequential)| {
                    let f = file as usize;
                    let start = if sequential { next[f] } else { jump };
                    next[f] = start + blocks;
                    Request {
                        time_ns: 0,
                        dur_ns: 0,
                        pid: 0,
                        ctx: 0,
                        op: if write { Op::Write } else { Op::Read },
                        file,
                        offset: start * 4096,
                        size: blocks * 4096,
                        in_blocks: false,
                        unfilled: 0,
                        opened: false,
                    }
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every policy with every read-ahead keeps its invariants (checked after the run), the
        /// counters add up, and nothing is read twice without an eviction in between.
        #[test]
        fn every_policy_works_with_every_prefetcher(reqs in requests(), cap in 2u64..40) {
            let opts = RunOptions { check: true, jobs: 1, ..RunOptions::default() };
            for prefetch in ["linux", "linux-ondemand", "bsd", "simple(min=3,max=8)"] {
                let configs: Vec<RunConfig> = super::all_specs()
                    .into_iter()
                    .map(|p| RunConfig::new(p, &format!("{cap}blocks")).with_prefetch(prefetch))
                    .collect();
                let results = run_requests(&reqs, AddressKind::File, &configs, &opts)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                for r in results {
                    let s = r.stats;
                    prop_assert_eq!(s.hits + s.misses, s.accesses);
                    prop_assert_eq!(s.sync_requests + s.async_requests, s.disk_requests);
                    prop_assert!(s.prefetch_hits <= s.prefetched);
                    prop_assert!(s.prefetched_unused <= s.prefetched);
                    prop_assert_eq!(s.blocks_read, s.misses - s.write_misses + s.prefetched,
                        "{} with {}", r.policy, prefetch);
                }
            }
        }
    }
}
