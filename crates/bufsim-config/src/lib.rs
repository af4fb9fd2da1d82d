//! How a bufsim run is configured: spec strings (`lirs(hir=1%)`, `disk(preset=st39102lw)`),
//! sizes with units, and the one seeded random number generator every component draws from.

pub mod registry;
pub mod rng;
pub mod spec;

pub use rng::Rng;
pub use spec::{parse_cache_blocks, Relative, Size, Spec, SpecError};
