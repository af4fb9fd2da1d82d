//! Partitioned caches: disjoint sets of frames, each ordered by its own policy, with sizes,
//! target sizes, a seeded random choice of the partition that gives up a frame, and a bounded
//! timeline of partition sizes. AMP's manager (AMP §3.2, Figure 4) is built on it; storage-aware
//! caching's per-device partitions have the same shape.
//!
//! Frames are global (`0..capacity`): every sub-policy is built for the whole cache and orders
//! only the frames of its partition. Moving a block between partitions removes it from one
//! sub-policy with [`Removal::UnusedPrefetch`] (the block stays cached, so it must leave no ghost
//! or history) and inserts it into the other as a demand insertion.

use super::{Access, Frame, Origin, Pins, Policy, Removal};
use crate::frames::FrameVec;
use crate::rng::Rng;

/// Frame owned by no partition.
const NONE: u8 = u8::MAX;

/// Most partitions a [`PartitionMap`] holds (partition ids fit a byte).
pub const MAX_PARTITIONS: usize = NONE as usize;

/// How a partition that must give up a frame is drawn among the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal {
    /// Each non-empty candidate partition equally likely (AMP Figure 4, read literally:
    /// "evict from another non-empty partition randomly").
    Uniform,
    /// Each candidate with probability proportional to its size: a random block of the others.
    BySize,
    /// Each candidate holds tickets in inverse proportion to its target size (its size when
    /// it has no target): storage-aware caching's inverse lottery (§2.2).
    InverseTarget,
}

/// Tickets of a partition whose target is one block, under [`Steal::InverseTarget`]; a target
/// of `t` blocks holds `INVERSE_TICKETS / t` (integer tickets keep draws exact and seeded).
pub const INVERSE_TICKETS: u64 = 1 << 40;

impl Steal {
    pub const NAMES: [&'static str; 2] = ["uniform", "size"];

    pub fn from_name(name: &str) -> Option<Steal> {
        match name {
            "uniform" => Some(Steal::Uniform),
            "size" => Some(Steal::BySize),
            _ => None,
        }
    }
}

/// Which partition owns each frame, partition sizes and target sizes.
#[derive(Clone, Debug)]
pub struct PartitionMap {
    owner: FrameVec<u8>,
    len: Vec<usize>,
    target: Vec<Option<usize>>,
}

impl PartitionMap {
    pub fn new(capacity: usize, partitions: usize) -> Self {
        assert!(partitions <= MAX_PARTITIONS, "at most {MAX_PARTITIONS} partitions");
        PartitionMap {
            owner: FrameVec::filled(NONE, capacity),
            len: vec![0; partitions],
            target: vec![None; partitions],
        }
    }

    pub fn partitions(&self) -> usize {
        self.len.len()
    }

    /// Adds an empty partition without a target; returns its index.
    pub fn add_partition(&mut self) -> usize {
        assert!(self.len.len() < MAX_PARTITIONS, "at most {MAX_PARTITIONS} partitions");
        self.len.push(0);
        self.target.push(None);
        self.len.len() - 1
    }

    #[inline]
    pub fn owner(&self, f: Frame) -> Option<usize> {
        let o = self.owner[f as usize];
        (o != NONE).then_some(o as usize)
    }

    /// Resident blocks of partition `p`.
    #[inline]
    pub fn len(&self, p: usize) -> usize {
        self.len[p]
    }

    pub fn sizes(&self) -> &[usize] {
        &self.len
    }

    /// Gives the free frame `f` to partition `p`.
    #[inline]
    pub fn assign(&mut self, f: Frame, p: usize) {
        debug_assert_eq!(self.owner[f as usize], NONE, "frame {f} already owned");
        self.owner[f as usize] = p as u8;
        self.len[p] += 1;
    }

    /// Frees the frame `f`; returns the partition that owned it.
    #[inline]
    pub fn release(&mut self, f: Frame) -> usize {
        let p = self.owner[f as usize];
        debug_assert_ne!(p, NONE, "frame {f} owned by no partition");
        self.owner[f as usize] = NONE;
        self.len[p as usize] -= 1;
        p as usize
    }

