//! `bufsim mrc`: the exact LRU miss ratio curve (Mattson) and/or its SHARDS estimate from one
//! pass, at chosen cache sizes, with SHARDS's error against the exact curve when both are run.

use serde::Serialize;

use bufsim_core::engine::EngineConfig;
use bufsim_core::run::resolve_format;
use bufsim_core::spec::SpecError;
use bufsim_core::trace::{AddressKind, Format, Meter, ReadOptions, Request};
use bufsim_core::SimError;

use crate::access::{walk, BlockAccess, Source, Visitor};
use crate::mrc::{default_sizes, LruMrc, MissCurve};
use crate::shards::{Shards, ShardsCurve, ShardsMode};

/// Which cache sizes to report.
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    /// 1 block, then four sizes per doubling up to the footprint.
    Grid,
    /// Every size from 1 block to the footprint.
    All,
    /// These sizes, in blocks, in the order given.
    List(Vec<u64>),
}

#[derive(Clone, Debug)]
pub struct MrcOptions {
    pub engine: EngineConfig,
    pub format: Option<Format>,
    pub sizes: Sizes,
    /// Compute the exact curve (needed for SHARDS's error).
    pub exact: bool,
    pub shards: Option<ShardsMode>,
    /// Seed of the SHARDS sampling hash.
    pub seed: u64,
    /// Where the passes count their progress (a progress bar); off by default.
    pub meter: Meter,
}

impl Default for MrcOptions {
    fn default() -> Self {
        MrcOptions {
            engine: EngineConfig::default(),
            format: None,
            sizes: Sizes::Grid,
            exact: true,
            shards: None,
            seed: 42,
            meter: Meter::default(),
        }
    }
}

impl MrcOptions {
    fn check(&self) -> Result<(), SpecError> {
        bufsim_core::run::check_block_size(self.engine.block_size)?;
        if !self.exact && self.shards.is_none() {
            return Err(SpecError("nothing to compute: keep the exact curve or give a SHARDS rate or sample size (--shards, --shards-size)".into()));
        }
        if let Sizes::List(s) = &self.sizes {
            if s.is_empty() {
                return Err(SpecError("no cache size given; give at least one, such as 64MiB".into()));
            }
            if s.contains(&0) {
                return Err(SpecError("cache size 0 holds no block; give at least 1block".into()));
            }
        }
        if let Some(m) = self.shards {
            m.check()?;
        }
        Ok(())
    }
}

/// How far a SHARDS curve is from the exact one, over the whole curve: every cache size from 1
/// block to the footprint (evenly spaced sizes, at most [`ERROR_POINTS`], beyond that), whatever
/// sizes are printed. The mean is the SHARDS paper's mean absolute error (MAE).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardsError {
    pub mean_abs: f64,
    pub max_abs: f64,
    /// Size (blocks) of the largest difference.
    pub max_at_blocks: u64,
    /// Cache sizes compared.
    pub sizes: u64,
}

/// Most cache sizes the error is measured at.
pub const ERROR_POINTS: u64 = 10_000_000;

pub fn shards_error(exact: &MissCurve, shards: &ShardsCurve) -> ShardsError {
    let distinct = exact.distinct().max(1);
    let step = distinct.div_ceil(ERROR_POINTS);
    let mut err = ShardsError { mean_abs: 0.0, max_abs: 0.0, max_at_blocks: 1, sizes: 0 };
    let mut sum = 0.0;
    let mut c = step;
    while c <= distinct {
        let d = (shards.miss_ratio(c) - exact.miss_ratio(c)).abs();
        sum += d;
        err.sizes += 1;
        if d > err.max_abs {
            err.max_abs = d;
            err.max_at_blocks = c;
        }
        c += step;
    }
    err.mean_abs = sum / err.sizes as f64;
    err
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardsReport {
    #[serde(flatten)]
    pub mode: ShardsMode,
    pub seed: u64,
    /// Final sampling rate.
    pub final_rate: f64,
    pub sampled_refs: u64,
    pub sampled_blocks: u64,
    pub miss_ratio: Vec<f64>,
    pub error: Option<ShardsError>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MrcReport {
    pub trace: String,
    pub block_size: u64,
    pub accesses: u64,
    /// Distinct blocks (exact; SHARDS alone estimates it as sampled blocks / rate).
    pub distinct: u64,
    /// First references; `None` without the exact curve.
    pub cold: Option<u64>,
    /// Cache sizes in blocks, one per row.
    pub sizes: Vec<u64>,
    /// Exact LRU misses and miss ratio at each size.
    pub misses: Option<Vec<u64>>,
    pub miss_ratio: Option<Vec<f64>>,
    pub shards: Option<ShardsReport>,
    /// Blocks the trace's drop requests covered (truncated or deleted files): when not 0 the
    /// curves are estimates ([`crate::mrc`]).
    pub dropped_blocks: u64,
}

impl MrcReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a curve always serializes")
    }
}

