//! LHD, least hit density: Beckmann, Chen & Cidon, NSDI 2018, §4 (hit density by age and class, estimated from hit and eviction counts) and §5 (sampling, reconfiguration, coarsened ages).
//! Deviation: none; constants, the start-up policy and explorers follow the authors' simulator (as libCacheSim carries it); one size (1 block).
//!
//! A block's class is the log of the sum of its last two hit ages (16 classes). Per class and
//! coarsened age the policy counts hits and evictions, decayed by 0.9 at each reconfiguration
//! (every 2^20 accesses); the hit density at age a is the hits expected beyond a over the
//! block-time expected beyond a. To evict, it samples 8 resident blocks (32 after 50
//! reconfigurations) plus the last 8 admitted blocks that looked like victims, and evicts the
//! least dense. Until the first reconfiguration densities are (class + 1) / (age + 1), as the
//! authors' code starts. Explorers (1 in 32 accesses, within 1% of the cache, during the first
//! 50 reconfigurations) get +1 density so the model sees long lifetimes.
//!
//! Prefetching (prefetching paper §4): a prefetched block enters as a new block without an
//! access (no time step, no explorer draw); its first demand is a first access (no hit counted);
//! evicted unused, it adds no eviction to the statistics.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::policy::{Capabilities, Range};
use crate::rng::Rng;
use crate::sample_set::SampleSet;
use crate::spec::SpecError;

const MAX_AGE: u64 = 20_000;
const HIT_AGE_CLASSES: usize = 16;
/// The authors' class index is app x 16 + hit-age class with every block in app 1.
const APP_OFFSET: usize = 16;
const ACCESSES_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
const ADMISSIONS: usize = 8;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
/// An empty slot of the ring of recent admissions (the sample set never holds this frame).
const NO_FRAME: Frame = Frame::MAX;

/// A resident block's state, kept beside its frame in the sample set: all a sample reads.
#[derive(Clone, Copy)]
struct Tag {
    timestamp: u64,
    /// The age (coarsened, below MAX_AGE) at the block's last hit; 0 before any.
    last_hit_age: u32,
    /// The hit-age class of the last two hit ages' sum, updated when they change (a block
    /// never hit sums 0 + MAX_AGE, class 0).
    class: u8,
    explorer: bool,
}

pub struct Lhd {
    associativity: u32,
    rng: Rng,
    /// The resident blocks with their tags.
    resident: SampleSet<Tag>,
    /// Per class, per coarsened age.
    hits: Vec<f32>,
    evictions: Vec<f32>,
    density: Vec<f32>,
    timestamp: u64,
    next_reconfiguration: u64,
    pub reconfigurations: u64,
    age_shift: u32,
    ewma_objects: f32,
    ewma_objects_mass: f32,
    /// Frames of recently admitted blocks that looked like victims (a ring of 8); an entry is
    /// cleared (`NO_FRAME`) when its block leaves. Plain frames, so clearing compares all 8 at once.
    recent: [Frame; ADMISSIONS],
    recent_head: usize,
    ewma_victim_density: f32,
    explorer_budget: i64,
    pub overflows: u64,
}

impl Lhd {
    pub fn new(capacity: usize, associativity: u32, seed: u64) -> Self {
        let cells = HIT_AGE_CLASSES * MAX_AGE as usize;
        let mut density = vec![0.0f32; cells];
        for c in 0..HIT_AGE_CLASSES {
            for a in 0..MAX_AGE as usize {
                density[c * MAX_AGE as usize + a] = (APP_OFFSET + c + 1) as f32 / (a + 1) as f32;
            }
        }
        Lhd {
            associativity,
            rng: Rng::new(seed),
            resident: SampleSet::with_capacity(capacity),
            hits: vec![0.0; cells],
            evictions: vec![0.0; cells],
            density,
            timestamp: 0,
            next_reconfiguration: ACCESSES_PER_RECONFIGURATION,
            reconfigurations: 0,
            age_shift: 10,
            ewma_objects: 0.0,
            ewma_objects_mass: 0.0,
            recent: [NO_FRAME; ADMISSIONS],
            recent_head: 0,
            ewma_victim_density: 0.0,
            explorer_budget: (capacity as f64 * 0.01) as i64,
            overflows: 0,
        }
    }

    /// Roughly log2(MAX_AGE / age): recent hits give high classes. The authors' loop doubles
    /// the age until it reaches MAX_AGE, at most 15 times; in closed form that is the shift
    /// that gives the age MAX_AGE's bit length, plus one if it is still below MAX_AGE (an age of
    /// 0 gives 16), capped at 15.
    #[inline]
    fn hit_age_class(age: u64) -> u8 {
        let shift = age.leading_zeros().saturating_sub(MAX_AGE.leading_zeros());
        let log = shift + ((age << shift) < MAX_AGE) as u32;
        log.min(HIT_AGE_CLASSES as u32 - 1) as u8
    }

    #[inline]
    fn age(&mut self, t: &Tag) -> u64 {
        let age = (self.timestamp - t.timestamp) >> self.age_shift;
        if age >= MAX_AGE {
            self.overflows += 1;
            MAX_AGE - 1
        } else {
            age
        }
    }

