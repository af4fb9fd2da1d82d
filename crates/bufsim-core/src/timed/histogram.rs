//! Latency histogram with fixed log-linear buckets (the HDR histogram idea): values below 32 ns
//! exactly, above that 32 buckets per power of two, so a percentile is within 1/32 (3.1%) of
//! the true value. Recording is an index computation and an increment: no allocation per
//! request, and the whole table is allocated once (about 15 KiB).

/// Sub-buckets per power of two, as a power of two.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS + 1) as usize) * SUB as usize;

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Box<[u64]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram { counts: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let e = 63 - v.leading_zeros(); // highest set bit, >= SUB_BITS
        let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
        ((e - SUB_BITS + 1) as usize) * SUB as usize + sub as usize
    }
}

/// The smallest value of bucket `i` and its width.
fn bounds(i: usize) -> (u64, u64) {
    let s = SUB as usize;
    if i < s {
        (i as u64, 1)
    } else {
        let e = (i / s) as u32 + SUB_BITS - 1;
        let sub = (i % s) as u64;
        let width = 1u64 << (e - SUB_BITS);
        ((SUB + sub) * width, width)
    }
}

impl LatencyHistogram {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[index(ns)] += 1;
        self.count += 1;
        self.sum += ns as u128;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    pub fn max_ns(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` (0 < q <= 1): the middle of the bucket holding the
    /// ceil(q * count)-th smallest value, clamped to the exact minimum and maximum (so a run
    /// whose requests all took 9.5 ms reports exactly 9.5 ms). 0 when nothing was recorded.
    pub fn quantile_ns(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bounds(i);
                let mid = lo as f64 + (width as f64 - 1.0) / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + (w - 1)), i);
            next = lo.wrapping_add(w);
        }
        assert_eq!(next, 0, "the last bucket ends at u64::MAX");
    }

    #[test]
    fn quantiles_are_within_the_bucket_resolution() {
        let mut h = LatencyHistogram::default();
        // 1..=100_000 us in ns: the p50 is 50 ms, p90 90 ms, p99 99 ms.
        for us in 1..=100_000u64 {
            h.record(us * 1000);
        }
        for (q, want) in [(0.5, 50e6), (0.9, 90e6), (0.99, 99e6)] {
            let got = h.quantile_ns(q);
            assert!((got / want - 1.0).abs() < 1.0 / 32.0, "q{q}: {got} vs {want}");
        }
        assert!((h.mean_ns() - 50_000_500.0).abs() < 1e-6);
        let mut same = LatencyHistogram::default();
        for _ in 0..10 {
            same.record(9_500_000);
        }
        assert_eq!(same.quantile_ns(0.5), 9_500_000.0);
        assert_eq!(same.quantile_ns(0.99), 9_500_000.0);
        assert_eq!(LatencyHistogram::default().quantile_ns(0.5), 0.0);
    }
}
