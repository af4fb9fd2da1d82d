//! LRU-K: O'Neil, O'Neil and Weikum, "The LRU-K Page Replacement Algorithm for Database Disk Buffering", SIGMOD 1993, §2 and its pseudocode (HIST, LAST, Correlated Reference Period, retained information), with the LRU-2 prefetch rules of the prefetching paper §4.
//! Deviations: retained information is bounded by a number of entries (`history`, as AccuSim and the MQ paper do) rather than a time period; victims come from a heap, not a scan; crp=0 means every block is eligible.
//!
//! Each resident block p keeps HIST(p,1..K), the times of its last K uncorrelated references
//! (0 where there were fewer), and LAST(p), its last reference of any kind. The victim is the
//! eligible block with the oldest HIST(p,K) (the largest backward K-distance); blocks with
//! fewer than K references have an infinite distance and go first, the least recently
//! referenced of them first (the paper's subsidiary LRU rule). A block is eligible once its
//! last reference lies more than `crp` demand accesses in the past (§2); while none is, the
//! block with the oldest LAST goes. Times are demand block accesses (`Access::time`).
//!
//! Prefetching (prefetching paper §4): a prefetched block enters with no access history (HIST
//! empty, so it orders like a first reference) and LAST = now, hence ineligible for the CRP
//! like any fresh block; its first demand access is its first reference, so the prefetch time
//! is never mistaken for a penultimate reference. Retained history of an evicted block is kept
//! for `history` blocks; a prefetched block evicted unused leaves none.
//!
//! `variant=accusim` follows AccuSim's `lru2.cc` (the prefetching paper's own simulator, whose
//! code departs from its §4 prose in two places): a prefetched block that comes back with
//! retained history orders by that history until it is demanded, and its first demand access
//! is a correlated reference: LAST := now, HIST(p,1) := now only if it has no history, and the
//! block stays where it is (an eligible one stays eligible). A correlated reference never
//! moves an eligible block back into the CRP, and blocks of equal backward K-distance leave in
//! the order they became eligible (AccuSim's heap order) rather than by last reference: a
//! block becomes eligible at the demand access its CRP ends at, and blocks of one LAST in the
//! reverse of the order they entered the CRP list (AccuSim's scan of that list, newest first).

use super::heap_victim::min_unpinned;
use super::queue::back_unpinned;
use super::shares::blocks_floor;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::heap::IndexedHeap;
use crate::list::{Links, List};
use crate::nonresident::NonResident;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

/// Where a resident frame is ordered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    Free,
    /// In the replacement heap.
    Eligible,
    /// Referenced within the Correlated Reference Period.
    Correlated,
}

pub struct LruK {
    k: usize,
    crp: u64,
    history: usize,
    /// AccuSim's rules for prefetched blocks and correlated references (see the module doc).
    accusim: bool,
    /// HIST(p,1..K) of every frame, K entries per frame: demand time + 1, 0 = none.
    hist: Vec<u64>,
    /// LAST(p): demand time + 1 of the last reference (correlated or not, or the prefetch).
    last: FrameVec<u64>,
    /// Event number of the last uncorrelated reference (with `accusim`, of the block's entry
    /// into the heap while it is eligible, into the CRP list while it is there): orders blocks
    /// of equal K-th reference, such as those referenced at the same demand time (a read-ahead
    /// group), in the order they were touched.
    seq: FrameVec<u64>,
    events: u64,
    /// Prefetched and not yet demanded.
    prefetched: FrameVec<bool>,
    place: FrameVec<Place>,
    /// Min-heap on (HIST(p,K), seq): the top has the largest backward K-distance.
    eligible: IndexedHeap<(u64, u64)>,
    links: Links,
    /// Blocks inside the Correlated Reference Period, most recent LAST at the front.
    correlated: List,
    /// Retained information of evicted blocks, newest at the front of `retained_order`.
    retained: NonResident,
    retained_links: Links,
    retained_order: List,
    retained_hist: Vec<u64>,
    /// Retained entry of the block being inserted: not counted against `history` and never
    /// dropped until the block is placed (an abandoned insertion keeps it).
    incoming: Option<u32>,
    scratch: Vec<(Frame, (u64, u64))>,
    /// With `accusim`: blocks of one LAST leaving the CRP together, in AccuSim's order.
    leaving: Vec<Frame>,
}

