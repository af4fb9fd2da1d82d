//! Per-block history shared by the distance and frequency analyses: when each block was last
//! referenced (logical time, counted in block accesses) and how often.

use rustc_hash::FxHashMap;

#[derive(Clone, Copy)]
struct Entry {
    last: u64,
    count: u64,
}

#[derive(Default)]
pub struct BlockHistory {
    blocks: FxHashMap<u64, Entry>,
    /// Sequence number of the next access (the MQ paper's logical time: 0 before any access).
    time: u64,
}

impl BlockHistory {
    /// References `key`: the temporal distance current(b) - prev(b) (MQ paper §3.1), or `None`
    /// on the block's first reference.
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        let now = self.time;
        self.time += 1;
        match self.blocks.get_mut(&key) {
            Some(e) => {
                let d = now - e.last;
                e.last = now;
                e.count += 1;
                Some(d)
            }
            None => {
                self.blocks.insert(key, Entry { last: now, count: 1 });
                None
            }
        }
    }

    /// Distinct blocks referenced.
    pub fn distinct(&self) -> u64 {
        self.blocks.len() as u64
    }

    pub fn accesses(&self) -> u64 {
        self.time
    }

    /// How many times each block was referenced (in no particular order).
    pub fn frequencies(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.values().map(|e| e.count)
    }
}
