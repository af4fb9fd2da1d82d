//! LeCaR (Vietri et al., "Driving Cache Replacement with ML-based LeCaR", HotStorage 2018, §3, Algorithm 1).
//! Deviation: none; rules the paper leaves open follow the authors' code (sylab/cacheus lecar.py); `variant=libcachesim` follows LeCaR.c.
//!
//! Two experts, LRU and LFU, each name a victim; when they differ one is drawn with the
//! probability of its weight, and the victim's key goes to the history of the expert that chose
//! it (an agreed victim goes to no history). A miss on a key in an expert's history is that
//! expert's regret: its weight is multiplied by e^(-λ·d^t), t the time the key spent in the
//! history, λ = 0.45 and d = 0.005^(1/N), then the weights are normalised. Each history holds
//! N/2 keys, oldest out first.
//!
//! The authors' code, followed by default: a key returning from a history resumes its LFU
//! count plus one; LFU ties go to the smaller key; weights are held in [0.01, 0.99]. libCacheSim
//! (`variant=libcachesim`): a returning key restarts at count 1; LFU ties go to the block that
//! reached its count first; weights get 1e-10 added instead of the clamp; the draws come from
//! libCacheSim's own generator (policy/experts.rs), so miss counts match it exactly.
//!
//! Prefetching (prefetching paper §4): a prefetched block enters at LRU's MRU end with count 1
//! and its history entry, if any, is set aside; its first demand access is its first access and
//! applies the regret then. A prefetched block evicted unused enters no history.

use super::experts::{Coin, LIBCACHESIM_INITIAL_STATE};
use super::queue::back_unpinned;
use super::{
    Access, Args, BuildEnv, Frame, LikelyVictims, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal,
};
use crate::buckets::PriorityBuckets;
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::heap::IndexedHeap;
use crate::list::{Links, List, NIL};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Expert {
    #[default]
    None,
    Lru,
    Lfu,
}

/// A history entry: who evicted the key, when, and its LFU count then.
#[derive(Clone, Copy, Debug, Default)]
struct Hist {
    expert: Expert,
    evicted: u64,
    freq: u64,
}

/// What LeCaR keeps per resident frame, side by side: a miss writes all of it at once and a
/// hit reads and writes the count and bucket together.
#[derive(Clone, Copy, Debug)]
struct FrameState {
    key: u64,
    /// The LFU count.
    freq: u64,
    /// The frame's LFU bucket (`variant=libcachesim`).
    bucket: u32,
    /// The history entry of a prefetched block, applied at its first demand.
    deferred: Hist,
}

/// The LFU expert's order of the resident frames.
enum LfuOrder {
    /// The authors' code: min-heap on (count, key), ties to the smaller key.
    ByKey(IndexedHeap<(u64, u64)>),
    /// LeCaR.c: ties to the block that reached its count first. Counts only start at 1 and
    /// rise by 1 in this variant, so these are frequency buckets with blocks in arrival order
    /// (Shah, Mitra, Matani, "An O(1) algorithm for implementing the LFU cache eviction
    /// scheme", 2010): the same total order as a heap on (count, arrival sequence), O(1) per
    /// request instead of O(log n).
    ByArrival(PriorityBuckets),
}

pub struct Lecar {
    libcachesim: bool,
    links: Links,
    /// Front = most recently used.
    lru: List,
    /// The LFU expert's victim comes first.
    lfu: LfuOrder,
    per_frame: FrameVec<FrameState>,
    ghosts: Ghosts<Hist>,
    lru_hist: GhostList,
    lfu_hist: GhostList,
    hist_cap: usize,
    w_lru: f64,
    w_lfu: f64,
    learning_rate: f64,
    /// Whether regrets move the weights (libCacheSim's `update-weight`).
    learn: bool,
    discount: f64,
    coin: Coin,
    /// Logical time of the access being served.
    now: u64,
    /// The incoming block's history entry, found by `prepare_insert`.
    incoming: Hist,
    incoming_origin: Origin,
    /// The victim the last `victim` call named, and which expert chose it.
    chosen: Option<(Frame, Expert)>,
    /// Whether the histories are indexed in the cache's index (`Policy::shares_index`); then
    /// the cache learns of forgotten entries and of the entry a removal leaves through the next
    /// two.
    shared: bool,
    forgotten: Option<u64>,
    ghosted: Option<u32>,
}

