//! AMP's partitioned cache manager (AMP, Zhou, von Behren, Brewer, UCB/CSD-05-1379, §3.2 and
//! Figure 4), shared by AMP, PCC* and DEAR, which differ only in their detector (§4.2).
//! Deviations: garbage-collected MRU blocks go to the one-shot partition (freed first) instead
//! of being freed, since the cache, not a policy, frees frames; a default policy without ghost
//! lists gets an AMP-kept ghost list of its evictions; by default the one-shot partition learns
//! from misses on the blocks it freed ([`OneShotRule::Adaptive`]; `First` is §3.3 as written,
//! where dissolved partitions join the one-shot partition too).

use crate::frames::FrameVec;
use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::ghosts::{GhostList as ShotList, Ghosts};

use super::detect::{ContextReport, Detector, Pattern};
use crate::list::{Links, List};
use crate::policy::partition::{PartitionMap, Steal, Timeline, MAX_PARTITIONS};
use crate::policy::queue::{back_unpinned, front_unpinned};
use crate::policy::{Access, Frame, Origin, Pins, Policy, Removal};
use crate::rng::Rng;

/// Partition 0: the default policy ("all normal blocks not subject to optimization", §3).
pub const DEFAULT: usize = 0;
/// Partition 1: one-shot blocks, "freed whenever new pages are needed" (§3.3).
pub const ONE_SHOT: usize = 1;
/// Partitions 2..: one MRU partition per looping context (§3.2).
pub const FIRST_MRU: usize = 2;

/// Samples a timeline holds at most before it halves its resolution.
pub const TIMELINE_SAMPLES: usize = 2048;

/// The shortest first period of an adaptive detection schedule, in accesses: long enough for a
/// context looping over a few hundred blocks to show the detector its re-references (32 by
/// default), short enough that a run of a few thousand accesses is classified before it ends.
pub const FIRST_PERIOD: u64 = 1000;

/// The first detection period of an adaptive schedule for a cache of `capacity` blocks: the
/// accesses that fill the cache (before the first eviction no classification can matter, and an
/// early one calls a loop still in its first pass one-shot), within [`FIRST_PERIOD`] and `max`.
pub fn first_period(capacity: usize, max: u64) -> u64 {
    (capacity as u64).clamp(FIRST_PERIOD.min(max), max.max(1))
}

/// Most MRU partitions (partition ids fit a byte).
pub const MAX_MRU: usize = MAX_PARTITIONS - FIRST_MRU;

/// The manager's knobs (the detector has its own).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ManagerConfig {
    /// MRU partitions at most, given to the looping contexts with the most unique blocks (§3.3).
    pub max_partitions: usize,
    /// Virtual time (demand accesses) between re-detections: fixed, or the most an adaptive
    /// period grows to.
    pub period: u64,
    /// Adaptive period: the first detection comes after [`first_period`] accesses, and the
    /// period doubles at each detection up to `period`.
    pub adaptive_period: bool,
    /// The least |B1| + |B2| coupons are priced against (see `ghost_len`), in blocks.
    pub min_ghosts: usize,
    pub steal: Steal,
    /// MRU garbage collection every loop_time + 3 deviations (§3.2).
    pub gc: bool,
    /// Timeline sampling interval in accesses; 0 turns the timeline off.
    pub timeline_every: u64,
    /// How the one-shot partition learns from its mistakes.
    pub one_shot: OneShotRule,
    pub seed: u64,
}

/// What the manager does when blocks it freed first as one-shot are asked for again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneShotRule {
    /// §3.3 as written: the one-shot partition is always freed first, and the blocks of a
    /// dissolved MRU partition join it.
    First,
    /// The one-shot partition learns from its ghosts. A miss on a block it evicted (a regret)
    /// means the detector was wrong: the context that left the block there, and a one-shot
    /// context that asks for it again, are kept in the default partition from then on, with
    /// the blocks they still have in the one-shot partition; and the partition keeps a target
    /// size, ARC's p between it and the default partition (one up per regret, one down per
    /// ghost hit of the default partition), below which it is no longer freed first. A
    /// dissolved MRU partition's blocks join the default partition.
    Adaptive,
}

impl OneShotRule {
    pub const NAMES: [&'static str; 2] = ["adaptive", "first"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "adaptive" => Some(OneShotRule::Adaptive),
            "first" => Some(OneShotRule::First),
            _ => None,
        }
    }
}