struct Curves {
    exact: Option<LruMrc>,
    shards: Option<Shards>,
    dropped: u64,
}

impl Visitor for Curves {
    #[inline]
    fn access(&mut self, a: &BlockAccess) {
        if let Some(m) = &mut self.exact {
            m.access(a.key);
        }
        if let Some(s) = &mut self.shards {
            s.access(a.key);
        }
    }

    fn dropped(&mut self, _r: &Request, keys: &mut dyn Iterator<Item = u64>) {
        for k in keys {
            self.dropped += 1;
            if let Some(m) = &mut self.exact {
                m.drop_key(k);
            }
            if let Some(s) = &mut self.shards {
                s.drop_key(k);
            }
        }
    }
}

fn run(source: &Source, name: &str, opts: &MrcOptions) -> Result<MrcReport, SimError> {
    opts.check()?;
    let mut c = Curves {
        exact: opts.exact.then(LruMrc::new),
        shards: opts.shards.map(|m| Shards::new(m, opts.seed)).transpose()?,
        dropped: 0,
    };
    walk(source, &opts.engine, &mut c)?;
    let exact: Option<MissCurve> = c.exact.map(LruMrc::finish);
    let shards: Option<ShardsCurve> = c.shards.map(Shards::finish);
    let (accesses, distinct) = match (&exact, &shards) {
        (Some(e), _) => (e.accesses, e.distinct()),
        (None, Some(s)) => (s.accesses, (s.sampled_blocks as f64 / s.rate).round() as u64),
        (None, None) => unreachable!("checked: something to compute"),
    };
    let sizes = match &opts.sizes {
        Sizes::Grid => default_sizes(distinct),
        Sizes::All => (1..=distinct.max(1)).collect(),
        Sizes::List(s) => s.clone(),
    };
    let shards = shards.map(|s| {
        let miss_ratio: Vec<f64> = sizes.iter().map(|&c| s.miss_ratio(c)).collect();
        let error = exact.as_ref().map(|e| shards_error(e, &s));
        ShardsReport {
            mode: s.mode,
            seed: opts.seed,
            final_rate: s.rate,
            sampled_refs: s.sampled_refs,
            sampled_blocks: s.sampled_blocks,
            miss_ratio,
            error,
        }
    });
    Ok(MrcReport {
        trace: name.to_string(),
        block_size: opts.engine.block_size,
        accesses,
        distinct,
        cold: exact.as_ref().map(|e| e.cold),
        misses: exact.as_ref().map(|e| sizes.iter().map(|&c| e.misses(c)).collect()),
        miss_ratio: exact.as_ref().map(|e| sizes.iter().map(|&c| e.miss_ratio(c)).collect()),
        sizes,
        shards,
        dropped_blocks: c.dropped,
    })
}

/// Miss ratio curves of the trace at `path`, streamed (constant memory besides per-block state).
pub fn mrc_trace(path: &str, opts: &MrcOptions) -> Result<MrcReport, SimError> {
    opts.check()?;
    if !bufsim_core::trace::rewindable(path) {
        // Standard input or a pipe: read once, into memory, for every pass.
        let loaded = bufsim_core::run::LoadedTrace::load_with(
            path,
            opts.format,
            &ReadOptions { meter: opts.meter.clone(), ..Default::default() },
        )?;
        return run(
            &Source::Memory { requests: &loaded.requests, kind: loaded.format.address_kind(), meter: &opts.meter },
            path,
            opts,
        );
    }
    let format = resolve_format(path, opts.format)?;
    run(&Source::File { path, format, meter: &opts.meter }, path, opts)
}

/// Miss ratio curves of requests already in memory.
pub fn mrc_requests(
    requests: &[Request],
    kind: AddressKind,
    name: &str,
    opts: &MrcOptions,
) -> Result<MrcReport, SimError> {
    run(&Source::Memory { requests, kind, meter: &opts.meter }, name, opts)
}