impl Lecar {
    pub(crate) fn new(
        capacity: usize,
        libcachesim: bool,
        lru_weight: f64,
        learning_rate: f64,
        hist_cap: usize,
        coin: Coin,
    ) -> Self {
        Lecar {
            libcachesim,
            links: Links::with_nodes(capacity),
            lru: List::new(),
            lfu: if libcachesim {
                LfuOrder::ByArrival(PriorityBuckets::with_frames(capacity))
            } else {
                LfuOrder::ByKey(IndexedHeap::with_nodes(capacity))
            },
            per_frame: FrameVec::filled(
                FrameState { key: 0, freq: 0, bucket: NIL, deferred: Hist::default() },
                capacity,
            ),
            // A list may hold one entry over its bound before it is trimmed.
            ghosts: Ghosts::with_capacity(2 * hist_cap + 2),
            lru_hist: GhostList::new(),
            lfu_hist: GhostList::new(),
            hist_cap,
            w_lru: lru_weight,
            w_lfu: 1.0 - lru_weight,
            learning_rate,
            learn: true,
            discount: 0.005f64.powf(1.0 / capacity as f64),
            coin,
            now: 0,
            incoming: Hist::default(),
            incoming_origin: Origin::Demand,
            chosen: None,
            shared: false,
            forgotten: None,
            ghosted: None,
        }
    }

    /// The victims the LRU and LFU experts would name now, pins aside.
    #[inline(always)]
    fn candidates(&self) -> [Option<Frame>; 2] {
        let by_lfu = match &self.lfu {
            LfuOrder::ByKey(heap) => heap.peek(),
            LfuOrder::ByArrival(buckets) => buckets.first_bucket().and_then(|b| buckets.first_frame(b)),
        };
        [self.lru.back(), by_lfu]
    }

    /// Memory hints for the next miss, whose history work would otherwise wait on memory on a
    /// large cache: the history slots the candidate victims' keys would take, and the oldest
    /// entries of both histories, which a full history forgets.
    #[inline(always)]
    fn warm_next_miss(&self) {
        if self.ghosts.worth_warming() {
            for f in self.candidates().into_iter().flatten() {
                self.ghosts.warm(self.per_frame[f as usize].key);
            }
            self.ghosts.warm_oldest(&self.lru_hist);
            self.ghosts.warm_oldest(&self.lfu_hist);
        }
    }

    /// The LRU expert's weight.
    pub fn lru_weight(&self) -> f64 {
        self.w_lru
    }

