//! The storage under the cache: one device model and one scheduler queue per device id, the
//! network between the cache and the devices, and the one place where a cache-level I/O
//! (consecutive blocks of one device) becomes a device request.
//!
//! The mapping is the identity: the layout has already placed every block on its device
//! (striping included, [`crate::array`]), and the clusterer never joins blocks of two devices,
//! so every cache-level I/O is one device request. An I/O is nevertheless tracked as a number
//! of outstanding *parts*, so a mapping that splits I/Os could be added here without touching
//! the engine.
//!
//! Without a network an I/O reaches its device queue at once and is done when the device
//! finishes it. With one ([`super::network`], storage-aware caching §4.4) the request crosses
//! the network first (an [`Event::Arrive`]) and the reply crosses it back after service (an
//! [`Event::Delivered`]). Faults ([`super::faults`]) scale the service time of requests a
//! device starts after them.

use bufsim_device::{build_device, build_scheduler, DeviceModel, IoRequest, Scheduler};

use super::events::{Event, EventQueue};
use super::faults::FaultSchedule;
use super::histogram::LatencyHistogram;
use super::network::{LogGp, Network};
use super::options::TimingOptions;
use super::sequences::{OpenSequence, SequenceSizes};
use crate::policy::partition::TimelineClock;
use crate::policy::storage::{DeviceInfo, StorageView};
use crate::spec::SpecError;

/// A cache-level I/O as the engine hands it over: consecutive blocks of one logical device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheIo {
    pub device: u16,
    pub start: u64,
    pub blocks: u64,
    pub write: bool,
    pub sync: bool,
}

/// One device: its model, its scheduler queue and what it did.
pub struct DeviceQueue {
    model: Box<dyn DeviceModel>,
    scheduler: Box<dyn Scheduler>,
    /// Requests the device is serving now (at most the model's queue depth).
    outstanding: u32,
    depth: u32,
    busy_since: u64,
    pub busy_ns: u64,
    pub requests: u64,
    /// Sum of the time requests spent queued before the device started them.
    pub queue_wait_ns: u64,
    /// Longest scheduler queue seen.
    pub max_queue: usize,
    /// Reads the cache waited for, and the time it waited for them in all.
    pub reads: u64,
    pub wait_ns: u64,
    faults: FaultSchedule,
    /// The disk access sequence the device is serving.
    sequence: OpenSequence,
}

impl DeviceQueue {
    fn new(model: Box<dyn DeviceModel>, scheduler: Box<dyn Scheduler>) -> Self {
        let depth = model.queue_depth().max(1);
        DeviceQueue {
            model,
            scheduler,
            outstanding: 0,
            depth,
            busy_since: 0,
            busy_ns: 0,
            requests: 0,
            queue_wait_ns: 0,
            max_queue: 0,
            reads: 0,
            wait_ns: 0,
            faults: FaultSchedule::default(),
            sequence: OpenSequence::default(),
        }
    }

    /// The model's expected service time.
    pub fn expected(&self) -> bufsim_device::ExpectedService {
        self.model.expected_service()
    }

    pub fn describe(&self) -> String {
        self.model.describe()
    }

    /// Starts queued requests while the device has room; each start schedules its completion.
    #[inline]
    fn dispatch(&mut self, device: u16, now: u64, events: &mut EventQueue, measures: &mut Measures) {
        while self.outstanding < self.depth {
            let head = self.model.head_block();
            let Some(req) = self.scheduler.pop(now, head) else { break };
            if self.outstanding == 0 {
                self.busy_since = now;
            }
            self.outstanding += 1;
            let mut took = self.model.service_ns(&req, now);
            let slow = self.faults.factor(now);
            if slow != 1.0 {
                took = (took as f64 * slow).round() as u64;
            }
            measures.service.record(took);
            self.sequence.serve(req.block, req.blocks as u64, &mut measures.sequences);
            self.queue_wait_ns += now - req.issue_ns;
            events.push(now.saturating_add(took), Event::Done { device, io: io_slot(req.id) });
        }
    }
}

/// Request ids carry the issue order in the high bits (schedulers break ties by id, oldest
/// first) and the engine's I/O slot in the low 32 bits.
#[inline]
fn request_id(serial: u64, slot: u32) -> u64 {
    (serial << 32) | slot as u64
}

#[inline]
fn io_slot(id: u64) -> u32 {
    id as u32
}

/// The queue of device `d`; the engine only names devices the layout placed blocks on, and
/// those are built before the run.
#[inline]
fn queue(devices: &mut [Option<DeviceQueue>], d: u16) -> &mut DeviceQueue {
    match devices.get_mut(d as usize) {
        Some(Some(q)) => q,
        _ => panic!("device {d} is not among the devices built for the run"),
    }
}

/// What the devices measure as they serve, over all devices.
#[derive(Default)]
pub struct Measures {
    /// Time each device request spent in service (start to completion).
    pub service: LatencyHistogram,
    /// Disk access sequences ([`super::sequences`]); a device's open one is added by
    /// [`Storage::close_sequences`].
    pub sequences: SequenceSizes,
}

