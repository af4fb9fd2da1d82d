//! W-TinyLFU: Einziger, Friedman & Manes, ACM TOS 13(4) 2017, §4 (window LRU, SLRU main cache, TinyLFU admission) with the §3 sketch (§3.3 reset, §3.4.1 4-bit counters, §3.4.2 doorkeeper).
//! Deviation: none in the rules (our own sketch hashes); `variant=libcachesim` runs libCacheSim's WTinyLFU.c rules (as its Python binding 0.3.5 runs them: filter, hash, window, SLRU sizes, eviction at a hit) and equals its miss counts.
//!
//! `adaptive=true` sizes the window by hill climbing as Caffeine does (Einziger, Eytan,
//! Friedman & Manes, Middleware 2018, §3).
//!
//! Every demand access is recorded in the sketch (§4: TinyLFU sees all accesses, hits too). A
//! prefetched block enters the window unrecorded; its first demand is then recorded as a first
//! access and does not promote it. The cache calls `victim` before it inserts, so the window's
//! victim (the candidate) moves to probation, or is evicted, then: the frequency comparison of
//! §4 happens at that point, with the newcomer not yet in the window. libCacheSim compares at
//! the same point, which is why its rules fit here (docs/policies/w-tinylfu.md).

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::{Relative, SpecError};
use crate::zeroed::zeroed;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Segment {
    Window,
    Probation,
    Protected,
}

/// The TinyLFU frequency sketch (§3): 4 rows of 4-bit counters and a doorkeeper.
pub struct Sketch {
    /// 16 counters per word; `4 * width` counters in all.
    table: Vec<u64>,
    /// Counters per row, a power of two.
    width: u64,
    /// Doorkeeper bits (§3.4.2); empty when the doorkeeper is off.
    door: Vec<u64>,
    door_mask: u64,
    /// Additions since the last reset, and W.
    size: u64,
    sample: u64,
    pub resets: u64,
}

const ROW_SEEDS: [u64; 4] =
    [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63];

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Sketch {
    /// A sketch for a cache of `capacity` blocks, reset every `sample` additions; an error when
    /// the machine cannot hold its tables.
    pub fn new(capacity: usize, sample: u64, doorkeeper: bool) -> Result<Self, SpecError> {
        let width = (capacity.max(256) as u64).next_power_of_two();
        // About 8 bits per block the doorkeeper sees between resets, which is at most W, and no
        // more than 16 x the cache's worth (a huge W must not allocate a huge filter).
        let seen = sample.clamp(64, 16 * capacity.max(4) as u64);
        let door_bits = if doorkeeper { (seen * 8).next_power_of_two() } else { 0 };
        Ok(Sketch {
            table: zeroed((4 * width / 16) as usize, "policy `w-tinylfu`: the frequency sketch")?,
            width,
            door: zeroed((door_bits / 64) as usize, "policy `w-tinylfu`: the doorkeeper")?,
            door_mask: door_bits.wrapping_sub(1),
            size: 0,
            sample: sample.max(1),
            resets: 0,
        })
    }

    #[inline]
    fn counter_index(&self, row: usize, h: u64) -> u64 {
        let x = mix(h ^ ROW_SEEDS[row]);
        row as u64 * self.width + (x & (self.width - 1))
    }

    #[inline]
    fn counter(&self, i: u64) -> u64 {
        (self.table[(i / 16) as usize] >> ((i % 16) * 4)) & 0xF
    }

    #[inline]
    fn door_bits(&self, h: u64) -> [u64; 3] {
        let x = mix(h ^ 0xD6E8_FEB8_6659_FD93);
        let y = mix(h ^ 0xA076_1D64_78BD_642F);
        [x & self.door_mask, y & self.door_mask, x.wrapping_add(y.rotate_left(17)) & self.door_mask]
    }

    #[inline]
    fn in_door(&self, h: u64) -> bool {
        self.door_bits(h).iter().all(|&b| self.door[(b / 64) as usize] >> (b % 64) & 1 == 1)
    }

    /// The estimated frequency: the least of the 4 counters, plus one if the doorkeeper holds it.
    pub fn estimate(&self, key: u64) -> u64 {
        let h = mix(key);
        let cm = (0..4).map(|r| self.counter(self.counter_index(r, h))).min().unwrap_or(0);
        cm + (!self.door.is_empty() && self.in_door(h)) as u64
    }

    /// Records one access (§3.4.2: a first sighting only sets the doorkeeper's bits).
    pub fn add(&mut self, key: u64) {
        let h = mix(key);
        let mut counted = true;
        if !self.door.is_empty() && !self.in_door(h) {
            for b in self.door_bits(h) {
                self.door[(b / 64) as usize] |= 1 << (b % 64);
            }
            counted = false;
        }
        if counted {
            for r in 0..4 {
                let i = self.counter_index(r, h);
                if self.counter(i) < 15 {
                    self.table[(i / 16) as usize] += 1 << ((i % 16) * 4);
                }
            }
        }
        self.size += 1;
        if self.size >= self.sample {
            self.reset();
        }
    }

    /// §3.3: halve every counter and the sample count, and clear the doorkeeper.
    fn reset(&mut self) {
        for w in &mut self.table {
            *w = (*w >> 1) & 0x7777_7777_7777_7777;
        }
        self.door.iter_mut().for_each(|w| *w = 0);
        self.size /= 2;
        self.resets += 1;
    }
}

