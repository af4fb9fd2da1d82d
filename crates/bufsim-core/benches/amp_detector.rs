//! Cost per access of AMP's access-pattern detectors (AMP §3.1: exact R̄, block sampling,
//! adaptive sampling), PCC's and DEAR's, and of the whole AMP policy against plain LRU.
//! Run: cargo bench -p bufsim-core --bench amp_detector

use std::hint::black_box;

use bufsim_config::Rng;
use bufsim_core::cache::Cache;
use bufsim_core::policy::amp::{DearDetector, Detector, PccDetector, RecencyConfig, RecencyDetector, Sampling};
use bufsim_core::policy::{build, Access, BuildEnv};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 1 << 20;

/// Four contexts: a loop over 100,000 blocks, a scan, uniform random over 1,000,000 blocks,
/// and temporally clustered accesses.
fn accesses() -> Vec<(u64, u64)> {
    let mut rng = Rng::new(1);
    (0..N as u64)
        .map(|i| match i % 4 {
            0 => (1, (i / 4) % 100_000),
            1 => (2, 1 << 32 | i),
            2 => (3, 2 << 32 | rng.below(1_000_000)),
            _ => (4, 3 << 32 | ((i / 40) + rng.below(8))),
        })
        .collect()
}

fn detector_bench<D: Detector>(c: &mut Criterion, name: &str, make: impl Fn() -> D, acc: &[(u64, u64)]) {
    let mut g = c.benchmark_group("detector");
    g.throughput(Throughput::Elements(acc.len() as u64));
    g.sample_size(10);
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut d = make();
            for (t, &(ctx, key)) in acc.iter().enumerate() {
                black_box(d.access(ctx, key, t as u64));
                if t % 100_000 == 99_999 {
                    d.detect(t as u64);
                }
            }
            d
        })
    });
    g.finish();
}

fn detectors(c: &mut Criterion) {
    let acc = accesses();
    let exact = RecencyConfig::default();
    detector_bench(c, "amp-exact", || RecencyDetector::new(exact), &acc);
    let quarter = RecencyConfig { sampling: Sampling::fraction(0.25), ..exact };
    detector_bench(c, "amp-sampling-1/4", || RecencyDetector::new(quarter), &acc);
    let adaptive = RecencyConfig { sampling: Sampling { adaptive: true, limit: 4096, ..Sampling::ALL }, ..exact };
    detector_bench(c, "amp-adaptive-nl4096", || RecencyDetector::new(adaptive), &acc);
    detector_bench(c, "pcc", || PccDetector::new(100), &acc);
    detector_bench(c, "dear", || DearDetector::new(10, 1000), &acc);
}

fn policies(c: &mut Criterion) {
    let acc = accesses();
    let mut g = c.benchmark_group("policy");
    g.throughput(Throughput::Elements(acc.len() as u64));
    g.sample_size(10);
    for spec in ["lru", "amp(default=lru)", "amp(default=lru,sampling=1/4)", "pcc(default=lru)", "dear(default=lru)"] {
        g.bench_function(spec, |b| {
            b.iter(|| {
                let cap = 50_000;
                let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
                let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
                for (t, &(ctx, key)) in acc.iter().enumerate() {
                    black_box(cache.demand(&Access { key, ctx, time: t as u64, ..Access::default() }));
                }
                cache.len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, detectors, policies);
criterion_main!(benches);