/// Every device of a run, indexed by device id (ids the trace never names hold `None`).
pub struct Storage {
    devices: Vec<Option<DeviceQueue>>,
    network: Option<Network>,
    block_size: u32,
    serial: u64,
    pub measures: Measures,
}

impl Storage {
    /// The devices `ids` (device 0 if none), each built from the same device and scheduler
    /// specs. Device `d` draws its random numbers (if its model has any) from `seed + d`.
    pub fn new(ids: &[u16], device: &str, scheduler: &str, seed: u64, block_size: u64) -> Result<Storage, SpecError> {
        let opts =
            TimingOptions { device: device.to_string(), scheduler: scheduler.to_string(), ..TimingOptions::default() };
        Storage::build(ids, &opts, seed, block_size)
    }

    /// The devices `ids` (device 0 if none) as `opts` describes them: each its own device spec
    /// (`device_for`, else `device`), the scheduler, the network and the faults. Device `d`
    /// draws its random numbers (if its model has any) from `seed + d`.
    pub fn build(ids: &[u16], opts: &TimingOptions, seed: u64, block_size: u64) -> Result<Storage, SpecError> {
        if block_size > u32::MAX as u64 {
            return Err(SpecError(format!("block size {block_size} is too large for timed mode (at most 4 GiB)")));
        }
        let ids = if ids.is_empty() { &[0u16][..] } else { ids };
        let known = |d: u16| ids.contains(&d);
        let list = || {
            let first = ids.iter().min().copied().unwrap_or(0);
            let last = ids.iter().max().copied().unwrap_or(0);
            if ids.len() as u32 == (last - first) as u32 + 1 {
                format!("{first}-{last}")
            } else {
                format!("{ids:?}")
            }
        };
        for (d, _) in &opts.device_for {
            if !known(*d) {
                return Err(SpecError(format!(
                    "device {d} (given a device spec of its own) is not among the run's devices {}",
                    list()
                )));
            }
        }
        for f in &opts.faults {
            if !known(f.device) {
                return Err(SpecError(format!("fault on device {}: not among the run's devices {}", f.device, list())));
            }
        }
        let len = ids.iter().copied().max().unwrap_or(0) as usize + 1;
        let mut devices: Vec<Option<DeviceQueue>> = (0..len).map(|_| None).collect();
        for &d in ids {
            let spec = opts.device_spec(d);
            let model =
                build_device(spec, seed.wrapping_add(d as u64)).map_err(|e| SpecError(format!("device {d}: {e}")))?;
            let mut q = DeviceQueue::new(model, build_scheduler(&opts.scheduler)?);
            q.faults = FaultSchedule::new(
                opts.faults.iter().filter(|f| f.device == d).map(|f| (f.at_ns, f.slowdown)).collect(),
            );
            devices[d as usize] = Some(q);
        }
        let network = LogGp::parse(&opts.network)?.map(|m| Network::new(m, len));
        Ok(Storage { devices, network, block_size: block_size as u32, serial: 0, measures: Measures::default() })
    }

    /// What storage-aware policies learn before the run: every device with its expected
    /// service time.
    pub fn view(&self) -> StorageView {
        StorageView {
            devices: self.devices().map(|(device, q)| DeviceInfo { device, expected: q.expected() }).collect(),
            block_size: self.block_size as u64,
            clock: TimelineClock::Nanoseconds,
        }
    }

    /// The devices with their ids.
    pub fn devices(&self) -> impl Iterator<Item = (u16, &DeviceQueue)> {
        self.devices.iter().enumerate().filter_map(|(d, q)| q.as_ref().map(|q| (d as u16, q)))
    }

    /// Hands the cache-level I/O in `slot` to the devices at `now`; returns how many device
    /// requests it became (its parts). The mapping from cache blocks to device requests lives
    /// here and nowhere else. With a network, the request reaches the device later
    /// ([`Event::Arrive`], then [`Storage::arrive`]).
    #[inline]
    pub fn submit(&mut self, io: &CacheIo, slot: u32, now: u64, events: &mut EventQueue) -> u32 {
        if let Some(net) = &mut self.network {
            let at = net.to_device(io.device, io.blocks * self.block_size as u64, io.write, now);
            events.push(at, Event::Arrive { device: io.device, io: slot });
        } else {
            self.arrive(io, slot, now, events);
        }
        1
    }

    /// The request of I/O `slot` reaches its device's queue at `now`.
    #[inline]
    pub fn arrive(&mut self, io: &CacheIo, slot: u32, now: u64, events: &mut EventQueue) {
        self.serial += 1;
        let req = IoRequest {
            id: request_id(self.serial, slot),
            device: io.device,
            block: io.start,
            blocks: io.blocks.min(u32::MAX as u64) as u32,
            block_size: self.block_size,
            write: io.write,
            sync: io.sync,
            issue_ns: now,
        };
        let dev = queue(&mut self.devices, io.device);
        dev.requests += 1;
        dev.scheduler.push(req, now);
        dev.max_queue = dev.max_queue.max(dev.scheduler.len());
        dev.dispatch(io.device, now, events, &mut self.measures);
    }

