//! Linux multi-generational LRU for file pages (Documentation/mm/multigen_lru.rst, "Generations",
//! "Tiers", "PID controller"; mm/vmscan.c, mm/workingset.c of Linux 6.8–6.13, 6.1–6.7 as a variant).
//! Deviation: every demand access is a file-descriptor access; see docs/policies/mglru.md.
//!
//! Generations are numbered min_seq..=max_seq (2 to 4 of them); a page's generation only changes
//! when eviction protects it. A block trace has no page tables, so no page is ever found accessed
//! by the aging walk: the aging only opens a new (empty) youngest generation, and pages move
//! forward only by tier protection. An access through a file descriptor (folio_inc_refs) sets
//! PG_referenced, then PG_workingset, then counts up to 3 in the LRU_REFS bits; a page accessed N
//! times is in tier order_base_2(N). Eviction scans the oldest generation from its tail; a page
//! whose tier is above the PID controller's tier index moves to the tail of the next generation
//! with its counts cleared. The controller compares each tier's refaulted/(evicted+protected)
//! with tier 0's (gains 1 for tier 0, 2 for the others, no verdict below 64 refaults) and keeps
//! a running average halved each time min_seq advances. Refaults are recognised from shadow
//! entries holding the min_seq and counts at eviction; a shadow only counts while min_seq has not
//! moved on. Read-ahead (prefetching paper §4) enters as a cold page with no counts; its first
//! demand access is a first access; evicted unused it leaves no shadow.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

const MIN_NR_GENS: u64 = 2;
const MAX_NR_GENS: u64 = 4;
const MAX_NR_TIERS: usize = 4;
/// The LRU_REFS bits count accesses beyond PG_referenced and PG_workingset: MAX_NR_TIERS - 2 bits.
const LRU_REFS_MAX: u8 = (1 << (MAX_NR_TIERS - 2)) - 1;
/// Below this many refaults a tier's rate is too noisy to act on (MIN_LRU_BATCH = BITS_PER_LONG).
const MIN_LRU_BATCH: u64 = 64;

const REFERENCED: u8 = 1;
const WORKINGSET: u8 = 2;

/// Which kernel's rules for file pages. The "fix underprotected page cache" change (6.8) differs
/// from 6.1 in three places: where cold pages enter, saturated pages, and refaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// 6.8–6.13: cold pages enter the second-oldest generation while it is still inactive (more
    /// than MIN_NR_GENS generations), else the oldest; a page whose counts saturated is protected
    /// whatever the controller says; a refault of a page with refs >= 3 restores saturated counts.
    V6_8,
    /// 6.1–6.7: cold pages enter the oldest generation; only the controller protects; a refault
    /// of a saturated page restores PG_workingset only.
    V6_1,
}

/// When eviction first opens a new generation (should_run_aging).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aging {
    /// 6.1–6.13: at MIN_NR_GENS generations, or at MIN_NR_GENS + 1 when the youngest holds more
    /// than 1/MIN_NR_GENS of the pages or the oldest less than 1/(MIN_NR_GENS + 2).
    Spread,
    /// Only when eviction would stall: MIN_NR_GENS generations left.
    MinGens,
}

/// A shadow entry: what workingset eviction packs into the page cache slot.
#[derive(Clone, Copy, Default)]
struct Shadow {
    min_seq: u64,
    /// max(refs - 1, 0) in LRU_REFS_WIDTH bits.
    token: u8,
    workingset: bool,
}

/// The PID controller's position for one tier.
#[derive(Clone, Copy)]
struct CtrlPos {
    refaulted: u64,
    total: u64,
    gain: u64,
}

pub struct Mglru {
    links: Links,
    /// Indexed by seq % MAX_NR_GENS; front = head (added last), back = tail (scanned first).
    gens: [List; MAX_NR_GENS as usize],
    seq_of: FrameVec<u64>,
    flags: FrameVec<u8>,
    refs: FrameVec<u8>,
    keys: FrameVec<u64>,
    min_seq: u64,
    max_seq: u64,
    // PID controller, one history slot (NR_HIST_GENS = 1 without CONFIG_LRU_GEN_STATS).
    avg_refaulted: [u64; MAX_NR_TIERS],
    avg_total: [u64; MAX_NR_TIERS],
    refaulted: [u64; MAX_NR_TIERS],
    evicted: [u64; MAX_NR_TIERS],
    protected: [u64; MAX_NR_TIERS - 1],
    shadows: Ghosts<Shadow>,
    shadow_fifo: GhostList,
    shadow_cap: usize,
    /// Set by `prepare_insert` when a refault restores counts: (key, flags, LRU_REFS).
    refault_restore: Option<(u64, u8, u8)>,
    kernel: Kernel,
    aging: Aging,
    n_aging: u64,
    n_protected: u64,
    n_refaults: u64,
}

