//! S3-FIFO (Yang, Zhang, Qiu, Yue, Vinayak, SOSP 2023, §4 and Algorithm 1): a small FIFO (10%) filters
//! new blocks, a main FIFO with a 2-bit clock counter keeps the rest, a ghost FIFO of small's evictions.
//! `variant=libcachesim` adds libCacheSim's later warm-up rule (blocks go to main while small is full
//! and nothing was evicted yet); the default follows the paper, as libCacheSim's S3FIFOv0 does.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

const SMALL: u8 = 0;
const MAIN: u8 = 1;

pub struct S3Fifo {
    links: Links,
    /// Fronts are the newest (the paper's heads); evictions look at the backs (tails).
    small: List,
    main: List,
    /// Which queue each resident frame is in.
    queue: FrameVec<u8>,
    /// Demand hits since insertion or since the clock last passed (capped, §4.2: two bits in main).
    freq: FrameVec<u8>,
    small_target: usize,
    main_target: usize,
    ghosts: Ghosts,
    ghost: GhostList,
    ghost_capacity: usize,
    /// Hits in small needed to move a block to main (Algorithm 1: `freq > 1`).
    threshold: u8,
    /// libCacheSim's warm-up rule (S3FIFO.c since December 2024).
    warm_up_to_main: bool,
    /// Largest counter main's clock keeps (S3-FIFO: 3, two bits; CLOCK-2Q+: 1, one bit).
    main_counter_max: u8,
    /// CLOCK-2Q+'s correlation window: hits in small count only once this many blocks have
    /// entered small after the hit block (0: every hit counts, as in S3-FIFO).
    corr_window: f64,
    /// Blocks admitted to small so far, and each small block's admission number.
    admitted: u64,
    admitted_at: FrameVec<u64>,
    has_evicted: bool,
    /// Set by `prepare_insert` when the incoming block was a ghost: it goes to main.
    ghost_hit: bool,
}

impl S3Fifo {
    pub fn new(capacity: usize, small_ratio: f64, ghost_ratio: f64, threshold: u8, warm_up_to_main: bool) -> Self {
        // Sizes truncate as libCacheSim's (int64_t)(size * ratio) does.
        let small_target = (capacity as f64 * small_ratio) as usize;
        let ghost_capacity = (capacity as f64 * ghost_ratio) as usize;
        S3Fifo {
            links: Links::with_nodes(capacity),
            small: List::new(),
            main: List::new(),
            queue: FrameVec::filled(SMALL, capacity),
            freq: FrameVec::filled(0, capacity),
            small_target,
            main_target: capacity - small_target,
            ghosts: Ghosts::with_capacity(ghost_capacity),
            ghost: GhostList::new(),
            ghost_capacity,
            threshold,
            warm_up_to_main,
            main_counter_max: 3,
            corr_window: 0.0,
            admitted: 0,
            admitted_at: FrameVec::filled(0, capacity),
            has_evicted: false,
            ghost_hit: false,
        }
    }

    /// CLOCK-2Q+'s changes: a correlation window of `corr_window` admissions in small and a
    /// main clock whose counters stop at `main_counter_max`.
    pub(crate) fn with_clock(mut self, main_counter_max: u8, corr_window: f64) -> Self {
        self.main_counter_max = main_counter_max;
        self.corr_window = corr_window;
        self
    }

