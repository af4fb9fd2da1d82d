//! Ghost (history) entries: block keys a policy remembers after their data left the cache, kept
//! in recency or FIFO lists (ARC's and CAR's B1/B2, MQ's Qout), each with a small payload (MQ:
//! the access count).
//!
//! An arena of nodes with a key index, bounded by the capacity the policy gives and filled on
//! demand (nodes and index grow by doubling up to that bound), so a large history costs memory
//! only as entries arrive, and remembering and forgetting allocate nothing once it is full. Each node holds its key, its links and its payload side by side: on a large history
//! every touch of an entry is a memory miss, and one node is one miss. Any number of
//! [`GhostList`] heads thread through the arena; a node is in one list at a time.

use crate::blockmap::BlockMap;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Default)]
struct Node<T> {
    key: u64,
    prev: u32,
    next: u32,
    data: T,
}

/// The head of one ghost list: front = most recent, back = oldest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GhostList {
    front: u32,
    back: u32,
    len: usize,
}

impl Default for GhostList {
    fn default() -> Self {
        GhostList::new()
    }
}

impl GhostList {
    pub const fn new() -> Self {
        GhostList { front: NIL, back: NIL, len: 0 }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

pub struct Ghosts<T: Copy + Default = ()> {
    map: BlockMap,
    /// Whether `map` indexes the entries; otherwise the owner keeps them in an index of its own
    /// (the cache's, shared with the resident blocks) and `map` stays empty.
    indexed: bool,
    nodes: Vec<Node<T>>,
    free: Vec<u32>,
    /// Most nodes the arena may hold.
    capacity: usize,
}

impl<T: Copy + Default> Ghosts<T> {
    /// Room for `capacity` entries at once.
    pub fn with_capacity(capacity: usize) -> Self {
        Ghosts { map: BlockMap::new(), indexed: true, nodes: Vec::new(), free: Vec::new(), capacity }
    }

    /// The same, for an owner that indexes the keys itself: [`Ghosts::find`] and the memory
    /// hints on the index are not available, and the nodes are found through the owner's index.
    pub fn unindexed(capacity: usize) -> Self {
        Ghosts { indexed: false, ..Ghosts::with_capacity(capacity) }
    }

    /// Entries remembered: the arena's nodes less the free ones.
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The node remembering `key`, if any.
    #[inline]
    pub fn find(&self, key: u64) -> Option<u32> {
        debug_assert!(self.indexed, "an unindexed history is searched through its owner's index");
        self.map.get(key)
    }

    #[inline]
    pub fn key(&self, node: u32) -> u64 {
        self.nodes[node as usize].key
    }

    #[inline]
    pub fn data(&self, node: u32) -> T {
        self.nodes[node as usize].data
    }

    /// Remembers `key` with `data` at the front of `list`. The key must not be remembered
    /// already, and the arena must have room (callers trim their lists first).
    #[inline(always)]
    pub fn push_front(&mut self, list: &mut GhostList, key: u64, data: T) -> u32 {
        // Freed nodes first, then a fresh one: the order a preallocated arena would hand out.
        let n = match self.free.pop() {
            Some(n) => n,
            None => {
                assert!(self.nodes.len() < self.capacity, "ghost arena full: the policy trims its lists first");
                self.nodes.push(Node { key: 0, prev: NIL, next: NIL, data: T::default() });
                (self.nodes.len() - 1) as u32
            }
        };
        if self.indexed {
            self.map.insert_new(key, n);
        }
        self.nodes[n as usize] = Node { key, prev: NIL, next: list.front, data };
        if list.front != NIL {
            self.nodes[list.front as usize].prev = n;
        } else {
            list.back = n;
        }
        list.front = n;
        list.len += 1;
        n
    }

    /// Forgets `node`, which is in `list`; returns its key and data.
    #[inline(always)]
    pub fn remove(&mut self, list: &mut GhostList, node: u32) -> (u64, T) {
        let Node { key, prev, next, data } = self.nodes[node as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            list.front = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            list.back = prev;
        }
        list.len -= 1;
        if self.indexed {
            self.map.remove(key);
        }
        self.free.push(node);
        (key, data)
    }

    /// Forgets the oldest entry of `list`; returns its key and data.
    #[inline(always)]
    pub fn pop_back(&mut self, list: &mut GhostList) -> Option<(u64, T)> {
        (list.back != NIL).then(|| self.remove(list, list.back))
    }

    /// Whether the index has outgrown the CPU's caches (see [`BlockMap::worth_warming`]).
    #[inline]
    pub fn worth_warming(&self) -> bool {
        self.map.worth_warming()
    }

    /// Starts loading the index slot where `key` would sit: a memory hint for a remembering
    /// or a lookup to come.
    #[inline]
    pub fn warm(&self, key: u64) {
        self.map.warm(key);
    }

    /// Starts loading what forgetting the two oldest entries of `list` will touch: the index
    /// slots of their keys, and the node before them (the third oldest, whose key the call
    /// after the next forget reads). Two forgets deep, so that a slot has the time of two
    /// misses to arrive; each call reads only nodes an earlier call loaded.
    #[inline]
    pub fn warm_oldest(&self, list: &GhostList) {
        for key in self.oldest_keys(list).into_iter().flatten() {
            self.map.warm(key);
        }
    }

    /// The keys of the two oldest entries of `list`, and a memory hint for the node behind them
    /// (see [`Ghosts::warm_oldest`], which warms these keys' slots in the ghosts' own index; an
    /// owner that indexes the keys itself warms them in its index).
    #[inline]
    pub fn oldest_keys(&self, list: &GhostList) -> [Option<u64>; 2] {
        if list.back == NIL {
            return [None, None];
        }
        let oldest = &self.nodes[list.back as usize];
        if oldest.prev == NIL {
            return [Some(oldest.key), None];
        }
        let second = &self.nodes[oldest.prev as usize];
        if second.prev != NIL {
            crate::memory_hint::prefetch(&self.nodes[second.prev as usize]);
        }
        [Some(oldest.key), Some(second.key)]
    }

    /// Nodes of `list` from front (most recent) to back.
    pub fn nodes_of<'a>(&'a self, list: &GhostList) -> impl Iterator<Item = u32> + 'a {
        let mut cur = list.front;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let n = cur;
                cur = self.nodes[n as usize].next;
                n
            })
        })
    }

    /// Keys of `list` from front (most recent) to back (dumps and tests).
    pub fn keys_of(&self, list: &GhostList) -> Vec<u64> {
        self.nodes_of(list).map(|n| self.nodes[n as usize].key).collect()
    }

    /// Checks that `lists` are well linked and together hold exactly the indexed entries.
    pub fn check(&self, lists: &[&GhostList]) -> Result<(), String> {
        let mut total = 0;
        for l in lists {
            let (mut count, mut prev, mut cur) = (0usize, NIL, l.front);
            while cur != NIL {
                let node = &self.nodes[cur as usize];
                if node.prev != prev {
                    return Err(format!("ghost node {cur}: prev link {} not {prev}", node.prev));
                }
                if self.indexed && self.map.get(node.key) != Some(cur) {
                    return Err(format!("ghost node {cur} (key {}) is not indexed", node.key));
                }
                count += 1;
                if count > self.nodes.len() {
                    return Err("ghost list has a cycle".into());
                }
                prev = cur;
                cur = node.next;
            }
            if prev != l.back || count != l.len {
                return Err(format!(
                    "ghost list says {} entries (back {}), links {count} (back {prev})",
                    l.len, l.back
                ));
            }
            total += count;
        }
        if self.indexed && total != self.map.len() {
            return Err(format!("ghost lists hold {total} entries, the index {}", self.map.len()));
        }
        if total + self.free.len() != self.nodes.len() {
            return Err(format!("ghost arena leaks: {total} used + {} free != {}", self.free.len(), self.nodes.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_forgets_in_order() {
        let mut g: Ghosts<u32> = Ghosts::with_capacity(3);
        let (mut a, mut b) = (GhostList::new(), GhostList::new());
        g.push_front(&mut a, 10, 1);
        g.push_front(&mut a, 11, 2);
        let n = g.push_front(&mut b, 20, 3);
        assert_eq!(g.find(20), Some(n));
        assert_eq!(g.data(n), 3);
        assert_eq!(g.keys_of(&a), vec![11, 10]);
        assert_eq!(g.pop_back(&mut a), Some((10, 1)));
        assert_eq!(g.find(10), None);
        assert_eq!(g.remove(&mut b, n), (20, 3));
        g.push_front(&mut b, 30, 4);
        g.push_front(&mut b, 31, 5);
        assert_eq!(g.len(), 3);
        assert_eq!(g.keys_of(&b), vec![31, 30]);
        g.check(&[&a, &b]).unwrap();
        assert_eq!(g.pop_back(&mut b), Some((30, 4)));
        assert_eq!(g.pop_back(&mut b), Some((31, 5)));
        assert_eq!(g.pop_back(&mut b), None);
        g.check(&[&a, &b]).unwrap();
    }
}
