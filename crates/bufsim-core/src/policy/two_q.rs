//! 2Q: Johnson and Shasha, "2Q: A Low Overhead High Performance Buffer Management Replacement Algorithm", VLDB 1994, §2 "full version" (A1in FIFO, A1out ghost FIFO, Am LRU), with the prefetch rules of the prefetching paper §4.
//! Deviations: none in the rules; Kin and Kout given as shares of the cache round down (as libCacheSim does).
//!
//! Full 2Q (§2.2, Figure 2):
//!   on an access to X: X in Am -> move X to the head of Am; X in A1out -> reclaimfor(X), add X
//!   to the head of Am; X in A1in -> do nothing; otherwise reclaimfor(X), add X to the head of
//!   A1in.
//!   reclaimfor: a free slot if any; else if |A1in| > Kin page out the tail of A1in and put its
//!   identifier at the head of A1out (dropping A1out's tail beyond Kout); else page out the tail
//!   of Am and remember nothing of it.
//! A block found in A1out stops counting against Kout as soon as it is requested, before the
//! victim is chosen (libCacheSim removes it at that point), and A1out never drops it meanwhile.
//!
//! Prefetching (prefetching paper §4): a prefetched block enters A1in; its first demand access
//! leaves it there as a first access; evicted from A1in before any demand it is discarded, not
//! put in A1out; a prefetched block found in A1out is promoted into Am as if demanded.

use super::queue::back_unpinned;
use super::shares::{blocks_floor, blocks_floor_within};
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::nonresident::NonResident;
use crate::policy::{Capabilities, Limit, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Queue {
    A1in,
    Am,
}

pub struct TwoQ {
    kin: usize,
    kout: usize,
    links: Links,
    /// FIFO of blocks seen once, newest at the front.
    a1in: List,
    /// LRU of blocks re-referenced after leaving A1in, most recent at the front.
    am: List,
    queue: FrameVec<Queue>,
    /// Identifiers of blocks paged out of A1in, newest at the front.
    a1out: NonResident,
    out_links: Links,
    out_order: List,
    /// A1out entry of the block being inserted: it goes to Am. It stays in A1out (not counted
    /// against Kout) until the block is placed, so an abandoned insertion keeps it.
    incoming: Option<u32>,
}

impl TwoQ {
    pub fn new(capacity: usize, kin: usize, kout: usize) -> Self {
        TwoQ {
            kin,
            kout,
            links: Links::with_nodes(capacity),
            a1in: List::new(),
            am: List::new(),
            queue: FrameVec::filled(Queue::A1in, capacity),
            a1out: NonResident::with_capacity(kout),
            out_links: Links::default(),
            out_order: List::new(),
            incoming: None,
        }
    }

    /// Test-only view: `A1in=[..] Am=[..] A1out=[..]`, fronts first (newest / most recent).
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let show = |l: &List| self.links.iter(l).map(|f| key_of(f).to_string()).collect::<Vec<_>>().join(",");
        let out: Vec<String> = self.out_links.iter(&self.out_order).map(|id| self.a1out.key(id).to_string()).collect();
        format!("A1in=[{}] Am=[{}] A1out=[{}]", show(&self.a1in), show(&self.am), out.join(","))
    }

    fn forget_oldest(&mut self) {
        let mut z = self.out_order.back();
        if z.is_some() && z == self.incoming {
            z = self.out_links.prev(z.unwrap());
        }
        if let Some(z) = z {
            self.out_links.remove(&mut self.out_order, z);
            self.a1out.remove(z);
        }
    }

    fn remember(&mut self, key: u64) {
        if self.kout == 0 {
            return;
        }
        if self.a1out.len() - self.incoming.is_some() as usize >= self.kout {
            self.forget_oldest();
        }
        let id = self.a1out.add(key);
        while self.out_links.len() < self.a1out.ids() {
            self.out_links.push_node();
        }
        self.out_links.push_front(&mut self.out_order, id);
    }
}

