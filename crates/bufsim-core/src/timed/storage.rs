//! The storage under the cache: one device model and one scheduler queue per device id, and
//! the one place where a cache-level I/O (consecutive blocks of one logical device) becomes
//! device requests.
//!
//! Today the mapping is the identity: logical device `d` is device `d`, block for block, and
//! every cache-level I/O is one device request. An I/O is nevertheless tracked as a number of
//! outstanding *parts*, so a striped volume (RAID-0 over several devices) or a network hop can
//! later split it here without touching the engine.

use bufsim_device::{build_device, build_scheduler, DeviceModel, IoRequest, Scheduler};

use super::events::{Event, EventQueue};
use super::histogram::LatencyHistogram;
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
        }
    }

    pub fn describe(&self) -> String {
        self.model.describe()
    }

    /// Starts queued requests while the device has room; each start schedules its completion.
    #[inline]
    fn dispatch(&mut self, device: u16, now: u64, events: &mut EventQueue, service: &mut LatencyHistogram) {
        while self.outstanding < self.depth {
            let head = self.model.head_block();
            let Some(req) = self.scheduler.pop(now, head) else { break };
            if self.outstanding == 0 {
                self.busy_since = now;
            }
            self.outstanding += 1;
            let took = self.model.service_ns(&req, now);
            service.record(took);
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

/// Every device of a run, indexed by device id (ids the trace never names hold `None`).
pub struct Storage {
    devices: Vec<Option<DeviceQueue>>,
    block_size: u32,
    serial: u64,
    /// Time each device request spent in service (start to completion).
    pub service: LatencyHistogram,
}

impl Storage {
    /// The devices `ids` (device 0 if none), each built from the same device and scheduler
    /// specs. Device `d` draws its random numbers (if its model has any) from `seed + d`.
    pub fn new(ids: &[u16], device: &str, scheduler: &str, seed: u64, block_size: u64) -> Result<Storage, SpecError> {
        if block_size > u32::MAX as u64 {
            return Err(SpecError(format!("block size {block_size} is too large for timed mode (at most 4 GiB)")));
        }
        let ids = if ids.is_empty() { &[0u16][..] } else { ids };
        let len = ids.iter().copied().max().unwrap_or(0) as usize + 1;
        let mut devices: Vec<Option<DeviceQueue>> = (0..len).map(|_| None).collect();
        for &d in ids {
            let model = build_device(device, seed.wrapping_add(d as u64))?;
            devices[d as usize] = Some(DeviceQueue::new(model, build_scheduler(scheduler)?));
        }
        Ok(Storage { devices, block_size: block_size as u32, serial: 0, service: LatencyHistogram::default() })
    }

    /// The devices with their ids.
    pub fn devices(&self) -> impl Iterator<Item = (u16, &DeviceQueue)> {
        self.devices.iter().enumerate().filter_map(|(d, q)| q.as_ref().map(|q| (d as u16, q)))
    }


    /// Hands the cache-level I/O in `slot` to the devices at `now`; returns how many device
    /// requests it became (its parts). The mapping from cache blocks to device requests lives
    /// here and nowhere else.
    #[inline]
    pub fn submit(&mut self, io: &CacheIo, slot: u32, now: u64, events: &mut EventQueue) -> u32 {
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
        dev.dispatch(io.device, now, events, &mut self.service);
        1
    }

    /// Device `device` finished a request at `now`: it starts the next ones its scheduler
    /// gives it.
    #[inline]
    pub fn complete(&mut self, device: u16, now: u64, events: &mut EventQueue) {
        let dev = queue(&mut self.devices, device);
        dev.outstanding -= 1;
        if dev.outstanding == 0 {
            dev.busy_ns += now - dev.busy_since;
        }
        dev.dispatch(device, now, events, &mut self.service);
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
        s.complete(0, 9_500_000, &mut ev);
        assert_eq!(ev.pop(), Some((19_000_000, Event::Done { device: 0, io: 1 })));
        s.complete(0, 19_000_000, &mut ev);
        assert!(s.idle());
        assert_eq!(s.busy_ns(), 19_000_000);
        assert_eq!(s.devices().next().unwrap().1.queue_wait_ns, 8_500_000);
        assert_eq!(s.service.count(), 2);
    }
}
