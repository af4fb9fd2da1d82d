//! Ghost (history) entries: block keys a policy remembers after their data left the cache, kept
//! in recency or FIFO lists (ARC's B1/B2, CAR's B1/B2, MQ's Qout).
//!
//! A fixed arena of nodes with a key index, so remembering and forgetting allocate nothing once
//! sized. Any number of [`List`] heads thread through the arena; a node is in one list at a time.
//! Node ids are stable while the entry lives, so a policy can keep per-entry data (MQ's
//! frequency) in its own vectors indexed by node.

use crate::blockmap::BlockMap;
use crate::list::{Links, List};

pub struct Ghosts {
    map: BlockMap,
    keys: Vec<u64>,
    links: Links,
    free: Vec<u32>,
}

impl Ghosts {
    /// Room for `capacity` entries at once.
    pub fn with_capacity(capacity: usize) -> Self {
        Ghosts {
            map: BlockMap::with_max_len(capacity),
            keys: vec![0; capacity],
            links: Links::with_nodes(capacity),
            free: (0..capacity as u32).rev().collect(),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.keys.len()
    }

    /// The node remembering `key`, if any.
    #[inline]
    pub fn find(&self, key: u64) -> Option<u32> {
        self.map.get(key)
    }

    #[inline]
    pub fn key(&self, node: u32) -> u64 {
        self.keys[node as usize]
    }

    /// Remembers `key` at the front (most recent end) of `list`. The key must not be remembered
    /// already, and the arena must have room (callers trim their lists first).
    #[inline]
    pub fn push_front(&mut self, list: &mut List, key: u64) -> u32 {
        let node = self.free.pop().expect("ghost arena full: the policy trims its lists first");
        self.keys[node as usize] = key;
        self.map.insert_new(key, node);
        self.links.push_front(list, node);
        node
    }

    /// Forgets `node`, which is in `list`.
    #[inline]
    pub fn remove(&mut self, list: &mut List, node: u32) {
        self.links.remove(list, node);
        self.map.remove(self.keys[node as usize]);
        self.free.push(node);
    }

    /// Forgets the oldest entry of `list`; returns its node (now free) and key.
    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<(u32, u64)> {
        let node = list.back()?;
        let key = self.keys[node as usize];
        self.remove(list, node);
        Some((node, key))
    }

    /// Keys of `list` from front (most recent) to back (dumps and tests).
    pub fn keys_of(&self, list: &List) -> Vec<u64> {
        self.links.iter(list).map(|n| self.keys[n as usize]).collect()
    }

    /// Checks that `lists` are well linked and together hold exactly the indexed entries.
    pub fn check(&self, lists: &[&List]) -> Result<(), String> {
        let mut total = 0;
        for l in lists {
            self.links.check(l)?;
            for n in self.links.iter(l) {
                if self.map.get(self.keys[n as usize]) != Some(n) {
                    return Err(format!("ghost node {n} (key {}) is not indexed", self.keys[n as usize]));
                }
            }
            total += l.len();
        }
        if total != self.map.len() {
            return Err(format!("ghost lists hold {total} entries, the index {}", self.map.len()));
        }
        if total + self.free.len() != self.keys.len() {
            return Err(format!("ghost arena leaks: {total} used + {} free != {}", self.free.len(), self.keys.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_and_forgets_in_order() {
        let mut g = Ghosts::with_capacity(3);
        let (mut a, mut b) = (List::new(), List::new());
        g.push_front(&mut a, 10);
        g.push_front(&mut a, 11);
        let n = g.push_front(&mut b, 20);
        assert_eq!(g.find(20), Some(n));
        assert_eq!(g.keys_of(&a), vec![11, 10]);
        assert_eq!(g.pop_back(&mut a).map(|x| x.1), Some(10));
        assert_eq!(g.find(10), None);
        g.remove(&mut b, n);
        g.push_front(&mut b, 30);
        g.push_front(&mut b, 31);
        assert_eq!(g.len(), 3);
        g.check(&[&a, &b]).unwrap();
    }
}
