//! `bufsim analyze`: every characterization of a trace from one streaming pass (two for file
//! traces, whose layout needs the file sizes first), plus the OPT runs of the working-set search.

use serde::Serialize;

use bufsim_core::engine::EngineConfig;
use bufsim_core::policy::{build, BuildEnv};
use bufsim_core::run::{resolve_format, LoadedTrace};
use bufsim_core::spec::SpecError;
use bufsim_core::trace::{AddressKind, Format, Meter, ReadOptions, Request};
use bufsim_core::SimError;

use crate::access::{walk, BlockAccess, Source, Visitor};
use crate::breakdown::{distance_breakdown, BreakdownRow};
use crate::consecutive::{Consecutive, ConsecutiveReport};
use crate::frequency::FrequencyReport;
use crate::history::BlockHistory;
use crate::irg::{GapReport, GapsByContext};
use crate::requests::{AccessReport, RequestReport, RequestStats};
use crate::temporal::{TemporalHistogram, TemporalReport};
use crate::working_set::{working_set, WorkingSetReport};

#[derive(Clone, Debug)]
pub struct AnalysisOptions {
    pub engine: EngineConfig,
    /// `None` detects the format from the content.
    pub format: Option<Format>,
    /// Search the working-set size (OPT runs, each a pass over the trace).
    pub working_set: bool,
    /// Program contexts shown in the inter-reference gap report (the busiest ones).
    pub contexts: usize,
    /// A bin belongs to the temporal-distance hill while it holds at least this share of the peak.
    pub hill_fraction: f64,
    /// Threads for the OPT runs; 0 means all cores.
    pub jobs: usize,
    /// MQ Table 3: these policies' hits and misses below and above this cache size (blocks).
    pub breakdown: Option<(Vec<String>, u64)>,
    /// Seed of the policies of the breakdown that draw random numbers.
    pub seed: u64,
    /// Where the passes count their progress (a progress bar); off by default.
    pub meter: Meter,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            engine: EngineConfig::default(),
            format: None,
            working_set: true,
            contexts: 8,
            hill_fraction: 0.1,
            jobs: 0,
            breakdown: None,
            seed: 42,
            meter: Meter::default(),
        }
    }
}

impl AnalysisOptions {
    fn check(&self) -> Result<(), SpecError> {
        bufsim_core::run::check_block_size(self.engine.block_size)?;
        if let Some((policies, cache)) = &self.breakdown {
            if policies.is_empty() {
                return Err(SpecError("the breakdown needs at least one policy, such as lru".into()));
            }
            // Bad specs are reported before the trace is read.
            let env = BuildEnv {
                capacity: (*cache).clamp(1, u32::MAX as u64 - 1) as usize,
                block_size: self.engine.block_size,
                seed: self.seed,
            };
            for p in policies {
                build(p, &env)?;
            }
        }
        if !(self.hill_fraction > 0.0 && self.hill_fraction <= 1.0) {
            return Err(SpecError(format!(
                "hill fraction {} is out of range; give a share of the peak in (0, 1], such as 0.1",
                self.hill_fraction
            )));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Footprint {
    /// Distinct blocks referenced.
    pub blocks: u64,
    pub bytes: u64,
}

/// Everything `bufsim analyze` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    pub trace: String,
    pub format: &'static str,
    pub block_size: u64,
    pub reads_only: bool,
    pub requests: RequestReport,
    pub accesses: AccessReport,
    pub footprint: Footprint,
    pub consecutive: ConsecutiveReport,
    pub temporal_distance: TemporalReport,
    pub frequency: FrequencyReport,
    pub working_set: Option<WorkingSetReport>,
    pub inter_reference_gaps: GapReport,
    /// MQ Table 3 per policy, when asked for.
    pub distance_breakdown: Option<Vec<BreakdownRow>>,
}

impl Analysis {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an analysis always serializes")
    }
}

/// The single-pass analyses, fed together.
struct Characterize {
    stats: RequestStats,
    history: BlockHistory,
    temporal: TemporalHistogram,
    gaps: GapsByContext,
    consecutive: Consecutive,
}

impl Visitor for Characterize {
    #[inline]
    fn request(&mut self, r: &Request) {
        self.stats.request(r);
    }

