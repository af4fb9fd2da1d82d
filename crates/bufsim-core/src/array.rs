//! RAID-0 striping (storage-aware caching §4.1: "data block requests that have been striped
//! with RAID-0 across the full set of disks"): the blocks of one logical volume dealt out to
//! `devices` devices in stripe units of `unit` blocks, round robin. Logical stripe unit `k`
//! lives on device `k mod N` at device unit `k div N`.
//!
//! Striping happens in the layout ([`crate::layout::Layout::Striped`]), before the cache: the
//! cache and its policies see each block with the device that holds it, which storage-aware
//! policies partition by, and the clusterer never joins blocks of different devices, so every
//! disk request goes to one device.

use crate::spec::{Size, Spec, SpecError};

/// Devices an array has when its spec gives none (§4.1: sixteen network-attached disks).
pub const DEFAULT_DEVICES: u16 = 16;
/// Stripe unit when none is given. The paper does not say; see docs/storage-aware.md.
pub const DEFAULT_UNIT: &str = "8KiB";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid0 {
    pub devices: u16,
    /// Stripe unit in blocks.
    pub unit_blocks: u64,
}

impl Raid0 {
    /// Parses `raid0(devices=16,unit=8KiB)`, `raid0`, or a bare device count (`16`), for
    /// blocks of `block_size` bytes. The unit must be a whole number of blocks.
    pub fn parse(text: &str, block_size: u64) -> Result<Raid0, SpecError> {
        let t = text.trim();
        let spec = if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
            Spec { name: "raid0".into(), args: vec![("devices".into(), t.into())] }
        } else {
            Spec::parse(t)?
        };
        if !spec.name.eq_ignore_ascii_case("raid0") {
            return Err(SpecError(format!(
                "unknown array `{}`; use raid0(devices=N,unit=SIZE) or a device count such as 16",
                spec.name
            )));
        }
        let mut devices = DEFAULT_DEVICES as u64;
        let mut unit = DEFAULT_UNIT.to_string();
        for (k, v) in &spec.args {
            match k.as_str() {
                "devices" => {
                    devices = v.trim().parse().ok().filter(|&n| (1..=254).contains(&n)).ok_or_else(|| {
                        SpecError(format!("array: devices=`{v}` must be a whole number from 1 to 254"))
                    })?
                }
                "unit" => unit = v.clone(),
                _ => return Err(SpecError(format!("array raid0 has no parameter `{k}`; it takes devices, unit"))),
            }
        }
        let unit_blocks = match Size::parse(&unit).map_err(|e| SpecError(format!("array: unit: {e}")))? {
            Size::Blocks(n) => n,
            Size::Bytes(b) => {
                if b % block_size != 0 {
                    return Err(SpecError(format!(
                        "array: stripe unit `{unit}` must be a whole number of {block_size}-byte blocks"
                    )));
                }
                b / block_size
            }
        };
        if unit_blocks == 0 {
            return Err(SpecError("array: stripe unit must be at least one block".into()));
        }
        Ok(Raid0 { devices: devices as u16, unit_blocks })
    }

    /// Device and device block of logical block `block`.
    #[inline]
    pub fn place(&self, block: u64) -> (u16, u64) {
        let n = self.devices as u64;
        let unit = block / self.unit_blocks;
        ((unit % n) as u16, (unit / n) * self.unit_blocks + block % self.unit_blocks)
    }

    /// The spec this array stands for, as results record it.
    pub fn describe(&self, block_size: u64) -> String {
        format!("raid0(devices={},unit={}KiB)", self.devices, self.unit_blocks * block_size / 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_go_round_robin() {
        let a = Raid0::parse("raid0(devices=4,unit=8KiB)", 4096).unwrap();
        assert_eq!(a, Raid0 { devices: 4, unit_blocks: 2 });
        // Logical blocks 0-1 on device 0, 2-3 on device 1, ..., 8-9 back on device 0.
        let placed: Vec<(u16, u64)> = (0..10).map(|b| a.place(b)).collect();
        assert_eq!(placed, [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (0, 2), (0, 3)]);
        assert_eq!(Raid0::parse("16", 4096).unwrap(), Raid0 { devices: 16, unit_blocks: 2 });
        assert_eq!(Raid0::parse("raid0(unit=3blocks)", 4096).unwrap().unit_blocks, 3);
    }

    #[test]
    fn bad_arrays_are_explained() {
        for (spec, word) in [
            ("raid5", "unknown array"),
            ("raid0(devices=0)", "1 to 254"),
            ("raid0(unit=6KiB)", "whole number of 4096-byte blocks"),
            ("raid0(disks=3)", "no parameter `disks`"),
            ("raid0(unit=fast)", "unit"),
            ("raid0(unit=0)", "at least one block"),
            ("raid0(unit=0B)", "at least one block"),
        ] {
            let e = Raid0::parse(spec, 4096).unwrap_err().to_string();
            assert!(e.contains(word), "{spec}: {e}");
        }
    }
}
