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
            let f = csv_fields(l);
            rows.push((f[0].to_string(), f[3].parse().unwrap(), f[4].parse().unwrap(), f[5].parse().unwrap()));
        }
    }
    rows
}

/// The fields of one CSV line; a field in double quotes may hold commas (policy specs such as
/// `mq(queues=4,lifetime=5000)`).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn miss_counts_equal_libcachesim() {
    let rows = golden();
    assert!(rows.len() >= 15, "golden file lost rows");
    let configs: Vec<RunConfig> = rows.iter().map(|(p, c, _, _)| RunConfig::new(p, &format!("{c}blocks"))).collect();
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

/// The demand block keys of the CloudPhysics trace, 4 KiB blocks, as the engine expands them.
fn cloudphysics_blocks() -> Vec<(u32, u64)> {
    let mut reader = bufsim_core::trace::TraceReader::open(&cloudphysics(), None).unwrap();
    let mut blocks = Vec::new();
    while let Some(r) = reader.next_request().unwrap() {
        let (first, n) = r.block_range(4096);
        blocks.extend((first..first + n).map(|b| (r.file, b)));
    }
    blocks
}

/// Rows of tests/golden/libcachesim_differences_cloudphysics.csv: (policy, lcs params,
/// cache blocks, libCacheSim misses, bufsim misses).
fn differences() -> Vec<(String, String, u64, u64, u64)> {
    let text = std::fs::read_to_string(root().join("tests/golden/libcachesim_differences_cloudphysics.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f = csv_fields(l);
            (f[0].clone(), f[2].clone(), f[3].parse().unwrap(), f[5].parse().unwrap(), f[6].parse().unwrap())
        })
        .collect()
}

/// CLOCK-Pro differs from libCacheSim's ClockPro at every size, and the cause is libCacheSim's:
/// its `ClockPro_can_insert` refuses a block once the resident cold pages reach
/// init_ratio_cold x cache, and it evicts only when the cache is full, which then never happens.
/// A cache that admits the first init_ratio_cold x c distinct blocks and never changes gives
/// libCacheSim's miss counts exactly (docs/policies/clock-pro.md). Ours are pinned beside them.
#[test]
fn clock_pro_differs_from_libcachesim_by_its_admission_freeze() {
    let rows: Vec<_> = differences().into_iter().filter(|r| r.0 == "clock-pro").collect();
    assert!(rows.len() >= 5, "golden file lost rows");
    let blocks = cloudphysics_blocks();
    for (_, params, c, lcs, _) in &rows {
        let ratio: f64 = params.strip_prefix("init_ratio_cold=").unwrap().parse().unwrap();
        let admitted = (ratio * *c as f64) as usize;
        let mut kept = std::collections::HashSet::new();
        let mut misses = 0u64;
        for b in &blocks {
            if !kept.contains(b) {
                misses += 1;
                if kept.len() < admitted {
                    kept.insert(*b);
                }
            }
        }
        assert_eq!(misses, *lcs, "frozen-cache model vs libCacheSim's ClockPro at {c}");
    }
    let configs: Vec<RunConfig> = rows.iter().map(|r| RunConfig::new("clock-pro", &format!("{}blocks", r.2))).collect();
    let opts = RunOptions { check: true, ..RunOptions::default() };
    let results = run_trace(&cloudphysics(), &configs, &opts).unwrap();
    for (r, res) in rows.iter().zip(&results) {
        assert_eq!(res.stats.misses, r.4, "bufsim clock-pro at {}", r.2);
    }
}