impl LruK {
    pub fn new(capacity: usize, k: usize, crp: u64, history: usize, accusim: bool) -> Self {
        LruK {
            k,
            crp,
            history,
            accusim,
            hist: Vec::new(),
            last: FrameVec::filled(0, capacity),
            seq: FrameVec::filled(0, capacity),
            events: 0,
            prefetched: FrameVec::filled(false, capacity),
            place: FrameVec::filled(Place::Free, capacity),
            eligible: IndexedHeap::with_nodes(capacity),
            links: Links::with_nodes(capacity),
            correlated: List::new(),
            retained: NonResident::with_capacity(history),
            retained_links: Links::default(),
            retained_order: List::new(),
            retained_hist: Vec::new(),
            incoming: None,
            scratch: Vec::new(),
            leaving: Vec::new(),
        }
    }

    #[inline]
    fn h(&self, f: Frame) -> &[u64] {
        let i = f as usize * self.k;
        &self.hist[i..i + self.k]
    }

    #[inline]
    fn key(&self, f: Frame) -> (u64, u64) {
        let fu = f as usize;
        if self.prefetched[fu] && !self.accusim {
            // No access history: orders as a first reference made now.
            let kth = if self.k == 1 { self.last[fu] } else { 0 };
            (kth, self.seq[fu])
        } else {
            (self.hist[fu * self.k + self.k - 1], self.seq[fu])
        }
    }

    #[inline]
    fn next_event(&mut self) -> u64 {
        self.events += 1;
        self.events
    }

    /// Puts `f` where its LAST says: in the heap when the CRP is empty, else at the front of
    /// the correlated list (it becomes eligible when the CRP has passed).
    #[inline]
    fn reorder(&mut self, f: Frame) {
        let fu = f as usize;
        if self.crp == 0 {
            let k = self.key(f);
            self.eligible.set(f, k);
            self.place[fu] = Place::Eligible;
            return;
        }
        match self.place[fu] {
            Place::Eligible => {
                self.eligible.remove(f);
                self.links.push_front(&mut self.correlated, f);
            }
            Place::Correlated => self.links.move_to_front(&mut self.correlated, f),
            Place::Free => self.links.push_front(&mut self.correlated, f),
        }
        self.place[fu] = Place::Correlated;
    }

    /// HIST(p,1) := t after shifting HIST(p,i) := HIST(p,i-1) for i = K down to 2 (the
    /// pseudocode's miss path, also used for the first demand of a prefetched block).
    #[inline]
    fn shift_in(&mut self, f: Frame, t: u64) {
        let i = f as usize * self.k;
        let h = &mut self.hist[i..i + self.k];
        h.copy_within(0..self.k - 1, 1);
        h[0] = t;
    }

    /// A reference to a resident block that was demanded before (the pseudocode's hit path).
    fn reference(&mut self, f: Frame, t: u64) {
        let fu = f as usize;
        let last = self.last[fu];
        if self.crp == 0 || t.saturating_sub(last) > self.crp {
            // A new, uncorrelated reference: the correlated period of the previous reference
            // collapses to a point, so earlier history moves forward by its length.
            let i = fu * self.k;
            let h = &mut self.hist[i..i + self.k];
            let period = last - h[0];
            for j in (1..self.k).rev() {
                h[j] = if h[j - 1] == 0 { 0 } else { h[j - 1] + period };
            }
            h[0] = t;
            self.seq[fu] = self.next_event();
        } else if self.accusim {
            self.correlated_reference(f, t);
            return;
        }
        self.last[fu] = t;
        self.reorder(f);
    }

    /// AccuSim: a correlated reference updates LAST and leaves the block where it is; in the
    /// CRP list it moves to the front, which keeps that list ordered by LAST (its `seq`, the
    /// order AccuSim lists it in, stays). The caller has run [`Self::leave_crp`] for `t`.
    fn correlated_reference(&mut self, f: Frame, t: u64) {
        let fu = f as usize;
        self.last[fu] = t;
        match self.place[fu] {
            Place::Correlated => self.links.move_to_front(&mut self.correlated, f),
            Place::Eligible => {
                let k = self.key(f);
                self.eligible.set(f, k);
            }
            Place::Free => self.reorder(f),
        }
    }