/// XXH64 (Y. Collet's xxHash, 64-bit variant, as its specification defines it) of the 8
/// little-endian bytes of `v`: the hash libCacheSim's counting Bloom filter takes of an object id.
/// Written from the published algorithm; its test checks it against the reference library.
pub fn xxh64_u64(v: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    // Inputs under 32 bytes: seed + P5 + length, then one 8-byte lane, then the avalanche.
    let mut acc = seed.wrapping_add(P5).wrapping_add(8);
    acc ^= v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    acc = acc.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    acc ^= acc >> 33;
    acc = acc.wrapping_mul(P2);
    acc ^= acc >> 29;
    acc = acc.wrapping_mul(P3);
    acc ^ (acc >> 32)
}

/// The two seeds libCacheSim's filter hashes with (its `HASH_SEED0` and `HASH_SEED1`).
const CBF_SEEDS: [u64; 2] = [0x1234_5678, 0x1234_4321];

/// libCacheSim's frequency filter for W-TinyLFU (`variant=libcachesim`): a counting Bloom
/// filter of 32-bit counters sized for the main cache at a 0.1% error (14.4 counters per block,
/// 10 hash functions by double hashing of two 32-bit XXH64 values), every counter of a key
/// incremented, the least read, all halved by `decay`. With its hash and its sizing constants,
/// the same key (a device-0 block number is libCacheSim's object id) lands on the same counters.
pub struct Cbf {
    counters: Vec<u32>,
    hashes: u32,
    /// `counters.len()` and its reciprocal for [`fast_mod`].
    n: u32,
    reciprocal: u64,
}

/// `a % n` for 32-bit `a` and `n > 0`, exactly, by multiplication with `reciprocal =
/// (2^64 - 1) / n + 1` (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
/// Software: Practice and Experience, 2019). The filter takes ten remainders per access, and a
/// division costs about 25 cycles where this takes two multiplications: with it W-TinyLFU's
/// libCacheSim variant on P3 at 10% took 0.59 s instead of 0.63 s (whole process, CPU time, min
/// of 7 interleaved runs).
#[inline(always)]
fn fast_mod(a: u32, reciprocal: u64, n: u32) -> u32 {
    let low = reciprocal.wrapping_mul(u64::from(a));
    ((u128::from(low) * u128::from(n)) >> 64) as u32
}

impl Cbf {
    // libCacheSim's truncated ln(2), not `LN_2`.
    #[allow(clippy::approx_constant)]
    pub fn new(entries: usize) -> Result<Self, SpecError> {
        // libCacheSim's constants, ln(2)^2 and ln(2) written out: computing them could round
        // the counter count differently at some sizes.
        let per_entry = -(0.001f64.ln()) / 0.480_453_013_918_201;
        let hashes = (0.693_147_180_559_945 * per_entry).ceil() as u32;
        let mut n = (per_entry * entries as f64).ceil().min(i32::MAX as f64) as usize;
        if n < hashes as usize {
            n = 2 * hashes as usize;
        }
        let counters = zeroed(n, "policy `w-tinylfu`: the counting Bloom filter")?;
        let n = n as u32;
        Ok(Cbf { counters, hashes, n, reciprocal: (u64::MAX / u64::from(n)).wrapping_add(1) })
    }

