//! Aggregate partitioning (storage-aware caching §2.2-§2.3): one partition per device, each
//! ordered by its own policy over its own frames, with a target size per partition. The
//! policies `static`, `eager-lru`, `lazy-lru` and `lazy-clock` are this machinery with a rule
//! for the victim partition: [`DeviceSplit::eager_victim`] (the new block's own partition) or
//! [`DeviceSplit::lottery_victim`] (an inverse lottery). Built on [`Partitioned`].

use super::repartition::{apportion, RepartitionConfig, Repartitioner};
use super::{ExpectedService, StorageView};
use crate::policy::partition::{Partitioned, Steal, Timeline};
use crate::policy::{Access, Frame, Origin, Pins, Policy, Removal};
use crate::rng::Rng;

/// Device id without a partition.
const NONE: u8 = u8::MAX;

/// Samples a timeline keeps before halving its resolution.
const TIMELINE_SAMPLES: usize = 4096;

/// How target sizes are set when the partitions are created.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizing {
    /// Equal shares of the cache (the dynamic policies' start, §5.5: "the 16 partitions are all
    /// initially equal").
    Equal,
    /// In proportion to each device's expected service time for a request of this many bytes
    /// (`static`, §5.2).
    ExpectedService { request_bytes: u64 },
    /// Every device slower than the fastest (its expected service time for a request of
    /// `request_bytes` above the least of them) gets `ratio` times the share of each fastest
    /// device: Figure 4's x-axis, "the ratio of the slow disk partition to each of the fast
    /// disk partitions" (`static(ratio=R)`, §5.2).
    SlowRatio { request_bytes: u64, ratio: f64 },
}

pub struct DeviceSplit<P: Policy> {
    parts: Partitioned<P>,
    new_part: fn(usize) -> P,
    capacity: usize,
    /// Partition of each device id.
    part_of: Vec<u8>,
    /// Device of each partition.
    devices: Vec<u16>,
    expected: Vec<ExpectedService>,
    block_size: u64,
    sizing: Sizing,
    /// Measures wait times per epoch; repartitions when `adapt`.
    repartitioner: Repartitioner,
    adapt: bool,
    targets: Vec<usize>,
    scratch: Vec<usize>,
    moved: u64,
    timeline: Timeline,
    /// The timeline samples every `stride`-th epoch; the stride doubles whenever the timeline
    /// halves its samples, so samples stay evenly spaced in epochs over the whole run.
    stride: u64,
    /// Eager partitioning's immediate reallocation (§2.3): a partition above its target gives
    /// blocks back at once ([`DeviceSplit::reallocate`]), not only as misses need frames.
    immediate: bool,
    /// Some partition may hold more than its target (set when targets move or a free frame
    /// goes to a full partition; cleared when none does).
    over: bool,
}

impl<P: Policy> DeviceSplit<P> {
    /// A split of `capacity` frames with no partition yet: [`Policy::storage`] (or the first
    /// access of each device) creates them. `new_part(capacity)` builds a partition's policy.
    pub fn new(capacity: usize, new_part: fn(usize) -> P, sizing: Sizing, cfg: RepartitionConfig, adapt: bool) -> Self {
        DeviceSplit {
            parts: Partitioned::new(Vec::new(), capacity),
            new_part,
            capacity,
            part_of: Vec::new(),
            devices: Vec::new(),
            expected: Vec::new(),
            block_size: 4096,
            sizing,
            repartitioner: Repartitioner::new(cfg, 0),
            adapt,
            targets: Vec::new(),
            scratch: Vec::new(),
            moved: 0,
            timeline: Timeline::new(Vec::new(), 1, TIMELINE_SAMPLES),
            stride: 1,
            immediate: false,
            over: false,
        }
    }

    /// Gives blocks above a partition's target back at once ([`DeviceSplit::reallocate`]).
    pub fn immediate(mut self, on: bool) -> Self {
        self.immediate = on;
        self
    }

