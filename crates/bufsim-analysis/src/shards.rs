//! SHARDS: Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction with SHARDS"
//! (FAST 2015), §3 (fixed-rate sampling, SHARDS_adj correction) and §3.3 (fixed-size sampling).
//! Deviation: reuse distances are scaled 0-based (distinct *other* blocks, the unbiased form)
//! and the fixed-size histogram keeps log-linear buckets (1/64 relative width) of scaled distance.
//!
//! A block is sampled iff hash(block) < T (spatial sampling: all or none of a block's references),
//! rate R = T / 2^64. The sampled references go through an exact stack-distance pass; a distance
//! d among sampled blocks stands for 1 + (d - 1) / R blocks of the whole trace.
//! - Fixed rate: the sampled misses, divided by the expected number of sampled references N*R,
//!   give the miss ratio. This is the paper's SHARDS_adj: the difference between expected and
//!   actual samples is added to the first histogram bucket (counted as hits at every size).
//! - Fixed size: at most `s_max` blocks are tracked; when a new one would exceed it, the block
//!   with the largest hash leaves the sample, T drops to that hash, and the histogram counts so far
//!   are rescaled by R_new / R_old (done in O(1) by keeping one global scale).

use std::collections::BinaryHeap;

use serde::Serialize;

use crate::access::{BlockAccess, Visitor};
use crate::loghist;
use crate::stack::StackDistances;
use bufsim_core::spec::SpecError;

const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// How SHARDS samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum ShardsMode {
    /// A fixed fraction of the blocks, in (0, 1].
    FixedRate { rate: f64 },
    /// At most this many blocks in the sample; the rate falls as new blocks arrive.
    FixedSize { blocks: u64 },
}

impl ShardsMode {
    pub fn check(self) -> Result<ShardsMode, SpecError> {
        match self {
            ShardsMode::FixedRate { rate } if !(rate > 0.0 && rate <= 1.0) => Err(SpecError(format!(
                "SHARDS sampling rate {rate} is out of range; give a fraction in (0, 1], such as 0.01"
            ))),
            ShardsMode::FixedSize { blocks: 0 } => {
                Err(SpecError("SHARDS sample size must be at least 1 block, such as 8192".into()))
            }
            m => Ok(m),
        }
    }
}

