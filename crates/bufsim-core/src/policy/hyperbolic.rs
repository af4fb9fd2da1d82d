//! Hyperbolic caching: Blankstein, Sen & Freedman, USENIX ATC 2017, §3: priority n / (t − t0),
//! n the accesses since the block entered at t0, evict the least among k sampled blocks (k = 64).
//! Deviation: none; no cost or expiry terms (§4's extensions); time counts demand accesses.
//!
//! Samples are drawn with replacement from the resident blocks by the run's seeded generator, so
//! a seed gives the same victims; pinned samples are skipped. A prefetched block enters with
//! n = 0 (priority 0: no access history, prefetching paper §4); its first demand makes n = 1.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::policy::{Capabilities, Range};
use crate::rng::Rng;
use crate::sample_set::SampleSet;
use crate::spec::SpecError;

pub struct Hyperbolic {
    samples: u32,
    rng: Rng,
    /// The resident blocks with their counts and entry times, side by side so that a sample is
    /// one load.
    resident: SampleSet<Entered>,
}

/// What a block's priority is computed from.
#[derive(Clone, Copy)]
struct Entered {
    /// Accesses since the block entered (n).
    count: u32,
    /// When the block entered (t0), in demand accesses.
    time: u64,
}

impl Entered {
    /// The block's time in cache at `now` (an age of 0, a block entering now, counts as 1).
    #[inline]
    fn age(&self, now: u64) -> u64 {
        now.saturating_sub(self.time).max(1)
    }
}

/// Whether priority `count_a / age_a` is below `count_b / age_b`, compared exactly by
/// cross-multiplying. The products fit u128 (one widening multiply each); when both ages are
/// below 2^32 (`NARROW`, any run of fewer than 2^32 accesses) they fit u64, and a plain
/// multiply leaves more registers to the sampling loop.
#[inline(always)]
fn lower<const NARROW: bool>(count_a: u32, age_a: u64, count_b: u32, age_b: u64) -> bool {
    if NARROW {
        (count_a as u64) * age_b < (count_b as u64) * age_a
    } else {
        (count_a as u64 as u128) * (age_b as u128) < (count_b as u64 as u128) * (age_a as u128)
    }
}

impl Hyperbolic {
    pub fn new(capacity: usize, samples: u32, seed: u64) -> Self {
        Hyperbolic { samples, rng: Rng::new(seed), resident: SampleSet::with_capacity(capacity) }
    }

    /// The least of `samples` draws at `now` (ages at most `now`; `NARROW`: `now` < 2^32),
    /// skipping pinned blocks; `None` when every draw was pinned.
    #[inline(always)]
    fn least_sampled<const NARROW: bool>(&mut self, pins: &Pins, now: u64) -> Option<Frame> {
        let samples = self.resident.samples();
        let n = samples.len() as u64;
        // No best yet: count 1 over age 0 loses to every sample (real ages are at least 1).
        let (mut best, mut best_count, mut best_age) = (None, 1, 0);
        // A count down: `for _ in 0..k` compiled to six instructions of loop control here.
        let mut left = self.samples;
        while left > 0 {
            left -= 1;
            let s = samples[self.rng.below(n) as usize];
            let age = s.data.age(now);
            // The first of equal priorities is kept, as the paper's sampling loop does. A pinned
            // sample is skipped; one that would not become the best changes nothing, so the pin
            // is looked at only for a would-be best.
            if lower::<NARROW>(s.data.count, age, best_count, best_age) && !pins.pinned(s.frame) {
                (best, best_count, best_age) = (Some(s.frame), s.data.count, age);
            }
        }
        best
    }
}

