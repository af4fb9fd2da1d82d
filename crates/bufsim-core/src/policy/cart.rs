//! CART (Bansal & Modha, "CAR: Clock with Adaptive Replacement", FAST 2004, §IV "CAR with Temporal
//! filtering", Fig. 3), prefetch-aware as CAR (prefetching paper §4). Deviation: none (p is real-valued, as in car.rs).
//!
//! CAR's clocks T1/T2 and ghost lists B1/B2, plus a filter bit per resident page: S (short-term
//! utility) or L (long-term utility); nS and nL count them. New pages enter T1 as S; pages back
//! from B1/B2 enter T1 as L. replace() first moves referenced heads of T2 to T1's tail, then
//! walks T1: a referenced head goes round (and turns L once |T1| >= min(p+1, |B1|)), an
//! unreferenced L head moves to T2; so T1's head ends as an unreferenced S page. That page goes
//! to B1 if |T1| >= max(1, p), else T2's head goes to B2. q, the target size of B1, decides which
//! ghost list loses its oldest key when the directory would exceed c.
//!
//! Prefetching: as CAR. A prefetched page enters T1's tail as S with its bit clear; a prefetched
//! ghost leaves B1/B2 at once and its history hit (adapt p, filter L, q) waits for the first
//! demand access. A prefetched page evicted unused leaves no ghost. Pinned pages are passed.

use super::car_clocks::{Clocks, Ghost};
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Cart {
    s: Clocks,
    /// The filter bit: true = L (long-term utility), false = S.
    long_term: FrameVec<bool>,
    n_s: usize,
    n_l: usize,
    /// Target size of T1.
    p: f64,
    /// Target size of B1.
    q: usize,
}

impl Cart {
    pub fn new(capacity: usize) -> Self {
        Cart { s: Clocks::new(capacity), long_term: FrameVec::filled(false, capacity), n_s: 0, n_l: 0, p: 0.0, q: 0 }
    }

    /// `T1: head..tail | T2: .. | B1: MRU..LRU | B2: .. | p q nS nL`; a page prints as its key,
    /// `L` for a long-term filter bit, `*` for a set reference bit.
    pub fn dump(&self) -> String {
        let s = &self.s;
        let mark = |i: usize| {
            format!(
                "{}{}{}",
                s.keys[i],
                if self.long_term[i] { "L" } else { "" },
                if s.referenced[i] { "*" } else { "" }
            )
        };
        format!(
            "T1: {} | T2: {} | B1: {} | B2: {} | p={} q={} nS={} nL={}",
            s.clock_text(&s.t1, mark),
            s.clock_text(&s.t2, mark),
            s.ghost_text(&s.b1),
            s.ghost_text(&s.b2),
            self.p,
            self.q,
            self.n_s,
            self.n_l
        )
    }

    fn set_long_term(&mut self, frame: Frame) {
        let f = frame as usize;
        if !self.long_term[f] {
            self.long_term[f] = true;
            self.n_s -= 1;
            self.n_l += 1;
        }
    }

    /// Fig. 3: "if |T2| + |B2| + |T1| - nS >= c then q = min(q + 1, 2c - |T1|)".
    fn maybe_raise_q(&mut self) {
        let s = &self.s;
        if s.t2.len() + s.b2.len() + s.t1.len() - self.n_s >= s.c {
            self.q = (self.q + 1).min(2 * s.c - s.t1.len());
        }
    }

    /// Fig. 3's history hit, lines "Adapt": p = min(p + max(1, nS/|B1|), c) for a key in B1,
    /// p = max(p - max(1, nL/|B2|), 0) for one in B2.
    fn adapt(&mut self, which: Ghost) {
        let (b1, b2) = (self.s.b1.len() as f64, self.s.b2.len() as f64);
        match which {
            Ghost::B1 => self.p = (self.p + (self.n_s as f64 / b1.max(1.0)).max(1.0)).min(self.s.c as f64),
            Ghost::B2 => self.p = (self.p - (self.n_l as f64 / b2.max(1.0)).max(1.0)).max(0.0),
            Ghost::None => {}
        }
    }
}