    /// Counted, not followed: reuse and locality describe the accesses, and a block written
    /// again after its file was truncated counts as a reuse.
    fn dropped(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {
        self.stats.drop_request();
    }

    /// Counted, not followed: what a hint reads ahead is not an access.
    fn hinted(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {
        self.stats.hint_request();
    }

    #[inline]
    fn access(&mut self, a: &BlockAccess) {
        self.stats.access(a.write);
        let d = self.history.access(a.key);
        self.temporal.add(d);
        self.gaps.add(a.ctx, d);
        self.consecutive.add(a.file, a.file_block);
    }
}

fn run(source: &Source, name: &str, format: Format, opts: &AnalysisOptions) -> Result<Analysis, SimError> {
    opts.check()?;
    let mut c = Characterize {
        stats: RequestStats::new(opts.engine.block_size),
        history: BlockHistory::default(),
        temporal: TemporalHistogram::default(),
        gaps: GapsByContext::default(),
        consecutive: Consecutive::default(),
    };
    walk(source, &opts.engine, &mut c)?;
    let (requests, accesses) = c.stats.report();
    let distinct = c.history.distinct();
    let working_set = match opts.working_set {
        true => Some(working_set(source, &opts.engine, c.history.accesses(), distinct, opts.jobs)?),
        false => None,
    };
    let breakdown = match (&opts.breakdown, source) {
        (Some((policies, cache)), Source::Memory { requests, kind, .. }) => {
            Some(distance_breakdown(requests, *kind, &opts.engine, policies, *cache, opts.seed)?)
        }
        _ => None,
    };
    Ok(Analysis {
        trace: name.to_string(),
        format: format.name(),
        block_size: opts.engine.block_size,
        reads_only: opts.engine.reads_only,
        requests,
        accesses,
        footprint: Footprint { blocks: distinct, bytes: distinct.saturating_mul(opts.engine.block_size) },
        consecutive: c.consecutive.report(),
        temporal_distance: c.temporal.report(opts.hill_fraction),
        frequency: FrequencyReport::from_frequencies(c.history.frequencies()),
        working_set,
        inter_reference_gaps: c.gaps.report(opts.contexts),
        distance_breakdown: breakdown,
    })
}

/// Analyzes the trace at `path`. Streams it (the working-set search streams it once per OPT
/// run), unless the breakdown needs it in memory or it cannot be read twice.
pub fn analyze_trace(path: &str, opts: &AnalysisOptions) -> Result<Analysis, SimError> {
    opts.check()?;
    // Standard input or a pipe is read once, into memory, for all the passes.
    let once = !bufsim_core::trace::rewindable(path);
    if opts.breakdown.is_some() || once {
        let loaded = LoadedTrace::load_with(
            path,
            opts.format,
            &ReadOptions { meter: opts.meter.clone(), ..Default::default() },
        )?;
        let format = loaded.format;
        let source = Source::Memory { requests: &loaded.requests, kind: format.address_kind(), meter: &opts.meter };
        run(&source, path, format, opts)
    } else {
        let format = resolve_format(path, opts.format)?;
        run(&Source::File { path, format, meter: &opts.meter }, path, format, opts)
    }
}

/// Analyzes requests already in memory (`format` names how they were read).
pub fn analyze_requests(
    requests: &[Request],
    format: Format,
    name: &str,
    opts: &AnalysisOptions,
) -> Result<Analysis, SimError> {
    let kind: AddressKind = format.address_kind();
    run(&Source::Memory { requests, kind, meter: &opts.meter }, name, format, opts)
}
