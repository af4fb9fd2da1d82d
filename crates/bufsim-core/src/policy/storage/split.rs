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
        }
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
    fn end_epoch(&mut self, now: u64) {
        if self.adapt {
            self.moved += self.repartitioner.repartition(&mut self.targets) as u64;
            for (p, &t) in self.targets.iter().enumerate() {
                self.parts.map_mut().set_target(p, Some(t));
            }
        } else {
            // Static partitions: the epoch only measures (the classification is kept for the
            // record; the targets stay).
            self.scratch.clone_from(&self.targets);
            self.repartitioner.repartition(&mut self.scratch);
        }
        let last = self.repartitioner.last();
        self.timeline.record_values(
            now,
            self.parts.map().sizes().iter().copied(),
            self.targets.iter().map(|&t| t as u64),
            last.wait_ns.iter().map(|w| w / 1e6),
        );
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
            fn victim(&mut self, $pins: &$crate::policy::Pins, $a: &$crate::policy::Access) -> Option<$crate::policy::Frame> {
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
        }
    };
}
pub(crate) use split_policy;
