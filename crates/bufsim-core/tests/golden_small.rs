//! Hand-computed sequences for the foundation policies. Each comment shows the queue after the
//! access (front = most recent, or the ring from the hand for CLOCK).

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::engine::FutureBuilder;
use bufsim_core::policy::{build, Access, AnyPolicy, BuildEnv};

fn env(capacity: usize) -> BuildEnv {
    BuildEnv { capacity, block_size: 4096, seed: 7 }
}

/// Runs `blocks` through `spec` with `capacity` frames: the hit/miss pattern and the resident
/// blocks at the end (sorted).
fn run(spec: &str, capacity: usize, blocks: &[u64]) -> (String, Vec<u64>) {
    let mut future = FutureBuilder::default();
    for &b in blocks {
        future.push(b);
    }
    let next = future.finish().next_use;
    let policy: AnyPolicy = build(spec, &env(capacity)).unwrap();
    let mut cache = Cache::new(policy, capacity);
    let mut pattern = String::new();
    for (t, &b) in blocks.iter().enumerate() {
        let a = Access { key: b, block: b, time: t as u64, next_use: next[t], ..Access::default() };
        pattern.push(match cache.demand(&a) {
            Demand::Hit | Demand::PrefetchHit => 'H',
            _ => 'M',
        });
        cache.check().unwrap();
    }
    let mut resident = cache.resident_keys();
    resident.sort();
    (pattern, resident)
}

#[test]
fn lru_evicts_least_recent() {
    // 1 2 3 -> [3,2,1]; 1 hit -> [1,3,2]; 4 evicts 2 -> [4,1,3]; 1 hit -> [1,4,3];
    // 5 evicts 3 -> [5,1,4]; 2 evicts 4 -> [2,5,1]
    assert_eq!(run("lru", 3, &[1, 2, 3, 1, 4, 1, 5, 2]), ("MMMHMHMM".into(), vec![1, 2, 5]));
}

#[test]
fn fifo_ignores_hits() {
    // 1 2 3 -> [3,2,1]; 1 hit, no move; 4 evicts 1 -> [4,3,2]; 1 evicts 2 -> [1,4,3];
    // 5 evicts 3 -> [5,1,4]; 2 evicts 4 -> [2,5,1]
    assert_eq!(run("fifo", 3, &[1, 2, 3, 1, 4, 1, 5, 2]), ("MMMHMMMM".into(), vec![1, 2, 5]));
}

#[test]
fn clock_gives_referenced_blocks_a_second_chance() {
    // hand-> 1 2 3 (bits 0); 1 hit sets bit; 4: 1 referenced -> cleared, passed; 2 evicted
    //   -> hand-> 3 1 4; 1 hit sets bit; 5: 3 evicted -> hand-> 1 4 5;
    // 2: 1 referenced -> cleared; 4 evicted -> hand-> 5 1 2
    assert_eq!(run("clock", 3, &[1, 2, 3, 1, 4, 1, 5, 2]), ("MMMHMHMM".into(), vec![1, 2, 5]));
    // Differs from LRU when the hand has cleared a bit LRU would still honour:
    // hand-> 1 2 (bits 0); 1 hit; 2 hit; 3: both referenced, both cleared, 1 evicted -> 2 3;
    // 1: 2 evicted -> 3 1; 2: 3 evicted -> 1 2
    assert_eq!(run("clock", 2, &[1, 2, 1, 2, 3, 1, 2]), ("MMHHMMM".into(), vec![1, 2]));
    // LRU on the same: 3 evicts 1 -> [3,2]; 1 evicts 2 -> [1,3]; 2 evicts 3 -> [2,1]
    assert_eq!(run("lru", 2, &[1, 2, 1, 2, 3, 1, 2]), ("MMHHMMM".into(), vec![1, 2]));
    // A new block enters with its bit clear: 1 2 3 (bits 0), 4 evicts 1 at once.
    assert_eq!(run("clock", 3, &[1, 2, 3, 4, 1]), ("MMMMM".into(), vec![1, 3, 4]));
}

#[test]
fn mru_keeps_the_head_of_a_loop() {
    // Loop of 4 over 3 frames. 1 2 3 -> [3,2,1]; 4 evicts 3 -> [4,2,1]; 1 hit [1,4,2];
    // 2 hit [2,1,4]; 3 evicts 2 -> [3,1,4]; 4 hit
    assert_eq!(run("mru", 3, &[1, 2, 3, 4, 1, 2, 3, 4]), ("MMMMHHMH".into(), vec![1, 3, 4]));
    // LRU misses every access of a loop larger than the cache.
    assert_eq!(run("lru", 3, &[1, 2, 3, 4, 1, 2, 3, 4]).0, "MMMMMMMM");
}

#[test]
fn opt_is_belady_on_the_textbook_string() {
    // 1 2 3 4 1 2 5 1 2 3 4 5 with 3 frames: 7 misses (Belady).
    // 4 evicts 3 (next at 9); 5 evicts 4 (next at 10); 3: 1 and 2 never used again, the
    // lower frame (block 1) goes; 4: 3 and 2 never used again, block 3 (lower frame) goes.
    let (p, r) = run("opt", 3, &[1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]);
    assert_eq!(p, "MMMMHHMHHMMH");
    assert_eq!(r, vec![2, 4, 5]);
    assert_eq!(p.matches('M').count(), 7);
    // LRU on the same string: 10 misses.
    assert_eq!(run("lru", 3, &[1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]).0.matches('M').count(), 10);
}

#[test]
fn lfu_evicts_fewest_accesses_oldest_first() {
    // 1 (c=1) 1 (c=2) 2 (c=1) 3: evicts 2 (c=1) -> {1:2, 3:1}; 2 evicts 3 -> {1:2, 2:1};
    // 3 evicts 2 -> {1:2, 3:1}; 3 hit (c=2); 1 hit (c=3)
    assert_eq!(run("lfu", 2, &[1, 1, 2, 3, 2, 3, 3, 1]), ("MHMMMMHH".into(), vec![1, 3]));
    // Among equal counts the least recently used goes: 1 2 (c=1 each) 3 evicts 1.
    assert_eq!(run("lfu", 2, &[1, 2, 3, 1]), ("MMMM".into(), vec![1, 3]));
}

#[test]
fn lfu_aging_forgets_old_popularity() {
    // Block 1 is hot early (5 accesses), then 2 and 3 alternate. Without aging 1 stays forever
    // and 2/3 evict each other; halving every 4 accesses lets the new pair take over.
    let mut seq = vec![1, 1, 1, 1, 1];
    for _ in 0..6 {
        seq.extend([2, 3]);
    }
    let plain = run("lfu", 2, &seq);
    assert!(plain.1.contains(&1));
    let aged = run("lfu(aging=halve,period=4)", 2, &seq);
    assert_eq!(aged.1, vec![2, 3]);
    assert!(aged.0.matches('H').count() > plain.0.matches('H').count());
    // Dynamic aging (LFU-DA) likewise lets recent blocks overtake a stale count.
    let da = run("lfu(aging=dynamic)", 2, &seq);
    assert_eq!(da.1, vec![2, 3]);
}

#[test]
fn random_is_seeded() {
    let seq: Vec<u64> = (0..2000).map(|i| (i * 7919 % 50) as u64).collect();
    let a = run("random(seed=1)", 10, &seq);
    assert_eq!(a, run("random(seed=1)", 10, &seq));
    assert_ne!(a, run("random(seed=2)", 10, &seq));
    // seed=run takes the run's seed (7 in env()).
    assert_eq!(run("random", 10, &seq), run("random(seed=7)", 10, &seq));
}