    /// Eager partitioning's reallocation (§2.3: "when new partition sizes are desired, the
    /// algorithm immediately reallocates pages"): the least recently used block of the
    /// partition furthest above its target, while one is above (`None` when none is, when this
    /// split does not reallocate, or when that partition's blocks are all pinned).
    #[inline]
    pub fn reallocate(&mut self, pins: &Pins) -> Option<Frame> {
        if !self.over {
            return None;
        }
        let q = self.most_over(usize::MAX, &[]);
        let found = if q == usize::MAX { None } else { self.parts.victim_in(q, pins, &Access::default()) };
        self.over = found.is_some();
        found
    }

    pub fn parts(&self) -> &Partitioned<P> {
        &self.parts
    }

    pub fn repartitioner(&self) -> &Repartitioner {
        &self.repartitioner
    }

    /// Target size of each partition (they sum to the cache size).
    pub fn targets(&self) -> &[usize] {
        &self.targets
    }

    /// Device of each partition.
    pub fn devices(&self) -> &[u16] {
        &self.devices
    }

    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The partition of `device`, created (and every target reset) if the device is new.
    #[inline]
    pub fn partition_of(&mut self, device: u16) -> usize {
        match self.part_of.get(device as usize) {
            Some(&p) if p != NONE => p as usize,
            _ => self.add_device(device, None),
        }
    }

    /// A new partition for `device` (its expected service time, or the mean of the others).
    fn add_device(&mut self, device: u16, expected: Option<ExpectedService>) -> usize {
        let expected = expected.unwrap_or_else(|| {
            let n = self.expected.len().max(1) as f64;
            let mean = |f: fn(&ExpectedService) -> f64| self.expected.iter().map(f).sum::<f64>() / n;
            if self.expected.is_empty() {
                ExpectedService { positioning_ns: 1.0, ns_per_block: 0.0, ns_per_byte: 0.0 }
            } else {
                ExpectedService {
                    positioning_ns: mean(|e| e.positioning_ns),
                    ns_per_block: mean(|e| e.ns_per_block),
                    ns_per_byte: mean(|e| e.ns_per_byte),
                }
            }
        });
        let p = self.parts.add((self.new_part)(self.capacity));
        if self.part_of.len() <= device as usize {
            self.part_of.resize(device as usize + 1, NONE);
        }
        self.part_of[device as usize] = p as u8;
        self.devices.push(device);
        self.expected.push(expected);
        self.targets.push(0);
        self.repartitioner.add_partition();
        if self.timeline.names.is_empty() && self.timeline.samples() == 0 {
            self.timeline.names.push(format!("dev{device}"));
        } else {
            self.timeline.add_name(format!("dev{device}"));
        }
        self.reset_targets();
        p
    }

    /// Targets by the sizing rule, summing exactly to the cache size.
    fn reset_targets(&mut self) {
        let n = self.targets.len();
        let (bs, expected) = (self.block_size, &self.expected);
        match self.sizing {
            Sizing::Equal => apportion(self.capacity, |_| 1.0, |_| usize::MAX, &mut self.targets),
            // §5.2: "the ratio of partition sizes is ... directly proportional to the ratio of
            // the expected service time of each disk".
            Sizing::ExpectedService { request_bytes } => apportion(
                self.capacity,
                |p| expected[p].ns_for_bytes(request_bytes, bs).max(f64::MIN_POSITIVE),
                |_| usize::MAX,
                &mut self.targets,
            ),
            Sizing::SlowRatio { request_bytes, ratio } => {
                let cost = |p: usize| expected[p].ns_for_bytes(request_bytes, bs);
                let fastest = (0..n).map(cost).fold(f64::INFINITY, f64::min);
                apportion(
                    self.capacity,
                    |p| if cost(p) > fastest { ratio } else { 1.0 },
                    |_| usize::MAX,
                    &mut self.targets,
                )
            }
        }
        for p in 0..n {
            self.parts.map_mut().set_target(p, Some(self.targets[p]));
        }
    }

    /// [`Policy::storage`]: a partition for every device of the run, in id order.
    pub fn storage(&mut self, view: &StorageView) {
        self.block_size = view.block_size.max(1);
        self.timeline.clock = view.clock;
        for d in &view.devices {
            match self.part_of.get(d.device as usize) {
                Some(&p) if p != NONE => self.expected[p as usize] = d.expected,
                _ => {
                    self.add_device(d.device, Some(d.expected));
                }
            }
        }
        self.reset_targets();
    }