/// Counters of the manager's decisions (tests and reports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ManagerStats {
    /// Misses whose victim came from the one-shot partition.
    pub one_shot_evictions: u64,
    /// Ghost hits of the default partition that took a block from another partition.
    pub ghost_steals: u64,
    /// Coupon-paid misses of MRU partitions that took a block from another partition.
    pub coupon_steals: u64,
    /// Blocks moved because another context touched them.
    pub moves: u64,
    /// MRU blocks garbage-collected into the one-shot partition.
    pub collected: u64,
    pub detections: u64,
    /// Detections that changed some context's partition.
    pub changes: u64,
    /// Misses of MRU partitions that took a default-partition block idle for longer than the
    /// loop's garbage-collection window.
    pub stale_steals: u64,
    /// Demand misses of blocks a one-shot context left in the one-shot partition and that
    /// partition evicted: the classification was wrong for them.
    pub one_shot_regrets: u64,
    /// Demand misses of blocks MRU garbage collection or a dissolved partition moved to the
    /// one-shot partition and that partition evicted.
    pub collected_regrets: u64,
    /// Contexts kept out of the one-shot partition after a regret ([`OneShotRule::Adaptive`]).
    pub one_shot_vetoes: u64,
    /// Blocks of those contexts moved from the one-shot partition to the default partition.
    pub rescued: u64,
}

/// Ghosts of the default partition when its policy keeps none (LRU, CLOCK, ...): the keys it
/// evicted, the oldest dropped once there are more than the partition holds blocks, as an ARC
/// cache of that size keeps |B1| + |B2| ≤ c.
struct GhostList {
    seq: FxHashMap<u64, u64>,
    order: VecDeque<(u64, u64)>,
    next: u64,
}

impl GhostList {
    fn new() -> Self {
        GhostList { seq: FxHashMap::default(), order: VecDeque::new(), next: 0 }
    }

    /// Remembers `key`, keeping at most `limit` ghosts.
    fn push(&mut self, key: u64, limit: usize) {
        self.next += 1;
        self.seq.insert(key, self.next);
        self.order.push_back((key, self.next));
        while self.seq.len() > limit || self.order.front().is_some_and(|&(k, s)| self.seq.get(&k) != Some(&s)) {
            let (k, s) = self.order.pop_front().expect("ghost order holds every ghost");
            if self.seq.get(&k) == Some(&s) {
                self.seq.remove(&k);
            }
        }
    }

    /// Whether `key` is a ghost; a ghost found is consumed (the block becomes resident).
    fn take(&mut self, key: u64) -> bool {
        self.seq.remove(&key).is_some()
    }

    fn len(&self) -> usize {
        self.seq.len()
    }
}

/// The partitioned manager over a detector `D` and a default policy `P`.
pub struct Manager<D: Detector, P: Policy> {
    cfg: ManagerConfig,
    detector: D,
    default: P,
    map: PartitionMap,
    /// One arena for the one-shot list and every MRU list (their frames are disjoint).
    links: Links,
    /// Per partition (entry 0 unused): front = most recently used.
    lists: Vec<List>,
    keys: FrameVec<u64>,
    /// Virtual time of each frame's last access.
    stamp: FrameVec<u64>,
    /// Program context each MRU partition serves (0: free), indexed by partition.
    slot_ctx: Vec<u64>,
    /// Partition of each classified context; absent means the default partition.
    target: FxHashMap<u64, u8>,
    /// Figure 4's coupons c_i, per partition.
    coupons: Vec<f64>,
    /// loop_size_i per partition (MRU partitions only; 0 when unknown).
    loop_size: Vec<f64>,
    /// Garbage collection window (loop_time + 3 deviations) and next sweep, per partition.
    gc_window: Vec<u64>,
    gc_next: Vec<u64>,
    gc_due: u64,
    own_ghosts: Option<GhostList>,
    rng: Rng,
    /// (partition, ghost hit) of the block being inserted, from `prepare_insert`.
    pending: Option<(usize, bool)>,
    next_detect: u64,
    /// The current detection period (grows when adaptive).
    period_now: u64,
    /// Classifications carried over from an earlier run (AMP §3: hints "persist across
    /// application runs"), used for a context until the detector has classified it.
    hints: FxHashMap<u64, ContextReport>,
    timeline: Timeline,
    scratch: Vec<u64>,
    /// The one-shot context that put each frame in the one-shot partition (0: MRU garbage
    /// collection or a dissolved partition put it there).
    shot_ctx: FrameVec<u64>,
    /// Device of each frame's block (with the key, what a block moved to the default
    /// partition without being accessed is described by).
    device: FrameVec<u16>,
    /// Keys the one-shot partition evicted, with the context that put each there: a miss on
    /// one is a regret of that partition's "freed first" rule.
    shot_ghosts: Ghosts<u64>,
    shot_list: ShotList,
    /// Contexts kept out of the one-shot partition for the rest of the run.
    vetoed: FxHashSet<u64>,
    /// Blocks the one-shot partition keeps before it is freed first.
    shot_target: f64,
    pub stats: ManagerStats,
}