/// The seeded hash that decides sampling: SplitMix64's finalizer over the key offset by a
/// seed-derived salt. It is a bijection of the key, so two blocks never tie.
#[inline]
pub fn sample_hash(key: u64, seed: u64) -> u64 {
    let salt = mix(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
    mix(key ^ salt)
}

#[inline]
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

enum State {
    Rate {
        /// `hist[d]`: sampled references at sampled stack distance d.
        hist: Vec<u64>,
        cold: u64,
    },
    Size {
        max: usize,
        /// Sampled blocks by hash (largest on top).
        heap: BinaryHeap<(u64, u64)>,
        /// Log-linear buckets of scaled 0-based distance; true count = stored / `unit`.
        hist: Vec<f64>,
        cold: f64,
        /// What one reference adds now: 1 / (product of the rescaling factors so far).
        unit: f64,
    },
}

pub struct Shards {
    mode: ShardsMode,
    seed: u64,
    stack: StackDistances,
    /// Sampled iff hash < threshold (up to 2^64, so rate 1 samples every block).
    threshold: u128,
    accesses: u64,
    sampled: u64,
    state: State,
}

impl Shards {
    pub fn new(mode: ShardsMode, seed: u64) -> Result<Shards, SpecError> {
        let mode = mode.check()?;
        let (threshold, state) = match mode {
            ShardsMode::FixedRate { rate } => {
                let t = if rate >= 1.0 { 1u128 << 64 } else { (rate * TWO_64) as u128 };
                (t.max(1), State::Rate { hist: Vec::new(), cold: 0 })
            }
            ShardsMode::FixedSize { blocks } => (
                1u128 << 64,
                State::Size {
                    max: blocks.min(usize::MAX as u64) as usize,
                    heap: BinaryHeap::new(),
                    hist: Vec::new(),
                    cold: 0.0,
                    unit: 1.0,
                },
            ),
        };
        Ok(Shards { mode, seed, stack: StackDistances::new(), threshold, accesses: 0, sampled: 0, state })
    }

    /// The current sampling rate R = T / 2^64.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / TWO_64
    }

    #[inline]
    pub fn access(&mut self, key: u64) {
        self.accesses += 1;
        let h = sample_hash(key, self.seed);
        if (h as u128) >= self.threshold {
            return;
        }
        if let State::Size { max, heap, unit, .. } = &mut self.state {
            if !self.stack.contains(key) {
                heap.push((h, key));
                if heap.len() > *max {
                    // §3.3: evict the block with the largest hash, lower T to it, and rescale
                    // the histogram by R_new / R_old.
                    let (top, victim) = heap.pop().expect("heap is over its maximum");
                    self.stack.remove(victim);
                    let old = self.threshold as f64;
                    self.threshold = top as u128;
                    *unit *= old / self.threshold.max(1) as f64;
                    if victim == key {
                        return;
                    }
                }
            }
        }
        self.sampled += 1;
        let d = self.stack.access(key);
        let rate = self.rate();
        match &mut self.state {
            State::Rate { hist, cold } => match d {
                Some(d) => {
                    let d = d as usize;
                    if d >= hist.len() {
                        hist.resize((d + 1).next_power_of_two(), 0);
                    }
                    hist[d] += 1;
                }
                None => *cold += 1,
            },
            State::Size { hist, cold, unit, .. } => match d {
                Some(d) => {
                    let scaled = ((d - 1) as f64 / rate).round() as u64;
                    let i = loghist::index(scaled);
                    if i >= hist.len() {
                        hist.resize(i + 1, 0.0);
                    }
                    hist[i] += *unit;
                }
                None => *cold += *unit,
            },
        }
    }

    /// The trace dropped the data of `key`: a sampled block leaves the stack, as in
    /// [`crate::mrc::LruMrc::drop_key`]. Fixed-size sampling keeps it (its sample set cannot
    /// give up a block other than its largest hash).
    pub fn drop_key(&mut self, key: u64) {
        if let State::Rate { .. } = self.state {
            if (sample_hash(key, self.seed) as u128) < self.threshold {
                self.stack.remove(key);
            }
        }
    }

    pub fn finish(self) -> ShardsCurve {
        let rate = self.rate();
        let sampled_blocks = self.stack.len() as u64;
        let estimate = match self.state {
            State::Rate { hist, cold } => {
                let mut suffix = vec![0u64; hist.len() + 1];
                for d in (0..hist.len()).rev() {
                    suffix[d] = suffix[d + 1] + hist[d];
                }
                Estimate::Rate { suffix, cold }
            }
            State::Size { hist, cold, unit, .. } => {
                let mut cum = Vec::with_capacity(hist.len() + 1);
                let mut acc = 0.0;
                cum.push(0.0);
                for &c in &hist {
                    acc += c / unit;
                    cum.push(acc);
                }
                Estimate::Size { cum, cold: cold / unit }
            }
        };
        ShardsCurve {
            mode: self.mode,
            accesses: self.accesses,
            sampled_refs: self.sampled,
            sampled_blocks,
            rate,
            estimate,
        }
    }
}

impl Visitor for Shards {
    #[inline]
    fn access(&mut self, a: &BlockAccess) {
        Shards::access(self, a.key);
    }
}

enum Estimate {
    Rate {
        suffix: Vec<u64>,
        cold: u64,
    },
    /// Cumulative (rescaled) counts over log-linear buckets: `cum[i]` = buckets below i.
    Size {
        cum: Vec<f64>,
        cold: f64,
    },
}

/// A SHARDS estimate of the LRU miss ratio curve.
pub struct ShardsCurve {
    pub mode: ShardsMode,
    pub accesses: u64,
    /// References that fell in the sample.
    pub sampled_refs: u64,
    /// Blocks in the sample at the end.
    pub sampled_blocks: u64,
    /// Sampling rate at the end (fixed-size: where the threshold came to rest).
    pub rate: f64,
    estimate: Estimate,
}

