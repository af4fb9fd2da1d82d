//! GreedyDual-Size-Frequency, as Arlitt, Cherkasova, Dilley, Friedrich & Jin define it (ACM PER
//! 27(4) 2000, §3): key K = L + F·C/S, evict the least K, L becomes the victim's K; S = 1 block.
//! Deviation: none by default; `variant=libcachesim` lets the incoming block compete, as below.
//!
//! F counts demand accesses; C is `Access::cost` (1.0 until a device model prices blocks, as
//! storage-aware caching's partitions do), so in count mode every key is an integer. Equal keys
//! go to the block touched longest ago. A prefetched block enters with F = 0 (key L: no access
//! history, prefetching paper §4); its first demand makes F = 1 and leaves no ghost.
//!
//! libCacheSim's GDSF (the pip `libcachesim` package) inserts the block first and then evicts the
//! least key among the residents *and* the newcomer, whose key was computed with the L from before
//! this eviction. When the newcomer has the strictly least key it is not cached (a bypass, which
//! the cache sees as `victim` returning `None`) and L becomes its key; otherwise the resident with
//! the least key goes and the newcomer keeps its pre-eviction key.
//!
//! Blocks sit in priority buckets (crate::buckets), one per distinct key, each holding its
//! blocks from least to most recently touched: the victim is the first block of the first
//! bucket, with no heap sift. Keys cluster just above L (a newcomer's key is L + 1), so a new
//! block's bucket is found a step or two from the lowest, and a hit's by walking up from its
//! old bucket. A key is the IEEE bits of K, which order like K since K >= 0.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::buckets::PriorityBuckets;
use crate::frames::FrameVec;
use crate::list::NIL;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Entry {
    /// The paper: L is updated by the eviction before the newcomer's key is computed.
    Paper,
    /// libCacheSim: the newcomer competes with the residents with the L it arrived with.
    LibCacheSim,
}

#[derive(Clone, Copy)]
struct FrameState {
    /// Demand accesses of the block (F).
    freq: u32,
    /// The frame's bucket.
    bucket: u32,
}

pub struct Gdsf {
    entry: Entry,
    /// Whether C comes from `Access::cost` (GDSF) or is 1 (LFU-DA).
    priced: bool,
    /// Frames by key, least recently touched first within a key.
    order: PriorityBuckets,
    per_frame: FrameVec<FrameState>,
    /// The inflation value L.
    inflation: f64,
    /// L when the block now being inserted arrived (libCacheSim's entry rule).
    arrival_inflation: f64,
    /// Block key of each frame (dumps).
    keys: FrameVec<u64>,
}

