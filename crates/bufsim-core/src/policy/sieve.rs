//! SIEVE (Zhang et al., NSDI 2024, §3 and Figure 2): one FIFO queue, a visited bit per block and a
//! hand that moves from the oldest block towards the newest, clearing bits, and stays where it evicted.
//! No deviation; libCacheSim's Sieve follows the same rules (the hand wraps to the tail when it passes the head).

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Sieve {
    links: Links,
    /// Front = newest (the paper's head), back = oldest (its tail).
    queue: List,
    visited: FrameVec<bool>,
    /// The next frame the hand examines; `None` means start again from the tail (§3: the hand
    /// wraps around from the head).
    hand: Option<Frame>,
}

impl Sieve {
    pub fn new(capacity: usize) -> Self {
        Sieve {
            links: Links::with_nodes(capacity),
            queue: List::new(),
            visited: FrameVec::filled(false, capacity),
            hand: None,
        }
    }

    /// Frames from newest to oldest with their visited bits, and the hand (tests and dumps).
    pub fn dump(&self) -> (Vec<(Frame, bool)>, Option<Frame>) {
        (self.links.iter(&self.queue).map(|f| (f, self.visited[f as usize])).collect(), self.hand)
    }
}

// The miss path's methods are always inlined into the cache's, as ARC's and LFU's are: as
// calls they saved and restored registers on every miss.
impl Policy for Sieve {
    #[inline(always)]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        // New blocks go to the head without the visited bit (§3); a prefetched block likewise.
        self.visited[frame as usize] = false;
        self.links.push_front(&mut self.queue, frame);
    }
    #[inline(always)]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.visited[frame as usize] = true;
    }
    /// The first demand access of a prefetched block is its first access: no visited bit
    /// (prefetching paper §4).
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    #[inline(always)]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // Two passes clear every bit; a third finds an unpinned block if there is one.
        let mut budget = 2 * self.queue.len() + 1;
        let mut f = self.hand.or(self.queue.back())?;
        while budget > 0 {
            budget -= 1;
            if !pins.pinned(f) {
                if !self.visited[f as usize] {
                    self.hand = Some(f);
                    return Some(f);
                }
                self.visited[f as usize] = false;
            }
            f = match self.links.prev(f) {
                Some(p) => p,
                None => self.queue.back()?,
            };
        }
        self.hand = Some(f);
        None
    }
    #[inline(always)]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        // The hand stays where the victim was: on its newer neighbour (§3).
        if self.hand == Some(frame) {
            self.hand = self.links.prev(frame);
        }
        self.links.remove(&mut self.queue, frame);
        self.visited[frame as usize] = false;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.queue)?;
        if self.queue.len() != resident {
            return Err(format!("SIEVE queue holds {} frames, cache {resident}", self.queue.len()));
        }
        if let Some(h) = self.hand {
            if !self.links.iter(&self.queue).any(|f| f == h) {
                return Err(format!("SIEVE hand {h} is not in the queue"));
            }
        }
        Ok(())
    }
}

impl PolicyDef for Sieve {
    const INFO: PolicyInfo = PolicyInfo {
        name: "sieve",
        aliases: &[],
        paper: "SIEVE (Zhang, Yang, Yue, Vigfusson, Rashmi, NSDI 2024) §3",
        summary: "FIFO queue with a visited bit and a hand that sweeps from the oldest block and stays put",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Sieve::new(env.capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn keys(s: &Steps<Sieve>) -> (Vec<(u64, bool)>, Option<u64>) {
        let (q, hand) = s.policy().dump();
        let key = |f: Frame| (0..100).find(|&k| s.cache.frame_of(k) == Some(f)).unwrap();
        (q.into_iter().map(|(f, v)| (key(f), v)).collect(), hand.map(key))
    }

    #[test]
    fn hand_clears_bits_and_stays_where_it_evicted() {
        let mut s = Steps::new(Sieve::new(4), 4);
        assert_eq!(s.run(&[1, 2, 3, 4, 1, 3]), "MMMMHH");
        // head [4 3* 2 1*] tail; the hand starts at the tail: clears 1, evicts 2.
        assert_eq!(s.demand(5), 'M');
        assert_eq!(keys(&s), (vec![(5, false), (4, false), (3, true), (1, false)], Some(3)));
        // The hand resumes at 3 (clears it) and evicts 4, not the older 1.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(keys(&s), (vec![(6, false), (5, false), (3, false), (1, false)], Some(5)));
        // Unvisited blocks just behind the head go next: the hand moves towards the head.
        assert_eq!(s.run(&[7, 8]), "MM");
        assert_eq!(keys(&s), (vec![(8, false), (7, false), (3, false), (1, false)], Some(7)));
        // With 7 and 8 visited the hand clears both, passes the head and wraps to the tail.
        assert_eq!(s.run(&[7, 8, 9]), "HHM");
        assert_eq!(keys(&s), (vec![(9, false), (8, false), (7, false), (3, false)], Some(3)));
    }

    #[test]
    fn a_prefetched_block_needs_a_hit_after_its_first_demand() {
        let mut s = Steps::new(Sieve::new(2), 2);
        s.prefetch(1);
        assert_eq!(s.run(&[1, 2, 3]), "HMM");
        // 1's first demand set no bit, so 1 went first.
        assert_eq!(keys(&s).0, vec![(3, false), (2, false)]);
    }
}
