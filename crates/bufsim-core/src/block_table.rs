//! DULO's block table (Jiang, Ding, Chen, Xiang, Zhang, FAST 2005, §3.2): for each disk, a
//! multi-level table indexed by disk block number, like a page table, that records the last two
//! bank-clock times at which each block was sequenced.
//!
//! - Leaves hold block table entries (BTEs): at most two times each; a new time pushes out the
//!   older one. Time 0 means "never".
//! - Every directory entry keeps the most recent time of anything below it, so a traversal for
//!   the blocks stamped with the current time enters only directories holding one, and
//!   reclamation drops whole subtrees whose time is below a threshold.
//! - Nodes are allocated on demand. The tree grows a new root level when a block number beyond
//!   its reach appears, so small disks use few levels and any 64-bit block number fits.
//! - Each node also keeps a bit per entry stamped with the current time (valid while the node's
//!   `mask_time` is the current time), so a traversal visits those entries without scanning
//!   the other 255; this is a speed-up of the paper's directory timestamps, not a change of
//!   what they mean.

const BITS: u32 = 8;
const FANOUT: usize = 1 << BITS;
const NIL: u32 = u32::MAX;

/// A directory or a leaf: `time[i]` is entry i's most recent time (for a leaf, the BTE's last
/// time), `child[i]` the node below (directories) and `older[i]` the BTE's previous time
/// (leaves; unused in directories).
struct Node {
    time: [u32; FANOUT],
    other: [u32; FANOUT],
    mask: [u64; FANOUT / 64],
    mask_time: u32,
}

impl Node {
    fn new() -> Box<Node> {
        Box::new(Node { time: [0; FANOUT], other: [NIL; FANOUT], mask: [0; FANOUT / 64], mask_time: 0 })
    }

    fn reset(&mut self, leaf: bool) {
        self.time = [0; FANOUT];
        self.other = [if leaf { 0 } else { NIL }; FANOUT];
        self.mask = [0; FANOUT / 64];
        self.mask_time = 0;
    }

    #[inline]
    fn mark(&mut self, i: usize, now: u32) {
        if self.mask_time != now {
            self.mask = [0; FANOUT / 64];
            self.mask_time = now;
        }
        self.mask[i / 64] |= 1 << (i % 64);
    }
}

/// The table of one disk.
pub struct BlockTable {
    /// Boxed: a node is kilobytes, and growing the table must not move every node.
    #[allow(clippy::vec_box)]
    nodes: Vec<Box<Node>>,
    free: Vec<u32>,
    root: u32,
    /// Directory levels above the leaves; the root covers `256^(levels+1)` blocks.
    levels: u32,
    root_time: u32,
    live: usize,
    peak: usize,
}

/// Bytes one table node takes (directories and leaves are the same size).
pub const NODE_BYTES: usize = std::mem::size_of::<Node>();

impl Default for BlockTable {
    fn default() -> Self {
        BlockTable::new()
    }
}

impl BlockTable {
    pub fn new() -> Self {
        BlockTable { nodes: Vec::new(), free: Vec::new(), root: NIL, levels: 0, root_time: 0, live: 0, peak: 0 }
    }

