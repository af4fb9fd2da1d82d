//! An indexed binary min-heap over node ids with updatable keys: the priority order of OPT,
//! LFU, LRFU and GreedyDual. O(log n) per update; per-node state grows with the nodes used
//! ([`FrameVec`]), so nothing allocates once a run reaches its working size.

use crate::frames::FrameVec;

const ABSENT: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct IndexedHeap<K: Ord + Copy> {
    heap: Vec<u32>,
    pos: FrameVec<u32>,
    key: FrameVec<K>,
}

impl<K: Ord + Copy + Default> IndexedHeap<K> {
    /// A heap for node ids `0..nodes`.
    pub fn with_nodes(nodes: usize) -> Self {
        IndexedHeap {
            heap: Vec::new(),
            pos: FrameVec::filled(ABSENT, nodes),
            key: FrameVec::filled(K::default(), nodes),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    #[inline]
    pub fn contains(&self, n: u32) -> bool {
        self.pos[n as usize] != ABSENT
    }

    #[inline]
    pub fn key(&self, n: u32) -> K {
        self.key[n as usize]
    }

    /// The node with the smallest key.
    #[inline]
    pub fn peek(&self) -> Option<u32> {
        self.heap.first().copied()
    }

    /// Inserts `n` or changes its key.
    #[inline]
    pub fn set(&mut self, n: u32, k: K) {
        let i = n as usize;
        if self.pos[i] == ABSENT {
            self.key[i] = k;
            self.pos[i] = self.heap.len() as u32;
            self.heap.push(n);
            self.sift_up(self.heap.len() - 1);
        } else {
            let old = self.key[i];
            self.key[i] = k;
            let p = self.pos[i] as usize;
            if k < old {
                self.sift_up(p);
            } else {
                self.sift_down(p);
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, n: u32) {
        let p = self.pos[n as usize];
        if p == ABSENT {
            return;
        }
        let p = p as usize;
        let last = self.heap.len() - 1;
        self.swap(p, last);
        self.heap.pop();
        self.pos[n as usize] = ABSENT;
        if p < self.heap.len() {
            self.sift_down(p);
            self.sift_up(p);
        }
    }

    pub fn pop(&mut self) -> Option<u32> {
        let top = self.peek()?;
        self.remove(top);
        Some(top)
    }

    /// Nodes in heap order (not sorted).
    pub fn nodes(&self) -> &[u32] {
        &self.heap
    }

    /// The node with the smallest key among those `skip` does not reject, ties going to the
    /// earlier heap position: the node a scan of `nodes()` with `min_by_key` would find, but
    /// visiting only the skipped nodes at the top of the heap and their children. A node's
    /// key is never below its parent's, so the answer has only skipped ancestors; with k pinned
    /// frames (a read-ahead group) this costs O(k), not O(n).
    pub fn min_unskipped(&self, skip: impl Fn(u32) -> bool) -> Option<u32> {
        let mut best = None;
        self.frontier(0, &skip, &mut best);
        best.map(|p| self.heap[p])
    }

    fn frontier(&self, p: usize, skip: &impl Fn(u32) -> bool, best: &mut Option<usize>) {
        let Some(&n) = self.heap.get(p) else { return };
        if !skip(n) {
            let better = best.is_none_or(|b| (self.key[n as usize], p) < (self.key[self.heap[b] as usize], b));
            if better {
                *best = Some(p);
            }
            return;
        }
        // Recursion depth is at most the heap's height (log2 n); nothing is allocated.
        self.frontier(2 * p + 1, skip, best);
        self.frontier(2 * p + 2, skip, best);
    }

    /// Changes every key with `f` and restores the heap order in O(n) (aging).
    pub fn rekey_all(&mut self, mut f: impl FnMut(K) -> K) {
        for &n in &self.heap {
            self.key[n as usize] = f(self.key[n as usize]);
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.key[self.heap[i] as usize] < self.key[self.heap[parent] as usize] {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let mut m = l;
            if r < n && self.key[self.heap[r] as usize] < self.key[self.heap[l] as usize] {
                m = r;
            }
            if self.key[self.heap[m] as usize] < self.key[self.heap[i] as usize] {
                self.swap(i, m);
                i = m;
            } else {
                break;
            }
        }
    }

    /// Verifies the heap property and the position index (invariant checks).
    pub fn check(&self) -> Result<(), String> {
        for (i, &n) in self.heap.iter().enumerate() {
            if self.pos[n as usize] as usize != i {
                return Err(format!("node {n} at {i} but indexed at {}", self.pos[n as usize]));
            }
            if i > 0 && self.key[n as usize] < self.key[self.heap[(i - 1) / 2] as usize] {
                return Err(format!("heap order broken at {i}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_after_updates() {
        let mut h: IndexedHeap<(u64, u64)> = IndexedHeap::with_nodes(8);
        for n in 0..8u32 {
            h.set(n, ((n as u64 * 5) % 8, n as u64));
        }
        h.set(3, (100, 0));
        h.set(7, (0, 0));
        h.remove(0);
        h.check().unwrap();
        let mut out = Vec::new();
        while let Some(n) = h.pop() {
            out.push(n);
        }
        assert_eq!(out, vec![7, 5, 2, 4, 1, 6, 3]);
    }

    proptest::proptest! {
        #[test]
        fn min_unskipped_equals_a_full_scan(keys in proptest::collection::vec(0u64..6, 1..80),
                                            skipped in proptest::collection::vec(proptest::bool::weighted(0.4), 80)) {
            let mut h: IndexedHeap<u64> = IndexedHeap::with_nodes(keys.len());
            for (n, &k) in keys.iter().enumerate() {
                h.set(n as u32, k);
            }
            let skip = |n: u32| skipped[n as usize];
            let scan = h.nodes().iter().copied().filter(|&n| !skip(n)).min_by_key(|&n| h.key(n));
            proptest::prop_assert_eq!(h.min_unskipped(skip), scan);
        }
    }

    #[test]
    fn rekey_all_restores_order() {
        let mut h: IndexedHeap<u64> = IndexedHeap::with_nodes(4);
        for (n, k) in [(0, 9), (1, 3), (2, 7), (3, 1)] {
            h.set(n, k);
        }
        h.rekey_all(|k| 10 - k);
        h.check().unwrap();
        assert_eq!(h.pop(), Some(0));
    }
}
