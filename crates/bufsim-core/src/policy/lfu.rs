//! LFU: give up the least frequently used block, the least recently used among equals.
//! MQ paper §2 (baseline). Aging, optional: `halve` divides every count by two each `period`
//! demand accesses (the periodic aging the MQ and FBR papers discuss); `dynamic` is LFU with
//! dynamic aging (priority = count + L, L set to the priority of each victim, Arlitt et al.).
//! A prefetched block enters with count 0; its first demand access makes the count 1 (§4 of
//! the prefetching paper: it counts as a first access).

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::heap::IndexedHeap;
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aging {
    None,
    Halve,
    Dynamic,
}

pub struct Lfu {
    aging: Aging,
    period: u64,
    next_aging: u64,
    /// Demand accesses of each resident block.
    count: Vec<u64>,
    /// Min-heap on (priority, last access time): the victim is the top.
    order: IndexedHeap<(u64, u64)>,
    /// Dynamic aging's inflation value L.
    inflation: u64,
}

impl Lfu {
    #[inline]
    fn priority(&self, frame: Frame) -> u64 {
        let c = self.count[frame as usize];
        if self.aging == Aging::Dynamic { c + self.inflation } else { c }
    }

    #[inline]
    fn touch(&mut self, frame: Frame, a: &Access) {
        if self.aging == Aging::Halve && a.time >= self.next_aging {
            self.next_aging = a.time - a.time % self.period + self.period;
            for &f in self.order.nodes() {
                self.count[f as usize] /= 2;
            }
            // With halving the priority is the count itself; recency ties are kept.
            self.order.rekey_all(|(c, t)| (c / 2, t));
        }
        self.count[frame as usize] += 1;
        let p = self.priority(frame);
        self.order.set(frame, (p, a.time));
    }
}

impl Policy for Lfu {
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.count[frame as usize] = 0;
        match origin {
            Origin::Demand => self.touch(frame, a),
            Origin::Prefetch => {
                let p = self.priority(frame);
                self.order.set(frame, (p, a.time));
            }
        }
    }
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let top = self.order.peek()?;
        let v = if !pins.pinned(top) {
            top
        } else {
            // While read-ahead pins a group (whose count-0 blocks sit at the top): the smallest
            // unpinned key, found below the pinned nodes only.
            self.order.min_unskipped(|f| pins.pinned(f))?
        };
        if self.aging == Aging::Dynamic {
            self.inflation = self.order.key(v).0;
        }
        Some(v)
    }
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.order.remove(frame);
        self.count[frame as usize] = 0;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.order.check()?;
        if self.order.len() != resident {
            return Err(format!("LFU orders {} frames, cache {resident}", self.order.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Lfu {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lfu",
        aliases: &[],
        paper: "least frequently used; MQ paper §2 baseline, with optional aging",
        summary: "evicts the block with the fewest demand accesses (LRU among equals)",
        params: &[
            ParamInfo { name: "aging", default: "none", doc: "none | halve (halve all counts every `period` accesses) | dynamic (LFU-DA)" },
            ParamInfo { name: "period", default: "100000", doc: "demand accesses between halvings (aging=halve)" },
        ],
        preset_of: None,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let aging = match args.choice("aging", &["none", "halve", "dynamic"])? {
            "halve" => Aging::Halve,
            "dynamic" => Aging::Dynamic,
            _ => Aging::None,
        };
        let period = args.u64("period")?;
        if period == 0 {
            return Err(SpecError("policy `lfu`: period must be at least 1".into()));
        }
        Ok(Lfu {
            aging,
            period,
            next_aging: period,
            count: vec![0; env.capacity],
            order: IndexedHeap::with_nodes(env.capacity),
            inflation: 0,
        })
    }
}
