//! GreedyDual-Size (Cao & Irani, USENIX USITS 1997) / LANDLORD (Young), as the storage-aware
//! caching paper §2.1 describes it: each block has credit H = L + cost/size; the victim has the least
//! H and L becomes its H; a hit restores the full credit (GDS). Deviation: none; blocks are one
//! cache block each (size 1), cost comes from `Access::cost` (1.0 until device costs exist).
//!
//! Ties in H go to the block touched longest ago, so with uniform costs GDS is exactly LRU.
//! Prefetching (prefetching paper §4): a prefetched block enters with full credit (the MRU
//! side); its first demand access restores the credit as a first access would; no history.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::heap::IndexedHeap;
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Gds {
    /// Min-heap on (bits of H, touch sequence): H >= 0, so its IEEE bits order like its value.
    order: IndexedHeap<(u64, u64)>,
    /// The inflation value L.
    inflation: f64,
    seq: u64,
    keys: FrameVec<u64>,
}

impl Gds {
    pub fn new(capacity: usize) -> Self {
        Gds { order: IndexedHeap::with_nodes(capacity), inflation: 0.0, seq: 0, keys: FrameVec::filled(0, capacity) }
    }

    pub fn inflation(&self) -> f64 {
        self.inflation
    }

    /// Resident blocks with their credit H, lowest first (tests and dumps).
    pub fn credits(&self) -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, u64, u64)> =
            self.order.nodes().map(|f| (self.order.key(f).0, self.order.key(f).1, self.keys[f as usize])).collect();
        v.sort_unstable();
        v.into_iter().map(|(h, _, k)| (k, f64::from_bits(h))).collect()
    }

    /// H = L + cost/size, with size one block.
    #[inline]
    fn credit(&mut self, frame: Frame, a: &Access) {
        let cost = if a.cost.is_finite() && a.cost > 0.0 { a.cost } else { 0.0 };
        let h = self.inflation + cost;
        self.seq += 1;
        self.order.set(frame, (h.to_bits(), self.seq));
    }
}

impl Policy for Gds {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, _origin: Origin) {
        self.keys[frame as usize] = a.key;
        self.credit(frame, a);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.credit(frame, a);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.credit(frame, a);
    }
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let top = self.order.peek()?;
        if !pins.pinned(top) {
            return Some(top);
        }
        // Rare (read-ahead pins a group): the least credit among unpinned blocks.
        self.order.nodes().filter(|&f| !pins.pinned(f)).min_by_key(|&f| self.order.key(f))
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
        // L = H of the block given up (evicted: a block whose data the trace dropped was not
        // chosen, so it says nothing of the values still cached).
        if why != Removal::Dropped {
            self.inflation = f64::from_bits(self.order.key(frame).0);
        }
        self.order.remove(frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.order.check()?;
        if self.order.len() != resident {
            return Err(format!("GDS orders {} frames, cache {resident}", self.order.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Gds {
    const INFO: PolicyInfo = PolicyInfo {
        name: "gds",
        aliases: &["greedydual-size"],
        paper: "Cao & Irani GreedyDual-Size (1997) / Young's LANDLORD, storage-aware caching paper §2.1 (DULO §3.4 orders sequences with it); `landlord` runs it with device costs",
        summary: "credit H = L + cost/size, evict the least H and set L to it, a hit restores full credit",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Gds::new(env.capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    #[test]
    fn costly_blocks_keep_their_credit() {
        // 2 blocks; (block, cost): L starts at 0.
        let mut s = Steps::new(Gds::new(2), 2);
        let go = |s: &mut Steps<Gds>, key: u64, cost: f64| {
            let a = Access { cost, ..s.access(key) };
            s.demand_access(a)
        };
        // 1 (cost 2): H1 = 2; 2 (cost 1): H2 = 1
        assert_eq!(go(&mut s, 1, 2.0), 'M');
        assert_eq!(go(&mut s, 2, 1.0), 'M');
        // 3: the least credit is 2 (H = 1): L = 1, H3 = 2
        assert_eq!(go(&mut s, 3, 1.0), 'M');
        assert_eq!(s.policy().credits(), vec![(1, 2.0), (3, 2.0)]);
        // 1 hit: full credit again, H1 = L + 2 = 3
        assert_eq!(go(&mut s, 1, 2.0), 'H');
        // 4: 3 goes (H = 2): L = 2, H4 = 3
        assert_eq!(go(&mut s, 4, 1.0), 'M');
        assert_eq!(s.policy().credits(), vec![(1, 3.0), (4, 3.0)]);
        // 5 (cost 3): tie at H = 3, the block touched longest ago (1) goes: L = 3, H5 = 6
        assert_eq!(go(&mut s, 5, 3.0), 'M');
        // 2: 4 goes (H = 3): H2 = 4; 6: 2 goes (H = 4): L = 4, H6 = 5. The costly 5 stays.
        assert_eq!(go(&mut s, 2, 1.0), 'M');
        assert_eq!(go(&mut s, 6, 1.0), 'M');
        assert_eq!(s.policy().credits(), vec![(6, 5.0), (5, 6.0)]);
        assert_eq!(s.policy().inflation(), 4.0);
    }

    #[test]
    fn prefetched_blocks_enter_with_full_credit() {
        let mut s = Steps::new(Gds::new(2), 2);
        assert_eq!(s.run(&[1, 2, 3]), "MMM");
        // L = 1 (block 1 went with H = 1); a prefetched 4 evicts 2 (H = 1), enters with H = 2.
        s.prefetch(4);
        assert_eq!(s.policy().credits(), vec![(3, 2.0), (4, 2.0)]);
        // Its first demand is a first access: credit L + cost again, now the newest.
        assert_eq!(s.demand(4), 'H');
        assert_eq!(s.demand(5), 'M');
        assert_eq!(s.policy().credits(), vec![(4, 2.0), (5, 3.0)]);
    }
}