    pub fn set_target(&mut self, p: usize, blocks: Option<usize>) {
        self.target[p] = blocks;
    }

    pub fn target(&self, p: usize) -> Option<usize> {
        self.target[p]
    }

    /// Blocks partition `p` holds beyond its target (0 without a target).
    pub fn excess(&self, p: usize) -> usize {
        self.target[p].map_or(0, |t| self.len[p].saturating_sub(t))
    }

    /// Draws a non-empty partition among those `eligible` accepts, by `steal`, from `rng`.
    /// One draw per call whatever the outcome, so results never depend on how candidates are
    /// scanned.
    pub fn draw(&self, rng: &mut Rng, steal: Steal, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        let weight = |p: usize| -> u64 {
            if self.len[p] == 0 || !eligible(p) {
                0
            } else {
                match steal {
                    Steal::Uniform => 1,
                    Steal::BySize => self.len[p] as u64,
                    Steal::InverseTarget => INVERSE_TICKETS / (self.target[p].unwrap_or(self.len[p]).max(1) as u64),
                }
            }
        };
        let total: u64 = (0..self.len.len()).map(weight).sum();
        if total == 0 {
            return None;
        }
        let mut x = rng.below(total);
        for p in 0..self.len.len() {
            let w = weight(p);
            if x < w {
                return Some(p);
            }
            x -= w;
        }
        unreachable!("draw below the total weight")
    }

    /// Checks that the sizes count the owned frames and add up to `resident`.
    pub fn check(&self, resident: usize) -> Result<(), String> {
        let mut counts = vec![0usize; self.len.len()];
        for &o in self.owner.iter() {
            if o != NONE {
                counts[o as usize] += 1;
            }
        }
        if counts != self.len {
            return Err(format!("partition sizes {:?} but frames owned {counts:?}", self.len));
        }
        let total: usize = counts.iter().sum();
        if total != resident {
            return Err(format!("partitions hold {total} blocks, cache {resident}"));
        }
        Ok(())
    }
}

/// Sub-policies of one type over disjoint frame sets: the owner of each frame receives that
/// frame's events. Callers choose the partition of an insertion and the partition a victim
/// comes from.
pub struct Partitioned<P: Policy> {
    map: PartitionMap,
    parts: Vec<P>,
}

impl<P: Policy> Partitioned<P> {
    /// `parts` each built for the whole `capacity`.
    pub fn new(parts: Vec<P>, capacity: usize) -> Self {
        Partitioned { map: PartitionMap::new(capacity, parts.len()), parts }
    }

    pub fn map(&self) -> &PartitionMap {
        &self.map
    }

    /// Adds an empty partition ordered by `part` (built for the whole cache); returns its index.
    pub fn add(&mut self, part: P) -> usize {
        self.parts.push(part);
        self.map.add_partition()
    }

    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    pub fn map_mut(&mut self) -> &mut PartitionMap {
        &mut self.map
    }

    pub fn part(&self, p: usize) -> &P {
        &self.parts[p]
    }

    pub fn prepare_insert(&mut self, p: usize, a: &Access, origin: Origin) {
        self.parts[p].prepare_insert(a, origin);
    }

    pub fn insert(&mut self, p: usize, frame: Frame, a: &Access, origin: Origin) {
        self.map.assign(frame, p);
        self.parts[p].insert(frame, a, origin);
    }

    pub fn hit(&mut self, frame: Frame, a: &Access) {
        let p = self.map.owner(frame).expect("hit on a frame of no partition");
        self.parts[p].hit(frame, a);
    }

    pub fn first_demand(&mut self, frame: Frame, a: &Access) {
        let p = self.map.owner(frame).expect("first demand on a frame of no partition");
        self.parts[p].first_demand(frame, a);
    }

    /// The victim partition `p`'s policy chooses, if it has an unpinned frame.
    pub fn victim_in(&mut self, p: usize, pins: &Pins, incoming: &Access) -> Option<Frame> {
        if self.map.len(p) == 0 {
            return None;
        }
        self.parts[p].victim(pins, incoming)
    }

    pub fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let p = self.map.release(frame);
        self.parts[p].remove(frame, key, why);
    }

