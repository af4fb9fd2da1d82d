//! CLOCK-Pro (Jiang, Chen & Zhang, "CLOCK-Pro: An Effective Improvement of the CLOCK
//! Replacement", USENIX ATC 2005, §3: hot/cold pages, test periods, three hands, adaptive m_c).
//! Deviations: none intended; rules the paper leaves open (warm-up, bounds of m_c, prefetching)
//! are listed in docs/policies/clock-pro.md.
//!
//! One clock holds hot pages, resident cold pages and non-resident cold pages in their test
//! period, in the order of their accesses (head = smallest recency). HAND_cold points to the
//! resident cold page of largest recency, HAND_hot to the hot page of largest recency, HAND_test
//! to the cold page in test of largest recency. Hands move from the tail towards the head;
//! passing a page is the same as leaving it at the list head, so a page a hand spares moves to
//! the head. m_c, the target number of resident cold pages, grows by one when a cold page is
//! re-accessed in its test period and shrinks by one when a test period ends without one.
//!
//! Prefetching (prefetching paper §4, with LIRS's adaptation since CLOCK-Pro is its clock
//! form): a prefetched page enters at the head as a resident cold page outside any test period,
//! with its reference bit clear, and leaves any non-resident entry of its key alone. Its first
//! demand access is handled as a page fault would be: with a non-resident entry still in test it
//! becomes hot, otherwise it starts its test period at the head. Evicted unused, it leaves no
//! non-resident entry.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::blockmap::BlockMap;
use crate::frames::FrameVec;
use crate::list::{Links, List, NIL};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Not in the clock (a free frame or a free non-resident slot).
    Free,
    Hot,
    /// Resident cold page outside its test period.
    Cold,
    /// Resident cold page in its test period.
    ColdTest,
    /// Non-resident cold page; always in its test period.
    NonResident,
}

impl Status {
    #[inline]
    fn in_test(self) -> bool {
        matches!(self, Status::ColdTest | Status::NonResident)
    }
    #[inline]
    fn resident_cold(self) -> bool {
        matches!(self, Status::Cold | Status::ColdTest)
    }
}

pub struct ClockPro {
    /// m: resident pages.
    m: usize,
    /// Node ids 0..m are frames; m..m+nonres_cap+1 are non-resident entries.
    links: Links,
    clock: List,
    status: FrameVec<Status>,
    referenced: FrameVec<bool>,
    keys: FrameVec<u64>,
    nonres: BlockMap,
    /// Non-resident nodes given back, reused last-freed first before any fresh one.
    free_nonres: Vec<u32>,
    /// Non-resident nodes `fresh_nonres..` were never used (handed out in increasing order,
    /// as from a stack preloaded with them).
    fresh_nonres: u32,
    /// Largest number of non-resident cold pages kept (the paper: m).
    nonres_cap: usize,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    n_hot: usize,
    n_cold: usize,
    n_nonres: usize,
    /// m_c and its bounds.
    cold_target: usize,
    cold_min: usize,
    cold_max: usize,
    /// The cache has been full once: new pages are cold from now on.
    filled: bool,
}

impl ClockPro {
    /// A CLOCK-Pro cache of `m` pages with m_c in [cold_min, cold_max] (starting at cold_min)
    /// and at most `nonres_cap` non-resident cold pages.
    pub fn new(m: usize, cold_min: usize, cold_max: usize, nonres_cap: usize) -> Self {
        let cold_min = cold_min.clamp(1, m.max(1));
        let cold_max = cold_max.min(m.saturating_sub(1)).max(cold_min);
        let nodes = m + nonres_cap + 1;
        ClockPro {
            m,
            // Resident pages are nodes 0..m, non-resident ones m..: each kind stored from its
            // own start, so both take memory as they are used.
            links: Links::with_split(nodes, m),
            clock: List::new(),
            status: FrameVec::split(Status::Free, nodes, m),
            referenced: FrameVec::split(false, nodes, m),
            keys: FrameVec::split(0, nodes, m),
            nonres: BlockMap::new(),
            free_nonres: Vec::new(),
            fresh_nonres: m as u32,
            nonres_cap,
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            n_hot: 0,
            n_cold: 0,
            n_nonres: 0,
            cold_target: cold_min,
            cold_min,
            cold_max,
            filled: false,
        }
    }

