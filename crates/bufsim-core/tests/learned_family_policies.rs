//! LeCaR and CART on the CloudPhysics trace (4 KiB blocks), with every policy invariant checked
//! after each access: what a real trace holds that the hand-computed steps beside the code do not.

use std::path::PathBuf;

use bufsim_core::run::{run_trace, RunConfig, RunOptions};

fn cloudphysics() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudphysics_vscsi.csv")
        .to_string_lossy()
        .into_owned()
}

fn misses(specs: &[&str], cache: &str) -> Vec<u64> {
    let configs: Vec<RunConfig> = specs.iter().map(|p| RunConfig::new(p, cache)).collect();
    let opts = RunOptions { check: true, ..RunOptions::default() };
    run_trace(&cloudphysics(), &configs, &opts)
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r.stats.hits + r.stats.misses, r.stats.accesses, "{}", r.policy);
            r.stats.misses
        })
        .collect()
}

/// libCacheSim's LeCaR at 65536 blocks (tests/golden/libcachesim_cloudphysics_learned_family.csv).
const LIBCACHESIM_LECAR_65536: u64 = 856_133;

#[test]
fn lecar_differs_from_libcachesim_only_by_its_random_stream() {
    // The libCacheSim rules with another start of the generator: within 1% of libCacheSim (the
    // random stream is all that is left); the same start gives the exact count (golden file).
    let m = misses(&["lecar(variant=libcachesim,seed=12345)", "lecar(variant=libcachesim,seed=1)"], "65536blocks");
    for x in m {
        let rel = (x as f64 - LIBCACHESIM_LECAR_65536 as f64).abs() / LIBCACHESIM_LECAR_65536 as f64;
        assert!(rel < 0.01, "{x} vs {LIBCACHESIM_LECAR_65536}");
        assert_ne!(x, LIBCACHESIM_LECAR_65536, "a different stream should not land on the same count");
    }
}

#[test]
fn lecar_resumed_counts_are_what_set_the_paper_variant_apart() {
    // The authors' rule that a key back from a history resumes its count is worth 4% fewer
    // misses at 65536 blocks than libCacheSim's restart at 1: more than any seed moves it.
    let m = misses(&["lecar", "lecar(seed=7)"], "65536blocks");
    for x in m {
        assert!((x as f64) < 0.97 * LIBCACHESIM_LECAR_65536 as f64, "{x}");
    }
}

#[test]
fn learned_family_keeps_its_invariants_on_a_real_trace() {
    let specs = ["lecar", "lecar(variant=libcachesim)", "lecar(learn=false,lru-weight=1)", "cart", "car"];
    let small = misses(&specs, "1024blocks");
    let large = misses(&specs, "65536blocks");
    for (i, s) in specs.iter().enumerate() {
        assert!(large[i] <= small[i], "{s}: {} misses at 65536 blocks, {} at 1024", large[i], small[i]);
    }
}

#[test]
fn lecar_with_a_fixed_lru_weight_of_one_is_lru() {
    // With w_LRU = 1 and no learning every disagreement goes to LRU: LeCaR is LRU.
    let m = misses(&["lecar(learn=false,lru-weight=1)", "lru"], "16384blocks");
    assert_eq!(m[0], m[1]);
}