    /// AccuSim's `lru2.cc` looks through its CRP list at every reference, most recently listed
    /// block first, and moves each block whose CRP has passed into its heap, where blocks of
    /// equal K-th reference leave in the order they came in. A CRP passes at the demand access
    /// `crp + 1` after LAST, so blocks leave by LAST, and blocks of one LAST in the reverse of
    /// the order they were listed in (inserted, or referenced uncorrelated; a correlated
    /// reference leaves a block where it is listed): the blocks read ahead at one access before
    /// the block demanded then. Run at every event, so no block stays past its CRP; waiting
    /// until a victim is needed would give blocks made eligible by a reference (a first demand
    /// after the CRP) an earlier place than blocks whose CRP ran out before theirs.
    fn leave_crp(&mut self, t: u64) {
        while let Some(b) = self.correlated.back() {
            let last = self.last[b as usize];
            if t.saturating_sub(last) <= self.crp {
                break;
            }
            self.leaving.clear();
            while let Some(b) = self.correlated.back().filter(|&b| self.last[b as usize] == last) {
                self.links.remove(&mut self.correlated, b);
                self.leaving.push(b);
            }
            // While listed, `seq` is the event that listed the block.
            let seq = &self.seq;
            self.leaving.sort_unstable_by_key(|&b| std::cmp::Reverse(seq[b as usize]));
            for i in 0..self.leaving.len() {
                let b = self.leaving[i];
                self.seq[b as usize] = self.next_event();
                self.make_eligible(b);
            }
        }
    }

    /// `b`, out of the CRP list, enters the heap of blocks eligible for replacement.
    fn make_eligible(&mut self, b: Frame) {
        let k = self.key(b);
        self.eligible.set(b, k);
        self.place[b as usize] = Place::Eligible;
    }

    fn detach(&mut self, f: Frame) {
        match self.place[f as usize] {
            Place::Eligible => self.eligible.remove(f),
            Place::Correlated => self.links.remove(&mut self.correlated, f),
            Place::Free => {}
        }
        self.place[f as usize] = Place::Free;
    }

    fn forget_oldest(&mut self) {
        let mut z = self.retained_order.back();
        if z.is_some() && z == self.incoming {
            z = self.retained_links.prev(z.unwrap());
        }
        if let Some(z) = z {
            self.retained_links.remove(&mut self.retained_order, z);
            self.retained.remove(z);
        }
    }

    fn retain(&mut self, key: u64, f: Frame) {
        if self.retained.len() - self.incoming.is_some() as usize >= self.history {
            self.forget_oldest();
        }
        let id = self.retained.add(key);
        while self.retained_links.len() < self.retained.ids() {
            self.retained_links.push_node();
            self.retained_hist.extend(std::iter::repeat_n(0, self.k));
        }
        let (i, j) = (id as usize * self.k, f as usize * self.k);
        self.retained_hist[i..i + self.k].copy_from_slice(&self.hist[j..j + self.k]);
        self.retained_links.push_front(&mut self.retained_order, id);
    }

    /// Test-only view: eligible frames by victim order, correlated frames (most recent first),
    /// each as `key:HIST(p,1)/../HIST(p,K)` in demand times (0-based, `-` for none), then the
    /// retained keys (newest first).
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let show = |f: Frame| {
            let h: Vec<String> =
                self.h(f).iter().map(|&x| if x == 0 { "-".to_string() } else { (x - 1).to_string() }).collect();
            let p = if self.prefetched[f as usize] { "p" } else { "" };
            format!("{}{p}:{}", key_of(f), h.join("/"))
        };
        let mut heap: Vec<Frame> = self.eligible.nodes().collect();
        heap.sort_by_key(|&f| self.eligible.key(f));
        let e: Vec<String> = heap.into_iter().map(show).collect();
        let c: Vec<String> = self.links.iter(&self.correlated).map(show).collect();
        let r: Vec<String> =
            self.retained_links.iter(&self.retained_order).map(|id| self.retained.key(id).to_string()).collect();
        format!("eligible=[{}] crp=[{}] retained=[{}]", e.join(" "), c.join(" "), r.join(" "))
    }
}

