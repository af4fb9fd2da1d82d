//! Test driver for the step-by-step golden tests beside each policy: demand accesses and
//! read-ahead insertions through a real [`Cache`], invariants checked after every step.

use crate::cache::{Cache, Demand};
use crate::policy::{Access, Origin, Policy};

pub(crate) struct Steps<P: Policy> {
    pub cache: Cache<P>,
    time: u64,
}

impl<P: Policy> Steps<P> {
    pub fn new(policy: P, capacity: usize) -> Self {
        Steps { cache: Cache::new(policy, capacity), time: 0 }
    }

    pub fn access(&self, key: u64) -> Access {
        Access { key, block: key, time: self.time, ..Access::default() }
    }

    /// One demand access: 'H' for a hit (first demand of a prefetched block included), 'M'.
    pub fn demand(&mut self, key: u64) -> char {
        let a = self.access(key);
        self.demand_access(a)
    }

    /// A demand access with a caller-made [`Access`] (a cost, for instance).
    pub fn demand_access(&mut self, a: Access) -> char {
        let key = a.key;
        let d = self.cache.demand(&a);
        self.time += 1;
        self.cache.check().unwrap_or_else(|e| panic!("after demand {key}: {e}"));
        match d {
            Demand::Hit | Demand::PrefetchHit => 'H',
            Demand::Miss | Demand::MissBypassed => 'M',
        }
    }

    /// Demand accesses in order; the hit/miss pattern.
    pub fn run(&mut self, keys: &[u64]) -> String {
        keys.iter().map(|&k| self.demand(k)).collect()
    }

    /// Read-ahead brings `key` (not resident) without a demand access; logical time stays.
    pub fn prefetch(&mut self, key: u64) {
        let a = Access { time: self.time.saturating_sub(1), ..self.access(key) };
        self.cache.insert(&a, Origin::Prefetch).expect("prefetch insert");
        self.cache.check().unwrap_or_else(|e| panic!("after prefetch {key}: {e}"));
    }

    pub fn policy(&self) -> &P {
        &self.cache.policy
    }
}
