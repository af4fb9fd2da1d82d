//! CLOCK-2Q+ (Zhai et al., "Clock2Q+: A Simple and Efficient Replacement Algorithm for Metadata Cache in
//! VMware vSAN", arXiv 2511.21958, 2025, §3): S3-FIFO's three queues, but hits on the newest blocks of small
//! (its correlation window) do not count, and main is a one-bit CLOCK. Rules as libCacheSim's Clock2QPlus.c
//! (its authors' code): the window counts admissions to small; main fills first while the cache warms up.

use super::s3_fifo::S3Fifo;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

/// The small FIFO, ghost and victim rules are S3-FIFO's ([`S3Fifo`]); this type only sets them up.
pub struct Clock2QPlus(S3Fifo);

impl Clock2QPlus {
    pub fn new(capacity: usize, small: f64, ghost: f64, threshold: u8, window: f64) -> Self {
        let s3 = S3Fifo::new(capacity, small, ghost, threshold, true);
        // The window is a share of small's size, as corr-window-ratio in libCacheSim.
        let small_blocks = (capacity as f64 * small) as usize as f64;
        Clock2QPlus(s3.with_clock(1, small_blocks * window))
    }
}

impl Policy for Clock2QPlus {
    #[inline]
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        self.0.prepare_insert(a, origin)
    }
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.0.insert(frame, a, origin)
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.0.hit(frame, a)
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.0.first_demand(frame, a)
    }
    #[inline]
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame> {
        self.0.victim(pins, incoming)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        self.0.remove(frame, key, why)
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.0.check(resident)
    }
    fn keeps_ghosts(&self) -> bool {
        true
    }
    fn ghost_hit(&self, key: u64) -> bool {
        self.0.ghost_hit(key)
    }
    fn ghost_len(&self) -> usize {
        self.0.ghost_len()
    }
}

impl PolicyDef for Clock2QPlus {
    const INFO: PolicyInfo = PolicyInfo {
        name: "clock2q+",
        aliases: &["clock2qplus", "clock-2q+"],
        paper: "CLOCK-2Q+ (Zhai et al., arXiv 2511.21958, 2025) §3; rules as libCacheSim's Clock2QPlus",
        summary: "S3-FIFO's queues with a correlation window in small and a one-bit CLOCK main",
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
                default: "1",
                doc: "counted hits in small that move a block to main",
                range: Range::Whole(1, 255),
            },
            ParamInfo {
                name: "window",
                default: "0.5",
                doc: "correlation window as a share of the small FIFO, 0..1",
                range: Range::Number(0.0, 1.0),
            },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let small = args.f64("small")?;
        let ghost = args.f64("ghost")?;
        let window = args.f64("window")?;
        let threshold = args.u64("threshold")?;
        if !(1..=255).contains(&threshold) {
            return Err(SpecError(format!("policy `clock2q+`: threshold={threshold} must be between 1 and 255")));
        }
        Ok(Clock2QPlus::new(env.capacity, small, ghost, threshold as u8, window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    fn dump(s: &Steps<Clock2QPlus>) -> String {
        s.policy().0.dump(|f| (0..100).find(|&k| s.cache.frame_of(k) == Some(f)).unwrap())
    }

    #[test]
    fn hits_inside_the_correlation_window_do_not_count() {
        // 20 frames: small 4, window 2 admissions; main 16.
        let mut s = Steps::new(Clock2QPlus::new(20, 0.2, 1.0, 1, 0.5), 20);
        assert_eq!(s.run(&[1, 2]), "MM");
        // 2 is the newest admission (0 since), 1 has one after it: both inside the window.
        assert_eq!(s.run(&[2, 1]), "HH");
        assert_eq!(s.run(&[3, 4, 1]), "MMH");
        // 1 now has three admissions after it: this hit counts; 2's earlier hit did not.
        assert_eq!(dump(&s), "S=[4,3,2,1*1] M=[] G=[]");
    }

    #[test]
    fn main_is_a_one_bit_clock() {
        let mut s = Steps::new(Clock2QPlus::new(10, 0.2, 1.0, 1, 0.0), 10);
        // Small fills (2), then main takes the rest while the cache warms up.
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), "MMMMMMMMMM");
        assert_eq!(dump(&s), "S=[2,1] M=[10,9,8,7,6,5,4,3] G=[]");
        assert_eq!(s.run(&[3, 3, 3, 1]), "HHHH");
        // Small (2 <= 2 blocks, main 8 <= 8) gives first: 1 moves to main, 2 leaves for the ghost.
        assert_eq!(s.demand(11), 'M');
        assert_eq!(dump(&s), "S=[11] M=[1,10,9,8,7,6,5,4,3*3] G=[2]");
        // Main is over its share: 3 goes round once with its bit cleared, then 4 leaves.
        assert_eq!(s.demand(12), 'M');
        assert_eq!(dump(&s), "S=[12,11] M=[3,1,10,9,8,7,6,5] G=[2]");
    }
}
