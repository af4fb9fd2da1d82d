//! RANDOM: give up a uniformly chosen resident block, from the run's seeded generator,
//! so the same seed gives the same victims.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::policy::{Capabilities, Range};
use crate::rng::Rng;
use crate::sample_set::SampleSet;
use crate::spec::SpecError;

pub struct Random {
    rng: Rng,
    /// The resident frames, for drawing samples.
    resident: SampleSet,
}

impl Policy for Random {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.resident.insert(frame, ());
    }
    #[inline]
    fn hit(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let n = self.resident.len();
        if n == 0 {
            return None;
        }
        let start = self.rng.below(n as u64) as usize;
        // A pinned pick moves on to the next resident frame, so the draw count stays one per
        // eviction and results do not depend on how many frames are pinned elsewhere.
        (0..n).map(|i| self.resident.samples()[(start + i) % n].frame).find(|&f| !pins.pinned(f))
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.resident.remove(frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.resident.check("RANDOM", resident)
    }
}

impl PolicyDef for Random {
    const INFO: PolicyInfo = PolicyInfo {
        name: "random",
        aliases: &["rand"],
        paper: "uniform random replacement; baseline",
        summary: "evicts a uniformly random resident block (seeded)",
        params: &[ParamInfo {
            name: "seed",
            default: "run",
            doc: "seed of the victim draws; `run` uses the run's --seed",
            range: Range::Seed,
        }],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let seed = args.seed(env.seed)?;
        Ok(Random { rng: Rng::new(seed), resident: SampleSet::with_capacity(env.capacity) })
    }
}
