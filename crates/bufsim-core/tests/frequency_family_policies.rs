//! The frequency family (LFU-DA, GDSF, W-TinyLFU, Hyperbolic, LHD) on the CloudPhysics trace
//! expanded to 4 KiB blocks. Exact libCacheSim counts live in
//! tests/golden/libcachesim_cloudphysics_frequency_family.csv (checked by libcachesim_golden.rs);
//! policies whose random draws differ from libCacheSim's are held within 1% of the counts in
//! tests/golden/libcachesim_near_cloudphysics_frequency_family.csv, here (W-TinyLFU's rows there
//! are now matched exactly).

use std::path::PathBuf;

use bufsim_core::run::{run_trace, RunConfig, RunOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cloudphysics() -> String {
    root().join("../shared/traces/cloudphysics_vscsi.csv").to_string_lossy().into_owned()
}

const SIZES: [u64; 5] = [1024, 4096, 16384, 65536, 262144];

fn misses(specs: &[&str], sizes: &[u64]) -> Vec<u64> {
    let configs: Vec<RunConfig> =
        specs.iter().flat_map(|p| sizes.iter().map(move |c| RunConfig::new(p, &format!("{c}blocks")))).collect();
    let opts = RunOptions { check: true, ..RunOptions::default() };
    run_trace(&cloudphysics(), &configs, &opts).unwrap().iter().map(|r| r.stats.misses).collect()
}

/// (policy, cache blocks, libCacheSim misses) of the near-golden file.
fn near(policy: &str) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(root().join("tests/golden/libcachesim_near_cloudphysics_frequency_family.csv"))
        .unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == policy)
        .map(|f| (f[3].parse().unwrap(), f[5].parse().unwrap()))
        .collect()
}

/// The paper's GDSF with unit costs is LFU-DA: `gdsf`, `lfu-da` and `lfu(aging=dynamic)` agree
/// at every size, and with an independent Python model of the paper's rule (evict the least
/// K = F + L, L = the victim's K, ties to the block touched longest ago) at the two smallest.
#[test]
fn gdsf_with_unit_costs_is_lfu_da() {
    let got = misses(&["gdsf", "lfu-da", "lfu(aging=dynamic)"], &SIZES);
    let (g, rest) = got.split_at(5);
    assert_eq!(g, &rest[..5]);
    assert_eq!(g, &rest[5..]);
    assert_eq!(&g[..2], &[1027719, 1021598]);
}

/// Our misses beside libCacheSim's, and the largest relative difference.
fn within(policy: &str, spec: &str, tolerance: f64) {
    let rows = near(policy);
    assert_eq!(rows.len(), 5, "golden file lost rows for {policy}");
    let sizes: Vec<u64> = rows.iter().map(|r| r.0).collect();
    let ours = misses(&[spec], &sizes);
    let mut report = Vec::new();
    let mut worst = 0.0f64;
    for ((c, lcs), m) in rows.iter().zip(&ours) {
        let d = (*m as f64 - *lcs as f64) / *lcs as f64;
        worst = worst.max(d.abs());
        report.push(format!("{spec}@{c}: bufsim {m} libCacheSim {lcs} ({:+.3}%)", 100.0 * d));
    }
    println!("{}", report.join("\n"));
    assert!(worst <= tolerance, "{report:#?}");
}

/// W-TinyLFU under libCacheSim's rules (`variant=libcachesim`: its filter and XXH64 hash, its
/// window that fills the cache and empties only at evictions, its SLRU's segment sizes and its
/// eviction at a probation hit) equals libCacheSim's WTinyLFU at every size
/// (docs/policies/w-tinylfu.md). The counts sit in the near-golden file for history: until
/// these rules they were only within 1%.
#[test]
fn w_tinylfu_with_libcachesim_rules_equals_libcachesim() {
    within("w-tinylfu(variant=libcachesim)", "w-tinylfu(variant=libcachesim)", 0.0);
}

/// The paper's sketch (4-bit counters, halved every 10 x cache additions) forgets where
/// libCacheSim's filter keeps counting (32-bit counters, halved only after 32 x main-size
/// main-cache hits, which this trace never reaches at 64K blocks and up). That is the whole
/// gap at 65536 blocks: the paper's rules miss 5% more there, libCacheSim's rules close it.
#[test]
fn w_tinylfu_paper_sketch_forgets_what_libcachesim_keeps() {
    let rows = near("w-tinylfu(variant=libcachesim)");
    let sizes: Vec<u64> = rows.iter().map(|r| r.0).collect();
    let got = misses(&["w-tinylfu", "w-tinylfu(variant=libcachesim)", "w-tinylfu(sample=1000000)"], &sizes);
    for (i, (c, lcs)) in rows.iter().enumerate() {
        let (paper, lcs_rules, no_reset) = (got[i], got[5 + i], got[10 + i]);
        let d = (paper as f64 - *lcs as f64) / *lcs as f64;
        if *c == 65536 {
            assert!(d > 0.05, "paper rules at {c}: {paper} vs {lcs}");
            assert_eq!(lcs_rules, *lcs);
            // Without resets the 4-bit counters still saturate: the reset alone is not the cause.
            assert!(no_reset > lcs_rules, "{no_reset} {lcs_rules}");
        } else {
            assert!(d.abs() <= 0.01, "paper rules at {c}: {paper} vs {lcs} ({:+.3}%)", 100.0 * d);
        }
    }
}

/// Hyperbolic draws its samples from its own seeded generator and libCacheSim from its hash
/// table's random walk, so victims differ draw by draw; the rule is the same and the counts stay
/// within 1% (docs/policies/hyperbolic.md). Two seeds bracket the sampling noise.
#[test]
fn hyperbolic_is_within_one_percent_of_libcachesim() {
    within("hyperbolic", "hyperbolic", 0.01);
    within("hyperbolic", "hyperbolic(seed=2)", 0.01);
}

/// LHD samples with its own generator (libCacheSim with its own, and also draws explorers), so
/// victims differ draw by draw; the model (classes, ages, densities, reconfiguration) is the
/// authors' and the counts stay within 1% (docs/policies/lhd.md), for two seeds.
#[test]
fn lhd_is_within_one_percent_of_libcachesim() {
    within("lhd", "lhd", 0.01);
    within("lhd", "lhd(seed=2)", 0.01);
}

/// Prints misses of the specs in $SPECS (`;`-separated) at $SIZES (`,`-separated): a tool for
/// studying differences, run by hand with `-- --ignored --nocapture`.
#[test]
#[ignore]
fn print_misses() {
    let specs = std::env::var("SPECS").unwrap_or_default();
    let specs: Vec<&str> = specs.split(';').filter(|s| !s.is_empty()).collect();
    let sizes: Vec<u64> =
        std::env::var("SIZES").map(|s| s.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(SIZES.to_vec());
    let got = misses(&specs, &sizes);
    for (i, p) in specs.iter().enumerate() {
        println!("{p}: {:?}", &got[i * sizes.len()..(i + 1) * sizes.len()]);
    }
}
