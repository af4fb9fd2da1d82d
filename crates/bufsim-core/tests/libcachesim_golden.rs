//! Exact agreement with libCacheSim (the test oracle) on the bundled CloudPhysics trace expanded
//! to 4 KiB blocks. The golden miss counts come from `scripts/libcachesim_oracle.py`, which feeds
//! libCacheSim the same block sequence with object size 1; `tests/test_oracle.py` re-derives
//! them live from libCacheSim.

use std::path::PathBuf;

use bufsim_core::run::{run_trace, RunConfig, RunOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn cloudphysics() -> String {
    root().join("../shared/traces/cloudphysics_vscsi.csv").to_string_lossy().into_owned()
}

/// (policy, cache_blocks, accesses, misses) rows of every golden file
/// `tests/golden/libcachesim_cloudphysics*.csv` (one file per group of policies).
fn golden() -> Vec<(String, u64, u64, u64)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/golden"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("libcachesim_cloudphysics") && n.ends_with(".csv")
        })
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for l in text.lines().skip(1) {
            // The policy spec may hold commas (quoted by the csv writer); the other fields do not.
            let mut f: Vec<&str> = l.rsplitn(6, ',').collect();
            f.reverse();
            let policy = f[0].trim_matches('"').to_string();
            rows.push((policy, f[3].parse().unwrap(), f[4].parse().unwrap(), f[5].parse().unwrap()));
        }
    }
    rows
}

#[test]
fn miss_counts_equal_libcachesim() {
    let rows = golden();
    assert!(rows.len() >= 15, "golden file lost rows");
    let configs: Vec<RunConfig> = rows
        .iter()
        .map(|(p, c, _, _)| RunConfig::new(p, &format!("{c}blocks")))
        .collect();
    let opts = RunOptions { check: true, ..RunOptions::default() };
    let results = run_trace(&cloudphysics(), &configs, &opts).unwrap();
    let mut mismatches = Vec::new();
    for ((p, c, accesses, misses), r) in rows.iter().zip(&results) {
        assert_eq!(r.stats.accesses, *accesses, "{p} at {c}: access count differs from libCacheSim's expansion");
        if r.stats.misses != *misses {
            mismatches.push(format!("{p}@{c}: bufsim {} libCacheSim {misses}", r.stats.misses));
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