    /// Moves the resident block `a.key` in `frame` to partition `to`.
    pub fn transfer(&mut self, frame: Frame, to: usize, a: &Access) {
        let from = self.map.release(frame);
        self.parts[from].remove(frame, a.key, Removal::UnusedPrefetch);
        self.parts[to].prepare_insert(a, Origin::Demand);
        self.map.assign(frame, to);
        self.parts[to].insert(frame, a, Origin::Demand);
    }

    pub fn check(&self, resident: usize) -> Result<(), String> {
        self.map.check(resident)?;
        for (p, part) in self.parts.iter().enumerate() {
            part.check(self.map.len(p)).map_err(|e| format!("partition {p}: {e}"))?;
        }
        Ok(())
    }
}

/// What a timeline's times count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineClock {
    /// Demand block accesses before the sample (virtual time).
    Accesses,
    /// Simulated nanoseconds (timed mode).
    Nanoseconds,
}

impl TimelineClock {
    pub fn name(self) -> &'static str {
        match self {
            TimelineClock::Accesses => "accesses",
            TimelineClock::Nanoseconds => "ns",
        }
    }
}

/// Partition sizes over virtual time, sampled every `every` accesses, in bounded memory: when
/// `max_samples` are held, every other sample is dropped and the interval doubles.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// One name per partition, in partition order.
    pub names: Vec<String>,
    /// Virtual time (demand accesses before the sample) of each sample.
    pub times: Vec<u64>,
    /// Blocks of each partition, `names.len()` values per sample.
    pub sizes: Vec<u32>,
    /// A tag per partition per sample: for AMP the program context an MRU partition serves
    /// (0 when none).
    pub tags: Vec<u64>,
    /// A measure per partition per sample, for policies that keep one (storage-aware caching:
    /// the wait time of the partition's device over the last window, in ms); empty otherwise.
    pub values: Vec<f64>,
    /// What `times` count.
    pub clock: TimelineClock,
    every: u64,
    next: u64,
    max_samples: usize,
}

impl Timeline {
    /// `every` = 0 records nothing.
    pub fn new(names: Vec<String>, every: u64, max_samples: usize) -> Self {
        Timeline {
            names,
            times: Vec::new(),
            sizes: Vec::new(),
            tags: Vec::new(),
            values: Vec::new(),
            clock: TimelineClock::Accesses,
            every,
            next: 0,
            max_samples: max_samples.max(2),
        }
    }

    /// Adds a partition after samples were taken: it had 0 blocks, tag 0 (and value 0) in them.
    pub fn add_name(&mut self, name: String) {
        let (n, samples) = (self.names.len(), self.times.len());
        let widen = |v: &mut Vec<u64>| {
            let mut out = Vec::with_capacity(samples * (n + 1));
            for i in 0..samples {
                out.extend_from_slice(&v[i * n..(i + 1) * n]);
                out.push(0);
            }
            *v = out;
        };
        let mut sizes: Vec<u64> = self.sizes.iter().map(|&x| x as u64).collect();
        widen(&mut sizes);
        self.sizes = sizes.into_iter().map(|x| x as u32).collect();
        widen(&mut self.tags);
        if !self.values.is_empty() {
            let mut bits: Vec<u64> = self.values.iter().map(|v| v.to_bits()).collect();
            widen(&mut bits);
            self.values = bits.into_iter().map(f64::from_bits).collect();
        }
        self.names.push(name);
    }

    /// Records one sample with a value per partition as well (see [`Timeline::values`]).
    pub fn record_values(
        &mut self,
        time: u64,
        sizes: impl Iterator<Item = usize>,
        tags: impl Iterator<Item = u64>,
        values: impl Iterator<Item = f64>,
    ) {
        let n = self.names.len();
        self.values.extend(values.take(n));
        debug_assert_eq!(self.values.len(), (self.times.len() + 1) * n);
        self.record(time, sizes, tags);
    }

    /// Whether a sample is due at virtual time `time`.
    #[inline]
    pub fn due(&self, time: u64) -> bool {
        self.every > 0 && time >= self.next
    }

    /// The current sampling interval.
    pub fn every(&self) -> u64 {
        self.every
    }

    pub fn samples(&self) -> usize {
        self.times.len()
    }