    /// Test-only view: `S=[..] M=[..] G=[..]`, newest first, `*n` after a block with freq n > 0.
    #[doc(hidden)]
    pub fn dump(&self, key_of: impl Fn(Frame) -> u64) -> String {
        let show = |l: &List| {
            self.links
                .iter(l)
                .map(|f| match self.freq[f as usize] {
                    0 => key_of(f).to_string(),
                    n => format!("{}*{n}", key_of(f)),
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let g: Vec<String> = self.ghosts.keys_of(&self.ghost).iter().map(|k| k.to_string()).collect();
        format!("S=[{}] M=[{}] G=[{}]", show(&self.small), show(&self.main), g.join(","))
    }

    /// Algorithm 1 EVICTS: blocks hit often enough in small move to main; the first other block
    /// is the victim (its key goes to the ghost queue when it is removed).
    fn evict_small(&mut self, pins: &Pins) -> Option<Frame> {
        let mut cur = self.small.back();
        while let Some(f) = cur {
            let newer = self.links.prev(f);
            if !pins.pinned(f) {
                if self.freq[f as usize] < self.threshold {
                    return Some(f);
                }
                // Moved blocks start main with a clear counter, as in libCacheSim; main may run
                // over its share until the next eviction takes from it.
                self.links.remove(&mut self.small, f);
                self.links.push_front(&mut self.main, f);
                self.queue[f as usize] = MAIN;
                self.freq[f as usize] = 0;
            }
            cur = newer;
        }
        None
    }

    /// Algorithm 1 EVICTM: a block with freq > 0 goes back to the head with freq - 1 (a 2-bit
    /// clock: counts above 3 count as 3).
    fn evict_main(&mut self, pins: &Pins) -> Option<Frame> {
        // Each pass lowers every unpinned counter by one; after four passes all are zero.
        let mut budget = 4 * self.main.len() + 1;
        let mut skipped = 0;
        while budget > 0 && skipped < self.main.len() {
            budget -= 1;
            let f = self.main.back()?;
            if pins.pinned(f) {
                skipped += 1;
                self.links.move_to_front(&mut self.main, f);
                continue;
            }
            let c = self.freq[f as usize];
            if c == 0 {
                return Some(f);
            }
            self.freq[f as usize] = c.min(self.main_counter_max) - 1;
            self.links.move_to_front(&mut self.main, f);
            skipped = 0;
        }
        None
    }

    fn remember(&mut self, key: u64) {
        if self.ghost_capacity == 0 {
            return;
        }
        if self.ghosts.len() >= self.ghost_capacity {
            self.ghosts.pop_back(&mut self.ghost);
        }
        self.ghosts.push_front(&mut self.ghost, key, ());
    }
}

impl Policy for S3Fifo {
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        self.ghost_hit = false;
        if let Some(n) = self.ghosts.find(a.key) {
            self.ghosts.remove(&mut self.ghost, n);
            // A prefetched block enters with no history (prefetching paper §4): the ghost is
            // forgotten, not used.
            self.ghost_hit = origin == Origin::Demand;
        }
    }
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        let to_main =
            self.ghost_hit || (self.warm_up_to_main && !self.has_evicted && self.small.len() >= self.small_target);
        self.ghost_hit = false;
        if to_main {
            self.links.push_front(&mut self.main, frame);
            self.queue[frame as usize] = MAIN;
        } else {
            self.admitted += 1;
            self.admitted_at[frame as usize] = self.admitted;
            self.links.push_front(&mut self.small, frame);
            self.queue[frame as usize] = SMALL;
        }
        self.freq[frame as usize] = 0;
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        let i = frame as usize;
        if self.queue[i] == SMALL && ((self.admitted - self.admitted_at[i]) as f64) < self.corr_window {
            return;
        }
        self.freq[i] = self.freq[i].saturating_add(1);
    }
    /// The first demand access of a prefetched block counts as its first access: freq stays 0.
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        self.has_evicted = true;
        // libCacheSim's S3FIFO_evict: main once it is over its share (blocks moved from small
        // push it over) or when small is empty; otherwise small.
        if self.main.len() > self.main_target || self.small.is_empty() {
            self.evict_main(pins).or_else(|| self.evict_small(pins))
        } else {
            self.evict_small(pins).or_else(|| self.evict_main(pins))
        }
    }
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        if self.queue[frame as usize] == SMALL {
            self.links.remove(&mut self.small, frame);
            // Only blocks that were demanded leave a ghost (prefetching paper §4).
            if why == Removal::Evicted {
                self.remember(key);
            }
        } else {
            self.links.remove(&mut self.main, frame);
        }
        self.freq[frame as usize] = 0;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.small)?;
        self.links.check(&self.main)?;
        self.ghosts.check(&[&self.ghost])?;
        if self.small.len() + self.main.len() != resident {
            return Err(format!(
                "S3-FIFO queues hold {} + {} frames, cache {resident}",
                self.small.len(),
                self.main.len()
            ));
        }
        for (l, q) in [(&self.small, SMALL), (&self.main, MAIN)] {
            if let Some(f) = self.links.iter(l).find(|&f| self.queue[f as usize] != q) {
                return Err(format!("S3-FIFO frame {f} is tagged with the wrong queue"));
            }
        }
        if self.ghosts.len() > self.ghost_capacity {
            return Err(format!("S3-FIFO ghost holds {} > {}", self.ghosts.len(), self.ghost_capacity));
        }
        Ok(())
    }
    fn keeps_ghosts(&self) -> bool {
        true
    }
    fn ghost_hit(&self, key: u64) -> bool {
        self.ghosts.find(key).is_some()
    }
    fn ghost_len(&self) -> usize {
        self.ghosts.len()
    }
}

