//! The FIFO-family policies' variants and LFU's buckets on random traces: invariants after every
//! step with read-ahead insertions and pins mixed in, and LFU's bucketed victims against a plain
//! scan for the least (priority, last access) in every aging mode.

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::{build, Access, BuildEnv, Origin};

/// A small deterministic generator (the tests need variety, not quality).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const VARIANTS: &[&str] = &[
    "sieve",
    "s3-fifo(variant=libcachesim)",
    "s3-fifo(small=0.3,ghost=2,threshold=1)",
    "s3-fifo(small=0,ghost=0)",
    "slru(variant=libcachesim)",
    "slru(sizes=1:3)",
    "slru(segments=1)",
    "slru(sizes=3:1:2,variant=libcachesim)",
    "clock2q+(window=1,threshold=2)",
    "clock2q+(small=0.5,window=0)",
    "qd-lp",
    "lfu(aging=halve,period=5)",
    "lfu(aging=dynamic)",
];

#[test]
fn variants_keep_their_invariants_with_prefetches_and_pins() {
    let mut rng = Lcg(7);
    for spec in VARIANTS {
        for cap in 1..20usize {
            let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
            let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
            let mut pinned: Option<(u64, u32)> = None;
            let alphabet = 2 + rng.below(3 * cap as u64 + 4);
            for t in 0..600u64 {
                let b = rng.below(alphabet).min(rng.below(alphabet));
                let a = Access { key: b, block: b, time: t, ..Access::default() };
                match rng.below(8) {
                    0 => {
                        if !cache.contains(b) {
                            cache.insert(&a, Origin::Prefetch);
                        }
                    }
                    1 => {
                        if let Some((_, f)) = pinned.take() {
                            cache.unpin(f);
                        } else if let Some(f) = cache.frame_of(b) {
                            cache.pin(f);
                            pinned = Some((b, f));
                        }
                    }
                    _ => {
                        cache.demand(&a);
                    }
                }
                if let Some((pb, pf)) = pinned {
                    assert_eq!(cache.frame_of(pb), Some(pf), "{spec} cap {cap}: evicted a pinned block");
                }
                cache.check().unwrap_or_else(|e| panic!("{spec} cap {cap} step {t}: {e}"));
            }
        }
    }
}

/// LFU as a scan: the victim has the least (priority, last access); halving and dynamic aging
/// as docs/policies/lfu.md says.
fn lfu_by_scan(aging: &str, period: u64, cap: usize, keys: &[u64]) -> String {
    // (key, count, priority, last access)
    let mut blocks: Vec<(u64, u64, u64, u64)> = Vec::new();
    let (mut inflation, mut next_aging) = (0u64, period);
    let mut out = String::new();
    for (t, &k) in keys.iter().enumerate() {
        let t = t as u64;
        let resident = blocks.iter().any(|b| b.0 == k);
        if !resident && blocks.len() == cap {
            // A miss chooses its victim before the access counts (and before a halving due now).
            let (i, v) = blocks.iter().enumerate().min_by_key(|(_, b)| (b.2, b.3)).unwrap();
            if aging == "dynamic" {
                inflation = v.2;
            }
            blocks.swap_remove(i);
        }
        if aging == "halve" && t >= next_aging {
            next_aging = t - t % period + period;
            for b in &mut blocks {
                b.1 /= 2;
                b.2 /= 2;
            }
        }
        if let Some(b) = blocks.iter_mut().find(|b| b.0 == k) {
            b.1 += 1;
            b.2 = b.1 + if aging == "dynamic" { inflation } else { 0 };
            b.3 = t;
            out.push('H');
            continue;
        }
        out.push('M');
        let p = 1 + if aging == "dynamic" { inflation } else { 0 };
        blocks.push((k, 1, p, t));
    }
    out
}

#[test]
fn lfu_buckets_pick_the_same_victims_as_a_scan() {
    let mut rng = Lcg(11);
    for (spec, aging, period) in [
        ("lfu", "none", u64::MAX),
        ("lfu(aging=halve,period=7)", "halve", 7),
        ("lfu(aging=halve,period=50)", "halve", 50),
        ("lfu(aging=dynamic)", "dynamic", u64::MAX),
    ] {
        for cap in 1..16usize {
            let alphabet = 2 + rng.below(4 * cap as u64);
            let keys: Vec<u64> = (0..500).map(|_| rng.below(alphabet).min(rng.below(alphabet))).collect();
            let env = BuildEnv { capacity: cap, block_size: 4096, seed: 1 };
            let mut cache = Cache::new(build(spec, &env).unwrap(), cap);
            let ours: String = keys
                .iter()
                .enumerate()
                .map(|(t, &k)| {
                    let a = Access { key: k, block: k, time: t as u64, ..Access::default() };
                    let d = cache.demand(&a);
                    cache.check().unwrap_or_else(|e| panic!("{spec} cap {cap} step {t}: {e}"));
                    if matches!(d, Demand::Hit | Demand::PrefetchHit) {
                        'H'
                    } else {
                        'M'
                    }
                })
                .collect();
            assert_eq!(ours, lfu_by_scan(aging, period, cap, &keys), "{spec} cap {cap}");
        }
    }
}
