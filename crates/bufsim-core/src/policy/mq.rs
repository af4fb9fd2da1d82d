//! MQ (Zhou, Philbin & Li, "The Multi-Queue Replacement Algorithm for Second Level Buffer
//! Caches", USENIX 2001, §4 and Figure 5), prefetch-aware as in the prefetching paper §4.
//! Deviation: the paper defers its adaptive lifeTime to a thesis; `lifetime=adaptive` is our
//! documented rule (docs/policies/mq.md), measured online from temporal distances.
//!
//! m LRU queues Q0..Qm-1; a block with f demand accesses lives in Q[QueueNum(f)], with
//! QueueNum(f) = min(floor(log2 f), m-1). The victim is the LRU block of the lowest non-empty
//! queue; it leaves its id and count in Qout, a FIFO history. A block not accessed for
//! lifeTime accesses falls one queue (Adjust, once per access).
//!
//! Prefetching (prefetching paper §4): a prefetch is not an access. By default a prefetched block
//! enters Q0 at the MRU end with count 0 and does not touch Qout; its first demand access counts
//! as a first access (a miss of Figure 5 without the eviction: count = remembered count + 1, or
//! 1). With `prefetch=history` (AccuSim's `MQref`, prefetching paper §4: "not incrementing the
//! reference counter when a block is prefetched") a prefetched block found in Qout takes its
//! remembered count, not incremented, and enters that count's queue. Either way a prefetched
//! block evicted unused leaves no Qout entry.
//!
//! `variant=accusim` is AccuSim's `MQref` (mq.cc), the code behind the prefetching paper's
//! figures, which departs from both papers: a block's count rises only when it is prefetched,
//! never on a demand access (so without read-ahead every block stays in Q0 and MQ is LRU, as
//! that paper's Tables 6 and 7 show: MQ and LRU make the same number of disk requests there);
//! a missed or prefetched block is looked up in Qout before the victim is pushed into it;
//! expireTime is counted from the access's 1-based time; and a prefetch, though it does not
//! advance time, runs Adjust.

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::{Relative, SpecError};

/// No demand access known.
const UNKNOWN: u64 = u64::MAX;

/// Temporal-distance bins: bin k holds distances in (2^(k-1), 2^k], bin 0 distance 1.
const BINS: usize = 64;

/// How `lifeTime` is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lifetime {
    /// A fixed number of accesses.
    Fixed(u64),
    /// Set from the temporal distances observed (see [`Mq`] and docs/policies/mq.md).
    Adaptive,
}

/// A resident block's MQ state.
#[derive(Clone, Copy)]
struct Meta {
    /// Demand accesses (the paper's b.reference).
    count: u64,
    expire: u64,
    /// Logical time of the last demand access, or UNKNOWN.
    last: u64,
    queue: u8,
}

pub struct Mq {
    capacity: u64,
    links: Links,
    /// Q[i]: front = most recently used (the paper's tail), back = LRU (the paper's head).
    queues: Vec<List>,
    /// Per frame, side by side: a hit touches one line of it.
    meta: FrameVec<Meta>,
    keys: FrameVec<u64>,
    /// Qout: FIFO of evicted ids with their counts and last access times (front = newest).
    qout: Ghosts<(u64, u64)>,
    qout_fifo: GhostList,
    mode: Lifetime,
    lifetime: u64,
    /// Adaptive lifetime: histogram of temporal distances (power-of-two bins) and the epoch.
    distances: Box<[u64; BINS]>,
    epoch: u64,
    /// `prefetch=history`: a prefetched block takes its remembered count from Qout.
    prefetch_history: bool,
    /// `variant=accusim` (see the module doc).
    accusim: bool,
    /// `accusim`: the Qout entry (count, last access) of the block being inserted, taken out
    /// before the victim is chosen.
    incoming: Option<(u64, u64)>,
}

/// An MQ cache as block keys: queues Q0.. from MRU to LRU, Qout newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MqDump {
    pub queues: Vec<Vec<u64>>,
    pub qout: Vec<(u64, u64)>,
    pub lifetime: u64,
}

