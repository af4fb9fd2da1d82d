//! Where blocks live on devices. Block traces use the identity; file traces place files one
//! after another in the order they are first touched, each with room for the largest size it
//! reaches in the trace (the prefetching paper §5.1: AccuSim's "first-touch layout", with file
//! sizes from a pre-pass).

use bufsim_trace::{AddressKind, Request};

use crate::spec::SpecError;

/// Bits of a cache key that hold the device block when the device number is not 0.
pub const DEVICE_SHIFT: u32 = 48;
const BLOCK_MASK: u64 = (1 << DEVICE_SHIFT) - 1;

/// Packs a device number and a device block into the cache key. Device 0 keys are the block
/// number itself, so any 64-bit block id (libCacheSim object ids) works on one device.
#[inline]
pub fn block_key(device: u16, block: u64) -> u64 {
    if device == 0 {
        block
    } else {
        ((device as u64) << DEVICE_SHIFT) | (block & BLOCK_MASK)
    }
}

/// The device block of cache key `key` on `device`: the inverse of [`block_key`] for the
/// device the key was made for.
#[inline]
pub fn key_block(device: u16, key: u64) -> u64 {
    if device == 0 {
        key
    } else {
        key & BLOCK_MASK
    }
}

/// The extent of every file (block traces: every device) a trace reaches, in blocks: one pass
/// gives the sizes first-touch placement and read-ahead's end-of-file need.
#[derive(Default)]
pub struct FileExtents {
    blocks: Vec<u64>,
}

impl FileExtents {
    /// Counts the blocks `r` touches. A drop touches none: it removes data, and a file cut to
    /// nothing keeps its room for what it held before. Nor does a hint: only reads and writes
    /// show that data exists (the kernel reads a hint's range no further than the file's end).
    #[inline]
    pub fn push(&mut self, r: &Request, block_size: u64) {
        // Every file the trace names gets its entry, even one only hinted or dropped: the
        // layout places it (at no room) all the same.
        let f = r.file as usize;
        if self.blocks.len() <= f {
            self.blocks.resize(f + 1, 0);
        }
        if !r.op.is_access() {
            return;
        }
        let (first, n) = r.block_range(block_size);
        self.blocks[f] = self.blocks[f].max(first.saturating_add(n));
    }

    /// Blocks of each file, indexed by `Request::file`.
    pub fn finish(self) -> Vec<u64> {
        self.blocks
    }
}

/// An explicit tag (`repr(u8)`): every request matches on the variant, and with the tag kept in
/// the vectors' spare bits instead it took ten instructions to decode.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum Layout {
    /// Device = the trace's device number, block = the trace's block.
    Identity,
    /// One device; file `i` starts at `base[i]` and spans `blocks[i]` blocks.
    FirstTouch { base: Vec<u64>, blocks: Vec<u64> },
    /// The blocks `base` places on device 0, striped over a RAID-0 array (storage-aware
    /// caching §4.1; [`crate::array`]).
    Striped { base: Box<Layout>, array: crate::array::Raid0 },
}

impl Layout {
    /// First-touch placement for files of the given sizes in blocks, listed in order of first
    /// touch, with `gap` free blocks between consecutive files. Refuses files that do not fit
    /// one after another on a device of 2^64 blocks: placed past its end they would wrap onto
    /// other files' blocks and share their cache entries.
    pub fn first_touch(file_blocks: &[u64], gap: u64) -> Result<Layout, SpecError> {
        let mut base = Vec::with_capacity(file_blocks.len());
        let mut next = Some(0u64);
        for (i, &n) in file_blocks.iter().enumerate() {
            let (Some(start), Some(end)) = (next, next.and_then(|b| b.checked_add(n))) else {
                let gap = if gap > 0 { format!(" with --file-gap {gap}blocks between them") } else { String::new() };
                return Err(SpecError(format!(
                    "the {} files of this trace, laid one after another on one device{gap} (first-touch layout), \
                     need more than 2^64 blocks: file {} of them would reach past the last block; give a larger \
                     --block-size (a file reaching offset X takes X / block size blocks) or a smaller --file-gap",
                    file_blocks.len(),
                    i + 1
                )));
            };
            base.push(start);
            next = end.checked_add(gap);
        }
        Ok(Layout::FirstTouch { base, blocks: file_blocks.to_vec() })
    }

