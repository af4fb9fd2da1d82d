//! GreedyDual-Size-Frequency, as Arlitt, Cherkasova, Dilley, Friedrich & Jin define it (ACM PER
//! 27(4) 2000, §3): key K = L + F·C/S, evict the least K, L becomes the victim's K; S = 1 block.
//! Deviation: none by default; `variant=libcachesim` lets the incoming block compete, as below.
//!
//! F counts demand accesses; C is `Access::cost` (1.0 until a device model prices blocks), so in
//! count mode GDSF is LFU-DA (`lfu-da` shares this code). Equal keys go to the block touched
//! longest ago. A prefetched block enters with F = 0 (key L: no access history, prefetching
//! paper §4); its first demand makes F = 1 and leaves no ghost.
//!
//! libCacheSim's GDSF (the pip `libcachesim` package) inserts the block first and then evicts the
//! least key among the residents *and* the newcomer, whose key was computed with the L from before
//! this eviction. When the newcomer has the strictly least key it is not cached (a bypass, which
//! the cache sees as `victim` returning `None`) and L becomes its key; otherwise the resident with
//! the least key goes and the newcomer keeps its pre-eviction key.

use super::heap_victim::min_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::heap::IndexedHeap;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Entry {
    /// The paper: L is updated by the eviction before the newcomer's key is computed.
    Paper,
    /// libCacheSim: the newcomer competes with the residents with the L it arrived with.
    LibCacheSim,
}

pub struct Gdsf {
    entry: Entry,
    /// Whether C comes from `Access::cost` (GDSF) or is 1 (LFU-DA).
    priced: bool,
    /// Min-heap on (bits of K, touch sequence): K >= 0, so its IEEE bits order like its value.
    order: IndexedHeap<(u64, u64)>,
    /// Demand accesses of each resident block (F).
    freq: FrameVec<u32>,
    /// The inflation value L.
    inflation: f64,
    /// L when the block now being inserted arrived (libCacheSim's entry rule).
    arrival_inflation: f64,
    seq: u64,
    scratch: Vec<(Frame, (u64, u64))>,
    keys: FrameVec<u64>,
}

impl Gdsf {
    pub fn new(capacity: usize, entry: Entry, priced: bool) -> Self {
        Gdsf {
            entry,
            priced,
            order: IndexedHeap::with_nodes(capacity),
            freq: FrameVec::filled(0, capacity),
            inflation: 0.0,
            arrival_inflation: 0.0,
            seq: 0,
            scratch: Vec::new(),
            keys: FrameVec::filled(0, capacity),
        }
    }

    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// Resident blocks with their key K, lowest first (tests and dumps).
    pub fn keys(&self) -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, u64, u64)> =
            self.order.nodes().map(|f| (self.order.key(f).0, self.order.key(f).1, self.keys[f as usize])).collect();
        v.sort_unstable();
        v.into_iter().map(|(k, _, b)| (b, f64::from_bits(k))).collect()
    }

    #[inline]
    fn cost(&self, a: &Access) -> f64 {
        if !self.priced {
            1.0
        } else if a.cost.is_finite() && a.cost > 0.0 {
            a.cost
        } else {
            0.0
        }
    }

    /// K = L + F·C/S with S = 1.
    #[inline]
    fn key(&self, inflation: f64, freq: u32, a: &Access) -> f64 {
        inflation + freq as f64 * self.cost(a)
    }

    #[inline]
    fn place(&mut self, frame: Frame, k: f64) {
        self.seq += 1;
        self.order.set(frame, (k.to_bits(), self.seq));
    }

    #[inline]
    fn touch(&mut self, frame: Frame, a: &Access) {
        let f = self.freq[frame as usize].saturating_add(1);
        self.freq[frame as usize] = f;
        let k = self.key(self.inflation, f, a);
        self.place(frame, k);
    }
}

impl Policy for Gdsf {
    #[inline]
    fn prepare_insert(&mut self, _a: &Access, _origin: Origin) {
        self.arrival_inflation = self.inflation;
    }
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.keys[frame as usize] = a.key;
        let f = match origin {
            Origin::Demand => 1,
            Origin::Prefetch => 0,
        };
        self.freq[frame as usize] = f;
        let l = match self.entry {
            Entry::Paper => self.inflation,
            Entry::LibCacheSim => self.arrival_inflation,
        };
        let k = self.key(l, f, a);
        self.place(frame, k);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let v = min_unpinned(&mut self.order, pins, &mut self.scratch)?;
        if self.entry == Entry::LibCacheSim {
            // The newcomer is the newest, so it loses only a strict comparison.
            let k = self.key(self.arrival_inflation, 1, incoming);
            if k < f64::from_bits(self.order.key(v).0) {
                self.inflation = k;
                return None;
            }
        }
        Some(v)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
        // L = K of the block given up (evicted, not dropped by the trace: see GDS).
        if why != Removal::Dropped {
            self.inflation = f64::from_bits(self.order.key(frame).0);
        }
        self.order.remove(frame);
        self.freq[frame as usize] = 0;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.order.check()?;
        if self.order.len() != resident {
            return Err(format!("GDSF orders {} frames, cache {resident}", self.order.len()));
        }
        Ok(())
    }
}

