//! Hits and misses by temporal distance, the MQ paper's Table 3 (Zhou, Philbin, Li, USENIX 2001,
//! §5.2): every access but a block's first is classed by its temporal distance d, the number of
//! references since the previous access to the same block (§3), as d < C or d >= C where C is the
//! number of blocks the cache holds. LRU cannot miss below C (fewer than C distinct blocks fit
//! between the two accesses); a policy good for second-level caches turns misses at d >= C into
//! hits, at the price of a few misses below C.

use bufsim_trace::{AddressKind, Request};
use rustc_hash::FxHashMap;

use crate::engine::Engine;
use crate::policy::{build, registry::needs_future, Access, Policy, PolicyVisitor};
use crate::hierarchy::second_level;
use crate::run::{build_env, decode, prepare, resolve_format, validate, RunConfig, RunOptions, Source};
use crate::SimError;

/// One policy's Table 3 row at one cache size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistanceBreakdown {
    pub policy: String,
    pub cache_blocks: u64,
    /// Accesses with temporal distance below the cache size: hits and misses.
    pub near_hits: u64,
    pub near_misses: u64,
    /// Accesses with temporal distance at or above the cache size.
    pub far_hits: u64,
    pub far_misses: u64,
    /// First accesses to a block, counted in neither category (as the paper's note says).
    pub first_accesses: u64,
}

struct Classify<'a> {
    prepared: &'a crate::run::Prepared,
    requests: &'a [Request],
    capacity: u64,
    future: bool,
    engine: crate::engine::EngineConfig,
}

impl PolicyVisitor for Classify<'_> {
    type Output = DistanceBreakdown;

    fn visit<P: Policy>(self, policy: P) -> DistanceBreakdown {
        let future = if self.future { self.prepared.future.as_ref() } else { None };
        let mut row = DistanceBreakdown { cache_blocks: self.capacity, ..Default::default() };
        let mut last: FxHashMap<u64, u64> = FxHashMap::default();
        let c = self.capacity;
        let mut observe = |a: &Access, hit: bool| match last.insert(a.key, a.time) {
            None => row.first_accesses += 1,
            Some(prev) => {
                let near = a.time - prev < c;
                match (near, hit) {
                    (true, true) => row.near_hits += 1,
                    (true, false) => row.near_misses += 1,
                    (false, true) => row.far_hits += 1,
                    (false, false) => row.far_misses += 1,
                }
            }
        };
        let mut engine = Engine::new(policy, c as usize, self.engine, &self.prepared.layout, future).with_observer(&mut observe);
        for r in self.requests {
            engine.request(r);
        }
        drop(engine);
        row
    }
}

/// Table 3 rows for each configuration (read-ahead must be `none`: the paper's analysis is of
/// demand accesses alone).
pub fn breakdown(requests: &[Request], kind: AddressKind, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<DistanceBreakdown>, SimError> {
    let blocks = validate(configs, opts)?;
    if let Some(c) = configs.iter().find(|c| c.prefetch != "none") {
        return Err(crate::spec::SpecError(format!(
            "the temporal-distance breakdown counts demand accesses only; run it without read-ahead (got `{}`)",
            c.prefetch
        ))
        .into());
    }
    let need_future = configs.iter().any(|c| needs_future(&c.policy));
    let prepared = prepare(&Source::Memory(requests), kind, need_future, false, opts)?;
    configs
        .iter()
        .zip(blocks)
        .map(|(cfg, b)| {
            let policy = build(&cfg.policy, &build_env(b, opts))?;
            let mut row = policy.visit(Classify { prepared: &prepared, requests, capacity: b, future: needs_future(&cfg.policy), engine: opts.engine });
            row.policy = cfg.policy.clone();
            Ok(row)
        })
        .collect()
}

/// Table 3 rows for each configuration over the trace at `path` (through the first level of a
/// hierarchy when `opts.first_level` is set).
pub fn breakdown_trace(path: &str, configs: &[RunConfig], opts: &RunOptions) -> Result<Vec<DistanceBreakdown>, SimError> {
    validate(configs, opts)?;
    let format = resolve_format(path, opts.format)?;
    let requests = decode(path, format)?;
    match &opts.first_level {
        Some(first) => {
            let (l2, _) = second_level(&requests, format.address_kind(), first, &opts.engine, opts.seed)?;
            let below = RunOptions { first_level: None, ..opts.clone() };
            breakdown(&l2, AddressKind::Device, configs, &below)
        }
        None => breakdown(&requests, format.address_kind(), configs, opts),
    }
}