    /// Records one sample: a size and a tag per partition.
    pub fn record(&mut self, time: u64, sizes: impl Iterator<Item = usize>, tags: impl Iterator<Item = u64>) {
        let n = self.names.len();
        self.times.push(time);
        self.sizes.extend(sizes.take(n).map(|s| s as u32));
        self.tags.extend(tags.take(n));
        debug_assert_eq!(self.sizes.len(), self.times.len() * n);
        debug_assert_eq!(self.tags.len(), self.times.len() * n);
        if self.times.len() >= self.max_samples {
            self.decimate();
        }
        self.next = self.times.last().map_or(0, |t| t + self.every);
    }

    /// Keeps samples 0, 2, 4, ... and doubles the interval.
    fn decimate(&mut self) {
        let n = self.names.len();
        let keep = self.times.len().div_ceil(2);
        for i in 0..keep {
            self.times[i] = self.times[2 * i];
            for p in 0..n {
                self.sizes[i * n + p] = self.sizes[2 * i * n + p];
                self.tags[i * n + p] = self.tags[2 * i * n + p];
                if !self.values.is_empty() {
                    self.values[i * n + p] = self.values[2 * i * n + p];
                }
            }
        }
        self.times.truncate(keep);
        self.sizes.truncate(keep * n);
        self.tags.truncate(keep * n);
        if !self.values.is_empty() {
            self.values.truncate(keep * n);
        }
        self.every *= 2;
    }

    /// Size of partition `p` in sample `i`.
    pub fn size(&self, i: usize, p: usize) -> u32 {
        self.sizes[i * self.names.len() + p]
    }

    /// Tag of partition `p` in sample `i`.
    pub fn tag(&self, i: usize, p: usize) -> u64 {
        self.tags[i * self.names.len() + p]
    }

    /// Value of partition `p` in sample `i`, if the timeline keeps values.
    pub fn value(&self, i: usize, p: usize) -> Option<f64> {
        self.values.get(i * self.names.len() + p).copied()
    }