    fn alloc(&mut self, leaf: bool) -> u32 {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize].reset(leaf);
                i
            }
            None => {
                let mut n = Node::new();
                if leaf {
                    n.other = [0; FANOUT];
                }
                self.nodes.push(n);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn index(block: u64, level: u32) -> usize {
        ((block >> (BITS * level)) as usize) & (FANOUT - 1)
    }

    /// Records that `block` was sequenced at time `now` (its BTE keeps this and the previous
    /// time), stamping every directory on the way.
    pub fn record(&mut self, block: u64, now: u32) {
        debug_assert!(now > 0, "time 0 means never");
        if self.root == NIL {
            self.root = self.alloc(self.levels == 0);
        }
        // Grow upwards until the root reaches the block: the old root becomes child 0.
        while self.levels < 7 && block >> (BITS * (self.levels + 1)) != 0 {
            let old = self.root;
            let top = self.alloc(false);
            let n = &mut self.nodes[top as usize];
            n.other[0] = old;
            n.time[0] = self.root_time;
            if self.root_time != 0 {
                n.mark(0, self.root_time);
            }
            self.root = top;
            self.levels += 1;
        }
        self.root_time = self.root_time.max(now);
        let mut node = self.root;
        for level in (1..=self.levels).rev() {
            let i = Self::index(block, level);
            let mut child = self.nodes[node as usize].other[i];
            if child == NIL {
                child = self.alloc(level == 1);
                self.nodes[node as usize].other[i] = child;
            }
            let n = &mut self.nodes[node as usize];
            n.time[i] = n.time[i].max(now);
            n.mark(i, now);
            node = child;
        }
        let i = Self::index(block, 0);
        let leaf = &mut self.nodes[node as usize];
        if leaf.time[i] != now {
            leaf.other[i] = leaf.time[i];
            leaf.time[i] = now;
        }
        leaf.mark(i, now);
    }

    /// The BTE of `block`: (last time, previous time); 0 for never.
    pub fn times(&self, block: u64) -> (u32, u32) {
        if self.root == NIL || (self.levels < 7 && block >> (BITS * (self.levels + 1)) != 0) {
            return (0, 0);
        }
        let mut node = self.root;
        for level in (1..=self.levels).rev() {
            node = self.nodes[node as usize].other[Self::index(block, level)];
            if node == NIL {
                return (0, 0);
            }
        }
        let i = Self::index(block, 0);
        let leaf = &self.nodes[node as usize];
        (leaf.time[i], leaf.other[i])
    }

    /// Forgets a block's times (a block read ahead and evicted unused leaves no history,
    /// prefetching paper §4). Directory times stay: they only bound what lies below.
    pub fn forget(&mut self, block: u64) {
        if self.times(block) == (0, 0) {
            return;
        }
        let mut node = self.root;
        for level in (1..=self.levels).rev() {
            node = self.nodes[node as usize].other[Self::index(block, level)];
        }
        let i = Self::index(block, 0);
        let leaf = &mut self.nodes[node as usize];
        leaf.time[i] = 0;
        leaf.other[i] = 0;
        leaf.mask[i / 64] &= !(1 << (i % 64));
    }

    /// Calls `f(block, previous_time)` for every block stamped with time `now`, in block
    /// order, entering only the directories stamped with `now` (§3.3).
    pub fn for_each_current(&self, now: u32, mut f: impl FnMut(u64, u32)) {
        if self.root != NIL && self.root_time == now {
            self.visit(self.root, self.levels, 0, now, &mut f);
        }
    }

    fn visit(&self, node: u32, level: u32, base: u64, now: u32, f: &mut impl FnMut(u64, u32)) {
        let n = &self.nodes[node as usize];
        if n.mask_time != now {
            return;
        }
        for (w, &word) in n.mask.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let block = base | ((i as u64) << (BITS * level));
                if level == 0 {
                    if n.time[i] == now {
                        f(block, n.other[i]);
                    }
                } else if n.time[i] == now {
                    self.visit(n.other[i], level - 1, block, now, f);
                }
            }
        }
    }

    /// Drops every subtree whose most recent time is below `threshold` (§3.2: the system
    /// reclaims table memory with a clock threshold). Returns the nodes freed.
    pub fn reclaim(&mut self, threshold: u32) -> usize {
        if self.root == NIL {
            return 0;
        }
        let before = self.live;
        if self.root_time < threshold {
            self.free_subtree(self.root, self.levels);
            self.root = NIL;
            self.levels = 0;
            self.root_time = 0;
        } else {
            self.reclaim_node(self.root, self.levels, threshold);
        }
        before - self.live
    }

    fn reclaim_node(&mut self, node: u32, level: u32, threshold: u32) {
        if level == 0 {
            // A leaf: entries older than the threshold are forgotten, the leaf stays.
            let n = &mut self.nodes[node as usize];
            for i in 0..FANOUT {
                if n.time[i] < threshold {
                    n.time[i] = 0;
                    n.other[i] = 0;
                }
            }
            return;
        }
        for i in 0..FANOUT {
            let (child, t) = (self.nodes[node as usize].other[i], self.nodes[node as usize].time[i]);
            if child == NIL {
                continue;
            }
            if t < threshold {
                self.free_subtree(child, level - 1);
                let n = &mut self.nodes[node as usize];
                n.other[i] = NIL;
                n.time[i] = 0;
            } else {
                self.reclaim_node(child, level - 1, threshold);
            }
        }
    }

    fn free_subtree(&mut self, node: u32, level: u32) {
        if level > 0 {
            for i in 0..FANOUT {
                let c = self.nodes[node as usize].other[i];
                if c != NIL {
                    self.free_subtree(c, level - 1);
                }
            }
        }
        self.free.push(node);
        self.live -= 1;
    }

    /// Bytes held by live nodes now, and at the most.
    pub fn bytes(&self) -> (usize, usize) {
        (self.live * NODE_BYTES, self.peak * NODE_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_the_last_two_times() {
        let mut t = BlockTable::new();
        assert_eq!(t.times(5), (0, 0));
        t.record(5, 1);
        t.record(5, 3);
        t.record(5, 4);
        assert_eq!(t.times(5), (4, 3));
        assert_eq!(t.times(6), (0, 0));
    }

    #[test]
    fn the_tree_grows_for_large_blocks_and_keeps_small_ones() {
        let mut t = BlockTable::new();
        t.record(3, 1);
        t.record(4, 2);
        t.record(1 << 40, 2);
        t.record(u64::MAX, 2);
        assert_eq!(t.times(3), (1, 0));
        let mut cur = Vec::new();
        t.for_each_current(2, |b, _| cur.push(b));
        assert_eq!(cur, vec![4, 1 << 40, u64::MAX], "blocks stamped before the root grew stay reachable");
        assert_eq!(t.times(1 << 40), (2, 0));
        assert_eq!(t.times(u64::MAX), (2, 0));
        assert_eq!(t.levels, 7);
    }

    #[test]
    fn traversal_finds_current_blocks_in_order_and_skips_old_directories() {
        let mut t = BlockTable::new();
        for b in [70_000u64, 9, 10, 600] {
            t.record(b, 1);
        }
        for b in [600u64, 10, 5, 1 << 30] {
            t.record(b, 2);
        }
        let mut seen = Vec::new();
        t.for_each_current(2, |b, prev| seen.push((b, prev)));
        assert_eq!(seen, vec![(5, 0), (10, 1), (600, 1), (1 << 30, 0)]);
        let mut old = Vec::new();
        t.for_each_current(1, |b, _| old.push(b));
        assert!(old.is_empty(), "time 1 is not current anywhere once time 2 stamped the root");
    }

    #[test]
    fn reclamation_drops_subtrees_older_than_the_threshold() {
        let mut t = BlockTable::new();
        t.record(1, 1);
        t.record(1 << 20, 1);
        t.record(2, 5);
        let (live, _) = t.bytes();
        let freed = t.reclaim(3);
        assert!(freed >= 2, "the subtree of block 2^20 goes: {freed}");
        assert!(t.bytes().0 < live);
        assert_eq!(t.times(1 << 20), (0, 0));
        assert_eq!(t.times(1), (0, 0), "an old entry in a kept leaf is forgotten");
        assert_eq!(t.times(2), (5, 0));
        let live = t.live;
        assert_eq!(t.reclaim(10), live);
        assert_eq!(t.bytes().0, 0);
        t.record(3, 11);
        assert_eq!(t.times(3), (11, 0));
    }

    #[test]
    fn forgetting_clears_one_entry() {
        let mut t = BlockTable::new();
        t.record(7, 1);
        t.record(8, 1);
        t.forget(7);
        let mut seen = Vec::new();
        t.for_each_current(1, |b, _| seen.push(b));
        assert_eq!(seen, vec![8]);
        assert_eq!(t.times(7), (0, 0));
    }
}
