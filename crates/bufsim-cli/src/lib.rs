//! The `bufsim` command's native side: the run table and JSON lines (printed the same way by
//! the native entry point and by the Python command line) and the reading of `bufsim run`'s
//! command line for the native entry point (`src/main.rs`).

pub mod run_args;
pub mod text;
