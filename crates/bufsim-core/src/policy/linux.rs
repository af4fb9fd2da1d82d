//! The Linux 6.x page cache without the multi-gen LRU (CONFIG_LRU_GEN off or disabled), learned
//! from mm/swap.c (folio_mark_accessed), mm/vmscan.c (shrink_active_list, folio_check_references,
//! inactive_is_low, prepare_scan_control) and mm/workingset.c (workingset_eviction,
//! workingset_refault, workingset_test_recent) of Linux 6.18, for file pages read through file
//! descriptors on a machine without swap.
//! Deviations: reclaim is one page at a time (the kernel reclaims in batches of 32 and more); after
//! a refault activation one active page is deactivated per activation by default, and the
//! inactive list is never left low (the kernel scans `list size >> priority` pages of both lists
//! and lets the active list stay the larger: `deactivate=priority` follows its priority loop,
//! `deactivate=proportional` an earlier approximation); read-ahead pages evicted unused leave
//! shadows, as in the kernel (unlike the prefetching paper's rule for the other policies); a page
//! is one entry of the lists, where the kernel's read-ahead makes large folios (up to 512 pages)
//! that are marked and evicted whole; there is no dirty state, so reclaim never meets a dirty page
//! (the kernel activates those).
//!
//! - A new page goes to the head of the inactive list, unless its shadow entry says it refaulted
//!   within the workingset: eviction stamps the shadow with the node's non-resident age (a counter
//!   of evictions and activations); a refault whose distance (age now - stamp) is at most the
//!   active list's size is inserted active (workingset_test_recent: file pages on a machine
//!   without swap compare with the active file list alone).
//! - folio_mark_accessed on a read: a page without PG_referenced gets it; an inactive page with it
//!   is activated (head of the active list, bit cleared); an active page keeps it. Reading the
//!   page where the previous read ended does not mark it again (filemap_read's pos_same_folio).
//!   A demand fault's page is marked by the read that caused it; read-ahead pages are not.
//! - A buffered write neither marks nor moves a page: the write path takes the folio with
//!   FGP_WRITEBEGIN, which has no FGP_ACCESSED, and generic_perform_write does not call
//!   folio_mark_accessed. A page written (even again and again) stays unreferenced on the
//!   inactive list until a read marks it. Checked on this machine's 6.18 kernel: a 16 MiB file
//!   written three times stayed on the cgroup's inactive_file; the first read after that left it
//!   there, the second made it active_file. `writes=mark` gives the rule of kernels up to 3.15,
//!   whose generic_perform_write called mark_page_accessed after copying.
//! - Reclaim takes the inactive tail whatever its bit (an unmapped, clean file page is reclaimed
//!   even when referenced). Before it, shrink_active_list moves active tail pages to the inactive
//!   head while the inactive list is low (inactive x ratio < active, ratio = isqrt(10 x GiB) of
//!   the file LRU, 1 below 1 GiB), or after refault activations; PG_referenced stays set, so one
//!   more access re-activates a demoted page.

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

/// Pages in a GiB of 4 KiB pages (inactive_is_low counts the file LRU in GiB).
const PAGES_PER_GIB: usize = 1 << 18;
/// Pages a memory cgroup's reclaim frees at a time (SWAP_CLUSTER_MAX).
const RECLAIM_BATCH: u32 = 32;
/// The first scan priority of a reclaim (DEF_PRIORITY): each list is scanned `size >> priority`
/// pages at a time, the priority falling by one until enough pages are reclaimed.
const DEF_PRIORITY: u32 = 12;

/// How reclaim moves active pages to the inactive list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Deactivate {
    /// One active page per refault activation, and enough to keep the inactive list from being
    /// low before every eviction.
    PerRefault,
    /// active / inactive pages per page reclaimed, for a batch that follows refault activations,
    /// and enough to keep the inactive list from being low.
    Proportional,
    /// The kernel's priority loop: see [`Linux::plan_reclaim`].
    Priority,
}

/// One priority level of a planned reclaim: reclaim `reclaim` inactive tail pages, then move
/// `deactivate` active tail pages to the inactive head.
#[derive(Clone, Copy, Default, Debug)]
struct ReclaimStep {
    reclaim: u32,
    deactivate: u32,
}

