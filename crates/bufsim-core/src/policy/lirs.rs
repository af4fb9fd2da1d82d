//! LIRS: Jiang and Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement Policy to Improve Buffer Cache Performance", SIGMETRICS 2002, §3 (stack S, list Q, stack pruning, the three cases of a reference), with the prefetch rules of the prefetching paper §4.
//! Deviations: the stack bound (`stack`) drops the HIR entry nearest the bottom of S when S grows past it, as the authors' lirs.c does; Lhirs rounds down with a floor of `hir-min` blocks, also as lirs.c; `variant=libcachesim` reproduces libCacheSim's LIRS instead (see below).
//!
//! Blocks are LIR (low inter-reference recency, always resident, at most Llirs = cache - Lhirs
//! of them) or HIR (resident in the Lhirs frames listed by Q, or non-resident: remembered only
//! as an entry of S). S is an LRU stack of recently seen blocks whose bottom is always LIR.
//! §3: "stack pruning" removes the HIR entries at the bottom of S after the bottom LIR block
//! leaves it. The victim is the front of Q.
//! §3, on a reference to X:
//!   (1) X is LIR: move it to the top of S; prune if it was at the bottom.
//!   (2) X is a resident HIR: move it to the top of S. If it was in S it becomes LIR, leaves Q,
//!       and the bottom LIR of S moves to the end of Q as HIR, then S is pruned. If it was not
//!       in S it stays HIR and moves to the end of Q.
//!   (3) X is not resident: the front of Q is evicted (left in S as a non-resident entry if it
//!       is in S). If X was in S (a non-resident HIR) it becomes LIR and the bottom LIR moves to
//!       the end of Q, with pruning; otherwise X is a resident HIR at the top of S and the end
//!       of Q. Until Llirs blocks are LIR, every new block is LIR.
//!
//! `variant=libcachesim` follows libCacheSim's LIRS.c where it departs from the paper: a hit on
//! a resident HIR block that is not in S (hit_RD_HIRinQ) demotes the bottom LIR block to the end
//! of Q when the LIR set is full (libCacheSim then evicts Q's front at once; here it is the next
//! victim) and never makes that block LIR; the stack bound drops the oldest non-resident entry
//! and never a resident one (limitStack). With `hir-min=1,stack=2x` it gives libCacheSim's miss
//! counts (tests/golden/libcachesim_cloudphysics_lruk_2q_lirs_lrfu.csv).
//!
//! Prefetching (prefetching paper §4): a prefetched block is not put on S (that would distort
//! the recency history) but into Q as a resident HIR; an entry it already had in S stays where
//! it is. Its first demand access then acts as a reference: with an entry in S it becomes LIR,
//! without one it enters S as HIR (or LIR while fewer than Llirs blocks are LIR: a first
//! access). Evicted unused, it leaves no entry in S.
//!
//! `variant=accusim` follows AccuSim's lirs.c (the prefetching paper's simulator) where it
//! departs from this with read-ahead: a block without an entry in S becomes LIR only on a demand
//! miss while more than Lhirs frames are free (the warm-up), never at its first demand after a
//! prefetch nor at a later hit; and a prefetched block evicted unused keeps the entry in S it
//! had. On synthetic loops with read-ahead it reads the blocks AccuSim reads (docs/policies/lirs.md).

use super::shares::blocks_floor_within;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::nonresident::NonResident;
use crate::policy::{Capabilities, Limit, Range};
use crate::spec::SpecError;

/// The links of S, of the HIR order and of Q for every entry, side by side: entry e uses nodes
/// 3e (S), 3e + 1 (HIR order) and 3e + 2 (Q) of one arena, so an operation on a block touches
/// one cache line instead of one per list.
struct Arena {
    links: Links,
}

/// The three lanes of [`Arena`].
const S: u32 = 0;
const H: u32 = 1;
const QL: u32 = 2;

#[inline]
fn entry(node: Option<u32>) -> Option<u32> {
    node.map(|n| n / 3)
}