impl Policy for LruK {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        // An insertion abandoned after its victim was chosen may have left one entry too many.
        self.incoming = None;
        while self.retained.len() > self.history {
            self.forget_oldest();
        }
        self.incoming = self.retained.get(a.key);
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let (fu, t) = (frame as usize, a.time + 1);
        if self.accusim {
            self.leave_crp(t);
        }
        let i = fu * self.k;
        if self.hist.len() < i + self.k {
            // Frames come lowest first, so the history grows one frame at a time (amortised
            // by the vector's doubling) and covers every frame in use.
            self.hist.resize(i + self.k, 0);
        }
        match self.incoming.take() {
            Some(id) => {
                let j = id as usize * self.k;
                self.hist[i..i + self.k].copy_from_slice(&self.retained_hist[j..j + self.k]);
                self.retained_links.remove(&mut self.retained_order, id);
                self.retained.remove(id);
            }
            None => self.hist[i..i + self.k].fill(0),
        }
        match origin {
            Origin::Demand => {
                self.shift_in(frame, t);
                self.prefetched[fu] = false;
            }
            // The retained history (if any) waits, unshifted, for the first demand access.
            Origin::Prefetch => self.prefetched[fu] = true,
        }
        self.last[fu] = t;
        self.seq[fu] = self.next_event();
        self.reorder(frame);
    }

    fn hit(&mut self, frame: Frame, a: &Access) {
        if self.accusim {
            self.leave_crp(a.time + 1);
        }
        self.reference(frame, a.time + 1);
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        let t = a.time + 1;
        self.prefetched[frame as usize] = false;
        if self.accusim {
            self.leave_crp(t);
            // AccuSim: a correlated reference, which starts the history of a block without one.
            let i = frame as usize * self.k;
            if self.hist[i] == 0 {
                self.hist[i] = t;
            }
            self.correlated_reference(frame, t);
            return;
        }
        // Prefetching paper §4: the first demand access is the block's first reference.
        self.shift_in(frame, t);
        self.last[frame as usize] = t;
        self.seq[frame as usize] = self.next_event();
        self.reorder(frame);
    }

    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        let t = incoming.time + 1;
        // §2: blocks whose CRP has passed become eligible for replacement.
        if self.accusim {
            self.leave_crp(t);
        }
        while let Some(b) = self.correlated.back() {
            if t.saturating_sub(self.last[b as usize]) <= self.crp {
                break;
            }
            self.links.remove(&mut self.correlated, b);
            self.make_eligible(b);
        }
        if let Some(f) = min_unpinned(&mut self.eligible, pins, &mut self.scratch) {
            return Some(f);
        }
        // Nothing eligible (all referenced within the CRP): the oldest LAST goes, as AccuSim does.
        back_unpinned(&self.links, &self.correlated, pins)
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.detach(frame);
        if why == Removal::Evicted && self.history > 0 && !self.prefetched[frame as usize] {
            self.retain(key, frame);
        }
        self.prefetched[frame as usize] = false;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.eligible.check()?;
        self.links.check(&self.correlated)?;
        self.retained_links.check(&self.retained_order)?;
        self.retained.check()?;
        if self.eligible.len() + self.correlated.len() != resident {
            return Err(format!(
                "LRU-K orders {} + {} frames, cache {resident}",
                self.eligible.len(),
                self.correlated.len()
            ));
        }
        if self.crp == 0 && !self.correlated.is_empty() {
            return Err("LRU-K: correlated list used with crp=0".into());
        }
        if self.retained.len() > self.history + self.incoming.is_some() as usize
            || self.retained.len() != self.retained_order.len()
        {
            return Err(format!(
                "LRU-K retains {} entries ({} listed), bound {}",
                self.retained.len(),
                self.retained_order.len(),
                self.history
            ));
        }
        for f in self.eligible.nodes() {
            if self.eligible.key(f) != self.key(f) {
                return Err(format!("LRU-K: stale heap key of frame {f}"));
            }
            let h = self.h(f);
            if h.windows(2).any(|w| w[1] != 0 && w[1] >= w[0]) {
                return Err(format!("LRU-K: history of frame {f} not decreasing: {h:?}"));
            }
        }
        Ok(())
    }
}

impl PolicyDef for LruK {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lru-k",
        aliases: &["lruk"],
        paper: "O'Neil, O'Neil, Weikum, The LRU-K page replacement algorithm, SIGMOD 1993 §2; prefetching paper §4 (LRU-2)",
        summary: "evicts the eligible block whose K-th most recent reference is oldest; blocks with fewer than K references first",
        params: &[
            ParamInfo { name: "k", default: "2", doc: "references remembered per block, 1-8 (k=1 is LRU)", range: Range::Whole(1, 8) },
            ParamInfo { name: "crp", default: "0", doc: "Correlated Reference Period in demand accesses: a block referenced within it is not eligible and its references count once (0: none)", range: Range::Whole(0, u64::MAX) },
            ParamInfo { name: "history", default: "100%", doc: "retained information: evicted blocks whose history is kept (a count, or a share of the cache)", range: Range::Share(0.0, 100.0) },
            ParamInfo { name: "variant", default: "paper", doc: "paper (prefetching paper §4: a prefetched block has no history until its first demand, which is its first reference) | accusim (AccuSim's lru2.cc: it keeps its retained history, and its first demand is a correlated reference)", range: Range::Choice(&["paper", "accusim"]) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let k = args.u64("k")?;
        if !(1..=8).contains(&k) {
            return Err(SpecError(format!("policy `lru-k`: k={k} must be between 1 and 8")));
        }
        let crp = args.u64("crp")?;
        let history = blocks_floor(args, "lru-k", "history", env)?;
        let accusim = args.choice("variant", &["paper", "accusim"])? == "accusim";
        Ok(LruK::new(env.capacity, k as usize, crp, history, accusim))
    }
}