impl Policy for Cart {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.s.look_up(a.key);
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let f = frame as usize;
        // Prefetching paper §4: the history hit waits for a demand access.
        let hit = self.s.begin_insert(frame, a.key, origin == Origin::Prefetch);
        if hit == Ghost::None {
            let s = &mut self.s;
            // History replacement: the directory holds at most c keys after each step (a cache
            // with a free frame holds ghosts only after the trace dropped data: same rule).
            while s.b1.len() + s.b2.len() > s.c {
                if s.b1.len() > self.q || s.b2.is_empty() {
                    s.ghosts.pop_back(&mut s.b1);
                } else {
                    s.ghosts.pop_back(&mut s.b2);
                }
            }
            // History miss: x enters T1's tail as an S page with its bit clear.
            self.long_term[f] = false;
            self.n_s += 1;
            self.s.push_tail(frame, false);
        } else {
            // History hit: adapt p (x still counted in its ghost list), then x enters T1's tail
            // as an L page; for a B2 hit q may grow.
            self.adapt(hit);
            self.s.forget(self.s.incoming_node);
            self.long_term[f] = true;
            self.n_l += 1;
            self.s.push_tail(frame, false);
            if hit == Ghost::B2 {
                self.maybe_raise_q();
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
            self.s.push_tail(frame, false);
            self.set_long_term(frame);
            if which == Ghost::B2 {
                self.maybe_raise_q();
            }
        }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // Every page is moved at most a few times per call (bit cleared, S->L, T1->T2); pinned
        // heads are passed, and the budget ends the search when only pinned pages remain.
        let mut budget = 4 * (self.s.t1.len() + self.s.t2.len()) + 4;
        while budget > 0 {
            // Referenced heads of T2 go to T1's tail.
            while let Some(h) = self.s.t2.back() {
                if !self.s.referenced[h as usize] || budget == 0 {
                    break;
                }
                budget -= 1;
                self.s.unlink(h);
                self.s.push_tail(h, false);
                self.maybe_raise_q();
            }
            // T1's head goes round while referenced or long-term.
            while let Some(h) = self.s.t1.back() {
                let i = h as usize;
                if !(self.long_term[i] || self.s.referenced[i]) || budget == 0 {
                    break;
                }
                budget -= 1;
                let s = &mut self.s;
                if s.referenced[i] {
                    s.links.move_to_front(&mut s.t1, h);
                    s.referenced[i] = false;
                    if s.t1.len() as f64 >= (self.p + 1.0).min(s.b1.len() as f64) && !self.long_term[i] {
                        self.set_long_term(h);
                    }
                } else {
                    s.unlink(h);
                    s.push_tail(h, true);
                    self.q = self.q.saturating_sub(1).max(s.c.saturating_sub(s.t1.len()));
                }
            }
            let s = &mut self.s;
            let from_t1 = s.t1.len() as f64 >= self.p.max(1.0);
            let head = if from_t1 { s.t1.back() } else { s.t2.back() };
            let h = head.or_else(|| s.t1.back()).or_else(|| s.t2.back())?;
            if !pins.pinned(h) {
                return Some(h);
            }
            // The hand passes a pinned page with its bits untouched.
            budget = budget.saturating_sub(1);
            s.pass(h);
        }
        let s = &self.s;
        let unpinned = |l: &crate::list::List| s.links.iter(l).filter(|&f| !pins.pinned(f)).last();
        unpinned(&s.t1).or_else(|| unpinned(&s.t2))
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        if self.long_term[frame as usize] {
            self.n_l -= 1;
        } else {
            self.n_s -= 1;
        }
        self.s.demote(frame, key, why);
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        let s = &self.s;
        s.check("CART")?;
        if s.t1.len() + s.t2.len() != resident {
            return Err(format!("CART: |T1| + |T2| = {}, cache {resident}", s.t1.len() + s.t2.len()));
        }
        if s.b1.len() + s.b2.len() > s.c {
            return Err(format!("CART: |B1| + |B2| = {} > c = {}", s.b1.len() + s.b2.len(), s.c));
        }
        if !(0.0..=s.c as f64).contains(&self.p) || self.q > 2 * s.c {
            return Err(format!("CART: p = {} or q = {} out of range", self.p, self.q));
        }
        let mut short = 0;
        for f in s.links.iter(&s.t1).chain(s.links.iter(&s.t2)) {
            let i = f as usize;
            if s.in_t2[i] && !self.long_term[i] {
                return Err(format!("CART: S page {} in T2", s.keys[i]));
            }
            short += usize::from(!self.long_term[i]);
        }
        if short != self.n_s || self.n_s + self.n_l != resident {
            return Err(format!("CART: nS = {} nL = {}, counted {short} S pages of {resident}", self.n_s, self.n_l));
        }
        Ok(())
    }

    fn keeps_ghosts(&self) -> bool {
        true
    }

    fn ghost_hit(&self, key: u64) -> bool {
        self.s.ghosts.find(key).is_some()
    }

    fn ghost_len(&self) -> usize {
        self.s.ghosts.len()
    }
}

