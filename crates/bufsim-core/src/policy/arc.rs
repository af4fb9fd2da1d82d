//! ARC (Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST 2003, §4,
//! Fig. 4 "ARC(c)"), prefetch-aware as in the prefetching paper §4. Deviation: none by default;
//! `adapt=integer` floors the ratios and keeps p whole, as libCacheSim's ARC does;
//! `variant=accusim` makes AccuSim's decisions (see below).
//!
//! T1 (seen once) and T2 (seen at least twice) are LRU lists of resident blocks; B1 and B2 are
//! their ghosts. p is the target size of T1. Invariants: |T1|+|B1| <= c, |T1|+|T2|+|B1|+|B2| <= 2c.
//!
//! Prefetching (prefetching paper §4): a prefetched block enters T1 with no history, and its
//! first demand access leaves it in T1 (it counts as a first access). A prefetched block whose
//! key is in B1 or B2 also enters T1, not T2; the ghost hit is deferred to its first demand,
//! which moves it to T2 (and adapts p then, as the demand ghost hit would have). A prefetched
//! block evicted unused leaves no ghost.
//!
//! `variant=accusim` follows AccuSim's arc.cc (`initARC`, `replace`, `pgref`) and the ghost
//! handling of its read-ahead (`checkInCache` and the prefetch loop in prefetch.cc), the code
//! behind the prefetching paper's ARC numbers. With `adapt=integer` (the `arc-accusim` preset):
//! - p starts at c/2 (floored), not 0 (`initARC`).
//! - REPLACE takes T1's LRU page when |T1| >= max(1, p), else T2's: no tie rule for a hit in
//!   B2, and |T1| = p already evicts from T1.
//! - The read-ahead deletes a prefetched block's ghost without adapting p, and the block then
//!   enters T1 with its prefetch mark cleared (the read-ahead passes "prefetch from a ghost",
//!   which `pgref` records as not prefetched): its first demand is a T1 hit that moves it to T2
//!   (p untouched), and if evicted unused it leaves a B1 ghost like a demanded block.
//! - An ordinary prefetched block's first demand only clears its mark: it keeps its place in
//!   T1 instead of moving to T1's MRU end.
//! - Case IV(A) with |T1| < c evicts first and forgets B1's LRU ghost only if the victim left a
//!   ghost: an unused prefetched victim makes room in L1 itself.
//! - A block of the request that the read-ahead loop reaches is looked up before it is demanded
//!   (`perform_io`: `checkInCache(..., 1)`), which deletes its ghost: the demand is then a plain
//!   miss into T1, p untouched ([`Access::looked_up_by_read_ahead`]).

use super::queue::back_unpinned;
use super::{
    Access, Args, BuildEnv, Frame, LikelyVictims, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal,
};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

/// Which ghost list a key was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ghost {
    None,
    B1,
    B2,
}

/// What `prepare_insert` learned for the insertion under way.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// A demand miss found in a ghost list (cases II and III): the block goes to T2.
    ghost_hit: Ghost,
    /// A prefetched block that was a ghost: enters T1, moves to T2 on its first demand.
    deferred: Ghost,
    /// Case IV(A) with |T1| = c: the LRU page of T1 is dropped without a ghost.
    discard_t1: bool,
    /// `variant=accusim`, case IV(A) with |T1| < c in a full cache: forget B1's LRU ghost when
    /// the victim leaves a ghost (decided in `remove`).
    trim_b1_after_victim: bool,
}

const NO_PENDING: Pending =
    Pending { ghost_hit: Ghost::None, deferred: Ghost::None, discard_t1: false, trim_b1_after_victim: false };

#[derive(Clone, Copy)]
struct ArcFrame {
    in_t2: bool,
    /// A prefetched block that was a ghost, not yet demanded (`variant=accusim`: one AccuSim
    /// no longer marks as prefetched).
    deferred: Ghost,
}

