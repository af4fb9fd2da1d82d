//! LFU: give up the least frequently used block, the least recently used among equals.
//! MQ paper §2 (baseline). Aging, optional: `halve` divides every count by two each `period`
//! demand accesses (the periodic aging the MQ and FBR papers discuss); `dynamic` is LFU with
//! dynamic aging (priority = count + L, L set to the priority of each victim, Arlitt et al.).
//! `history` (MQ §5.1) remembers the counts of evicted blocks: a block missed again resumes
//! its count plus one. Remembered counts are not halved by aging (the MQ paper's buffer only
//! keeps them). A prefetched block enters with count 0; its first demand access makes the count 1 (§4 of
//! the prefetching paper: it counts as a first access).
//!
//! Blocks sit in priority buckets (Shah, Mitra, Matani, "An O(1) algorithm for implementing the
//! LFU cache eviction scheme", 2010; crate::buckets): a list of buckets in priority order, each a
//! list of its blocks from least to most recently used, so the victim is the first block of the
//! first bucket and a hit moves a block to the next bucket up. With dynamic aging a hit may jump
//! past several buckets; the new place is found by walking up from the old one.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::buckets::PriorityBuckets;
use crate::evicted::EvictedHistory;
use crate::frames::FrameVec;
use crate::list::NIL;
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aging {
    None,
    Halve,
    Dynamic,
}

#[derive(Clone, Copy)]
struct FrameState {
    /// Demand accesses of the block.
    count: u64,
    /// Logical time of the block's last touch: the order within a bucket, and the merge order
    /// when halving folds two buckets into one.
    last: u64,
    /// The frame's bucket.
    bucket: u32,
}

pub struct Lfu {
    aging: Aging,
    period: u64,
    next_aging: u64,
    /// Count, last touch and bucket of each resident frame, side by side: a miss or a hit
    /// reads and writes them together: one bounds check instead of three.
    per_frame: FrameVec<FrameState>,
    /// Frames by priority, least recently used first within a priority.
    buckets: PriorityBuckets,
    resident: usize,
    /// Dynamic aging's inflation value L.
    inflation: u64,
    /// Counts of evicted blocks (MQ §5.1's history buffer).
    history: EvictedHistory<u64>,
}

impl Lfu {
    #[cfg(test)]
    fn new(capacity: usize, aging: Aging, period: u64) -> Self {
        Self::with_history(capacity, aging, period, 0)
    }

    fn with_history(capacity: usize, aging: Aging, period: u64, history: usize) -> Self {
        Lfu {
            aging,
            period,
            next_aging: period,
            per_frame: FrameVec::filled(FrameState { count: 0, last: 0, bucket: NIL }, capacity),
            buckets: PriorityBuckets::with_frames(capacity),
            resident: 0,
            inflation: 0,
            history: EvictedHistory::new(history),
        }
    }

    #[inline]
    fn priority_of_count(&self, c: u64) -> u64 {
        if self.aging == Aging::Dynamic {
            c + self.inflation
        } else {
            c
        }
    }

    /// Puts `frame` (in no bucket) at the most recent end of priority `p`'s bucket.
    #[inline(always)]
    fn place(&mut self, frame: Frame, p: u64, time: u64) {
        let b = self.buckets.bucket_at_or_after(NIL, p);
        self.buckets.push_back(b, frame);
        let st = &mut self.per_frame[frame as usize];
        st.bucket = b;
        st.last = time;
    }

    /// Halves every count: buckets 2k and 2k + 1 fold into bucket k, their blocks merged by
    /// last access so the least recently used still comes first.
    fn halve(&mut self) {
        // The walk below sees every bucket but the spare, whose priority it would leave behind.
        self.buckets.settle();
        let mut prev: Option<u32> = None;
        let mut cur = self.buckets.first_bucket();
        while let Some(b) = cur {
            cur = self.buckets.next_bucket(b);
            let p = self.buckets.priority(b) / 2;
            match prev {
                Some(a) if self.buckets.priority(a) == p => {
                    self.merge_into(a, b);
                    self.buckets.drop_bucket(b);
                }
                _ => {
                    self.buckets.set_priority(b, p);
                    prev = Some(b);
                }
            }
        }
        let mut cur = self.buckets.first_bucket();
        while let Some(b) = cur {
            let mut f = self.buckets.first_frame(b);
            while let Some(x) = f {
                self.per_frame[x as usize].count /= 2;
                f = self.buckets.next_frame(x);
            }
            cur = self.buckets.next_bucket(b);
        }
    }

