//! DULO properties (FAST 2005 §3.4): with every sequence of size 1 (no two blocks adjacent on
//! the disk) DULO degenerates to its base, CLOCK (or, §4.2.2, Linux's two lists), miss for miss; on any trace sequences stay
//! within max_seq and join only disk-adjacent blocks, and the sections add up to the cache.

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::{build, Access, BuildEnv};
use proptest::prelude::*;

fn misses(spec: &str, capacity: usize, blocks: &[u64], check: bool) -> u64 {
    let env = BuildEnv { capacity, block_size: 4096, seed: 1 };
    let mut cache = Cache::new(build(spec, &env).unwrap(), capacity);
    let mut misses = 0;
    for (t, &b) in blocks.iter().enumerate() {
        let a = Access { key: b, block: b, time: t as u64, ..Access::default() };
        if matches!(cache.demand(&a), Demand::Miss | Demand::MissBypassed) {
            misses += 1;
        }
        if check {
            cache.check().unwrap_or_else(|e| panic!("{spec} at step {t}: {e}"));
        }
    }
    misses
}

fn trace() -> impl Strategy<Value = Vec<u64>> {
    (2u64..80).prop_flat_map(|n| prop::collection::vec((0..n, 0..n).prop_map(|(a, b)| a.min(b)), 1..600))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn with_only_random_blocks_dulo_misses_exactly_as_clock(blocks in trace(), cap in 2usize..40, bank in 1usize..8, buffer in 0usize..10) {
        // Blocks two apart are never adjacent: every sequence has one block.
        let spread: Vec<u64> = blocks.iter().map(|b| b * 2).collect();
        let bank = bank.min(cap - 1);
        let buffer = buffer.min(cap - bank);
        let evict = cap - bank - buffer;
        let spec = format!("dulo(bank={bank}blocks,evict={evict}blocks,buffer={buffer}blocks)");
        prop_assert_eq!(misses(&spec, cap, &spread, true), misses("clock", cap, &spread, false), "{}", spec);
        prop_assert_eq!(misses("dulo", cap, &spread, false), misses("clock", cap, &spread, false), "auto-scaled dulo");
    }

    #[test]
    fn on_the_linux_two_lists_with_only_random_blocks_dulo_misses_exactly_as_linux_2list(
        blocks in trace(), cap in 2usize..40, bank in 1usize..8, ratio in 1u32..3,
    ) {
        // §4.2.2's variant keeps Linux's lists; with one-block sequences the inactive list stays
        // in arrival order, so it must be linux-2list miss for miss.
        let spread: Vec<u64> = blocks.iter().map(|b| b * 2).collect();
        let inactive = (cap as u32 / (1 + ratio)).max(1) as usize;
        let bank = bank.min(inactive);
        let spec = format!("dulo(base=linux2q,active-ratio={ratio},bank={bank}blocks,evict={}blocks,buffer=0blocks)", inactive - bank);
        let base = format!("linux-2list(active-ratio={ratio})");
        prop_assert_eq!(misses(&spec, cap, &spread, true), misses(&base, cap, &spread, false), "{}", spec);
    }

    #[test]
    fn sequences_stay_short_adjacent_and_ordered(blocks in trace(), cap in 2usize..40, max_seq in 1u64..6) {
        // check() after every access verifies: sizes <= max_seq, members adjacent on the disk,
        // H non-decreasing from the bottom and never below L, sections adding up to the cache.
        misses(&format!("dulo(max_seq={max_seq})"), cap, &blocks, true);
        misses(&format!("dulo(base=linux2q,max_seq={max_seq})"), cap, &blocks, true);
    }
}
