//! Working-set size as the prefetching paper (Butt, Gniady, Hu, IEEE TC 2007) §6.1 defines it:
//! "the maximum hit ratio ... under Belady's optimal cache replacement algorithm is determined
//! using an infinite-sized cache. The working set size ... is then determined as the minimum
//! cache size at which the optimal replacement achieves a hit ratio equal to 90 percent of the
//! maximum hit ratio."
//!
//! Method: a search over cache sizes with bufsim's own OPT (the registry's `opt` policy driven by
//! the engine, with the future computed once for all runs), so the answer agrees with
//! `bufsim run --policy opt`. It is exact, not an approximation: OPT (demand fetching,
//! MIN) is a stack algorithm (Mattson et al. 1970), so its hits never fall as the cache grows and
//! the smallest size reaching the target is well defined. The infinite cache misses only first
//! references, so its hits are accesses - distinct blocks, reached at the footprint. Each round
//! probes as many sizes as there are worker threads, splitting the interval evenly: ~log2(footprint)
//! OPT runs on one thread.

use serde::Serialize;

use bufsim_core::engine::{Engine, EngineConfig, Future, FutureBuilder};
use bufsim_core::layout::Layout;
use bufsim_core::policy::{build, BuildEnv, Policy, PolicyVisitor};
use bufsim_core::SimError;

use crate::access::{layout, Source};

/// OPT hits over the requests of `source` with a cache of `capacity` blocks.
struct OptRun<'a> {
    source: &'a Source<'a>,
    layout: &'a Layout,
    future: &'a Future,
    engine: EngineConfig,
    capacity: usize,
}

impl PolicyVisitor for OptRun<'_> {
    type Output = Result<u64, SimError>;

    fn visit<P: Policy + 'static>(self, policy: P) -> Result<u64, SimError> {
        let mut e = Engine::new(policy, self.capacity, self.engine, self.layout, Some(self.future));
        self.source.for_each_request(|r| e.request(r))?;
        Ok(e.finish().0.hits)
    }
}

fn opt_hits(run: OptRun) -> Result<u64, SimError> {
    let env = BuildEnv { capacity: run.capacity, block_size: run.engine.block_size, seed: 0 };
    build("opt", &env)?.visit(run)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkingSetReport {
    pub method: &'static str,
    /// OPT's hit ratio with an infinite cache: 1 - distinct / accesses.
    pub max_hit_ratio: f64,
    /// 90 percent of it.
    pub target_hit_ratio: f64,
    /// Smallest OPT cache reaching the target (0 when the trace re-references nothing).
    pub blocks: u64,
    pub bytes: u64,
    /// OPT's hit ratio at that size.
    pub hit_ratio: f64,
    /// Every OPT run of the search: (cache blocks, hits), by size.
    pub probes: Vec<(u64, u64)>,
}

/// Share of the maximum hit ratio the definition asks for, as a fraction num / den.
const TARGET: (u64, u64) = (9, 10);

/// The working set of `source`, which is read once for the future and once per OPT run: a trace
/// file is streamed each time, so memory follows the accesses (8 bytes each for the future) and
/// the blocks, not the requests.
pub fn working_set(
    source: &Source,
    engine: &EngineConfig,
    accesses: u64,
    distinct: u64,
    jobs: usize,
) -> Result<WorkingSetReport, SimError> {
    let max_hits = accesses - distinct;
    let ratio = |hits: u64| if accesses == 0 { 0.0 } else { hits as f64 / accesses as f64 };
    let reaches = |hits: u64| hits * TARGET.1 >= max_hits * TARGET.0;
    let mut report = WorkingSetReport {
        method: "opt-search",
        max_hit_ratio: ratio(max_hits),
        target_hit_ratio: ratio(max_hits) * TARGET.0 as f64 / TARGET.1 as f64,
        blocks: 0,
        bytes: 0,
        hit_ratio: 0.0,
        probes: Vec::new(),
    };
    if max_hits == 0 {
        return Ok(report);
    }
    let threads = if jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { jobs };
    // The passes of the search draw no progress of their own (the analysis's pass has), but
    // stop when the analysis is cancelled.
    let quiet = source.meter().quiet();
    let source = source.with_meter(&quiet);
    let layout = layout(&source, engine)?;
    let mut fb = FutureBuilder::default();
    source.for_each_request(|r| fb.request(r, engine, &layout))?;
    let future = fb.finish();
    let probe = |capacity: u64| {
        let run =
            OptRun { source: &source, layout: &layout, future: &future, engine: *engine, capacity: capacity as usize };
        opt_hits(run)
    };
    // Invariant: the answer is in [lo, hi] and `hi` reaches the target.
    let (mut lo, mut hi, mut hi_hits) = (1u64, distinct, max_hits);
    while lo < hi {
        let span = hi - lo;
        let k = (threads as u64).min(span).max(1);
        let mut sizes: Vec<u64> = (1..=k).map(|i| lo + span * i / (k + 1)).collect();
        sizes.dedup();
        let hits: Vec<Result<u64, SimError>> = std::thread::scope(|s| {
            let handles: Vec<_> = sizes.iter().map(|&c| s.spawn(move || probe(c))).collect();
            handles.into_iter().map(|h| h.join().expect("an OPT run panicked")).collect()
        });
        let mut next_lo = sizes.last().map_or(lo, |&s| s + 1);
        for (i, h) in hits.into_iter().enumerate() {
            let h = h?;
            report.probes.push((sizes[i], h));
            if reaches(h) {
                hi = sizes[i];
                hi_hits = h;
                next_lo = if i == 0 { lo } else { sizes[i - 1] + 1 };
                break;
            }
        }
        lo = next_lo;
    }
    report.probes.sort_unstable();
    report.blocks = hi;
    report.bytes = hi.saturating_mul(engine.block_size);
    report.hit_ratio = ratio(hi_hits);
    Ok(report)
}