impl Arena {
    fn with_entries(n: usize) -> Self {
        Arena { links: Links::with_nodes(3 * n) }
    }
    #[inline]
    fn entries(&self) -> usize {
        self.links.len() / 3
    }
    fn push_entry(&mut self) {
        for _ in 0..3 {
            self.links.push_node();
        }
    }
    #[inline]
    fn push_front(&mut self, lane: u32, list: &mut List, e: u32) {
        self.links.push_front(list, 3 * e + lane);
    }
    #[inline]
    fn move_to_front(&mut self, lane: u32, list: &mut List, e: u32) {
        self.links.move_to_front(list, 3 * e + lane);
    }
    #[inline]
    fn remove(&mut self, lane: u32, list: &mut List, e: u32) {
        self.links.remove(list, 3 * e + lane);
    }
    #[inline]
    fn insert_before(&mut self, lane: u32, list: &mut List, at: u32, e: u32) {
        self.links.insert_before(list, 3 * at + lane, 3 * e + lane);
    }
    #[inline]
    fn prev(&self, lane: u32, e: u32) -> Option<u32> {
        entry(self.links.prev(3 * e + lane))
    }
    fn iter<'a>(&'a self, list: &List) -> impl Iterator<Item = u32> + 'a {
        self.links.iter(list).map(|n| n / 3)
    }
    fn check(&self, lane: u32, list: &List) -> Result<(), String> {
        self.links.check(list)?;
        match self.links.iter(list).find(|n| n % 3 != lane) {
            Some(n) => Err(format!("LIRS: node {n} in the wrong list")),
            None => Ok(()),
        }
    }
}

pub struct Lirs {
    capacity: usize,
    /// libCacheSim's rules instead of the paper's where they differ.
    libcachesim: bool,
    /// AccuSim's rules for blocks read ahead and for the warm-up.
    accusim: bool,
    /// Llirs: frames for LIR blocks.
    llirs: usize,
    /// Most entries S may hold (at least the cache size).
    stack_limit: usize,
    /// Stack S, top (most recent) at the front. Node ids: frame f is node f, non-resident
    /// entry g is node capacity + g.
    links: Arena,
    stack: List,
    /// The HIR entries of S (resident or not) in S's order: the one nearest the bottom is
    /// the back, so the stack bound drops it in O(1).
    hir_in_s: List,
    /// Q: resident HIR blocks, end (newest) at the front; the victim is the back.
    q: List,
    lir: FrameVec<bool>,
    in_s: FrameVec<bool>,
    lir_count: usize,
    nonresident: NonResident,
}

impl Lirs {
    pub fn new(capacity: usize, lhirs: usize, stack_limit: usize, libcachesim: bool) -> Self {
        // At least one frame for HIR blocks; with two or more frames at least one for LIR.
        let lhirs = if capacity >= 2 { lhirs.clamp(1, capacity - 1) } else { capacity };
        Lirs {
            capacity,
            libcachesim,
            accusim: false,
            llirs: capacity - lhirs,
            stack_limit: stack_limit.max(capacity),
            links: Arena::with_entries(capacity),
            stack: List::new(),
            hir_in_s: List::new(),
            q: List::new(),
            lir: FrameVec::filled(false, capacity),
            in_s: FrameVec::filled(false, capacity),
            lir_count: 0,
            nonresident: NonResident::with_capacity(capacity),
        }
    }

    /// `variant=accusim` (module doc).
    pub fn with_accusim(mut self, on: bool) -> Self {
        self.accusim = on;
        self
    }

    /// Whether a block that has no entry in S becomes LIR when it is missed: while fewer than
    /// Llirs blocks are LIR (§3), or with AccuSim's rule while more than Lhirs frames are free.
    #[inline]
    fn new_block_is_lir(&self) -> bool {
        if self.accusim {
            let resident = self.lir_count + self.q.len();
            self.capacity.saturating_sub(resident) > self.capacity - self.llirs
        } else {
            self.lir_count < self.llirs
        }
    }

    #[inline]
    fn ghost_node(&self, g: u32) -> u32 {
        self.capacity as u32 + g
    }

    #[inline]
    fn is_lir_node(&self, n: u32) -> bool {
        (n as usize) < self.capacity && self.lir[n as usize]
    }

    /// Puts node `n` on top of S (it must not be in S).
    #[inline]
    fn push_top(&mut self, n: u32) {
        self.links.push_front(S, &mut self.stack, n);
        if !self.is_lir_node(n) {
            self.links.push_front(H, &mut self.hir_in_s, n);
        }
    }

    /// Moves node `n`, in S, to the top.
    #[inline]
    fn move_top(&mut self, n: u32) {
        self.links.move_to_front(S, &mut self.stack, n);
        if !self.is_lir_node(n) {
            self.links.move_to_front(H, &mut self.hir_in_s, n);
        }
    }

