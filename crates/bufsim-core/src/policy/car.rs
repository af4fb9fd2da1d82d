//! CAR (Bansal & Modha, "CAR: Clock with Adaptive Replacement", FAST 2004, §III, Fig. 2),
//! prefetch-aware as in the prefetching paper §4 ("ARC/CAR"). Deviation: none.
//!
//! T1 and T2 are clocks of resident pages (seen once / seen at least twice recently) with one
//! reference bit each; B1 and B2 are LRU ghost lists; p is the target size of T1. A hit only
//! sets the bit. On a miss with the cache full, replace() sweeps T1 while |T1| >= max(1, p)
//! (a referenced head moves to T2's tail) and T2 otherwise (a referenced head goes round);
//! then the directory is trimmed and p adapts on a ghost hit.
//!
//! Prefetching: a prefetched page enters T1's tail with its bit clear; its first demand access
//! is its first access (the bit stays clear). A prefetched page found in B1/B2 enters T1 too;
//! the directory hit is deferred to its first demand, which moves it to T2's tail and adapts p.
//! A prefetched page evicted unused leaves no ghost.

use super::car_clocks::{Clocks, Ghost};
use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Car {
    s: Clocks,
    /// Target size of T1.
    p: f64,
}

impl Car {
    pub fn new(capacity: usize) -> Self {
        Car { s: Clocks::new(capacity), p: 0.0 }
    }

    /// `T1: head..tail | T2: head..tail | B1: MRU..LRU | B2: MRU..LRU | p`, `*` = bit set.
    pub fn dump(&self) -> String {
        let s = &self.s;
        let mark = |i: usize| format!("{}{}", s.keys[i], if s.referenced[i] { "*" } else { "" });
        format!(
            "T1: {} | T2: {} | B1: {} | B2: {} | p={}",
            s.clock_text(&s.t1, mark),
            s.clock_text(&s.t2, mark),
            s.ghost_text(&s.b1),
            s.ghost_text(&s.b2),
            self.p
        )
    }

    /// Fig. 2 lines 15 and 18: p = min(p + max(1, |B2|/|B1|), c) or max(p - max(1, |B1|/|B2|), 0).
    fn adapt(&mut self, which: Ghost) {
        let (b1, b2) = (self.s.b1.len() as f64, self.s.b2.len() as f64);
        match which {
            Ghost::B1 => self.p = (self.p + (b2 / b1.max(1.0)).max(1.0)).min(self.s.c as f64),
            Ghost::B2 => self.p = (self.p - (b1 / b2.max(1.0)).max(1.0)).max(0.0),
            Ghost::None => {}
        }
    }
}

impl Policy for Car {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.s.look_up(a.key);
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        // Prefetching paper §4: a prefetched ghost joins T1; its directory hit waits for a
        // demand access.
        let hit = self.s.begin_insert(frame, a.key, origin == Origin::Prefetch);
        let s = &mut self.s;
        // Fig. 2 lines 6-9: cache directory replacement. The figure trims only when the cache
        // is full; a cache with a free frame holds ghosts only after the trace dropped data, and
        // then the same trim keeps |T1|+|B1| <= c and the directory <= 2c.
        if hit == Ghost::None {
            if s.t1.len() + s.b1.len() >= s.c && !s.b1.is_empty() {
                s.ghosts.pop_back(&mut s.b1);
            } else if s.t1.len() + s.t2.len() + s.b1.len() + s.b2.len() >= 2 * s.c {
                s.ghosts.pop_back(&mut s.b2);
            }
        }
        match hit {
            // Line 13: insert x at the tail of T1 with its bit clear.
            Ghost::None => self.s.push_tail(frame, false),
            // Lines 14-19: adapt p, then move x to the tail of T2 with its bit clear.
            which => {
                self.adapt(which);
                self.s.forget(self.s.incoming_node);
                self.s.push_tail(frame, true);
            }
        }
        self.s.end_insert();
    }

    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.s.referenced[frame as usize] = true;
    }

    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        let which = std::mem::replace(&mut self.s.deferred[frame as usize], Ghost::None);
        if which != Ghost::None {
            self.adapt(which);
            self.s.unlink(frame);
            self.s.push_tail(frame, true);
        }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let s = &mut self.s;
        // replace(): every page is passed at most twice (once to clear its bit).
        let mut budget = 2 * (s.t1.len() + s.t2.len()) + 2;
        while budget > 0 {
            budget -= 1;
            let from_t1 = s.t1.len() as f64 >= self.p.max(1.0);
            let head = if from_t1 { s.t1.back() } else { s.t2.back() };
            let Some(h) = head else { break };
            if pins.pinned(h) {
                // The hand passes a pinned page; it keeps its bit.
                s.pass(h);
                continue;
            }
            if !s.referenced[h as usize] {
                // Lines 27/34: demote the head to the MRU end of B1/B2 (done in `remove`).
                return Some(h);
            }
            // Line 29: T1's referenced head moves to T2's tail; line 36: T2's goes round.
            s.unlink(h);
            s.push_tail(h, true);
        }
        back_unpinned(&s.links, &s.t1, pins).or_else(|| back_unpinned(&s.links, &s.t2, pins))
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.s.demote(frame, key, why);
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        let s = &self.s;
        s.check("CAR")?;
        let lens = [s.t1.len(), s.t2.len(), s.b1.len(), s.b2.len()];
        super::arc::check_directory("CAR", lens, s.c, self.p, resident)
    }
}