impl Mq {
    /// `queues` LRU queues, a Qout of `history` entries, and a lifetime rule.
    pub fn new(capacity: usize, queues: usize, history: usize, mode: Lifetime) -> Self {
        assert!((1..=64).contains(&queues), "MQ needs 1 to 64 queues");
        let lifetime = match mode {
            Lifetime::Fixed(l) => l,
            // Until the first epoch has been measured: the cache size (AccuSim's choice).
            Lifetime::Adaptive => capacity as u64,
        };
        Mq {
            capacity: capacity as u64,
            links: Links::with_nodes(capacity),
            queues: vec![List::new(); queues],
            meta: FrameVec::filled(Meta { count: 0, expire: 0, last: UNKNOWN, queue: 0 }, capacity),
            keys: FrameVec::filled(0, capacity),
            qout: Ghosts::with_capacity(history),
            qout_fifo: GhostList::new(),
            mode,
            lifetime,
            distances: Box::new([0; BINS]),
            epoch: (capacity as u64).max(1),
            prefetch_history: false,
            accusim: false,
            incoming: None,
        }
    }

    /// `variant=accusim`: AccuSim's `MQref` rules (module doc).
    pub fn with_accusim(mut self, on: bool) -> Self {
        self.accusim = on;
        self
    }

    /// AccuSim's reference: the block goes to the MRU end of its count's queue with
    /// expireTime = currentTime + lifeTime, currentTime counted from 1, then Adjust.
    #[inline]
    fn accusim_reference(&mut self, frame: Frame, a: &Access) {
        self.enqueue(frame, a.time + 1);
        self.adjust(a.time);
    }

    /// `prefetch=history`: a prefetched block found in Qout enters the queue of its remembered
    /// count (not incremented) instead of Q0 with count 0.
    pub fn with_prefetch_history(mut self, on: bool) -> Self {
        self.prefetch_history = on;
        self
    }

    /// The lifeTime in force.
    pub fn lifetime(&self) -> u64 {
        self.lifetime
    }

    pub fn dump(&self) -> MqDump {
        MqDump {
            queues: self.queues.iter().map(|q| self.links.iter(q).map(|f| self.keys[f as usize]).collect()).collect(),
            qout: self.qout.nodes_of(&self.qout_fifo).map(|n| (self.qout.key(n), self.qout.data(n).0)).collect(),
            lifetime: self.lifetime,
        }
    }

    /// QueueNum(f) = floor(log2 f), capped at m-1 (MQ paper §4 and §5.1); count 0 -> Q0.
    #[inline]
    fn queue_num(&self, f: u64) -> usize {
        let q = if f <= 1 { 0 } else { 63 - f.leading_zeros() as usize };
        q.min(self.queues.len() - 1)
    }

    /// Puts `frame` at the tail (MRU end) of the queue its count calls for.
    #[inline]
    fn enqueue(&mut self, frame: Frame, now: u64) {
        let f = frame as usize;
        let q = self.queue_num(self.meta[f].count);
        self.meta[f].queue = q as u8;
        self.links.push_front(&mut self.queues[q], frame);
        // b.expireTime = currentTime + lifeTime
        self.meta[f].expire = now.saturating_add(self.lifetime);
    }

    #[inline]
    fn dequeue(&mut self, frame: Frame) {
        let q = self.meta[frame as usize].queue as usize;
        self.links.remove(&mut self.queues[q], frame);
    }

    /// Figure 5, Adjust(): currentTime++; the head (LRU block) of each queue Qk, k >= 1, whose
    /// expireTime has passed moves to the tail of Qk-1 with a new expireTime.
    #[inline]
    fn adjust(&mut self, now: u64) {
        let current = now + 1;
        for k in 1..self.queues.len() {
            if let Some(c) = self.queues[k].back() {
                if self.meta[c as usize].expire < current {
                    self.links.remove(&mut self.queues[k], c);
                    self.links.push_front(&mut self.queues[k - 1], c);
                    self.meta[c as usize].queue = (k - 1) as u8;
                    self.meta[c as usize].expire = current.saturating_add(self.lifetime);
                }
            }
        }
        if self.mode == Lifetime::Adaptive && current.is_multiple_of(self.epoch) {
            self.adapt_lifetime();
        }
    }

    /// Records the temporal distance of a demand access whose previous access was at `prev`.
    #[inline]
    fn observe(&mut self, prev: u64, now: u64) {
        if self.mode == Lifetime::Adaptive && prev != UNKNOWN && now > prev {
            let d = now - prev;
            // Bin of the distance rounded up to a power of two (MQ paper §3.1, Figure 2).
            let bin = (64 - (d - 1).leading_zeros()) as usize;
            self.distances[bin.min(BINS - 1)] += 1;
        }
    }