pub struct Linux {
    links: Links,
    /// Front = head (most recently added).
    active: List,
    inactive: List,
    // Per frame, taking memory only as frames are used: a cache far larger than the trace (or
    // than the machine) costs nothing up front.
    is_active: FrameVec<bool>,
    referenced: FrameVec<bool>,
    keys: FrameVec<u64>,
    /// Shadow entries: the non-resident age at eviction, oldest dropped first.
    shadows: Ghosts<u64>,
    shadow_fifo: GhostList,
    shadow_cap: usize,
    /// lruvec->nonresident_age: evictions plus activations.
    nonresident_age: u64,
    /// Set by `prepare_insert`: the incoming page refaulted within the workingset.
    refault_active: bool,
    /// Refault activations since the last reclaim (WORKINGSET_ACTIVATE_FILE moved).
    pending_refaults: usize,
    /// The key of the previous demand access (pos_same_folio).
    last_key: Option<u64>,
    /// Writes mark pages as reads do (`writes=mark`, kernels up to 3.15).
    writes_mark: bool,
    /// `deactivate=`: how reclaim moves active pages to the inactive list.
    deactivate: Deactivate,
    /// `deactivate=priority`: the steps of the reclaim under way, and the next one.
    plan: [ReclaimStep; DEF_PRIORITY as usize + 1],
    plan_len: usize,
    plan_pos: usize,
    /// Evictions left in the current reclaim batch, whether it deactivates, and the fraction
    /// of a deactivation carried to the next eviction.
    batch_left: u32,
    batch_deactivates: bool,
    deactivation_credit: f64,
    n_refaults: u64,
    n_refault_activations: u64,
    n_activations: u64,
    n_deactivations: u64,
}

impl Linux {
    pub fn new(capacity: usize, shadows: usize) -> Self {
        Linux {
            links: Links::with_nodes(capacity),
            active: List::new(),
            inactive: List::new(),
            is_active: FrameVec::filled(false, capacity),
            referenced: FrameVec::filled(false, capacity),
            keys: FrameVec::filled(0, capacity),
            shadows: Ghosts::with_capacity(shadows.max(1)),
            shadow_fifo: GhostList::new(),
            shadow_cap: shadows,
            nonresident_age: 0,
            refault_active: false,
            pending_refaults: 0,
            last_key: None,
            writes_mark: false,
            deactivate: Deactivate::PerRefault,
            plan: [ReclaimStep::default(); DEF_PRIORITY as usize + 1],
            plan_len: 0,
            plan_pos: 0,
            batch_left: 0,
            batch_deactivates: false,
            deactivation_credit: 0.0,
            n_refaults: 0,
            n_refault_activations: 0,
            n_activations: 0,
            n_deactivations: 0,
        }
    }

    /// Writes mark pages as reads do, as generic_perform_write did up to Linux 3.15
    /// (mark_page_accessed after the copy).
    pub fn with_writes_marking(mut self) -> Self {
        self.writes_mark = true;
        self
    }

    /// Deactivation as get_scan_count and shrink_lruvec do it: a reclaim that follows refault
    /// activations scans the active list too, `size >> priority` pages of each list, so it
    /// deactivates about active / inactive pages for each page it reclaims, for the whole batch.
    pub fn with_proportional_deactivation(mut self) -> Self {
        self.deactivate = Deactivate::Proportional;
        self
    }

    /// Deactivation and reclaim as a memory cgroup's reclaim does them ([`Linux::plan_reclaim`]):
    /// a low inactive list only lets reclaim scan the active list, it does not rebalance the two.
    pub fn with_priority_reclaim(mut self) -> Self {
        self.deactivate = Deactivate::Priority;
        self
    }

    /// Whether access `a` calls folio_mark_accessed.
    #[inline]
    fn marks(&self, a: &Access) -> bool {
        !a.write || self.writes_mark
    }

