//! DEAR's group-based pattern detector (Choi, Noh, Min, Cho, USENIX '99), as the AMP paper
//! describes and compares it (AMP, UCB/CSD-05-1379, §2.2 and §4.1: group size 10), run with
//! AMP's manager. Deviation: the paper gives DEAR's idea, not its decision rule; ours is below.
//!
//! At the end of each detection interval of a context, the blocks it accessed in the previous
//! interval are sorted by last access (before the interval began), most recent first, and cut
//! into groups of `group` blocks. Each group's forward distance is the mean time (in the
//! context's accesses) from the interval's start to the blocks' first access in it (the interval
//! length when not accessed). "DEAR sorts blocks by last-access time, and observes whether the
//! more recently accessed block gets accessed farther in the future, indicating a loop" (§2.2):
//! the context loops when, from the most to the least recent group, forward distances only
//! fall (at least once, never rising); it is temporally clustered when they only rise; it is
//! sequential (one-shot) when no block of the previous interval is accessed again; otherwise
//! "other". Groups with equal distances (all censored) neither rise nor fall.

use rustc_hash::FxHashMap;

use super::detect::{ContextReport, Detector, LoopStats, Pattern};
use super::manager::Manager;
use super::{
    build_manager, read_hints, P_DEFAULT, P_GC, P_HINTS, P_MAX_PARTITIONS, P_MIN_GHOSTS, P_ONE_SHOT, P_PERIOD, P_SEED,
    P_STEAL, P_TIMELINE,
};
use crate::policy::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo, Range};
use crate::spec::SpecError;

const NONE: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The context's access count at the block's last access, and the virtual time.
    last: u64,
    last_time: u64,
    /// Interval of `prev` and `first`.
    interval: u64,
    /// Last access before that interval began (NONE: first seen in it).
    prev: u64,
    /// First access in that interval.
    first: u64,
}

#[derive(Clone, Debug, Default)]
struct Context {
    blocks: FxHashMap<u64, Entry>,
    local: u64,
    interval: u64,
    start: u64,
    stats: LoopStats,
    pattern: Pattern,
    /// The last detection's group forward distances, most recent group first.
    groups: Vec<f64>,
}

/// DEAR's detector over every context.
#[derive(Clone, Debug)]
pub struct DearDetector {
    group: usize,
    /// Accesses of a context between two detections.
    interval: u64,
    contexts: FxHashMap<u64, Context>,
}

impl DearDetector {
    pub fn new(group: usize, interval: u64) -> Self {
        DearDetector { group: group.max(2), interval: interval.max(1), contexts: FxHashMap::default() }
    }

    /// The last detection's mean forward distance of each group, most recent group first.
    pub fn groups(&self, ctx: u64) -> Option<&[f64]> {
        self.contexts.get(&ctx).map(|c| c.groups.as_slice())
    }

    fn evaluate(group: usize, length: u64, c: &mut Context) {
        let s = c.start;
        if s > 0 {
            let mut cand: Vec<(u64, u64)> = Vec::new();
            let mut reused = false;
            for e in c.blocks.values() {
                let (before, forward) = if e.interval == c.interval { (e.prev, e.first - s) } else { (e.last, length) };
                if before == NONE || before + length < s {
                    continue;
                }
                reused |= forward < length;
                cand.push((before, forward));
            }
            // Most recently accessed first; ties cannot happen (one access per count).
            cand.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
            c.groups = cand
                .chunks_exact(group)
                .map(|g| g.iter().map(|&(_, f)| f as f64).sum::<f64>() / group as f64)
                .collect();
            if !cand.is_empty() && !reused {
                c.pattern = Pattern::OneShot;
            } else if c.groups.len() >= 2 {
                let falls = c.groups.windows(2).filter(|w| w[0] > w[1]).count();
                let rises = c.groups.windows(2).filter(|w| w[0] < w[1]).count();
                c.pattern = if falls > 0 && rises == 0 { Pattern::Looping } else { Pattern::Other };
            }
        }
        // Blocks not accessed in the interval just ended can never be candidates again.
        c.blocks.retain(|_, e| e.last >= s);
        c.interval += 1;
        c.start = c.local;
    }
}