pub struct Arc {
    c: usize,
    links: Links,
    t1: List,
    t2: List,
    /// Per frame, side by side: whether it is in T2 (else T1) and whether it holds a
    /// prefetched ghost not yet demanded. Two bytes, apart from the keys: every hit reads this,
    /// and at two bytes a frame it stays in the core's first-level cache far longer than
    /// state that carries the key (16 bytes a frame).
    per_frame: FrameVec<ArcFrame>,
    /// Each frame's key, written on insertion and read only off the hit path (memory hints
    /// for the next miss, dumps).
    keys: FrameVec<u64>,
    /// B1 and B2; each entry's payload says whether it is in B2.
    ghosts: Ghosts<bool>,
    b1: GhostList,
    b2: GhostList,
    /// Target size of T1, in [0, c].
    p: f64,
    integer: bool,
    /// `variant=accusim` (see the module doc).
    accusim: bool,
    pending: Pending,
    /// Whether B1 and B2 are indexed in the cache's index (`Policy::shares_index`); then the
    /// cache learns of forgotten ghosts and of the ghost a removal leaves through the next two.
    shared: bool,
    forgotten: Vec<u64>,
    ghosted: Option<u32>,
}

/// The lists of an ARC cache as block keys, most recent first (tests and dumps).
#[derive(Clone, Debug, PartialEq)]
pub struct ArcDump {
    pub t1: Vec<u64>,
    pub t2: Vec<u64>,
    pub b1: Vec<u64>,
    pub b2: Vec<u64>,
    pub p: f64,
}

impl Arc {
    /// An ARC cache of `capacity` blocks; `integer` adapts p with floored ratios (libCacheSim).
    pub fn new(capacity: usize, integer: bool) -> Self {
        Arc {
            c: capacity,
            links: Links::with_nodes(capacity),
            t1: List::new(),
            t2: List::new(),
            per_frame: FrameVec::filled(ArcFrame { in_t2: false, deferred: Ghost::None }, capacity),
            keys: FrameVec::filled(0, capacity),
            // Blocks leave only to make room in a full cache, after the directory was trimmed
            // to 2c - 1 entries: at most c ghosts. One more spare; `remember` never overflows.
            ghosts: Ghosts::with_capacity(capacity + 1),
            b1: GhostList::new(),
            b2: GhostList::new(),
            p: 0.0,
            integer,
            accusim: false,
            pending: NO_PENDING,
            shared: false,
            // At most two forgets between the cache's calls (the directory trim and a full
            // arena on removal): pushing never allocates.
            forgotten: Vec::with_capacity(4),
            ghosted: None,
        }
    }

    /// `variant=accusim`: AccuSim's rules (module doc); p starts at c/2, as `initARC` sets it.
    pub fn with_accusim(mut self, on: bool) -> Self {
        self.accusim = on;
        self.p = if on { (self.c / 2) as f64 } else { 0.0 };
        self
    }

    pub fn dump(&self) -> ArcDump {
        let keys = |l: &List| self.links.iter(l).map(|f| self.keys[f as usize]).collect();
        ArcDump {
            t1: keys(&self.t1),
            t2: keys(&self.t2),
            b1: self.ghosts.keys_of(&self.b1),
            b2: self.ghosts.keys_of(&self.b2),
            p: self.p,
        }
    }

    /// Puts a new block in T1, or in T2 after a demand ghost hit (Fig. 4 cases II-IV): at the
    /// MRU end, or at the LRU end for a block moved in without an access (`cold`).
    #[inline(always)]
    fn place(&mut self, frame: Frame, a: &Access, origin: Origin, cold: bool) {
        let f = frame as usize;
        let in_t2 = origin == Origin::Demand && self.pending.ghost_hit != Ghost::None;
        let list = if in_t2 { &mut self.t2 } else { &mut self.t1 };
        if cold {
            self.links.push_back(list, frame);
        } else {
            self.links.push_front(list, frame);
        }
        let deferred = if origin == Origin::Prefetch { self.pending.deferred } else { Ghost::None };
        self.per_frame[f] = ArcFrame { in_t2, deferred };
        self.keys[f] = a.key;
        self.pending = NO_PENDING;
        self.warm_next_miss();
    }

