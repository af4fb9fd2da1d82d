//! Miss ratio curves of any policy by miniature simulation (Waldspurger, Saemundsson, Ahmad,
//! Park, "Cache Modeling and Optimization using Miniature Simulations", USENIX ATC 2017, §3).
//!
//! A cache of `S` blocks is emulated by a cache of `R * S` blocks that sees only the blocks whose
//! spatial hash falls below `R * 2^64` (the SHARDS sample, all or none of a block's references),
//! so a whole curve costs about `R` times one full simulation per size. Sizes that scale below
//! one block are simulated at one block (the paper's lower limit on miniature cache size).
//!
//! Correction (§3, after SHARDS-adj, Waldspurger et al., FAST 2015, §4.3): the sample holds
//! `Ns` accesses where `R * N` were expected; the difference comes mostly from how often the
//! few sampled blocks are reused, so it is counted as hits, giving miss ratio
//! `misses / (R * N)` rather than `misses / Ns`. Both are reported.
//!
//! Deviation: `R` above, in the miniature sizes and in the correction, is the share of the
//! trace's distinct blocks that the sample actually holds (`Ds / D`, [`MiniatureCurve::scale`]),
//! not the nominal rate. The sample's block count is binomial, and on a trace of a few hundred
//! thousand blocks a 1% sample is off by 2% (one standard deviation) and often by 5%: a sample
//! 5% too large in a cache scaled by the nominal rate misses its extra blocks at every size, up
//! to the whole footprint, where the curve should be the cold misses alone. Scaled by `Ds / D`,
//! the miniature cache holds the same share of its sample as the full cache of the trace, and
//! the cold misses come out exactly. `Ds` is counted; `D` is estimated from the
//! [`POPULATION_SAMPLE`] smallest hashes of an independently seeded hash (k minimum values,
//! about 0.4% off), in the same pass over the trace. On CloudPhysics at 1% this took ARC's mean
//! absolute error over 20 sizes from 0.053, 0.006, 0.028, 0.004 and 0.021 (seeds 0 to 4) to
//! the values in docs/analysis.md.
//!
//! Everything besides the cache size is the configuration of `bufsim run`, and the sampled
//! stream is run through the same engine, so at rate 1 the curve is exactly the simulated one.

use bufsim_core::engine::EngineConfig;
use bufsim_core::layout::DEVICE_SHIFT;
use bufsim_core::run::{run_requests, run_trace, RunConfig, RunOptions};
use bufsim_core::spec::SpecError;
use bufsim_core::trace::{resolve, AddressKind, Op, Request};
use bufsim_core::SimError;
use serde::Serialize;

use crate::access::{walk, BlockAccess, Source, Visitor};
use crate::mrc::default_sizes;
use crate::shards::{sample_hash, Shards, ShardsMode};

/// Blocks the footprint estimate keeps (fixed-size SHARDS).
const FOOTPRINT_SAMPLE: u64 = 8192;

/// Hashes the estimate of the trace's distinct blocks keeps (k minimum values): its relative
/// error is about 1/sqrt(k), 0.4%, for 1 MiB at most.
const POPULATION_SAMPLE: usize = 65_536;

/// Salt for the population estimate's hash, so that it is independent of the sample's.
const POPULATION_SALT: u64 = 0xD1B5_4A32_D192_ED03;

/// What a miniature cache of size S is scaled by: S x the sample's share of the trace's distinct
/// blocks (the default, the module comment's deviation), or S x the nominal rate (the paper's
/// rule, `rate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MiniatureScale {
    #[default]
    Share,
    Rate,
}

impl MiniatureScale {
    pub fn name(self) -> &'static str {
        match self {
            MiniatureScale::Share => "share",
            MiniatureScale::Rate => "rate",
        }
    }

    pub fn parse(s: &str) -> Result<MiniatureScale, SpecError> {
        match s {
            "share" => Ok(MiniatureScale::Share),
            "rate" => Ok(MiniatureScale::Rate),
            _ => Err(SpecError(format!(
                "unknown miniature scale `{s}`; use `share` (the sample's share of the blocks, the default) or `rate` (the paper's)"
            ))),
        }
    }
}

/// The number of distinct keys of a stream, estimated from its `k` smallest hashes (Bar-Yossef
/// et al.'s k minimum values): exact while fewer than `k` were seen.
struct DistinctEstimate {
    k: usize,
    seed: u64,
    smallest: std::collections::BTreeSet<u64>,
    /// The largest hash kept once `k` are (a set's `last` walks the tree).
    bound: u64,
}

impl DistinctEstimate {
    fn new(k: usize, seed: u64) -> Self {
        DistinctEstimate { k, seed, smallest: std::collections::BTreeSet::new(), bound: u64::MAX }
    }

