//! Segmented LRU (Karedla, Love, Wherry, IEEE Computer 27(3) 1994, "Segmented LRU"; n segments as in
//! S4LRU, Huang et al., SOSP 2013 §5.2): misses enter the lowest segment, a hit moves a block one
//! segment up, each overflowing segment demotes its LRU block one segment down; the cache evicts from the
//! lowest. `variant=libcachesim` inserts into the lowest segment with room while the cache fills, as SLRU.c does.

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

/// Segments at most (libCacheSim's SLRU_MAX_N_SEG).
const MAX_SEGMENTS: usize = 16;

pub struct Slru {
    links: Links,
    /// Segment 0 is the probationary one; higher segments are more protected. Fronts are MRU.
    /// Fixed arrays inside the policy, not vectors: a hit reaches its segments without a
    /// pointer chase, and indices masked to the array size need no bounds check.
    segs: [List; MAX_SEGMENTS],
    /// Each segment's share; the shares sum to the capacity.
    max: [usize; MAX_SEGMENTS],
    /// The most protected segment.
    top: usize,
    seg_of: FrameVec<u8>,
    fill_lowest_with_room: bool,
}

impl Slru {
    /// `weights` are relative segment sizes, lowest segment first.
    pub fn new(capacity: usize, weights: &[u64], fill_lowest_with_room: bool) -> Self {
        let total: u64 = weights.iter().sum();
        // Truncated shares as libCacheSim's (int64_t)(w / sum * size); the remainder goes to the
        // probationary segment so the shares add up to the cache (libCacheSim leaves it unassigned).
        assert!((1..=MAX_SEGMENTS).contains(&weights.len()), "SLRU takes 1 to {MAX_SEGMENTS} segments");
        let mut max = [0; MAX_SEGMENTS];
        for (m, &w) in max.iter_mut().zip(weights) {
            *m = (w as f64 / total as f64 * capacity as f64) as usize;
        }
        let assigned: usize = max.iter().sum();
        max[0] += capacity - assigned;
        Slru {
            links: Links::with_nodes(capacity),
            segs: [List::new(); MAX_SEGMENTS],
            max,
            top: weights.len() - 1,
            seg_of: FrameVec::filled(0, capacity),
            fill_lowest_with_room,
        }
    }

    /// Test-only view: segments from the most protected down, MRU first: `[..|..]`.
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let segs: Vec<String> = self.segs[..=self.top]
            .iter()
            .rev()
            .map(|l| self.links.iter(l).map(|f| key_of(f).to_string()).collect::<Vec<_>>().join(","))
            .collect();
        format!("[{}]", segs.join("|"))
    }

    #[inline(always)]
    fn put(&mut self, frame: Frame, seg: usize) {
        self.links.push_front(&mut self.segs[seg % MAX_SEGMENTS], frame);
        self.seg_of[frame as usize] = seg as u8;
    }

    /// The segment of a resident frame (masked: always below MAX_SEGMENTS, so no bounds check).
    #[inline(always)]
    fn seg(&self, frame: Frame) -> usize {
        self.seg_of[frame as usize] as usize % MAX_SEGMENTS
    }
}

impl Policy for Slru {
    #[inline(always)]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        let seg = if self.fill_lowest_with_room {
            (0..=self.top).find(|&i| self.segs[i].len() < self.max[i]).unwrap_or(0)
        } else {
            0
        };
        self.put(frame, seg);
    }
    #[inline(always)]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        let s = self.seg(frame);
        if s == self.top {
            self.links.move_to_front(&mut self.segs[s], frame);
            return;
        }
        self.links.remove(&mut self.segs[s], frame);
        let up = (s + 1) % MAX_SEGMENTS;
        self.put(frame, up);
        // Overflow cascades down, each full segment handing its LRU block to the one below,
        // but it stops at once: segment s just gave up the promoted block, so taking one back
        // leaves it as full as before, within its share (the probationary segment has none).
        // So at most one block falls. A hit never evicts.
        if self.segs[up].len() > self.max[up] {
            let f = self.links.pop_back(&mut self.segs[up]).expect("an overflowing segment has a block");
            self.put(f, s);
        }
        debug_assert!(s == 0 || self.segs[s].len() <= self.max[s]);
    }
    /// The first demand access of a prefetched block counts as its first access: no promotion.
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        self.segs[..=self.top].iter().find_map(|l| back_unpinned(&self.links, l, pins))
    }
    #[inline(always)]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        let s = self.seg(frame);
        self.links.remove(&mut self.segs[s], frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        let mut n = 0;
        for (i, l) in self.segs[..=self.top].iter().enumerate() {
            self.links.check(l)?;
            if i > 0 && l.len() > self.max[i] {
                return Err(format!("SLRU segment {i} holds {} > {}", l.len(), self.max[i]));
            }
            if let Some(f) = self.links.iter(l).find(|&f| self.seg_of[f as usize] as usize != i) {
                return Err(format!("SLRU frame {f} in segment {i} is tagged {}", self.seg_of[f as usize]));
            }
            n += l.len();
        }
        if n != resident {
            return Err(format!("SLRU segments hold {n} frames, cache {resident}"));
        }
        Ok(())
    }
}