    /// `LRU: MRU..LRU | LFU: key:count in victim order | H_LRU: MRU..LRU | H_LFU: .. | w_lru`.
    pub fn dump(&self) -> String {
        let key = |f: Frame| self.per_frame[f as usize].key;
        let lru: Vec<String> = self.links.iter(&self.lru).map(|f| key(f).to_string()).collect();
        let lfu: Vec<String> = self.lfu_order().iter().map(|&(c, f)| format!("{}:{c}", key(f))).collect();
        let hist = |l: &GhostList| self.ghosts.keys_of(l).iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" ");
        format!(
            "LRU: {} | LFU: {} | H_LRU: {} | H_LFU: {} | w_lru={:.4}",
            lru.join(" "),
            lfu.join(" "),
            hist(&self.lru_hist),
            hist(&self.lfu_hist),
            self.w_lru
        )
    }

    /// Algorithm 1's UpdateWeight: the expert whose victim came back loses weight by e^(-λ·d^t).
    fn regret(&mut self, h: Hist, now: u64) {
        if !self.learn {
            return;
        }
        let r = self.discount.powf(now.saturating_sub(h.evicted) as f64);
        let (hit, other) = match h.expert {
            Expert::Lru => (&mut self.w_lru, &mut self.w_lfu),
            Expert::Lfu => (&mut self.w_lfu, &mut self.w_lru),
            Expert::None => return,
        };
        if self.libcachesim {
            // LeCaR.c keeps both weights off zero with 1e-10 instead of clamping.
            *hit = *hit * (-self.learning_rate * r).exp() + 1e-10;
            let s = *hit + *other + 2e-10;
            *hit /= s;
            *other = (*other + 1e-10) / s;
        } else {
            *hit *= (-self.learning_rate * r).exp();
            let s = *hit + *other;
            *hit /= s;
            *other /= s;
            // The authors' code never lets an expert's weight pass 0.99.
            if self.w_lru >= 0.99 {
                (self.w_lru, self.w_lfu) = (0.99, 0.01);
            } else if self.w_lfu >= 0.99 {
                (self.w_lru, self.w_lfu) = (0.01, 0.99);
            }
        }
    }

    /// The resident frames with their counts, in the LFU expert's victim order (dumps, checks).
    fn lfu_order(&self) -> Vec<(u64, Frame)> {
        match &self.lfu {
            LfuOrder::ByKey(heap) => {
                let mut v: Vec<((u64, u64), Frame)> = heap.nodes().map(|f| (heap.key(f), f)).collect();
                v.sort();
                v.into_iter().map(|((c, _), f)| (c, f)).collect()
            }
            LfuOrder::ByArrival(b) => {
                b.dump().into_iter().flat_map(|(_, c, fs)| fs.into_iter().map(move |f| (c, f))).collect()
            }
        }
    }

    /// Gives a resident frame a new count (the authors' variant only: LeCaR.c's counts only
    /// rise by one, see `hit`).
    #[inline]
    fn set_count(&mut self, frame: Frame, count: u64) {
        let st = &mut self.per_frame[frame as usize];
        st.freq = count;
        let key = st.key;
        if let LfuOrder::ByKey(heap) = &mut self.lfu {
            heap.set(frame, (count, key));
        }
    }

    fn remember(&mut self, key: u64, h: Hist) {
        if self.hist_cap == 0 {
            return;
        }
        let list = if h.expert == Expert::Lru { &mut self.lru_hist } else { &mut self.lfu_hist };
        let node = self.ghosts.push_front(list, key, h);
        let forgotten = if list.len() > self.hist_cap { self.ghosts.pop_back(list) } else { None };
        if self.shared {
            // At most one entry is forgotten per removal, and the cache takes it before the next.
            debug_assert!(self.forgotten.is_none(), "a forgotten entry the cache did not take");
            self.forgotten = forgotten.map(|(k, _)| k);
            self.ghosted = Some(node);
        }
    }

    /// The incoming block's key was history entry `node`: it leaves the history, and a demand
    /// miss is its expert's regret (a prefetched block's waits for its first demand).
    #[inline(always)]
    fn history_hit(&mut self, node: u32, a: &Access, origin: Origin) {
        let h = self.ghosts.data(node);
        let list = if h.expert == Expert::Lru { &mut self.lru_hist } else { &mut self.lfu_hist };
        self.ghosts.remove(list, node);
        self.incoming = h;
        if origin == Origin::Demand {
            self.regret(h, a.time);
        }
    }
}