impl<D: Detector, P: Policy> Manager<D, P> {
    /// A manager for a cache of `capacity` frames; `default` is built for the whole capacity.
    pub fn new(cfg: ManagerConfig, detector: D, default: P, capacity: usize) -> Self {
        assert!(cfg.max_partitions <= MAX_MRU, "at most {MAX_MRU} MRU partitions");
        let parts = FIRST_MRU + cfg.max_partitions;
        let mut names = vec!["default".to_string(), "one-shot".to_string()];
        names.extend((1..=cfg.max_partitions).map(|i| format!("mru{i}")));
        let own_ghosts = (!default.keeps_ghosts()).then(GhostList::new);
        Manager {
            cfg,
            detector,
            default,
            map: PartitionMap::new(capacity, parts),
            links: Links::with_nodes(capacity),
            lists: vec![List::new(); parts],
            keys: FrameVec::filled(0, capacity),
            stamp: FrameVec::filled(0, capacity),
            slot_ctx: vec![0; parts],
            target: FxHashMap::default(),
            coupons: vec![0.0; parts],
            loop_size: vec![0.0; parts],
            gc_window: vec![0; parts],
            gc_next: vec![u64::MAX; parts],
            gc_due: u64::MAX,
            own_ghosts,
            rng: Rng::new(cfg.seed),
            pending: None,
            next_detect: if cfg.adaptive_period { first_period(capacity, cfg.period) } else { cfg.period.max(1) },
            period_now: if cfg.adaptive_period { first_period(capacity, cfg.period) } else { cfg.period.max(1) },
            hints: FxHashMap::default(),
            timeline: Timeline::new(names, cfg.timeline_every, TIMELINE_SAMPLES),
            scratch: Vec::new(),
            shot_ctx: FrameVec::filled(0, capacity),
            device: FrameVec::filled(0, capacity),
            shot_ghosts: Ghosts::with_capacity(capacity),
            shot_list: ShotList::new(),
            vetoed: FxHashSet::default(),
            shot_target: 0.0,
            stats: ManagerStats::default(),
        }
    }

    pub fn detector(&self) -> &D {
        &self.detector
    }

    pub fn into_detector(self) -> D {
        self.detector
    }

    pub fn default_policy(&self) -> &P {
        &self.default
    }

    pub fn map(&self) -> &PartitionMap {
        &self.map
    }

    /// The program context served by MRU partition `p` (0 if none).
    pub fn partition_ctx(&self, p: usize) -> u64 {
        self.slot_ctx[p]
    }

    /// The partition new blocks of `ctx` go to.
    #[inline]
    pub fn target_of(&self, ctx: u64) -> usize {
        if ctx == 0 {
            return DEFAULT;
        }
        self.target.get(&ctx).map_or(DEFAULT, |&p| p as usize)
    }

    /// |B1| + |B2| of Figure 4, the window over which the default partition's marginal gain is
    /// measured (Equation 1) and against which MRU coupons are priced: the default partition's
    /// ghosts, counted up to the partition's size (an ARC of that size keeps |B1| + |B2| ≤ c; a
    /// default policy built for the whole cache may hold a whole cache of ghosts while its
    /// partition is small, and pricing against all of them starves an active default
    /// partition), but never below `min_ghosts`. Without that floor an idle default partition
    /// (few blocks, no ghost hits) priced coupons at hundreds of accesses per block, and MRU
    /// partitions never moved toward equal marginal gain among themselves.
    #[inline]
    fn ghost_len(&self) -> usize {
        let g = match &self.own_ghosts {
            Some(g) => g.len(),
            None => self.default.ghost_len(),
        };
        g.min(self.map.len(DEFAULT)).max(self.cfg.min_ghosts).max(1)
    }

    #[inline]
    fn victim_in(&mut self, p: usize, pins: &Pins, a: &Access) -> Option<Frame> {
        if self.map.len(p) == 0 {
            return None;
        }
        match p {
            DEFAULT => self.default.victim(pins, a),
            // The oldest one-shot block.
            ONE_SHOT => back_unpinned(&self.links, &self.lists[ONE_SHOT], pins),
            // MRU: the most recently used block of the partition.
            _ => front_unpinned(&self.links, &self.lists[p], pins),
        }
    }