    /// Device `device` finished its part of I/O `slot` at `now`: it starts the next requests
    /// its scheduler gives it. Returns whether the part is done for the cache now; with a
    /// network the reply is still on its way ([`Event::Delivered`] follows).
    #[inline]
    pub fn complete(&mut self, device: u16, io: &CacheIo, slot: u32, now: u64, events: &mut EventQueue) -> bool {
        let dev = queue(&mut self.devices, device);
        dev.outstanding -= 1;
        if dev.outstanding == 0 {
            dev.busy_ns += now - dev.busy_since;
        }
        dev.dispatch(device, now, events, &mut self.measures);
        match &mut self.network {
            None => true,
            Some(net) => {
                let at = net.to_client(device, io.blocks * self.block_size as u64, io.write, now);
                events.push(at, Event::Delivered { device, io: slot });
                false
            }
        }
    }

    /// The cache waited `wait_ns` for a read of `device` (for its wait-time figures).
    #[inline]
    pub fn waited(&mut self, device: u16, wait_ns: u64) {
        let dev = queue(&mut self.devices, device);
        dev.reads += 1;
        dev.wait_ns += wait_ns;
    }

    /// The run is over: every device's open sequence counts as finished.
    pub fn close_sequences(&mut self) {
        for q in self.devices.iter_mut().flatten() {
            q.sequence.close(&mut self.measures.sequences);
        }
    }

    /// Device busy time summed over devices.
    pub fn busy_ns(&self) -> u64 {
        self.devices().map(|(_, d)| d.busy_ns).sum()
    }

    /// Whether no device has work left (queued or in service).
    pub fn idle(&self) -> bool {
        self.devices().all(|(_, d)| d.outstanding == 0 && d.scheduler.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_queue_behind_a_busy_disk_and_ids_keep_the_slot() {
        assert_eq!(io_slot(request_id(77, 12345)), 12345);
        let mut s = Storage::new(&[0], "avg", "noop", 1, 4096).unwrap();
        let mut ev = EventQueue::default();
        let io = CacheIo { device: 0, start: 10, blocks: 1, write: false, sync: true };
        assert_eq!(s.submit(&io, 0, 0, &mut ev), 1);
        s.submit(&CacheIo { start: 900, ..io }, 1, 1_000_000, &mut ev);
        // Only the first is in service: 9.5 ms.
        assert_eq!(ev.pop(), Some((9_500_000, Event::Done { device: 0, io: 0 })));
        assert!(ev.is_empty());
        assert!(s.complete(0, &io, 0, 9_500_000, &mut ev));
        assert_eq!(ev.pop(), Some((19_000_000, Event::Done { device: 0, io: 1 })));
        assert!(s.complete(0, &io, 1, 19_000_000, &mut ev));
        assert!(s.idle());
        assert_eq!(s.busy_ns(), 19_000_000);
        assert_eq!(s.devices().next().unwrap().1.queue_wait_ns, 8_500_000);
        assert_eq!(s.measures.service.count(), 2);
    }

    #[test]
    fn the_network_delays_requests_and_replies_and_faults_slow_the_device() {
        let opts = TimingOptions {
            device: "avg".into(),
            network: "loggp".into(),
            faults: vec![super::super::Fault { device: 1, at_ns: 5_000_000, slowdown: 2.0 }],
            ..TimingOptions::default()
        };
        let mut s = Storage::build(&[0, 1], &opts, 1, 4096).unwrap();
        let mut ev = EventQueue::default();
        let io = CacheIo { device: 1, start: 0, blocks: 2, write: false, sync: true };
        s.submit(&io, 7, 0, &mut ev);
        // The 64-byte request arrives after o + 63G + L + o = 1850 ns.
        assert_eq!(ev.pop(), Some((1850, Event::Arrive { device: 1, io: 7 })));
        s.arrive(&io, 7, 1850, &mut ev);
        assert_eq!(ev.pop(), Some((1850 + 9_500_000, Event::Done { device: 1, io: 7 })));
        assert!(!s.complete(1, &io, 7, 9_501_850, &mut ev));
        // 8 KiB + 64 B back: 400 + 6604 + 1000 + 400 ns.
        assert_eq!(ev.pop(), Some((9_501_850 + 8404, Event::Delivered { device: 1, io: 7 })));
        // After 5 ms device 1 is twice as slow.
        s.arrive(&io, 8, 9_600_000, &mut ev);
        assert_eq!(ev.pop(), Some((9_600_000 + 19_000_000, Event::Done { device: 1, io: 8 })));
        let e =
            Storage::build(&[0, 1], &TimingOptions { device_for: vec![(5, "avg".into())], ..opts.clone() }, 1, 4096)
                .err()
                .unwrap();
        assert!(e.to_string().contains("device 5"), "{e}");
        let view = s.view();
        assert_eq!(view.devices.len(), 2);
        assert_eq!(view.devices[1].expected.ns(1, 4096), 9.5e6);
    }
}
