//! The AMP family: program-context specific buffer caching (AMP, Zhou, von Behren, Brewer,
//! UCB/CSD-05-1379). One partitioned manager ([`manager`], §3.2 and Figure 4) with three
//! detectors: AMP's average reference recency ([`recency`], §3.1), PCC's counters ([`pcc`],
//! the paper's PCC*, §2.2 and §4.2) and DEAR's groups ([`dear`], §2.2 and §4.1).

pub mod dear;
pub mod detect;
pub mod manager;
pub mod pcc;
pub mod recency;
pub mod table1;

use super::forward::forward_policy;
use super::partition::Steal;
use super::registry::{build_spec, lookup};
use super::{AnyPolicy, Args, BuildEnv, ParamInfo, Range};
use crate::spec::{Spec, SpecError};
use crate::trace::progress::{BATCH as PROGRESS_BATCH, IN_MEMORY};
use crate::trace::Meter;
use crate::SimError;
use manager::{Manager, ManagerConfig, OneShotRule, MAX_MRU};

pub use dear::DearDetector;
pub use detect::{ContextReport, Detector, Pattern, Sampling};
pub use pcc::PccDetector;
pub use recency::{RecencyConfig, RecencyDetector, RecencyList};

/// AMP: the partitioned manager with AMP's R̄ detector (`amp` in specs).
pub type Amp = Manager<RecencyDetector, DefaultPolicy>;
/// PCC*: the manager with PCC's counter detector (`pcc`).
pub type Pcc = Manager<PccDetector, DefaultPolicy>;
/// The manager with DEAR's group detector (`dear`).
pub type Dear = Manager<DearDetector, DefaultPolicy>;

/// The default partition's policy when `default=` is not given: ARC, the paper's (§3, footnote
/// 2); `default=lru` gives the paper's other variant (§4.2.2, "the LRU variant of AMP").
pub const DEFAULT_POLICY: &str = "arc";

/// The default partition's policy: any registered policy but the AMP family itself. Boxed
/// because [`AnyPolicy`] holds the AMP family.
pub struct DefaultPolicy(Box<AnyPolicy>);

impl DefaultPolicy {
    pub fn new(p: AnyPolicy) -> Self {
        DefaultPolicy(Box::new(p))
    }
}

forward_policy!(impl[] DefaultPolicy, |d| *d.0);

/// The manager's parameters, shared by `amp`, `pcc` and `dear` (written once, here).
pub(crate) const P_DEFAULT: ParamInfo = ParamInfo {
    name: "default",
    default: DEFAULT_POLICY,
    doc: "policy of the default partition, any registered spec (the paper uses arc)",
    range: Range::Spec,
};
pub(crate) const P_MAX_PARTITIONS: ParamInfo = ParamInfo {
    name: "max-partitions",
    default: "10",
    doc: "MRU partitions at most, for the looping contexts with the most unique blocks (§3.3)",
    range: Range::Whole(0, MAX_MRU as u64),
};
pub(crate) const P_PERIOD: ParamInfo = ParamInfo {
    name: "period",
    default: "auto",
    doc: "accesses between re-detections: a number, or auto (the first once the cache could have filled, the cache's blocks within 1000-10000 accesses, then doubling up to 10000)",
    range: Range::Or(&["auto"], &Range::Whole(1, u64::MAX)),
};
pub(crate) const P_MIN_GHOSTS: ParamInfo = ParamInfo {
    name: "min-ghosts",
    default: "5%",
    doc: "least |B1| + |B2| MRU coupons are priced against (share of the cache or blocks; 0 is the paper's price): keeps MRU partitions adapting when the default partition is idle",
    range: Range::Share(0.0, 1.0),
};
pub(crate) const P_HINTS: ParamInfo = ParamInfo {
    name: "hints",
    default: "none",
    doc: "classifications kept from an earlier run (AMP §3): the JSON lines of `bufsim detect --json`, used for each context from the first access until the detector classifies it itself",
    range: Range::Text("none, or the path of a file of `bufsim detect --json` lines"),
};

