//! I/O clustering (prefetching paper §2.1): block reads queued one by one become disk requests
//! of consecutive device blocks. A block that does not continue the queued run, a run at the
//! size limit, or a synchronous block behind an asynchronous run (the reader is waiting; AccuSim
//! issues the queued prefetch first) closes the run. A request is synchronous if any of its
//! blocks is a demand read.

/// One disk request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskRequest {
    pub device: u16,
    pub start: u64,
    pub blocks: u64,
    pub sync: bool,
}

/// A count per size in blocks: sizes below `N - 1` are counted exactly, `N - 1` and larger
/// share the last bucket. Each addition says what it counts (one request, or a run's blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeHistogram<const N: usize> {
    counts: [u64; N],
}

impl<const N: usize> Default for SizeHistogram<N> {
    fn default() -> Self {
        SizeHistogram { counts: [0; N] }
    }
}

impl<const N: usize> SizeHistogram<N> {
    /// The largest size with a bucket of its own; larger sizes count here too.
    pub const MAX: u64 = N as u64 - 1;

    /// Adds `weight` to the bucket of `size`.
    #[inline]
    pub fn add(&mut self, size: u64, weight: u64) {
        self.counts[size.min(Self::MAX) as usize] += weight;
    }

    /// (size in blocks, count) for every size with a count, smallest first; the last size
    /// stands for itself and anything larger.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(s, &c)| (s as u64, c))
    }
}

/// How many disk requests had each size in blocks (`add(size, 1)`), exact up to DULO's longest
/// sequence (128 blocks, §3.3 rule 4).
pub type RequestSizes = SizeHistogram<129>;

pub struct Clusterer {
    max_blocks: u64,
    pending: Option<DiskRequest>,
}

impl Clusterer {
    /// Runs of at most `max_blocks` blocks (at least 1).
    pub fn new(max_blocks: u64) -> Self {
        Clusterer { max_blocks: max_blocks.max(1), pending: None }
    }

    /// Queues one block read; returns the request it closed, if any.
    #[inline]
    pub fn add(&mut self, device: u16, block: u64, sync: bool) -> Option<DiskRequest> {
        if let Some(p) = &mut self.pending {
            let joins = p.device == device
                && p.start.checked_add(p.blocks) == Some(block)
                && p.blocks < self.max_blocks
                && (!sync || p.sync);
            if joins {
                p.blocks += 1;
                return None;
            }
        }
        self.pending.replace(DiskRequest { device, start: block, blocks: 1, sync })
    }

    /// Issues whatever is queued (the end of an application request unplugs the queue).
    #[inline]
    pub fn flush(&mut self) -> Option<DiskRequest> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(c: &mut Clusterer, blocks: &[(u16, u64, bool)]) -> Vec<DiskRequest> {
        let mut out: Vec<DiskRequest> = blocks.iter().filter_map(|&(d, b, s)| c.add(d, b, s)).collect();
        out.extend(c.flush());
        out
    }

    #[test]
    fn consecutive_blocks_join_up_to_the_limit() {
        let mut c = Clusterer::new(4);
        let r = run(
            &mut c,
            &[(0, 10, true), (0, 11, false), (0, 12, false), (0, 13, false), (0, 14, false), (0, 20, false)],
        );
        assert_eq!(
            r,
            vec![
                DiskRequest { device: 0, start: 10, blocks: 4, sync: true },
                DiskRequest { device: 0, start: 14, blocks: 1, sync: false },
                DiskRequest { device: 0, start: 20, blocks: 1, sync: false },
            ]
        );
    }

    #[test]
    fn devices_and_sync_after_async_split_runs() {
        let mut c = Clusterer::new(16);
        let r = run(&mut c, &[(0, 1, false), (0, 2, true), (1, 3, true), (1, 4, false)]);
        assert_eq!(r.len(), 3);
        assert!(!r[0].sync && r[1].sync && r[2].sync);
        assert_eq!(r[2].blocks, 2);
    }
}