pub(crate) const VARIANT_PARAM: ParamInfo = ParamInfo {
    name: "variant",
    default: "paper",
    doc: "paper | libcachesim (the newcomer competes with the residents and may not be cached, as libCacheSim's GDSF)",
    range: Range::Choice(&["paper", "libcachesim"]),
};

pub(crate) fn entry_rule(args: &Args) -> Result<Entry, SpecError> {
    Ok(match args.choice("variant", &["paper", "libcachesim"])? {
        "libcachesim" => Entry::LibCacheSim,
        _ => Entry::Paper,
    })
}

impl PolicyDef for Gdsf {
    const INFO: PolicyInfo = PolicyInfo {
        name: "gdsf",
        aliases: &["greedydual-size-frequency"],
        paper: "Arlitt, Cherkasova, Dilley, Friedrich & Jin, ACM PER 2000, §3 (GreedyDual-Size-Frequency)",
        summary: "key K = L + frequency x cost / size, evict the least K and set L to it",
        params: &[VARIANT_PARAM],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Gdsf::new(env.capacity, entry_rule(args)?, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn frequency_outweighs_recency_until_aging_catches_up() {
        // 2 blocks, unit costs: K = L + F.
        let mut s = Steps::new(Gdsf::new(2, Entry::Paper, true), 2);
        // 1: K1 = 1; 1 again: K1 = 2; 2: K2 = 1
        assert_eq!(s.run(&[1, 1, 2]), "MHM");
        // 3: 2 goes (K = 1): L = 1, K3 = 2; tie with 1 (K = 2), 1 is older
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().keys(), vec![(1, 2.0), (3, 2.0)]);
        // 4: 1 goes (K = 2, touched longest ago): L = 2, K4 = 3
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().keys(), vec![(3, 2.0), (4, 3.0)]);
        assert_eq!(s.policy().inflation(), 2.0);
        // 4 hit: F = 2, K4 = L + 2 = 4; 5: 3 goes (K = 2), K5 = 3
        assert_eq!(s.run(&[4, 5]), "HM");
        assert_eq!(s.policy().keys(), vec![(5, 3.0), (4, 4.0)]);
    }

    #[test]
    fn costly_blocks_stay_longer() {
        let mut s = Steps::new(Gdsf::new(2, Entry::Paper, true), 2);
        let go = |s: &mut Steps<Gdsf>, key: u64, cost: f64| {
            let a = Access { cost, ..s.access(key) };
            s.demand_access(a)
        };
        // 1 (cost 3): K = 3; 2 (cost 1): K = 1; 3: 2 goes, L = 1, K3 = 2; 4: 3 goes, L = 2, K4 = 3
        assert_eq!(go(&mut s, 1, 3.0), 'M');
        assert_eq!(go(&mut s, 2, 1.0), 'M');
        assert_eq!(go(&mut s, 3, 1.0), 'M');
        assert_eq!(go(&mut s, 4, 1.0), 'M');
        // Tie at K = 3: the costly 1 is older and goes now.
        assert_eq!(go(&mut s, 5, 1.0), 'M');
        assert_eq!(s.policy().keys(), vec![(4, 3.0), (5, 4.0)]);
        // LFU-DA ignores costs: 1 is merely the oldest of equals and goes first.
        let mut u = Steps::new(Gdsf::new(2, Entry::Paper, false), 2);
        for (k, c) in [(1, 3.0), (2, 1.0), (3, 1.0)] {
            let a = Access { cost: c, ..u.access(k) };
            u.demand_access(a);
        }
        assert_eq!(u.policy().keys(), vec![(2, 1.0), (3, 2.0)]);
    }

    #[test]
    fn libcachesim_entry_refuses_a_newcomer_below_every_resident() {
        // libCacheSim's rule, checked against its GDSF with cache 2 on 1,1,2,2,3,1,2: MHMHMHH.
        let mut s = Steps::new(Gdsf::new(2, Entry::LibCacheSim, true), 2);
        assert_eq!(s.run(&[1, 1, 2, 2]), "MHMH");
        assert_eq!(s.policy().keys(), vec![(1, 2.0), (2, 2.0)]);
        // 3 arrives with K = L + 1 = 1 < 2: not cached, L = 1.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().keys(), vec![(1, 2.0), (2, 2.0)]);
        assert_eq!(s.policy().inflation(), 1.0);
        assert_eq!(s.run(&[1, 2]), "HH");
        // The paper evicts 1 for 3 instead.
        let mut p = Steps::new(Gdsf::new(2, Entry::Paper, true), 2);
        assert_eq!(p.run(&[1, 1, 2, 2, 3, 1, 2]), "MHMHMMM");
    }

    #[test]
    fn prefetched_blocks_enter_without_history() {
        let mut s = Steps::new(Gdsf::new(2, Entry::Paper, true), 2);
        assert_eq!(s.run(&[1, 1, 2]), "MHM");
        // 4 read ahead: 2 goes (K = 1), L = 1, K4 = L + 0 = 1
        s.prefetch(4);
        assert_eq!(s.policy().keys(), vec![(4, 1.0), (1, 2.0)]);
        // Its first demand is a first access: F = 1, K4 = 2, newer than 1
        assert_eq!(s.demand(4), 'H');
        assert_eq!(s.policy().keys(), vec![(1, 2.0), (4, 2.0)]);
    }
}