/// The most an automatic detection period grows to, in accesses.
pub const AUTO_PERIOD_MAX: u64 = 10_000;
pub(crate) const P_STEAL: ParamInfo = ParamInfo {
    name: "steal",
    default: "uniform",
    doc: "partition a growing partition takes a block from: uniform (each other non-empty partition alike, Figure 4) or size (a random block)",
    range: Range::Choice(&Steal::NAMES),
};
pub(crate) const P_ONE_SHOT: ParamInfo = ParamInfo {
    name: "one-shot",
    default: "adaptive",
    doc: "the one-shot partition: adaptive (a miss on a block it evicted keeps the contexts involved out of it, and ARC's p sizes it against the default partition) or first (always freed first, §3.3)",
    range: Range::Choice(&OneShotRule::NAMES),
};
pub(crate) const P_GC: ParamInfo = ParamInfo {
    name: "gc",
    default: "true",
    doc: "MRU garbage collection every loop_time + 3 deviations (§3.2)",
    range: Range::Flag,
};
pub(crate) const P_TIMELINE: ParamInfo = ParamInfo {
    name: "timeline",
    default: "1000",
    doc: "record partition sizes every N accesses (0: off; the interval doubles past 2048 samples)",
    range: Range::Whole(0, u64::MAX),
};
pub(crate) const P_SEED: ParamInfo = ParamInfo {
    name: "seed",
    default: "run",
    doc: "seed of the random partition choices (run: the run's seed)",
    range: Range::Seed,
};

/// Reads the manager's parameters and builds the default partition's policy.
pub(crate) fn build_manager(
    args: &Args,
    env: &BuildEnv,
    name: &str,
) -> Result<(ManagerConfig, DefaultPolicy), SpecError> {
    let spec = Spec::parse(args.text("default")).map_err(|e| SpecError(format!("policy `{name}`: default: {e}")))?;
    if let Some(info) = lookup(&spec.name) {
        if super::registry::capabilities(info.name).context_partitioned {
            return Err(SpecError(format!(
                "policy `{name}`: default={} is itself a partitioned manager; give a plain policy such as lru or arc",
                info.name
            )));
        }
    }
    let default = build_spec(&spec, env).map_err(|e| SpecError(format!("policy `{name}`: default: {e}")))?;
    let max_partitions = args.u64("max-partitions")?;
    if max_partitions > MAX_MRU as u64 {
        return Err(SpecError(format!("policy `{name}`: max-partitions must be at most {MAX_MRU}")));
    }
    let (period, adaptive_period) = match args.text("period").trim() {
        "auto" => (AUTO_PERIOD_MAX, true),
        _ => (args.u64("period")?, false),
    };
    if period == 0 {
        return Err(SpecError(format!("policy `{name}`: period must be at least 1 access (or auto)")));
    }
    let steal = Steal::from_name(args.choice("steal", &Steal::NAMES)?).expect("choice checked");
    let cfg = ManagerConfig {
        max_partitions: max_partitions as usize,
        period,
        adaptive_period,
        min_ghosts: super::shares::blocks_floor(args, name, "min-ghosts", env)?,
        steal,
        gc: args.bool("gc")?,
        timeline_every: args.u64("timeline")?,
        one_shot: OneShotRule::from_name(args.choice("one-shot", &OneShotRule::NAMES)?).expect("choice checked"),
        seed: args.seed(env.seed)?,
    };
    Ok((cfg, DefaultPolicy::new(default)))
}

/// The hints of `hints=` (none: no file), read once when the policy is built.
pub(crate) fn read_hints(args: &Args, name: &str) -> Result<Vec<(u64, ContextReport)>, SpecError> {
    match args.text("hints").trim() {
        "" | "none" => Ok(Vec::new()),
        path => load_hints(path).map_err(|e| SpecError(format!("policy `{name}`: hints: {e}"))),
    }
}