    /// `A: head..tail | I: head..tail`, `*` = PG_referenced (tests and dumps).
    pub fn dump(&self) -> String {
        let l = |list: &List| {
            self.links
                .iter(list)
                .map(|f| format!("{}{}", self.keys[f as usize], if self.referenced[f as usize] { "*" } else { "" }))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("A: {} | I: {}", l(&self.active), l(&self.inactive))
    }

    /// inactive_is_low for the file LRU.
    fn inactive_is_low(&self) -> bool {
        inactive_is_low(self.inactive.len(), self.active.len())
    }

    /// A reclaim of a memory cgroup (try_to_free_mem_cgroup_pages for SWAP_CLUSTER_MAX pages,
    /// no swap), planned on the lists' sizes when it starts. do_try_to_free_pages lowers the
    /// priority from DEF_PRIORITY until 32 pages are reclaimed; at each priority
    /// prepare_scan_control lets it scan the active list when refault activations happened since
    /// the last reclaim (snapshot_refaults) or the inactive list is low, and get_scan_count gives
    /// each list `size >> priority` pages to scan. shrink_lruvec takes them in chunks of 32, the
    /// inactive list's before the active list's, and stops after a chunk once the priority has
    /// reclaimed 32 (with no anonymous pages to balance against). Every inactive page scanned is
    /// reclaimed (clean, unmapped file pages, referenced or not); every active page scanned is
    /// deactivated. So the active list can stay larger than the inactive one: a low inactive list
    /// only adds active pages to the scan, in proportion to the active list's size.
    fn plan_reclaim(&mut self) {
        let refaulted = std::mem::take(&mut self.pending_refaults) > 0;
        let (mut inactive, mut active) = (self.inactive.len(), self.active.len());
        let mut reclaimed = 0;
        self.plan_len = 0;
        self.plan_pos = 0;
        for priority in (0..=DEF_PRIORITY).rev() {
            let may_deactivate = refaulted || inactive_is_low(inactive, active);
            let scan_inactive = (inactive >> priority) as u32;
            let scan_active = if may_deactivate { (active >> priority) as u32 } else { 0 };
            // A priority that reaches 32 does so in its first chunk (at most 32 of each list).
            let step = if scan_inactive >= RECLAIM_BATCH {
                ReclaimStep { reclaim: RECLAIM_BATCH, deactivate: scan_active.min(RECLAIM_BATCH) }
            } else {
                ReclaimStep { reclaim: scan_inactive, deactivate: scan_active }
            };
            self.plan[self.plan_len] = step;
            self.plan_len += 1;
            inactive = inactive - step.reclaim as usize + step.deactivate as usize;
            active -= step.deactivate as usize;
            reclaimed += step.reclaim;
            if reclaimed >= RECLAIM_BATCH {
                break;
            }
        }
    }

    /// Deactivations of the plan's steps that reclaim nothing more.
    fn run_deactivation_steps(&mut self) {
        while self.plan_pos < self.plan_len && self.plan[self.plan_pos].reclaim == 0 {
            for _ in 0..self.plan[self.plan_pos].deactivate {
                if !self.deactivate_tail() {
                    break;
                }
            }
            self.plan_pos += 1;
        }
    }

    /// shrink_active_list: the active tail to the inactive head, PG_referenced kept.
    fn deactivate_tail(&mut self) -> bool {
        let Some(t) = self.active.back() else { return false };
        self.links.remove(&mut self.active, t);
        self.links.push_front(&mut self.inactive, t);
        self.is_active[t as usize] = false;
        self.n_deactivations += 1;
        true
    }

    /// folio_mark_accessed.
    fn mark_accessed(&mut self, frame: Frame, key: u64) {
        if self.last_key.replace(key) == Some(key) {
            return;
        }
        let i = frame as usize;
        if !self.referenced[i] {
            self.referenced[i] = true;
        } else if !self.is_active[i] {
            self.links.remove(&mut self.inactive, frame);
            self.links.push_front(&mut self.active, frame);
            self.is_active[i] = true;
            self.referenced[i] = false;
            // workingset_activation ages the non-resident pages.
            self.nonresident_age += 1;
            self.n_activations += 1;
        }
    }
}

/// inactive_is_low for the file LRU: inactive x ratio < active, ratio = isqrt(10 x GiB) of the
/// two lists, 1 below 1 GiB.
fn inactive_is_low(inactive: usize, active: usize) -> bool {
    let gb = (inactive + active) / PAGES_PER_GIB;
    let ratio = if gb > 0 { (10 * gb).isqrt() } else { 1 };
    inactive * ratio < active
}

impl Policy for Linux {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.refault_active = false;
        let Some(n) = self.shadows.find(a.key) else { return };
        let (_, eviction) = self.shadows.remove(&mut self.shadow_fifo, n);
        self.n_refaults += 1;
        let distance = self.nonresident_age.wrapping_sub(eviction);
        if distance <= self.active.len() as u64 {
            self.refault_active = true;
        }
    }

    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let i = frame as usize;
        self.keys[i] = a.key;
        self.referenced[i] = false;
        if std::mem::take(&mut self.refault_active) {
            self.is_active[i] = true;
            self.links.push_front(&mut self.active, frame);
            self.nonresident_age += 1;
            self.pending_refaults += 1;
            self.n_refault_activations += 1;
        } else {
            self.is_active[i] = false;
            self.links.push_front(&mut self.inactive, frame);
        }
        if origin == Origin::Demand && self.marks(a) {
            self.mark_accessed(frame, a.key);
        }
    }

    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        if self.marks(a) {
            self.mark_accessed(frame, a.key);
        }
    }

    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        if self.marks(a) {
            self.mark_accessed(frame, a.key);
        }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if self.deactivate == Deactivate::Priority {
            if self.plan_pos == self.plan_len {
                self.plan_reclaim();
            }
            self.run_deactivation_steps();
            let victim = back_unpinned(&self.links, &self.inactive, pins)
                .or_else(|| back_unpinned(&self.links, &self.active, pins));
            // This eviction is one of the step's reclaimed pages; the step's deactivations follow
            // its last one.
            if self.plan_pos < self.plan_len {
                self.plan[self.plan_pos].reclaim -= 1;
                self.run_deactivation_steps();
            }
            return victim;
        }
        if self.deactivate == Deactivate::Proportional {
            // A memory cgroup reclaims SWAP_CLUSTER_MAX (32) pages at a time; whether the batch
            // scans the active list is decided at its start (prepare_scan_control: refault
            // activations since the last reclaim's snapshot_refaults).
            if self.batch_left == 0 {
                self.batch_left = RECLAIM_BATCH;
                self.batch_deactivates = std::mem::take(&mut self.pending_refaults) > 0;
                self.deactivation_credit = 0.0;
            }
            self.batch_left -= 1;
            if self.batch_deactivates && !self.inactive.is_empty() {
                self.deactivation_credit += self.active.len() as f64 / self.inactive.len() as f64;
                while self.deactivation_credit >= 1.0 && self.deactivate_tail() {
                    self.deactivation_credit -= 1.0;
                }
            }
            while self.inactive_is_low() {
                if !self.deactivate_tail() {
                    break;
                }
            }
        } else {
            // prepare_scan_control: deactivate when the inactive list is low or workingset
            // activations happened since the last reclaim.
            let mut refaults = std::mem::take(&mut self.pending_refaults);
            while self.inactive_is_low() || (refaults > 0 && !self.active.is_empty()) {
                refaults = refaults.saturating_sub(1);
                if !self.deactivate_tail() {
                    break;
                }
            }
        }
        back_unpinned(&self.links, &self.inactive, pins).or_else(|| back_unpinned(&self.links, &self.active, pins))
    }

    /// Truncation clears the shadow entries of its range (truncate_folio_batch_exceptionals).
    fn forget(&mut self, key: u64) {
        if let Some(n) = self.shadows.find(key) {
            self.shadows.remove(&mut self.shadow_fifo, n);
        }
    }

    #[inline]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let i = frame as usize;
        if self.is_active[i] {
            self.links.remove(&mut self.active, frame);
        } else {
            self.links.remove(&mut self.inactive, frame);
        }
        self.referenced[i] = false;
        self.is_active[i] = false;
        if self.last_key == Some(key) {
            self.last_key = None;
        }
        // Truncation removes a page without workingset_eviction: no shadow, no aging.
        if self.shadow_cap == 0 || why == Removal::Dropped {
            return;
        }
        // workingset_eviction: stamp with the age, then age by the evicted page.
        if let Some(n) = self.shadows.find(key) {
            self.shadows.remove(&mut self.shadow_fifo, n);
        }
        if self.shadow_fifo.len() >= self.shadow_cap {
            self.shadows.pop_back(&mut self.shadow_fifo);
        }
        self.shadows.push_front(&mut self.shadow_fifo, key, self.nonresident_age);
        self.nonresident_age += 1;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.active)?;
        self.links.check(&self.inactive)?;
        if self.active.len() + self.inactive.len() != resident {
            return Err(format!("linux: lists hold {}, cache {resident}", self.active.len() + self.inactive.len()));
        }
        for (l, act) in [(&self.active, true), (&self.inactive, false)] {
            for f in self.links.iter(l) {
                if self.is_active[f as usize] != act {
                    return Err(format!("linux: frame {f} in the wrong list"));
                }
            }
        }
        if self.shadow_fifo.len() > self.shadow_cap {
            return Err(format!("linux: {} shadows, bound {}", self.shadow_fifo.len(), self.shadow_cap));
        }
        self.shadows.check(&[&self.shadow_fifo])
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("refaults", self.n_refaults as f64));
        out.push(("refault_activations", self.n_refault_activations as f64));
        out.push(("activations", self.n_activations as f64));
        out.push(("deactivations", self.n_deactivations as f64));
    }
}

