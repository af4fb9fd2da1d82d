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
//! the cold misses come out exactly. `Ds` is counted; `D` is counted too up to
//! [`POPULATION_EXACT`] blocks and estimated past that (HyperLogLog over an independently seeded
//! hash, about 0.4% off), in the same pass over the trace. On CloudPhysics at 1% this took ARC's mean
//! absolute error over 20 sizes from 0.053, 0.006, 0.028, 0.004 and 0.021 (seeds 0 to 4) to
//! the values in docs/analysis.md.
//!
//! Everything besides the cache size is the configuration of `bufsim run`, and the sampled
//! stream is run through the same engine, so at rate 1 the curve is exactly the simulated one.

use bufsim_core::blockmap::BlockMap;
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

/// Registers of the estimate of the trace's distinct blocks (HyperLogLog): its relative error
/// is about 1.04 / sqrt(2^16), 0.4%, in 64 KiB.
const POPULATION_REGISTER_BITS: u32 = 16;

/// Distinct blocks counted exactly before the estimate takes over.
const POPULATION_EXACT: usize = 16_384;

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

/// The number of distinct keys of a stream: counted exactly up to [`POPULATION_EXACT`], then
/// estimated by HyperLogLog (Flajolet, Fusy, Gandouet, Meunier, AofA 2007, with its
/// linear-counting rule for small counts). Every access updates one byte of 64 KiB, which stays
/// in the CPU's caches: an estimate that kept the 65,536 smallest hashes (k minimum values,
/// the same accuracy) spent two thirds of a miniature run's time waiting on its index and heap.
struct DistinctEstimate {
    seed: u64,
    registers: Vec<u8>,
    /// The distinct hashes while there are at most [`POPULATION_EXACT`]; `None` after.
    exact: Option<BlockMap>,
}

impl DistinctEstimate {
    fn new(seed: u64) -> Self {
        DistinctEstimate {
            seed,
            registers: vec![0; 1 << POPULATION_REGISTER_BITS],
            exact: Some(BlockMap::with_max_len(POPULATION_EXACT + 1)),
        }
    }

    #[inline]
    fn add(&mut self, key: u64) {
        let h = sample_hash(key, self.seed);
        // The top bits pick a register; it keeps the most leading zeros (plus one) of the rest.
        let i = (h >> (64 - POPULATION_REGISTER_BITS)) as usize;
        let rest = h << POPULATION_REGISTER_BITS;
        let rank = (rest.leading_zeros() + 1).min(64 - POPULATION_REGISTER_BITS + 1) as u8;
        let r = &mut self.registers[i];
        *r = (*r).max(rank);
        if let Some(exact) = &mut self.exact {
            if let Err(vacant) = exact.find(h) {
                exact.insert_vacant(vacant, h, 0);
                if exact.len() > POPULATION_EXACT {
                    self.exact = None;
                }
            }
        }
    }

    fn estimate(&self) -> f64 {
        if let Some(exact) = &self.exact {
            return exact.len() as f64;
        }
        let m = self.registers.len() as f64;
        let sum: f64 = self.registers.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
        let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
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
    /// Distinct blocks the sample's accesses touch, and the estimate of the trace's (0 when
    /// the scale is the nominal rate, which needs none).
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
    /// Estimates the distinct blocks, for the scale (only when a sample is scaled by its share);
    /// `sampled_keys` counts the sample's.
    population: Option<DistinctEstimate>,
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
        if let Some(p) = &mut self.population {
            p.add(a.key);
        }
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
        population: (!full && how == MiniatureScale::Share).then(|| DistinctEstimate::new(seed ^ POPULATION_SALT)),
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
    let blocks_estimate = s.population.as_ref().map_or(0.0, DistinctEstimate::estimate);
    // Rate 1, the paper's rule, or nothing sampled: the nominal rate.
    let scale = if sampled_blocks == 0 || blocks_estimate <= 0.0 {
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
    fn the_distinct_estimate_counts_small_streams_and_stays_close_on_large_ones() {
        let mut few = DistinctEstimate::new(7);
        for i in 0..50_000u64 {
            few.add(i % 7_000);
        }
        assert_eq!(few.estimate(), 7_000.0);
        // Past the exact count: within 2% (five standard deviations) from linear counting's
        // range to the raw estimate's, each key seen three times.
        for n in [30_000u64, 200_000, 1_000_000] {
            let mut many = DistinctEstimate::new(7);
            for _ in 0..3 {
                for i in 0..n {
                    many.add(i.wrapping_mul(0x9E37_79B9));
                }
            }
            assert!(many.exact.is_none());
            let e = many.estimate();
            assert!((e / n as f64 - 1.0).abs() < 0.02, "{n}: {e}");
        }
    }
}
