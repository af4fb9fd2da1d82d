//! The lists CAR and CART share (Bansal & Modha, "CAR: Clock with Adaptive Replacement", FAST
//! 2004, §III and §IV): two clocks of resident pages, T1 and T2, with a reference bit per page,
//! and the directory of LRU ghost lists B1 and B2, with the prefetching paper's §4 deferral of a
//! prefetched page's directory hit to its first demand access. What differs between the two,
//! how replace() walks the clocks and how the directory is trimmed, stays in car.rs and cart.rs.

use super::{Frame, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};

/// Where a page's key was found in the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ghost {
    None,
    B1,
    B2,
}

pub(super) struct Clocks {
    pub(super) c: usize,
    pub(super) links: Links,
    /// Clocks cut open at the hand: back = head (the hand looks here next), front = tail.
    pub(super) t1: List,
    pub(super) t2: List,
    pub(super) in_t2: FrameVec<bool>,
    pub(super) referenced: FrameVec<bool>,
    /// A prefetched page's directory hit, waiting for its first demand access.
    pub(super) deferred: FrameVec<Ghost>,
    pub(super) keys: FrameVec<u64>,
    /// LRU ghost lists, front = MRU; each entry's payload says whether it is in B2.
    pub(super) ghosts: Ghosts<bool>,
    pub(super) b1: GhostList,
    pub(super) b2: GhostList,
    /// The incoming block's directory entry, found before replace().
    pub(super) incoming: Ghost,
    pub(super) incoming_node: u32,
}

impl Clocks {
    pub(super) fn new(capacity: usize) -> Self {
        Clocks {
            c: capacity,
            links: Links::with_nodes(capacity),
            t1: List::new(),
            t2: List::new(),
            in_t2: FrameVec::filled(false, capacity),
            referenced: FrameVec::filled(false, capacity),
            deferred: FrameVec::filled(Ghost::None, capacity),
            keys: FrameVec::filled(0, capacity),
            // replace() can add one ghost before the directory is trimmed; one more spare, and
            // `demote` never overflows the arena.
            ghosts: Ghosts::with_capacity(capacity + 2),
            b1: GhostList::new(),
            b2: GhostList::new(),
            incoming: Ghost::None,
            incoming_node: 0,
        }
    }

    /// Looks the incoming key up in the directory (before replace() changes it).
    pub(super) fn look_up(&mut self, key: u64) {
        self.incoming = Ghost::None;
        if let Some(node) = self.ghosts.find(key) {
            self.incoming = if self.ghosts.data(node) { Ghost::B2 } else { Ghost::B1 };
            self.incoming_node = node;
        }
    }

    /// Starts the insertion of `frame` for `key`: the directory hit it counts now, which for a
    /// prefetched page is none (its hit is deferred to the first demand, and its key leaves the
    /// directory at once).
    pub(super) fn begin_insert(&mut self, frame: Frame, key: u64, prefetched: bool) -> Ghost {
        let f = frame as usize;
        self.keys[f] = key;
        self.deferred[f] = Ghost::None;
        let hit = self.incoming;
        if hit != Ghost::None && prefetched {
            self.forget(self.incoming_node);
            self.deferred[f] = hit;
            return Ghost::None;
        }
        hit
    }

    pub(super) fn end_insert(&mut self) {
        self.incoming = Ghost::None;
    }

    /// Drops a directory entry.
    pub(super) fn forget(&mut self, node: u32) {
        if self.ghosts.data(node) {
            self.ghosts.remove(&mut self.b2, node);
        } else {
            self.ghosts.remove(&mut self.b1, node);
        }
    }

    /// Puts `frame` at the tail of T1 or T2 with its bit clear.
    pub(super) fn push_tail(&mut self, frame: Frame, t2: bool) {
        let f = frame as usize;
        self.in_t2[f] = t2;
        self.referenced[f] = false;
        if t2 {
            self.links.push_front(&mut self.t2, frame);
        } else {
            self.links.push_front(&mut self.t1, frame);
        }
    }

    pub(super) fn unlink(&mut self, frame: Frame) {
        if self.in_t2[frame as usize] {
            self.links.remove(&mut self.t2, frame);
        } else {
            self.links.remove(&mut self.t1, frame);
        }
    }

    /// The hand passes `frame` (a pinned head): it goes round its clock with its bits untouched.
    pub(super) fn pass(&mut self, frame: Frame) {
        if self.in_t2[frame as usize] {
            self.links.move_to_front(&mut self.t2, frame);
        } else {
            self.links.move_to_front(&mut self.t1, frame);
        }
    }

    /// Takes `frame` out of its clock; an evicted page's key goes to the MRU end of B1 or B2, a
    /// prefetched page evicted unused leaves no ghost.
    pub(super) fn demote(&mut self, frame: Frame, key: u64, why: Removal) {
        let f = frame as usize;
        self.unlink(frame);
        self.deferred[f] = Ghost::None;
        self.referenced[f] = false;
        if !why.remembered() {
            return;
        }
        if self.ghosts.len() == self.ghosts.capacity() {
            // Unreachable through the cache (see `new`); keeps the arena bounded regardless.
            let list = if self.in_t2[f] { &mut self.b2 } else { &mut self.b1 };
            self.ghosts.pop_back(list);
        }
        if self.in_t2[f] {
            self.ghosts.push_front(&mut self.b2, key, true);
        } else {
            self.ghosts.push_front(&mut self.b1, key, false);
        }
    }

    /// The lists are well formed and every page sits in the clock it says.
    pub(super) fn check(&self, name: &str) -> Result<(), String> {
        self.links.check(&self.t1)?;
        self.links.check(&self.t2)?;
        self.ghosts.check(&[&self.b1, &self.b2])?;
        for (l, t2) in [(&self.t1, false), (&self.t2, true)] {
            if let Some(f) = self.links.iter(l).find(|&f| self.in_t2[f as usize] != t2) {
                return Err(format!("{name}: frame {f} in the wrong clock"));
            }
        }
        Ok(())
    }

    /// A clock from head to tail, each page as `mark` prints it.
    pub(super) fn clock_text(&self, l: &List, mark: impl Fn(usize) -> String) -> String {
        let mut v: Vec<String> = self.links.iter(l).map(|f| mark(f as usize)).collect();
        v.reverse();
        v.join(" ")
    }

    /// A ghost list from MRU to LRU.
    pub(super) fn ghost_text(&self, l: &GhostList) -> String {
        self.ghosts.keys_of(l).iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" ")
    }
}