    /// Figure 4: "evict from another non-empty partition randomly". The draw is one per call;
    /// if every frame of the drawn partition is pinned, the other partitions are tried in order.
    fn steal(&mut self, from_other_than: usize, pins: &Pins, a: &Access) -> Option<Frame> {
        let first = self.map.draw(&mut self.rng, self.cfg.steal, |p| p != from_other_than)?;
        let n = self.map.partitions();
        (0..n).map(|i| (first + i) % n).filter(|&p| p != from_other_than).find_map(|p| self.victim_in(p, pins, a))
    }

    fn link_front(&mut self, p: usize, f: Frame) {
        self.links.push_front(&mut self.lists[p], f);
    }

    /// Takes `frame` out of partition `from`'s ordering (the block stays cached: no ghost).
    fn unlink(&mut self, frame: Frame, from: usize) {
        if from == DEFAULT {
            self.default.remove(frame, self.keys[frame as usize], Removal::UnusedPrefetch);
        } else {
            self.links.remove(&mut self.lists[from], frame);
        }
    }

    /// Moves a resident block to partition `to` (§3.2: blocks "are simply moved among the
    /// partitions and the partition sizes adjusted accordingly"); `cold`: the block was not
    /// accessed now, and enters the default partition where its policy looks for a victim.
    fn transfer(&mut self, frame: Frame, from: usize, to: usize, a: &Access, cold: bool) {
        self.unlink(frame, from);
        self.map.release(frame);
        self.map.assign(frame, to);
        if to == DEFAULT {
            if let Some(g) = &mut self.own_ghosts {
                g.take(a.key);
            }
            self.default.prepare_insert(a, Origin::Demand);
            if cold {
                self.default.insert_cold(frame, a, Origin::Demand);
            } else {
                self.default.insert(frame, a, Origin::Demand);
            }
        } else {
            self.shot_ctx[frame as usize] = a.ctx;
            self.link_front(to, frame);
        }
    }

    /// Every MRU block of partition `p` goes to the one-shot partition, least recent first in
    /// line for eviction ([`OneShotRule::First`]), or to the default partition.
    fn dissolve(&mut self, p: usize, now: u64) {
        if self.cfg.one_shot == OneShotRule::Adaptive {
            // The context no longer loops (or lost its partition to larger loops): nothing says
            // its blocks will not be used again, so they are ordinary blocks.
            let ctx = self.slot_ctx[p];
            while let Some(f) = self.lists[p].back() {
                self.move_unaccessed(f, p, ctx, now);
            }
            return;
        }
        while let Some(f) = self.links.pop_back(&mut self.lists[p]) {
            self.map.release(f);
            self.map.assign(f, ONE_SHOT);
            self.shot_ctx[f as usize] = 0;
            self.link_front(ONE_SHOT, f);
        }
    }

    /// A demand access served by partition `p`.
    #[inline]
    fn accessed(&mut self, p: usize, frame: Frame, a: &Access) {
        // Figure 4: "On each access to partition i: c_i++".
        self.coupons[p] += 1.0;
        self.stamp[frame as usize] = a.time;
        if a.ctx != 0 {
            if let Some(pattern) = self.detector.access(a.ctx, a.key, a.time) {
                self.pattern_changed(a.ctx, pattern);
            }
        }
        if a.time >= self.next_detect {
            self.redetect(a.time);
        }
        if a.time >= self.gc_due {
            self.collect(a.time);
        }
        if self.timeline.due(a.time) {
            self.sample(a.time);
        }
    }

    fn sample(&mut self, time: u64) {
        let sizes = self.map.sizes().to_vec();
        self.timeline.record(time, sizes.into_iter(), self.slot_ctx.iter().copied());
    }

    fn slot_of(&self, ctx: u64) -> Option<usize> {
        (FIRST_MRU..self.slot_ctx.len()).find(|&p| self.slot_ctx[p] == ctx)
    }

    /// A continuous detector changed a context's pattern between detections.
    fn pattern_changed(&mut self, ctx: u64, pattern: Pattern) {
        match pattern {
            Pattern::Looping => {
                if let Some(p) = self.slot_of(ctx) {
                    self.target.insert(ctx, p as u8);
                }
            }
            Pattern::OneShot if !self.vetoed.contains(&ctx) => {
                self.target.insert(ctx, ONE_SHOT as u8);
            }
            // A vetoed context is ordinary, whatever the detector says.
            Pattern::OneShot | Pattern::Other | Pattern::Undetected => {
                self.target.remove(&ctx);
            }
        }
    }