    /// [`Policy::device_done`]: counts the wait; at the end of an epoch repartitions (when the
    /// policy adapts) and samples the timeline.
    #[inline]
    pub fn device_done(&mut self, device: u16, wait_ns: u64, now: u64) {
        let p = self.partition_of(device);
        if self.repartitioner.record(p, wait_ns as f64) {
            self.end_epoch(now);
        }
    }

    #[cold]
    // `is_multiple_of` needs Rust 1.87; the workspace supports 1.80.
    #[allow(clippy::manual_is_multiple_of)]
    fn end_epoch(&mut self, now: u64) {
        if self.adapt {
            self.moved += self.repartitioner.repartition(&mut self.targets) as u64;
            for (p, &t) in self.targets.iter().enumerate() {
                self.parts.map_mut().set_target(p, Some(t));
            }
            self.over = self.immediate;
        } else {
            // Static partitions: the epoch only measures (the classification is kept for the
            // record; the targets stay).
            self.scratch.clone_from(&self.targets);
            self.repartitioner.repartition(&mut self.scratch);
        }
        // Epochs are numbered from 1; the samples kept after halving are epochs 1, 1 + 2s, ...
        if (self.repartitioner.epochs() - 1) % self.stride != 0 {
            return;
        }
        let last = self.repartitioner.last();
        let every = self.timeline.every();
        self.timeline.record_values(
            now,
            self.parts.map().sizes().iter().copied(),
            self.targets.iter().map(|&t| t as u64),
            last.wait_ns.iter().map(|w| w / 1e6),
        );
        if self.timeline.every() != every {
            self.stride *= 2;
        }
    }

    // --- The policy contract, by partition ---

    #[inline]
    pub fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        let p = self.partition_of(a.device);
        self.parts.prepare_insert(p, a, origin);
    }

    #[inline]
    pub fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let p = self.partition_of(a.device);
        self.parts.insert(p, frame, a, origin);
        if self.immediate {
            let map = self.parts.map();
            self.over |= map.target(p).is_some_and(|t| map.len(p) > t);
        }
    }

    #[inline]
    pub fn hit(&mut self, frame: Frame, a: &Access) {
        self.parts.hit(frame, a);
    }

    #[inline]
    pub fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.parts.first_demand(frame, a);
    }

    #[inline]
    pub fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.parts.remove(frame, key, why);
    }

    /// Eager partitioning (§2.3): "choosing a victim partition ... is the same as the location
    /// of the new page": the incoming block's partition gives up its own block once it holds
    /// its target; below its target it takes a block from the partition furthest above its
    /// own target.
    #[inline]
    pub fn eager_victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let p = self.partition_of(incoming.device);
        let map = self.parts.map();
        let first = if map.target(p).is_none_or(|t| map.len(p) >= t) { p } else { self.most_over(p, &[]) };
        if let Some(f) = self.parts.victim_in(first, pins, incoming) {
            return Some(f);
        }
        self.victim_elsewhere(first, pins, incoming)
    }

    /// The partition furthest above its target (ties: the lowest index), skipping `skip`;
    /// `fallback` when none is above.
    fn most_over(&self, fallback: usize, skip: &[usize]) -> usize {
        let map = self.parts.map();
        let mut best: Option<(usize, usize)> = None;
        for q in 0..map.partitions() {
            if skip.contains(&q) || map.len(q) == 0 {
                continue;
            }
            let over = map.excess(q);
            if over > 0 && best.is_none_or(|(b, _)| over > b) {
                best = Some((over, q));
            }
        }
        best.map_or(fallback, |(_, q)| q)
    }

    /// Every frame of `tried` is pinned: the others, furthest above target first, then in
    /// index order.
    #[cold]
    fn victim_elsewhere(&mut self, tried: usize, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let n = self.parts.partitions();
        let mut order: Vec<usize> = (0..n).filter(|&q| q != tried).collect();
        let map = self.parts.map();
        order.sort_by_key(|&q| (std::cmp::Reverse(map.excess(q)), q));
        order.into_iter().find_map(|q| self.parts.victim_in(q, pins, incoming))
    }

    /// Lazy partitioning (§2.2): an inverse lottery among the non-empty partitions, each holding
    /// tickets in inverse proportion to its target size; the drawn partition gives up its own
    /// least valuable block. A partition whose blocks are all pinned is left out of a redraw.
    #[inline]
    pub fn lottery_victim(&mut self, rng: &mut Rng, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let mut skip = [0u64; 4];
        loop {
            let p = self.parts.map().draw(rng, Steal::InverseTarget, |q| skip[q / 64] & (1 << (q % 64)) == 0)?;
            if let Some(f) = self.parts.victim_in(p, pins, incoming) {
                return Some(f);
            }
            skip[p / 64] |= 1 << (p % 64);
        }
    }

    pub fn check(&self, resident: usize) -> Result<(), String> {
        self.parts.check(resident)?;
        let sum: usize = self.targets.iter().sum();
        if !self.targets.is_empty() && sum != self.capacity {
            return Err(format!("partition targets {:?} sum to {sum}, cache {}", self.targets, self.capacity));
        }
        Ok(())
    }

    pub fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("partitions", self.devices.len() as f64));
        out.push(("epochs", self.repartitioner.epochs() as f64));
        out.push(("blocks_moved", self.moved as f64));
    }
}

