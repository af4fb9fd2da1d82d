//! LRFU: Lee, Choi, Kim, Noh, Min, Cho, Kim, "LRFU: A Spectrum of Policies that Subsumes the Least Recently Used and Least Frequently Used Policies", IEEE TC 50(12) 2001, §3 (CRF with F(x) = (1/2)^(lambda x) and its incremental update) and §4 (implementation with a heap), with the prefetch rule of the prefetching paper §4.
//! Deviations: the heap is keyed by log2 CRF + lambda * (time of last reference), which orders blocks exactly as CRF at the current time does, so no key changes as time passes (instead of the paper's heap plus list for lambda above 1/2^d); no CRF is kept for evicted blocks, as in the paper.
//!
//! CRF_t(b) = sum over b's references at times t_i of F(t - t_i). On a reference at time t,
//! CRF(b) = F(0) + F(t - t_last) * CRF_last(b) (§3); the victim is the block with
//! the smallest CRF now. Because CRF_t(b) = CRF_last(b) * 2^(-lambda (t - t_last)), comparing
//! two blocks at any time t compares log2 CRF_last + lambda * t_last: a key fixed between the
//! block's references. lambda = 1 orders by the last reference alone (LRU: CRF_last < 2 while
//! t_last differ by whole steps); lambda = 0 makes the key log2 of the reference count (LFU,
//! least recently used first among equals). Time counts demand block accesses.
//!
//! History (MQ §5.1, `history`): the (CRF, time) of evicted blocks is remembered in a buffer of
//! that many entries, so a block missed again continues its CRF as a hit would, the way the MQ
//! paper configured LFRU for its comparison (a history 4x the cache).
//!
//! Prefetching (prefetching paper §4): a prefetched block enters as if referenced now (the MRU
//! side) with a prefetched flag; at its first demand access its CRF is reset to F(0) instead of
//! being updated, so it counts as seen once, not twice.

use super::heap_victim::min_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::evicted::EvictedHistory;
use crate::frames::FrameVec;
use crate::heap::IndexedHeap;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

pub struct Lrfu {
    lambda: f64,
    /// CRF at the time of the last reference.
    crf: FrameVec<f64>,
    /// Demand time of the last reference (or the prefetch).
    last: FrameVec<u64>,
    /// Min-heap on (log2 CRF_last + lambda * t_last as ordered bits, touch sequence).
    order: IndexedHeap<(u64, u64)>,
    events: u64,
    scratch: Vec<(Frame, (u64, u64))>,
    /// (CRF_last, t_last) of evicted blocks (MQ §5.1's history buffer).
    history: EvictedHistory<(f64, u64)>,
}

impl Lrfu {
    pub fn new(capacity: usize, lambda: f64) -> Self {
        Self::with_history(capacity, lambda, 0)
    }

    pub fn with_history(capacity: usize, lambda: f64, history: usize) -> Self {
        Lrfu {
            history: EvictedHistory::new(history),
            lambda,
            crf: FrameVec::filled(0.0, capacity),
            last: FrameVec::filled(0, capacity),
            order: IndexedHeap::with_nodes(capacity),
            events: 0,
            scratch: Vec::new(),
        }
    }

    /// The heap key of a block: time-invariant order of CRF. Non-negative finite floats order
    /// like their bit patterns, so the key is an integer.
    #[inline]
    fn rank(&self, f: Frame) -> u64 {
        let f = f as usize;
        let v = self.crf[f].log2() + self.lambda * self.last[f] as f64;
        debug_assert!(v >= 0.0 && v.is_finite());
        v.to_bits()
    }

    #[inline]
    fn place(&mut self, f: Frame) {
        self.events += 1;
        let k = (self.rank(f), self.events);
        self.order.set(f, k);
    }

    /// CRF now of frame `f` (tests and dumps).
    pub fn crf_at(&self, f: Frame, t: u64) -> f64 {
        let f = f as usize;
        self.crf[f] * (-self.lambda * (t - self.last[f]) as f64).exp2()
    }

    /// Test-only view: resident blocks in victim order as `key:CRF` at demand time `t`.
    #[doc(hidden)]
    pub fn dump(&self, t: u64, key_of: impl Fn(Frame) -> u64) -> String {
        let mut v: Vec<Frame> = self.order.nodes().collect();
        v.sort_by_key(|&f| self.order.key(f));
        let s: Vec<String> = v.into_iter().map(|f| format!("{}:{:.4}", key_of(f), self.crf_at(f, t))).collect();
        s.join(" ")
    }
}

impl Policy for Lrfu {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.history.take_for_insert(a.key);
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        // A new block: CRF = F(0) = 1 (prefetched ones too: the MRU side, §4); a demand miss
        // on a remembered block continues its CRF, §3's update as for a hit.
        let f = frame as usize;
        self.crf[f] = match self.history.inserted(a.key) {
            Some((crf, last)) if origin == Origin::Demand => {
                1.0 + (-self.lambda * a.time.saturating_sub(last) as f64).exp2() * crf
            }
            _ => 1.0,
        };
        self.last[f] = a.time;
        self.place(frame);
    }

    fn hit(&mut self, frame: Frame, a: &Access) {
        let f = frame as usize;
        // §3: CRF = F(0) + F(t - t_last) * CRF_last.
        let decay = (-self.lambda * (a.time - self.last[f]) as f64).exp2();
        self.crf[f] = 1.0 + decay * self.crf[f];
        self.last[f] = a.time;
        self.place(frame);
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        // Prefetching paper §4: reset to the initial value instead of updating.
        self.crf[frame as usize] = 1.0;
        self.last[frame as usize] = a.time;
        self.place(frame);
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        min_unpinned(&mut self.order, pins, &mut self.scratch)
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        if why == Removal::Evicted {
            self.history.remember(key, (self.crf[frame as usize], self.last[frame as usize]));
        }
        self.order.remove(frame);
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.history.check()?;
        self.order.check()?;
        if self.order.len() != resident {
            return Err(format!("LRFU orders {} frames, cache {resident}", self.order.len()));
        }
        for f in self.order.nodes() {
            let c = self.crf[f as usize];
            if !(1.0..=f64::MAX).contains(&c) {
                return Err(format!("LRFU: CRF {c} of frame {f} below F(0)"));
            }
            if self.order.key(f).0 != self.rank(f) {
                return Err(format!("LRFU: stale key of frame {f}"));
            }
        }
        Ok(())
    }
}

impl PolicyDef for Lrfu {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lrfu",
        aliases: &[],
        paper: "Lee et al., LRFU: a spectrum of policies that subsumes LRU and LFU, IEEE TC 2001 §3-4; prefetching paper §4",
        summary: "evicts the block with the smallest combined recency and frequency, CRF = sum of (1/2)^(lambda * age) over its references",
        params: &[
            ParamInfo { name: "lambda", default: "0.001", doc: "decay, 0-1: 1 is LRU, 0 is LFU", range: Range::Number(0.0, 1.0) },
            ParamInfo {
                name: "history",
                default: "0",
                doc: "evicted blocks whose CRF is remembered (MQ §5.1 used 4x the cache)",
                range: Range::Share(0.0, 100.0),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let lambda = args.f64("lambda")?;
        let history = super::shares::blocks_floor(args, "lrfu", "history", env)?;
        Ok(Lrfu::with_history(env.capacity, lambda, history))
    }
}
