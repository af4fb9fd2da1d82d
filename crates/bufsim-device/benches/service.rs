//! Cost of computing one request's service time, and of one scheduler push + pop.
//! Run: cargo bench -p bufsim-device --bench service

use std::hint::black_box;

use bufsim_config::Rng;
use bufsim_device::{build_device, build_scheduler, IoRequest};
use criterion::{criterion_group, criterion_main, Criterion};

fn requests(capacity: u64, n: usize, sequential: bool) -> Vec<IoRequest> {
    let mut rng = Rng::new(3);
    (0..n as u64)
        .map(|i| IoRequest {
            id: i,
            device: 0,
            block: if sequential { i * 16 % capacity } else { rng.below(capacity) },
            blocks: if sequential { 16 } else { 1 },
            block_size: 4096,
            write: !sequential && i % 4 == 0,
            sync: true,
            issue_ns: 0,
        })
        .collect()
}

fn service(c: &mut Criterion) {
    for (spec, sequential) in
        [("st39102lw", false), ("st39102lw", true), ("ibm-9lzx(age=3)", false), ("avg", false), ("ssd", false)]
    {
        let mut dev = build_device(spec, 1).unwrap();
        let reqs = requests(dev.capacity_blocks(4096), 4096, sequential);
        let name = format!("service/{spec}/{}", if sequential { "seq-64KiB" } else { "random-4KiB" });
        let mut i = 0;
        let mut now = 0u64;
        c.bench_function(&name, |b| {
            b.iter(|| {
                let r = &reqs[i & 4095];
                i += 1;
                now += dev.service_ns(black_box(r), now);
                now
            })
        });
    }
}

fn schedulers(c: &mut Criterion) {
    for spec in ["noop", "sstf", "cscan", "deadline"] {
        let mut s = build_scheduler(spec).unwrap();
        let reqs = requests(2_000_000, 4096, false);
        // Keep 32 requests queued: each iteration adds one and dispatches one.
        for r in &reqs[..32] {
            s.push(*r, 0);
        }
        let mut i = 32;
        let mut now = 0u64;
        c.bench_function(&format!("scheduler/{spec}/push+pop at depth 32"), |b| {
            b.iter(|| {
                let mut r = reqs[i & 4095];
                r.id = i as u64;
                i += 1;
                now += 1_000_000;
                s.push(r, now);
                black_box(s.pop(now, r.block))
            })
        });
    }
}

criterion_group!(benches, service, schedulers);
criterion_main!(benches);