    /// The target number of resident cold pages, m_c.
    pub fn cold_target(&self) -> usize {
        self.cold_target
    }

    /// The clock from head (smallest recency) to tail: `key` followed by H (hot), c (cold),
    /// t (cold in test), n (non-resident in test), and `*` when the reference bit is set; then
    /// the keys under HAND_hot, HAND_cold, HAND_test (tests and dumps).
    pub fn dump(&self) -> String {
        let mut s: Vec<String> = self
            .links
            .iter(&self.clock)
            .map(|n| {
                let i = n as usize;
                let kind = match self.status[i] {
                    Status::Hot => "H",
                    Status::Cold => "c",
                    Status::ColdTest => "t",
                    Status::NonResident => "n",
                    Status::Free => "?",
                };
                format!("{}{}{}", self.keys[i], kind, if self.referenced[i] { "*" } else { "" })
            })
            .collect();
        let hand = |h: u32| if h == NIL { "-".to_string() } else { self.keys[h as usize].to_string() };
        s.push(format!(
            "| hot={} cold={} test={} mc={}",
            hand(self.hand_hot),
            hand(self.seek_view(self.hand_cold, |s| s.resident_cold())),
            hand(self.seek_view(self.hand_test, |s| s.in_test())),
            self.cold_target
        ));
        s.join(" ")
    }

    /// The node towards the head from `n`, wrapping from the head to the tail.
    #[inline]
    fn toward_head(&self, n: u32) -> u32 {
        match self.links.prev(n) {
            Some(p) => p,
            None => self.clock.back().unwrap_or(NIL),
        }
    }

    /// Where a lazily kept hand really stands: the first page of its kind from `h` (or the
    /// tail) towards the head. Read-only (dumps and checks).
    fn seek_view(&self, h: u32, kind: impl Fn(Status) -> bool) -> u32 {
        let mut n = if h == NIL { self.clock.back().unwrap_or(NIL) } else { h };
        for _ in 0..=self.clock.len() {
            if n == NIL || kind(self.status[n as usize]) {
                return n;
            }
            n = self.toward_head(n);
        }
        NIL
    }