/// order_base_2(refs + 1): refs = accesses beyond the first, so N accesses give tier ⌈log2 N⌉.
#[inline]
fn tier_of(refs: u8) -> usize {
    let n = refs as u32 + 1;
    (u32::BITS - (n - 1).leading_zeros()) as usize
}

impl Mglru {
    pub fn new(capacity: usize, shadows: usize, kernel: Kernel, aging: Aging) -> Self {
        Mglru {
            links: Links::with_nodes(capacity),
            gens: [List::new(), List::new(), List::new(), List::new()],
            seq_of: FrameVec::filled(0, capacity),
            flags: FrameVec::filled(0, capacity),
            refs: FrameVec::filled(0, capacity),
            keys: FrameVec::filled(0, capacity),
            // lru_gen_init_lruvec: max_seq = MIN_NR_GENS + 1, min_seq = 0.
            min_seq: 0,
            max_seq: MIN_NR_GENS + 1,
            avg_refaulted: [0; MAX_NR_TIERS],
            avg_total: [0; MAX_NR_TIERS],
            refaulted: [0; MAX_NR_TIERS],
            evicted: [0; MAX_NR_TIERS],
            protected: [0; MAX_NR_TIERS - 1],
            shadows: Ghosts::with_capacity(shadows.max(1)),
            shadow_fifo: GhostList::new(),
            shadow_cap: shadows,
            refault_restore: None,
            kernel,
            aging,
            n_aging: 0,
            n_protected: 0,
            n_refaults: 0,
        }
    }

    #[inline]
    fn gen_len(&self, seq: u64) -> usize {
        self.gens[(seq % MAX_NR_GENS) as usize].len()
    }

    /// folio_lru_refs: accesses beyond PG_referenced (0..=4).
    #[inline]
    fn lru_refs(&self, f: Frame) -> u8 {
        let i = f as usize;
        self.refs[i] + u8::from(self.flags[i] & WORKINGSET != 0)
    }

    /// The tier of a resident frame (tests and dumps).
    pub fn tier(&self, f: Frame) -> usize {
        tier_of(self.lru_refs(f))
    }

    /// folio_inc_refs: one access through a file descriptor.
    #[inline]
    fn inc_refs(&mut self, f: Frame) {
        let i = f as usize;
        if self.flags[i] & REFERENCED == 0 {
            self.flags[i] |= REFERENCED;
        } else if self.flags[i] & WORKINGSET == 0 {
            self.flags[i] |= WORKINGSET;
        } else if self.refs[i] < LRU_REFS_MAX {
            self.refs[i] += 1;
        }
    }

    fn ctrl_pos(&self, tier: usize, gain: u64) -> CtrlPos {
        let mut total = self.avg_total[tier] + self.evicted[tier];
        if tier > 0 {
            total += self.protected[tier - 1];
        }
        CtrlPos { refaulted: self.avg_refaulted[tier] + self.refaulted[tier], total, gain }
    }

