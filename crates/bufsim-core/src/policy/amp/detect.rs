//! What every access-pattern detector of the AMP family shares: the patterns (AMP §3.1), the
//! contract between a detector and the partitioned manager, block sampling by hashing (AMP §3.1,
//! "Block sampling"), and the loop statistics the manager sizes MRU partitions with (Figure 4).

/// The access pattern of one program context (AMP §3.1). Temporally clustered and "others" are
/// not told apart: both go to the default partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Not enough accesses seen yet: the default partition.
    #[default]
    Undetected,
    /// One-time accesses: the one-shot partition, freed first.
    OneShot,
    /// Repeated accesses in (roughly) the same order: an MRU partition.
    Looping,
    /// Temporally clustered or anything else: the default partition.
    Other,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Undetected => "undetected",
            Pattern::OneShot => "one-shot",
            Pattern::Looping => "loop",
            Pattern::Other => "other",
        }
    }

    /// The pattern [`Pattern::name`] names.
    pub fn from_name(name: &str) -> Option<Pattern> {
        [Pattern::Undetected, Pattern::OneShot, Pattern::Looping, Pattern::Other].into_iter().find(|p| p.name() == name)
    }
}

/// What a detector knows of one context, for the manager and for reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextReport {
    pub pattern: Pattern,
    /// Distinct blocks the context touched (estimated from the sample when sampling): the
    /// popularity that ranks looping contexts for the limited MRU partitions (AMP §3.3).
    pub unique_blocks: f64,
    /// AMP's average reference recency R̄ of the last detection (`None` for other detectors or
    /// before any re-reference).
    pub r_bar: Option<f64>,
    /// Estimated blocks per loop (`loop_size_i` of Figure 4), if any re-reference was seen.
    pub loop_size: Option<f64>,
    /// Estimated virtual time per loop and its standard deviation (`loop_time_i`, and the
    /// deviation that schedules MRU garbage collection, AMP §3.2).
    pub loop_time: Option<(f64, f64)>,
    /// Accesses (all, not only sampled ones) the context made.
    pub accesses: u64,
}

/// An access-pattern detector, fed the demand accesses of every program context.
///
/// Contract: `access` is called once per demand access of a context other than 0 (context 0
/// means "unknown" and is never classified), with nondecreasing `time` (the run's virtual
/// time: demand block accesses before this one). `detect` is called periodically; between
/// calls `report` returns the classification of the last detection, except that a
/// continuous detector may change a pattern inside `access`, which it then returns.
pub trait Detector {
    fn access(&mut self, ctx: u64, key: u64, time: u64) -> Option<Pattern>;
    /// Re-detection at virtual time `now` (AMP §3.1: "periodically assigns one of the
    /// following block access patterns to each program context").
    fn detect(&mut self, now: u64);
    fn report(&self, ctx: u64) -> Option<ContextReport>;
    /// Every context seen, in ascending order, appended to `out`.
    fn contexts(&self, out: &mut Vec<u64>);
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Mixes a block key into 32 well-spread bits (the finalizer of SplitMix64): "hash the block
/// number and only consider the block when the hash is within a range" (AMP §3.1).
#[inline]
pub fn block_hash(key: u64) -> u32 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 32) as u32
}

/// Sampling threshold Q out of 2^32: a block is considered when its hash is below Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Initial (and largest) threshold Q_0, in `1..=2^32`.
    pub q0: u64,
    /// Adaptive sampling: halve Q when |L| grows over `limit` (N_L), double it (up to Q_0) when
    /// |L| drops below `limit / 2` (AMP §3.1, "adaptive sampling method").
    pub adaptive: bool,
    pub limit: usize,
}

pub const FULL_Q: u64 = 1 << 32;

impl Sampling {
    /// Every block considered.
    pub const ALL: Sampling = Sampling { q0: FULL_Q, adaptive: false, limit: usize::MAX };

    /// A fixed fraction of blocks (0 < `fraction` ≤ 1).
    pub fn fraction(fraction: f64) -> Sampling {
        let q0 = ((fraction * FULL_Q as f64).round() as u64).clamp(1, FULL_Q);
        Sampling { q0, adaptive: false, limit: usize::MAX }
    }

    /// Parses `1`, `0.25`, `1/4` or `25%` into a fraction in (0, 1].
    pub fn parse_fraction(text: &str) -> Option<f64> {
        let t = text.trim();
        let v = if let Some(p) = t.strip_suffix('%') {
            p.trim().parse::<f64>().ok()? / 100.0
        } else if let Some((a, b)) = t.split_once('/') {
            let (a, b): (f64, f64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            if b == 0.0 {
                return None;
            }
            a / b
        } else {
            t.parse().ok()?
        };
        (v.is_finite() && v > 0.0 && v <= 1.0).then_some(v)
    }
}

/// Running mean and variance (Welford): loop sizes and loop times of one detection period.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Welford {
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }

    /// Population standard deviation.
    pub fn std(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / self.n as f64).sqrt()
        } else {
            0.0
        }
    }
}

/// The loop estimates of one context (Figure 4's `loop_size_i`, `loop_time_i` and the deviation
/// of AMP §3.2's garbage collection): gathered over a detection period from re-references, and
/// published at each detection so the manager sees stable values between detections.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoopStats {
    size: Welford,
    time: Welford,
    published_size: Option<f64>,
    published_time: Option<(f64, f64)>,
}

impl LoopStats {
    /// One re-reference: `blocks` distinct blocks and `time` virtual time since the block's
    /// previous access by the same context.
    #[inline]
    pub fn push(&mut self, blocks: f64, time: f64) {
        self.size.push(blocks);
        self.time.push(time);
    }

    /// Publishes this period's estimates (if it had re-references) and starts a new period.
    pub fn publish(&mut self) {
        if let Some(m) = self.size.mean() {
            self.published_size = Some(m);
        }
        if let Some(m) = self.time.mean() {
            self.published_time = Some((m, self.time.std()));
        }
        self.size = Welford::default();
        self.time = Welford::default();
    }

    pub fn loop_size(&self) -> Option<f64> {
        self.published_size
    }

    pub fn loop_time(&self) -> Option<(f64, f64)> {
        self.published_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_parse() {
        assert_eq!(Sampling::parse_fraction("1"), Some(1.0));
        assert_eq!(Sampling::parse_fraction("1/4"), Some(0.25));
        assert_eq!(Sampling::parse_fraction("25%"), Some(0.25));
        assert_eq!(Sampling::parse_fraction("0.125"), Some(0.125));
        for bad in ["0", "-1", "2", "1/0", "x", "nan"] {
            assert_eq!(Sampling::parse_fraction(bad), None, "{bad}");
        }
        assert_eq!(Sampling::fraction(0.25).q0, 1 << 30);
        assert_eq!(Sampling::fraction(1.0).q0, FULL_Q);
    }

    #[test]
    fn block_hash_samples_the_asked_fraction() {
        let q = Sampling::fraction(0.25).q0;
        let n = (0..100_000u64).filter(|&k| (block_hash(k) as u64) < q).count();
        assert!((23_500..26_500).contains(&n), "{n}");
    }

    #[test]
    fn welford_matches_the_definition() {
        let mut w = Welford::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            w.push(x);
        }
        assert_eq!(w.mean(), Some(5.0));
        assert!((w.std() - 2.0).abs() < 1e-12);
    }
}