/// Implements [`Policy`] for a newtype over [`DeviceSplit`] whose victim rule is `$victim`.
macro_rules! split_policy {
    ($ty:ty, |$s:ident, $pins:ident, $a:ident| $victim:expr) => {
        impl $crate::policy::Policy for $ty {
            #[inline]
            fn prepare_insert(&mut self, a: &$crate::policy::Access, o: $crate::policy::Origin) {
                self.split.prepare_insert(a, o)
            }
            #[inline]
            fn insert(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access, o: $crate::policy::Origin) {
                self.split.insert(f, a, o)
            }
            #[inline]
            fn hit(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access) {
                self.split.hit(f, a)
            }
            #[inline]
            fn first_demand(&mut self, f: $crate::policy::Frame, a: &$crate::policy::Access) {
                self.split.first_demand(f, a)
            }
            #[inline]
            fn victim(
                &mut self,
                $pins: &$crate::policy::Pins,
                $a: &$crate::policy::Access,
            ) -> Option<$crate::policy::Frame> {
                let $s = self;
                $victim
            }
            #[inline]
            fn remove(&mut self, f: $crate::policy::Frame, key: u64, why: $crate::policy::Removal) {
                self.split.remove(f, key, why)
            }
            fn check(&self, resident: usize) -> Result<(), String> {
                self.split.check(resident)
            }
            fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
                self.split.metrics(out)
            }
            fn partition_timeline(&self) -> Option<&$crate::policy::partition::Timeline> {
                Some(self.split.timeline())
            }
            fn storage(&mut self, view: &$crate::policy::storage::StorageView) {
                self.split.storage(view)
            }
            #[inline]
            fn device_done(&mut self, device: u16, wait_ns: u64, now: u64) {
                self.split.device_done(device, wait_ns, now)
            }
            #[inline]
            fn reallocate(&mut self, pins: &$crate::policy::Pins) -> Option<$crate::policy::Frame> {
                self.split.reallocate(pins)
            }
        }
    };
}
pub(crate) use split_policy;

#[cfg(test)]
mod tests {
    use super::super::test_support::{on, view};
    use super::super::{EagerLru, LazyClock, LazyLru, RepartitionConfig, StaticSplit};
    use crate::layout::block_key;
    use crate::policy::steps::Steps;
    use crate::policy::Policy;

    fn cfg() -> RepartitionConfig {
        RepartitionConfig { window: 4, threshold: 1.5, base: 1, tolerance: 0.01 }
    }

    fn go<P: Policy>(s: &mut Steps<P>, device: u16, block: u64) -> char {
        s.demand_access(on(device, block))
    }

