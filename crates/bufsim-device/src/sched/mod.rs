//! I/O schedulers: the order in which queued requests reach a device. One file per scheduler;
//! [`SortedQueue`] is the sector-ordered queue the seek-aware ones share.

pub mod cscan;
pub mod deadline;
pub mod noop;
pub mod sstf;

pub use cscan::CScan;
pub use deadline::Deadline;
pub use noop::Noop;
pub use sstf::Sstf;

use crate::IoRequest;

/// Requests sorted by (block, id): ties at one block go to the oldest id. A sorted vector
/// rather than a tree: queues are short (tens of requests), and once it has grown to the
/// longest queue of the run it allocates nothing more.
#[derive(Default)]
pub struct SortedQueue {
    items: Vec<IoRequest>,
}

#[inline]
fn key(r: &IoRequest) -> (u64, u64) {
    (r.block, r.id)
}

impl SortedQueue {
    pub fn insert(&mut self, req: IoRequest) {
        let k = key(&req);
        let at = self.items.partition_point(|r| key(r) < k);
        self.items.insert(at, req);
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&IoRequest> {
        self.items.get(i)
    }

    pub fn remove(&mut self, i: usize) -> IoRequest {
        self.items.remove(i)
    }

    /// Index of the request with this (block, id), if queued.
    pub fn find(&self, block: u64, id: u64) -> Option<usize> {
        self.items.binary_search_by(|r| key(r).cmp(&(block, id))).ok()
    }

    /// Index of the first request at or after `block`.
    pub fn first_at_or_after(&self, block: u64) -> usize {
        self.items.partition_point(|r| r.block < block)
    }
}

#[cfg(test)]
pub(crate) fn req(id: u64, block: u64) -> IoRequest {
    IoRequest { id, device: 0, block, blocks: 1, block_size: 4096, write: false, sync: true, issue_ns: 0 }
}