    #[inline]
    fn unlink_s(&mut self, n: u32) {
        self.links.remove(S, &mut self.stack, n);
        if !self.is_lir_node(n) {
            self.links.remove(H, &mut self.hir_in_s, n);
        }
    }

    /// Takes an entry out of S; a non-resident one is forgotten.
    fn drop_from_s(&mut self, n: u32) {
        self.unlink_s(n);
        if (n as usize) < self.capacity {
            self.in_s[n as usize] = false;
        } else {
            self.nonresident.remove(n - self.capacity as u32);
        }
    }

    /// Puts `new` where `old` is in S (and in the HIR order), and takes `old` out. Both HIR.
    fn replace_in_s(&mut self, old: u32, new: u32) {
        self.links.insert_before(S, &mut self.stack, old, new);
        self.links.remove(S, &mut self.stack, old);
        self.links.insert_before(H, &mut self.hir_in_s, old, new);
        self.links.remove(H, &mut self.hir_in_s, old);
    }

    /// §3 stack pruning: HIR entries at the bottom of S go until an LIR block is there.
    fn prune(&mut self) {
        while let Some(b) = entry(self.stack.back()) {
            if self.is_lir_node(b) {
                break;
            }
            self.drop_from_s(b);
        }
    }

    /// The LIR block at the bottom of S becomes HIR at the end of Q; then S is pruned.
    fn demote_bottom_lir(&mut self) {
        self.prune();
        let Some(b) = entry(self.stack.back()) else { return };
        debug_assert!(self.is_lir_node(b));
        self.links.remove(S, &mut self.stack, b);
        self.lir[b as usize] = false;
        self.in_s[b as usize] = false;
        self.lir_count -= 1;
        self.links.push_front(QL, &mut self.q, b);
        self.prune();
    }

    /// Frame `f`, a resident HIR in S, becomes LIR at the top of S (§3, case 2).
    fn promote(&mut self, f: Frame) {
        self.links.remove(QL, &mut self.q, f);
        self.links.remove(H, &mut self.hir_in_s, f);
        self.lir[f as usize] = true;
        self.lir_count += 1;
        self.links.move_to_front(S, &mut self.stack, f);
        if self.lir_count > self.llirs {
            self.demote_bottom_lir();
        }
    }

    /// Frame `f`, resident and not in S, becomes LIR at the top of S.
    fn enter_as_lir(&mut self, f: Frame) {
        self.lir[f as usize] = true;
        self.in_s[f as usize] = true;
        self.lir_count += 1;
        self.push_top(f);
        if self.lir_count > self.llirs {
            self.demote_bottom_lir();
        }
    }

    /// Frame `f` is referenced as a resident HIR: top of S, end of Q (`in_q`: it is in Q
    /// already, else it just arrived).
    fn hir_to_top(&mut self, f: Frame, in_q: bool) {
        if self.in_s[f as usize] {
            self.move_top(f);
        } else {
            self.in_s[f as usize] = true;
            self.push_top(f);
        }
        if in_q {
            self.links.move_to_front(QL, &mut self.q, f);
        } else {
            self.links.push_front(QL, &mut self.q, f);
        }
    }

    /// The stack bound (lirs.c's MAX_S_LEN): while S is over it, the HIR entry nearest the
    /// bottom leaves S.
    fn bound_stack(&mut self) {
        while self.stack.len() > self.stack_limit {
            let mut n = entry(self.hir_in_s.back());
            if self.libcachesim {
                // limitStack: only non-resident entries, the oldest first.
                while let Some(r) = n.filter(|&r| (r as usize) < self.capacity) {
                    n = self.links.prev(H, r);
                }
            }
            let Some(n) = n else { break };
            self.drop_from_s(n);
        }
    }

    fn ensure_ghost_nodes(&mut self) {
        let need = self.capacity + self.nonresident.ids();
        while self.links.entries() < need {
            self.links.push_entry();
        }
    }