    /// get_tier_idx: tiers above the returned one are protected. Tier 0 is the set point with
    /// gain 1; the others get gain 2 as a margin against noise.
    pub fn tier_idx(&self) -> usize {
        let sp = self.ctrl_pos(0, 1);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.ctrl_pos(tier, 2);
            // positive_ctrl_err: few refaults, or a refault rate no higher than the set point's.
            let lower = pv.refaulted < MIN_LRU_BATCH
                || pv.refaulted as u128 * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128
                    <= (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128;
            if !lower {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    fn should_run_aging(&self) -> bool {
        if self.min_seq + MIN_NR_GENS > self.max_seq {
            return true;
        }
        match self.aging {
            Aging::MinGens => false,
            Aging::Spread => {
                if self.min_seq + MIN_NR_GENS < self.max_seq {
                    return false;
                }
                let total: usize = self.gens.iter().map(|l| l.len()).sum();
                let young = self.gen_len(self.max_seq);
                let old = self.gen_len(self.max_seq - MIN_NR_GENS);
                young * MIN_NR_GENS as usize > total || old * (MIN_NR_GENS as usize + 2) < total
            }
        }
    }

    /// try_to_inc_min_seq: skip empty oldest generations, never below MIN_NR_GENS of them; the
    /// controller's counts then fold into its running average (reset_ctrl_pos with carryover).
    fn try_to_inc_min_seq(&mut self) -> bool {
        let start = self.min_seq;
        while self.min_seq + MIN_NR_GENS <= self.max_seq && self.gen_len(self.min_seq) == 0 {
            self.min_seq += 1;
        }
        if self.min_seq == start {
            return false;
        }
        for t in 0..MAX_NR_TIERS {
            self.avg_refaulted[t] = (self.avg_refaulted[t] + self.refaulted[t]) / 2;
            let mut sum = self.avg_total[t] + self.evicted[t];
            if t > 0 {
                sum += self.protected[t - 1];
                self.protected[t - 1] = 0;
            }
            self.avg_total[t] = sum / 2;
            self.refaulted[t] = 0;
            self.evicted[t] = 0;
        }
        true
    }

    /// folio_inc_gen from the oldest generation: to the tail of the next one, counts cleared.
    fn protect(&mut self, f: Frame, tier: usize) {
        let i = f as usize;
        let old = self.seq_of[i];
        let new = old + 1;
        let (a, b) = ((old % MAX_NR_GENS) as usize, (new % MAX_NR_GENS) as usize);
        self.links.remove(&mut self.gens[a], f);
        self.links.push_back(&mut self.gens[b], f);
        self.seq_of[i] = new;
        self.flags[i] = 0;
        self.refs[i] = 0;
        self.protected[tier - 1] += 1;
        self.n_protected += 1;
    }

    /// `min..max | seq: head..tail | ...`, each page as key, `*` PG_referenced, `w`
    /// PG_workingset, `+n` LRU_REFS count (tests and dumps).
    pub fn dump(&self) -> String {
        let mut s = format!("{}..{}", self.min_seq, self.max_seq);
        for seq in self.min_seq..=self.max_seq {
            let l = &self.gens[(seq % MAX_NR_GENS) as usize];
            let pages: Vec<String> = self
                .links
                .iter(l)
                .map(|f| {
                    let i = f as usize;
                    let mut p = self.keys[i].to_string();
                    if self.flags[i] & REFERENCED != 0 {
                        p.push('*');
                    }
                    if self.flags[i] & WORKINGSET != 0 {
                        p.push('w');
                    }
                    if self.refs[i] > 0 {
                        p.push_str(&format!("+{}", self.refs[i]));
                    }
                    p
                })
                .collect();
            s.push_str(&format!(" | {seq}: {}", pages.join(" ")));
        }
        s
    }
}

impl Policy for Mglru {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.refault_restore = None;
        // workingset_refault runs for any page added to the page cache over a shadow, demand
        // or read-ahead; only demand-evicted pages leave shadows.
        let Some(n) = self.shadows.find(a.key) else {
            return;
        };
        let (_, sh) = self.shadows.remove(&mut self.shadow_fifo, n);
        // lru_gen_test_recent: the shadow counts only while min_seq is where it was.
        if sh.min_seq != self.min_seq {
            return;
        }
        let refs = sh.token + u8::from(sh.workingset);
        self.refaulted[tier_of(refs)] += 1;
        self.n_refaults += 1;
        // A page read often enough would have been protected: its counts come back.
        match self.kernel {
            Kernel::V6_8 if refs >= LRU_REFS_MAX => self.refault_restore = Some((a.key, WORKINGSET, LRU_REFS_MAX)),
            Kernel::V6_1 if refs == LRU_REFS_MAX + 1 => self.refault_restore = Some((a.key, WORKINGSET, 0)),
            _ => {}
        }
    }

    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let i = frame as usize;
        self.keys[i] = a.key;
        (self.flags[i], self.refs[i]) = match self.refault_restore.take() {
            Some((k, flags, refs)) if k == a.key => (flags, refs),
            _ => (0, 0),
        };
        let seq = match self.kernel {
            Kernel::V6_8 if self.min_seq + MIN_NR_GENS < self.max_seq => self.min_seq + 1,
            _ => self.min_seq,
        };
        self.seq_of[i] = seq;
        let l = (seq % MAX_NR_GENS) as usize;
        self.links.push_front(&mut self.gens[l], frame);
        // The read that missed marks the page accessed (filemap_read); read-ahead does not.
        if origin == Origin::Demand {
            self.inc_refs(frame);
        }
    }

    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.inc_refs(frame);
    }