    /// The counters of `key`; it borrows nothing, so `add` can write them as it goes.
    #[inline]
    fn slots(&self, key: u64) -> impl Iterator<Item = usize> {
        // The 64-bit hashes are cut to 32 bits and combined in 32-bit arithmetic, as there.
        let a = xxh64_u64(key, CBF_SEEDS[0]) as u32;
        let b = xxh64_u64(key, CBF_SEEDS[1]) as u32;
        let (n, reciprocal) = (self.n, self.reciprocal);
        (0..self.hashes).map(move |i| fast_mod(a.wrapping_add(i.wrapping_mul(b)), reciprocal, n) as usize)
    }

    pub fn estimate(&self, key: u64) -> u64 {
        self.slots(key).map(|i| self.counters[i]).min().unwrap_or(0) as u64
    }

    pub fn add(&mut self, key: u64) {
        for i in self.slots(key) {
            self.counters[i] = self.counters[i].saturating_add(1);
        }
    }

    pub fn decay(&mut self) {
        self.counters.iter_mut().for_each(|c| *c >>= 1);
    }
}

/// Which counting rules run: the paper's, or libCacheSim's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rules {
    /// TOS 2017: every demand access is counted in the sketch; reset every W additions.
    Paper,
    /// libCacheSim's WTinyLFU.c: a counting Bloom filter; misses and main-cache hits are
    /// counted (window hits are not), each window victim once more when its fate is decided;
    /// halved after 32 x main-cache-size main-cache hits; a block entering the main cache goes
    /// to the first segment with room (probation, else protected, else probation over its
    /// share); the window is not held to its share: new blocks enter it and it is emptied
    /// into the main cache only when the cache is full and the main cache has room; a
    /// probation hit that overfills probation (through protected's overflow) evicts there.
    LibCacheSim,
}

/// Caffeine's hill climber (Middleware 2018, §3): every `period` demand accesses, move the
/// window by `step` in the direction that last improved the hit ratio; reverse on a loss; the
/// step decays by 0.98 a period and restarts after a change of 5% or more.
struct Climber {
    period: u64,
    seen: u64,
    hits: u64,
    previous: f64,
    step: f64,
    initial_step: f64,
}

impl Climber {
    fn new(capacity: usize) -> Self {
        let initial_step = capacity as f64 * 0.0625;
        Climber { period: 10 * capacity as u64, seen: 0, hits: 0, previous: 0.0, step: initial_step, initial_step }
    }

    /// The change of the window's size after one more access, if a period ended.
    fn record(&mut self, hit: bool) -> Option<f64> {
        self.seen += 1;
        self.hits += hit as u64;
        if self.seen < self.period {
            return None;
        }
        let ratio = self.hits as f64 / self.seen as f64;
        let delta = ratio - self.previous;
        let amount = if delta >= 0.0 { self.step } else { -self.step };
        self.step = if delta.abs() >= 0.05 { self.initial_step.copysign(amount) } else { amount * 0.98 };
        self.previous = ratio;
        self.seen = 0;
        self.hits = 0;
        Some(amount)
    }
}

pub struct WTinyLfu {
    capacity: usize,
    links: Links,
    window: List,
    probation: List,
    protected: List,
    segment: FrameVec<Segment>,
    keys: FrameVec<u64>,
    /// Window share of the cache in blocks (fractional while the climber moves it).
    window_size: f64,
    window_max: usize,
    protected_max: usize,
    /// Probation's share of the main cache under libCacheSim's rules (its SLRU's first
    /// segment, floor(main / 5): with protected's floor(4 x main / 5) one block may be left over).
    probation_max: usize,
    /// Blocks libCacheSim's SLRU evicts from probation at the last hit ([`Policy::surplus`]).
    surplus: usize,
    /// Protected share of the main cache (§4: 80%).
    protected_share: f64,
    pub sketch: Sketch,
    rules: Rules,
    cbf: Cbf,
    /// libCacheSim's count of main-cache hits since the last decay, and its period.
    main_hits: u64,
    decay_period: u64,
    climber: Option<Climber>,
    pub admitted: u64,
    pub rejected: u64,
}