impl Policy for Lecar {
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        self.now = a.time;
        self.incoming = Hist::default();
        self.incoming_origin = origin;
        if !self.shared {
            if let Some(node) = self.ghosts.find(a.key) {
                self.history_hit(node, a, origin);
            }
        }
    }

    fn shares_index(&self) -> bool {
        true
    }

    fn share_index(&mut self) {
        self.shared = true;
        self.ghosts = Ghosts::unindexed(self.ghosts.capacity());
    }

    #[inline]
    fn prepare_insert_ghost(&mut self, a: &Access, origin: Origin, node: u32) {
        self.now = a.time;
        self.incoming = Hist::default();
        self.incoming_origin = origin;
        self.history_hit(node, a, origin);
    }

    #[inline(always)]
    fn take_forgotten(&mut self) -> Option<u64> {
        self.forgotten.take()
    }

    #[inline(always)]
    fn take_ghost(&mut self) -> Option<u32> {
        self.ghosted.take()
    }

    fn shared_ghosts(&self) -> usize {
        if self.shared {
            self.ghosts.len()
        } else {
            0
        }
    }

    #[inline(always)]
    fn likely_forgotten(&self) -> [Option<u64>; 4] {
        // A full history forgets its oldest entry when the next victim joins it.
        let [a, b] = self.ghosts.oldest_keys(&self.lru_hist);
        let [c, d] = self.ghosts.oldest_keys(&self.lfu_hist);
        [a, b, c, d]
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.links.push_front(&mut self.lru, frame);
        let h = std::mem::take(&mut self.incoming);
        let mut deferred = Hist::default();
        let mut count = 1;
        if origin == Origin::Prefetch {
            deferred = h;
        } else if h.expert != Expert::None && !self.libcachesim {
            count = h.freq + 1;
        }
        let bucket = match &mut self.lfu {
            LfuOrder::ByKey(heap) => {
                heap.set(frame, (count, a.key));
                NIL
            }
            LfuOrder::ByArrival(buckets) => {
                // Every block enters at count 1, the newest of its bucket.
                let b = buckets.bucket_at_or_after(NIL, 1);
                buckets.push_back(b, frame);
                b
            }
        };
        self.per_frame[frame as usize] = FrameState { key: a.key, freq: count, bucket, deferred };
        self.warm_next_miss();
    }

    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.links.move_to_front(&mut self.lru, frame);
        let st = &mut self.per_frame[frame as usize];
        st.freq += 1;
        match &mut self.lfu {
            LfuOrder::ByKey(heap) => heap.set(frame, (st.freq, st.key)),
            // The newest block of the next count up (O(1) LFU, Shah et al. 2010).
            LfuOrder::ByArrival(buckets) => st.bucket = buckets.promote(st.bucket, frame, st.freq),
        }
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.links.move_to_front(&mut self.lru, frame);
        let h = std::mem::take(&mut self.per_frame[frame as usize].deferred);
        if h.expert != Expert::None {
            self.regret(h, a.time);
            if !self.libcachesim {
                self.set_count(frame, h.freq + 1);
            }
        }
    }

    #[inline(always)]
    fn warms(&self) -> bool {
        true
    }

    #[inline(always)]
    fn warm(&self, frame: Option<Frame>, key: u64) {
        match frame {
            // A hit moves the frame in the LRU list and raises its count.
            Some(f) => {
                self.links.warm(f);
                self.per_frame.prefetch(f as usize);
                if let LfuOrder::ByArrival(buckets) = &self.lfu {
                    buckets.warm(f);
                }
            }
            // A miss looks the key up in the histories (in the cache's index when shared).
            None if !self.shared => self.ghosts.warm(key),
            None => {}
        }
    }

    #[inline(always)]
    fn likely_victims(&self) -> LikelyVictims {
        // The two experts' candidates: one of them goes (unless pinned), and the one behind
        // it in its expert's order comes up next.
        let [by_lru, by_lfu] = self.candidates();
        let after_lfu = match &self.lfu {
            LfuOrder::ByKey(_) => None,
            LfuOrder::ByArrival(buckets) => by_lfu.and_then(|f| buckets.next_frame(f)),
        };
        LikelyVictims { next: [by_lru, by_lfu], after: [by_lru.and_then(|f| self.links.prev(f)), after_lfu] }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let by_lru = back_unpinned(&self.links, &self.lru, pins)?;
        let by_lfu = match &self.lfu {
            LfuOrder::ByKey(heap) => {
                let top = heap.peek()?;
                if pins.pinned(top) {
                    heap.min_unskipped(|f| pins.pinned(f))?
                } else {
                    top
                }
            }
            // Keys (count, arrival) are all distinct, so the first unpinned frame in bucket
            // order is the heap's `min_unskipped`.
            LfuOrder::ByArrival(buckets) => buckets.first_unskipped(|f| pins.pinned(f))?.0,
        };
        let (frame, expert) = if by_lru == by_lfu {
            (by_lru, Expert::None)
        } else if self.coin.below(self.w_lru) {
            (by_lru, Expert::Lru)
        } else {
            (by_lfu, Expert::Lfu)
        };
        self.chosen = Some((frame, expert));
        Some(frame)
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.links.remove(&mut self.lru, frame);
        let st = &mut self.per_frame[frame as usize];
        match &mut self.lfu {
            LfuOrder::ByKey(heap) => heap.remove(frame),
            LfuOrder::ByArrival(buckets) => buckets.leave(st.bucket, frame),
        }
        st.bucket = NIL;
        st.deferred = Hist::default();
        let freq = st.freq;
        let expert = match self.chosen.take() {
            Some((c, e)) if c == frame => e,
            _ => Expert::None,
        };
        if why == Removal::Evicted && expert != Expert::None {
            self.remember(key, Hist { expert, evicted: self.now, freq });
        }
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.lru)?;
        let lfu_len = match &self.lfu {
            LfuOrder::ByKey(heap) => {
                heap.check()?;
                heap.len()
            }
            LfuOrder::ByArrival(buckets) => {
                buckets.check()?;
                for (b, c, frames) in buckets.dump() {
                    if let Some(f) = frames.iter().find(|&&f| self.per_frame[f as usize].bucket != b) {
                        return Err(format!(
                            "LeCaR: frame {f} in bucket {b} says {}",
                            self.per_frame[*f as usize].bucket
                        ));
                    }
                    if let Some(f) = frames.iter().find(|&&f| self.per_frame[f as usize].freq != c) {
                        return Err(format!(
                            "LeCaR: frame {f} of count {} in bucket {c}",
                            self.per_frame[*f as usize].freq
                        ));
                    }
                }
                buckets.len()
            }
        };
        self.ghosts.check(&[&self.lru_hist, &self.lfu_hist])?;
        if self.lru.len() != resident || lfu_len != resident {
            return Err(format!("LeCaR: LRU holds {}, LFU {lfu_len}, cache {resident}", self.lru.len()));
        }
        if self.lru_hist.len() > self.hist_cap || self.lfu_hist.len() > self.hist_cap {
            return Err(format!(
                "LeCaR: histories {} and {} over {}",
                self.lru_hist.len(),
                self.lfu_hist.len(),
                self.hist_cap
            ));
        }
        if (self.w_lru + self.w_lfu - 1.0).abs() > 1e-6 || !(0.0..=1.0).contains(&self.w_lru) {
            return Err(format!("LeCaR: weights {} + {} do not make 1", self.w_lru, self.w_lfu));
        }
        // A shared index holds a key once, as a block or as a history entry.
        if !self.shared {
            for f in self.links.iter(&self.lru) {
                let key = self.per_frame[f as usize].key;
                if self.ghosts.find(key).is_some() {
                    return Err(format!("LeCaR: resident block {key} is also in a history"));
                }
            }
        }
        Ok(())
    }

    // AMP asks about the histories to size its default partition (AMP §3.2).
    fn keeps_ghosts(&self) -> bool {
        // Shared entries are found through the cache's index, which the policy cannot search.
        !self.shared
    }

    fn ghost_hit(&self, key: u64) -> bool {
        !self.shared && self.ghosts.find(key).is_some()
    }

    fn ghost_len(&self) -> usize {
        self.ghosts.len()
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("lecar_lru_weight", self.w_lru));
    }
}