    #[inline]
    fn add(&mut self, key: u64) {
        let h = sample_hash(key, self.seed);
        // Once `k` are kept, most hashes are above the largest of them: one comparison.
        if h >= self.bound || !self.smallest.insert(h) {
            return;
        }
        if self.smallest.len() > self.k {
            self.smallest.pop_last();
        }
        if self.smallest.len() == self.k {
            self.bound = *self.smallest.last().expect("k > 0");
        }
    }

    fn estimate(&self) -> f64 {
        if self.smallest.len() < self.k {
            return self.smallest.len() as f64;
        }
        let kth = *self.smallest.last().expect("k > 0") as f64 / 2f64.powi(64);
        (self.k - 1) as f64 / kth
    }
}

/// A miniature-simulation curve.
#[derive(Clone, Debug, Serialize)]
pub struct MiniatureCurve {
    pub policy: String,
    /// Sampling rate R (1: every size fully simulated).
    pub rate: f64,
    /// Cache sizes the curve is for, in blocks, and the miniature size simulated for each.
    pub sizes: Vec<u64>,
    pub simulated_sizes: Vec<u64>,
    /// Miss ratio at each size, corrected for the sample's size (see the module comment).
    pub miss_ratio: Vec<f64>,
    /// Misses over sampled accesses, uncorrected.
    pub sample_miss_ratio: Vec<f64>,
    /// Demand block accesses in the trace and in the sample.
    pub accesses: u64,
    pub sampled_accesses: u64,
    /// Distinct blocks the sample's accesses touch, and the estimate of the trace's.
    pub sampled_blocks: u64,
    pub blocks_estimate: f64,
    /// The rate the sizes and the correction use: `sampled_blocks / blocks_estimate` (the
    /// module comment's deviation), or `rate` with [`MiniatureScale::Rate`], when nothing was
    /// sampled, or at rate 1.
    pub scale: f64,
    /// The rule asked for: `share` or `rate` ([`MiniatureScale`]).
    pub scaled_by: &'static str,
}

/// Collects the sampled block accesses as one-block requests on the cache key's device.
struct Sampler {
    seed: u64,
    threshold: u64,
    accesses: u64,
    /// Estimates the footprint, for the default grid of sizes (only when no sizes are given).
    footprint: Option<Shards>,
    /// Estimates the distinct blocks, for the scale; counts the sample's.
    population: DistinctEstimate,
    sampled_keys: std::collections::HashSet<u64>,
    sampled: Vec<Request>,
    time_ns: u64,
}

impl Sampler {
    /// Keeps each sampled block of `keys` as a one-block request `op` of its own (a drop or a
    /// hint: requests that are not accesses).
    fn keep_sampled(&mut self, op: Op, pid: u32, ctx: u64, keys: &mut dyn Iterator<Item = u64>) {
        for key in keys {
            if sample_hash(key, self.seed) < self.threshold {
                self.sampled.push(Request {
                    time_ns: self.time_ns,
                    dur_ns: 0,
                    pid,
                    ctx,
                    op,
                    file: (key >> DEVICE_SHIFT) as u32,
                    offset: key & ((1 << DEVICE_SHIFT) - 1),
                    size: 1,
                    in_blocks: true,
                    unfilled: 0,
                    opened: false,
                });
            }
        }
    }
}

impl Visitor for Sampler {
    fn request(&mut self, r: &Request) {
        self.time_ns = r.time_ns;
    }

    fn dropped(&mut self, _r: &Request, keys: &mut dyn Iterator<Item = u64>) {
        self.keep_sampled(Op::Drop, 0, 0, keys);
    }

    /// A hint's sampled blocks, each a hint of its own: the sampled cache reads them ahead as
    /// the full one would.
    fn hinted(&mut self, r: &Request, keys: &mut dyn Iterator<Item = u64>) {
        self.keep_sampled(Op::Hint, r.pid, r.ctx, keys);
    }

    #[inline]
    fn access(&mut self, a: &BlockAccess) {
        self.accesses += 1;
        if let Some(f) = &mut self.footprint {
            f.access(a.key);
        }
        self.population.add(a.key);
        if sample_hash(a.key, self.seed) < self.threshold {
            self.sampled_keys.insert(a.key);
            self.sampled.push(Request {
                time_ns: self.time_ns,
                dur_ns: 0,
                pid: a.pid,
                ctx: a.ctx,
                op: if a.write { Op::Write } else { Op::Read },
                file: (a.key >> DEVICE_SHIFT) as u32,
                offset: a.key & ((1 << DEVICE_SHIFT) - 1),
                size: 1,
                in_blocks: true,
                unfilled: 0,
                opened: false,
            });
        }
    }
}

/// The miniature size that stands for `blocks` at rate `rate`.
pub fn miniature_size(blocks: u64, rate: f64) -> u64 {
    ((blocks as f64 * rate).round() as u64).max(1)
}