/// Reads classifications kept from an earlier run: one JSON object per line with `ctx` and
/// `pattern` (loop, one-shot, other) and optionally `unique_blocks`, `loop_size`, `loop_time`
/// and `loop_time_dev`, as `bufsim detect --json` prints them. Blank lines are skipped.
pub fn load_hints(path: &str) -> Result<Vec<(u64, ContextReport)>, SpecError> {
    let cannot =
        |why: String| SpecError(format!("{path}: cannot read ({why}); give the output of `bufsim detect --json`"));
    // A file, not a FIFO or a device: every run of a sweep reads the hints again (a FIFO's
    // second open waits for a writer that is gone), and `/dev/zero` never ends.
    let meta = std::fs::metadata(path).map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() {
        return Err(cannot("not a regular file; save the hints to a file first".into()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| cannot(e.to_string()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = |what: &str| {
            SpecError(format!("{path}:{}: {what}; each line must be a JSON object of `bufsim detect --json`", i + 1))
        };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| at(&format!("not JSON ({e})")))?;
        let ctx = v.get("ctx").and_then(|c| c.as_u64()).ok_or_else(|| at("no integer `ctx`"))?;
        let pattern = v
            .get("pattern")
            .and_then(|p| p.as_str())
            .and_then(Pattern::from_name)
            .ok_or_else(|| at("`pattern` must be loop, one-shot, other or undetected"))?;
        let num = |k: &str| v.get(k).and_then(|x| x.as_f64());
        let loop_time = num("loop_time").map(|t| (t, num("loop_time_dev").unwrap_or(0.0)));
        out.push((
            ctx,
            ContextReport {
                pattern,
                unique_blocks: num("unique_blocks").unwrap_or(0.0),
                r_bar: num("r_bar"),
                loop_size: num("loop_size"),
                loop_time,
                accesses: v.get("accesses").and_then(|a| a.as_u64()).unwrap_or(0),
            },
        ));
    }
    Ok(out)
}

/// Classifies every program context of a block-access string `(key, ctx)` with the detector
/// of `spec` (`amp(...)`, `pcc(...)` or `dear(...)`), as §4.1 does: one detection over the whole
/// string (DEAR detects at its own intervals). Context 0 (unknown) is not classified. Returns
/// the contexts in ascending order.
///
/// Stops with an `Interrupted` error once `meter`'s work is cancelled.
pub fn classify(accesses: &[(u64, u64)], spec: &str, meter: &Meter) -> Result<Vec<(u64, ContextReport)>, SimError> {
    let env = BuildEnv { capacity: 1, block_size: 4096, seed: 0 };
    let parsed = Spec::parse(spec)?;
    let not_amp =
        || SpecError(format!("`{spec}` has no access-pattern detector; use amp, pcc or dear with their parameters"));
    let info = lookup(&parsed.name).ok_or_else(not_amp)?;
    if !super::registry::capabilities(info.name).context_partitioned {
        return Err(not_amp().into());
    }
    fn feed<D: Detector>(
        mut d: D,
        accesses: &[(u64, u64)],
        meter: &Meter,
    ) -> Result<Vec<(u64, ContextReport)>, SimError> {
        for (i, batch) in accesses.chunks(PROGRESS_BATCH as usize).enumerate() {
            meter.go_on(IN_MEMORY)?;
            let first = i * PROGRESS_BATCH as usize;
            for (t, &(key, ctx)) in batch.iter().enumerate() {
                if ctx != 0 {
                    d.access(ctx, key, (first + t) as u64);
                }
            }
        }
        d.detect(accesses.len() as u64);
        let mut ctxs = Vec::new();
        d.contexts(&mut ctxs);
        Ok(ctxs.into_iter().map(|c| (c, d.report(c).expect("listed context"))).collect())
    }
    match build_spec(&parsed, &env)? {
        AnyPolicy::Amp(m) => feed(m.into_detector(), accesses, meter),
        AnyPolicy::Pcc(m) => feed(m.into_detector(), accesses, meter),
        AnyPolicy::Dear(m) => feed(m.into_detector(), accesses, meter),
        _ => Err(not_amp().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{build, Policy};

    fn env() -> BuildEnv {
        BuildEnv { capacity: 64, block_size: 4096, seed: 1 }
    }

    #[test]
    fn the_default_partition_is_arc_with_its_ghosts() {
        // AMP §3: "using a default policy such as ARC"; AMP sizes it from ARC's ghosts.
        assert_eq!(DEFAULT_POLICY, "arc");
        assert!(lookup("arc").is_some());
        let arc =
            crate::policy::build("arc", &crate::policy::BuildEnv { capacity: 8, block_size: 4096, seed: 1 }).unwrap();
        assert!(arc.keeps_ghosts());
    }

    #[test]
    fn bad_specs_are_explained() {
        let e = build("amp(default=amp)", &env()).err().unwrap().to_string();
        assert!(e.contains("itself a partitioned manager"), "{e}");
        let e = build("pcc(default=nosuch)", &env()).err().unwrap().to_string();
        assert!(e.contains("policy `pcc`: default: unknown policy `nosuch`"), "{e}");
        let e = build("dear(steal=any)", &env()).err().unwrap().to_string();
        assert!(e.contains("uniform, size"), "{e}");
        let e = build("amp(max-partitions=999)", &env()).err().unwrap().to_string();
        assert!(e.contains("at most 253"), "{e}");
        let e = build("amp(threshold=2)", &env()).err().unwrap().to_string();
        assert!(e.contains("threshold"), "{e}");
        let e = build("amp(sampling=0)", &env()).err().unwrap().to_string();
        assert!(e.contains("sampling"), "{e}");
        let e = build("amp(history=0)", &env()).err().unwrap().to_string();
        assert!(e.contains("history=`0`"), "{e}");
        let e = build("dear(group=1)", &env()).err().unwrap().to_string();
        assert!(e.contains("group"), "{e}");
        assert!(build("amp(default=mru,max_partitions=3,sampling=1/4,adaptive=true,detect=continuous)", &env()).is_ok());
        let e = build("amp(period=0)", &env()).err().unwrap().to_string();
        assert!(e.contains("period must be auto or at least 1"), "{e}");
        let e = build("amp(hints=/nonexistent/hints.jsonl)", &env()).err().unwrap().to_string();
        assert!(e.contains("policy `amp`: hints: /nonexistent/hints.jsonl: cannot read"), "{e}");
        // Neither endless (/dev/zero) nor readable once only (a FIFO, standard input).
        for path in ["/dev/zero", "/tmp"] {
            let e = build(&format!("pcc(hints={path})"), &env()).err().unwrap().to_string();
            assert!(e.contains(&format!("policy `pcc`: hints: {path}: cannot read")), "{e}");
        }
    }

    #[test]
    fn classify_reports_every_context() {
        let mut acc = Vec::new();
        for i in 0..3000u64 {
            acc.push((i % 200, 1)); // a loop
            acc.push((10_000 + i, 2)); // a scan
            acc.push((20_000 + i / 20, 3)); // clustered
            acc.push((i % 7, 0)); // unknown context
        }
        let r = classify(&acc, "amp", &Meter::default()).unwrap();
        let pats: Vec<(u64, Pattern)> = r.iter().map(|(c, x)| (*c, x.pattern)).collect();
        assert_eq!(pats, vec![(1, Pattern::Looping), (2, Pattern::OneShot), (3, Pattern::Other)]);
        assert_eq!(r[0].1.loop_size, Some(200.0));
        let r = classify(&acc, "pcc", &Meter::default()).unwrap();
        assert_eq!(r[2].1.pattern, Pattern::Looping, "PCC calls clustered accesses a loop");
        let e = classify(&acc, "lru", &Meter::default()).unwrap_err().to_string();
        assert!(e.contains("no access-pattern detector"), "{e}");
    }

    #[test]
    fn classify_stops_once_cancelled() {
        let progress = std::sync::Arc::new(crate::trace::Progress::default());
        progress.cancel();
        let acc: Vec<(u64, u64)> = (0..1000u64).map(|i| (i % 100, 1)).collect();
        match classify(&acc, "amp", &Meter::new(progress)) {
            Err(SimError::Trace(e)) => assert_eq!(e.kind, crate::trace::TraceErrorKind::Interrupted),
            other => panic!("not interrupted: {:?}", other.map(|r| r.len())),
        }
    }
}