    /// ARC Fig. 4 cases II and III: adapt p on a ghost hit in `which`.
    fn adapt(&mut self, which: Ghost) {
        let (b1, b2) = (self.b1.len() as f64, self.b2.len() as f64);
        let ratio = |num: f64, den: f64, integer: bool| {
            // The hit ghost list holds the key, so its length is at least 1 on a demand ghost
            // hit; a deferred (prefetched) ghost hit may find it emptied since.
            let r = num / den.max(1.0);
            if integer {
                r.floor()
            } else {
                r
            }
        };
        match which {
            // δ1 = 1 if |B1| >= |B2|, else |B2|/|B1|; p = min(p + δ1, c)
            Ghost::B1 => self.p = (self.p + ratio(b2, b1, self.integer).max(1.0)).min(self.c as f64),
            // δ2 = 1 if |B2| >= |B1|, else |B1|/|B2|; p = max(p - δ2, 0)
            Ghost::B2 => self.p = (self.p - ratio(b1, b2, self.integer).max(1.0)).max(0.0),
            Ghost::None => {}
        }
    }

    /// Case IV: keep |L1| <= c and the directory <= 2c before a block without history joins T1.
    #[inline(always)]
    fn make_room_in_directory(&mut self) {
        let t1 = self.t1.len();
        if t1 + self.b1.len() >= self.c {
            // Case IV(A): L1 holds exactly c pages.
            if t1 < self.c {
                if self.accusim && t1 + self.t2.len() >= self.c {
                    // AccuSim's pgref replaces first and keeps B1's LRU ghost when the victim
                    // was an unused prefetched block, which left no ghost: `remove` decides.
                    self.pending.trim_b1_after_victim = true;
                } else {
                    self.forget_oldest(Ghost::B1);
                }
            } else {
                self.pending.discard_t1 = true;
            }
        } else {
            // Case IV(B): directory full -> forget the LRU page of B2.
            let total = t1 + self.t2.len() + self.b1.len() + self.b2.len();
            if total >= 2 * self.c {
                self.forget_oldest(Ghost::B2);
            }
        }
    }

    #[inline(always)]
    fn forget_oldest(&mut self, which: Ghost) {
        let list = if which == Ghost::B1 { &mut self.b1 } else { &mut self.b2 };
        if let Some((key, _)) = self.ghosts.pop_back(list) {
            self.note_forgotten(key);
        }
    }

    #[inline]
    fn note_forgotten(&mut self, key: u64) {
        if self.shared {
            self.forgotten.push(key);
        }
    }

    fn forget(&mut self, node: u32) {
        if self.ghosts.data(node) {
            self.ghosts.remove(&mut self.b2, node);
        } else {
            self.ghosts.remove(&mut self.b1, node);
        }
    }

    #[inline(always)]
    fn remember(&mut self, key: u64, which: Ghost) {
        if self.ghosts.len() == self.ghosts.capacity() {
            // Unreachable when ARC runs a whole cache (see `new`), but inside a partition (AMP's
            // default partition) blocks can be taken from ARC with no insertion to trim the
            // directory: forget the oldest ghost of the same list, or of the other if it is empty.
            let (same, other) =
                if which == Ghost::B2 { (&mut self.b2, &mut self.b1) } else { (&mut self.b1, &mut self.b2) };
            if let Some((k, _)) = self.ghosts.pop_back(same).or_else(|| self.ghosts.pop_back(other)) {
                self.note_forgotten(k);
            }
        }
        let node = if which == Ghost::B2 {
            self.ghosts.push_front(&mut self.b2, key, true)
        } else {
            self.ghosts.push_front(&mut self.b1, key, false)
        };
        if self.shared {
            self.ghosted = Some(node);
        }
    }

    /// Memory hints for the next miss, whose ghost work would otherwise wait on memory on a
    /// large cache: the ghost slot the next victim's key will take, and the oldest ghosts of
    /// B1 and B2, one of which the directory trim may forget.
    #[inline(always)]
    fn warm_next_miss(&self) {
        if self.ghosts.worth_warming() {
            for f in self.likely_victims().next.into_iter().flatten() {
                self.ghosts.warm(self.keys[f as usize]);
            }
            self.ghosts.warm_oldest(&self.b1);
            self.ghosts.warm_oldest(&self.b2);
        }
    }

