//! Inter-reference gap CDF per program context: AMP paper (Zhou, Pei, Ding, Yang, Li: "AMP:
//! program context specific buffer caching", UCB/CSD-05-1379) §3, Figure 2.
//! Deviation: gaps are kept in log-linear buckets (exact below 128, 1/64 relative width above).
//!
//! "The inter-reference gap is defined as the number of accesses to other pages that separate two
//! accesses to the same page": one less than the MQ temporal distance (ABA has gap 1, distance 2).
//! A gap belongs to the program context of the access that closes it (the re-reference), as
//! Figure 2 plots the gaps "of pages at each program context". Figure 2 shows "major" contexts;
//! we report the contexts with the most accesses, and all contexts combined.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::loghist::LogHistogram;

/// Quantiles reported for each context.
pub const QUANTILES: [(&str, f64); 6] =
    [("p10", 0.10), ("p25", 0.25), ("p50", 0.50), ("p75", 0.75), ("p90", 0.90), ("p99", 0.99)];

#[derive(Clone, Default)]
struct ContextGaps {
    accesses: u64,
    gaps: LogHistogram,
}

impl ContextGaps {
    #[inline]
    fn add(&mut self, distance: Option<u64>) {
        self.accesses += 1;
        if let Some(d) = distance {
            self.gaps.add(d - 1);
        }
    }

    fn report(&self, ctx: Option<u64>) -> ContextReport {
        ContextReport {
            ctx,
            accesses: self.accesses,
            gaps: self.gaps.total(),
            quantiles: QUANTILES.iter().map(|&(name, q)| (name.to_string(), self.gaps.quantile(q))).collect(),
            cdf: self.gaps.cdf(),
        }
    }
}

#[derive(Default)]
pub struct GapsByContext {
    by_ctx: FxHashMap<u64, ContextGaps>,
}

impl GapsByContext {
    /// One access by context `ctx` with MQ temporal distance `distance` (`None`: first reference).
    #[inline]
    pub fn add(&mut self, ctx: u64, distance: Option<u64>) {
        self.by_ctx.entry(ctx).or_default().add(distance);
    }

    /// The `top` contexts with the most accesses (ties: smaller id first), and all combined.
    pub fn report(&self, top: usize) -> GapReport {
        let mut ids: Vec<(&u64, &ContextGaps)> = self.by_ctx.iter().collect();
        ids.sort_by(|a, b| b.1.accesses.cmp(&a.1.accesses).then(a.0.cmp(b.0)));
        let mut all = ContextGaps::default();
        for (_, g) in &ids {
            all.accesses += g.accesses;
            all.gaps.merge(&g.gaps);
        }
        GapReport {
            contexts: ids.len() as u64,
            all: all.report(None),
            by_context: ids.iter().take(top).map(|(&c, g)| g.report(Some(c))).collect(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContextReport {
    /// Program context id (`None` for all contexts combined).
    pub ctx: Option<u64>,
    pub accesses: u64,
    /// Re-references (accesses with a gap).
    pub gaps: u64,
    /// Gap quantiles (`p10` ... `p99`); `None` without re-references.
    pub quantiles: Vec<(String, Option<u64>)>,
    /// `[gap, fraction of gaps <= gap]` at every bucket holding gaps.
    pub cdf: Vec<(u64, f64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapReport {
    /// Distinct program contexts in the trace.
    pub contexts: u64,
    pub all: ContextReport,
    pub by_context: Vec<ContextReport>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::BlockHistory;

    #[test]
    fn gaps_count_accesses_to_other_blocks() {
        // Context 1 loops over 3 blocks (gap 2 each time); context 2 re-reads one block at once.
        let mut h = BlockHistory::default();
        let mut g = GapsByContext::default();
        for (ctx, key) in [(1, 10), (1, 11), (1, 12), (1, 10), (1, 11), (1, 12), (2, 20), (2, 20)] {
            g.add(ctx, h.access(key));
        }
        let r = g.report(1);
        assert_eq!(r.contexts, 2);
        assert_eq!(r.by_context.len(), 1);
        let c1 = &r.by_context[0];
        assert_eq!((c1.ctx, c1.accesses, c1.gaps), (Some(1), 6, 3));
        assert_eq!(c1.cdf, vec![(2, 1.0)]);
        assert_eq!(c1.quantiles[2], ("p50".to_string(), Some(2)));
        assert_eq!(r.all.cdf, vec![(0, 0.25), (2, 1.0)]);
        assert_eq!((r.all.accesses, r.all.gaps), (8, 4));
    }
}
