//! RANDOM: give up a uniformly chosen resident block, from the run's seeded generator,
//! so the same seed gives the same victims.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::rng::Rng;
use crate::spec::SpecError;

pub struct Random {
    rng: Rng,
    /// Resident frames, densely packed so a uniform draw is one index.
    dense: Vec<Frame>,
    /// Position of each frame in `dense` (u32::MAX when absent).
    pos: Vec<u32>,
}

impl Policy for Random {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.pos[frame as usize] = self.dense.len() as u32;
        self.dense.push(frame);
    }
    #[inline]
    fn hit(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let n = self.dense.len();
        if n == 0 {
            return None;
        }
        let start = self.rng.below(n as u64) as usize;
        // A pinned pick moves on to the next resident frame, so the draw count stays one per
        // eviction and results do not depend on how many frames are pinned elsewhere.
        (0..n).map(|i| self.dense[(start + i) % n]).find(|&f| !pins.pinned(f))
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        let p = self.pos[frame as usize] as usize;
        let last = *self.dense.last().expect("remove from an empty RANDOM policy");
        self.dense.swap_remove(p);
        if last != frame {
            self.pos[last as usize] = p as u32;
        }
        self.pos[frame as usize] = u32::MAX;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        if self.dense.len() != resident {
            return Err(format!("RANDOM holds {} frames, cache {resident}", self.dense.len()));
        }
        for (i, &f) in self.dense.iter().enumerate() {
            if self.pos[f as usize] as usize != i {
                return Err(format!("frame {f} misindexed"));
            }
        }
        Ok(())
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
        }],
        preset_of: None,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let seed = args.seed(env)?;
        Ok(Random { rng: Rng::new(seed), dense: Vec::with_capacity(env.capacity), pos: vec![u32::MAX; env.capacity] })
    }
}
