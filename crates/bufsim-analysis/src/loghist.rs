//! Log-linear buckets over u64 values: exact below 128, then 64 buckets per power of two, so a
//! bucket is never wider than 1/64 of its lower bound. Bounded memory (3,776 buckets cover all of
//! u64) for distributions whose values span many orders of magnitude (gaps, scaled distances).

/// Sub-bucket bits: 2^SUB_BITS buckets per power of two.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets needed for every u64.
pub const BUCKETS: usize = ((64 - SUB_BITS as usize) << SUB_BITS) + SUB as usize;

/// Bucket of `v`.
#[inline]
pub fn index(v: u64) -> usize {
    if v < 2 * SUB {
        v as usize
    } else {
        let shift = 63 - v.leading_zeros() - SUB_BITS;
        (((shift + 1) as u64) << SUB_BITS) as usize + ((v >> shift) - SUB) as usize
    }
}

/// Smallest and largest value of bucket `i`.
#[inline]
pub fn bounds(i: usize) -> (u64, u64) {
    if (i as u64) < 2 * SUB {
        return (i as u64, i as u64);
    }
    let shift = (i as u64 >> SUB_BITS) - 1;
    let lo = ((i as u64 & (SUB - 1)) + SUB) << shift;
    (lo, lo + ((1u64 << shift) - 1))
}

/// Counts of values in log-linear buckets; the vector grows to the largest bucket used.
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
}

impl LogHistogram {
    #[inline]
    pub fn add(&mut self, v: u64) {
        let i = index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn merge(&mut self, other: &LogHistogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The smallest value v such that at least a fraction `q` of the values are <= v, to the
    /// bucket: exact below 128, otherwise the bucket's upper bound (at most 1/64 above).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let need = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= need {
                return Some(bounds(i).1);
            }
        }
        unreachable!("counts sum to total")
    }

    /// The CDF at the upper bound of every non-empty bucket: (value, fraction of values <= it).
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut seen = 0;
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                seen += c;
                (bounds(i).1, seen as f64 / self.total as f64)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_line() {
        let mut expect_lo = 0u64;
        for i in 0..BUCKETS {
            let (lo, hi) = bounds(i);
            assert_eq!(lo, expect_lo, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(hi), i);
            assert!(hi - lo <= lo / SUB, "bucket {i} too wide");
            expect_lo = hi.wrapping_add(1);
        }
        assert_eq!(expect_lo, 0, "the last bucket ends at u64::MAX");
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_are_exact_for_small_values() {
        let mut h = LogHistogram::default();
        for v in [1, 2, 2, 3, 10, 100] {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), Some(2));
        assert_eq!(h.quantile(0.51), Some(3));
        assert_eq!(h.quantile(1.0), Some(100));
        assert_eq!(h.cdf().first(), Some(&(1, 1.0 / 6.0)));
        h.add(1000);
        assert_eq!(h.quantile(1.0), Some(1007)); // bucket [1000, 1007]
    }
}
