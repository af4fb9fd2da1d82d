//! Access frequency distribution: MQ paper §3.2, Figure 4. For a frequency f, the share of all
//! blocks accessed at least f times, and the share of all accesses that go to those blocks
//! ("frequency here means the number of accesses"). Both shares fall as f grows.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrequencyPoint {
    /// At least this many accesses.
    pub frequency: u64,
    /// Share of the blocks accessed at least `frequency` times.
    pub block_share: f64,
    /// Share of the accesses made to those blocks.
    pub access_share: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrequencyReport {
    pub blocks: u64,
    pub accesses: u64,
    pub max_frequency: u64,
    /// Mean accesses per block.
    pub mean_frequency: f64,
    /// Figure 4's two curves at f = 1, 2, 4, 8, ... up to the largest frequency.
    pub points: Vec<FrequencyPoint>,
    /// `[frequency, blocks with exactly that frequency]`, by frequency.
    pub distribution: Vec<(u64, u64)>,
}

impl FrequencyReport {
    pub fn from_frequencies(freqs: impl Iterator<Item = u64>) -> FrequencyReport {
        let mut by_freq: BTreeMap<u64, u64> = BTreeMap::new();
        for f in freqs {
            *by_freq.entry(f).or_insert(0) += 1;
        }
        let distribution: Vec<(u64, u64)> = by_freq.into_iter().collect();
        let blocks: u64 = distribution.iter().map(|&(_, n)| n).sum();
        let accesses: u64 = distribution.iter().map(|&(f, n)| f * n).sum();
        let max_frequency = distribution.last().map_or(0, |&(f, _)| f);
        let mut points = Vec::new();
        let mut f = 1u64;
        while f <= max_frequency {
            points.push(Self::point(&distribution, f, blocks, accesses));
            f = match f.checked_mul(2) {
                Some(x) => x,
                None => break,
            };
        }
        FrequencyReport {
            blocks,
            accesses,
            max_frequency,
            mean_frequency: if blocks == 0 { 0.0 } else { accesses as f64 / blocks as f64 },
            points,
            distribution,
        }
    }

    fn point(distribution: &[(u64, u64)], f: u64, blocks: u64, accesses: u64) -> FrequencyPoint {
        let (b, a) =
            distribution.iter().filter(|&&(g, _)| g >= f).fold((0u64, 0u64), |(b, a), &(g, n)| (b + n, a + g * n));
        FrequencyPoint { frequency: f, block_share: b as f64 / blocks as f64, access_share: a as f64 / accesses as f64 }
    }

    /// Both shares at any frequency f >= 1.
    pub fn at(&self, f: u64) -> FrequencyPoint {
        Self::point(&self.distribution, f, self.blocks, self.accesses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_shares() {
        // Four blocks accessed 1, 1, 2 and 8 times: 12 accesses.
        let r = FrequencyReport::from_frequencies([1, 8, 1, 2].into_iter());
        assert_eq!((r.blocks, r.accesses, r.max_frequency), (4, 12, 8));
        assert_eq!(r.distribution, vec![(1, 2), (2, 1), (8, 1)]);
        let pts: Vec<(u64, f64, f64)> = r.points.iter().map(|p| (p.frequency, p.block_share, p.access_share)).collect();
        assert_eq!(pts, vec![(1, 1.0, 1.0), (2, 0.5, 10.0 / 12.0), (4, 0.25, 8.0 / 12.0), (8, 0.25, 8.0 / 12.0)]);
        assert_eq!(r.at(3).block_share, 0.25);
        assert_eq!(r.mean_frequency, 3.0);
    }

    #[test]
    fn no_blocks() {
        let r = FrequencyReport::from_frequencies(std::iter::empty());
        assert!(r.points.is_empty());
        assert_eq!(r.mean_frequency, 0.0);
    }
}