impl PolicyDef for Linux {
    const INFO: PolicyInfo = PolicyInfo {
        name: "linux",
        aliases: &[],
        paper: "Linux 6.x page cache (mm/swap.c, mm/vmscan.c, mm/workingset.c of 6.18): active/inactive file lists with workingset refault detection",
        summary: "new pages inactive, a second access activates, refaults within the active list's size are inserted active, inactive kept >= active / isqrt(10 x GiB)",
        params: &[
            ParamInfo {
                name: "shadows",
                default: "800%",
                doc: "shadow entries kept for refault detection, oldest dropped first (relative to the cache, or blocks; the kernel's shadow-node shrinker allows about 8 per page)",
                range: Range::Share(0.0, 100.0),
            },
            ParamInfo {
                name: "deactivate",
                default: "per-refault",
                doc: "per-refault: one active page deactivated per refault activation, and the inactive list never left low; proportional: a reclaim batch (32 pages) that follows refault activations deactivates active/inactive pages per page reclaimed, and the inactive list never left low; priority: the kernel's reclaim of 32 pages, priority 12 down, scanning size >> priority of the inactive list and, after refault activations or while the inactive list is low, of the active list",
                range: Range::Choice(&["per-refault", "proportional", "priority"]),
            },
            ParamInfo {
                name: "writes",
                default: "ignore",
                doc: "ignore: a buffered write neither marks nor moves a page (Linux 6.x: FGP_WRITEBEGIN has no FGP_ACCESSED); mark: writes mark pages as reads do (generic_perform_write up to Linux 3.15)",
                range: Range::Choice(&["ignore", "mark"]),
            },
        ],
        preset_of: None,
        caps: Capabilities::RESIZABLE,
    };

    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        // The shadow list indexes entries with u32 and grows only as blocks are evicted, so a
        // bound above 2^31 entries (a cache of terabytes) is the same as 2^31: no trace a run
        // can hold evicts that many distinct blocks.
        let shadows = args.blocks("shadows", env)?.min(u32::MAX as u64 / 2);
        let mut linux = Linux::new(env.capacity, shadows as usize);
        if args.choice("writes", &["ignore", "mark"])? == "mark" {
            linux = linux.with_writes_marking();
        }
        match args.choice("deactivate", &["per-refault", "proportional", "priority"])? {
            "proportional" => linux = linux.with_proportional_deactivation(),
            "priority" => linux = linux.with_priority_reclaim(),
            _ => {}
        }
        Ok(linux)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn second_access_activates_and_reclaim_takes_the_inactive_tail() {
        // 4 pages. Lists from head to tail, * = PG_referenced.
        let mut s = Steps::new(Linux::new(4, 32), 4);
        // A read marks the new page referenced; a second (non-adjacent) read activates it.
        assert_eq!(s.run(&[1, 2, 1, 3]), "MMHM");
        assert_eq!(s.policy().dump(), "A: 1 | I: 3* 2*");
        // The same page read twice in a row is marked once (pos_same_folio).
        assert_eq!(s.run(&[4, 4]), "MH");
        assert_eq!(s.policy().dump(), "A: 1 | I: 4* 3* 2*");
        // 5: inactive (3) is not low against active (1); the inactive tail 2 goes even though
        // it is referenced.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "A: 1 | I: 5* 4* 3*");
        assert_eq!(s.run(&[3, 4]), "HH");
        assert_eq!(s.policy().dump(), "A: 4 3 1 | I: 5*");
        // 6: inactive 1 x 1 < active 3: the active tail 1 is demoted (then 2 vs 2 is not low);
        // the inactive tail is 5.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(s.policy().dump(), "A: 4 3 | I: 6* 1");
    }