    /// Sets the partition new blocks of `ctx` go to (`None`: the default partition); says
    /// whether that changed it.
    fn retarget(&mut self, ctx: u64, to: Option<usize>) -> bool {
        match to {
            Some(p) => self.target.insert(ctx, p as u8) != Some(p as u8),
            None => self.target.remove(&ctx).is_some(),
        }
    }

    /// What is known of `ctx`: the detector's classification, or a hint from an earlier run
    /// while the detector has not classified the context yet.
    fn known(&self, ctx: u64) -> Option<ContextReport> {
        let hint = self.hints.get(&ctx).copied();
        match self.detector.report(ctx) {
            // A loop in its first pass shows no re-reference yet, which the detector reads as
            // one-shot: a hinted loop holds until the detector sees its re-references.
            Some(r) if r.pattern == Pattern::OneShot && hint.is_some_and(|h| h.pattern == Pattern::Looping) => hint,
            Some(r) if r.pattern != Pattern::Undetected => Some(r),
            r => hint.or(r),
        }
    }

    /// Classifications from an earlier run (AMP §3: "AMP can use this information immediately
    /// in subsequent runs without requiring a detection phase"): partitions are assigned at
    /// once, and each hint holds until the detector classifies its context itself.
    pub fn set_hints(&mut self, hints: impl IntoIterator<Item = (u64, ContextReport)>) {
        self.hints = hints.into_iter().filter(|(c, _)| *c != 0).collect();
        self.assign(0);
    }

    /// Periodic re-detection and partition assignment: the looping contexts with the most
    /// unique blocks get MRU partitions, up to the limit (§3.3); one-shot contexts go to the
    /// one-shot partition; the rest to the default partition.
    fn redetect(&mut self, now: u64) {
        self.stats.detections += 1;
        self.detector.detect(now);
        let changed = self.assign(now);
        if changed {
            self.stats.changes += 1;
        }
        if self.cfg.adaptive_period {
            // Classify early, then less and less often (AMP §3: the high-level adaptation
            // "should be viewed as a tuning operation" and run infrequently).
            self.period_now = (self.period_now * 2).min(self.cfg.period.max(1));
        }
        self.next_detect = now + self.period_now.max(1);
    }

    /// Assigns every known context its partition; says whether any assignment changed.
    fn assign(&mut self, now: u64) -> bool {
        let mut changed = false;
        let mut ctxs = std::mem::take(&mut self.scratch);
        ctxs.clear();
        self.detector.contexts(&mut ctxs);
        ctxs.extend(self.hints.keys().copied());
        ctxs.sort_unstable();
        ctxs.dedup();
        let mut looping: Vec<(f64, u64)> = Vec::new();
        for &c in &ctxs {
            let Some(r) = self.known(c) else { continue };
            match r.pattern {
                Pattern::Looping => looping.push((r.unique_blocks, c)),
                Pattern::OneShot if !self.vetoed.contains(&c) => changed |= self.retarget(c, Some(ONE_SHOT)),
                // A vetoed context is ordinary, whatever the detector says.
                Pattern::OneShot | Pattern::Other | Pattern::Undetected => changed |= self.retarget(c, None),
            }
        }
        looping.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        // Looping contexts beyond the limit stay in the default partition.
        for &(_, c) in looping.iter().skip(self.cfg.max_partitions) {
            changed |= self.retarget(c, None);
        }
        looping.truncate(self.cfg.max_partitions);
        // Partitions of contexts that are no longer chosen are dissolved.
        for p in FIRST_MRU..self.slot_ctx.len() {
            let c = self.slot_ctx[p];
            if c != 0 && !looping.iter().any(|&(_, l)| l == c) {
                self.dissolve(p, now);
                self.slot_ctx[p] = 0;
                self.gc_next[p] = u64::MAX;
                if self.target.get(&c) == Some(&(p as u8)) {
                    self.target.remove(&c);
                }
                changed = true;
            }
        }
        for &(_, c) in &looping {
            let p = match self.slot_of(c) {
                Some(p) => p,
                None => {
                    let p = (FIRST_MRU..self.slot_ctx.len())
                        .find(|&p| self.slot_ctx[p] == 0)
                        .expect("a free MRU partition");
                    self.slot_ctx[p] = c;
                    self.coupons[p] = 0.0;
                    p
                }
            };
            changed |= self.retarget(c, Some(p));
            let r = self.known(c).expect("a looping context has a report");
            self.loop_size[p] = r.loop_size.unwrap_or(0.0);
            if let Some((mean, dev)) = r.loop_time {
                // §3.2: "AMP sweeps every loop_time + 3 loop_time_dev".
                let w = (mean + 3.0 * dev).ceil().max(1.0) as u64;
                if self.gc_window[p] != w || self.gc_next[p] == u64::MAX {
                    self.gc_window[p] = w;
                    self.gc_next[p] = now + w;
                }
            }
        }
        self.gc_due = if self.cfg.gc { self.gc_next.iter().copied().min().unwrap_or(u64::MAX) } else { u64::MAX };
        self.scratch = ctxs;
        changed
    }