    /// The incoming block's key is ghost `node`: cases II and III for a demand access (adapt
    /// p; `victim` then replaces and the block goes to T2), the prefetching paper's deferral for
    /// a prefetched one. Returns whether the directory needs no trim (a demand ghost hit).
    #[inline(always)]
    fn ghost_found(&mut self, node: u32, a: &Access, origin: Origin) -> bool {
        let which = if self.ghosts.data(node) { Ghost::B2 } else { Ghost::B1 };
        match origin {
            Origin::Demand if self.accusim && a.looked_up_by_read_ahead => {
                // AccuSim's read-ahead loop looks the request's later blocks up before it
                // demands them, and that lookup deletes a ghost: the demand then finds none
                // and the block joins T1 as a new one, p untouched.
                self.forget(node);
                false
            }
            Origin::Demand => {
                // p adapts to the list lengths with the key still in its list.
                self.adapt(which);
                self.forget(node);
                self.pending.ghost_hit = which;
                true
            }
            Origin::Prefetch => {
                // Prefetching paper §4: a prefetched ghost goes to T1, not T2. AccuSim's
                // read-ahead deletes the ghost outright (no adaptation now or later), and the
                // mark set here makes the block an ordinary, not prefetched, one in T1.
                self.forget(node);
                self.pending.deferred = which;
                false
            }
        }
    }

    #[inline(always)]
    fn move_to_t2(&mut self, frame: Frame) {
        if self.per_frame[frame as usize].in_t2 {
            self.links.move_to_front(&mut self.t2, frame);
        } else {
            self.links.remove(&mut self.t1, frame);
            self.links.push_front(&mut self.t2, frame);
            self.per_frame[frame as usize].in_t2 = true;
        }
    }
}

impl Policy for Arc {
    // AMP asks ARC about its ghosts to size its default partition (AMP §3.2, Figure 4): a ghost
    // hit is a hit in B1 or B2, and coupons are priced against |B1| + |B2|.
    fn keeps_ghosts(&self) -> bool {
        // Shared ghosts are found through the cache's index, which the policy cannot search.
        !self.shared
    }

    #[inline]
    fn ghost_hit(&self, key: u64) -> bool {
        !self.shared && self.ghosts.find(key).is_some()
    }

    fn ghost_len(&self) -> usize {
        self.b1.len() + self.b2.len()
    }

