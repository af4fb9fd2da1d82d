//! FBR: Robinson and Devarakonda, "Data Cache Management Using Frequency-Based Replacement", SIGMETRICS 1990, §2 (new/middle/old sections of the LRU stack, counts not incremented in the new section, victim from the old section, aging by halving when the mean count exceeds A_max), as the MQ paper §2.1/§5.1 uses it (with an optional history of evicted blocks' counts); prefetch rules of the prefetching paper §4.
//! Deviations: none in the rules; the paper leaves A_max and C_max to tuning, the defaults here (100, 100) are ours; counts of C_max and above tie (the paper's count chains stop at C_max).
//!
//! All resident blocks form one LRU stack cut into a new section (the most recent `new` share
//! of the cache), an old section (the least recent `old` share) and a middle section. A
//! reference moves the block to the top; its count is incremented unless it was in the new
//! section ("factoring out locality": a burst of correlated references counts once). A miss
//! brings the block in with count 1 and evicts, from the old section, the block with the
//! smallest count, the least recently used among equals. When the mean count of the resident
//! blocks exceeds A_max every count C becomes ceil(C/2).
//!
//! Prefetching (prefetching paper §4): a prefetched block enters at the top with count 0 ("not
//! accessed yet"); its first demand access counts once wherever it is. The MQ paper's history
//! (`history` > 0) remembers the counts of evicted blocks; an unused prefetch leaves none.

use super::queue::back_unpinned;
use super::shares::blocks_floor;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::nonresident::NonResident;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    New,
    Middle,
    Old,
}

pub struct Fbr {
    new_len: usize,
    middle_len: usize,
    amax: f64,
    cmax: u64,
    links: Links,
    new: List,
    middle: List,
    old: List,
    section: FrameVec<Section>,
    count: FrameVec<u64>,
    /// Sum of the counts of resident blocks.
    total: u64,
    resident: usize,
    /// Old-section blocks by min(count, C_max), most recent at the front of each chain.
    chain_links: Links,
    chains: Vec<List>,
    /// Bit c set when chain c is not empty: the victim's chain is the lowest set bit.
    nonempty: Vec<u64>,
    /// Counts of evicted blocks (MQ paper's history buffer), newest at the front.
    history: usize,
    remembered: NonResident,
    remembered_links: Links,
    remembered_order: List,
    remembered_count: Vec<u64>,
    /// Remembered entry of the block being inserted (kept until it is placed).
    incoming: Option<u32>,
}

impl Fbr {
    pub fn new(capacity: usize, new_len: usize, old_len: usize, amax: f64, cmax: u64, history: usize) -> Self {
        let old_len = old_len.clamp(1, capacity);
        let new_len = new_len.min(capacity - old_len);
        let chains = cmax as usize + 1;
        Fbr {
            new_len,
            middle_len: capacity - new_len - old_len,
            amax,
            cmax,
            links: Links::with_nodes(capacity),
            new: List::new(),
            middle: List::new(),
            old: List::new(),
            section: FrameVec::filled(Section::New, capacity),
            count: FrameVec::filled(0, capacity),
            total: 0,
            resident: 0,
            chain_links: Links::with_nodes(capacity),
            chains: vec![List::new(); chains],
            nonempty: vec![0; chains.div_ceil(64)],
            history,
            remembered: NonResident::with_capacity(history),
            remembered_links: Links::default(),
            remembered_order: List::new(),
            remembered_count: Vec::new(),
            incoming: None,
        }
    }

    #[inline]
    fn chain_of(&self, f: Frame) -> usize {
        self.count[f as usize].min(self.cmax) as usize
    }

    #[inline]
    fn chain_add(&mut self, f: Frame) {
        let c = self.chain_of(f);
        self.chain_links.push_front(&mut self.chains[c], f);
        self.nonempty[c / 64] |= 1 << (c % 64);
    }

    #[inline]
    fn chain_remove(&mut self, f: Frame) {
        let c = self.chain_of(f);
        self.chain_links.remove(&mut self.chains[c], f);
        if self.chains[c].is_empty() {
            self.nonempty[c / 64] &= !(1 << (c % 64));
        }
    }

    /// Takes `f` out of the stack; the blocks below it move up, across section boundaries.
    fn take_out(&mut self, f: Frame) {
        match self.section[f as usize] {
            Section::New => {
                self.links.remove(&mut self.new, f);
                if let Some(m) = self.links.pop_front(&mut self.middle) {
                    self.links.push_back(&mut self.new, m);
                    self.section[m as usize] = Section::New;
                    self.pull_up_old();
                } else if let Some(o) = self.old.front() {
                    // No middle section (new + old = the cache): the old section's top moves
                    // up into the new section itself.
                    self.chain_remove(o);
                    self.links.remove(&mut self.old, o);
                    self.links.push_back(&mut self.new, o);
                    self.section[o as usize] = Section::New;
                }
            }
            Section::Middle => {
                self.links.remove(&mut self.middle, f);
                self.pull_up_old();
            }
            Section::Old => {
                self.links.remove(&mut self.old, f);
                self.chain_remove(f);
            }
        }
    }