impl PolicyDef for Slru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "slru",
        aliases: &["segmented-lru"],
        paper: "Segmented LRU (Karedla, Love, Wherry, IEEE Computer 1994); n segments as S4LRU (Huang et al., SOSP 2013 §5.2)",
        summary: "LRU segments: misses enter the lowest, hits climb one segment, overflow falls one segment",
        params: &[
            ParamInfo { name: "segments", default: "4", doc: "number of equal segments, 1..16 (ignored when `sizes` is given)", range: Range::Whole(1, 16) },
            ParamInfo { name: "sizes", default: "", doc: "relative segment sizes from probationary up, e.g. 1:3 (Karedla's probationary + protected)", range: Range::Text("empty, or relative segment sizes from probationary up such as 1:3") },
            ParamInfo { name: "variant", default: "paper", doc: "paper | libcachesim (while the cache fills, new blocks go to the lowest segment with room)", range: Range::Choice(&["paper", "libcachesim"]) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let sizes = args.text("sizes");
        let weights: Vec<u64> = if sizes.is_empty() {
            let n = args.u64("segments")?;
            if !(1..=MAX_SEGMENTS as u64).contains(&n) {
                return Err(SpecError(format!("policy `slru`: segments={n} must be between 1 and {MAX_SEGMENTS}")));
            }
            vec![1; n as usize]
        } else {
            let parsed: Option<Vec<u64>> = sizes.split(':').map(|w| w.trim().parse().ok().filter(|&w| w > 0)).collect();
            match parsed {
                Some(w) if w.len() <= MAX_SEGMENTS => w,
                _ => {
                    return Err(SpecError(format!(
                        "policy `slru`: sizes=`{sizes}` must be 1 to {MAX_SEGMENTS} whole numbers > 0 separated by `:`, e.g. 1:3"
                    )))
                }
            }
        };
        let libcachesim = args.choice("variant", &["paper", "libcachesim"])? == "libcachesim";
        Ok(Slru::new(env.capacity, &weights, libcachesim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn dump(s: &Steps<Slru>) -> String {
        s.policy().dump(|f| (0..100).find(|&k| s.cache.frame_of(k) == Some(f)).unwrap())
    }

    #[test]
    fn hits_climb_and_overflow_falls_one_segment() {
        // Karedla's two segments: probationary 2, protected 2.
        let mut s = Steps::new(Slru::new(4, &[1, 1], false), 4);
        assert_eq!(s.run(&[1, 2, 3, 4]), "MMMM");
        assert_eq!(dump(&s), "[|4,3,2,1]");
        assert_eq!(s.run(&[1, 2, 3]), "HHH");
        // 3 overflowed protected: its LRU block 1 fell back to probationary's MRU end.
        assert_eq!(dump(&s), "[3,2|1,4]");
        assert_eq!(s.demand(5), 'M');
        assert_eq!(dump(&s), "[3,2|5,1]");
        assert_eq!(s.run(&[3, 1]), "HH");
        assert_eq!(dump(&s), "[1,3|2,5]");
    }

    #[test]
    fn libcachesim_fills_the_lowest_segment_with_room() {
        let mut s = Steps::new(Slru::new(4, &[1, 1], true), 4);
        assert_eq!(s.run(&[1, 2, 3, 4]), "MMMM");
        assert_eq!(dump(&s), "[4,3|2,1]");
        assert_eq!(s.run(&[5, 4]), "MH");
        assert_eq!(dump(&s), "[4,3|5,2]");
    }

    #[test]
    fn bad_sizes_are_explained() {
        let env = BuildEnv { capacity: 8, block_size: 4096, seed: 1 };
        for spec in ["slru(sizes=1:x)", "slru(sizes=0:1)", "slru(segments=0)", "slru(segments=17)"] {
            let e = crate::policy::build(spec, &env).err().unwrap().to_string();
            assert!(e.contains("policy `slru`"), "{spec}: {e}");
        }
    }
}