    #[inline]
    fn cell(class: u8, age: u64) -> usize {
        class as usize * MAX_AGE as usize + age as usize
    }

    #[inline]
    fn hit_density(&mut self, t: &Tag) -> f32 {
        let age = self.age(t);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let d = self.density[Self::cell(t.class, age)];
        if t.explorer {
            d + 1.0
        } else {
            d
        }
    }

    /// One access to `frame` (a first access when `first`): stamp it, maybe make it an
    /// explorer, advance time, reconfigure every 2^20 accesses.
    fn update(&mut self, frame: Frame, first: bool) {
        let explore = self.rng.below(EXPLORE_INVERSE_PROBABILITY) == 0;
        let t = self.resident.data_mut(frame);
        t.timestamp = self.timestamp;
        t.explorer = explore && self.explorer_budget > 0 && self.reconfigurations < 50;
        let t = *t;
        if t.explorer {
            self.explorer_budget -= 1;
        }
        if first && !explore && self.hit_density(&t) < self.ewma_victim_density {
            self.recent[self.recent_head % ADMISSIONS] = frame;
            self.recent_head += 1;
        }
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCESSES_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
    }

    fn reconfigure(&mut self) {
        for x in self.hits.iter_mut().chain(self.evictions.iter_mut()) {
            *x *= EWMA_DECAY;
        }
        self.adapt_age_coarsening();
        // §4: density(a) = hits beyond a / block-time beyond a, summed from the oldest age down.
        let m = MAX_AGE as usize;
        for c in 0..HIT_AGE_CLASSES {
            let base = c * m;
            let mut events = self.hits[base + m - 1] + self.evictions[base + m - 1];
            let mut hits = self.hits[base + m - 1];
            let mut lifetime = events;
            for a in (0..m - 1).rev() {
                hits += self.hits[base + a];
                events += self.hits[base + a] + self.evictions[base + a];
                lifetime += events;
                self.density[base + a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
        self.overflows = 0;
    }

    /// §5: ages are coarsened so the resident blocks' lifetimes fit MAX_AGE; set at the 5th and
    /// 25th reconfigurations, stretching or compressing the counts to the new scale.
    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.resident.len() as f32;
        self.ewma_objects_mass = self.ewma_objects_mass * EWMA_DECAY + 1.0;
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let objects = self.ewma_objects / self.ewma_objects_mass;
        let optimal = objects / (AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32);
        let mut log2 = 1u32;
        while ((1u64 << log2) as f32) < optimal {
            log2 += 1;
        }
        let delta = log2 as i64 - self.age_shift as i64;
        self.age_shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_objects_mass *= 8.0;
        let m = MAX_AGE as usize;
        for arr in [&mut self.hits, &mut self.evictions] {
            for c in 0..HIT_AGE_CLASSES {
                let v = &mut arr[c * m..(c + 1) * m];
                if delta < 0 {
                    let s = (-delta) as usize;
                    for a in (m >> s)..m - 1 {
                        v[m - 1] += v[a];
                    }
                    for a in (0..m - 1).rev() {
                        v[a] = v[a >> s] / (1u64 << s) as f32;
                    }
                } else if delta > 0 {
                    let s = delta as usize;
                    for a in 0..m >> s {
                        v[a] = (0..1usize << s).map(|i| v[(a << s) + i]).sum();
                    }
                    for x in &mut v[(m >> s)..m - 1] {
                        *x = 0.0;
                    }
                }
            }
        }
    }
}

impl Policy for Lhd {
    fn insert(&mut self, frame: Frame, _a: &Access, origin: Origin) {
        let class = Self::hit_age_class(MAX_AGE);
        self.resident.insert(frame, Tag { timestamp: self.timestamp, last_hit_age: 0, class, explorer: false });
        if origin == Origin::Demand {
            self.update(frame, true);
        }
    }
    fn hit(&mut self, frame: Frame, _a: &Access) {
        let t = *self.resident.data(frame);
        let age = self.age(&t);
        self.hits[Self::cell(t.class, age)] += 1.0;
        if t.explorer {
            self.explorer_budget += 1;
        }
        let t = self.resident.data_mut(frame);
        t.class = Self::hit_age_class(age + t.last_hit_age as u64);
        // `age` is below MAX_AGE.
        t.last_hit_age = age as u32;
        self.update(frame, false);
    }
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        self.update(frame, true);
    }
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let n = self.resident.len() as u64;
        if n == 0 {
            return None;
        }
        let candidates = if self.reconfigurations > 50 { self.associativity } else { 8 };
        // Every candidate's density is taken (it counts age overflows), but a pinned candidate
        // is skipped, so the pin is looked at only for one that would become the best.
        let mut best: Option<(Frame, f32)> = None;
        // The generator in a local: `hit_density` writes `self`, which would otherwise make
        // every draw store the generator's state back.
        let mut rng = self.rng.clone();
        for _ in 0..candidates {
            let s = self.resident.samples()[rng.below(n) as usize];
            let d = self.hit_density(&s.data);
            if best.is_none_or(|(_, bd)| d < bd) && !pins.pinned(s.frame) {
                best = Some((s.frame, d));
            }
        }
        self.rng = rng;
        for i in 0..ADMISSIONS {
            let f = self.recent[i];
            if f == NO_FRAME {
                continue;
            }
            let t = *self.resident.data(f);
            let d = self.hit_density(&t);
            if best.is_none_or(|(_, bd)| d < bd) && !pins.pinned(f) {
                best = Some((f, d));
            }
        }
        let best = best.or_else(|| {
            let s = *self.resident.samples().iter().find(|s| !pins.pinned(s.frame))?;
            Some((s.frame, self.hit_density(&s.data)))
        })?;
        self.ewma_victim_density = EWMA_DECAY * self.ewma_victim_density + (1.0 - EWMA_DECAY) * best.1;
        Some(best.0)
    }
    fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
        let t = self.resident.remove(frame);
        if why == Removal::Evicted {
            let age = self.age(&t);
            self.evictions[Self::cell(t.class, age)] += 1.0;
        }
        if t.explorer {
            self.explorer_budget += 1;
        }
        // Written unconditionally, so the eight compare as one vector.
        for r in self.recent.iter_mut() {
            *r = if *r == frame { NO_FRAME } else { *r };
        }
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.resident.check("LHD", resident)
    }
    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("lhd_reconfigurations", self.reconfigurations as f64));
    }
}