    /// Unlinks `n`; a hand on it moves on towards the head.
    fn unlink(&mut self, n: u32) {
        let next = if self.clock.len() == 1 { NIL } else { self.toward_head(n) };
        for h in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
            if *h == n {
                *h = next;
            }
        }
        self.links.remove(&mut self.clock, n);
    }

    fn move_to_head(&mut self, n: u32) {
        self.unlink(n);
        self.links.push_front(&mut self.clock, n);
    }

    fn adjust_cold_target(&mut self, up: bool) {
        self.cold_target = if up { self.cold_target + 1 } else { self.cold_target.saturating_sub(1) }
            .clamp(self.cold_min, self.cold_max);
    }

    /// Ends the test period of `n` (§3: by HAND_test, or by HAND_hot passing it). A resident
    /// page stays as a cold page; a non-resident one leaves the clock. m_c grows if the page
    /// was re-accessed during the test, else shrinks (§3, adaptive m_c).
    fn terminate_test(&mut self, n: u32) {
        let i = n as usize;
        match self.status[i] {
            Status::ColdTest => {
                self.status[i] = Status::Cold;
                let re_accessed = self.referenced[i];
                self.adjust_cold_target(re_accessed);
            }
            Status::NonResident => {
                self.adjust_cold_target(false);
                self.drop_nonresident(n);
            }
            _ => {}
        }
    }

    fn drop_nonresident(&mut self, n: u32) {
        self.unlink(n);
        self.nonres.remove(self.keys[n as usize]);
        self.status[n as usize] = Status::Free;
        self.free_nonres.push(n);
        self.n_nonres -= 1;
    }

    /// Puts HAND_hot on the hot page of largest recency, ending the test periods of the cold
    /// pages it passes: it does HAND_test's work on them (§3).
    fn seek_hot(&mut self) {
        if self.n_hot == 0 {
            self.hand_hot = NIL;
            return;
        }
        let mut n = if self.hand_hot == NIL { self.clock.back().unwrap_or(NIL) } else { self.hand_hot };
        for _ in 0..=self.clock.len() {
            if self.status[n as usize] == Status::Hot {
                self.hand_hot = n;
                return;
            }
            let next = self.toward_head(n);
            self.terminate_test(n);
            n = next;
        }
        unreachable!("CLOCK-Pro: {} hot pages counted but none in the clock", self.n_hot);
    }

    /// Runs HAND_hot until it turns one hot page cold (§3): a referenced hot page has its bit
    /// reset and stays hot (moved to the head); the first unreferenced one becomes cold.
    fn demote_one(&mut self) {
        self.seek_hot();
        for _ in 0..=2 * self.n_hot {
            let h = self.hand_hot;
            if h == NIL {
                return;
            }
            let i = h as usize;
            if self.referenced[i] {
                self.referenced[i] = false;
                self.move_to_head(h);
                self.seek_hot();
            } else {
                self.status[i] = Status::Cold;
                self.n_hot -= 1;
                self.n_cold += 1;
                self.move_to_head(h);
                self.seek_hot();
                return;
            }
        }
    }

    /// Keeps the hot pages within m - m_c after a promotion.
    fn balance(&mut self) {
        while self.n_hot > 0 && self.n_hot > self.m - self.cold_target {
            self.demote_one();
        }
    }

    /// A cold page accessed in its test period turns hot at the head (§3); m_c grows.
    fn promote(&mut self, n: u32) {
        let i = n as usize;
        debug_assert!(self.status[i].resident_cold());
        self.adjust_cold_target(true);
        self.status[i] = Status::Hot;
        self.referenced[i] = false;
        self.n_cold -= 1;
        self.n_hot += 1;
        self.move_to_head(n);
        if self.hand_hot == NIL {
            self.seek_hot();
        }
        self.balance();
    }

    /// Runs HAND_test once: the cold page in test of largest recency ends its test.
    fn run_test_hand(&mut self) {
        let t = self.seek_view(self.hand_test, |s| s.in_test());
        self.hand_test = t;
        if t != NIL {
            self.terminate_test(t);
        }
    }

    /// A demand access that (logically) faults `frame` in, already linked or not: with a
    /// non-resident entry in test the page turns hot; during warm-up (cache never full) pages
    /// are hot until m - m_c of them are; otherwise the page is cold and starts its test period.
    fn admit(&mut self, frame: Frame, key: u64) {
        let i = frame as usize;
        self.referenced[i] = false;
        if let Some(g) = self.nonres.get(key) {
            // §3: a faulted page still in the list (non-resident, in test) turns hot at the
            // head and HAND_hot runs; a re-access in the test period raises m_c (§3, adaptive).
            self.drop_nonresident(g);
            self.adjust_cold_target(true);
            self.status[i] = Status::Hot;
            self.n_hot += 1;
            self.links.push_front(&mut self.clock, frame);
            if self.hand_hot == NIL {
                self.seek_hot();
            }
            self.balance();
        } else if !self.filled && self.n_hot + self.cold_target < self.m {
            self.status[i] = Status::Hot;
            self.n_hot += 1;
            self.links.push_front(&mut self.clock, frame);
            if self.hand_hot == NIL {
                self.seek_hot();
            }
        } else {
            // Not in the list: a cold page at the head, starting its test period.
            self.status[i] = Status::ColdTest;
            self.n_cold += 1;
            self.links.push_front(&mut self.clock, frame);
        }
    }

    /// HAND_cold's search (§3): an unreferenced resident cold page is the victim; a referenced
    /// one in its test period turns hot; a referenced one outside it starts a test period at
    /// the head. Pinned pages are passed unchanged (moved to the head, like CLOCK's hand).
    fn search_cold(&mut self, pins: &Pins) -> Option<Frame> {
        let mut budget = 3 * (self.clock.len() + 1);
        while budget > 0 && self.n_cold > 0 {
            budget -= 1;
            let c = self.seek_view(self.hand_cold, |s| s.resident_cold());
            self.hand_cold = c;
            let i = c as usize;
            if pins.pinned(c) {
                self.move_to_head(c);
                continue;
            }
            if !self.referenced[i] {
                return Some(c);
            }
            if self.status[i] == Status::ColdTest {
                self.promote(c);
            } else {
                self.referenced[i] = false;
                self.status[i] = Status::ColdTest;
                self.move_to_head(c);
            }
        }
        None
    }
}