    /// Moves every frame of bucket `from` into bucket `into`, both ordered by last access.
    fn merge_into(&mut self, into: u32, from: u32) {
        let mut at = self.buckets.first_frame(into);
        while let Some(x) = self.buckets.first_frame(from) {
            self.buckets.detach(from, x);
            while let Some(y) = at {
                if self.per_frame[y as usize].last > self.per_frame[x as usize].last {
                    break;
                }
                at = self.buckets.next_frame(y);
            }
            match at {
                Some(y) => self.buckets.insert_before(into, y, x),
                None => self.buckets.push_back(into, x),
            }
            self.per_frame[x as usize].bucket = into;
        }
    }

    #[inline]
    fn touch(&mut self, frame: Frame, a: &Access) {
        if self.aging == Aging::Halve && a.time >= self.next_aging {
            self.next_aging = a.time - a.time % self.period + self.period;
            self.halve();
        }
        let i = frame as usize;
        let st = &mut self.per_frame[i];
        st.count += 1;
        let (count, old) = (st.count, st.bucket);
        let p = self.priority_of_count(count);
        // The priority rises, unless dynamic aging's L fell: a victim found above a pinned block
        // raises L, and the pinned block, evicted later, lowers it again (`promote` handles both).
        let b = self.buckets.promote(old, frame, p);
        let st = &mut self.per_frame[i];
        st.bucket = b;
        st.last = a.time;
    }

    /// Buckets from the lowest priority: `(priority, frames from least recently used)` (tests).
    #[cfg(test)]
    fn dump(&self) -> Vec<(u64, Vec<Frame>)> {
        self.buckets.dump().into_iter().map(|(_, p, f)| (p, f)).collect()
    }
}

impl Policy for Lfu {
    #[inline(always)]
    fn prepare_insert(&mut self, a: &Access, _origin: Origin) {
        self.history.take_for_insert(a.key);
    }