impl PolicyDef for Car {
    const INFO: PolicyInfo = PolicyInfo {
        name: "car",
        aliases: &[],
        paper: "Bansal & Modha, CAR, FAST 2004, §III Fig. 2; prefetch-aware per the prefetching paper §4",
        summary: "ARC with clocks: T1/T2 with reference bits, LRU ghosts B1/B2, adaptive target p",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Car::new(env.capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn follows_figure_2_step_by_step() {
        let mut s = Steps::new(Car::new(3), 3);
        assert_eq!(s.run(&[1, 2, 3, 1]), "MMMH");
        assert_eq!(s.policy().dump(), "T1: 1* 2 3 | T2:  | B1:  | B2:  | p=0");
        // 4: replace(): |T1| = 3 >= max(1, 0): head 1 is referenced -> T2's tail, bit cleared;
        // head 2 unreferenced -> MRU of B1. No trimming (|T1|+|B1| = 2, total 3).
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1: 3 4 | T2: 1 | B1: 2 | B2:  | p=0");
        // 2 in B1: replace() demotes 3; p = min(0 + max(1, 0/2), 3) = 1; 2 to T2's tail.
        assert_eq!(s.demand(2), 'M');
        assert_eq!(s.policy().dump(), "T1: 4 | T2: 1 2 | B1: 3 | B2:  | p=1");
        // 5: |T1| = 1 >= max(1, 1): 4 to B1.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "T1: 5 | T2: 1 2 | B1: 4 3 | B2:  | p=1");
        assert_eq!(s.run(&[1, 2]), "HH");
        // 6: 5 to B1, then |T1|+|B1| = 3 = c: the LRU page of B1 (3) is discarded.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(s.policy().dump(), "T1: 6 | T2: 1* 2* | B1: 5 4 | B2:  | p=1");
        // 4 in B1: 6 to B1; p = min(1 + max(1, 0/3), 3) = 2; 4 to T2's tail.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1:  | T2: 1* 2* 4 | B1: 6 5 | B2:  | p=2");
        // 7: |T1| = 0 < max(1, 2): T2's referenced heads 1 and 2 go round (bits cleared), 4 is
        // demoted to B2.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "T1: 7 | T2: 1 2 | B1: 6 5 | B2: 4 | p=2");
        // 4 in B2: |T1| = 1 < 2 so 1 goes to B2; p = max(2 - max(1, 2/2), 0) = 1.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1: 7 | T2: 2 4 | B1: 6 5 | B2: 1 | p=1");
        // 8: 7 to B1, |T1|+|B1| = 3 -> discard 5.
        assert_eq!(s.run(&[8, 8]), "MH");
        assert_eq!(s.policy().dump(), "T1: 8* | T2: 2 4 | B1: 7 6 | B2: 1 | p=1");
        // 9: 8 is referenced -> T2's tail; |T1| = 0 so T2's head 2 goes to B2; the directory
        // holds 2c = 6 -> B2's LRU page 1 is discarded.
        assert_eq!(s.demand(9), 'M');
        assert_eq!(s.policy().dump(), "T1: 9 | T2: 4 8 | B1: 7 6 | B2: 2 | p=1");
    }

    #[test]
    fn prefetched_pages_follow_section_4() {
        let mut s = Steps::new(Car::new(3), 3);
        assert_eq!(s.run(&[1, 1, 2]), "MHM");
        s.prefetch(3);
        assert_eq!(s.policy().dump(), "T1: 1* 2 3 | T2:  | B1:  | B2:  | p=0");
        // 4: 1 (referenced) to T2, 2 to B1.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1: 3 4 | T2: 1 | B1: 2 | B2:  | p=0");
        // 5: the head 3 was prefetched and never demanded: evicted without a ghost.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "T1: 4 5 | T2: 1 | B1: 2 | B2:  | p=0");
        // Prefetching 2 (in B1): 4 goes to B1; 2 leaves B1 for T1's tail, p unchanged.
        s.prefetch(2);
        assert_eq!(s.policy().dump(), "T1: 5 2 | T2: 1 | B1: 4 | B2:  | p=0");
        // Its first demand is the deferred directory hit: p = 1, 2 to T2's tail.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(s.policy().dump(), "T1: 5 | T2: 1 2 | B1: 4 | B2:  | p=1");
        // A plain prefetched page's first demand leaves its bit clear (a first access).
        // 6 replaces 5 (to B1).
        s.prefetch(6);
        assert_eq!(s.demand(6), 'H');
        assert_eq!(s.policy().dump(), "T1: 6 | T2: 1 2 | B1: 5 4 | B2:  | p=1");
    }
}
