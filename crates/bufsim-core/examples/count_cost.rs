//! Instructions per request of count mode, measured with callgrind rather than a clock (the
//! machine is shared): the trace is decoded once, then the same run repeats `REPEAT` times, so
//! the difference between two repeat counts is the cost of one run alone.
//!
//! ```text
//! cargo build --release -p bufsim-core --example count_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/count_cost TRACE lru 16384blocks 1
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/count_cost TRACE lru 16384blocks 2
//! ```
//! (instructions of the second minus the first) / requests = instructions per request.

use bufsim_core::run::{LoadedTrace, RunConfig, RunOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: count_cost TRACE POLICY CACHE REPEAT (e.g. trace.csv lru 16384blocks 2)");
        std::process::exit(2);
    }
    let repeat: usize = match args[4].parse() {
        Ok(n) => n,
        Err(_) => {
            eprintln!("REPEAT `{}` must be a whole number", args[4]);
            std::process::exit(2);
        }
    };
    let trace = match LoadedTrace::load(&args[1], None) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let configs = vec![RunConfig::new(&args[2], &args[3]); repeat];
    let opts = RunOptions { jobs: 1, ..RunOptions::default() };
    match trace.run(&configs, &opts) {
        Ok(results) => {
            if let Some(r) = results.first() {
                println!(
                    "requests {} accesses {} hits {} misses {}",
                    r.stats.requests, r.stats.accesses, r.stats.hits, r.stats.misses
                );
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