    #[inline]
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        self.inc_refs(frame);
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // The kernel computes the tier index once per scan batch; here once per eviction.
        let tier_idx = self.tier_idx();
        loop {
            if self.should_run_aging() && self.max_seq - self.min_seq + 1 < MAX_NR_GENS {
                self.max_seq += 1;
                self.n_aging += 1;
            }
            let mut cur = self.gens[(self.min_seq % MAX_NR_GENS) as usize].back();
            while let Some(f) = cur {
                cur = self.links.prev(f);
                if pins.pinned(f) {
                    continue;
                }
                let refs = self.lru_refs(f);
                let tier = tier_of(refs);
                if tier > tier_idx || (self.kernel == Kernel::V6_8 && refs == LRU_REFS_MAX + 1) {
                    self.protect(f, tier);
                    continue;
                }
                return Some(f);
            }
            if self.gen_len(self.min_seq) > 0 || !self.try_to_inc_min_seq() {
                // Only pinned pages left in the oldest generation (or it cannot advance): take
                // the oldest unpinned page of a younger generation, whatever its tier.
                for seq in self.min_seq..=self.max_seq {
                    let l = self.gens[(seq % MAX_NR_GENS) as usize];
                    let mut cur = l.back();
                    while let Some(f) = cur {
                        if !pins.pinned(f) {
                            return Some(f);
                        }
                        cur = self.links.prev(f);
                    }
                }
                return None;
            }
        }
    }

    /// Truncation clears the shadow entries of its range, as on the classic lists.
    fn forget(&mut self, key: u64) {
        if let Some(n) = self.shadows.find(key) {
            self.shadows.remove(&mut self.shadow_fifo, n);
        }
    }

    #[inline]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let i = frame as usize;
        let seq = self.seq_of[i];
        let refs = self.lru_refs(frame);
        self.links.remove(&mut self.gens[(seq % MAX_NR_GENS) as usize], frame);
        // The tiers' feedback counts what reclaim took, not what truncation removed.
        if why != Removal::Dropped {
            self.evicted[tier_of(refs)] += 1;
        }
        self.flags[i] = 0;
        self.refs[i] = 0;
        if !why.remembered() || self.shadow_cap == 0 {
            return;
        }
        if let Some(n) = self.shadows.find(key) {
            self.shadows.remove(&mut self.shadow_fifo, n);
        }
        if self.shadow_fifo.len() >= self.shadow_cap {
            self.shadows.pop_back(&mut self.shadow_fifo);
        }
        let sh =
            Shadow { min_seq: self.min_seq, token: refs.saturating_sub(1).min(LRU_REFS_MAX), workingset: refs != 0 };
        self.shadows.push_front(&mut self.shadow_fifo, key, sh);
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        let nr_gens = self.max_seq + 1 - self.min_seq;
        if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&nr_gens) {
            return Err(format!("mglru: {nr_gens} generations ({}..{})", self.min_seq, self.max_seq));
        }
        let mut n = 0;
        for (slot, l) in self.gens.iter().enumerate() {
            self.links.check(l)?;
            n += l.len();
            for f in self.links.iter(l) {
                let seq = self.seq_of[f as usize];
                if seq % MAX_NR_GENS != slot as u64 || seq < self.min_seq || seq > self.max_seq {
                    return Err(format!("mglru: frame {f} of generation {seq} in slot {slot}"));
                }
                if self.refs[f as usize] > LRU_REFS_MAX {
                    return Err(format!("mglru: frame {f} counts {} refs", self.refs[f as usize]));
                }
            }
        }
        if n != resident {
            return Err(format!("mglru: generations hold {n}, cache {resident}"));
        }
        if self.shadow_fifo.len() > self.shadow_cap {
            return Err(format!("mglru: {} shadows over the bound {}", self.shadow_fifo.len(), self.shadow_cap));
        }
        self.shadows.check(&[&self.shadow_fifo])
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("generations_created", self.n_aging as f64));
        out.push(("tier_protections", self.n_protected as f64));
        out.push(("counted_refaults", self.n_refaults as f64));
    }
}