    /// Long-format rows `(time, partition name, tag, blocks)`, for data frames.
    pub fn rows(&self) -> impl Iterator<Item = (u64, &str, u64, u32)> + '_ {
        let n = self.names.len();
        (0..self.times.len()).flat_map(move |i| {
            (0..n).map(move |p| (self.times[i], self.names[p].as_str(), self.tag(i, p), self.size(i, p)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::policy::{Lru, Mru, Policy};

    /// Two LRU partitions: even blocks in 0, odd in 1; each evicts its own LRU block.
    struct EvenOdd(Partitioned<Lru>);

    impl Policy for EvenOdd {
        fn prepare_insert(&mut self, a: &Access, o: Origin) {
            self.0.prepare_insert((a.key % 2) as usize, a, o);
        }
        fn insert(&mut self, f: Frame, a: &Access, o: Origin) {
            self.0.insert((a.key % 2) as usize, f, a, o);
        }
        fn hit(&mut self, f: Frame, a: &Access) {
            self.0.hit(f, a);
        }
        fn first_demand(&mut self, f: Frame, a: &Access) {
            self.0.first_demand(f, a);
        }
        fn victim(&mut self, pins: &Pins, a: &Access) -> Option<Frame> {
            let p = (a.key % 2) as usize;
            self.0.victim_in(p, pins, a).or_else(|| self.0.victim_in(1 - p, pins, a))
        }
        fn remove(&mut self, f: Frame, key: u64, why: Removal) {
            self.0.remove(f, key, why);
        }
        fn check(&self, resident: usize) -> Result<(), String> {
            self.0.check(resident)
        }
    }

    #[test]
    fn partitions_evict_from_their_own_frames() {
        let p = EvenOdd(Partitioned::new(vec![Lru::new(4), Lru::new(4)], 4));
        let mut c = Cache::new(p, 4);
        for k in [0u64, 2, 1, 3, 4] {
            c.demand(&Access { key: k, ..Access::default() });
            c.check().unwrap();
        }
        // 4 is even: the even partition's LRU block (0) left, not the globally oldest.
        assert_eq!(c.resident_keys().len(), 4);
        assert!(!c.contains(0) && c.contains(1) && c.contains(2));
        assert_eq!(c.policy.0.map().sizes(), &[2, 2]);
    }

    #[test]
    fn transfer_moves_a_block_without_a_victim() {
        let mut parts = Partitioned::new(vec![Mru::new(3), Mru::new(3)], 3);
        for (f, k) in [(0u32, 10u64), (1, 11), (2, 12)] {
            let a = Access { key: k, ..Access::default() };
            parts.prepare_insert(0, &a, Origin::Demand);
            parts.insert(0, f, &a, Origin::Demand);
        }
        parts.transfer(1, 1, &Access { key: 11, ..Access::default() });
        assert_eq!(parts.map().sizes(), &[2, 1]);
        assert_eq!(parts.map().owner(1), Some(1));
        parts.check(3).unwrap();
        // Partition 0's MRU block is now 12 (frame 2); partition 1 holds only frame 1.
        assert_eq!(parts.victim_in(0, &Pins::none(), &Access::default()), Some(2));
        assert_eq!(parts.victim_in(1, &Pins::none(), &Access::default()), Some(1));
    }

    #[test]
    fn draws_follow_the_steal_rule() {
        let mut m = PartitionMap::new(100, 3);
        for f in 0..90 {
            m.assign(f, 0);
        }
        for f in 90..100 {
            m.assign(f, 1);
        }
        let mut rng = Rng::new(5);
        let count = |rng: &mut Rng, s: Steal| (0..10_000).filter(|_| m.draw(rng, s, |_| true) == Some(1)).count();
        let uniform = count(&mut rng, Steal::Uniform);
        let by_size = count(&mut rng, Steal::BySize);
        assert!((4_500..5_500).contains(&uniform), "{uniform}");
        assert!((700..1_300).contains(&by_size), "{by_size}");
        assert_eq!(m.draw(&mut rng, Steal::Uniform, |p| p == 2), None, "empty partitions are never drawn");
        m.set_target(0, Some(80));
        assert_eq!(m.excess(0), 10);
        assert_eq!(m.excess(1), 0);
        m.check(100).unwrap();
    }

    #[test]
    fn inverse_lottery_tickets_go_against_target_sizes() {
        // Storage-aware caching §2.2: targets 600 / 300 / 100 hold tickets in proportion to
        // 1/600 : 1/300 : 1/100 = 1 : 2 : 6, so victims come 1/9, 2/9 and 6/9 from them.
        let mut m = PartitionMap::new(30, 3);
        for f in 0..30 {
            m.assign(f, (f % 3) as usize);
        }
        for (p, t) in [600, 300, 100].into_iter().enumerate() {
            m.set_target(p, Some(t));
        }
        let mut rng = Rng::new(11);
        let mut n = [0u32; 3];
        for _ in 0..20_000 {
            n[m.draw(&mut rng, Steal::InverseTarget, |_| true).unwrap()] += 1;
        }
        assert!(
            (2_000..2_450).contains(&n[0]) && (4_100..4_800).contains(&n[1]) && (12_900..13_800).contains(&n[2]),
            "{n:?}"
        );
        // A target of 0 holds the most tickets; an empty partition none.
        m.set_target(0, Some(0));
        assert!((0..100).filter(|_| m.draw(&mut rng, Steal::InverseTarget, |_| true) == Some(0)).count() > 95);
    }

    #[test]
    fn timeline_memory_stays_bounded() {
        let mut t = Timeline::new(vec!["a".into(), "b".into()], 10, 8);
        let mut time = 0;
        while time < 10_000 {
            if t.due(time) {
                t.record(time, [1usize, 2].into_iter(), [0u64, 7].into_iter());
            }
            time += 1;
        }
        assert!(t.samples() < 8);
        assert!(t.every() >= 1000, "{}", t.every());
        // Samples stay evenly spaced after decimation.
        let gaps: Vec<u64> = t.times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).all(|g| g[0] == g[1] || g[1] == t.every()), "{gaps:?}");
        assert_eq!(t.rows().count(), 2 * t.samples());
        assert_eq!(t.rows().nth(1), Some((0, "b", 7, 2)));
    }
}