    #[inline(always)]
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        self.pending = NO_PENDING;
        if !self.shared {
            if let Some(node) = self.ghosts.find(a.key) {
                if self.ghost_found(node, a, origin) {
                    return;
                }
            }
        }
        self.make_room_in_directory();
    }

    fn shares_index(&self) -> bool {
        true
    }

    fn share_index(&mut self) {
        self.shared = true;
        self.ghosts = Ghosts::unindexed(self.ghosts.capacity());
    }

    #[inline(always)]
    fn prepare_insert_ghost(&mut self, a: &Access, origin: Origin, node: u32) {
        self.pending = NO_PENDING;
        if !self.ghost_found(node, a, origin) {
            self.make_room_in_directory();
        }
    }

    #[inline(always)]
    fn take_forgotten(&mut self) -> Option<u64> {
        self.forgotten.pop()
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
        let [a, b] = self.ghosts.oldest_keys(&self.b1);
        let [c, d] = self.ghosts.oldest_keys(&self.b2);
        [a, b, c, d]
    }

    #[inline(always)]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.place(frame, a, origin, false);
    }

    fn insert_cold(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.place(frame, a, origin, true);
    }

    #[inline(always)]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        // Case I: a hit in T1 or T2 moves x to the MRU position of T2.
        self.move_to_t2(frame);
    }

    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        let f = frame as usize;
        let deferred = std::mem::replace(&mut self.per_frame[f].deferred, Ghost::None);
        if self.accusim {
            // AccuSim's pgref: a block prefetched from a ghost is not marked prefetched, so its
            // first demand is an ordinary T1 hit (to T2, p untouched); a prefetched one only
            // loses its mark and keeps its place in T1.
            if deferred != Ghost::None {
                self.move_to_t2(frame);
            }
        } else if deferred != Ghost::None {
            // Prefetching paper §4: a correctly prefetched ghost moves to T2 on its first demand.
            self.adapt(deferred);
            self.move_to_t2(frame);
        } else if self.per_frame[f].in_t2 {
            self.links.move_to_front(&mut self.t2, frame);
        } else {
            // A first access: the block stays in T1, at its MRU end.
            self.links.move_to_front(&mut self.t1, frame);
        }
    }

    #[inline(always)]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if self.pending.discard_t1 {
            return back_unpinned(&self.links, &self.t1, pins).or_else(|| back_unpinned(&self.links, &self.t2, pins));
        }
        // REPLACE(x, p): if |T1| >= 1 and (|T1| > p or (x in B2 and |T1| = p)), the LRU page of
        // T1 goes to B1; otherwise the LRU page of T2 goes to B2. AccuSim's replace(): T1 when
        // |T1| >= max(1, p).
        let t1 = self.t1.len() as f64;
        let from_t1 = if self.accusim {
            t1 >= self.p.max(1.0)
        } else {
            t1 >= 1.0 && (t1 > self.p || (self.pending.ghost_hit == Ghost::B2 && t1 == self.p))
        };
        let (first, second) = if from_t1 { (&self.t1, &self.t2) } else { (&self.t2, &self.t1) };
        back_unpinned(&self.links, first, pins).or_else(|| back_unpinned(&self.links, second, pins))
    }

    #[inline(always)]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let st = &mut self.per_frame[frame as usize];
        let was_t2 = st.in_t2;
        // AccuSim does not mark a block prefetched from a ghost as prefetched: evicted unused,
        // it leaves a ghost all the same.
        let unmarked = self.accusim && why == Removal::UnusedPrefetch && st.deferred != Ghost::None;
        st.deferred = Ghost::None;
        if was_t2 {
            self.links.remove(&mut self.t2, frame);
        } else {
            self.links.remove(&mut self.t1, frame);
        }
        let discard = !was_t2 && std::mem::replace(&mut self.pending.discard_t1, false);
        let leaves_ghost = why.remembered() || unmarked;
        if std::mem::replace(&mut self.pending.trim_b1_after_victim, false) && leaves_ghost {
            self.forget_oldest(Ghost::B1);
        }
        if !leaves_ghost || discard {
            return;
        }
        self.remember(key, if was_t2 { Ghost::B2 } else { Ghost::B1 });
    }

    #[inline(always)]
    fn warms(&self) -> bool {
        true
    }

    #[inline(always)]
    fn warm(&self, frame: Option<Frame>, key: u64) {
        match frame {
            // A hit moves the frame to T2's front; its list is in its per-frame state.
            Some(f) => {
                self.links.warm(f);
                self.per_frame.prefetch(f as usize);
            }
            // A miss looks the key up among the ghosts (in the cache's index when shared).
            None if !self.shared => self.ghosts.warm(key),
            None => {}
        }
    }

    #[inline(always)]
    fn likely_victims(&self) -> LikelyVictims {
        // REPLACE takes the back of T1 or of T2, depending on p and the incoming block's
        // ghost: both are named, REPLACE's choice without the ghost first (a hint may miss; it
        // never decides), and each one's neighbour for the eviction after.
        let t1 = self.t1.len() as f64;
        let from_t1 = if self.accusim { t1 >= self.p.max(1.0) } else { t1 >= 1.0 && t1 > self.p };
        let (a, b) = if from_t1 { (&self.t1, &self.t2) } else { (&self.t2, &self.t1) };
        let (va, vb) = (a.back(), b.back());
        let prev = |v: Option<Frame>| v.and_then(|f| self.links.prev(f));
        LikelyVictims { next: [va, vb], after: [prev(va), prev(vb)] }
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.t1)?;
        self.links.check(&self.t2)?;
        self.ghosts.check(&[&self.b1, &self.b2])?;
        let lens = [self.t1.len(), self.t2.len(), self.b1.len(), self.b2.len()];
        check_directory("ARC", lens, self.c, self.p, resident)?;
        for f in self.links.iter(&self.t1) {
            if self.per_frame[f as usize].in_t2 {
                return Err(format!("ARC: frame {f} in T1 marked T2"));
            }
        }
        for f in self.links.iter(&self.t2) {
            if !self.per_frame[f as usize].in_t2 || self.per_frame[f as usize].deferred != Ghost::None {
                return Err(format!("ARC: frame {f} in T2 marked T1 or deferred"));
            }
        }
        for (l, in_b2) in [(&self.b1, false), (&self.b2, true)] {
            for n in self.ghosts.nodes_of(l) {
                if self.ghosts.data(n) != in_b2 {
                    return Err(format!("ARC: ghost {} in the wrong list", self.ghosts.key(n)));
                }
            }
        }
        Ok(())
    }
}