    #[test]
    fn lazy_eager_evicts_from_the_new_blocks_partition_until_targets_move() {
        let mut s = Steps::new(EagerLru::new(4, cfg(), false), 4);
        s.cache.policy.storage(&view(&[1.0, 1.0]));
        assert_eq!(s.policy().split().targets(), &[2, 2]);
        // dev0: [1 0], dev1: [11 10]
        for (d, b) in [(0, 0), (0, 1), (1, 10), (1, 11)] {
            assert_eq!(go(&mut s, d, b), 'M');
        }
        // dev0's 2 at its target: dev0's own LRU block (0) goes. dev0: [2 1]
        assert_eq!(go(&mut s, 0, 2), 'M');
        assert!(!s.cache.contains(block_key(0, 0)) && s.cache.contains(block_key(1, 10)));
        // An epoch (4 reads) in which device 0 waited 9 ms a read, device 1 1 ms: relative waits
        // 1.8 and 0.2, so device 0 warms and takes I = 1 block: targets 3 and 1.
        for _ in 0..2 {
            s.cache.policy.device_done(0, 9_000_000, 100);
            s.cache.policy.device_done(1, 1_000_000, 100);
        }
        assert_eq!(s.policy().split().targets(), &[3, 1]);
        // dev0 below target: its next miss takes dev1's LRU block (10). dev0: [3 2 1], dev1: [11]
        assert_eq!(go(&mut s, 0, 3), 'M');
        assert!(!s.cache.contains(block_key(1, 10)) && s.cache.contains(block_key(0, 1)));
        // Now at target: its own LRU (1) goes.
        assert_eq!(go(&mut s, 0, 4), 'M');
        assert!(!s.cache.contains(block_key(0, 1)) && s.cache.contains(block_key(1, 11)));
        assert_eq!(s.policy().split().parts().map().sizes(), &[3, 1]);
        let t = s.policy().split().timeline();
        assert_eq!((t.samples(), t.tag(0, 0), t.size(0, 0), t.value(0, 0)), (1, 3, 2, Some(18.0)));
    }

    #[test]
    fn eager_reallocates_blocks_above_a_new_target_at_once() {
        // §2.3: "when new partition sizes are desired, the algorithm immediately reallocates
        // pages". The epoch of the test above moves the targets to 3 and 1: dev1's block above
        // its target leaves at once, its frame free for dev0.
        let mut s = Steps::new(EagerLru::new(4, cfg(), true), 4);
        s.cache.policy.storage(&view(&[1.0, 1.0]));
        for (d, b) in [(0, 0), (0, 1), (1, 10), (1, 11), (0, 2)] {
            assert_eq!(go(&mut s, d, b), 'M');
        }
        assert_eq!(s.cache.reallocate_one(), None); // every partition at its target
        for _ in 0..2 {
            s.cache.policy.device_done(0, 9_000_000, 100);
            s.cache.policy.device_done(1, 1_000_000, 100);
        }
        assert_eq!(s.policy().split().targets(), &[3, 1]);
        // dev1's LRU block (10) goes now; then no partition is above its target.
        assert!(s.cache.reallocate_one().is_some());
        assert_eq!(s.cache.reallocate_one(), None);
        assert!(!s.cache.contains(block_key(1, 10)) && s.cache.contains(block_key(1, 11)));
        assert_eq!(s.policy().split().parts().map().sizes(), &[2, 1]);
        // dev1 at its target takes the free frame for 12 and gives its own LRU block (11) back
        // at once: the frame stays free for dev0.
        assert_eq!(go(&mut s, 1, 12), 'M');
        assert!(!s.cache.contains(block_key(1, 11)) && s.cache.contains(block_key(1, 12)));
        assert_eq!(s.policy().split().parts().map().sizes(), &[2, 1]);
        // dev0 below its target fills the free frame, evicting nothing.
        assert_eq!(go(&mut s, 0, 3), 'M');
        assert!(s.cache.contains(block_key(0, 1)) && s.cache.contains(block_key(1, 12)));
        assert_eq!(s.policy().split().parts().map().sizes(), &[3, 1]);
    }

