//! Hyperbolic caching: Blankstein, Sen & Freedman, USENIX ATC 2017, §3: priority n / (t − t0),
//! n the accesses since the block entered at t0, evict the least among k sampled blocks (k = 64).
//! Deviation: none; no cost or expiry terms (§4's extensions); time counts demand accesses.
//!
//! Samples are drawn with replacement from the resident blocks by the run's seeded generator, so
//! a seed gives the same victims; pinned samples are skipped. A prefetched block enters with
//! n = 0 (priority 0: no access history, prefetching paper §4); its first demand makes n = 1.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::policy::{Capabilities, Range};
use crate::rng::Rng;
use crate::sample_set::SampleSet;
use crate::spec::SpecError;

pub struct Hyperbolic {
    samples: u32,
    rng: Rng,
    /// Accesses since the block entered (n).
    count: FrameVec<u32>,
    /// When the block entered (t0), in demand accesses.
    entered: FrameVec<u64>,
    /// The resident frames, for drawing samples.
    resident: SampleSet,
}

impl Hyperbolic {
    pub fn new(capacity: usize, samples: u32, seed: u64) -> Self {
        Hyperbolic {
            samples,
            rng: Rng::new(seed),
            count: FrameVec::filled(0, capacity),
            entered: FrameVec::filled(0, capacity),
            resident: SampleSet::with_capacity(capacity),
        }
    }

    /// Whether `a`'s priority is below `b`'s at time `now`: n_a / age_a < n_b / age_b, compared
    /// exactly by cross-multiplying (ages of 0, blocks entering now, count as 1).
    #[inline]
    fn lower(&self, a: Frame, b: Frame, now: u64) -> bool {
        let age = |f: Frame| now.saturating_sub(self.entered[f as usize]).max(1) as u128;
        (self.count[a as usize] as u128) * age(b) < (self.count[b as usize] as u128) * age(a)
    }
}

impl Policy for Hyperbolic {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.count[frame as usize] = (origin == Origin::Demand) as u32;
        self.entered[frame as usize] = a.time;
        self.resident.insert(frame);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.count[frame as usize] = self.count[frame as usize].saturating_add(1);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        self.count[frame as usize] = self.count[frame as usize].saturating_add(1);
    }
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let n = self.resident.len() as u64;
        if n == 0 {
            return None;
        }
        let now = incoming.time;
        let mut best: Option<Frame> = None;
        for _ in 0..self.samples {
            let f = self.resident.frames()[self.rng.below(n) as usize];
            if pins.pinned(f) {
                continue;
            }
            // The first of equal priorities is kept, as the paper's sampling loop does.
            if best.is_none_or(|b| self.lower(f, b, now)) {
                best = Some(f);
            }
        }
        // Every sample pinned (a read-ahead group fills a tiny cache): the least unpinned block.
        best.or_else(|| {
            self.resident.frames().iter().copied().filter(|&f| !pins.pinned(f)).reduce(|b, f| {
                if self.lower(f, b, now) {
                    f
                } else {
                    b
                }
            })
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
