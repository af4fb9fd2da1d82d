//! Test driver for the step-by-step golden tests beside each policy: demand accesses and
//! read-ahead insertions through a real [`Cache`], invariants checked after every step. Also
//! random operations for property tests that drive two policies through real caches and compare
//! every outcome (a fast structure against the plain one it must decide as).

use crate::cache::{Cache, Demand};
use crate::policy::{Access, Origin, Policy};
use proptest::prelude::*;

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

/// One random step on a cache of keys `0..24`.
#[derive(Clone, Debug)]
pub(crate) enum CacheOp {
    /// A demand access with a cost (`Access::cost`) from a few values.
    Demand(u64, f64),
    Prefetch(u64),
    Pin(u64),
    Unpin(u64),
    Drop(u64),
}

pub(crate) fn cache_op() -> impl Strategy<Value = CacheOp> {
    let cost = prop_oneof![4 => Just(1.0), 1 => Just(0.5), 1 => Just(2.0), 1 => Just(3.0)];
    prop_oneof![
        6 => ((0u64..24), cost).prop_map(|(k, c)| CacheOp::Demand(k, c)),
        2 => (0u64..24).prop_map(CacheOp::Prefetch),
        1 => (0u64..24).prop_map(CacheOp::Pin),
        1 => (0u64..24).prop_map(CacheOp::Unpin),
        1 => (0u64..24).prop_map(CacheOp::Drop),
    ]
}

/// Applies `op` at logical time `t` and describes what happened: the outcome, the resident keys
/// and the victim the policy would choose next.
pub(crate) fn apply_op<P: Policy>(c: &mut Cache<P>, op: &CacheOp, t: u64) -> String {
    let a = |key: u64| Access { key, block: key, time: t, ..Access::default() };
    let out = match *op {
        CacheOp::Demand(k, cost) => format!("{:?}", c.demand(&Access { cost, ..a(k) })),
        CacheOp::Prefetch(k) if !c.contains(k) => format!("{:?}", c.insert(&a(k), Origin::Prefetch)),
        CacheOp::Pin(k) | CacheOp::Unpin(k) | CacheOp::Drop(k) => match c.frame_of(k) {
            Some(f) if matches!(op, CacheOp::Pin(_)) => {
                c.pin(f);
                "pinned".into()
            }
            Some(f) if matches!(op, CacheOp::Unpin(_)) => {
                c.unpin(f);
                "unpinned".into()
            }
            Some(f) if !c.is_pinned(f) => {
                c.drop_frame(f);
                "dropped".into()
            }
            _ => "-".into(),
        },
        _ => "-".into(),
    };
    c.check().unwrap();
    let mut keys = c.resident_keys();
    keys.sort_unstable();
    format!("{out} {keys:?} {:?}", c.take_victim().map(|(_, k)| k))
}