impl Policy for TwoQ {
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        // An insertion abandoned after its victim was chosen may have left one entry too many.
        self.incoming = None;
        while self.a1out.len() > self.kout {
            self.forget_oldest();
        }
        // Demand or prefetch alike (prefetching paper §4): a block in A1out goes to Am.
        self.incoming = self.a1out.get(a.key);
    }

    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        let q = match self.incoming.take() {
            Some(id) => {
                self.out_links.remove(&mut self.out_order, id);
                self.a1out.remove(id);
                Queue::Am
            }
            None => Queue::A1in,
        };
        self.queue[frame as usize] = q;
        match q {
            Queue::Am => self.links.push_front(&mut self.am, frame),
            Queue::A1in => self.links.push_front(&mut self.a1in, frame),
        }
    }

    fn hit(&mut self, frame: Frame, _a: &Access) {
        // A hit in A1in does nothing: correlated references are not evidence of reuse.
        if self.queue[frame as usize] == Queue::Am {
            self.links.move_to_front(&mut self.am, frame);
        }
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        // In A1in it stays put (a first access); in Am (promoted from A1out) it is an access.
        self.hit(frame, a);
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if self.a1in.len() > self.kin {
            back_unpinned(&self.links, &self.a1in, pins).or_else(|| back_unpinned(&self.links, &self.am, pins))
        } else {
            back_unpinned(&self.links, &self.am, pins).or_else(|| back_unpinned(&self.links, &self.a1in, pins))
        }
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        match self.queue[frame as usize] {
            Queue::A1in => {
                self.links.remove(&mut self.a1in, frame);
                // An unused prefetch leaves no trace (prefetching paper §4).
                if why == Removal::Evicted {
                    self.remember(key);
                }
            }
            // Am's victims are not remembered: they have not been used for a while.
            Queue::Am => self.links.remove(&mut self.am, frame),
        }
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.a1in)?;
        self.links.check(&self.am)?;
        self.out_links.check(&self.out_order)?;
        self.a1out.check()?;
        if self.a1in.len() + self.am.len() != resident {
            return Err(format!("2Q holds {} + {} frames, cache {resident}", self.a1in.len(), self.am.len()));
        }
        if self.a1out.len() > self.kout + self.incoming.is_some() as usize || self.a1out.len() != self.out_order.len() {
            return Err(format!(
                "2Q A1out holds {} ({} listed), Kout {}",
                self.a1out.len(),
                self.out_order.len(),
                self.kout
            ));
        }
        for f in self.links.iter(&self.a1in) {
            if self.queue[f as usize] != Queue::A1in {
                return Err(format!("2Q: frame {f} in A1in marked {:?}", self.queue[f as usize]));
            }
        }
        Ok(())
    }
}

impl PolicyDef for TwoQ {
    const INFO: PolicyInfo = PolicyInfo {
        name: "2q",
        aliases: &["twoq"],
        paper: "Johnson, Shasha, 2Q: a low overhead high performance buffer management replacement algorithm, VLDB 1994 §2 (full version); prefetching paper §4",
        summary: "A1in FIFO for first references, A1out ghost FIFO, Am LRU for blocks re-referenced after leaving A1in",
        params: &[
            ParamInfo { name: "kin", default: "25%", doc: "Kin: A1in may exceed this before it gives up blocks (share of the cache, rounded down, or a size)", range: Range::Cache(Limit::AtMost) },
            ParamInfo { name: "kout", default: "50%", doc: "Kout: identifiers A1out remembers (share of the cache, rounded down, or a size)", range: Range::Share(0.0, 100.0) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let kin = blocks_floor_within(args, "2q", "kin", env, "A1in is part of the cache")?;
        let kout = blocks_floor(args, "2q", "kout", env)?;
        Ok(TwoQ::new(env.capacity, kin, kout))
    }
}