    /// MRU garbage collection (§3.2): blocks of an MRU partition unused for longer than
    /// loop_time + 3 deviations go to the one-shot partition, which is freed first.
    fn collect(&mut self, now: u64) {
        for p in FIRST_MRU..self.slot_ctx.len() {
            if self.gc_next[p] > now {
                continue;
            }
            let w = self.gc_window[p];
            while let Some(f) = self.lists[p].back() {
                if self.stamp[f as usize].saturating_add(w) >= now {
                    break;
                }
                self.links.remove(&mut self.lists[p], f);
                self.map.release(f);
                self.map.assign(f, ONE_SHOT);
                self.shot_ctx[f as usize] = 0;
                self.link_front(ONE_SHOT, f);
                self.stats.collected += 1;
            }
            self.gc_next[p] = now + w;
        }
        self.gc_due = self.gc_next.iter().copied().min().unwrap_or(u64::MAX);
    }

    /// A demand miss (by `a`) of a block the one-shot partition evicted, which `ctx` had put
    /// there (0: garbage collection or a dissolved partition).
    fn regret(&mut self, ctx: u64, a: &Access) {
        if ctx == 0 {
            self.stats.collected_regrets += 1;
        } else {
            self.stats.one_shot_regrets += 1;
        }
        if self.cfg.one_shot != OneShotRule::Adaptive {
            return;
        }
        self.shot_target = (self.shot_target + 1.0).min(self.shot_ghosts.capacity() as f64);
        if ctx != 0 {
            self.veto(ctx, a.time);
        }
        // A one-shot context asking again for a block another context read re-references it.
        if a.ctx != 0 && a.ctx != ctx && self.target_of(a.ctx) == ONE_SHOT {
            self.veto(a.ctx, a.time);
        }
    }

    /// Keeps `ctx` out of the one-shot partition from now on (§3.1: a context is one-shot when
    /// "none of the blocks accessed by a context are accessed again"), with its blocks there.
    fn veto(&mut self, ctx: u64, now: u64) {
        if !self.vetoed.insert(ctx) {
            return;
        }
        self.stats.one_shot_vetoes += 1;
        if self.target.get(&ctx) == Some(&(ONE_SHOT as u8)) {
            self.target.remove(&ctx);
        }
        self.rescue(ctx, now);
    }

    /// Moves the blocks `ctx` left in the one-shot partition to the default partition, oldest
    /// first (so the default policy sees them in their order of arrival).
    fn rescue(&mut self, ctx: u64, now: u64) {
        let mut frames = std::mem::take(&mut self.scratch);
        frames.clear();
        let mut cur = self.lists[ONE_SHOT].back();
        while let Some(f) = cur {
            if self.shot_ctx[f as usize] == ctx {
                frames.push(f as u64);
            }
            cur = self.links.prev(f);
        }
        for &f in &frames {
            self.move_unaccessed(f as Frame, ONE_SHOT, ctx, now);
            self.stats.rescued += 1;
        }
        self.scratch = frames;
    }

    /// Moves `frame` from partition `from` to the default partition without an access to it:
    /// the default policy sees it arrive from `ctx` at `now` (policies order by time and expect
    /// it not to go back), at the end it takes victims from ([`Policy::insert_cold`]). At the
    /// front, as if just used, the moved blocks pushed out blocks in use: TPC-H on SQLite at
    /// three quarters of its footprint missed 9,392 times against 9,017 at the back, ARC 8,881.
    fn move_unaccessed(&mut self, frame: Frame, from: usize, ctx: u64, now: u64) {
        let key = self.keys[frame as usize];
        let device = self.device[frame as usize];
        let block = crate::layout::key_block(device, key);
        let b = Access { key, device, block, time: now, ctx, ..Access::default() };
        self.transfer(frame, from, DEFAULT, &b, true);
    }