/// The curve of `policy` over the trace at `path` at `sizes` (blocks; `None`: the grid of
/// `bufsim mrc`), by miniature simulation at sampling rate `rate` in (0, 1], the sizes scaled as
/// `how` says.
pub fn miniature_trace(
    path: &str,
    policy: &str,
    sizes: Option<&[u64]>,
    rate: f64,
    how: MiniatureScale,
    seed: u64,
    opts: &RunOptions,
) -> Result<MiniatureCurve, SimError> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(SpecError(format!("sampling rate must be in (0, 1], e.g. 0.01; got {rate}")).into());
    }
    if !opts.cache_steps.is_empty() {
        return Err(SpecError("a miniature simulation scales one cache size; drop cache_steps".into()).into());
    }
    if bufsim_core::policy::registry::needs_future(policy) {
        return Err(SpecError(format!(
            "policy `{policy}` needs the future, which a sample does not keep; run it with `bufsim run`"
        ))
        .into());
    }
    let format = resolve(path, opts.format)?;
    let engine: EngineConfig = opts.engine;
    let full = rate >= 1.0;
    let mut s = Sampler {
        seed,
        // At rate 1 nothing is kept in memory: the sizes are simulated over the file itself.
        threshold: if full { 0 } else { (rate * 2f64.powi(64)) as u64 },
        accesses: 0,
        footprint: match sizes {
            None => Some(Shards::new(ShardsMode::FixedSize { blocks: FOOTPRINT_SAMPLE }, seed)?),
            Some(_) => None,
        },
        population: DistinctEstimate::new(POPULATION_SAMPLE, seed ^ POPULATION_SALT),
        sampled_keys: std::collections::HashSet::new(),
        sampled: Vec::new(),
        time_ns: 0,
    };
    if !full || sizes.is_none() {
        // No bar of its own, but a cancelled call stops here too.
        let meter = opts.meter.quiet();
        walk(&Source::File { path, format, meter: &meter }, &engine, &mut s)?;
    }
    let sizes: Vec<u64> = match sizes {
        Some(s) => s.to_vec(),
        None => {
            let c = s.footprint.take().expect("estimated when no sizes are given").finish();
            default_sizes((c.sampled_blocks as f64 / c.rate).round() as u64)
        }
    };
    let sampled_blocks = s.sampled_keys.len() as u64;
    let blocks_estimate = s.population.estimate();
    let scale = if full || how == MiniatureScale::Rate || sampled_blocks == 0 || blocks_estimate <= 0.0 {
        rate
    } else {
        (sampled_blocks as f64 / blocks_estimate).min(1.0)
    };
    let simulated: Vec<u64> = sizes.iter().map(|&b| if full { b } else { miniature_size(b, scale) }).collect();
    let configs: Vec<RunConfig> = simulated.iter().map(|&b| RunConfig::new(policy, &format!("{b}blocks"))).collect();
    let results = if full {
        let r = run_trace(path, &configs, opts)?;
        s.accesses = r.first().map_or(0, |x| x.stats.accesses);
        r
    } else {
        // The sample is in blocks already: identity layout, no further filtering.
        let below = RunOptions { engine: EngineConfig { reads_only: false, ..engine }, ..opts.clone() };
        run_requests(&s.sampled, AddressKind::Device, &configs, &below)?
    };
    let sampled_accesses = results.first().map_or(0, |r| r.stats.accesses);
    let expected = s.accesses as f64 * scale;
    Ok(MiniatureCurve {
        policy: policy.to_string(),
        rate,
        sizes,
        simulated_sizes: simulated,
        miss_ratio: results
            .iter()
            .map(|r| if expected > 0.0 { (r.stats.misses as f64 / expected).min(1.0) } else { 0.0 })
            .collect(),
        sample_miss_ratio: results.iter().map(|r| 1.0 - r.stats.hit_ratio()).collect(),
        accesses: s.accesses,
        sampled_accesses,
        sampled_blocks,
        blocks_estimate,
        scale,
        scaled_by: how.name(),
    })
}

impl MiniatureCurve {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a curve always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distinct_estimate_counts_below_k_and_stays_close_above() {
        let mut few = DistinctEstimate::new(1024, 7);
        for i in 0..5000u64 {
            few.add(i % 700);
        }
        assert_eq!(few.estimate(), 700.0);
        // 200,000 keys, each seen three times: k = 1024 keeps the estimate within a few
        // percent (about 1/sqrt(k) = 3% one standard deviation; 10% is over three).
        let mut many = DistinctEstimate::new(1024, 7);
        for _ in 0..3 {
            for i in 0..200_000u64 {
                many.add(i.wrapping_mul(0x9E37_79B9));
            }
        }
        let e = many.estimate();
        assert!((e / 200_000.0 - 1.0).abs() < 0.1, "{e}");
        assert_eq!(many.smallest.len(), 1024);
    }
}
