//! The analyses' integration tests, one module per file, built as one test binary: each file
//! built as a binary of its own compiled and linked the engine's generic code again.

mod analyze;
mod common;
mod mrc_exact;