impl WTinyLfu {
    pub fn new(
        capacity: usize,
        window: f64,
        protected_share: f64,
        doorkeeper: bool,
        adaptive: bool,
    ) -> Result<Self, SpecError> {
        Self::with_sample(capacity, window, protected_share, doorkeeper, adaptive, 10)
    }

    pub fn with_sample(
        capacity: usize,
        window: f64,
        protected_share: f64,
        doorkeeper: bool,
        adaptive: bool,
        sample: u64,
    ) -> Result<Self, SpecError> {
        let mut p = WTinyLfu {
            capacity,
            links: Links::with_nodes(capacity),
            window: List::new(),
            probation: List::new(),
            protected: List::new(),
            segment: FrameVec::filled(Segment::Window, capacity),
            keys: FrameVec::filled(0, capacity),
            window_size: window * capacity as f64,
            window_max: 0,
            protected_max: 0,
            probation_max: 0,
            surplus: 0,
            protected_share,
            sketch: Sketch::new(capacity, sample.saturating_mul(capacity as u64), doorkeeper)?,
            rules: Rules::Paper,
            cbf: Cbf::new(0)?,
            main_hits: 0,
            decay_period: 0,
            climber: adaptive.then(|| Climber::new(capacity)),
            admitted: 0,
            rejected: 0,
        };
        p.resize(0.0);
        Ok(p)
    }

    /// libCacheSim's counting rules and filter (`variant=libcachesim`).
    pub fn libcachesim_rules(mut self) -> Result<Self, SpecError> {
        let main = self.capacity - self.window_max.min(self.capacity);
        self.rules = Rules::LibCacheSim;
        self.resize(0.0);
        self.cbf = Cbf::new(main)?;
        self.decay_period = 32 * main as u64;
        Ok(self)
    }

    #[inline]
    fn count(&mut self, key: u64) {
        match self.rules {
            Rules::Paper => self.sketch.add(key),
            Rules::LibCacheSim => self.cbf.add(key),
        }
    }

    #[inline]
    pub fn estimate(&self, key: u64) -> u64 {
        match self.rules {
            Rules::Paper => self.sketch.estimate(key),
            Rules::LibCacheSim => self.cbf.estimate(key),
        }
    }

    /// Where a block leaving the window lands in the main cache: probation (§4), or under
    /// libCacheSim's rules the first segment with room.
    fn enter_main(&mut self, f: Frame) {
        let to = if self.rules == Rules::LibCacheSim {
            if self.probation.len() < self.probation_max || self.protected.len() >= self.protected_max {
                Segment::Probation
            } else {
                Segment::Protected
            }
        } else {
            Segment::Probation
        };
        self.move_to(f, to);
        if self.rules == Rules::LibCacheSim {
            self.cbf.add(self.keys[f as usize]);
        }
    }

    /// Moves the window's size by `amount` blocks, keeping at least one block in the window and
    /// one in the main cache (when the cache has two).
    fn resize(&mut self, amount: f64) {
        let hi = (self.capacity.saturating_sub(1)).max(1) as f64;
        self.window_size = (self.window_size + amount).clamp(1.0, hi);
        self.window_max = self.window_size.floor() as usize;
        let main = self.capacity - self.window_max.min(self.capacity);
        self.protected_max = (self.protected_share * main as f64) as usize;
        self.probation_max = match self.rules {
            Rules::Paper => main - self.protected_max,
            // libCacheSim's SLRU rounds each segment down from the main cache's size (1:4 is
            // floor(main / 5) and floor(4 x main / 5)); the epsilon keeps 1 - 80% from landing
            // a hair below 20% and a multiple of 5 blocks one block short.
            Rules::LibCacheSim => ((1.0 - self.protected_share) * main as f64 + 1e-9) as usize,
        };
    }

