//! Hits and misses of a policy split by temporal distance: MQ paper (Zhou, Philbin, Li, USENIX
//! 2001) §5, Table 3. "Classify all accesses into two categories according to their temporal
//! distances: < C and >= C where C is the number of entries in the ... cache"; "first-time
//! accesses to any blocks are not counted in either category" (reported apart here).
//!
//! LRU can never miss below C: a block re-referenced after d < C accesses has at most d distinct
//! blocks above it in the LRU stack (a test). Policies that keep blocks longer than C trade misses
//! below C for hits at or above it, which is how the paper explains its Table 2 ranking.
//!
//! Each policy runs in bufsim's engine, one block at a time, so every access's hit or miss is
//! known; without read-ahead, splitting requests into blocks changes nothing a policy sees (the
//! same accesses, times, contexts), and the totals equal `bufsim run`'s (a test).

use serde::Serialize;

use bufsim_core::engine::{included, Engine, EngineConfig, Future, FutureBuilder};
use bufsim_core::layout::{block_key, Layout};
use bufsim_core::policy::registry::needs_future;
use bufsim_core::policy::{build, BuildEnv, Policy, PolicyVisitor};
use bufsim_core::spec::SpecError;
use bufsim_core::trace::{AddressKind, Request};
use bufsim_core::SimError;

use crate::access::{layout, Source};
use crate::history::BlockHistory;

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

struct Classify<'a> {
    requests: &'a [Request],
    layout: &'a Layout,
    future: Option<&'a Future>,
    engine: EngineConfig,
    capacity: u64,
}

impl PolicyVisitor for Classify<'_> {
    type Output = BreakdownRow;

    fn visit<P: Policy>(self, policy: P) -> BreakdownRow {
        let mut e = Engine::new(policy, self.capacity as usize, self.engine, self.layout, self.future);
        let mut history = BlockHistory::default();
        let mut row = BreakdownRow { cache_blocks: self.capacity, ..BreakdownRow::default() };
        let bs = self.engine.block_size;
        for r in self.requests.iter().filter(|r| included(r, &self.engine)) {
            let (first, n) = r.block_range(bs);
            for b in first..first + n {
                // The same block as a request of its own: block-addressed, or its byte range.
                let one = if r.in_blocks { Request { offset: b, size: 1, ..*r } } else { Request { offset: b * bs, size: bs, ..*r } };
                let before = e.stats.hits;
                e.request(&one);
                let hit = e.stats.hits > before;
                let (device, block) = self.layout.place(r.file, b);
                match history.access(block_key(device, block)) {
                    None => row.first += 1,
                    Some(d) if d < self.capacity => {
                        row.below_hits += hit as u64;
                        row.below_misses += !hit as u64;
                    }
                    Some(_) => {
                        row.above_hits += hit as u64;
                        row.above_misses += !hit as u64;
                    }
                }
            }
        }
        row
    }
}

/// Table 3 for each policy spec at a cache of `cache_blocks` blocks, one thread per policy.
pub fn distance_breakdown(
    requests: &[Request],
    kind: AddressKind,
    engine: &EngineConfig,
    policies: &[String],
    cache_blocks: u64,
    seed: u64,
) -> Result<Vec<BreakdownRow>, SimError> {
    if cache_blocks == 0 || cache_blocks >= u32::MAX as u64 {
        return Err(SpecError(format!("breakdown cache of {cache_blocks} blocks is out of range; give at least 1block")).into());
    }
    let env = BuildEnv { capacity: cache_blocks as usize, block_size: engine.block_size, seed };
    let built = policies.iter().map(|p| build(p, &env)).collect::<Result<Vec<_>, _>>()?;
    let layout = layout(&Source::Memory { requests, kind }, engine)?;
    let future = policies.iter().any(|p| needs_future(p)).then(|| {
        let mut fb = FutureBuilder::default();
        for r in requests {
            fb.request(r, engine, &layout);
        }
        fb.finish()
    });
    let rows: Vec<BreakdownRow> = std::thread::scope(|s| {
        let handles: Vec<_> = built
            .into_iter()
            .zip(policies)
            .map(|(policy, spec)| {
                let (layout, future) = (&layout, future.as_ref());
                s.spawn(move || {
                    let future = if needs_future(spec) { future } else { None };
                    let mut row = policy.visit(Classify { requests, layout, future, engine: *engine, capacity: cache_blocks });
                    row.policy = spec.clone();
                    row
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a breakdown run panicked")).collect()
    });
    Ok(rows)
}