impl Gdsf {
    pub fn new(capacity: usize, entry: Entry, priced: bool) -> Self {
        Gdsf {
            entry,
            priced,
            order: PriorityBuckets::with_frames(capacity),
            per_frame: FrameVec::filled(FrameState { freq: 0, bucket: NIL }, capacity),
            inflation: 0.0,
            arrival_inflation: 0.0,
            keys: FrameVec::filled(0, capacity),
        }
    }

    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// Resident blocks with their key K, lowest first (tests and dumps).
    pub fn keys(&self) -> Vec<(u64, f64)> {
        let mut v = Vec::new();
        for (_, k, frames) in self.order.dump() {
            v.extend(frames.into_iter().map(|f| (self.keys[f as usize], f64::from_bits(k))));
        }
        v
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

    /// Puts `frame` (in no bucket) as the most recently touched of key `k`'s bucket.
    #[inline(always)]
    fn place(&mut self, frame: Frame, k: f64) {
        let b = self.order.bucket_at_or_after(NIL, k.to_bits());
        self.order.push_back(b, frame);
        self.per_frame[frame as usize].bucket = b;
    }

    #[inline]
    fn touch(&mut self, frame: Frame, a: &Access) {
        let st = &mut self.per_frame[frame as usize];
        st.freq = st.freq.saturating_add(1);
        let (f, old) = (st.freq, st.bucket);
        let k = self.key(self.inflation, f, a);
        // The key rises unless L fell since the block's last touch (a victim found above a
        // pinned block raises L, that block's eviction lowers it again; libCacheSim's bypass
        // sets L below the lowest key): `promote` handles both.
        self.per_frame[frame as usize].bucket = self.order.promote(old, frame, k.to_bits());
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
        self.per_frame[frame as usize].freq = f;
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
    #[inline]
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let (v, b) = self.order.first_unskipped(|f| pins.pinned(f))?;
        if self.entry == Entry::LibCacheSim {
            // The newcomer is the newest, so it loses only a strict comparison.
            let k = self.key(self.arrival_inflation, 1, incoming);
            if k < f64::from_bits(self.order.priority(b)) {
                self.inflation = k;
                return None;
            }
        }
        Some(v)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
        let st = self.per_frame[frame as usize];
        // L = K of the block given up (evicted, not dropped by the trace: see GDS).
        if why != Removal::Dropped {
            self.inflation = f64::from_bits(self.order.priority(st.bucket));
        }
        self.order.leave(st.bucket, frame);
        self.per_frame[frame as usize] = FrameState { freq: 0, bucket: NIL };
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.order.check()?;
        let mut n = 0;
        for (b, _, frames) in self.order.dump() {
            for f in frames {
                if self.per_frame[f as usize].bucket != b {
                    return Err(format!(
                        "GDSF frame {f} is in bucket {b} but says {}",
                        self.per_frame[f as usize].bucket
                    ));
                }
                n += 1;
            }
        }
        if n != resident {
            return Err(format!("GDSF orders {n} frames, cache {resident}"));
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
    use crate::cache::Cache;
    use crate::policy::steps::{apply_op, cache_op, Steps};
    use proptest::prelude::*;

    /// GDSF by its definition: every resident's (K, last touch) kept apart, the victim found by a
    /// scan for the least among the unpinned. The buckets must decide exactly as this does.
    struct ScanGdsf {
        entry: Entry,
        inflation: f64,
        arrival: f64,
        seq: u64,
        /// (K, touch sequence, F) of each resident frame.
        per_frame: Vec<Option<(f64, u64, u32)>>,
    }

    impl ScanGdsf {
        fn place(&mut self, frame: Frame, k: f64, f: u32) {
            self.seq += 1;
            self.per_frame[frame as usize] = Some((k, self.seq, f));
        }
        fn touch(&mut self, frame: Frame, a: &Access) {
            let f = self.per_frame[frame as usize].unwrap().2 + 1;
            self.place(frame, self.inflation + f as f64 * a.cost, f);
        }
    }

    impl Policy for ScanGdsf {
        fn prepare_insert(&mut self, _a: &Access, _origin: Origin) {
            self.arrival = self.inflation;
        }
        fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
            let f = u32::from(origin == Origin::Demand);
            let l = if self.entry == Entry::Paper { self.inflation } else { self.arrival };
            self.place(frame, l + f as f64 * a.cost, f);
        }
        fn hit(&mut self, frame: Frame, a: &Access) {
            self.touch(frame, a);
        }
        fn first_demand(&mut self, frame: Frame, a: &Access) {
            self.touch(frame, a);
        }
        fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
            let (v, (k, _, _)) = (0..self.per_frame.len() as Frame)
                .filter_map(|f| self.per_frame[f as usize].map(|e| (f, e)))
                .filter(|&(f, _)| !pins.pinned(f))
                .min_by(|x, y| (x.1 .0, x.1 .1).partial_cmp(&(y.1 .0, y.1 .1)).unwrap())?;
            if self.entry == Entry::LibCacheSim && self.arrival + incoming.cost < k {
                self.inflation = self.arrival + incoming.cost;
                return None;
            }
            Some(v)
        }
        fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
            let (k, _, _) = self.per_frame[frame as usize].take().unwrap();
            if why != Removal::Dropped {
                self.inflation = k;
            }
        }
        fn check(&self, _resident: usize) -> Result<(), String> {
            Ok(())
        }
    }

    proptest! {
        #[test]
        fn the_buckets_evict_as_a_scan_for_the_least_key(
            ops in prop::collection::vec(cache_op(), 1..400),
            cap in 1usize..9,
            libcachesim in any::<bool>(),
        ) {
            let entry = if libcachesim { Entry::LibCacheSim } else { Entry::Paper };
            let mut buckets = Cache::new(Gdsf::new(cap, entry, true), cap);
            let scan = ScanGdsf { entry, inflation: 0.0, arrival: 0.0, seq: 0, per_frame: vec![None; cap] };
            let mut scan = Cache::new(scan, cap);
            for (t, o) in ops.iter().enumerate() {
                prop_assert_eq!(apply_op(&mut buckets, o, t as u64), apply_op(&mut scan, o, t as u64), "op {} {:?}", t, o);
                prop_assert_eq!(buckets.policy.inflation().to_bits(), scan.policy.inflation.to_bits());
            }
        }
    }

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
