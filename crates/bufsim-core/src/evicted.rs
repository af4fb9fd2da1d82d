//! What a frequency policy remembers of the blocks it evicted: the MQ paper's history buffer
//! (MQ, Zhou, Philbin, Li, USENIX 2001, §5.1: LFU, LFRU, LRU-2 and FBR were given "a history
//! buffer" of evicted blocks' statistics, 4x the cache), so that a block coming back resumes its
//! count instead of starting over. The oldest entry goes first once the buffer is full.
//!
//! A block being inserted is taken out of the buffer in `prepare_insert` (so the eviction that
//! makes room for it cannot push its own entry out); an insertion abandoned before `insert`
//! puts the entry back at the next `prepare_insert`.

use crate::list::{Links, List};
use crate::nonresident::NonResident;

pub struct EvictedHistory<T: Copy + Default> {
    limit: usize,
    index: NonResident,
    /// Entries from the most recently evicted (front) to the oldest (back).
    links: Links,
    order: List,
    value: Vec<T>,
    /// The entry taken by the insertion under way: (key, value).
    taken: Option<(u64, T)>,
}

impl<T: Copy + Default> EvictedHistory<T> {
    /// A buffer of at most `limit` entries (0: remembers nothing).
    pub fn new(limit: usize) -> Self {
        EvictedHistory {
            limit,
            index: NonResident::with_capacity(limit.min(1 << 20)),
            links: Links::with_nodes(0),
            order: List::new(),
            value: Vec::new(),
            taken: None,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Remembers `value` for the evicted block `key`, forgetting the oldest entry if full.
    #[inline(always)]
    pub fn remember(&mut self, key: u64, value: T) {
        // Checked inline: without a buffer (the default) every eviction would pay for a call.
        if self.limit != 0 {
            self.add(key, value);
        }
    }

    fn add(&mut self, key: u64, value: T) {
        if let Some(id) = self.index.get(key) {
            self.forget(id);
        }
        if self.index.len() >= self.limit {
            if let Some(oldest) = self.order.back() {
                self.forget(oldest);
            }
        }
        let id = self.index.add(key);
        while self.links.len() < self.index.ids() {
            self.links.push_node();
            self.value.push(T::default());
        }
        self.value[id as usize] = value;
        self.links.push_front(&mut self.order, id);
    }

    fn forget(&mut self, id: u32) {
        self.links.remove(&mut self.order, id);
        self.index.remove(id);
    }

    /// Called before a block is inserted: takes its entry, if any, out of the buffer (an entry
    /// taken by an insertion that never happened goes back first).
    #[inline(always)]
    pub fn take_for_insert(&mut self, key: u64) {
        // Nothing to take or put back (always so without a buffer): skip the lookup, and the
        // call, which would run on every miss.
        if self.taken.is_some() || !self.index.is_empty() {
            self.take(key);
        }
    }

    fn take(&mut self, key: u64) {
        if let Some((k, v)) = self.taken.take() {
            self.remember(k, v);
        }
        if let Some(id) = self.index.get(key) {
            let v = self.value[id as usize];
            self.forget(id);
            self.taken = Some((key, v));
        }
    }

    /// The remembered value of the block now inserted (taken by [`Self::take_for_insert`]).
    #[inline]
    pub fn inserted(&mut self, key: u64) -> Option<T> {
        match self.taken {
            Some((k, v)) if k == key => {
                self.taken = None;
                Some(v)
            }
            _ => None,
        }
    }

    pub fn check(&self) -> Result<(), String> {
        self.index.check()?;
        self.links.check(&self.order)?;
        if self.order.len() != self.index.len() || self.index.len() > self.limit {
            return Err(format!(
                "history lists {} entries, indexes {}, limit {}",
                self.order.len(),
                self.index.len(),
                self.limit
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_entries_and_hands_them_back_once() {
        let mut h: EvictedHistory<u64> = EvictedHistory::new(2);
        h.remember(1, 10);
        h.remember(2, 20);
        h.remember(3, 30); // 1 goes
        h.take_for_insert(1);
        assert_eq!(h.inserted(1), None);
        h.take_for_insert(2);
        assert_eq!(h.len(), 1);
        assert_eq!(h.inserted(2), Some(20));
        assert_eq!(h.inserted(2), None);
        // An abandoned insertion's entry comes back.
        h.take_for_insert(3);
        h.take_for_insert(4);
        h.take_for_insert(3);
        assert_eq!(h.inserted(3), Some(30));
        h.check().unwrap();
        let mut none: EvictedHistory<u64> = EvictedHistory::new(0);
        none.remember(1, 1);
        assert!(none.is_empty());
    }
}
