//! LANDLORD with device costs: storage-aware caching §2.1 (Forney et al., FAST '02; Young's
//! LANDLORD in its LRU form), the paper's place-anywhere baseline. Deviation: the cost of a
//! block is its device's per-request wait, measured (docs/storage-aware.md); `cost=model` uses
//! the model's expected service time instead.
//!
//! "When an object enters the cache, LANDLORD sets L to H, which is the retrieval cost of the
//! object divided by the size of the object. If object eviction is needed, LANDLORD finds the
//! object with the lowest L value, removes it, and ages all of the remaining objects ... by
//! decrementing the L value of all remaining objects by the L value of the evicted object. Upon
//! reference of an object in the cache, LANDLORD restores its L value to H" (§2.1). That is
//! GreedyDual-Size with an inflation value (`gds`, which this policy runs): credit L + cost,
//! the victim's credit becomes the inflation. Objects are cache blocks (size 1).
//!
//! The cost is recorded when a block enters and when it is referenced, per block ("place-
//! anywhere algorithms only record the cost when the page is brought into the cache", §2.2):
//! with `cost=wait` (default) it is the mean time the cache waited per read of the block's
//! device over the last window of `window` device reads (all devices) in which that device was
//! read, so queueing at a popular disk and performance faults raise it (§5.3, §5.5); before a
//! device has a measurement, and always with
//! `cost=model`, it is the device's expected service time for a request of `request` bytes.

use super::{ExpectedService, StorageView};
use crate::policy::{
    Access, Args, BuildEnv, Capabilities, Frame, Gds, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Range,
    Removal,
};
use crate::spec::{Size, SpecError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostSource {
    /// Mean measured wait per device read over the last window (timed mode: queueing, network
    /// and faults included; count mode: the expected service time, so the same as `Model`).
    Wait,
    /// The device model's expected service time for the mean request.
    Model,
}

pub struct Landlord {
    gds: Gds,
    source: CostSource,
    window: u64,
    request_bytes: u64,
    block_size: u64,
    /// Cost of a block of each device id, ms (`NaN`: device not known yet).
    cost: Vec<f64>,
    expected: Vec<Option<ExpectedService>>,
    /// Reads and their summed waits per device in the current window.
    waits: Vec<(u64, f64)>,
    in_window: u64,
}

impl Landlord {
    pub fn new(capacity: usize, source: CostSource, window: u64, request_bytes: u64) -> Self {
        Landlord {
            gds: Gds::new(capacity),
            source,
            window: window.max(1),
            request_bytes,
            block_size: 4096,
            cost: Vec::new(),
            expected: Vec::new(),
            waits: Vec::new(),
            in_window: 0,
        }
    }

    /// The cost a block of `device` gets now, ms.
    #[inline]
    pub fn cost_of(&self, device: u16) -> f64 {
        match self.cost.get(device as usize) {
            Some(&c) if !c.is_nan() => c,
            // A device the storage view did not list: the mean cost of the others, or 1.
            _ => {
                let (n, sum) = self.cost.iter().filter(|c| !c.is_nan()).fold((0u32, 0.0), |(n, s), c| (n + 1, s + c));
                if n == 0 {
                    1.0
                } else {
                    sum / n as f64
                }
            }
        }
    }

    pub fn gds(&self) -> &Gds {
        &self.gds
    }

    #[inline]
    fn costed(&self, a: &Access) -> Access {
        Access { cost: self.cost_of(a.device), ..*a }
    }

    fn ensure(&mut self, device: u16) {
        let d = device as usize;
        if self.cost.len() <= d {
            self.cost.resize(d + 1, f64::NAN);
            self.expected.resize(d + 1, None);
            self.waits.resize(d + 1, (0, 0.0));
        }
    }
}

impl Policy for Landlord {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let a = self.costed(a);
        self.gds.insert(frame, &a, origin);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        let a = self.costed(a);
        self.gds.hit(frame, &a);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        let a = self.costed(a);
        self.gds.first_demand(frame, &a);
    }
    #[inline]
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        self.gds.victim(pins, incoming)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.gds.remove(frame, key, why);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.gds.check(resident)
    }
    fn storage(&mut self, view: &StorageView) {
        self.block_size = view.block_size.max(1);
        for d in &view.devices {
            self.ensure(d.device);
            self.expected[d.device as usize] = Some(d.expected);
            self.cost[d.device as usize] = d.expected.ns_for_bytes(self.request_bytes, self.block_size) / 1e6;
        }
    }
    #[inline]
    fn device_done(&mut self, device: u16, wait_ns: u64, _now: u64) {
        if self.source == CostSource::Model {
            return;
        }
        self.ensure(device);
        let w = &mut self.waits[device as usize];
        w.0 += 1;
        w.1 += wait_ns as f64;
        self.in_window += 1;
        if self.in_window >= self.window {
            self.in_window = 0;
            // A device read in this window costs its mean wait from now on; the others keep
            // the cost they had.
            for (d, w) in self.waits.iter_mut().enumerate() {
                if w.0 > 0 {
                    self.cost[d] = w.1 / w.0 as f64 / 1e6;
                }
                *w = (0, 0.0);
            }
        }
    }
    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("inflation", self.gds.inflation()));
    }
}

