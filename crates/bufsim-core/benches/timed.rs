//! Timed mode on the bundled CloudPhysics trace (113,872 requests, 1,141,869 block accesses)
//! with the Cheetah 9LP (`st39102lw`), the noop scheduler and LRU, beside count mode on the same
//! decoded trace. Throughput is block accesses per second; timed mode is meant to reach at least 2
//! million. Run: cargo bench -p bufsim-core --bench timed

use std::time::Duration;

use bufsim_core::run::{LoadedTrace, RunConfig, RunOptions};
use bufsim_core::timed::{Think, TimingOptions};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn trace_path() -> String {
    let shared = std::env::var("BUFSIM_SHARED")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared").to_string());
    format!("{shared}/traces/cloudphysics_vscsi.csv")
}

fn timed(c: &mut Criterion) {
    let trace = LoadedTrace::load(&trace_path(), None).expect("the bundled CloudPhysics trace (set BUFSIM_SHARED)");
    let count = RunOptions { jobs: 1, ..RunOptions::default() };
    let accesses = trace.run(&[RunConfig::new("lru", "64MiB")], &count).unwrap()[0].stats.accesses;
    let mut g = c.benchmark_group("cloudphysics");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).throughput(Throughput::Elements(accesses));
    for (name, prefetch, think) in [
        ("timed", "none", Think::Trace),
        ("timed-linux", "linux", Think::Trace),
        ("timed-think0", "none", Think::Fixed(0)),
    ] {
        let opts = RunOptions {
            timing: Some(TimingOptions { device: "st39102lw".into(), think, ..TimingOptions::default() }),
            ..count.clone()
        };
        for cache in ["4MiB", "64MiB", "1GiB"] {
            let cfg = [RunConfig::new("lru", cache).with_prefetch(prefetch)];
            g.bench_function(format!("{name}/lru/{cache}"), |b| b.iter(|| trace.run(&cfg, &opts).unwrap()));
        }
    }
    for cache in ["4MiB", "64MiB", "1GiB"] {
        let cfg = [RunConfig::new("lru", cache)];
        g.bench_function(format!("count/lru/{cache}"), |b| b.iter(|| trace.run(&cfg, &count).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, timed);
criterion_main!(benches);
