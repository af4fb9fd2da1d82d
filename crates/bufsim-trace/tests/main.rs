//! The trace readers' integration tests, one module per file, built as one test binary: each
//! file built as a binary of its own compiled and linked the engine's generic code again (the
//! tests of bufsim-core and bufsim-trace took 196 s of wall time to build on two cores that way,
//! 26 s as one binary each).
//! `scale.rs` stays a binary of its own: it measures the process's resident memory, which tests
//! running beside it in the same process would change.

mod bst;
mod one_pass;
mod properties;
mod readers;
mod real_traces;
