//! Hits and misses of a policy split by temporal distance: MQ paper (Zhou, Philbin, Li, USENIX
//! 2001) §5, Table 3. "Classify all accesses into two categories according to their temporal
//! distances: < C and >= C where C is the number of entries in the ... cache"; "first-time
//! accesses to any blocks are not counted in either category" (reported apart here).
//!
//! LRU can never miss below C: a block re-referenced after d < C accesses has at most d distinct
//! blocks above it in the LRU stack (a test). Policies that keep blocks longer than C trade misses
//! below C for hits at or above it, which is how the paper explains its Table 2 ranking.
//!
//! The classification itself is bufsim-core's `breakdown` (the engine tells it every access's
//! hit or miss); this module shapes its rows for `bufsim analyze`.

use serde::Serialize;

use bufsim_core::engine::EngineConfig;
use bufsim_core::run::{RunConfig, RunOptions};
use bufsim_core::spec::SpecError;
use bufsim_core::trace::{AddressKind, Request};
use bufsim_core::SimError;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BreakdownRow {
    pub policy: String,
    pub cache_blocks: u64,
    /// Re-references within fewer than `cache_blocks` accesses of the previous one.
    pub below_hits: u64,
    pub below_misses: u64,
    /// Re-references `cache_blocks` or more accesses after the previous one.
    pub above_hits: u64,
    pub above_misses: u64,
    /// First references (misses, in neither category).
    pub first: u64,
}

/// Table 3 for each policy spec at a cache of `cache_blocks` blocks, the policies in parallel.
pub fn distance_breakdown(
    requests: &[Request],
    kind: AddressKind,
    engine: &EngineConfig,
    policies: &[String],
    cache_blocks: u64,
    seed: u64,
) -> Result<Vec<BreakdownRow>, SimError> {
    // Too large a cache is refused by the runs' own check, which names the limit.
    if cache_blocks == 0 {
        return Err(SpecError("breakdown cache of 0 blocks holds nothing; give at least 1block".into()).into());
    }
    let configs: Vec<RunConfig> =
        policies.iter().map(|p| RunConfig::new(p, &format!("{cache_blocks}blocks"))).collect();
    let opts = RunOptions { engine: *engine, seed, ..RunOptions::default() };
    Ok(bufsim_core::breakdown::breakdown(requests, kind, &configs, &opts)?
        .into_iter()
        .map(|r| BreakdownRow {
            policy: r.policy,
            cache_blocks: r.cache_blocks,
            below_hits: r.below_hits,
            below_misses: r.below_misses,
            above_hits: r.above_hits,
            above_misses: r.above_misses,
            first: r.first,
        })
        .collect())
}