impl PolicyDef for Cart {
    const INFO: PolicyInfo = PolicyInfo {
        name: "cart",
        aliases: &[],
        paper: "Bansal & Modha, CAR, FAST 2004, §IV Fig. 3 (CART); prefetch-aware per the prefetching paper §4",
        summary: "CAR with temporal filtering: S/L filter bits keep short-term pages out of T2; adaptive p and q",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Cart::new(env.capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn follows_figure_3_step_by_step() {
        let mut s = Steps::new(Cart::new(3), 3);
        assert_eq!(s.run(&[1, 2, 3, 1]), "MMMH");
        // 4: T1's head 1 is referenced: it goes round with its bit cleared and, as |T1| = 3 >=
        // min(p+1, |B1|) = 0, turns L. Head 2 (S, clear) goes to B1.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1: 3 1L 4 | T2:  | B1: 2 | B2:  | p=0 q=0 nS=2 nL=1");
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "T1: 1L 4 5 | T2:  | B1: 3 2 | B2:  | p=0 q=0 nS=2 nL=1");
        // 2 in B1: replace() moves the unreferenced L head 1 to T2 (q = max(q-1, c-|T1|) = 1) and
        // demotes 4; p = min(0 + max(1, nS/|B1| = 1/3), 3) = 1; 2 enters T1's tail as L.
        assert_eq!(s.demand(2), 'M');
        assert_eq!(s.policy().dump(), "T1: 5 2L | T2: 1L | B1: 4 3 | B2:  | p=1 q=1 nS=1 nL=2");
        // 1 is hit in T2; at 6 it is T2's referenced head and moves to T1's tail (|T2|+|B2|+|T1|
        // - nS = 2 < c: q stays); 5 goes to B1.
        assert_eq!(s.run(&[1, 6]), "HM");
        assert_eq!(s.policy().dump(), "T1: 2L 1L 6 | T2:  | B1: 5 4 3 | B2:  | p=1 q=1 nS=1 nL=2");
        // 7: 2 and 1 (L, clear) go to T2 (q = 1, then 2); 6 goes to B1; the directory now holds
        // c+1 keys and |B1| = 4 > q, so B1's oldest key, 3, is forgotten.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "T1: 7 | T2: 2L 1L | B1: 6 5 4 | B2:  | p=1 q=2 nS=1 nL=2");
        assert_eq!(s.demand(8), 'M');
        assert_eq!(s.policy().dump(), "T1: 8 | T2: 2L 1L | B1: 7 6 5 | B2:  | p=1 q=2 nS=1 nL=2");
        // 5 in B1: 8 goes to B1; p = min(1 + max(1, 0/4), 3) = 2.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "T1: 5L | T2: 2L 1L | B1: 8 7 6 | B2:  | p=2 q=2 nS=0 nL=3");
        // 9: 5 (L) goes to T2, q = max(1, 3) = 3; |T1| = 0 < max(1, p): T2's head 2 goes to B2;
        // the directory holds c+1 and |B1| = 3 is not above q: B2's oldest key (2) goes.
        assert_eq!(s.demand(9), 'M');
        assert_eq!(s.policy().dump(), "T1: 9 | T2: 1L 5L | B1: 8 7 6 | B2:  | p=2 q=3 nS=1 nL=2");
        // 7 in B1: |T1| = 1 < max(1, 2): T2's head 1 goes to B2; p = min(2 + max(1, 1/3), 3) = 3.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(s.policy().dump(), "T1: 9 7L | T2: 5L | B1: 8 6 | B2: 1 | p=3 q=3 nS=1 nL=2");
        // 1 in B2: 5 goes to B2; p = max(3 - max(1, nL/|B2| = 1/2), 0) = 2; 1 enters T1 as L;
        // |T2|+|B2|+|T1| - nS = 3 >= c: q = min(q+1, 2c-|T1|) = 3.
        assert_eq!(s.demand(1), 'M');
        assert_eq!(s.policy().dump(), "T1: 9 7L 1L | T2:  | B1: 8 6 | B2: 5 | p=2 q=3 nS=1 nL=2");
        // 9 hit, then 11: 9 goes round and turns L (|T1| = 3 >= min(3, |B1| = 2)); 7, 1, 9 move
        // to T2 (q ends at max(q-1, c) = 3); T2's head 7 goes to B2, and B2's oldest (5) is
        // forgotten since |B1| = 2 is not above q.
        assert_eq!(s.run(&[9, 11]), "HM");
        assert_eq!(s.policy().dump(), "T1: 11 | T2: 1L 9L | B1: 8 6 | B2: 7 | p=2 q=3 nS=1 nL=2");
    }

    #[test]
    fn prefetched_pages_follow_section_4() {
        let mut s = Steps::new(Cart::new(3), 3);
        assert_eq!(s.run(&[1, 1, 2]), "MHM");
        s.prefetch(3);
        assert_eq!(s.demand(4), 'M');
        assert_eq!(s.policy().dump(), "T1: 3 1L 4 | T2:  | B1: 2 | B2:  | p=0 q=0 nS=2 nL=1");
        // 5: the head 3 was prefetched and never demanded: evicted without a ghost.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().dump(), "T1: 1L 4 5 | T2:  | B1: 2 | B2:  | p=0 q=0 nS=2 nL=1");
        // Prefetching 2 (in B1): 1 moves to T2, 4 goes to B1; 2 leaves B1 and enters T1 as S.
        s.prefetch(2);
        assert_eq!(s.policy().dump(), "T1: 5 2 | T2: 1L | B1: 4 | B2:  | p=0 q=1 nS=2 nL=1");
        // Its first demand is the deferred history hit: p = min(0 + max(1, 2/1), 3) = 2, 2 -> L.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(s.policy().dump(), "T1: 5 2L | T2: 1L | B1: 4 | B2:  | p=2 q=1 nS=1 nL=2");
    }
}
