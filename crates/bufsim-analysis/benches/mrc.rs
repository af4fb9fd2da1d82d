//! Miss ratio curve throughput (block accesses per second): the exact one-pass LRU curve and its
//! SHARDS estimates, on the bundled CloudPhysics trace and on a larger generated trace.
//! Run: cargo bench -p bufsim-analysis --bench mrc   (numbers in docs/performance.md)

use std::hint::black_box;
use std::path::PathBuf;

use bufsim_analysis::access::{keys, Source};
use bufsim_analysis::{LruMrc, Shards, ShardsMode};
use bufsim_core::engine::EngineConfig;
use bufsim_core::rng::Rng;
use bufsim_core::trace::Format;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn cloudphysics_keys() -> Vec<u64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/cloudphysics_vscsi.csv");
    let path = path.to_string_lossy();
    keys(
        &Source::File { path: &path, format: Format::CloudPhysics, meter: &Default::default() },
        &EngineConfig::default(),
    )
    .expect("bundled trace")
}

/// 20 million accesses over 4 million blocks: skewed re-references (a squared uniform favours
/// low ids) mixed with sequential runs, so distances span every scale.
fn generated_keys() -> Vec<u64> {
    let mut rng = Rng::new(7);
    let mut keys = Vec::with_capacity(20_000_000);
    let mut run = 0u64;
    while keys.len() < 20_000_000 {
        if rng.below(4) == 0 {
            let start = rng.below(4_000_000);
            for b in 0..16 {
                keys.push((start + b) % 4_000_000);
            }
            run += 1;
        } else {
            let u = rng.unit();
            keys.push((u * u * 4_000_000.0) as u64);
        }
    }
    black_box(run);
    keys
}

fn bench(c: &mut Criterion) {
    for (name, keys) in [("cloudphysics", cloudphysics_keys()), ("generated-20M", generated_keys())] {
        let mut g = c.benchmark_group(format!("mrc/{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(keys.len() as u64));
        g.bench_function("exact", |b| {
            b.iter(|| {
                let mut m = LruMrc::new();
                for &k in &keys {
                    m.access(k);
                }
                black_box(m.finish())
            })
        });
        for (label, mode) in [
            ("shards-rate-0.01", ShardsMode::FixedRate { rate: 0.01 }),
            ("shards-rate-0.1", ShardsMode::FixedRate { rate: 0.1 }),
            ("shards-size-8192", ShardsMode::FixedSize { blocks: 8192 }),
        ] {
            g.bench_function(label, |b| {
                b.iter(|| {
                    let mut s = Shards::new(mode, 42).unwrap();
                    for &k in &keys {
                        s.access(k);
                    }
                    black_box(s.finish().miss_ratio(1000))
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
