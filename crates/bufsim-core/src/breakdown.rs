//! Hits and misses by temporal distance, the MQ paper's Table 3 (Zhou, Philbin, Li, USENIX 2001,
//! §5.2): every access but a block's first is classed by its temporal distance d, the number of
//! references since the previous access to the same block (§3), as d < C or d >= C where C is the
//! number of blocks the cache holds. LRU cannot miss below C (fewer than C distinct blocks fit
//! between the two accesses); a policy good for second-level caches turns misses at d >= C into
//! hits, at the price of a few misses below C.

use bufsim_trace::progress::{BATCH as PROGRESS_BATCH, IN_MEMORY};
use bufsim_trace::{AddressKind, Meter, ReadOptions, Request};
use rustc_hash::FxHashMap;

use crate::engine::Engine;
use crate::hierarchy::second_level;
use crate::policy::{build, registry::needs_future, Access, Policy, PolicyVisitor};
use crate::run::{
    build_env, decode_with, parallel_map, prepare, resolve_format, validate, RunConfig, RunOptions, Source,
};
use crate::SimError;

/// One policy's Table 3 row at one cache size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistanceBreakdown {
    pub policy: String,
    pub cache_blocks: u64,
    /// Re-references whose temporal distance is below the cache size: hits and misses.
    pub below_hits: u64,
    pub below_misses: u64,
    /// Re-references at or above the cache size.
    pub above_hits: u64,
    pub above_misses: u64,
    /// First accesses to a block, counted in neither category (as the paper's note says).
    pub first: u64,
}

struct Classify<'a> {
    prepared: &'a crate::run::Prepared,
    requests: &'a [Request],
    capacity: u64,
    future: bool,
    engine: crate::engine::EngineConfig,
    meter: &'a Meter,
}

impl PolicyVisitor for Classify<'_> {
    type Output = DistanceBreakdown;

    fn visit<P: Policy + 'static>(self, policy: P) -> DistanceBreakdown {
        let future = if self.future { self.prepared.future.as_ref() } else { None };
        let mut row = DistanceBreakdown { cache_blocks: self.capacity, ..Default::default() };
        let mut last: FxHashMap<u64, u64> = FxHashMap::default();
        let c = self.capacity;
        let mut observe = |a: &Access, hit: bool| match last.insert(a.key, a.time) {
            None => row.first += 1,
            Some(prev) => {
                let near = a.time - prev < c;
                match (near, hit) {
                    (true, true) => row.below_hits += 1,
                    (true, false) => row.below_misses += 1,
                    (false, true) => row.above_hits += 1,
                    (false, false) => row.above_misses += 1,
                }
            }
        };
        let mut engine =
            Engine::new(policy, c as usize, self.engine, &self.prepared.layout, future).with_observer(&mut observe);
        // A batch at a time: a cancelled breakdown stops between batches (its caller reports it).
        for batch in self.requests.chunks(PROGRESS_BATCH as usize) {
            if self.meter.is_cancelled() {
                break;
            }
            for r in batch {
                engine.request(r);
            }
        }
        drop(engine);
        row
    }
}

/// Table 3 rows for each configuration (read-ahead must be `none`: the paper's analysis is of
/// demand accesses alone).
pub fn breakdown(
    requests: &[Request],
    kind: AddressKind,
    configs: &[RunConfig],
    opts: &RunOptions,
) -> Result<Vec<DistanceBreakdown>, SimError> {
    let blocks = validate(configs, opts)?;
    if !opts.cache_steps.is_empty() {
        // Temporal distances are measured against one cache size.
        return Err(crate::spec::SpecError(
            "the temporal-distance breakdown takes one cache size; drop cache_steps".into(),
        )
        .into());
    }
    if let Some(c) = configs.iter().find(|c| c.prefetch != "none") {
        return Err(crate::spec::SpecError(format!(
            "the temporal-distance breakdown counts demand accesses only; run it without read-ahead (got `{}`)",
            c.prefetch
        ))
        .into());
    }
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let prepared = prepare(&Source::Memory(requests), kind, need_future, false, opts)?;
    parallel_map(configs.len(), opts.jobs, |i| {
        let cfg = &configs[i];
        let policy = build(&cfg.policy, &build_env(blocks[i], opts))?;
        let future = needs_future(&cfg.policy);
        let meter = &opts.meter;
        let mut row = policy.visit(Classify {
            prepared: &prepared,
            requests,
            capacity: blocks[i],
            future,
            engine: opts.engine,
            meter,
        });
        meter.go_on(IN_MEMORY)?;
        row.policy = cfg.policy.clone();
        Ok(row)
    })
}

/// Table 3 rows for each configuration over the trace at `path` (through the first level of a
/// hierarchy when `opts.first_level` is set).
pub fn breakdown_trace(
    path: &str,
    configs: &[RunConfig],
    opts: &RunOptions,
) -> Result<Vec<DistanceBreakdown>, SimError> {
    validate(configs, opts)?;
    let format = resolve_format(path, opts.format)?;
    let read = ReadOptions { meter: opts.meter.clone(), ..ReadOptions::default() };
    let requests = decode_with(path, format, &read)?.0;
    match &opts.first_level {
        Some(first) => {
            let (l2, _) = second_level(&requests, format.address_kind(), first, &opts.engine, opts.seed)?;
            let below = RunOptions { first_level: None, ..opts.clone() };
            breakdown(&l2, AddressKind::Device, configs, &below)
        }
        None => breakdown(&requests, format.address_kind(), configs, opts),
    }
}