impl Policy for ClockPro {
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let i = frame as usize;
        self.keys[i] = a.key;
        match origin {
            Origin::Demand => self.admit(frame, a.key),
            Origin::Prefetch => {
                self.status[i] = Status::Cold;
                self.referenced[i] = false;
                self.n_cold += 1;
                self.links.push_front(&mut self.clock, frame);
            }
        }
    }

    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.referenced[frame as usize] = true;
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        let i = frame as usize;
        debug_assert_eq!(self.status[i], Status::Cold);
        self.unlink(frame);
        self.status[i] = Status::Free;
        self.n_cold -= 1;
        self.admit(frame, a.key);
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        self.filled = true;
        for _ in 0..=self.m {
            if let Some(v) = self.search_cold(pins) {
                return Some(v);
            }
            // Every resident cold page is pinned (or none is left): turn a hot page cold.
            if self.n_hot == 0 {
                return None;
            }
            self.demote_one();
        }
        None
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let i = frame as usize;
        match self.status[i] {
            Status::ColdTest if why == Removal::Evicted => {
                // §3: an evicted cold page in its test period stays in the clock, non-resident,
                // until its test ends; its entry takes the frame's place.
                if let Some(old) = self.nonres.get(key) {
                    self.drop_nonresident(old);
                }
                let r = match self.free_nonres.pop() {
                    Some(r) => r,
                    None => {
                        let r = self.fresh_nonres;
                        assert!((r as usize) < self.links.len(), "non-resident slots are trimmed to their cap");
                        self.fresh_nonres += 1;
                        r
                    }
                };
                let ri = r as usize;
                self.links.insert_before(&mut self.clock, frame, r);
                self.links.remove(&mut self.clock, frame);
                for h in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
                    if *h == frame {
                        *h = r;
                    }
                }
                self.status[ri] = Status::NonResident;
                self.referenced[ri] = false;
                self.keys[ri] = key;
                self.nonres.insert_new(key, r);
                self.n_nonres += 1;
                self.n_cold -= 1;
                // §3: beyond m non-resident pages, HAND_test ends the oldest test period.
                while self.n_nonres > self.nonres_cap {
                    self.run_test_hand();
                }
            }
            Status::Hot => {
                let at_hand = self.hand_hot == frame;
                self.unlink(frame);
                self.n_hot -= 1;
                if at_hand {
                    self.seek_hot();
                }
            }
            Status::Cold | Status::ColdTest => {
                self.unlink(frame);
                self.n_cold -= 1;
            }
            Status::NonResident | Status::Free => unreachable!("remove of a frame not resident"),
        }
        self.status[i] = Status::Free;
        self.referenced[i] = false;
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.clock)?;
        let (mut hot, mut cold, mut nonres) = (0, 0, 0);
        for n in self.links.iter(&self.clock) {
            match self.status[n as usize] {
                Status::Hot => hot += 1,
                Status::Cold | Status::ColdTest => cold += 1,
                Status::NonResident => {
                    nonres += 1;
                    if (n as usize) < self.m || self.nonres.get(self.keys[n as usize]) != Some(n) {
                        return Err(format!("CLOCK-Pro: non-resident node {n} not indexed"));
                    }
                }
                Status::Free => return Err(format!("CLOCK-Pro: free node {n} in the clock")),
            }
            if (n as usize) >= self.m && self.status[n as usize] != Status::NonResident {
                return Err(format!("CLOCK-Pro: slot {n} holds a resident page"));
            }
        }
        if (hot, cold, nonres) != (self.n_hot, self.n_cold, self.n_nonres) {
            return Err(format!(
                "CLOCK-Pro: counted {hot} hot {cold} cold {nonres} non-resident, recorded {} {} {}",
                self.n_hot, self.n_cold, self.n_nonres
            ));
        }
        if hot + cold != resident {
            return Err(format!("CLOCK-Pro: {} resident pages in the clock, cache {resident}", hot + cold));
        }
        if nonres > self.nonres_cap || self.nonres.len() != nonres {
            return Err(format!("CLOCK-Pro: {nonres} non-resident pages (cap {})", self.nonres_cap));
        }
        if !(self.cold_min..=self.cold_max).contains(&self.cold_target) {
            return Err(format!(
                "CLOCK-Pro: m_c = {} outside [{}, {}]",
                self.cold_target, self.cold_min, self.cold_max
            ));
        }
        // Each hand: no page of its kind lies between the tail and the hand.
        type Hand<'a> = (u32, &'a str, fn(Status) -> bool);
        let hands: [Hand; 3] = [
            (self.hand_hot, "HAND_hot", |s| s == Status::Hot || s.in_test()),
            (self.hand_cold, "HAND_cold", Status::resident_cold),
            (self.hand_test, "HAND_test", Status::in_test),
        ];
        for (h, name, kind) in hands {
            if h == NIL {
                continue;
            }
            if self.status[h as usize] == Status::Free {
                return Err(format!("CLOCK-Pro: {name} on a node outside the clock"));
            }
            let mut n = self.clock.back().unwrap();
            while n != h {
                if kind(self.status[n as usize]) {
                    return Err(format!("CLOCK-Pro: node {n} lies behind {name}"));
                }
                n = self.toward_head(n);
            }
        }
        if self.n_hot > 0 && (self.hand_hot == NIL || self.status[self.hand_hot as usize] != Status::Hot) {
            return Err("CLOCK-Pro: HAND_hot is not on a hot page".into());
        }
        Ok(())
    }
}

