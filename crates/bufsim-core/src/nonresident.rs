//! The blocks a policy remembers after they left the cache: 2Q's A1out, LIRS's non-resident HIR
//! entries, LRU-K's retained history. Maps a block key to a small integer id that the policy
//! uses to index its own per-entry state and its own intrusive lists ([`crate::list`]).
//!
//! Ids are reused after removal, so the id space stays as large as the most entries ever held
//! at once. The index and the id table grow by doubling as entries arrive (LIRS's default stack
//! bound is effectively unbounded, as in its authors' code), so memory follows the entries
//! held, not the bound; once the largest size is reached nothing allocates again.

use crate::blockmap::BlockMap;

pub struct NonResident {
    map: BlockMap,
    keys: Vec<u64>,
    free: Vec<u32>,
}

impl NonResident {
    /// An index for about `expected` entries; it starts small and grows as entries arrive.
    pub fn with_capacity(expected: usize) -> Self {
        let start = expected.clamp(16, 1024);
        NonResident { map: BlockMap::with_max_len(start), keys: Vec::with_capacity(start), free: Vec::new() }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// How many ids have ever been handed out: every id is below this. Policies size their
    /// per-id arrays (and list arenas) to it after [`Self::add`].
    #[inline]
    pub fn ids(&self) -> usize {
        self.keys.len()
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.map.get(key)
    }

    #[inline]
    pub fn key(&self, id: u32) -> u64 {
        self.keys[id as usize]
    }

    /// Remembers `key`, which must not be remembered already; returns its id.
    #[inline]
    pub fn add(&mut self, key: u64) -> u32 {
        let id = match self.free.pop() {
            Some(id) => {
                self.keys[id as usize] = key;
                id
            }
            None => {
                self.keys.push(key);
                (self.keys.len() - 1) as u32
            }
        };
        self.map.insert_new(key, id);
        id
    }

    /// Forgets the entry `id`; returns its key.
    #[inline]
    pub fn remove(&mut self, id: u32) -> u64 {
        let key = self.keys[id as usize];
        let removed = self.map.remove(key);
        debug_assert_eq!(removed, Some(id));
        self.free.push(id);
        key
    }

    /// Checks that the map and the id table agree (invariant checks).
    pub fn check(&self) -> Result<(), String> {
        if self.map.len() + self.free.len() != self.keys.len() {
            return Err(format!(
                "non-resident index: {} entries + {} free ids != {} ids",
                self.map.len(),
                self.free.len(),
                self.keys.len()
            ));
        }
        for (k, id) in self.map.iter() {
            if self.keys[id as usize] != k {
                return Err(format!("non-resident id {id} maps key {k} but holds {}", self.keys[id as usize]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_ids_and_grows() {
        let mut n = NonResident::with_capacity(2);
        let ids: Vec<u32> = (0..40u64).map(|k| n.add(k * 1000)).collect();
        assert_eq!(ids, (0..40).collect::<Vec<u32>>());
        assert_eq!(n.get(39_000), Some(39));
        assert_eq!(n.remove(5), 5000);
        assert_eq!(n.get(5000), None);
        assert_eq!(n.add(77), 5);
        assert_eq!(n.ids(), 40);
        assert_eq!(n.len(), 40);
        n.check().unwrap();
    }
}
