//! Degenerate configurations that must reduce to LRU exactly, step by step, with read-ahead
//! insertions mixed in: MQ with one queue (MQ paper §4: "When m equals 1, the MQ algorithm is
//! the LRU algorithm") and GreedyDual-Size with uniform costs (ties go to the block touched
//! longest ago).

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::{build, Access, BuildEnv, Origin};
use proptest::prelude::*;

/// (block, is_prefetch) operations; returns the hit pattern and the resident set after each step.
fn replay(spec: &str, cap: usize, ops: &[(u64, bool)]) -> Vec<(bool, Vec<u64>)> {
    let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
    let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
    let mut time = 0;
    let mut out = Vec::new();
    for &(b, prefetch) in ops {
        let a = Access { key: b, block: b, time, ..Access::default() };
        let hit = if prefetch {
            if !cache.contains(b) {
                cache.insert(&a, Origin::Prefetch);
            }
            false
        } else {
            time += 1;
            matches!(cache.demand(&a), Demand::Hit | Demand::PrefetchHit)
        };
        cache.check().unwrap();
        let mut r = cache.resident_keys();
        r.sort_unstable();
        out.push((hit, r));
    }
    out
}

fn ops() -> impl Strategy<Value = Vec<(u64, bool)>> {
    prop::collection::vec((0u64..40, prop::bool::weighted(0.2)), 1..500)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mq_with_one_queue_is_lru(ops in ops(), cap in 1usize..20) {
        let lru = replay("lru", cap, &ops);
        for spec in ["mq(queues=1)", "mq(queues=1,lifetime=1)", "mq(queues=1,history=0x)"] {
            prop_assert_eq!(&replay(spec, cap, &ops), &lru, "{}", spec);
        }
    }

    #[test]
    fn gds_with_uniform_costs_is_lru(ops in ops(), cap in 1usize..20) {
        prop_assert_eq!(replay("gds", cap, &ops), replay("lru", cap, &ops));
    }
}

/// With several queues MQ is not LRU: a block accessed twice survives a scan LRU loses it to.
#[test]
fn mq_with_queues_keeps_a_frequent_block_through_a_scan() {
    let mut ops: Vec<(u64, bool)> = vec![(100, false), (100, false)];
    ops.extend((0..4).map(|b| (b, false)));
    ops.push((100, false));
    let last = |spec: &str| replay(spec, 4, &ops).last().unwrap().0;
    assert!(last("mq(queues=2,lifetime=100)"));
    assert!(!last("lru"));
}