impl Policy for Hyperbolic {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.resident.insert(frame, Entered { count: (origin == Origin::Demand) as u32, time: a.time });
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        let e = self.resident.data_mut(frame);
        e.count = e.count.saturating_add(1);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        let e = self.resident.data_mut(frame);
        e.count = e.count.saturating_add(1);
    }
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        if self.resident.is_empty() {
            return None;
        }
        let now = incoming.time;
        let best =
            if now >> 32 == 0 { self.least_sampled::<true>(pins, now) } else { self.least_sampled::<false>(pins, now) };
        // Every sample pinned (a read-ahead group fills a tiny cache): the least unpinned block.
        best.or_else(|| {
            self.resident
                .samples()
                .iter()
                .filter(|s| !pins.pinned(s.frame))
                .reduce(|b, s| {
                    if lower::<false>(s.data.count, s.data.age(now), b.data.count, b.data.age(now)) {
                        s
                    } else {
                        b
                    }
                })
                .map(|s| s.frame)
        })
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.resident.remove(frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.resident.check("Hyperbolic", resident)
    }
}

impl PolicyDef for Hyperbolic {
    const INFO: PolicyInfo = PolicyInfo {
        name: "hyperbolic",
        aliases: &[],
        paper: "Blankstein, Sen & Freedman, Hyperbolic Caching, USENIX ATC 2017, §3",
        summary: "priority = accesses / time in cache; evicts the lowest of k random samples",
        params: &[
            ParamInfo {
                name: "samples",
                default: "64",
                doc: "blocks sampled per eviction (the paper's 64)",
                range: Range::Whole(1, 1 << 20),
            },
            ParamInfo {
                name: "seed",
                default: "run",
                doc: "seed of the sampling: `run` (the run's --seed) or a number",
                range: Range::Seed,
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let samples = args.u64("samples")?;
        if samples == 0 || samples > 1 << 20 {
            return Err(SpecError("policy `hyperbolic`: samples must be from 1 to 1048576".into()));
        }
        Ok(Hyperbolic::new(env.capacity, samples as u32, args.seed(env.seed)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn lowest_hits_per_time_in_cache_goes() {
        // With as many samples as it takes to see every block, the choice is the exact minimum.
        let mut s = Steps::new(Hyperbolic::new(3, 256, 1), 3);
        // t=0: 1 enters; t=1: 2; t=2: 3; t=3,4: 1 hit twice (n1 = 3); t=5: 3 hit (n3 = 2)
        assert_eq!(s.run(&[1, 2, 3, 1, 1, 3]), "MMMHHH");
        // t=6: 4 misses. Priorities: 1: 3/6 = 0.5, 2: 1/5 = 0.2, 3: 2/4 = 0.5 -> 2 goes.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.run(&[1, 3, 4]), "HHH");
        // t=10: 5. 1: 4/10, 3: 3/8 = 0.375, 4: 2/4 = 0.5 -> 3 goes.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.run(&[1, 4]), "HH");
        assert_eq!(s.demand(3), 'M');
    }

    #[test]
    fn old_hits_lose_to_a_recent_first_access() {
        // Hyperbolic's point (§3): many accesses long ago weigh less than one just now.
        let mut s = Steps::new(Hyperbolic::new(2, 256, 7), 2);
        // t=0..4: 1 five times (n1 = 5); t=5: 2 enters. t=6: 3 misses: 1 has 5/6, 2 has 1/1.
        assert_eq!(s.run(&[1, 1, 1, 1, 1, 2, 3]), "MHHHHMM");
        // LFU would have kept 1; Hyperbolic gives it up.
        assert!(!s.cache.contains(1) && s.cache.contains(2) && s.cache.contains(3));
    }

    #[test]
    fn same_seed_same_victims() {
        // 90 blocks through 64 frames: which blocks survive depends on the draws.
        let keys: Vec<u64> = (0..3000u64).map(|i| (i * 7919) % 90).collect();
        let run = |seed| {
            let mut s = Steps::new(Hyperbolic::new(64, 2, seed), 64);
            s.run(&keys)
        };
        assert_eq!(run(3), run(3));
        let distinct: std::collections::HashSet<String> = (3..9).map(run).collect();
        assert!(distinct.len() > 1, "six seeds gave the same hits");
    }
}