impl PolicyDef for ClockPro {
    const INFO: PolicyInfo = PolicyInfo {
        name: "clock-pro",
        aliases: &["clockpro"],
        paper: "Jiang, Chen & Zhang, CLOCK-Pro, USENIX ATC 2005, §3; prefetch-aware per the prefetching paper §4",
        summary: "one clock of hot, cold and non-resident test pages, three hands, adaptive cold allocation m_c",
        params: &[
            ParamInfo {
                name: "cold-min",
                default: "1%",
                doc: "lower bound and starting value of m_c (share of the cache or a size; at least 1 block)",
                range: Range::Share(0.0, 1.0),
            },
            ParamInfo {
                name: "cold-max",
                default: "99%",
                doc: "upper bound of m_c (at most the cache minus one block)",
                range: Range::Share(0.0, 1.0),
            },
            ParamInfo {
                name: "nonresident",
                default: "1x",
                doc: "non-resident cold pages kept (the paper: m, the cache size)",
                range: Range::Share(0.0, 100.0),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let min = args.blocks("cold-min", env)? as usize;
        let max = args.blocks("cold-max", env)? as usize;
        let nonres = args.blocks("nonresident", env)? as usize;
        if min > max {
            return Err(SpecError(format!(
                "policy `clock-pro`: cold-min ({min} blocks) exceeds cold-max ({max} blocks)"
            )));
        }
        Ok(ClockPro::new(env.capacity, min, max, nonres))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn hands_follow_section_3_step_by_step() {
        // m = 4, m_c in [1, 3] starting at 1, up to 4 non-resident pages. Clock from head to
        // tail; H hot, c cold, t cold in test, n non-resident in test, * reference bit.
        let mut s = Steps::new(ClockPro::new(4, 1, 3, 4), 4);
        // Warm-up: pages are hot until m - m_c = 3 of them are; then cold in test.
        assert_eq!(s.run(&[1, 2, 3, 4]), "MMMM");
        assert_eq!(s.policy().dump(), "4t 3H 2H 1H | hot=1 cold=4 test=4 mc=1");
        // 5: HAND_cold finds 4 unreferenced -> evicted, stays as non-resident in test; 5 cold
        // in test at the head.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "5t 4n 3H 2H 1H | hot=1 cold=5 test=4 mc=1");
        // 4 faults while in its test period: 5 is evicted (non-resident); 4 turns hot at the
        // head and m_c = 2; hot pages now exceed m - m_c = 2, so HAND_hot demotes 1 then 2
        // (unreferenced) to cold pages at the head.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "2c 1c 4H 5n 3H | hot=3 cold=1 test=5 mc=2");
        assert_eq!(s.run(&[3, 1]), "HH");
        assert_eq!(s.policy().dump(), "2c 1c* 4H 5n 3H* | hot=3 cold=1 test=5 mc=2");
        // 6: HAND_cold meets 1, referenced outside a test period: bit reset, test starts, 1
        // moves to the head; then 2 (unreferenced, not in test) is evicted and forgotten.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(s.policy().dump(), "6t 1t 4H 5n 3H* | hot=3 cold=1 test=5 mc=2");
        assert_eq!(s.demand(1), 'H');
        // 7: HAND_cold meets 1, referenced in its test period: 1 turns hot, m_c = 3. HAND_hot
        // spares 3 (bit reset, moved to the head), passes 5n (test ends, removed: m_c = 2),
        // demotes 4, passes 6t (test ends unreferenced: m_c = 1) and stops at 1. HAND_cold then
        // evicts 6 (no longer in test: forgotten).
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "7t 4c 3H 1H | hot=1 cold=4 test=7 mc=1");
    }

    #[test]
    fn hand_test_ends_tests_beyond_the_non_resident_cap() {
        // m = 2, m_c = 1, one non-resident page at most.
        let mut s = Steps::new(ClockPro::new(2, 1, 1, 1), 2);
        assert_eq!(s.run(&[1, 2, 3]), "MMM");
        assert_eq!(s.policy().dump(), "3t 2n 1H | hot=1 cold=3 test=2 mc=1");
        // 4 evicts 3 (non-resident): two non-resident pages, so HAND_test ends 2's test.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "4t 3n 1H | hot=1 cold=4 test=3 mc=1");
        // 3 faults, but evicting 4 made HAND_test end 3's test first: 3 comes back cold.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().dump(), "3t 4n 1H | hot=1 cold=3 test=4 mc=1");
    }

    #[test]
    fn prefetched_pages_follow_section_4() {
        let mut s = Steps::new(ClockPro::new(4, 1, 3, 4), 4);
        assert_eq!(s.run(&[1, 2, 3]), "MMM");
        // A prefetched page: cold at the head, no test period, bit clear.
        s.prefetch(4);
        assert_eq!(s.policy().dump(), "4c 3H 2H 1H | hot=1 cold=4 test=- mc=1");
        // Its first demand is its first access: a test period starts at the head.
        assert_eq!(s.demand(4), 'H');
        assert_eq!(s.policy().dump(), "4t 3H 2H 1H | hot=1 cold=4 test=4 mc=1");
        // Prefetching 5 evicts 4 (non-resident in test).
        s.prefetch(5);
        assert_eq!(s.policy().dump(), "5c 4n 3H 2H 1H | hot=1 cold=5 test=4 mc=1");
        // Prefetching 4 evicts 5, unused: no non-resident entry. 4's entry stays as it was.
        s.prefetch(4);
        assert_eq!(s.policy().dump(), "4c 4n 3H 2H 1H | hot=1 cold=4 test=4 mc=1");
        // 4's first demand finds its entry still in test: 4 turns hot, m_c = 2, and HAND_hot
        // demotes 1 and 2 to keep m - m_c = 2 hot pages.
        assert_eq!(s.demand(4), 'H');
        assert_eq!(s.policy().dump(), "2c 1c 4H 3H | hot=3 cold=1 test=- mc=2");
    }
}