impl PolicyDef for Lhd {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lhd",
        aliases: &["least-hit-density"],
        paper: "Beckmann, Chen & Cidon, LHD: Improving Cache Hit Rate by Maximizing Hit Density, NSDI 2018, §4-5",
        summary: "evicts the sampled block with the least expected hits per unit of cache time, by age and class",
        params: &[
            ParamInfo {
                name: "associativity",
                default: "32",
                doc: "blocks sampled per eviction after 50 reconfigurations (8 before, as the authors' code)",
                range: Range::Whole(1, 1024),
            },
            ParamInfo {
                name: "seed",
                default: "run",
                doc: "seed of the sampling and explorers: `run` (the run's --seed) or a number",
                range: Range::Seed,
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let k = args.u64("associativity")?;
        if k == 0 || k > 1024 {
            return Err(SpecError("policy `lhd`: associativity must be from 1 to 1024".into()));
        }
        Ok(Lhd::new(env.capacity, k as u32, args.seed(env.seed)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn hit_age_classes_follow_the_log_of_the_age() {
        assert_eq!(Lhd::hit_age_class(0), 15);
        assert_eq!(Lhd::hit_age_class(20_000), 0);
        assert_eq!(Lhd::hit_age_class(10_000), 1);
        assert_eq!(Lhd::hit_age_class(1), 15);
        // A block never hit: 0 + MAX_AGE, the lowest class.
        assert_eq!(Lhd::hit_age_class(MAX_AGE), 0);
    }

    /// The authors' loop, which the closed form replaces.
    fn hit_age_class_by_doubling(mut age: u64) -> u8 {
        if age == 0 {
            return HIT_AGE_CLASSES as u8 - 1;
        }
        let mut log = 0;
        while age < MAX_AGE && log < HIT_AGE_CLASSES as u8 - 1 {
            age <<= 1;
            log += 1;
        }
        log
    }

    #[test]
    fn the_closed_form_hit_age_class_is_the_doubling_loop() {
        // Sums of two hit ages are at most 2 MAX_AGE; larger values for the edges of the shift.
        let large = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1]).chain([u64::MAX]);
        for age in (0..=2 * MAX_AGE).chain(large) {
            assert_eq!(Lhd::hit_age_class(age), hit_age_class_by_doubling(age), "age {age}");
        }
    }

    #[test]
    fn densities_model_hits_over_lifetime() {
        // One class, ages 0..: 2 hits at age 1, 2 evictions at age 3. From age 0: hits 2,
        // block-time = sum over ages >= 0 of the events at or beyond them = 4 + 4 + 2 + 2 = 12,
        // so 2/12; from age 2: no hits beyond it, density 0.
        let mut p = Lhd::new(4, 32, 1);
        p.hits[Lhd::cell(3, 1)] = 2.0 / EWMA_DECAY;
        p.evictions[Lhd::cell(3, 3)] = 2.0 / EWMA_DECAY;
        p.reconfigure();
        let d = |a| p.density[Lhd::cell(3, a)];
        assert!((d(0) - 2.0 / 12.0).abs() < 1e-6, "{}", d(0));
        assert!((d(1) - 2.0 / 8.0).abs() < 1e-6, "{}", d(1));
        assert_eq!(d(2), 0.0);
    }

    #[test]
    fn runs_with_invariants_and_repeats_with_a_seed() {
        let keys: Vec<u64> = (0..4000u64).map(|i| if i % 3 == 0 { i } else { (i * 7919) % 60 }).collect();
        let run = |seed| {
            let mut s = Steps::new(Lhd::new(32, 32, seed), 32);
            s.run(&keys)
        };
        let a = run(5);
        assert_eq!(a, run(5));
        assert!(a.contains('H'));
    }
}