    #[inline(always)]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let i = frame as usize;
        // A prefetched block does not resume its count: it was not referenced (prefetching
        // paper §4); its entry is dropped, as an unused prefetch leaves no history.
        let remembered = self.history.inserted(a.key).filter(|_| origin == Origin::Demand).unwrap_or(0);
        self.resident += 1;
        // The frame is in no bucket, so halving (which only visits buckets) leaves it alone.
        let count = match origin {
            Origin::Demand => {
                if self.aging == Aging::Halve && a.time >= self.next_aging {
                    self.next_aging = a.time - a.time % self.period + self.period;
                    self.halve();
                }
                1 + remembered
            }
            Origin::Prefetch => 0,
        };
        self.per_frame[i].count = count;
        let p = self.priority_of_count(count);
        self.place(frame, p, a.time);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.touch(frame, a);
    }
    #[inline(always)]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let (x, b) = self.buckets.first_unskipped(|f| pins.pinned(f))?;
        if self.aging == Aging::Dynamic {
            self.inflation = self.buckets.priority(b);
        }
        Some(x)
    }
    #[inline(always)]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let st = self.per_frame[frame as usize];
        if why == Removal::Evicted && st.count > 0 {
            self.history.remember(key, st.count);
        }
        self.buckets.leave(st.bucket, frame);
        let st = &mut self.per_frame[frame as usize];
        st.bucket = NIL;
        st.count = 0;
        self.resident -= 1;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.history.check()?;
        self.buckets.check()?;
        let mut n = 0;
        for (b, p, frames) in self.buckets.dump() {
            let mut t = 0;
            for f in frames {
                if self.per_frame[f as usize].bucket != b {
                    return Err(format!(
                        "LFU frame {f} is in bucket {b} but says {}",
                        self.per_frame[f as usize].bucket
                    ));
                }
                if self.per_frame[f as usize].last < t {
                    return Err(format!("LFU bucket {p}: frame {f} is out of recency order"));
                }
                t = self.per_frame[f as usize].last;
                if self.aging != Aging::Dynamic && self.per_frame[f as usize].count != p {
                    return Err(format!("LFU frame {f}: count {} in bucket {p}", self.per_frame[f as usize].count));
                }
                n += 1;
            }
        }
        if n != resident || self.resident != resident {
            return Err(format!("LFU orders {n} frames (counts {}), cache {resident}", self.resident));
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
            ParamInfo {
                name: "aging",
                default: "none",
                doc: "none | halve (halve all counts every `period` accesses) | dynamic (LFU-DA)",
                range: Range::Choice(&["none", "halve", "dynamic"]),
            },
            ParamInfo {
                name: "period",
                default: "100000",
                doc: "demand accesses between halvings (aging=halve)",
                range: Range::Whole(1, u64::MAX),
            },
            ParamInfo {
                name: "history",
                default: "0",
                doc: "evicted blocks whose counts are remembered (MQ §5.1 used 4x the cache)",
                range: Range::Share(0.0, 100.0),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
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
        let history = super::shares::blocks_floor(args, "lfu", "history", env)?;
        Ok(Lfu::with_history(env.capacity, aging, period, history))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn frames(s: &Steps<Lfu>, keys: &[u64]) -> Vec<Frame> {
        keys.iter().map(|&k| s.cache.frame_of(k).unwrap()).collect()
    }

    #[test]
    fn hits_move_blocks_one_bucket_up_and_empty_buckets_go() {
        let mut s = Steps::new(Lfu::new(3, Aging::None, 100), 3);
        assert_eq!(s.run(&[1, 2, 3, 2, 1, 1]), "MMMHHH");
        let f = frames(&s, &[1, 2, 3]);
        // counts: 3 -> 1, 2 -> 2, 1 -> 3.
        assert_eq!(s.policy().dump(), vec![(1, vec![f[2]]), (2, vec![f[1]]), (3, vec![f[0]])]);
        // 3 goes; 4 enters bucket 1.
        assert_eq!(s.demand(4), 'M');
        let f4 = s.cache.frame_of(4).unwrap();
        assert_eq!(s.policy().dump(), vec![(1, vec![f4]), (2, vec![f[1]]), (3, vec![f[0]])]);
        // 2 joins 1 in bucket 3, as its most recent block.
        assert_eq!(s.demand(2), 'H');
        assert_eq!(s.policy().dump(), vec![(1, vec![f4]), (3, vec![f[0], f[1]])]);
    }

    #[test]
    fn halving_folds_buckets_and_keeps_recency_order() {
        let mut s = Steps::new(Lfu::new(3, Aging::Halve, 6), 3);
        // Counts before the halving at time 6: 1 -> 2 (last at 3), 2 -> 3 (at 4), 3 -> 1 (at 5).
        assert_eq!(s.run(&[1, 2, 2, 1, 2, 3]), "MMHHHM");
        let f = frames(&s, &[1, 2, 3]);
        // Time 6: halve to 1 -> 1, 2 -> 1, 3 -> 0, then the hit on 3 makes it 1, most recent.
        assert_eq!(s.demand(3), 'H');
        assert_eq!(s.policy().dump(), vec![(1, vec![f[0], f[1], f[2]])]);
    }

    #[test]
    fn history_resumes_an_evicted_blocks_count() {
        // MQ §5.1: with a history buffer a block evicted with count 3 comes back with 4.
        let mut s = Steps::new(Lfu::with_history(2, Aging::None, 100, 8), 2);
        assert_eq!(s.run(&[1, 1, 1, 2, 3, 4]), "MHHMMM");
        // 2 went (count 1), then 3 (count 1); 1 (count 3) stayed. Evict 1 by filling with
        // blocks of higher counts is not possible, so check 2's return: count 1 + 1 = 2.
        assert_eq!(s.demand(2), 'M');
        let f = frames(&s, &[1, 2]);
        assert_eq!(s.policy().dump(), vec![(2, vec![f[1]]), (3, vec![f[0]])]);
        let mut plain = Steps::new(Lfu::new(2, Aging::None, 100), 2);
        assert_eq!(plain.run(&[1, 1, 1, 2, 3, 4, 2]), "MHHMMMM");
        let g = frames(&plain, &[1, 2]);
        assert_eq!(plain.policy().dump(), vec![(1, vec![g[1]]), (3, vec![g[0]])]);
    }

    #[test]
    fn dynamic_aging_jumps_over_buckets() {
        let mut s = Steps::new(Lfu::new(2, Aging::Dynamic, 100), 2);
        assert_eq!(s.run(&[1, 1, 1, 2, 3]), "MHHMM");
        // 2 (priority 1) was the victim: L = 1; 3 entered at 1 + 1 = 2, 1 keeps 3.
        let f = frames(&s, &[1, 3]);
        assert_eq!(s.policy().dump(), vec![(2, vec![f[1]]), (3, vec![f[0]])]);
        assert_eq!(s.demand(4), 'M');
        // 3 went with L = 2; 4 enters at 3, after 1 in the same bucket.
        let f4 = s.cache.frame_of(4).unwrap();
        assert_eq!(s.policy().dump(), vec![(3, vec![f[0], f4])]);
        // A hit on 4: count 2 + L 2 = 4.
        assert_eq!(s.demand(4), 'H');
        assert_eq!(s.policy().dump(), vec![(3, vec![f[0]]), (4, vec![f4])]);
    }
}