    /// The layout the engine uses for a trace: identity for block traces, first-touch for file
    /// traces (one pass over `requests` for the file sizes).
    pub fn for_trace<'r>(
        kind: AddressKind,
        requests: impl Iterator<Item = &'r Request>,
        block_size: u64,
    ) -> Result<Layout, SpecError> {
        match kind {
            AddressKind::Device => Ok(Layout::Identity),
            AddressKind::File => {
                let mut ext = FileExtents::default();
                requests.for_each(|r| ext.push(r, block_size));
                Layout::first_touch(&ext.finish(), 0)
            }
        }
    }

    /// Blocks of file `file` (the room first-touch placement gave it: the most it ever holds), if
    /// the layout knows files (block traces address devices without an end).
    #[inline]
    pub fn file_blocks(&self, file: u32) -> Option<u64> {
        match self {
            Layout::Identity => None,
            Layout::FirstTouch { blocks, .. } => Some(blocks.get(file as usize).copied().unwrap_or(0)),
            Layout::Striped { base, .. } => base.file_blocks(file),
        }
    }

    /// The blocks `[first, end)` of `r`'s file (or device) that drop request `r` removes
    /// ([`Request::dropped_blocks`]); a drop of size 0 runs to the end of the file, and a
    /// device has no end, so there it removes nothing.
    #[inline]
    pub fn dropped_blocks(&self, r: &Request, block_size: u64) -> (u64, u64) {
        match self.file_blocks(r.file) {
            Some(n) => r.dropped_blocks(block_size, n),
            None if r.size == 0 => (0, 0),
            None => r.dropped_blocks(block_size, u64::MAX),
        }
    }

    /// The blocks `[first, end)` of `r`'s file (or device) that hint request `r` asks to be
    /// read ([`Request::hinted_blocks`]), up to `file_end` blocks when given (where the file ends
    /// now), else to the file's extent; a hint of size 0 runs to the end of the file, and a
    /// device has no end, so there it reads nothing.
    #[inline]
    pub fn hinted_blocks(&self, r: &Request, block_size: u64, file_end: Option<u64>) -> (u64, u64) {
        match file_end.or_else(|| self.file_blocks(r.file)) {
            Some(n) => r.hinted_blocks(block_size, n),
            None if r.size == 0 => (0, 0),
            None => r.hinted_blocks(block_size, u64::MAX),
        }
    }

    /// Whether the blocks of one file lie consecutively on one device, so a request's blocks
    /// are placed by placing its first one (every layout but striping).
    #[inline]
    pub fn contiguous(&self) -> bool {
        !matches!(self, Layout::Striped { .. })
    }

    /// Device and device block of block `block` of file (or device) `file`. Always inlined:
    /// count mode places every request twice (its index hint and its run), and as a call it
    /// cost more than its body.
    #[inline(always)]
    pub fn place(&self, file: u32, block: u64) -> (u16, u64) {
        match self {
            Layout::Identity => (file as u16, block),
            Layout::FirstTouch { base, .. } => (0, base[file as usize].wrapping_add(block)),
            Layout::Striped { base, array } => array.place(base.place_striped_base(file, block).1),
        }
    }

    /// [`Layout::place`] for the layout under a striping, as a call: a recursive `place` would
    /// not be inlined at all (the compiler leaves every call of a recursive function a call).
    #[inline(never)]
    fn place_striped_base(&self, file: u32, block: u64) -> (u16, u64) {
        self.place(file, block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gives_back_its_block() {
        for (device, block) in [(0u16, 7u64), (0, u64::MAX), (3, 0), (3, BLOCK_MASK), (u16::MAX, 12345)] {
            assert_eq!(key_block(device, block_key(device, block)), block);
        }
    }

    #[test]
    fn files_follow_each_other_in_first_touch_order() {
        let l = Layout::first_touch(&[3, 5, 1], 0).unwrap();
        assert_eq!(l.place(0, 2), (0, 2));
        assert_eq!(l.place(1, 0), (0, 3));
        assert_eq!(l.place(2, 0), (0, 8));
        let g = Layout::first_touch(&[3, 5], 10).unwrap();
        assert_eq!(g.place(1, 0), (0, 13));
    }

    #[test]
    fn files_that_do_not_fit_one_device_are_refused_not_wrapped() {
        // Files each reaching offset 2^64 - 4 KiB: 2^52 blocks each, so 4096 of them would end
        // at block 2^64 (block 2^64 - 1 cannot be addressed); once they wrapped onto block 0.
        let huge = vec![1u64 << 52; 4200];
        let e = Layout::first_touch(&huge, 0).unwrap_err().to_string();
        assert!(e.contains("4200 files") && e.contains("file 4096 of them") && e.contains("--block-size"), "{e}");
        let fits = Layout::first_touch(&huge[..4095], 0).unwrap();
        assert_eq!(fits.place(4094, (1 << 52) - 1), (0, u64::MAX - (1 << 52)));
        // The gap counts, but none follows the last file.
        let e = Layout::first_touch(&[1, 1], u64::MAX - 1).unwrap_err().to_string();
        assert!(e.contains("--file-gap 18446744073709551614blocks"), "{e}");
        assert_eq!(Layout::first_touch(&[1, 1], u64::MAX - 2).unwrap().place(1, 0), (0, u64::MAX - 1));
        assert!(Layout::first_touch(&[5], u64::MAX).is_ok());
    }

    #[test]
    fn striping_deals_the_logical_volume_over_the_array() {
        let array = crate::array::Raid0 { devices: 3, unit_blocks: 2 };
        let l = Layout::Striped { base: Box::new(Layout::first_touch(&[4, 4], 0).unwrap()), array };
        // File 1 starts at logical block 4: unit 2, device 2.
        assert_eq!(l.place(1, 0), (2, 0));
        assert_eq!(l.place(1, 2), (0, 2));
        assert_eq!(l.place(0, 3), (1, 1));
    }

    #[test]
    fn keys_keep_devices_apart() {
        assert_eq!(block_key(0, u64::MAX), u64::MAX);
        assert_ne!(block_key(1, 5), block_key(2, 5));
        assert_ne!(block_key(1, 5), block_key(0, 5));
    }
}
