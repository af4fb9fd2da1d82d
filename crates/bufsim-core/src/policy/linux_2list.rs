//! Linux 2.6 two-list page cache (active/inactive), as DULO §4.2.1 and AMP §5 describe it:
//! a faulted-in page enters the head of the inactive list, a second access while inactive
//! promotes it to the active list, replacement takes the inactive tail, and refill demotes
//! active pages not accessed recently to keep the lists balanced.
//! Deviation: the balance is the later file-LRU ratio rule (docs/policies/linux-2list.md).
//!
//! Reference bit (PG_referenced, set by mark_page_accessed): a demand access to an inactive
//! page without the bit sets it; with the bit, the page is activated (bit cleared). An access
//! to an active page sets the bit; refill gives such a page a second chance (bit cleared,
//! back to the active head) and demotes unreferenced ones to the inactive head. Reclaim takes
//! the inactive tail whatever its bit, as 2.6 does for unmapped file pages.
//!
//! Prefetching (prefetching paper §4): read-ahead adds pages to the inactive head without the
//! bit, so the first demand access sets it (a first access) and the second activates the page.

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

pub struct Linux2List {
    links: Links,
    /// Front = head (most recently added).
    active: List,
    inactive: List,
    is_active: FrameVec<bool>,
    referenced: FrameVec<bool>,
    keys: FrameVec<u64>,
    /// Refill demotes while |active| > ratio * |inactive|.
    ratio: f64,
}

impl Linux2List {
    pub fn new(capacity: usize, ratio: f64) -> Self {
        Linux2List {
            links: Links::with_nodes(capacity),
            active: List::new(),
            inactive: List::new(),
            is_active: FrameVec::filled(false, capacity),
            referenced: FrameVec::filled(false, capacity),
            keys: FrameVec::filled(0, capacity),
            ratio,
        }
    }

    /// `A: head..tail | I: head..tail`, `*` = reference bit (tests and dumps).
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

    /// refill_inactive: scan the active tail while the active list is too long.
    fn refill(&mut self) {
        let mut budget = 2 * self.active.len() + 1;
        while budget > 0 && self.active.len() as f64 > self.ratio * self.inactive.len() as f64 {
            budget -= 1;
            let Some(t) = self.active.back() else { break };
            let i = t as usize;
            if self.referenced[i] {
                // Recently accessed: stays active, bit cleared, back to the head.
                self.referenced[i] = false;
                self.links.move_to_front(&mut self.active, t);
            } else {
                self.links.remove(&mut self.active, t);
                self.links.push_front(&mut self.inactive, t);
                self.is_active[i] = false;
            }
        }
    }
}

impl Policy for Linux2List {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let i = frame as usize;
        self.keys[i] = a.key;
        self.is_active[i] = false;
        // A demand fault is followed by mark_page_accessed; read-ahead is not.
        self.referenced[i] = origin == Origin::Demand;
        self.links.push_front(&mut self.inactive, frame);
    }

    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        let i = frame as usize;
        if !self.is_active[i] && self.referenced[i] {
            // Second access while inactive: activate (head of the active list).
            self.links.remove(&mut self.inactive, frame);
            self.links.push_front(&mut self.active, frame);
            self.is_active[i] = true;
            self.referenced[i] = false;
        } else {
            self.referenced[i] = true;
        }
    }

    #[inline]
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        self.referenced[frame as usize] = true;
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        self.refill();
        back_unpinned(&self.links, &self.inactive, pins).or_else(|| back_unpinned(&self.links, &self.active, pins))
    }

    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        let i = frame as usize;
        if self.is_active[i] {
            self.links.remove(&mut self.active, frame);
        } else {
            self.links.remove(&mut self.inactive, frame);
        }
        self.referenced[i] = false;
        self.is_active[i] = false;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.active)?;
        self.links.check(&self.inactive)?;
        if self.active.len() + self.inactive.len() != resident {
            return Err(format!(
                "linux-2list: lists hold {}, cache {resident}",
                self.active.len() + self.inactive.len()
            ));
        }
        for (l, act) in [(&self.active, true), (&self.inactive, false)] {
            for f in self.links.iter(l) {
                if self.is_active[f as usize] != act {
                    return Err(format!("linux-2list: frame {f} in the wrong list"));
                }
            }
        }
        Ok(())
    }
}

impl PolicyDef for Linux2List {
    const INFO: PolicyInfo = PolicyInfo {
        name: "linux-2list",
        aliases: &[],
        paper: "Linux 2.6 active/inactive lists as in DULO §4.2.1 and AMP §5; prefetch-aware per the prefetching paper §4",
        summary: "new pages inactive, second access activates, reclaim at the inactive tail, refill keeps active <= ratio x inactive",
        params: &[ParamInfo {
            name: "active-ratio",
            default: "1",
            doc: "refill demotes while |active| > ratio x |inactive| (1: the file LRU's rule, inactive >= half)",
            range: Range::Positive(f64::MAX),
        }],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let ratio = args.f64("active-ratio")?;
        if ratio <= 0.0 {
            return Err(SpecError(format!("policy `linux-2list`: active-ratio={ratio} must be above 0")));
        }
        Ok(Linux2List::new(env.capacity, ratio))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn two_lists_step_by_step() {
        // 4 pages, active-ratio 1. Lists from head to tail, * = reference bit.
        let mut s = Steps::new(Linux2List::new(4, 1.0), 4);
        // A fault enters the inactive head with its bit set; the second access activates.
        assert_eq!(s.run(&[1, 2, 1, 3, 4, 1]), "MMHMMH");
        assert_eq!(s.policy().dump(), "A: 1* | I: 4* 3* 2*");
        // 5: refill needs nothing (1 active <= 3 inactive); the inactive tail 2 goes.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "A: 1* | I: 5* 4* 3*");
        assert_eq!(s.run(&[3, 4]), "HH");
        assert_eq!(s.policy().dump(), "A: 4 3 1* | I: 5*");
        // 6: refill: 3 active > 1 inactive: 1 is referenced (second chance, to the head), 3 is
        // not (demoted to the inactive head); then 2 = 2. The inactive tail 5 is reclaimed.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(s.policy().dump(), "A: 1 4 | I: 6* 3");
        // 3 was demoted with its bit clear: one access sets it, the next activates.
        assert_eq!(s.demand(3), 'H');
        assert_eq!(s.policy().dump(), "A: 1 4 | I: 6* 3*");
        assert_eq!(s.demand(3), 'H');
        assert_eq!(s.policy().dump(), "A: 3 1 4 | I: 6*");
    }

    #[test]
    fn prefetched_pages_need_two_demand_accesses_to_activate() {
        let mut s = Steps::new(Linux2List::new(4, 1.0), 4);
        assert_eq!(s.run(&[1, 1, 2, 3, 4]), "MHMMM");
        assert_eq!(s.policy().dump(), "A: 1 | I: 4* 3* 2*");
        // Read-ahead of 7: no refill needed (1 <= 3); the tail 2 goes; 7 enters without the bit.
        s.prefetch(7);
        assert_eq!(s.policy().dump(), "A: 1 | I: 7 4* 3*");
        // First demand: a first access sets the bit; the second activates.
        assert_eq!(s.demand(7), 'H');
        assert_eq!(s.policy().dump(), "A: 1 | I: 7* 4* 3*");
        assert_eq!(s.demand(7), 'H');
        assert_eq!(s.policy().dump(), "A: 7 1 | I: 4* 3*");
    }
}