    /// The timeline of partition sizes so far.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }
}

impl<D: Detector, P: Policy> Policy for Manager<D, P> {
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        if let Some(n) = self.shot_ghosts.find(a.key) {
            let (_, ctx) = self.shot_ghosts.remove(&mut self.shot_list, n);
            if origin == Origin::Demand {
                self.regret(ctx, a);
            }
        }
        let t = self.target_of(a.ctx);
        let mut ghost = false;
        if t == DEFAULT {
            // Asked before the default policy consumes its ghost in its own prepare_insert.
            ghost = match &mut self.own_ghosts {
                Some(g) => g.take(a.key),
                None => self.default.ghost_hit(a.key),
            };
            if ghost && origin == Origin::Demand {
                // The default partition would have hit with more room: the one-shot partition's
                // target gives way (ARC's p, §4 of its paper, between these two partitions).
                self.shot_target = (self.shot_target - 1.0).max(0.0);
            }
            self.default.prepare_insert(a, origin);
        }
        self.pending = Some((t, ghost && origin == Origin::Demand));
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let (t, _) = self.pending.take().unwrap_or((self.target_of(a.ctx), false));
        self.map.assign(frame, t);
        self.keys[frame as usize] = a.key;
        self.device[frame as usize] = a.device;
        if t == DEFAULT {
            self.default.insert(frame, a, origin);
        } else {
            if t == ONE_SHOT {
                self.shot_ctx[frame as usize] = a.ctx;
            }
            self.link_front(t, frame);
        }
        if origin == Origin::Demand {
            self.accessed(t, frame, a);
        } else {
            self.stamp[frame as usize] = a.time;
        }
    }

    fn hit(&mut self, frame: Frame, a: &Access) {
        let p = self.map.owner(frame).expect("hit on a frame of no partition");
        let t = self.target_of(a.ctx);
        if p != t {
            self.stats.moves += 1;
            self.transfer(frame, p, t, a, false);
        } else if p == DEFAULT {
            self.default.hit(frame, a);
        } else {
            self.links.move_to_front(&mut self.lists[p], frame);
        }
        self.accessed(t, frame, a);
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        let p = self.map.owner(frame).expect("first demand on a frame of no partition");
        let t = self.target_of(a.ctx);
        if p != t {
            self.stats.moves += 1;
            self.transfer(frame, p, t, a, false);
        } else if p == DEFAULT {
            self.default.first_demand(frame, a);
        } else {
            self.links.move_to_front(&mut self.lists[p], frame);
        }
        self.accessed(t, frame, a);
    }

    /// Figure 4, with the one-shot partition freed first (§3.3) while it holds more than its
    /// target ([`OneShotRule::Adaptive`]; the target stays 0 with [`OneShotRule::First`]).
    fn victim(&mut self, pins: &Pins, a: &Access) -> Option<Frame> {
        let (t, ghost) = self.pending.unwrap_or((self.target_of(a.ctx), false));
        let shot_first = self.map.len(ONE_SHOT) as f64 > self.shot_target;
        if let Some(f) = if shot_first { self.victim_in(ONE_SHOT, pins, a) } else { None } {
            self.stats.one_shot_evictions += 1;
            return Some(f);
        }
        // Figure 4: "if (i is ARC AND (p ∈ B1 OR p ∈ B2)) if (there is another non-empty
        // partition) evict from another non-empty partition randomly".
        if t == DEFAULT && ghost {
            if let Some(f) = self.steal(t, pins, a) {
                self.stats.ghost_steals += 1;
                return Some(f);
            }
        }
        // Figure 4: "if (i is MRU && c_i ≥ loop_size_i / (|B1| + |B2|) AND there is another
        // non-empty partition) evict from another non-empty partition randomly;
        // c_i = c_i - loop_size_i / (|B1| + |B2|)".
        if t >= FIRST_MRU {
            let ghosts = self.ghost_len();
            if self.loop_size[t] > 0.0 {
                let price = self.loop_size[t] / ghosts as f64;
                if self.coupons[t] >= price {
                    if let Some(f) = self.steal(t, pins, a) {
                        self.coupons[t] -= price;
                        self.stats.coupon_steals += 1;
                        return Some(f);
                    }
                }
            }
        }
        // A block of the default partition unused for longer than this loop's period (and the
        // garbage-collection window, loop_time + 3 deviations) is worth less than a block of
        // the loop, whose marginal gain is 1 / loop_time (§3.2): an idle default partition
        // gives it up before the loop evicts its own. Without this, a loop that fits in the
        // cache beside a default partition holding stale blocks grew only by coupons.
        if t >= FIRST_MRU && self.map.len(DEFAULT) > 0 && self.gc_window[t] > 0 {
            if let Some(f) = self.default.victim(pins, a) {
                if self.stamp[f as usize].saturating_add(self.gc_window[t]) < a.time {
                    self.stats.stale_steals += 1;
                    return Some(f);
                }
            }
        }
        // Figure 4: "if (p is non-empty) evict a block from this partition (i) else evict from
        // another non-empty partition randomly".
        self.victim_in(t, pins, a).or_else(|| self.steal(t, pins, a))
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let p = self.map.release(frame);
        if p == DEFAULT {
            self.default.remove(frame, key, why);
            if why == Removal::Evicted {
                let limit = self.map.len(DEFAULT) + 1;
                if let Some(g) = &mut self.own_ghosts {
                    g.push(key, limit);
                }
            }
        } else {
            self.links.remove(&mut self.lists[p], frame);
            if p == ONE_SHOT && why == Removal::Evicted {
                if self.shot_ghosts.len() == self.shot_ghosts.capacity() {
                    self.shot_ghosts.pop_back(&mut self.shot_list);
                }
                self.shot_ghosts.push_front(&mut self.shot_list, key, self.shot_ctx[frame as usize]);
            }
        }
    }

    /// Only the default partition's policy can hold a surplus (`w-tinylfu(variant=libcachesim)`
    /// after its own hit); its `remove` then reaches it through the partition map as any eviction.
    #[inline]
    fn surplus(&mut self, pins: &Pins) -> Option<Frame> {
        self.default.surplus(pins)
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.map.check(resident)?;
        self.default.check(self.map.len(DEFAULT)).map_err(|e| format!("default partition: {e}"))?;
        for p in ONE_SHOT..self.lists.len() {
            self.links.check(&self.lists[p])?;
            if self.lists[p].len() != self.map.len(p) {
                return Err(format!("partition {p} lists {} blocks but owns {}", self.lists[p].len(), self.map.len(p)));
            }
            if let Some(f) = self.links.iter(&self.lists[p]).find(|&f| self.map.owner(f) != Some(p)) {
                return Err(format!("frame {f} is in partition {p}'s list but owned by {:?}", self.map.owner(f)));
            }
            if p >= FIRST_MRU && self.slot_ctx[p] == 0 && self.map.len(p) > 0 {
                return Err(format!("MRU partition {p} holds blocks but serves no context"));
            }
        }
        self.detector.check()
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        let s = &self.stats;
        out.push(("detections", s.detections as f64));
        out.push(("detections_changing", s.changes as f64));
        out.push(("period_accesses", self.period_now as f64));
        out.push(("ghost_steals", s.ghost_steals as f64));
        out.push(("coupon_steals", s.coupon_steals as f64));
        out.push(("stale_steals", s.stale_steals as f64));
        out.push(("one_shot_evictions", s.one_shot_evictions as f64));
        out.push(("moves", s.moves as f64));
        out.push(("collected", s.collected as f64));
        out.push(("one_shot_regrets", s.one_shot_regrets as f64));
        out.push(("collected_regrets", s.collected_regrets as f64));
        out.push(("one_shot_vetoes", s.one_shot_vetoes as f64));
        out.push(("rescued", s.rescued as f64));
        let mru = (FIRST_MRU..self.slot_ctx.len()).filter(|&p| self.slot_ctx[p] != 0).count();
        out.push(("mru_partitions", mru as f64));
        let one_shot = self.target.values().filter(|&&p| p as usize == ONE_SHOT).count();
        out.push(("one_shot_contexts", one_shot as f64));
        out.push(("hinted_contexts", self.hints.len() as f64));
    }

    fn partition_timeline(&self) -> Option<&Timeline> {
        (self.cfg.timeline_every > 0).then_some(&self.timeline)
    }

    // The devices and their waits matter to the default policy only (LANDLORD's costs, the
    // storage-aware partitions); the MRU partitions order by recency alone.
    fn storage(&mut self, view: &crate::policy::storage::StorageView) {
        self.default.storage(view)
    }

    #[inline]
    fn device_done(&mut self, device: u16, wait_ns: u64, now: u64) {
        self.default.device_done(device, wait_ns, now)
    }
}
