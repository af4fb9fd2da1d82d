//! Replays the CloudPhysics trace, expanded to 4 KiB blocks as `scripts/libcachesim_oracle.py`
//! does, through one policy; prints accesses, misses and the seconds the replay took. The replay itself is the function
//! `simulate`, so callgrind's `--toggle-collect` on it counts the instructions of the simulation
//! alone (not of reading the trace):
//!
//!     cargo build --release -p bufsim-core --example policy_replay
//!     valgrind --tool=callgrind --toggle-collect='policy_replay::simulate*' \
//!       target/release/examples/policy_replay ../shared/traces/cloudphysics_vscsi.csv lfu 65536

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::{build, Access, BuildEnv, Policy, PolicyVisitor};

fn blocks(path: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() < 5 || !f[0].bytes().all(|b| b.is_ascii_digit()) || f[0].is_empty() {
            continue;
        }
        let (size, lbn): (u64, u64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
        if size == 0 {
            continue;
        }
        let off = lbn * 512;
        out.extend(off / 4096..=(off + size - 1) / 4096);
    }
    out
}

struct Replay<'a> {
    keys: &'a [u64],
    capacity: usize,
}

impl PolicyVisitor for Replay<'_> {
    type Output = u64;
    fn visit<P: Policy + 'static>(self, policy: P) -> u64 {
        simulate(policy, self.capacity, self.keys)
    }
}

#[inline(never)]
fn simulate<P: Policy>(policy: P, capacity: usize, keys: &[u64]) -> u64 {
    let mut cache = Cache::new(policy, capacity);
    let mut misses = 0;
    for (t, &key) in keys.iter().enumerate() {
        let a = Access { key, block: key, time: t as u64, ..Access::default() };
        if matches!(cache.demand(&a), Demand::Miss | Demand::MissBypassed) {
            misses += 1;
        }
    }
    misses
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: policy_replay TRACE POLICY CACHE_BLOCKS");
        std::process::exit(2);
    }
    let keys = blocks(&args[1]);
    let capacity: usize = args[3].parse().expect("CACHE_BLOCKS is a whole number");
    let env = BuildEnv { capacity, block_size: 4096, seed: 1 };
    let policy = build(&args[2], &env).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    let misses = policy.visit(Replay { keys: &keys, capacity });
    let secs = t0.elapsed().as_secs_f64();
    println!("{} {capacity} accesses={} misses={misses} sim_seconds={secs:.4}", args[2], keys.len());
}
