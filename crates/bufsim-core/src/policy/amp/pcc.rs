//! PCC's counter-based pattern detector (Gniady, Butt, Hu, OSDI '04), as the AMP paper describes
//! and uses it (AMP, UCB/CSD-05-1379, §2.2; §4.2 "PCC*": PCC's detector with AMP's manager).
//! Deviation: the paper gives no threshold value; ours is the `threshold` parameter (default 100).

use rustc_hash::FxHashMap;

use super::detect::{ContextReport, Detector, LoopStats, Pattern};
use super::manager::Manager;
use super::{
    build_manager, read_hints, P_DEFAULT, P_GC, P_HINTS, P_MAX_PARTITIONS, P_MIN_GHOSTS, P_ONE_SHOT, P_PERIOD, P_SEED,
    P_STEAL, P_TIMELINE,
};
use crate::policy::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo, Range};
use crate::spec::SpecError;

/// What PCC remembers of a block a context accessed.
#[derive(Clone, Copy, Debug)]
struct Seen {
    /// Accesses by this context so far, capped at 2 (once, or repeating).
    count: u8,
    /// The context's own access count and the virtual time at the block's last access.
    last_local: u64,
    last_time: u64,
}

#[derive(Clone, Debug, Default)]
struct Context {
    blocks: FxHashMap<u64, Seen>,
    /// Seq: blocks accessed once so far; Loop: blocks accessed more than once.
    seq: u64,
    repeating: u64,
    local: u64,
    stats: LoopStats,
    pattern: Pattern,
}

/// PCC's detector over every context.
#[derive(Clone, Debug)]
pub struct PccDetector {
    /// Seq at or above which a non-looping context is sequential (one-shot).
    threshold: u64,
    contexts: FxHashMap<u64, Context>,
}

impl PccDetector {
    pub fn new(threshold: u64) -> Self {
        PccDetector { threshold, contexts: FxHashMap::default() }
    }

    /// (Seq, Loop) of a context.
    pub fn counters(&self, ctx: u64) -> Option<(u64, u64)> {
        self.contexts.get(&ctx).map(|c| (c.seq, c.repeating))
    }
}

impl Detector for PccDetector {
    #[inline]
    fn access(&mut self, ctx: u64, key: u64, time: u64) -> Option<Pattern> {
        let c = self.contexts.entry(ctx).or_default();
        c.local += 1;
        match c.blocks.get_mut(&key) {
            None => {
                c.seq += 1;
                c.blocks.insert(key, Seen { count: 1, last_local: c.local, last_time: time });
            }
            Some(s) => {
                if s.count == 1 {
                    // The block repeats: it moves from the non-repeating to the repeating count.
                    c.seq -= 1;
                    c.repeating += 1;
                    s.count = 2;
                }
                // PCC measures a loop by the accesses between two accesses of a block.
                c.stats.push((c.local - s.last_local) as f64, time.saturating_sub(s.last_time) as f64);
                s.last_local = c.local;
                s.last_time = time;
            }
        }
        None
    }

    fn detect(&mut self, _now: u64) {
        for c in self.contexts.values_mut() {
            if c.seq + c.repeating == 0 {
                continue;
            }
            // AMP §2.2 on PCC: "A stream is classified as looping if there are fewer
            // non-repeating (Seq) blocks than repeating (Loop) blocks. Otherwise, it is
            // classified as sequential if Seq is larger than or equal to a threshold, or other
            // otherwise."
            c.pattern = if c.seq < c.repeating {
                Pattern::Looping
            } else if c.seq >= self.threshold {
                Pattern::OneShot
            } else {
                Pattern::Other
            };
            c.stats.publish();
        }
    }

    fn report(&self, ctx: u64) -> Option<ContextReport> {
        self.contexts.get(&ctx).map(|c| ContextReport {
            pattern: c.pattern,
            unique_blocks: (c.seq + c.repeating) as f64,
            r_bar: None,
            loop_size: c.stats.loop_size(),
            loop_time: c.stats.loop_time(),
            accesses: c.local,
        })
    }

    fn contexts(&self, out: &mut Vec<u64>) {
        let start = out.len();
        out.extend(self.contexts.keys().copied());
        out[start..].sort_unstable();
    }

    fn check(&self) -> Result<(), String> {
        for (ctx, c) in &self.contexts {
            let repeating = c.blocks.values().filter(|s| s.count > 1).count() as u64;
            if c.repeating != repeating || c.seq + c.repeating != c.blocks.len() as u64 {
                return Err(format!(
                    "PCC context {ctx}: Seq {} Loop {} over {} blocks",
                    c.seq,
                    c.repeating,
                    c.blocks.len()
                ));
            }
        }
        Ok(())
    }
}

impl PolicyDef for super::Pcc {
    const INFO: PolicyInfo = PolicyInfo {
        name: "pcc",
        aliases: &["pcc-star"],
        paper: "PCC*: PCC's detector (Gniady, Butt, Hu, OSDI '04) with AMP's manager, as AMP (UCB/CSD-05-1379) §2.2 and §4.2 compare it",
        summary: "AMP's partitioned manager with PCC's counters: a context loops when fewer of its blocks are accessed once (Seq) than repeatedly (Loop); sequential (one-shot) when Seq ≥ threshold",
        params: &[
            P_DEFAULT,
            ParamInfo { name: "threshold", default: "100", doc: "Seq (blocks accessed once) at or above which a non-looping context is sequential", range: Range::Whole(1, u64::MAX) },
            P_MAX_PARTITIONS,
            P_PERIOD,
            P_HINTS,
            P_MIN_GHOSTS,
            P_STEAL,
            P_GC,
            P_ONE_SHOT,
            P_TIMELINE,
            P_SEED,
        ],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        context_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };

    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let (cfg, default) = build_manager(args, env, "pcc")?;
        let mut m = Manager::new(cfg, PccDetector::new(args.u64("threshold")?), default, env.capacity);
        m.set_hints(read_hints(args, "pcc")?);
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(blocks: &[u64], threshold: u64) -> (Pattern, (u64, u64)) {
        let mut d = PccDetector::new(threshold);
        for (t, &b) in blocks.iter().enumerate() {
            d.access(5, b, t as u64);
        }
        d.detect(blocks.len() as u64);
        d.check().unwrap();
        (d.report(5).unwrap().pattern, d.counters(5).unwrap())
    }

    #[test]
    fn counters_follow_the_rule() {
        // [1 2 3 1 2 3]: three repeating blocks, none accessed once: a loop.
        assert_eq!(classify(&[1, 2, 3, 1, 2, 3], 100), (Pattern::Looping, (0, 3)));
        // Two of four blocks repeat: Seq = Loop is not "fewer", and Seq < threshold: other.
        assert_eq!(classify(&[1, 2, 3, 4, 1, 2], 100), (Pattern::Other, (2, 2)));
        // A scan of 200 blocks: sequential.
        let scan: Vec<u64> = (0..200).collect();
        assert_eq!(classify(&scan, 100), (Pattern::OneShot, (200, 0)));
        // The weakness AMP §2.2 points out: a temporally clustered stream has more repeating
        // than non-repeating blocks and is called a loop.
        assert_eq!(classify(&[1, 1, 2, 2, 3, 3, 4, 4], 100).0, Pattern::Looping);
    }
}