    /// Test-only view: `W=[..] B=[..] P=[..]` (window, probation, protected), most recent first.
    #[doc(hidden)]
    pub fn dump(&self) -> String {
        let show =
            |l: &List| self.links.iter(l).map(|f| self.keys[f as usize].to_string()).collect::<Vec<_>>().join(",");
        format!("W=[{}] B=[{}] P=[{}]", show(&self.window), show(&self.probation), show(&self.protected))
    }

    pub fn window_max(&self) -> usize {
        self.window_max
    }

    fn list(&mut self, s: Segment) -> &mut List {
        match s {
            Segment::Window => &mut self.window,
            Segment::Probation => &mut self.probation,
            Segment::Protected => &mut self.protected,
        }
    }

    fn move_to(&mut self, f: Frame, to: Segment) {
        let from = self.segment[f as usize];
        let mut src = std::mem::take(self.list(from));
        self.links.remove(&mut src, f);
        *self.list(from) = src;
        let mut dst = std::mem::take(self.list(to));
        self.links.push_front(&mut dst, f);
        *self.list(to) = dst;
        self.segment[f as usize] = to;
    }

    /// Demotes protected blocks beyond the protected share to probation's MRU end (§4, SLRU).
    fn demote_overflow(&mut self) {
        while self.protected.len() > self.protected_max {
            let Some(f) = self.protected.back() else {
                break;
            };
            self.move_to(f, Segment::Probation);
        }
    }

    /// Sends window blocks beyond the window's share to probation while the cache has room.
    fn drain_window(&mut self) {
        while self.window.len() > self.window_max {
            let Some(f) = self.window.back() else { break };
            self.enter_main(f);
        }
    }

    fn climb(&mut self, hit: bool) {
        if let Some(amount) = self.climber.as_mut().and_then(|c| c.record(hit)) {
            self.resize(amount);
            self.demote_overflow();
        }
    }
}