impl PolicyDef for Arc {
    const INFO: PolicyInfo = PolicyInfo {
        name: "arc",
        aliases: &[],
        paper: "Megiddo & Modha, ARC, FAST 2003, §4 Fig. 4; prefetch-aware per the prefetching paper §4",
        summary: "T1/T2 LRU lists with ghosts B1/B2 and an adaptive target p for T1",
        params: &[
            ParamInfo {
                name: "adapt",
                default: "real",
                doc: "real (the paper: p moves by real-valued ratios) | integer (ratios floored, p whole: libCacheSim, AccuSim)",
                range: Range::Choice(&["real", "integer"]),
            },
            ParamInfo {
                name: "variant",
                default: "paper",
                doc: "paper (Fig. 4 and the prefetching paper §4) | accusim (AccuSim's arc.cc: p starts at c/2, REPLACE takes T1 when |T1| >= max(1, p), a prefetched ghost is deleted without adapting p)",
                range: Range::Choice(&["paper", "accusim"]),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let integer = args.choice("adapt", &["real", "integer"])? == "integer";
        let accusim = args.choice("variant", &["paper", "accusim"])? == "accusim";
        Ok(Arc::new(env.capacity, integer).with_accusim(accusim))
    }
}

/// The invariants of ARC's directory (§III, Fig. 4), which CAR keeps too (CAR §III): T1 and T2
/// hold the cache, |T1| + |B1| <= c, the whole directory <= 2c, and 0 <= p <= c. `lens` is
/// [|T1|, |T2|, |B1|, |B2|]; `name` starts the message.
pub(crate) fn check_directory(name: &str, lens: [usize; 4], c: usize, p: f64, resident: usize) -> Result<(), String> {
    let [t1, t2, b1, b2] = lens;
    if t1 + t2 != resident {
        return Err(format!("{name}: |T1|+|T2| = {} but the cache holds {resident}", t1 + t2));
    }
    if t1 + b1 > c {
        return Err(format!("{name}: |T1|+|B1| = {} exceeds c = {c}", t1 + b1));
    }
    if t1 + t2 + b1 + b2 > 2 * c {
        return Err(format!("{name}: directory holds {} > 2c = {}", t1 + t2 + b1 + b2, 2 * c));
    }
    if !(0.0..=c as f64).contains(&p) {
        return Err(format!("{name}: p = {p} outside [0, {c}]"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn lists(s: &Steps<Arc>) -> (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, f64) {
        let d = s.policy().dump();
        (d.t1, d.t2, d.b1, d.b2, d.p)
    }

    #[test]
    fn a_block_moved_in_without_an_access_is_the_next_victim() {
        // AMP's rescued blocks: T1's LRU end, not its MRU end.
        let mut arc = Arc::new(4, false);
        let at = |key: u64| Access { key, block: key, ..Access::default() };
        for (frame, key) in [(0, 1), (1, 2)] {
            arc.prepare_insert(&at(key), Origin::Demand);
            arc.insert(frame, &at(key), Origin::Demand);
        }
        arc.prepare_insert(&at(3), Origin::Demand);
        arc.insert_cold(2, &at(3), Origin::Demand);
        assert_eq!(arc.dump().t1, vec![2, 1, 3]);
        assert_eq!(arc.victim(&Pins::none(), &at(4)), Some(2));
    }

    #[test]
    fn follows_figure_4_step_by_step() {
        // c = 3; lists most recent first.
        let mut s = Steps::new(Arc::new(3, false), 3);
        assert_eq!(s.run(&[1, 2, 3, 1]), "MMMH");
        // T1=[3,2] T2=[1]
        assert_eq!(lists(&s), (vec![3, 2], vec![1], vec![], vec![], 0.0));
        // 4: case IV(B), total 3 < 6; REPLACE: |T1|=2 > p=0 -> 2 to B1
        assert_eq!(s.demand(4), 'M');
        assert_eq!(lists(&s), (vec![4, 3], vec![1], vec![2], vec![], 0.0));
        // 2 in B1 (case II): δ1 = max(1, 0/1) = 1, p = 1; REPLACE: |T1|=2 > 1 -> 3 to B1
        assert_eq!(s.demand(2), 'M');
        assert_eq!(lists(&s), (vec![4], vec![2, 1], vec![3], vec![], 1.0));
        // 5: REPLACE: |T1|=1 not > p=1 -> T2's LRU 1 to B2
        assert_eq!(s.demand(5), 'M');
        assert_eq!(lists(&s), (vec![5, 4], vec![2], vec![3], vec![1], 1.0));
        // 6: case IV(A): |T1|+|B1| = 3 = c, |T1| < c -> forget 3; REPLACE: 4 to B1
        assert_eq!(s.demand(6), 'M');
        assert_eq!(lists(&s), (vec![6, 5], vec![2], vec![4], vec![1], 1.0));
        // 1 in B2 (case III): δ2 = max(1, 1/1) = 1, p = 0; REPLACE: 5 to B1
        assert_eq!(s.demand(1), 'M');
        assert_eq!(lists(&s), (vec![6], vec![1, 2], vec![5, 4], vec![], 0.0));
        // 5 in B1: δ1 = max(1, 0/2) = 1, p = 1; REPLACE: |T1|=1 not > 1 -> 2 to B2
        assert_eq!(s.demand(5), 'M');
        assert_eq!(lists(&s), (vec![6], vec![5, 1], vec![4], vec![2], 1.0));
        // 4 in B1: δ1 = max(1, 1/1) = 1, p = 2; REPLACE: 1 to B2
        assert_eq!(s.demand(4), 'M');
        assert_eq!(lists(&s), (vec![6], vec![4, 5], vec![], vec![1, 2], 2.0));
        // 2 in B2: δ2 = max(1, 0/2) = 1, p = 1; REPLACE with the tie rule: x in B2 and
        // |T1| = 1 = p -> T1's LRU 6 goes to B1 (without the tie rule T2's 5 would go)
        assert_eq!(s.demand(2), 'M');
        assert_eq!(lists(&s), (vec![], vec![2, 4, 5], vec![6], vec![1], 1.0));
        // 7: total 5 < 6; REPLACE: |T1| = 0 -> 5 to B2
        assert_eq!(s.demand(7), 'M');
        assert_eq!(lists(&s), (vec![7], vec![2, 4], vec![6], vec![5, 1], 1.0));
        // 8: case IV(B) with the directory full (6 = 2c): forget B2's LRU 1; REPLACE: 4 to B2
        assert_eq!(s.demand(8), 'M');
        assert_eq!(lists(&s), (vec![8, 7], vec![2], vec![6], vec![4, 5], 1.0));
        // 9: case IV(A): forget 6; REPLACE: |T1|=2 > 1 -> 7 to B1
        assert_eq!(s.demand(9), 'M');
        assert_eq!(lists(&s), (vec![9, 8], vec![2], vec![7], vec![4, 5], 1.0));
    }

    #[test]
    fn full_t1_is_dropped_without_a_ghost() {
        // c = 2: 1 2 fill T1; 3: case IV(A) with |T1| = c -> 1 is deleted, B1 stays empty.
        let mut s = Steps::new(Arc::new(2, false), 2);
        assert_eq!(s.run(&[1, 2, 3]), "MMM");
        assert_eq!(lists(&s), (vec![3, 2], vec![], vec![], vec![], 0.0));
    }

    #[test]
    fn real_and_integer_adaptation_differ_on_fractional_ratios() {
        for (integer, want) in [(false, 1.5), (true, 1.0)] {
            let mut a = Arc::new(8, integer);
            a.remember(10, Ghost::B1);
            a.remember(11, Ghost::B1);
            for k in 20..23 {
                a.remember(k, Ghost::B2);
            }
            // A hit in B1 with |B2|/|B1| = 3/2.
            a.adapt(Ghost::B1);
            assert_eq!(a.p, want);
        }
    }

    #[test]
    fn prefetched_blocks_follow_section_4() {
        let mut s = Steps::new(Arc::new(3, false), 3);
        assert_eq!(s.demand(1), 'M');
        // A prefetched block enters T1 at the MRU end with no history.
        s.prefetch(2);
        assert_eq!(lists(&s), (vec![2, 1], vec![], vec![], vec![], 0.0));
        // Its first demand counts as a first access: it stays in T1.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(lists(&s), (vec![2, 1], vec![], vec![], vec![], 0.0));
        // The second demand is a real re-reference: T2.
        assert_eq!(s.demand(2), 'H');
        s.prefetch(3);
        assert_eq!(lists(&s), (vec![3, 1], vec![2], vec![], vec![], 0.0));
        // 4: REPLACE -> 1 (demanded) to B1
        assert_eq!(s.demand(4), 'M');
        assert_eq!(lists(&s), (vec![4, 3], vec![2], vec![1], vec![], 0.0));
        // 5: case IV(A) forgets 1; REPLACE takes 3, prefetched and unused: no ghost.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(lists(&s), (vec![5, 4], vec![2], vec![], vec![], 0.0));
        // 6: 4 to B1. Then 4 is prefetched: it leaves B1 for T1 (not T2), p unchanged; 5 to B1.
        assert_eq!(s.demand(6), 'M');
        s.prefetch(4);
        assert_eq!(lists(&s), (vec![4, 6], vec![2], vec![5], vec![], 0.0));
        // Its first demand is the deferred ghost hit: p = 0 + max(1, 0/1) = 1, 4 moves to T2.
        assert_eq!(s.demand(4), 'H');
        assert_eq!(lists(&s), (vec![6], vec![4, 2], vec![5], vec![], 1.0));
    }
    #[test]
    fn accusim_starts_p_at_half_and_replaces_from_t1_at_p() {
        // Rule 1 (AccuSim's initARC): p = c/2.
        assert_eq!(Arc::new(5, true).with_accusim(true).dump().p, 2.0);
        // Rule 2: T1=[4,3] T2=[2,1] with p = 2. Fig. 4 keeps T1 (|T1| = 2 is not > p, and no
        // hit in B2); AccuSim's |T1| >= max(1, p) takes T1's LRU page 3.
        for (accusim, want) in [(false, 1), (true, 3)] {
            let mut s = Steps::new(Arc::new(4, true).with_accusim(accusim), 4);
            assert_eq!(s.run(&[1, 2, 1, 2, 3, 4]), "MMHHMM");
            s.cache.policy.p = 2.0;
            assert_eq!(s.demand(5), 'M');
            let d = s.policy().dump();
            assert_eq!(d.b1.iter().chain(&d.b2).copied().collect::<Vec<_>>(), vec![want]);
        }
    }

    #[test]
    fn accusim_deletes_a_prefetched_ghost_without_adapting() {
        let mut s = Steps::new(Arc::new(4, true).with_accusim(true), 4);
        // p = 2; 5: |T1| = 2 >= max(1, 2) -> 3 to B1
        assert_eq!(s.run(&[1, 2, 1, 2, 3, 4, 5]), "MMHHMMM");
        assert_eq!(lists(&s), (vec![5, 4], vec![2, 1], vec![3], vec![], 2.0));
        // Prefetching 3 deletes its ghost, p stays 2; 3 enters T1 and 4 goes to B1.
        s.prefetch(3);
        assert_eq!(lists(&s), (vec![3, 5], vec![2, 1], vec![4], vec![], 2.0));
        // Its first demand is an ordinary T1 hit: to T2, p still 2.
        assert_eq!(s.demand(3), 'H');
        assert_eq!(lists(&s), (vec![5], vec![3, 2, 1], vec![4], vec![], 2.0));
        // 4 the same way; REPLACE: |T1| = 1 < 2 -> T2's 1 to B2.
        s.prefetch(4);
        assert_eq!(lists(&s), (vec![4, 5], vec![3, 2], vec![], vec![1], 2.0));
        // 6 evicts 5; 7 evicts 4, unused, which still leaves a B1 ghost.
        assert_eq!(s.run(&[6, 7]), "MM");
        assert_eq!(lists(&s), (vec![7, 6], vec![3, 2], vec![4, 5], vec![1], 2.0));
        // 8: case IV(A); REPLACE evicts 6 (demanded, to B1), then B1's LRU 5 goes.
        assert_eq!(s.demand(8), 'M');
        assert_eq!(lists(&s), (vec![8, 7], vec![3, 2], vec![6, 4], vec![1], 2.0));
        s.prefetch(9);
        s.prefetch(10);
        assert_eq!(lists(&s), (vec![10, 9], vec![3, 2], vec![8, 7], vec![1], 2.0));
        // 11: case IV(A); the victim 9 is an unused prefetch and leaves no ghost, so B1 keeps
        // its LRU ghost 7 (Fig. 4 would have forgotten it).
        assert_eq!(s.demand(11), 'M');
        assert_eq!(lists(&s), (vec![11, 10], vec![3, 2], vec![8, 7], vec![1], 2.0));
    }
}