    #[test]
    fn static_targets_follow_costs_and_equal_tickets_spread_the_victims() {
        // 3 devices of expected cost 6:3:1 ms: static targets 600 / 300 / 100 (the lottery's
        // inverse proportions are checked in partition.rs).
        let mut p = StaticSplit::new(1000, 4096, None, 1000);
        p.storage(&view(&[6.0, 3.0, 1.0]));
        assert_eq!(p.split().targets(), &[600, 300, 100]);
        // A chosen ratio (Figure 4): every slower device gets 4 times a fastest device's share.
        let mut p = StaticSplit::new(1000, 4096, Some(4.0), 1000);
        p.storage(&view(&[6.0, 3.0, 1.0, 1.0]));
        assert_eq!(p.split().targets(), &[400, 400, 100, 100]);
        // Equal devices: none is slower, equal shares whatever the ratio.
        let mut p = StaticSplit::new(1000, 4096, Some(40.0), 1000);
        p.storage(&view(&[2.0, 2.0]));
        assert_eq!(p.split().targets(), &[500, 500]);
        let mut lazy = LazyLru::new(1000, cfg(), 3);
        lazy.storage(&view(&[1.0, 1.0, 1.0]));
        let mut s = Steps::new(lazy, 1000);
        for b in 0..1000u64 {
            go(&mut s, (b % 3) as u16, b);
        }
        // Equal targets: victims spread evenly, whatever the sizes.
        let mut taken = [0u32; 3];
        for b in 1000..4000u64 {
            let before: Vec<usize> = s.policy().split().parts().map().sizes().to_vec();
            go(&mut s, 0, b);
            let after = s.policy().split().parts().map().sizes();
            for d in 1..3 {
                if after[d] < before[d] {
                    taken[d] += 1;
                }
            }
            if after[0] == before[0] {
                taken[0] += 1;
            }
        }
        // Partitions 1 and 2 shrink until empty; before that each lost about a third of the victims.
        assert_eq!(s.policy().split().parts().map().sizes(), &[1000, 0, 0]);
        assert!(taken[1] >= 333 && taken[2] >= 333, "{taken:?}");
        s.cache.check().unwrap();
    }

    #[test]
    fn lazy_clock_sweeps_only_the_victims_partition() {
        let mut s = Steps::new(LazyClock::new(4, cfg(), 9), 4);
        s.cache.policy.storage(&view(&[1.0, 1.0]));
        for (d, b) in [(0, 0), (0, 1), (1, 10), (1, 11)] {
            go(&mut s, d, b);
        }
        // Every block referenced.
        for (d, b) in [(0, 0), (0, 1), (1, 10), (1, 11)] {
            assert_eq!(go(&mut s, d, b), 'H');
        }
        go(&mut s, 0, 2);
        let split = s.policy().split();
        let bits = |p: usize| split.parts().part(p).ring_from_hand().iter().filter(|f| f.1).count();
        // The drawn partition's hand cleared its bits and took a block; the other kept its bits.
        let drawn = if split.parts().map().len(0) == 2
            && s.cache.contains(block_key(1, 10))
            && s.cache.contains(block_key(1, 11))
        {
            0
        } else {
            1
        };
        assert_eq!(bits(1 - drawn), 2, "the other partition's use bits stay set");
        assert_eq!(bits(drawn), 0);
    }

    #[test]
    fn long_runs_keep_timeline_samples_evenly_spaced() {
        // One device request per epoch, 3 x the samples a timeline holds: after each halving
        // the timeline samples every other epoch, so old and new samples keep one spacing.
        let mut p = EagerLru::new(4, RepartitionConfig { window: 1, ..cfg() }, true);
        p.storage(&view(&[1.0, 1.0]));
        let epochs = 3 * super::TIMELINE_SAMPLES as u64;
        for e in 1..=epochs {
            p.device_done((e % 2) as u16, 1_000_000, e * 10);
        }
        let t = p.split().timeline();
        assert!(t.samples() > super::TIMELINE_SAMPLES / 4 && t.samples() < super::TIMELINE_SAMPLES, "{}", t.samples());
        let gaps: Vec<u64> = t.times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g == gaps[0]), "uneven gaps {:?}", &gaps[..8]);
        assert_eq!(t.times[0], 10);
        assert!(epochs * 10 - t.times.last().unwrap() < gaps[0]);
    }

    #[test]
    fn devices_the_view_did_not_list_get_a_partition_on_first_sight() {
        let mut s = Steps::new(EagerLru::new(6, cfg(), true), 6);
        for (d, b) in [(0, 0), (3, 1), (3, 2), (5, 3)] {
            go(&mut s, d, b);
        }
        let split = s.policy().split();
        assert_eq!(split.devices(), &[0, 3, 5]);
        assert_eq!(split.targets(), &[2, 2, 2]);
        assert_eq!(split.parts().map().sizes(), &[1, 2, 1]);
    }
}
