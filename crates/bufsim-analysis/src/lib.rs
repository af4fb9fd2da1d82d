//! Trace characterization for bufsim, one module per analysis, all counting the block accesses
//! the engine simulates ([`access`]):
//!
//! - [`mrc`]: exact LRU miss ratio curve by stack distance in one pass (Mattson et al. 1970),
//!   O(log n) per access ([`stack`]);
//! - [`shards`]: its SHARDS estimate by spatial sampling (Waldspurger et al., FAST 2015);
//! - [`temporal`]: temporal distance histogram, minDist/maxDist (MQ paper §3.1, Figures 2-3);
//! - [`frequency`]: block and access shares by frequency (MQ paper §3.2, Figure 4);
//! - [`consecutive`]: fraction of consecutive references (prefetching paper §6.1);
//! - [`working_set`]: working-set size by OPT (prefetching paper §6.1);
//! - [`irg`]: inter-reference gap CDF per program context (AMP paper §3, Figure 2);
//! - [`breakdown`]: a policy's hits and misses below and above temporal distance C (MQ Table 3);
//! - [`requests`]: counts, read/write mix, request sizes.
//!
//! [`analyze`] runs them together (`bufsim analyze`), [`curves`] runs the curves (`bufsim mrc`).

pub mod access;
pub mod analyze;
pub mod breakdown;
pub mod consecutive;
pub mod curves;
pub mod export;
pub mod frequency;
pub mod history;
pub mod irg;
pub mod loghist;
pub mod miniature;
pub mod mrc;
pub mod requests;
pub mod shards;
pub mod stack;
pub mod temporal;
pub mod working_set;

pub use analyze::{analyze_requests, analyze_trace, Analysis, AnalysisOptions};
pub use curves::{mrc_requests, mrc_trace, MrcOptions, MrcReport, Sizes};
pub use export::{export_lcs, ExportSummary, LcsFormat};
pub use miniature::{miniature_trace, MiniatureCurve, MiniatureScale};
pub use mrc::{LruMrc, MissCurve};
pub use shards::{Shards, ShardsMode};
