//! The engine's integration tests, one module per file, built as one test binary: each
//! file built as a binary of its own compiled and linked the engine's generic code again (the
//! tests of bufsim-core and bufsim-trace took 196 s of wall time to build on two cores that way,
//! 26 s as one binary each).

mod accusim_policies;
mod amp;
mod cacheus_policy;
mod cancel;
mod cloudphysics_lruk_lirs_lrfu;
mod drops;
mod dulo_properties;
mod dulo_table1;
mod fifo_family_policies;
mod frequency_family_policies;
mod golden_small;
mod hand_computed_lruk_2q_lirs_lrfu_fbr;
mod hierarchy;
mod hints;
mod learned_family_policies;
mod libcachesim_golden;
mod mglru_policies;
mod policy_equivalences;
mod prefetch_table1;
mod properties;
mod registry_ranges;
mod scratch;
mod storage_aware;
mod timed;
mod timed_properties;