impl Detector for DearDetector {
    #[inline]
    fn access(&mut self, ctx: u64, key: u64, time: u64) -> Option<Pattern> {
        let c = self.contexts.entry(ctx).or_default();
        let t = c.local;
        c.local += 1;
        let interval = c.interval;
        match c.blocks.get_mut(&key) {
            None => {
                c.blocks.insert(key, Entry { last: t, last_time: time, interval, prev: NONE, first: t });
            }
            Some(e) => {
                if e.interval != interval {
                    e.prev = e.last;
                    e.first = t;
                    e.interval = interval;
                }
                c.stats.push((t - e.last) as f64, time.saturating_sub(e.last_time) as f64);
                e.last = t;
                e.last_time = time;
            }
        }
        if c.local - c.start >= self.interval {
            let before = c.pattern;
            Self::evaluate(self.group, self.interval, c);
            if c.pattern != before {
                return Some(c.pattern);
            }
        }
        None
    }

    fn detect(&mut self, _now: u64) {
        for c in self.contexts.values_mut() {
            c.stats.publish();
        }
    }

    fn report(&self, ctx: u64) -> Option<ContextReport> {
        self.contexts.get(&ctx).map(|c| ContextReport {
            pattern: c.pattern,
            unique_blocks: c.blocks.len() as f64,
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
}

impl PolicyDef for super::Dear {
    const INFO: PolicyInfo = PolicyInfo {
        name: "dear",
        aliases: &[],
        paper: "DEAR's detector (Choi, Noh, Min, Cho, USENIX '99) with AMP's manager, as AMP (UCB/CSD-05-1379) §2.2 and §4.1 compare it",
        summary: "AMP's partitioned manager with DEAR's detection: blocks sorted by last access in groups; a context loops when more recently accessed groups are accessed farther in the future",
        params: &[
            P_DEFAULT,
            ParamInfo { name: "group", default: "10", doc: "blocks per group (§4.1: 10 worked best)", range: Range::Whole(2, u64::MAX) },
            ParamInfo { name: "interval", default: "1000", doc: "accesses of a context between two of its detections", range: Range::Whole(1, u64::MAX) },
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
        let (cfg, default) = build_manager(args, env, "dear")?;
        let group = args.u64("group")?;
        if group < 2 {
            return Err(SpecError("policy `dear`: parameter group must be at least 2 blocks".into()));
        }
        let interval = args.u64("interval")?;
        if interval == 0 {
            return Err(SpecError("policy `dear`: parameter interval must be at least 1 access".into()));
        }
        let mut m = Manager::new(cfg, DearDetector::new(group as usize, interval), default, env.capacity);
        m.set_hints(read_hints(args, "dear")?);
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(blocks: &[u64], group: usize, interval: u64) -> Pattern {
        let mut d = DearDetector::new(group, interval);
        for (t, &b) in blocks.iter().enumerate() {
            d.access(1, b, t as u64);
        }
        d.report(1).unwrap().pattern
    }

    #[test]
    fn loops_clusters_and_scans() {
        let lp: Vec<u64> = (0..4).flat_map(|_| 0..100u64).collect();
        assert_eq!(classify(&lp, 10, 200), Pattern::Looping);
        // Recently used blocks come back first: temporally clustered, not a loop.
        let back: Vec<u64> = (0..4)
            .flat_map(|i| if i % 2 == 0 { (0..100u64).collect::<Vec<_>>() } else { (0..100u64).rev().collect() })
            .collect();
        assert_eq!(classify(&back, 10, 200), Pattern::Other);
        let scan: Vec<u64> = (0..1000).collect();
        assert_eq!(classify(&scan, 10, 200), Pattern::OneShot);
    }

    #[test]
    fn groups_are_ordered_by_recency() {
        let lp: Vec<u64> = (0..2).flat_map(|_| 0..40u64).collect();
        let mut d = DearDetector::new(10, 40);
        for (t, &b) in lp.iter().enumerate() {
            d.access(1, b, t as u64);
        }
        // Blocks 30..39 were the most recent before the second pass and come back last.
        assert_eq!(d.groups(1).unwrap(), &[34.5, 24.5, 14.5, 4.5]);
    }
}