impl PolicyDef for Mglru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "mglru",
        aliases: &["multigen-lru", "lru-gen"],
        paper: "Linux multi-gen LRU (Documentation/mm/multigen_lru.rst; mm/vmscan.c, mm/workingset.c of 6.8-6.13) for file pages read through file descriptors",
        summary: "2-4 generations, tiers by log2 of fd accesses, PID controller protects tiers that refault more than tier 0",
        params: &[
            ParamInfo {
                name: "kernel",
                default: "6.8",
                doc: "6.8 (6.8-6.13: cold pages to the second-oldest generation, saturated pages protected) or 6.1 (6.1-6.7: to the oldest)",
                range: Range::Choice(&["6.8", "6.1"]),
            },
            ParamInfo {
                name: "aging",
                default: "spread",
                doc: "when a generation is created: spread (should_run_aging of 6.1-6.13) or min-gens (only when 2 are left)",
                range: Range::Choice(&["spread", "min-gens"]),
            },
            ParamInfo {
                name: "shadows",
                default: "100%",
                doc: "shadow entries kept for refault detection, oldest dropped first (relative to the cache, or blocks)",
                range: Range::Share(0.0, 10.0),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };

    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let kernel = match args.choice("kernel", &["6.8", "6.1"])? {
            "6.1" => Kernel::V6_1,
            _ => Kernel::V6_8,
        };
        let aging = match args.choice("aging", &["spread", "min-gens"])? {
            "min-gens" => Aging::MinGens,
            _ => Aging::Spread,
        };
        let shadows = args.blocks("shadows", env)?;
        if shadows > u32::MAX as u64 / 2 {
            return Err(SpecError(format!("policy `mglru`: shadows={shadows} blocks is too many; give at most 1000%")));
        }
        Ok(Mglru::new(env.capacity, shadows as usize, kernel, aging))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn mglru(capacity: usize) -> Steps<Mglru> {
        Steps::new(Mglru::new(capacity, capacity, Kernel::V6_8, Aging::Spread), capacity)
    }

    #[test]
    fn tiers_are_log2_of_fd_accesses() {
        let mut s = mglru(4);
        let mut tiers = Vec::new();
        for _ in 0..6 {
            s.demand(7);
            tiers.push(s.policy().tier(0));
        }
        // N accesses: tier order_base_2(N); the LRU_REFS bits saturate at 3.
        assert_eq!(tiers, [0, 1, 2, 2, 3, 3]);
        assert_eq!(s.policy().dump(), "0..3 | 0:  | 1: 7*w+3 | 2:  | 3: ");
    }

    #[test]
    fn generations_step_by_step() {
        let mut s = mglru(4);
        // Four generations at start (0..3): cold pages enter the second-oldest, at its head.
        assert_eq!(s.run(&[1, 2, 3, 4, 1]), "MMMMH");
        assert_eq!(s.policy().dump(), "0..3 | 0:  | 1: 4* 3* 2* 1*w | 2:  | 3: ");
        // 5: no tier is protected (no refaults yet). Generation 0 is empty, so min_seq moves to
        // 1; with 3 generations the oldest holds all 4 pages (not below 1/4) and the youngest
        // none (not above 1/2): no aging. The tail 1 goes although it is in tier 1.
        assert_eq!(s.demand(5), 'M');
        // With 3 generations the second-oldest is active, so 5 enters the oldest.
        assert_eq!(s.policy().dump(), "1..3 | 1: 5* 4* 3* 2* | 2:  | 3: ");
        assert_eq!(s.policy().evicted, [0, 1, 0, 0]);
        // 1 refaults while min_seq is still 1: counted in tier 1 (it had PG_workingset). Below
        // 3 refs nothing is restored: it comes back cold, and its read sets PG_referenced.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(s.policy().refaulted, [0, 1, 0, 0]);
        assert_eq!(s.policy().dump(), "1..3 | 1: 1* 5* 4* 3* | 2:  | 3: ");
        assert_eq!(
            s.policy().metrics_vec(),
            [("generations_created", 0.0), ("tier_protections", 0.0), ("counted_refaults", 1.0)]
        );
    }

    #[test]
    fn controller_protection_and_aging_step_by_step() {
        let mut s = mglru(4);
        assert_eq!(s.run(&[1, 2, 3, 4, 5]), "MMMMM");
        assert_eq!(s.policy().dump(), "1..3 | 1: 5* 4* 3* 2* | 2:  | 3: ");
        // Tier 1 has refaulted at a higher rate than tier 0 (64/64 against 0/1001, gain 2 for
        // tier 1): the controller protects tiers above 0.
        {
            let p = &mut s.cache.policy;
            p.avg_refaulted = [0, 64, 0, 0];
            p.avg_total = [1000, 64, 0, 0];
            assert_eq!(p.tier_idx(), 0);
        }
        // 3 and 4 reach tier 1 (PG_workingset). 6: the tail 2 is tier 0 and goes.
        assert_eq!(s.run(&[3, 4, 6]), "HHM");
        assert_eq!(s.policy().dump(), "1..3 | 1: 6* 5* 4*w 3*w | 2:  | 3: ");
        // 7: 3 then 4 are protected: to the tail of generation 2, counts cleared; 5 goes.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "1..3 | 1: 7* 6* | 2: 3 4 | 3: ");
        assert_eq!(s.policy().protected, [2, 0, 0]);
        // 8, 9, 10: the oldest holds 2 of 4, not below 1/4: no aging; 6, 7, 8 go in turn.
        assert_eq!(s.run(&[8, 9, 10]), "MMM");
        assert_eq!(s.policy().dump(), "1..3 | 1: 10* 9* | 2: 3 4 | 3: ");
        // 9 reaches tier 1; 11 protects it (behind 4) and evicts 10.
        assert_eq!(s.run(&[9, 11]), "HM");
        assert_eq!(s.policy().dump(), "1..3 | 1: 11* | 2: 3 4 9 | 3: ");
        // 11 reaches tier 1; 12 protects it and generation 1 is empty: min_seq moves to 2 and
        // the controller halves its averages; 2 generations left, so the aging opens 4. The
        // tail of generation 2 is 11, protected last, now tier 0: it goes.
        assert_eq!(s.run(&[11, 12]), "HM");
        assert_eq!(s.policy().dump(), "2..4 | 2: 12* 3 4 9 | 3:  | 4: ");
        assert_eq!(s.policy().metrics_vec()[..2], [("generations_created", 1.0), ("tier_protections", 4.0)]);
        // Tier 0 evicted 1, 2, 5, 6, 7, 8, 10; tier 1 was protected 4 times.
        assert_eq!(s.policy().avg_total, [(1000 + 7) / 2, (64 + 4) / 2, 0, 0]);
        assert_eq!(s.policy().avg_refaulted, [0, 32, 0, 0]);
        assert_eq!((s.policy().protected, s.policy().evicted), ([0, 0, 0], [1, 0, 0, 0]));
    }

    #[test]
    fn saturated_pages_are_protected_since_6_8_only() {
        let mut s = mglru(2);
        assert_eq!(s.run(&[1, 1, 1, 1, 1, 2]), "MHHHHM");
        assert_eq!(s.policy().dump(), "0..3 | 0:  | 1: 2* 1*w+3 | 2:  | 3: ");
        // No tier is protected by the controller, but 1's counts are saturated.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().dump(), "1..3 | 1: 3* | 2: 1 | 3: ");
        assert_eq!(s.policy().protected, [0, 0, 1]);
        let mut s = Steps::new(Mglru::new(2, 2, Kernel::V6_1, Aging::Spread), 2);
        assert_eq!(s.run(&[1, 1, 1, 1, 1, 2, 3]), "MHHHHMM");
        // 6.1: cold pages enter the oldest generation and 1 is evicted.
        assert_eq!(s.policy().dump(), "0..3 | 0: 3* 2* | 1:  | 2:  | 3: ");
    }

    #[test]
    fn a_refault_after_three_refs_restores_saturated_counts() {
        let mut s = mglru(2);
        assert_eq!(s.run(&[1, 1, 1, 1, 2, 3]), "MHHHMM");
        assert_eq!(s.policy().evicted, [0, 0, 1, 0]);
        // 1 had PG_workingset and 2 LRU_REFS (refs 3, tier 2); refaulted within min_seq 1.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(s.policy().refaulted, [0, 0, 1, 0]);
        assert_eq!(s.policy().dump(), "1..3 | 1: 1*w+3 3* | 2:  | 3: ");
        assert_eq!(s.policy().tier(s.cache.frame_of(1).unwrap()), 3);
    }

    #[test]
    fn prefetched_pages_leave_no_shadow_unused() {
        let mut s = mglru(2);
        assert_eq!(s.run(&[1, 2]), "MM");
        s.prefetch(3);
        // 1 went (demanded: leaves a shadow); 3 entered with no counts.
        assert_eq!(s.policy().dump(), "1..3 | 1: 3 2* | 2:  | 3: ");
        assert_eq!(s.policy().shadow_fifo.len(), 1);
        // 4 evicts 2 (the tail); 5 evicts the unused prefetched 3: no shadow for it.
        assert_eq!(s.run(&[4, 5]), "MM");
        assert_eq!(s.policy().shadow_fifo.len(), 2);
        assert!(s.policy().shadows.find(3).is_none());
        // A prefetched page's first demand access is a first access (tier 0, PG_referenced).
        s.prefetch(6);
        assert_eq!(s.demand(6), 'H');
        assert_eq!(s.policy().dump(), "1..3 | 1: 6* 5* | 2:  | 3: ");
    }

    #[test]
    fn stale_shadows_do_not_count_and_the_bound_holds() {
        let mut p = Mglru::new(4, 2, Kernel::V6_1, Aging::MinGens);
        let f = |p: &mut Mglru, key: u64| {
            let a = Access { key, ..Access::default() };
            p.prepare_insert(&a, Origin::Demand);
        };
        // A shadow from an older min_seq is dropped without counting a refault.
        p.shadows.push_front(&mut p.shadow_fifo, 9, Shadow { min_seq: 7, token: 1, workingset: true });
        f(&mut p, 9);
        assert_eq!(p.refaulted, [0; 4]);
        assert!(p.shadows.find(9).is_none());
        assert_eq!(tier_of(0), 0);
        assert_eq!(tier_of(4), 3);
        // The FIFO of shadows keeps the last `shadows` evictions only.
        let mut s = Steps::new(Mglru::new(2, 2, Kernel::V6_8, Aging::Spread), 2);
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), "MMMMMMMMMM");
        let p = s.policy();
        assert_eq!(p.shadow_fifo.len(), 2);
        assert!(p.shadows.find(7).is_some() && p.shadows.find(8).is_some() && p.shadows.find(6).is_none());
    }

    #[test]
    fn random_traces_keep_invariants_and_count_every_access() {
        use bufsim_config::rng::Rng;
        for (kernel, aging) in
            [(Kernel::V6_8, Aging::Spread), (Kernel::V6_1, Aging::MinGens), (Kernel::V6_1, Aging::Spread)]
        {
            let mut s = Steps::new(Mglru::new(16, 16, kernel, aging), 16);
            let mut rng = Rng::new(3);
            let (mut hits, mut misses) = (0, 0);
            for i in 0..20_000u64 {
                // A skewed mix: a hot set of 12, a warm set of 40, a scan.
                let key = match rng.below(10) {
                    0..=5 => rng.below(12),
                    6..=8 => 100 + rng.below(40),
                    _ => 1000 + i,
                };
                if rng.below(50) == 0 && !s.cache.contains(key + 1_000_000) {
                    s.prefetch(key + 1_000_000);
                }
                match s.demand(key) {
                    'H' => hits += 1,
                    _ => misses += 1,
                }
            }
            assert_eq!(hits + misses, 20_000);
            assert!(s.cache.len() <= 16);
            // The hot set is protected by tiers: far better than a scan-polluted FIFO would do.
            assert!(hits > 8_000, "{kernel:?} {aging:?}: {hits} hits");
        }
    }

    impl Mglru {
        fn metrics_vec(&self) -> Vec<(&'static str, f64)> {
            let mut v = Vec::new();
            self.metrics(&mut v);
            v
        }
    }
}
