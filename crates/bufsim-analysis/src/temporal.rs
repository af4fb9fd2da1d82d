//! Temporal distance histogram: MQ paper (Zhou, Philbin, Li, USENIX 2001) §3.1, Figures 2 and 3.
//! Deviation: the paper picks minDist and maxDist "by examining the histogram figure"; we pick
//! them by a stated rule (below) so that they are reproducible.
//!
//! The temporal distance of an access to block b is current(b) - prev(b), sequence numbers in the
//! reference string (in ABCDBAX the distance from A1 to A6 is 5, from B2 to B5 is 3). Distances
//! are grouped by powers of two, "distances that are not a power of two are rounded up to the
//! nearest power of two". First references have no distance and are counted apart.
//!
//! The hill: the paper calls the beginning and end of the hill-shaped region minDist and maxDist.
//! Our rule: start from the peak bin (the most correlated accesses; the smaller distance on a tie)
//! and widen the region bin by bin, left and right, while the next bin holds at least
//! `hill_fraction` of the peak's count. minDist and maxDist are the first and last bins' labels
//! (powers of two, as on the paper's axes).

use serde::Serialize;

/// Bins: label 2^k for k = 0..=64 (distance 1 is bin 0; 2^64 holds what no u64 power reaches).
const BINS: usize = 65;

/// The bin (power-of-two exponent) of a distance >= 1: the smallest k with d <= 2^k.
#[inline]
pub fn bin(d: u64) -> usize {
    debug_assert!(d >= 1);
    if d <= 1 {
        0
    } else {
        (64 - (d - 1).leading_zeros()) as usize
    }
}

#[derive(Clone, Debug)]
pub struct TemporalHistogram {
    bins: [u64; BINS],
    first: u64,
}

impl Default for TemporalHistogram {
    fn default() -> Self {
        TemporalHistogram { bins: [0; BINS], first: 0 }
    }
}

impl TemporalHistogram {
    #[inline]
    pub fn add(&mut self, distance: Option<u64>) {
        match distance {
            Some(d) => self.bins[bin(d)] += 1,
            None => self.first += 1,
        }
    }

    /// Correlated accesses (accesses with a previous reference to the same block).
    pub fn correlated(&self) -> u64 {
        self.bins.iter().sum()
    }

    pub fn report(&self, hill_fraction: f64) -> TemporalReport {
        let correlated = self.correlated();
        let last = self.bins.iter().rposition(|&c| c > 0);
        let bins = match last {
            Some(last) => (0..=last)
                .map(|k| TemporalBin {
                    distance: label(k),
                    count: self.bins[k],
                    share: self.bins[k] as f64 / correlated as f64,
                })
                .collect(),
            None => Vec::new(),
        };
        TemporalReport { correlated, first: self.first, hill: self.hill(hill_fraction), hill_fraction, bins }
    }

    fn hill(&self, fraction: f64) -> Option<Hill> {
        let (peak, &top) = self.bins.iter().enumerate().rev().max_by_key(|(_, &c)| c)?;
        if top == 0 {
            return None;
        }
        let enough = |k: usize| self.bins[k] as f64 >= fraction * top as f64;
        let mut lo = peak;
        while lo > 0 && enough(lo - 1) {
            lo -= 1;
        }
        let mut hi = peak;
        while hi + 1 < BINS && enough(hi + 1) {
            hi += 1;
        }
        let inside: u64 = self.bins[lo..=hi].iter().sum();
        Some(Hill {
            peak_distance: label(peak),
            min_dist: label(lo),
            max_dist: label(hi),
            share: inside as f64 / self.correlated() as f64,
        })
    }
}

/// 2^k, saturating at u64::MAX for the top bin.
fn label(k: usize) -> u64 {
    1u64.checked_shl(k as u32).unwrap_or(u64::MAX)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TemporalBin {
    /// Upper end of the bin (a power of two): distances in (distance / 2, distance].
    pub distance: u64,
    pub count: u64,
    /// Share of the correlated accesses.
    pub share: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hill {
    /// Bin with the most correlated accesses.
    pub peak_distance: u64,
    pub min_dist: u64,
    pub max_dist: u64,
    /// Share of the correlated accesses inside [min_dist, max_dist].
    pub share: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TemporalReport {
    pub correlated: u64,
    /// First references (no temporal distance).
    pub first: u64,
    pub hill: Option<Hill>,
    pub hill_fraction: f64,
    /// Bins from distance 1 up to the last non-empty one.
    pub bins: Vec<TemporalBin>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::BlockHistory;

    #[test]
    fn the_papers_example() {
        // ABCDBAX: A6 is 5 after A1, B5 is 3 after B2 (MQ paper §3.1).
        let mut h = BlockHistory::default();
        let d: Vec<_> = b"ABCDBAX".iter().map(|&c| h.access(c as u64)).collect();
        assert_eq!(d, vec![None, None, None, None, Some(3), Some(5), None]);
        let mut t = TemporalHistogram::default();
        d.into_iter().for_each(|x| t.add(x));
        let r = t.report(0.1);
        // 3 rounds up to 4, 5 up to 8.
        let counts: Vec<(u64, u64)> = r.bins.iter().map(|b| (b.distance, b.count)).collect();
        assert_eq!(counts, vec![(1, 0), (2, 0), (4, 1), (8, 1)]);
        assert_eq!((r.correlated, r.first), (2, 5));
    }

    #[test]
    fn bins_round_up_to_powers_of_two() {
        let cases = [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (8, 3),
            (9, 4),
            (1 << 40, 40),
            ((1 << 40) + 1, 41),
            (u64::MAX, 64),
        ];
        for (d, k) in cases {
            assert_eq!(bin(d), k, "distance {d}");
        }
    }

    #[test]
    fn hill_spans_the_bins_near_the_peak() {
        let mut t = TemporalHistogram::default();
        // A few short distances, then a hill over bins 2^9..2^12 peaking at 2^10.
        for (d, n) in [(1u64, 3u64), (300, 40), (1000, 100), (1500, 60), (4000, 20), (1 << 20, 5)] {
            for _ in 0..n {
                t.add(Some(d));
            }
        }
        let h = t.report(0.1).hill.unwrap();
        assert_eq!((h.peak_distance, h.min_dist, h.max_dist), (1024, 512, 4096));
        // The hill holds 40 + 100 + 60 + 20 of the 228 correlated accesses.
        assert!((h.share - 220.0 / 228.0).abs() < 1e-12);
        let narrow = t.report(0.5).hill.unwrap();
        assert_eq!((narrow.min_dist, narrow.max_dist), (1024, 2048));
        assert!(TemporalHistogram::default().report(0.1).hill.is_none());
    }
}