impl ShardsCurve {
    /// Estimated LRU miss ratio with a cache of `blocks` blocks.
    pub fn miss_ratio(&self, blocks: u64) -> f64 {
        if self.accesses == 0 {
            return 0.0;
        }
        if blocks == 0 {
            return 1.0;
        }
        let r = match &self.estimate {
            Estimate::Rate { suffix, cold } => {
                // A sampled distance d is a hit iff 1 + (d - 1) / R <= C.
                let dmax = ((blocks - 1) as f64 * self.rate).floor() as usize + 1;
                let misses = cold + suffix.get(dmax + 1).copied().unwrap_or(0);
                misses as f64 / (self.accesses as f64 * self.rate)
            }
            Estimate::Size { cum, cold } => {
                let total = cum.last().copied().unwrap_or(0.0) + cold;
                if total == 0.0 {
                    return 0.0;
                }
                // Hits: scaled 0-based distance x <= C - 1; the bucket holding C - 1 counts in
                // proportion, as if its distances were spread evenly.
                let x = blocks - 1;
                let i = loghist::index(x);
                let hits = if i + 1 >= cum.len() {
                    cum.last().copied().unwrap_or(0.0)
                } else {
                    let (lo, hi) = loghist::bounds(i);
                    let part = (x - lo + 1) as f64 / (hi - lo + 1) as f64;
                    cum[i] + (cum[i + 1] - cum[i]) * part
                };
                1.0 - hits / total
            }
        };
        r.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrc::LruMrc;

    fn run(mode: ShardsMode, keys: &[u64]) -> ShardsCurve {
        let mut s = Shards::new(mode, 42).unwrap();
        keys.iter().for_each(|&k| s.access(k));
        s.finish()
    }

    #[test]
    fn full_rate_is_exact() {
        let keys: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 613 + (i % 5) * 1000).collect();
        let mut exact = LruMrc::new();
        keys.iter().for_each(|&k| {
            exact.access(k);
        });
        let exact = exact.finish();
        let s = run(ShardsMode::FixedRate { rate: 1.0 }, &keys);
        assert_eq!(s.sampled_refs, keys.len() as u64);
        for c in 0..2000 {
            assert!((s.miss_ratio(c) - exact.miss_ratio(c)).abs() < 1e-12, "size {c}");
        }
        // A sample as large as the footprint never lowers the threshold: also exact.
        let s = run(ShardsMode::FixedSize { blocks: 10_000 }, &keys);
        assert_eq!(s.rate, 1.0);
        for c in 1..128 {
            assert!((s.miss_ratio(c) - exact.miss_ratio(c)).abs() < 1e-12, "size {c}");
        }
    }

    #[test]
    fn fixed_size_keeps_the_smallest_hashes() {
        let keys: Vec<u64> = (0..1000).collect();
        let s = run(ShardsMode::FixedSize { blocks: 10 }, &keys);
        assert_eq!(s.sampled_blocks, 10);
        let mut hashes: Vec<u64> = keys.iter().map(|&k| sample_hash(k, 42)).collect();
        hashes.sort_unstable();
        // The threshold rests on the 11th smallest hash: the 10 below it are the sample.
        assert_eq!(s.rate, hashes[10] as f64 / TWO_64);
    }

    #[test]
    fn hash_is_seeded_and_deterministic() {
        assert_eq!(sample_hash(5, 1), sample_hash(5, 1));
        assert_ne!(sample_hash(5, 1), sample_hash(5, 2));
        let below = (0..100_000u64).filter(|&k| (sample_hash(k, 9) as f64) < 0.01 * TWO_64).count();
        assert!((800..1200).contains(&below), "{below} of 100000 sampled at 1%");
    }

    #[test]
    fn bad_parameters_are_refused() {
        for rate in [0.0, -0.5, 1.5, f64::NAN] {
            let e = Shards::new(ShardsMode::FixedRate { rate }, 1).err().unwrap();
            assert!(e.0.contains("out of range"), "{}", e.0);
        }
        assert!(Shards::new(ShardsMode::FixedSize { blocks: 0 }, 1).is_err());
    }
}