impl Policy for WTinyLfu {
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.keys[frame as usize] = a.key;
        self.segment[frame as usize] = Segment::Window;
        self.links.push_front(&mut self.window, frame);
        if origin == Origin::Demand {
            self.count(a.key);
            self.climb(false);
        }
        // libCacheSim moves window blocks to the main cache only when it evicts (see `victim`).
        if self.rules == Rules::Paper {
            self.drain_window();
        }
    }

    fn hit(&mut self, frame: Frame, a: &Access) {
        if self.rules == Rules::Paper {
            self.sketch.add(a.key);
        } else if self.segment[frame as usize] != Segment::Window {
            self.cbf.add(a.key);
            self.main_hits += 1;
            if self.main_hits >= self.decay_period {
                self.main_hits = 0;
                self.cbf.decay();
            }
        }
        match self.segment[frame as usize] {
            Segment::Window => self.links.move_to_front(&mut self.window, frame),
            Segment::Protected => self.links.move_to_front(&mut self.protected, frame),
            Segment::Probation => {
                self.move_to(frame, Segment::Protected);
                let cools = self.protected.len() > self.protected_max;
                self.demote_overflow();
                if cools && self.rules == Rules::LibCacheSim {
                    // libCacheSim's SLRU cools protected's LRU block into probation and then
                    // evicts probation's LRU blocks while probation is over its share (it can
                    // be: a block enters it over its share when no segment has room).
                    self.surplus = self.probation.len().saturating_sub(self.probation_max);
                }
            }
        }
        self.climb(true);
    }

    fn surplus(&mut self, pins: &Pins) -> Option<Frame> {
        if self.surplus == 0 {
            return None;
        }
        self.surplus -= 1;
        back_unpinned(&self.links, &self.probation, pins)
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.count(a.key);
        let s = self.segment[frame as usize];
        let mut l = std::mem::take(self.list(s));
        self.links.move_to_front(&mut l, frame);
        *self.list(s) = l;
        self.climb(true);
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if self.rules == Rules::LibCacheSim {
            // libCacheSim's evict loop: while the main cache has room, the window's LRU block
            // moves there (counted, no comparison) and the loop goes on; then one comparison
            // decides, and either way one block leaves. An empty window gives up the main
            // cache's victim.
            let main = self.capacity - self.window_max.min(self.capacity);
            while self.probation.len() + self.protected.len() < main {
                let Some(f) = back_unpinned(&self.links, &self.window, pins) else { break };
                self.enter_main(f);
            }
        }
        let main_victim = back_unpinned(&self.links, &self.probation, pins)
            .or_else(|| back_unpinned(&self.links, &self.protected, pins));
        if self.rules == Rules::Paper && self.window.len() < self.window_max {
            // The window is below its share (the climber grew it): the main cache gives way.
            return main_victim.or_else(|| back_unpinned(&self.links, &self.window, pins));
        }
        let Some(candidate) = back_unpinned(&self.links, &self.window, pins) else {
            return main_victim;
        };
        let Some(victim) = main_victim else {
            return Some(candidate);
        };
        // §4: the candidate enters the main cache only if TinyLFU estimates it more frequent.
        let c = self.estimate(self.keys[candidate as usize]);
        let v = self.estimate(self.keys[victim as usize]);
        if c > v {
            self.admitted += 1;
            // The victim's frame is still listed; libCacheSim evicts it before placing the
            // candidate, so the segment with room is judged without it.
            let vs = self.segment[victim as usize];
            let mut l = std::mem::take(self.list(vs));
            self.links.remove(&mut l, victim);
            *self.list(vs) = l;
            self.enter_main(candidate);
            let mut l = std::mem::take(self.list(vs));
            self.links.push_back(&mut l, victim);
            *self.list(vs) = l;
            Some(victim)
        } else {
            self.rejected += 1;
            if self.rules == Rules::LibCacheSim {
                self.cbf.add(self.keys[candidate as usize]);
            }
            Some(candidate)
        }
    }

    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        let s = self.segment[frame as usize];
        let mut l = std::mem::take(self.list(s));
        self.links.remove(&mut l, frame);
        *self.list(s) = l;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.window)?;
        self.links.check(&self.probation)?;
        self.links.check(&self.protected)?;
        let n = self.window.len() + self.probation.len() + self.protected.len();
        if n != resident {
            return Err(format!("W-TinyLFU holds {n} frames, cache {resident}"));
        }
        if self.protected.len() > self.protected_max {
            return Err(format!("protected {} over its share {}", self.protected.len(), self.protected_max));
        }
        for (l, s) in [
            (&self.window, Segment::Window),
            (&self.probation, Segment::Probation),
            (&self.protected, Segment::Protected),
        ] {
            if let Some(f) = self.links.iter(l).find(|&f| self.segment[f as usize] != s) {
                return Err(format!("frame {f} listed in {s:?} but marked {:?}", self.segment[f as usize]));
            }
        }
        Ok(())
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("tinylfu_admitted", self.admitted as f64));
        out.push(("tinylfu_rejected", self.rejected as f64));
        out.push(("tinylfu_window_blocks", self.window_max as f64));
    }
}