    /// The adaptive rule (docs/policies/mq.md): at the end of each epoch of `capacity` accesses,
    /// lifeTime becomes the upper edge 2^k of the power-of-two bin holding the most accesses
    /// among bins of distances longer than the cache size (the ones recency alone cannot keep);
    /// ties go to the shorter bin; without any such access it stays. Counts then halve, so the
    /// histogram follows the workload.
    fn adapt_lifetime(&mut self) {
        let mut best: Option<(u64, usize)> = None;
        for (k, &n) in self.distances.iter().enumerate() {
            let upper = 1u64.checked_shl(k as u32).unwrap_or(u64::MAX);
            if upper <= self.capacity || n == 0 {
                continue;
            }
            if best.is_none_or(|(bn, _)| n > bn) {
                best = Some((n, k));
            }
        }
        if let Some((_, k)) = best {
            self.lifetime = 1u64.checked_shl(k as u32).unwrap_or(u64::MAX);
        }
        for n in self.distances.iter_mut() {
            *n /= 2;
        }
    }

    /// Takes `key` out of Qout: its remembered count and last access, if it was there.
    #[inline]
    fn take_history(&mut self, key: u64) -> Option<(u64, u64)> {
        let node = self.qout.find(key)?;
        Some(self.qout.remove(&mut self.qout_fifo, node).1)
    }

    /// A demand access of a block that was not resident as a demanded block: Figure 5's miss
    /// path after EvictBlock (count = Qout's value + 1, or 1). `known` is what the block holds
    /// already: nothing for a miss; for a prefetched block, the count and last access it was
    /// given when prefetched.
    #[inline]
    fn first_access(&mut self, frame: Frame, a: &Access, known: (u64, u64)) {
        let f = frame as usize;
        let (count, prev) = self.take_history(a.key).unwrap_or(known);
        self.observe(prev, a.time);
        self.meta[f].count = count.saturating_add(1);
        self.meta[f].last = a.time;
        self.enqueue(frame, a.time);
        self.adjust(a.time);
    }
}

impl Policy for Mq {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        if self.accusim {
            // AccuSim takes the block out of its ghost queue before it evicts.
            self.incoming = self.take_history(a.key);
        }
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.keys[frame as usize] = a.key;
        if self.accusim {
            let f = frame as usize;
            let (count, last) = self.incoming.take().unwrap_or((0, UNKNOWN));
            // Only a prefetch counts.
            self.meta[f].count = if origin == Origin::Prefetch { count.saturating_add(1) } else { count };
            self.meta[f].last = last;
            self.accusim_reference(frame, a);
            return;
        }
        match origin {
            Origin::Demand => self.first_access(frame, a, (0, UNKNOWN)),
            Origin::Prefetch => {
                // Count 0 in Q0, or with `prefetch=history` the count Qout remembers, not
                // incremented; not an access, so no Adjust.
                let remembered = if self.prefetch_history { self.take_history(a.key) } else { None };
                let (count, last) = remembered.unwrap_or((0, UNKNOWN));
                let f = frame as usize;
                self.meta[f].count = count;
                self.meta[f].last = last;
                self.enqueue(frame, a.time);
            }
        }
    }

    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        let f = frame as usize;
        self.dequeue(frame);
        if self.accusim {
            self.accusim_reference(frame, a);
            return;
        }
        self.observe(self.meta[f].last, a.time);
        self.meta[f].last = a.time;
        self.meta[f].count = self.meta[f].count.saturating_add(1);
        self.enqueue(frame, a.time);
        self.adjust(a.time);
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.dequeue(frame);
        if self.accusim {
            self.accusim_reference(frame, a);
            return;
        }
        let f = frame as usize;
        self.first_access(frame, a, (self.meta[f].count, self.meta[f].last));
    }

    #[inline]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // EvictBlock(): the head of the first non-empty queue.
        self.queues.iter().find_map(|q| back_unpinned(&self.links, q, pins))
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let f = frame as usize;
        self.dequeue(frame);
        if !why.remembered() || self.qout.capacity() == 0 {
            return;
        }
        // If Qout is full, remove its head; add the victim's id (and count) to its tail.
        if self.qout.len() == self.qout.capacity() {
            self.qout.pop_back(&mut self.qout_fifo);
        }
        self.qout.push_front(&mut self.qout_fifo, key, (self.meta[f].count, self.meta[f].last));
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        let mut total = 0;
        for (i, q) in self.queues.iter().enumerate() {
            self.links.check(q)?;
            for f in self.links.iter(q) {
                if self.meta[f as usize].queue as usize != i {
                    return Err(format!("MQ: frame {f} in Q{i} records Q{}", self.meta[f as usize].queue));
                }
                // Demotion only lowers a block; promotion goes to QueueNum(count).
                if i > self.queue_num(self.meta[f as usize].count) {
                    return Err(format!("MQ: frame {f} in Q{i} above QueueNum({})", self.meta[f as usize].count));
                }
            }
            total += q.len();
        }
        if total != resident {
            return Err(format!("MQ queues hold {total} frames, cache {resident}"));
        }
        self.qout.check(&[&self.qout_fifo])?;
        if self.qout.len() > self.qout.capacity() {
            return Err("MQ: Qout over its size".into());
        }
        Ok(())
    }
}

