//! Storage-aware caching (Forney, Arpaci-Dusseau, Arpaci-Dusseau, "Storage-Aware Caching:
//! Revisiting Caching for Heterogeneous Storage Systems", FAST '02): one cache partition per
//! device, sized so that every device does the same work (§2.2-§3).
//!
//! - [`repartition`]: the wait-time repartitioning algorithm of §3.1;
//! - [`split`]: the partition-per-device machinery the partitioned policies share;
//! - the policies, one file each: [`static_split`] (`static`, §5.2), [`eager_lru`] and
//!   [`lazy_lru`] (§2.3, §5.3), [`lazy_clock`] (Partitioned-Clock, §3.2) and [`landlord`]
//!   (LANDLORD with device costs, §2.1).
//!
//! The engines tell these policies about the storage through two hooks of the policy contract:
//! [`crate::policy::Policy::storage`] (the devices and their expected service times, once) and
//! [`crate::policy::Policy::device_done`] (the wait of every completed device read).

pub mod eager_lru;
pub mod landlord;
pub mod lazy_clock;
pub mod lazy_lru;
pub mod repartition;
pub mod split;
pub mod static_split;

pub use bufsim_device::ExpectedService;
pub use eager_lru::EagerLru;
pub use landlord::Landlord;
pub use lazy_clock::LazyClock;
pub use lazy_lru::LazyLru;
pub use repartition::{Epoch, RepartitionConfig, Repartitioner, WaitState};
pub use split::DeviceSplit;
pub use static_split::StaticSplit;

use super::partition::TimelineClock;
use crate::policy::Range;

/// One device under the cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceInfo {
    pub device: u16,
    /// Its expected service time (from its model: average positioning plus transfer at its
    /// peak rate; storage-aware §5.2).
    pub expected: ExpectedService,
}

/// What the engine tells policies about the storage before the run.
#[derive(Clone, Debug, PartialEq)]
pub struct StorageView {
    /// Every device the run places blocks on, by increasing id.
    pub devices: Vec<DeviceInfo>,
    pub block_size: u64,
    /// What the `now` of [`crate::policy::Policy::device_done`] counts.
    pub clock: TimelineClock,
}

impl StorageView {
    /// The devices `ids`, all with the expected service time `expected`.
    pub fn uniform(
        ids: impl IntoIterator<Item = u16>,
        expected: ExpectedService,
        block_size: u64,
        clock: TimelineClock,
    ) -> Self {
        StorageView {
            devices: ids.into_iter().map(|device| DeviceInfo { device, expected }).collect(),
            block_size,
            clock,
        }
    }

    pub fn expected(&self, device: u16) -> Option<ExpectedService> {
        self.devices.iter().find(|d| d.device == device).map(|d| d.expected)
    }
}

/// Spec parameters shared by the repartitioning policies (`eager-lru`, `lazy-lru`,
/// `lazy-clock`): §3.1's W, T and I.
pub(crate) const WINDOW: super::ParamInfo = super::ParamInfo {
    name: "window",
    default: "1000",
    doc: "W: device requests per repartitioning epoch (§3.1)",
    range: Range::Whole(1, u64::MAX),
};
pub(crate) const THRESHOLD: super::ParamInfo = super::ParamInfo {
    name: "threshold",
    default: "5",
    doc: "T: a partition consumes pages when its device's wait time is above T times the mean (§3.1; at least 1)",
    range: Range::Number(1.0, 1e6),
};
pub(crate) const STEP: super::ParamInfo = super::ParamInfo {
    name: "step",
    default: "0.2%",
    doc: "I: base correction, relative to the cache (0.2%) or absolute (100blocks, 1MiB) (§3.1)",
    range: Range::Share(0.0, 1.0),
};
pub(crate) const TOLERANCE: super::ParamInfo = super::ParamInfo {
    name: "constant",
    default: "0.01",
    doc: "relative change of a wait time from one epoch to the next below which it counts as constant (warm, Figure 1)",
    range: Range::Number(0.0, 1.0),
};

/// §3.1's configuration from a policy's arguments.
pub(crate) fn repartition_config(
    args: &super::Args,
    env: &super::BuildEnv,
) -> Result<RepartitionConfig, crate::spec::SpecError> {
    let window = args.u64("window")?;
    if window == 0 {
        return Err(crate::spec::SpecError(format!(
            "policy parameter window=`{}` must be at least 1 device request",
            args.text("window")
        )));
    }
    Ok(RepartitionConfig {
        window,
        threshold: args.f64("threshold")?,
        base: (args.blocks("step", env)? as usize).max(1),
        tolerance: args.f64("constant")?,
    })
}

/// Hand-made accesses and storage views for the storage-aware policies' step tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{DeviceInfo, ExpectedService, StorageView};
    use crate::layout::block_key;
    use crate::policy::partition::TimelineClock;
    use crate::policy::Access;

    /// A demand access to `block` of `device`.
    pub fn on(device: u16, block: u64) -> Access {
        Access { key: block_key(device, block), device, block, ..Access::default() }
    }

    /// Devices 0, 1, ... whose expected service time is `costs_ms[d]` ms whatever the size.
    pub fn view(costs_ms: &[f64]) -> StorageView {
        let devices = costs_ms
            .iter()
            .enumerate()
            .map(|(d, &ms)| DeviceInfo {
                device: d as u16,
                expected: ExpectedService { positioning_ns: ms * 1e6, ns_per_block: 0.0, ns_per_byte: 0.0 },
            })
            .collect();
        StorageView { devices, block_size: 4096, clock: TimelineClock::Nanoseconds }
    }
}