impl PolicyDef for WTinyLfu {
    const INFO: PolicyInfo = PolicyInfo {
        name: "w-tinylfu",
        aliases: &["wtinylfu", "tinylfu"],
        paper: "Einziger, Friedman & Manes, ACM TOS 2017, §4 (W-TinyLFU) with the §3 sketch; adaptive window: Middleware 2018 §3 (Caffeine)",
        summary: "window LRU + segmented LRU; a count-min sketch decides which of the two victims stays",
        params: &[
            ParamInfo { name: "window", default: "1%", doc: "window LRU's share of the cache (§4: 1%); the climber's start with adaptive=true", range: Range::Share(0.0, 1.0) },
            ParamInfo { name: "protected", default: "80%", doc: "protected segment's share of the main cache (§4: 80%)", range: Range::Share(0.0, 1.0) },
            ParamInfo { name: "doorkeeper", default: "true", doc: "Bloom filter in front of the sketch (§3.4.2)", range: Range::Flag },
            ParamInfo { name: "adaptive", default: "false", doc: "size the window by hill climbing on the hit ratio (Caffeine)", range: Range::Flag },
            ParamInfo { name: "variant", default: "paper", doc: "paper | libcachesim (its counting Bloom filter and counting rules, see docs/policies/w-tinylfu.md)", range: Range::Choice(&["paper", "libcachesim"]) },
            ParamInfo { name: "sample", default: "10", doc: "W, the additions between resets, as a multiple of the cache (§3.3; Caffeine: 10)", range: Range::Whole(1, u64::MAX) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        // Shares stay fractional: the window is floor(share x cache) blocks, as libCacheSim sizes it.
        let share = |name: &str| -> Result<f64, SpecError> {
            let f = match Relative::parse(args.text(name)) {
                Ok(Relative::Fraction(f)) => f,
                Ok(Relative::Absolute(s)) => s.to_blocks(env.block_size) as f64 / env.capacity as f64,
                Err(e) => return Err(SpecError(format!("policy `w-tinylfu`: parameter {name}: {e}"))),
            };
            if (0.0..=1.0).contains(&f) {
                Ok(f)
            } else {
                Err(SpecError(format!(
                    "policy `w-tinylfu`: parameter {name}=`{}` must be between 0% and 100%",
                    args.text(name)
                )))
            }
        };
        let sample = args.u64("sample")?;
        if sample == 0 {
            return Err(SpecError("policy `w-tinylfu`: sample must be at least 1 (times the cache)".into()));
        }
        let p = WTinyLfu::with_sample(
            env.capacity,
            share("window")?,
            share("protected")?,
            args.bool("doorkeeper")?,
            args.bool("adaptive")?,
            sample,
        )?;
        match args.choice("variant", &["paper", "libcachesim"])? {
            "libcachesim" => p.libcachesim_rules(),
            _ => Ok(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn small(cap: usize) -> Steps<WTinyLfu> {
        // Window 1 block, main 3 (protected share 2 of 3), no doorkeeper, no climbing.
        Steps::new(WTinyLfu::new(cap, 1.0 / cap as f64, 0.67, false, false).unwrap(), cap)
    }

    #[test]
    fn the_fast_remainder_is_the_remainder() {
        let mut rng = crate::rng::Rng::new(3);
        for n in [1u32, 2, 3, 7, 20, 1_000_003, 1_098_040, 1 << 31, u32::MAX - 1, u32::MAX] {
            let r = (u64::MAX / u64::from(n)).wrapping_add(1);
            for a in [0u32, 1, n - 1, n, n.wrapping_add(1), u32::MAX] {
                assert_eq!(fast_mod(a, r, n), a % n, "{a} % {n}");
            }
            for _ in 0..100_000 {
                let a = rng.next_u64() as u32;
                assert_eq!(fast_mod(a, r, n), a % n, "{a} % {n}");
            }
        }
    }

    #[test]
    fn window_victims_enter_the_main_cache_while_it_has_room() {
        let mut s = small(4);
        assert_eq!(s.run(&[1, 2, 3, 4]), "MMMM");
        assert_eq!(s.policy().dump(), "W=[4] B=[3,2,1] P=[]");
        // A probation hit moves to protected.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(s.policy().dump(), "W=[4] B=[3,1] P=[2]");
    }

    #[test]
    fn the_more_frequent_of_the_two_victims_stays() {
        let mut s = small(4);
        // 1 seen 3 times, 2 and 3 once each; 4 fills the window.
        assert_eq!(s.run(&[1, 1, 1, 2, 3, 4]), "MHHMMM");
        assert_eq!(s.policy().dump(), "W=[4] B=[3,2,1] P=[]");
        // 5: candidate 4 (estimate 1) vs probation's LRU 1 (estimate 3): 4 is evicted.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "W=[5] B=[3,2,1] P=[]");
        // 5 again and again: estimate 3 beats probation's LRU 1? No: 1 has 3 too (ties reject),
        // so 5 waits in the window. 6: candidate 5 (3) vs 1 (3): rejected.
        assert_eq!(s.run(&[5, 5, 6]), "HHM");
        assert_eq!(s.policy().dump(), "W=[6] B=[3,2,1] P=[]");
        // 6 four times: estimate 4 > 3: admitted, 1 evicted. 7 pushes 6 out of the window.
        assert_eq!(s.run(&[6, 6, 6, 7]), "HHHM");
        assert_eq!(s.policy().dump(), "W=[7] B=[6,3,2] P=[]");
        assert_eq!((s.policy().admitted, s.policy().rejected), (1, 2));
    }

    #[test]
    fn sketch_counts_saturate_halve_and_pass_the_doorkeeper() {
        let mut k = Sketch::new(64, 1000, true).unwrap();
        k.add(7);
        // The first sighting only sets the doorkeeper.
        assert_eq!(k.estimate(7), 1);
        for _ in 0..30 {
            k.add(7);
        }
        // 4-bit counters stop at 15, plus the doorkeeper's one.
        assert_eq!(k.estimate(7), 16);
        let mut k = Sketch::new(64, 20, false).unwrap();
        for _ in 0..12 {
            k.add(9);
        }
        for i in 0..8 {
            k.add(1000 + i);
        }
        // The 20th addition halved every counter: 12 -> 6.
        assert_eq!(k.resets, 1);
        assert_eq!(k.estimate(9), 6);
    }

    #[test]
    fn prefetched_blocks_are_not_counted_until_demanded() {
        let mut s = small(4);
        s.prefetch(9);
        assert_eq!(s.policy().sketch.estimate(9), 0);
        assert_eq!(s.demand(9), 'H');
        assert_eq!(s.policy().sketch.estimate(9), 1);
        assert_eq!(s.policy().dump(), "W=[9] B=[] P=[]");
    }

    #[test]
    fn xxh64_matches_the_reference_library() {
        // Values from the xxhash reference library (Python `xxhash.xxh64_intdigest` of the 8
        // little-endian bytes), at libCacheSim's two filter seeds.
        assert_eq!(xxh64_u64(0, CBF_SEEDS[0]), 0x67bb_774d_39f5_d473);
        assert_eq!(xxh64_u64(0, CBF_SEEDS[1]), 0xc2a6_4453_b85a_5e79);
        assert_eq!(xxh64_u64(1, CBF_SEEDS[0]), 0x071b_9484_a237_4097);
        assert_eq!(xxh64_u64(123_456_789, CBF_SEEDS[1]), 0xaa7d_e97a_bad7_cda4);
        assert_eq!(xxh64_u64((1 << 63) + 7, CBF_SEEDS[0]), 0x9284_d0f7_5a43_229d);
    }

    #[test]
    fn libcachesim_rules_fill_the_window_then_evict_at_a_probation_hit() {
        // 10 blocks, window 1, main 9: probation floor(9/5) = 1, protected floor(36/5) = 7.
        let p = WTinyLfu::new(10, 0.1, 0.8, false, false).unwrap().libcachesim_rules().unwrap();
        let mut s = Steps::new(p, 10);
        // The window takes every block until the cache is full.
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), "MMMMMMMMMM");
        assert_eq!(s.policy().dump(), "W=[10,9,8,7,6,5,4,3,2,1] B=[] P=[]");
        // 11: the window empties into the main cache while it has room (probation, then
        // protected, then probation over its share); then 10 (counted once) loses to 1 (twice).
        assert_eq!(s.demand(11), 'M');
        assert_eq!(s.policy().dump(), "W=[11] B=[9,1] P=[8,7,6,5,4,3,2]");
        // A probation hit overfills protected; its LRU block 2 cools into probation, which is
        // then over its share: libCacheSim evicts 1 at this hit.
        assert_eq!(s.demand(9), 'H');
        assert_eq!(s.policy().dump(), "W=[11] B=[2] P=[9,8,7,6,5,4,3]");
        // 1 finds a free frame: no eviction, the window holds two blocks.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(s.policy().dump(), "W=[1,11] B=[2] P=[9,8,7,6,5,4,3]");
        // 12: the main cache has room for 11 (probation, over its share); then 1 (counted 3
        // times) beats 2 (twice), which leaves, and 1 enters probation: one block out.
        assert_eq!(s.demand(12), 'M');
        assert_eq!(s.policy().dump(), "W=[12] B=[1,11] P=[9,8,7,6,5,4,3]");
    }

    #[test]
    fn the_climber_moves_the_window_and_keeps_the_invariants() {
        let mut s = Steps::new(WTinyLfu::new(50, 0.01, 0.8, true, true).unwrap(), 50);
        let start = s.policy().window_max();
        for i in 0..5000u64 {
            // A loop over 40 blocks with a scan of new blocks every 7th access.
            s.demand(if i % 7 == 0 { 1000 + i } else { i % 40 });
        }
        assert_ne!(s.policy().window_max(), start, "the window never moved");
    }
}