    /// Test-only view: S from the top, each entry `keyL` (LIR), `keyH` (resident HIR) or `keyn`
    /// (non-resident HIR); Q from its end (newest) to its front (next victim).
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let s: Vec<String> = self
            .links
            .iter(&self.stack)
            .map(|n| {
                if (n as usize) < self.capacity {
                    format!("{}{}", key_of(n), if self.lir[n as usize] { "L" } else { "H" })
                } else {
                    format!("{}n", self.nonresident.key(n - self.capacity as u32))
                }
            })
            .collect();
        let q: Vec<String> = self.links.iter(&self.q).map(|f| key_of(f).to_string()).collect();
        format!("S=[{}] Q=[{}]", s.join(" "), q.join(" "))
    }
}

impl Policy for Lirs {
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let f = frame as usize;
        self.lir[f] = false;
        self.in_s[f] = false;
        // Looked up now, not before the victim was chosen: evicting it may prune S.
        let ghost = self.nonresident.get(a.key);
        match origin {
            Origin::Demand => {
                if let Some(g) = ghost {
                    // Case 3, X in S: its entry leaves its place; X is LIR at the top.
                    let n = self.ghost_node(g);
                    self.drop_from_s(n);
                    if self.llirs > 0 {
                        self.enter_as_lir(frame);
                    } else {
                        self.hir_to_top(frame, false);
                    }
                } else if self.new_block_is_lir() {
                    self.enter_as_lir(frame);
                } else {
                    self.hir_to_top(frame, false);
                }
            }
            Origin::Prefetch => {
                // Prefetching paper §4: into Q only; an entry in S keeps its place.
                if let Some(g) = ghost {
                    let n = self.ghost_node(g);
                    self.replace_in_s(n, frame);
                    self.nonresident.remove(g);
                    self.in_s[f] = true;
                }
                self.links.push_front(QL, &mut self.q, frame);
            }
        }
        self.bound_stack();
    }

    fn hit(&mut self, frame: Frame, _a: &Access) {
        let f = frame as usize;
        if self.lir[f] {
            // Case 1.
            let was_bottom = entry(self.stack.back()) == Some(frame);
            self.links.move_to_front(S, &mut self.stack, frame);
            if was_bottom {
                self.prune();
            }
        } else if self.in_s[f] && self.llirs > 0 {
            self.promote(frame);
        } else if self.libcachesim {
            // LIRS.c hit_RD_HIRinQ: the block stays HIR; a full LIR set gives up its bottom.
            let full = self.lir_count == self.llirs;
            self.hir_to_top(frame, true);
            if full {
                self.demote_bottom_lir();
            }
        } else if self.lir_count < self.llirs && !self.accusim {
            // §3: while the LIR set is not full every referenced block becomes LIR (after an
            // LIR block was given up because all of Q was pinned).
            self.links.remove(QL, &mut self.q, frame);
            self.enter_as_lir(frame);
        } else {
            self.hir_to_top(frame, true);
        }
        self.bound_stack();
    }

    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        let f = frame as usize;
        if self.in_s[f] && self.llirs > 0 {
            self.promote(frame);
        } else if self.lir_count < self.llirs && !self.accusim {
            // A first access while LIR frames are free: LIR, as in case 3.
            self.links.remove(QL, &mut self.q, frame);
            self.enter_as_lir(frame);
        } else {
            self.hir_to_top(frame, true);
        }
        self.bound_stack();
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let mut cur = entry(self.q.back());
        while let Some(f) = cur {
            if !pins.pinned(f) {
                return Some(f);
            }
            cur = self.links.prev(QL, f);
        }
        // Every resident HIR is pinned (a read-ahead group): the LIR block nearest the bottom.
        let mut cur = entry(self.stack.back());
        while let Some(n) = cur {
            if self.is_lir_node(n) && !pins.pinned(n) {
                return Some(n);
            }
            cur = self.links.prev(S, n);
        }
        None
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let f = frame as usize;
        if self.lir[f] {
            // Only when every resident HIR was pinned.
            self.links.remove(S, &mut self.stack, frame);
            self.lir[f] = false;
            self.lir_count -= 1;
            self.prune();
        } else {
            self.links.remove(QL, &mut self.q, frame);
            if self.in_s[f] {
                if why == Removal::Evicted || (self.accusim && why == Removal::UnusedPrefetch) {
                    // Case 3: the evicted HIR block stays in S as a non-resident entry.
                    let g = self.nonresident.add(key);
                    self.ensure_ghost_nodes();
                    let n = self.ghost_node(g);
                    self.replace_in_s(frame, n);
                } else {
                    self.unlink_s(frame);
                }
            }
        }
        self.in_s[f] = false;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(S, &self.stack)?;
        self.links.check(H, &self.hir_in_s)?;
        self.links.check(QL, &self.q)?;
        self.nonresident.check()?;
        let lir = self.lir.iter().filter(|&&x| x).count();
        if lir != self.lir_count || lir > self.llirs {
            return Err(format!("LIRS: {lir} LIR frames, count {}, Llirs {}", self.lir_count, self.llirs));
        }
        if lir + self.q.len() != resident {
            return Err(format!("LIRS: {lir} LIR + {} in Q, cache {resident}", self.q.len()));
        }
        if self.stack.len() > self.stack_limit && (!self.libcachesim || !self.nonresident.is_empty()) {
            return Err(format!("LIRS: S holds {} entries, bound {}", self.stack.len(), self.stack_limit));
        }
        if self.hir_in_s.len() + lir != self.stack.len() {
            return Err(format!(
                "LIRS: {} HIR + {lir} LIR entries but S holds {}",
                self.hir_in_s.len(),
                self.stack.len()
            ));
        }
        let mut ghosts = 0;
        let mut hir_order = self.links.iter(&self.hir_in_s);
        for n in self.links.iter(&self.stack) {
            if (n as usize) < self.capacity {
                if !self.in_s[n as usize] {
                    return Err(format!("LIRS: frame {n} in S not marked"));
                }
            } else {
                ghosts += 1;
            }
            if !self.is_lir_node(n) && hir_order.next() != Some(n) {
                return Err(format!("LIRS: HIR order disagrees with S at node {n}"));
            }
        }
        if ghosts != self.nonresident.len() {
            return Err(format!("LIRS: {ghosts} non-resident entries in S, {} indexed", self.nonresident.len()));
        }
        for f in self.links.iter(&self.q) {
            if self.lir[f as usize] {
                return Err(format!("LIRS: LIR frame {f} in Q"));
            }
        }
        // AccuSim's warm-up leaves blocks read ahead and demanded as HIR entries below the first
        // LIR blocks; like its lirs.c, bufsim prunes them when the bottom LIR block leaves.
        let pruned_lazily = self.libcachesim || self.accusim;
        if lir > 0 && !pruned_lazily && !entry(self.stack.back()).is_some_and(|b| self.is_lir_node(b)) {
            return Err("LIRS: the bottom of S is not LIR".into());
        }
        Ok(())
    }
}

