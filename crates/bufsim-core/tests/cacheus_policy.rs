//! Cacheus on the CloudPhysics trace (4 KiB blocks) with every invariant checked after each
//! access, and its distance from libCacheSim's Cacheus, whose SR-LRU evicts on its own.

use std::path::PathBuf;

use bufsim_core::run::{run_trace, RunConfig, RunOptions};

fn cloudphysics() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudphysics_vscsi.csv")
        .to_string_lossy()
        .into_owned()
}

fn misses(specs: &[&str], cache: &str, check: bool) -> Vec<u64> {
    let configs: Vec<RunConfig> = specs.iter().map(|p| RunConfig::new(p, cache)).collect();
    let opts = RunOptions { check, ..RunOptions::default() };
    run_trace(&cloudphysics(), &configs, &opts)
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r.stats.hits + r.stats.misses, r.stats.accesses, "{}", r.policy);
            r.stats.misses
        })
        .collect()
}

#[test]
fn cacheus_keeps_its_invariants_on_a_real_trace() {
    let specs = ["cacheus", "cacheus(learning-rate=0.45)", "cacheus(seed=7,lru-weight=0.9)"];
    let small = misses(&specs, "1024blocks", true);
    let large = misses(&specs, "65536blocks", true);
    for (i, s) in specs.iter().enumerate() {
        assert!(large[i] <= small[i], "{s}: {} at 65536 blocks, {} at 1024", large[i], small[i]);
    }
}

#[test]
fn cacheus_runs_are_bit_identical_for_one_seed() {
    let a = misses(&["cacheus(seed=3)", "cacheus(seed=3)", "cacheus(seed=4)"], "16384blocks", false);
    assert_eq!(a[0], a[1]);
}