impl PolicyDef for Lecar {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lecar",
        aliases: &[],
        paper: "Vietri et al., LeCaR, HotStorage 2018, §3 Algorithm 1 (authors' code for open details)",
        summary: "LRU and LFU experts with histories of their victims; regret-weighted random choice",
        params: &[
            ParamInfo { name: "lru-weight", default: "0.5", doc: "initial weight (probability) of the LRU expert, 0..1", range: Range::Number(0.0, 1.0) },
            ParamInfo { name: "learning-rate", default: "0.45", doc: "λ of the weight update", range: Range::Number(0.0, 1e6) },
            ParamInfo { name: "learn", default: "true", doc: "whether regrets move the weights (false: a fixed mix, libCacheSim's update-weight=0)", range: Range::Flag },
            ParamInfo { name: "history", default: "50%", doc: "entries in each expert's history, rounded down (the paper: N/2)", range: Range::Share(0.0, 100.0) },
            ParamInfo { name: "variant", default: "paper", doc: "paper (authors' rules) | libcachesim (LeCaR.c's rules and random stream)", range: Range::Choice(&["paper", "libcachesim"]) },
            ParamInfo { name: "seed", default: "run", doc: "seed of the expert draws; `run` uses --seed (variant=libcachesim: `run` = a fresh libCacheSim's state)", range: Range::Seed },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let libcachesim = args.choice("variant", &["paper", "libcachesim"])? == "libcachesim";
        let lru_weight = args.f64("lru-weight")?;
        let learning_rate = args.f64("learning-rate")?;
        // N/2 rounded down, as the authors' code (`cache_size // 2`) and LeCaR.c
        // (`ghost bytes > cache_size / 2`) both size it: at an odd N they keep (N-1)/2 keys.
        let hist_cap = super::shares::blocks_floor(args, "lecar", "history", env)?;
        let coin = if libcachesim {
            let state = if args.text("seed") == "run" { LIBCACHESIM_INITIAL_STATE } else { args.u64("seed")? as u128 };
            Coin::libcachesim(state)
        } else {
            Coin::own(args.seed(env.seed)?)
        };
        let mut p = Lecar::new(env.capacity, libcachesim, lru_weight, learning_rate, hist_cap, coin);
        p.learn = args.bool("learn")?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    /// A coin that always picks LRU (w = 1) or always LFU (w = 0), for hand-computed steps.
    fn lecar(cap: usize, libcachesim: bool, w: f64, lr: f64) -> Lecar {
        Lecar::new(cap, libcachesim, w, lr, cap / 2, Coin::own(1))
    }

    #[test]
    fn an_odd_cache_keeps_histories_of_half_its_size_rounded_down() {
        // lecar.py's `history_size = cache_size // 2` and LeCaR.c's `while (ghost bytes >
        // cache_size / 2)`: a 1025-block cache keeps 512 keys per history, not 513 (which cost
        // 6 misses against libCacheSim on CloudPhysics, docs/policies/lecar.md).
        let info = crate::policy::registry::lookup("lecar").unwrap();
        for (cap, variant, history, kept) in [
            (1025, "paper", "50%", 512),
            (1025, "libcachesim", "50%", 512),
            (5, "paper", "50%", 2),
            (1, "paper", "50%", 0),
        ] {
            let given =
                vec![("variant".to_string(), variant.to_string()), ("history".to_string(), history.to_string())];
            let args = Args::new(crate::policy::registry::Kind::Policy, info, &given).unwrap();
            let p = Lecar::build(&args, &BuildEnv { capacity: cap, block_size: 4096, seed: 1 }).unwrap();
            assert_eq!(p.hist_cap, kept, "{cap} blocks, {variant}");
        }
    }

    #[test]
    fn lru_expert_victims_go_to_its_history_and_cost_it_weight() {
        let mut s = Steps::new(lecar(4, false, 1.0, 0.45), 4);
        assert_eq!(s.run(&[1, 1, 1, 2, 3, 4]), "MHHMMM");
        assert_eq!(s.policy().dump(), "LRU: 4 3 2 1 | LFU: 2:1 3:1 4:1 1:3 | H_LRU:  | H_LFU:  | w_lru=1.0000");
        // 5 at time 6: LRU names 1, LFU names 2; the coin (w_lru = 1) says LRU: 1 to H_LRU.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "LRU: 5 4 3 2 | LFU: 2:1 3:1 4:1 5:1 | H_LRU: 1 | H_LFU:  | w_lru=1.0000");
        // 1 returns at time 7 after t = 1: w_lru = e^(-λd) / (e^(-λd) + 0) = 1, held at 0.99; it
        // resumes at count 3 + 1. Both experts name 2: agreed, so 2 enters no history.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(s.policy().dump(), "LRU: 1 5 4 3 | LFU: 3:1 4:1 5:1 1:4 | H_LRU:  | H_LFU:  | w_lru=0.9900");
    }

    #[test]
    fn weight_update_matches_algorithm_1() {
        // w = 0.5 each; a regret after t steps: w_lru' = 0.5·e^(-λ d^t) / (0.5·e^(-λ d^t) + 0.5).
        let mut p = lecar(4, false, 0.5, 0.45);
        p.regret(Hist { expert: Expert::Lru, evicted: 10, freq: 1 }, 12);
        let d = 0.005f64.powf(0.25);
        let e = (-0.45 * d * d).exp();
        assert!((p.lru_weight() - e / (e + 1.0)).abs() < 1e-12, "{}", p.lru_weight());
        // libCacheSim adds 1e-10 to both before normalising.
        let mut q = lecar(4, true, 0.5, 0.45);
        q.regret(Hist { expert: Expert::Lfu, evicted: 10, freq: 1 }, 12);
        let lfu = 0.5 * e + 1e-10;
        let s = lfu + 0.5 + 2e-10;
        assert!((q.lru_weight() - (0.5 + 1e-10) / s).abs() < 1e-15);
    }

    #[test]
    fn lfu_ties_go_to_the_smaller_key_in_the_paper_variant() {
        let mut s = Steps::new(lecar(4, false, 0.0, 0.45), 4);
        // 5: LRU names 3; among the count-1 blocks 3 2 1 the smallest key, 1, is LFU's: the
        // coin (w_lru = 0) says LFU.
        assert_eq!(s.run(&[4, 3, 2, 1, 4, 5]), "MMMMHM");
        assert_eq!(s.policy().dump(), "LRU: 5 4 2 3 | LFU: 2:1 3:1 5:1 4:2 | H_LRU:  | H_LFU: 1 | w_lru=0.0000");
    }

    #[test]
    fn libcachesim_breaks_lfu_ties_by_arrival_and_restarts_counts() {
        let mut s = Steps::new(lecar(4, true, 0.0, 0.45), 4);
        // 5: LRU and LFU (first to reach count 1) both name 3: agreed, no history, no draw.
        assert_eq!(s.run(&[4, 3, 2, 1, 4, 5]), "MMMMHM");
        assert_eq!(s.policy().dump(), "LRU: 5 4 1 2 | LFU: 2:1 1:1 5:1 4:2 | H_LRU:  | H_LFU:  | w_lru=0.0000");
        // 6 at time 8: LRU names 4, LFU 5; the coin (w_lru = 0) says LFU.
        assert_eq!(s.run(&[2, 1, 6]), "HHM");
        assert_eq!(s.policy().dump(), "LRU: 6 1 2 4 | LFU: 6:1 4:2 2:2 1:2 | H_LRU:  | H_LFU: 5 | w_lru=0.0000");
        // 5 returns: w_lru = 1e-10 / (e^(-λd) + 3e-10), and the coin picks LFU again: 6
        // goes to H_LFU and 5 restarts at count 1.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "LRU: 5 1 2 4 | LFU: 5:1 4:2 2:2 1:2 | H_LRU:  | H_LFU: 6 | w_lru=0.0000");
    }

    #[test]
    fn prefetched_blocks_defer_their_regret_to_the_first_demand() {
        let mut s = Steps::new(lecar(2, false, 0.0, 0.45), 2);
        // 3: LRU names 1, LFU names 2; the coin (w_lru = 0) says LFU: 2 to H_LFU.
        assert_eq!(s.run(&[1, 1, 2, 3]), "MHMM");
        assert_eq!(s.policy().dump(), "LRU: 3 1 | LFU: 3:1 1:2 | H_LRU:  | H_LFU: 2 | w_lru=0.0000");
        // Prefetching 2 takes it out of H_LFU with the weights untouched; LFU evicts 3.
        s.prefetch(2);
        assert_eq!(s.policy().dump(), "LRU: 2 1 | LFU: 2:1 1:2 | H_LRU:  | H_LFU: 3 | w_lru=0.0000");
        // Its first demand applies the regret (w_lfu = 1, held at 0.99) and resumes count 1 + 1.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(s.policy().dump(), "LRU: 2 1 | LFU: 1:2 2:2 | H_LRU:  | H_LFU: 3 | w_lru=0.0100");
    }

    /// Outside a cache (AMP's default partition) LeCaR indexes its histories itself; inside one
    /// the cache's index holds them. Both give the same victims, weights and histories.
    #[test]
    fn histories_in_the_cache_index_behave_as_in_their_own() {
        for libcachesim in [false, true] {
            let cap = 16;
            let make = || Lecar::new(cap, libcachesim, 0.5, 0.45, cap / 2, Coin::own(9));
            let mut shared = Steps::new(make(), cap);
            let mut own = make();
            // Residency for the policy on its own: key -> frame.
            let mut frames: std::collections::HashMap<u64, Frame> = std::collections::HashMap::new();
            let mut x = 7u64;
            for t in 0..3000u64 {
                // A hot set of 12 blocks and a colder one of 60: hits, misses and history hits.
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let key = if (x >> 40).is_multiple_of(3) { (x >> 20) % 12 } else { 100 + (x >> 24) % 60 };
                let a = Access { key, block: key, time: t, ..Access::default() };
                let hit = match frames.get(&key) {
                    Some(&f) => {
                        own.hit(f, &a);
                        'H'
                    }
                    None => {
                        assert_eq!(own.ghost_hit(key), own.ghosts.find(key).is_some());
                        own.prepare_insert(&a, Origin::Demand);
                        let f = if frames.len() < cap {
                            frames.len() as Frame
                        } else {
                            let v = own.victim(&Pins::none(), &a).expect("a victim");
                            let old = own.per_frame[v as usize].key;
                            own.remove(v, old, Removal::Evicted);
                            frames.remove(&old);
                            v
                        };
                        own.insert(f, &a, Origin::Demand);
                        frames.insert(key, f);
                        'M'
                    }
                };
                assert_eq!(shared.demand(key), hit, "access {t} of {key}");
                own.check(frames.len()).unwrap();
            }
            // Regrets moved the weights: keys came back from the histories.
            assert!(own.lru_weight() != 0.5 && own.ghost_len() > 0);
            assert!(own.keeps_ghosts() && !shared.policy().keeps_ghosts());
            assert_eq!(own.dump(), shared.policy().dump(), "libcachesim: {libcachesim}");
        }
    }

    #[test]
    fn an_unused_prefetched_victim_enters_no_history() {
        let mut s = Steps::new(lecar(2, false, 0.0, 0.45), 2);
        assert_eq!(s.run(&[1, 1]), "MH");
        s.prefetch(2);
        // 3: LRU names 1, LFU names the prefetched 2 (count 1), and the coin says LFU.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().dump(), "LRU: 3 1 | LFU: 3:1 1:2 | H_LRU:  | H_LFU:  | w_lru=0.0000");
    }
}