impl PolicyDef for S3Fifo {
    const INFO: PolicyInfo = PolicyInfo {
        name: "s3-fifo",
        aliases: &["s3fifo"],
        paper: "S3-FIFO (Yang et al., SOSP 2023) §4, Algorithm 1",
        summary: "small FIFO filter, main FIFO with a 2-bit clock, ghost FIFO of the small queue's evictions",
        params: &[
            ParamInfo {
                name: "small",
                default: "0.1",
                doc: "share of the cache for the small FIFO, 0..1",
                range: Range::Number(0.0, 1.0),
            },
            ParamInfo {
                name: "ghost",
                default: "0.9",
                doc: "ghost entries as a share of the cache, 0..10",
                range: Range::Number(0.0, 10.0),
            },
            ParamInfo {
                name: "threshold",
                default: "2",
                doc: "hits in the small FIFO that move a block to main (Algorithm 1: freq > 1)",
                range: Range::Whole(1, 255),
            },
            ParamInfo {
                name: "variant",
                default: "paper",
                doc: "paper | libcachesim (while small is full before the first eviction, new blocks go to main)",
                range: Range::Choice(&["paper", "libcachesim"]),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let small = args.f64("small")?;
        let ghost = args.f64("ghost")?;
        let threshold = args.u64("threshold")?;
        if !(1..=255).contains(&threshold) {
            return Err(SpecError(format!("policy `s3-fifo`: threshold={threshold} must be between 1 and 255")));
        }
        let libcachesim = args.choice("variant", &["paper", "libcachesim"])? == "libcachesim";
        Ok(S3Fifo::new(env.capacity, small, ghost, threshold as u8, libcachesim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn dump(s: &Steps<S3Fifo>) -> String {
        s.policy().dump(|f| (0..100).find(|&k| s.cache.frame_of(k) == Some(f)).unwrap())
    }

    #[test]
    fn small_filters_new_blocks_and_ghosts_bring_them_to_main() {
        // 10 frames: small holds 1, main 9, ghost 9.
        let mut s = Steps::new(S3Fifo::new(10, 0.1, 0.9, 2, false), 10);
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), "MMMMMMMMMM");
        assert_eq!(s.run(&[1, 1, 2]), "HHH");
        // Small over its share: 1 (two hits) moves to main, 2 (one hit) is evicted to the ghost.
        assert_eq!(s.demand(11), 'M');
        assert_eq!(dump(&s), "S=[11,10,9,8,7,6,5,4,3] M=[1] G=[2]");
        // The ghost hit sends 2 straight to main; the victim is the next small block without hits.
        assert_eq!(s.demand(2), 'M');
        assert_eq!(dump(&s), "S=[11,10,9,8,7,6,5,4] M=[2,1] G=[3]");
    }

    #[test]
    fn main_is_a_two_bit_clock() {
        let mut s = Steps::new(S3Fifo::new(4, 0.25, 1.0, 1, false), 4);
        // Fill, then move 1, 2, 3 to main one by one with a hit each (threshold 1).
        assert_eq!(s.run(&[1, 2, 3, 4, 1, 2, 3]), "MMMMHHH");
        assert_eq!(s.demand(5), 'M');
        assert_eq!(dump(&s), "S=[5] M=[3,2,1] G=[4]");
        assert_eq!(s.run(&[1, 1, 1, 1, 2]), "HHHHH");
        // Main holds its share (3), not more: small gives up 5.
        assert_eq!(s.demand(6), 'M');
        assert_eq!(dump(&s), "S=[6] M=[3,2*1,1*4] G=[5,4]");
        // A ghost hit: small gives up 6 and 4 enters main, which is now over its share.
        assert_eq!(s.demand(4), 'M');
        assert_eq!(dump(&s), "S=[] M=[4,3,2*1,1*4] G=[6,5]");
        // Main over its share: 1 (freq 4 counts as 3) goes round with 2, 2 with 0, then 3 goes.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(dump(&s), "S=[7] M=[2,1*2,4] G=[6,5]");
    }

    #[test]
    fn libcachesim_warm_up_fills_main_when_small_is_full() {
        let mut s = Steps::new(S3Fifo::new(10, 0.2, 0.9, 2, true), 10);
        assert_eq!(s.run(&[1, 2, 3, 4]), "MMMM");
        assert_eq!(dump(&s), "S=[2,1] M=[4,3] G=[]");
    }

    #[test]
    fn unused_prefetches_leave_no_ghost() {
        let mut s = Steps::new(S3Fifo::new(4, 0.25, 1.0, 2, false), 4);
        s.prefetch(1);
        assert_eq!(s.run(&[2, 3, 4, 5]), "MMMM");
        assert_eq!(dump(&s), "S=[5,4,3,2] M=[] G=[]");
    }
}