    fn pull_up_old(&mut self) {
        if let Some(o) = self.old.front() {
            self.chain_remove(o);
            self.links.remove(&mut self.old, o);
            self.links.push_back(&mut self.middle, o);
            self.section[o as usize] = Section::Middle;
        }
    }

    /// Puts `f` on top; the blocks above each boundary move down across it.
    fn push_top(&mut self, f: Frame) {
        self.links.push_front(&mut self.new, f);
        self.section[f as usize] = Section::New;
        if self.new.len() > self.new_len {
            let m = self.links.pop_back(&mut self.new).expect("new section not empty");
            self.links.push_front(&mut self.middle, m);
            self.section[m as usize] = Section::Middle;
            if self.middle.len() > self.middle_len {
                let o = self.links.pop_back(&mut self.middle).expect("middle section not empty");
                self.links.push_front(&mut self.old, o);
                self.section[o as usize] = Section::Old;
                self.chain_add(o);
            }
        }
    }

    /// Aging (§2): when the mean count exceeds A_max, every count C becomes ceil(C/2).
    fn maybe_age(&mut self) {
        if self.resident == 0 || (self.total as f64) <= self.amax * self.resident as f64 {
            return;
        }
        self.total = 0;
        for list in [self.new, self.middle, self.old] {
            let mut cur = list.front();
            while let Some(f) = cur {
                let c = &mut self.count[f as usize];
                *c = c.div_ceil(2);
                self.total += *c;
                cur = self.links.next(f);
            }
        }
        // Rebuild the chains, pushing the old section from its least recent block up.
        self.chains.iter_mut().for_each(|c| *c = List::new());
        self.nonempty.iter_mut().for_each(|w| *w = 0);
        let mut cur = self.old.back();
        while let Some(f) = cur {
            self.chain_add(f);
            cur = self.links.prev(f);
        }
    }

    fn forget_oldest(&mut self) {
        let mut z = self.remembered_order.back();
        if z.is_some() && z == self.incoming {
            z = self.remembered_links.prev(z.unwrap());
        }
        if let Some(z) = z {
            self.remembered_links.remove(&mut self.remembered_order, z);
            self.remembered.remove(z);
        }
    }

    fn remember(&mut self, key: u64, count: u64) {
        if self.remembered.len() - self.incoming.is_some() as usize >= self.history {
            self.forget_oldest();
        }
        let id = self.remembered.add(key);
        while self.remembered_links.len() < self.remembered.ids() {
            self.remembered_links.push_node();
            self.remembered_count.push(0);
        }
        self.remembered_count[id as usize] = count;
        self.remembered_links.push_front(&mut self.remembered_order, id);
    }

    /// Test-only view: the sections from the top, each block as `key:count`.
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let show = |l: &List| {
            self.links
                .iter(l)
                .map(|f| format!("{}:{}", key_of(f), self.count[f as usize]))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("new=[{}] middle=[{}] old=[{}]", show(&self.new), show(&self.middle), show(&self.old))
    }
}