impl PolicyDef for Mq {
    const INFO: PolicyInfo = PolicyInfo {
        name: "mq",
        aliases: &["multi-queue"],
        paper: "Zhou, Philbin & Li, Multi-Queue, USENIX 2001, §4 Figure 5; prefetch-aware per the prefetching paper §4",
        summary: "LRU queues by log2 of the access count, lifetime demotion, FIFO history Qout of counts",
        params: &[
            ParamInfo { name: "queues", default: "8", doc: "number of LRU queues m (1-64; 1 is LRU)", range: Range::Whole(1, 64) },
            ParamInfo { name: "history", default: "4x", doc: "Qout entries: share of the cache (4x, 50%) or a size", range: Range::Share(0.0, 100.0) },
            ParamInfo {
                name: "lifetime",
                default: "adaptive",
                doc: "adaptive (peak temporal distance beyond the cache size, per epoch) | accesses (10000) | share of the cache (1x)",
                range: Range::Text("adaptive, a number of accesses (10000) or a share of the cache (1x, 50%)"),
            },
            ParamInfo {
                name: "prefetch",
                default: "fresh",
                doc: "fresh: a prefetched block enters Q0 with count 0 | history: with the count Qout remembers, not incremented (the prefetching paper's §4)",
                range: Range::Choice(&["fresh", "history"]),
            },
            ParamInfo {
                name: "variant",
                default: "paper",
                doc: "paper | accusim (AccuSim's mq.cc: only prefetches raise a count, so without read-ahead MQ is LRU; `prefetch` is then unused)",
                range: Range::Choice(&["paper", "accusim"]),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let queues = args.u64("queues")?;
        if !(1..=64).contains(&queues) {
            return Err(SpecError(format!("policy `mq`: queues={queues} must be between 1 and 64")));
        }
        let history = args.blocks("history", env)? as usize;
        let given = args.text("lifetime").trim();
        let text = given.to_ascii_lowercase();
        let mode = if text == "adaptive" {
            Lifetime::Adaptive
        } else if let Ok(n) = text.parse::<u64>() {
            Lifetime::Fixed(n)
        } else {
            match Relative::parse(&text) {
                Ok(r @ Relative::Fraction(_)) => Lifetime::Fixed(r.blocks(env.capacity as u64, env.block_size)),
                _ => {
                    return Err(SpecError(format!(
                        "policy `mq`: lifetime=`{given}` must be `adaptive`, a number of accesses (10000) or a share of the cache (1x, 50%)"
                    )))
                }
            }
        };
        let prefetch_history = match args.text("prefetch") {
            "fresh" => false,
            "history" => true,
            other => return Err(SpecError(format!("policy `mq`: prefetch=`{other}` must be `fresh` or `history`"))),
        };
        let accusim = args.choice("variant", &["paper", "accusim"])? == "accusim";
        Ok(Mq::new(env.capacity, queues as usize, history, mode)
            .with_prefetch_history(prefetch_history)
            .with_accusim(accusim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn mq(capacity: usize, queues: usize, history: usize, lifetime: u64) -> Steps<Mq> {
        Steps::new(Mq::new(capacity, queues, history, Lifetime::Fixed(lifetime)), capacity)
    }

    fn state(s: &Steps<Mq>) -> (Vec<Vec<u64>>, Vec<(u64, u64)>) {
        let d = s.policy().dump();
        (d.queues, d.qout)
    }

    #[test]
    fn follows_figure_5_step_by_step() {
        // 2 blocks, 3 queues, Qout of 2, lifeTime 2. t is currentTime before the access;
        // queues MRU first; expireTime = t + 2; Adjust demotes a head with expireTime < t + 1.
        let mut s = mq(2, 3, 2, 2);
        // t0 1: Q0=[1] exp 2. t1 1: count 2 -> Q1=[1] exp 3.
        assert_eq!(s.run(&[1, 1]), "MH");
        assert_eq!(state(&s), (vec![vec![], vec![1], vec![]], vec![]));
        // t2 2: Q0=[2] exp 4. t3 2: Q1=[2,1]; Adjust at 4: 1 (exp 3) falls to Q0, exp 6.
        assert_eq!(s.run(&[2, 2]), "MH");
        assert_eq!(state(&s), (vec![vec![1], vec![2], vec![]], vec![]));
        // t4 3: EvictBlock takes Q0's head 1 -> Qout=[(1,2)]; 3 gets count 1.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(state(&s), (vec![vec![3], vec![2], vec![]], vec![(1, 2)]));
        // t5 1: 3 goes to Qout; 1 is in Qout: count 2 + 1 = 3 -> Q1 (log2 3 = 1), exp 7;
        // Adjust at 6: 2 (exp 5) falls to Q0.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(state(&s), (vec![vec![2], vec![1], vec![]], vec![(3, 1)]));
        // t6 4: 2 to Qout. t7 5: 4 to Qout, which is full: its head 3 is dropped; Adjust at 8:
        // 1 (exp 7) falls to Q0's tail.
        assert_eq!(s.run(&[4, 5]), "MM");
        assert_eq!(state(&s), (vec![vec![1, 5], vec![], vec![]], vec![(4, 1), (2, 2)]));
    }

    #[test]
    fn eviction_goes_to_qout_before_the_lookup() {
        // Figure 5 runs EvictBlock() before the Qout look-up: when b is the oldest entry of a
        // full Qout, the victim pushes it out and b starts again from count 1. (libCacheSim
        // looks Qout up first and would restore b's count 2; see docs/policies/mq.md.)
        let mut s = mq(2, 3, 2, 2);
        assert_eq!(s.run(&[1, 1, 2, 2, 3, 1, 4, 5]), "MHMHMMMM");
        assert_eq!(state(&s).1, vec![(4, 1), (2, 2)]);
        // t8 2: victim 5 enters Qout, dropping its head (2, count 2); 2 comes back with count 1.
        assert_eq!(s.demand(2), 'M');
        assert_eq!(state(&s), (vec![vec![2, 1], vec![], vec![]], vec![(5, 1), (4, 1)]));
    }

    #[test]
    fn queue_num_is_floor_log2_capped() {
        let m = Mq::new(4, 3, 4, Lifetime::Fixed(10));
        let q: Vec<usize> = [0, 1, 2, 3, 4, 7, 8, 1000].iter().map(|&f| m.queue_num(f)).collect();
        assert_eq!(q, vec![0, 0, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn adaptive_lifetime_is_the_peak_bin_beyond_the_cache() {
        let mut m = Mq::new(4, 8, 16, Lifetime::Adaptive);
        assert_eq!(m.lifetime(), 4);
        // Bins: 1 -> 0, 2 -> 1, 3..4 -> 2, 5..8 -> 3, 9..16 -> 4.
        for (d, n) in [(1u64, 50), (3, 40), (6, 3), (12, 5), (30, 2)] {
            for _ in 0..n {
                m.observe(100, 100 + d);
            }
        }
        m.adapt_lifetime();
        // Bins up to the cache size (4) are left out: the peak beyond is 9..16 -> 16.
        assert_eq!(m.lifetime(), 16);
        // Counts halved: 3 -> 1, 5 -> 2, 2 -> 1. Ties go to the shorter bin.
        m.observe(0, 7);
        m.adapt_lifetime();
        assert_eq!(m.lifetime(), 8);
    }

    #[test]
    fn adaptive_lifetime_follows_a_loop() {
        // A loop over 12 blocks on 4 frames with a Qout of 16: every re-access has temporal
        // distance 12 (bin 9..16), so after the first epoch of 4 accesses lifeTime is 16.
        let mut s = Steps::new(Mq::new(4, 8, 16, Lifetime::Adaptive), 4);
        let loop12: Vec<u64> = (0..36).map(|i| i % 12).collect();
        s.run(&loop12);
        assert_eq!(s.policy().lifetime(), 16);
    }

    #[test]
    fn prefetched_blocks_follow_section_4() {
        let mut s = mq(3, 3, 3, 100);
        assert_eq!(s.run(&[1, 1, 2]), "MHM");
        // A prefetched block: Q0's MRU end, count 0.
        s.prefetch(3);
        assert_eq!(state(&s), (vec![vec![3, 2], vec![1], vec![]], vec![]));
        // Its first demand counts as a first access: count 1, still Q0.
        assert_eq!(s.demand(3), 'H');
        assert_eq!(state(&s), (vec![vec![3, 2], vec![1], vec![]], vec![]));
        // 4 evicts 2 (Qout). Prefetching 2 leaves Qout alone (2 stays remembered).
        assert_eq!(s.demand(4), 'M');
        s.prefetch(2);
        assert_eq!(state(&s), (vec![vec![2, 4], vec![1], vec![]], vec![(3, 1), (2, 1)]));
        // The prefetch evicted 3 (demanded, so remembered). 2's first demand takes its count
        // from Qout: 1 + 1 = 2 -> Q1.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(state(&s), (vec![vec![4], vec![2, 1], vec![]], vec![(3, 1)]));
        // A prefetched block evicted unused leaves nothing in Qout.
        s.prefetch(5);
        s.prefetch(6);
        assert_eq!(state(&s).1, vec![(4, 1), (3, 1)]);
    }

    #[test]
    fn prefetch_history_keeps_the_remembered_count() {
        let mut s = Steps::new(Mq::new(3, 3, 3, Lifetime::Fixed(100)).with_prefetch_history(true), 3);
        // 1, 2, 3 twice each (count 2, Q1); 4 finds Q0 empty and evicts 1, Q1's LRU.
        assert_eq!(s.run(&[1, 1, 2, 2, 3, 3, 4]), "MHMHMHM");
        assert_eq!(state(&s), (vec![vec![4], vec![3, 2], vec![]], vec![(1, 2)]));
        // Prefetching 1 evicts 4 (Q0) and takes 1's count 2 from Qout, not incremented: Q1's
        // MRU end, where `prefetch=fresh` would put it in Q0 with count 0.
        s.prefetch(1);
        assert_eq!(state(&s), (vec![vec![], vec![1, 3, 2], vec![]], vec![(4, 1)]));
        // Its first demand adds one: count 3, still Q1.
        assert_eq!(s.demand(1), 'H');
        assert_eq!(state(&s), (vec![vec![], vec![1, 3, 2], vec![]], vec![(4, 1)]));
        // A block Qout does not know enters Q0 with count 0 (2 goes to Qout).
        s.prefetch(5);
        assert_eq!(state(&s), (vec![vec![5], vec![1, 3], vec![]], vec![(2, 2), (4, 1)]));
    }

    fn accusim(capacity: usize, queues: usize, history: usize, lifetime: u64) -> Steps<Mq> {
        Steps::new(Mq::new(capacity, queues, history, Lifetime::Fixed(lifetime)).with_accusim(true), capacity)
    }

    #[test]
    fn accusim_without_read_ahead_is_lru() {
        // AccuSim's MQref raises a count only for a prefetch: demand accesses leave every block
        // in Q0, which is an LRU list (the prefetching paper's Tables 6 and 7 give MQ and LRU the
        // same request counts without prefetching).
        let mut rng = crate::rng::Rng::new(7);
        let keys: Vec<u64> = (0..4000).map(|_| rng.below(40)).collect();
        let mut m = accusim(16, 4, 16, 16);
        let mut l = Steps::new(crate::policy::Lru::new(16), 16);
        assert_eq!(m.run(&keys), l.run(&keys));
        assert!(state(&m).0[1..].iter().all(|q| q.is_empty()));
    }

    #[test]
    fn accusim_counts_prefetches_only() {
        let mut s = accusim(3, 3, 3, 100);
        assert_eq!(s.run(&[1, 1, 2, 2]), "MHMH");
        assert_eq!(state(&s), (vec![vec![2, 1], vec![], vec![]], vec![]));
        // A prefetch counts once: 3 enters Q0 with count 1.
        s.prefetch(3);
        assert_eq!(state(&s), (vec![vec![3, 2, 1], vec![], vec![]], vec![]));
        // Its first demand does not count; 4 evicts 1, which Qout keeps with count 0.
        assert_eq!(s.run(&[3, 4]), "HM");
        assert_eq!(state(&s), (vec![vec![4, 3, 2], vec![], vec![]], vec![(1, 0)]));
        // 3 evicted (after a demand) and prefetched again: looked up in Qout before the eviction
        // pushes 2 there, count 1 + 1 = 2 -> Q1.
        assert_eq!(s.run(&[5, 1]), "MM");
        assert_eq!(state(&s).0, vec![vec![1, 5, 4], vec![], vec![]]);
        s.prefetch(3);
        assert_eq!(state(&s), (vec![vec![1, 5], vec![3], vec![]], vec![(4, 0), (2, 0)]));
    }
}