impl PolicyDef for Landlord {
    const INFO: PolicyInfo = PolicyInfo {
        name: "landlord",
        aliases: &[],
        paper: "storage-aware caching (Forney et al., FAST '02) §2.1: LANDLORD (Young) in its LRU form, GreedyDual-Size with device costs",
        summary: "credit = L + its device's cost per block, evict the least credit and age by it, a hit restores full credit; costs measured per device",
        params: &[
            ParamInfo { name: "cost", default: "wait", doc: "wait: each device's mean measured wait per read over the last window; model: its expected service time for `request` bytes", range: Range::Choice(&["wait", "model"]) },
            ParamInfo { name: "window", default: "1000", doc: "device reads per cost measurement window (cost=wait)", range: Range::Whole(1, u64::MAX) },
            ParamInfo { name: "request", default: "256KiB", doc: "request size of the model cost (cost=model, and before a device is measured)", range: Range::Bytes(1, 1 << 40) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let source = match args.choice("cost", &["wait", "model"])? {
            "model" => CostSource::Model,
            _ => CostSource::Wait,
        };
        let window = args.u64("window")?;
        if window == 0 {
            return Err(SpecError("policy `landlord`: parameter window must be at least 1".into()));
        }
        let request = match Size::parse(args.text("request")) {
            Ok(s) => s.to_blocks(env.block_size).max(1) * env.block_size,
            Err(e) => return Err(SpecError(format!("policy `landlord`: parameter request: {e}"))),
        };
        Ok(Landlord::new(env.capacity, source, window, request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::block_key;
    use crate::policy::steps::Steps;
    use crate::policy::storage::test_support::{on, view};

    #[test]
    fn blocks_of_a_costly_device_outlive_cheap_ones_and_costs_follow_measured_waits() {
        let mut s = Steps::new(Landlord::new(2, CostSource::Wait, 2, 4096), 2);
        s.cache.policy.storage(&view(&[3.0, 1.0]));
        assert_eq!((s.policy().cost_of(0), s.policy().cost_of(1)), (3.0, 1.0));
        // A (dev0, H 3), B (dev1, H 1); C (dev1): B goes (L = 1), H_C = 2; D (dev1): C goes
        // (L = 2), H_D = 3; E (dev1): A (H 3, touched first) goes. The costly A outlived B and C.
        for (d, b, want) in [(0, 1, 'M'), (1, 2, 'M'), (1, 3, 'M'), (1, 4, 'M')] {
            assert_eq!(s.demand_access(on(d, b)), want);
        }
        assert!(s.cache.contains(block_key(0, 1)) && s.cache.contains(block_key(1, 4)));
        assert_eq!(s.policy().gds().inflation(), 2.0);
        // Measured: a window of 2 reads, device 1 waited 8 ms on average: it now costs 8.
        s.cache.policy.device_done(1, 6_000_000, 0);
        s.cache.policy.device_done(1, 10_000_000, 0);
        assert_eq!((s.policy().cost_of(0), s.policy().cost_of(1)), (3.0, 8.0));
        // Model costs never move.
        let mut m = Landlord::new(2, CostSource::Model, 2, 4096);
        m.storage(&view(&[3.0, 1.0]));
        m.device_done(1, 6_000_000, 0);
        m.device_done(1, 10_000_000, 0);
        assert_eq!(m.cost_of(1), 1.0);
        // An unlisted device costs the mean of the listed ones.
        assert_eq!(m.cost_of(9), 2.0);
    }
}