impl Policy for Fbr {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        // An insertion abandoned after its victim was chosen may have left one entry too many.
        self.incoming = None;
        while self.remembered.len() > self.history {
            self.forget_oldest();
        }
        self.incoming = self.remembered.get(a.key);
    }

    fn insert(&mut self, frame: Frame, _a: &Access, origin: Origin) {
        let remembered = match self.incoming.take() {
            Some(id) => {
                self.remembered_links.remove(&mut self.remembered_order, id);
                self.remembered.remove(id);
                self.remembered_count[id as usize]
            }
            None => 0,
        };
        // A miss is a reference: count 1 (plus a remembered count); a prefetch is not (§4).
        let c = remembered + (origin == Origin::Demand) as u64;
        self.count[frame as usize] = c;
        self.total += c;
        self.resident += 1;
        self.push_top(frame);
        self.maybe_age();
    }

    fn hit(&mut self, frame: Frame, _a: &Access) {
        // Counted only outside the new section: locality is factored out.
        let counted = self.section[frame as usize] != Section::New;
        self.take_out(frame);
        if counted {
            self.count[frame as usize] += 1;
            self.total += 1;
        }
        self.push_top(frame);
        self.maybe_age();
    }

    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        // Prefetching paper §4: the first demand access counts, wherever the block is.
        let f = frame as usize;
        self.take_out(frame);
        self.count[f] += 1;
        self.total += 1;
        self.push_top(frame);
        self.maybe_age();
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        for (w, &word) in self.nonempty.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                if let Some(f) = back_unpinned(&self.chain_links, &self.chains[c], pins) {
                    return Some(f);
                }
                bits &= bits - 1;
            }
        }
        // The old section is empty or pinned: the least recently used unpinned block.
        back_unpinned(&self.links, &self.middle, pins).or_else(|| back_unpinned(&self.links, &self.new, pins))
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let f = frame as usize;
        self.take_out(frame);
        self.total -= self.count[f];
        self.resident -= 1;
        if why == Removal::Evicted && self.history > 0 {
            self.remember(key, self.count[f]);
        }
        self.count[f] = 0;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        for l in [&self.new, &self.middle, &self.old] {
            self.links.check(l)?;
        }
        let n = self.new.len() + self.middle.len() + self.old.len();
        if n != resident || self.resident != resident {
            return Err(format!("FBR holds {n} frames (counted {}), cache {resident}", self.resident));
        }
        if self.new.len() > self.new_len || (self.middle.len() > self.middle_len) {
            return Err(format!(
                "FBR sections {}/{} over {}/{}",
                self.new.len(),
                self.middle.len(),
                self.new_len,
                self.middle_len
            ));
        }
        if !self.old.is_empty() && (self.new.len() < self.new_len || self.middle.len() < self.middle_len) {
            return Err("FBR: old section used before the others are full".into());
        }
        let mut total = 0;
        let mut in_chains = 0;
        for (c, chain) in self.chains.iter().enumerate() {
            self.chain_links.check(chain)?;
            in_chains += chain.len();
            if chain.is_empty() == (self.nonempty[c / 64] >> (c % 64) & 1 == 1) {
                return Err(format!("FBR: chain {c} emptiness bit wrong"));
            }
            for f in self.chain_links.iter(chain) {
                if self.section[f as usize] != Section::Old || self.chain_of(f) != c {
                    return Err(format!("FBR: frame {f} in chain {c} but not old with that count"));
                }
            }
        }
        if in_chains != self.old.len() {
            return Err(format!("FBR: {in_chains} frames chained, {} old", self.old.len()));
        }
        for (l, s) in [(&self.new, Section::New), (&self.middle, Section::Middle), (&self.old, Section::Old)] {
            for f in self.links.iter(l) {
                if self.section[f as usize] != s {
                    return Err(format!("FBR: frame {f} in {s:?} marked {:?}", self.section[f as usize]));
                }
                total += self.count[f as usize];
            }
        }
        if total != self.total {
            return Err(format!("FBR: counts sum to {total}, tracked {}", self.total));
        }
        if self.remembered.len() > self.history + self.incoming.is_some() as usize {
            return Err(format!("FBR remembers {} counts, history {}", self.remembered.len(), self.history));
        }
        Ok(())
    }
}

impl PolicyDef for Fbr {
    const INFO: PolicyInfo = PolicyInfo {
        name: "fbr",
        aliases: &[],
        paper: "Robinson, Devarakonda, Data cache management using frequency-based replacement, SIGMETRICS 1990 §2, as in the MQ paper §2.1; prefetching paper §4",
        summary: "LRU stack in new/middle/old sections; evicts the least-counted old block; hits in the new section do not count; counts halve when their mean passes A_max",
        params: &[
            ParamInfo { name: "new", default: "25%", doc: "new section: most recent share of the cache where references are not counted (rounded down)", range: Range::Share(0.0, 1.0) },
            ParamInfo { name: "old", default: "25%", doc: "old section: least recent share of the cache that victims come from (rounded down, at least 1 block)", range: Range::Share(0.0, 1.0) },
            ParamInfo { name: "amax", default: "100", doc: "A_max: all counts halve (rounding up) when the mean count exceeds it", range: Range::Number(1.0, 1e9) },
            ParamInfo { name: "cmax", default: "100", doc: "C_max: counts at or above it are equal when choosing a victim (1-65535)", range: Range::Whole(1, 65535) },
            ParamInfo { name: "history", default: "0", doc: "evicted blocks whose counts are remembered (the MQ paper used 4x the cache)", range: Range::Share(0.0, 100.0) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let new = blocks_floor(args, "fbr", "new", env)?;
        let old = blocks_floor(args, "fbr", "old", env)?;
        if new + old > env.capacity {
            return Err(SpecError(format!(
                "policy `fbr`: new ({new} blocks) and old ({old} blocks) sections exceed the cache of {} blocks",
                env.capacity
            )));
        }
        let amax = args.f64("amax")?;
        if amax < 1.0 {
            return Err(SpecError(format!("policy `fbr`: amax={amax} must be at least 1")));
        }
        let cmax = args.u64("cmax")?;
        if !(1..=65535).contains(&cmax) {
            return Err(SpecError(format!("policy `fbr`: cmax={cmax} must be between 1 and 65535")));
        }
        let history = blocks_floor(args, "fbr", "history", env)?;
        Ok(Fbr::new(env.capacity, new, old, amax, cmax, history))
    }
}