impl PolicyDef for Lirs {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lirs",
        aliases: &[],
        paper: "Jiang, Zhang, LIRS: an efficient low inter-reference recency set replacement policy, SIGMETRICS 2002 §3; prefetching paper §4",
        summary: "keeps blocks with low inter-reference recency (LIR); evicts resident HIR blocks from Q, remembering them in the stack S",
        params: &[
            ParamInfo { name: "hir", default: "1%", doc: "Lhirs: frames for resident HIR blocks (share of the cache, rounded down, or a size)", range: Range::Cache(Limit::Below) },
            ParamInfo { name: "hir-min", default: "2", doc: "smallest Lhirs in blocks (lirs.c's LOWEST_HG_NUM)", range: Range::Cache(Limit::Below) },
            ParamInfo { name: "stack", default: "2500x", doc: "most entries of S (share of the cache or a size, at least the cache); past it the HIR entry nearest the bottom leaves S (lirs.c's MAX_S_LEN)", range: Range::Cache(Limit::AtLeast) },
            ParamInfo { name: "variant", default: "paper", doc: "paper | libcachesim (libCacheSim's LIRS.c rules; with hir-min=1,stack=2x its miss counts) | accusim (AccuSim's lirs.c rules for the warm-up and blocks read ahead)", range: Range::Choice(&["paper", "libcachesim", "accusim"]) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let lir_room = "at least one frame must hold LIR blocks";
        let hir = blocks_floor_within(args, "lirs", "hir", env, lir_room)?;
        let hir_min = blocks_floor_within(args, "lirs", "hir-min", env, lir_room)?;
        let lhirs = hir.max(hir_min);
        let stack = blocks_floor_within(args, "lirs", "stack", env, "S holds every resident block")?;
        let variant = args.choice("variant", &["paper", "libcachesim", "accusim"])?;
        Ok(Lirs::new(env.capacity, lhirs, stack, variant == "libcachesim").with_accusim(variant == "accusim"))
    }
}