    #[test]
    fn demoted_pages_keep_their_bit() {
        let mut s = Steps::new(Linux::new(4, 32), 4);
        assert_eq!(s.run(&[1, 2, 1, 2, 3, 4]), "MMHHMM");
        assert_eq!(s.policy().dump(), "A: 2 1 | I: 4* 3*");
        // A read of active 1 sets its bit without moving it; 5's reclaim: 2 vs 2 is not low,
        // the tail 3 goes.
        assert_eq!(s.run(&[1, 5]), "HM");
        assert_eq!(s.policy().dump(), "A: 2 1* | I: 5* 4*");
        // 4 activates; 6's reclaim: 1 inactive < 3 active: 1 is demoted with its bit, then the
        // inactive tail 5 goes.
        assert_eq!(s.run(&[4, 6]), "HM");
        assert_eq!(s.policy().dump(), "A: 4 2 | I: 6* 1*");
        // One read re-activates the demoted page.
        assert_eq!(s.demand(1), 'H');
        assert_eq!(s.policy().dump(), "A: 1 4 2 | I: 6*");
    }

    #[test]
    fn refaults_within_the_active_size_are_inserted_active() {
        let mut s = Steps::new(Linux::new(4, 32), 4);
        // Two activations: age 2. 1 and 2 active; 3 4 inactive.
        assert_eq!(s.run(&[1, 2, 1, 2, 3, 4]), "MMHHMM");
        // 5 evicts 3 (shadow 2, age 3); 6 evicts 4 (shadow 3, age 4).
        assert_eq!(s.run(&[5, 6]), "MM");
        assert_eq!(s.policy().dump(), "A: 2 1 | I: 6* 5*");
        // 3 refaults: distance 4 - 2 = 2 <= 2 active pages: inserted active (5 is evicted
        // first: shadow 4, age 5; the activation makes it 6).
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().dump(), "A: 3* 2 1 | I: 6*");
        // The refault activation lets the next reclaim deactivate: 7's demotes 1 (then 2 vs 2
        // is not low) and takes the inactive tail 6 (shadow 6, age 7).
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "A: 3* 2 | I: 7* 1");
        // 4's shadow (3) is 7 - 3 = 4 > 2 active pages away: an ordinary inactive insertion.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "A: 3* 2 | I: 4* 7*");
    }

    #[test]
    fn writes_leave_pages_unreferenced() {
        let mut s = Steps::new(Linux::new(4, 32), 4);
        let write = |s: &mut Steps<Linux>, key| {
            let a = Access { write: true, ..s.access(key) };
            s.demand_access(a)
        };
        // Written, then written again: inactive and unmarked.
        assert_eq!(write(&mut s, 1), 'M');
        assert_eq!(write(&mut s, 2), 'M');
        assert_eq!(write(&mut s, 1), 'H');
        assert_eq!(s.policy().dump(), "A:  | I: 2 1");
        // The first read marks a written page, the second activates it.
        assert_eq!(s.run(&[1, 2, 1]), "HHH");
        assert_eq!(s.policy().dump(), "A: 1 | I: 2*");
        // A write of an active page leaves it where it is, bit and all.
        assert_eq!(write(&mut s, 1), 'H');
        assert_eq!(s.policy().dump(), "A: 1 | I: 2*");
    }

    #[test]
    fn writes_mark_pages_as_older_kernels_did() {
        // writes=mark: the write path's mark_page_accessed (Linux up to 3.15) makes a page
        // written twice active.
        let mut s = Steps::new(Linux::new(4, 32).with_writes_marking(), 4);
        let write = |s: &mut Steps<Linux>, key| {
            let a = Access { write: true, ..s.access(key) };
            s.demand_access(a)
        };
        assert_eq!(write(&mut s, 1), 'M');
        assert_eq!(write(&mut s, 2), 'M');
        assert_eq!(s.policy().dump(), "A:  | I: 2* 1*");
        assert_eq!(write(&mut s, 1), 'H');
        assert_eq!(s.policy().dump(), "A: 1 | I: 2*");
    }

    #[test]
    fn proportional_deactivation_follows_refaults_for_a_whole_batch() {
        // 16 pages: 1..=8 active, then a stream through the inactive half. With no refault the
        // stream never touches the active list; a refault activation makes the next batch of 32
        // reclaims deactivate about active / inactive pages each.
        let mut s = Steps::new(Linux::new(16, 128).with_proportional_deactivation(), 16);
        let hot: Vec<u64> = (1..=8).chain(1..=8).collect();
        s.run(&hot);
        let stream: Vec<u64> = (100..140).collect();
        s.run(&stream);
        assert_eq!(s.policy().n_deactivations, 0);
        assert_eq!(s.policy().active.len(), 8);
        // 130 was evicted two evictions ago, within the active list's size: a refault.
        assert_eq!(s.demand(130), 'M');
        assert_eq!(s.policy().n_refault_activations, 1);
        // The rest of the current batch does not deactivate; the next one does, until the
        // active list is nearly gone (each reclaim moves active / inactive pages).
        let more: Vec<u64> = (200..260).collect();
        s.run(&more);
        let d = s.policy().n_deactivations;
        assert!(d >= 6, "{d} deactivations");
        // per-refault: the same run deactivates one page for the one refault.
        let mut t = Steps::new(Linux::new(16, 128), 16);
        t.run(&hot);
        t.run(&stream);
        t.demand(130);
        t.run(&more);
        assert_eq!(t.policy().n_deactivations, 1);
    }

    #[test]
    fn priority_reclaim_scans_the_active_list_in_proportion_without_rebalancing() {
        // 8,192 pages: 6,000 read twice (active), then 2,192 read once (inactive). The inactive
        // list is low (2,192 < 6,000), so each priority of a reclaim scans active >> priority
        // pages too. Worked by hand (inactive, active before each priority):
        //   12: (2192, 6000) -> reclaim 0, deactivate 1
        //   11: (2193, 5999) -> reclaim 1, deactivate 2
        //   10: (2194, 5997) -> reclaim 2, deactivate 5
        //    9: (2197, 5992) -> reclaim 4, deactivate 11
        //    8: (2204, 5981) -> reclaim 8, deactivate 23
        //    7: (2219, 5958) -> reclaim 17, deactivate 46: 32 reclaimed, the reclaim ends.
        let fill = |s: &mut Steps<Linux>| {
            let twice: Vec<u64> = (1..=6000).chain(1..=6000).collect();
            s.run(&twice);
            let once: Vec<u64> = (10_000..12_192).collect();
            s.run(&once);
        };
        let mut s = Steps::new(Linux::new(8192, 65536).with_priority_reclaim(), 8192);
        fill(&mut s);
        assert_eq!((s.policy().active.len(), s.policy().inactive.len()), (6000, 2192));
        // The first eviction: priority 12's deactivation, then priority 11's reclaim and its.
        assert_eq!(s.demand(20_000), 'M');
        assert_eq!(s.policy().n_deactivations, 3);
        let new: Vec<u64> = (20_001..20_032).collect();
        s.run(&new);
        assert_eq!(s.policy().n_deactivations, 1 + 2 + 5 + 11 + 23 + 46);
        // The active list stays the larger: a low inactive list only lets reclaim scan it.
        assert_eq!(s.policy().active.len(), 6000 - 88);
        // per-refault keeps the inactive list from being low before every eviction.
        let mut t = Steps::new(Linux::new(8192, 65536), 8192);
        fill(&mut t);
        t.demand(20_000);
        assert_eq!(t.policy().active.len(), 4096);
    }

    #[test]
    fn read_ahead_pages_need_a_mark_to_count() {
        let mut s = Steps::new(Linux::new(4, 32), 4);
        s.prefetch(7);
        assert_eq!(s.policy().dump(), "A:  | I: 7");
        assert_eq!(s.demand(7), 'H');
        assert_eq!(s.policy().dump(), "A:  | I: 7*");
        assert_eq!(s.run(&[8, 7]), "MH");
        assert_eq!(s.policy().dump(), "A: 7 | I: 8*");
    }
}
