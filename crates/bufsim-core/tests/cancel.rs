//! A run whose counters were cancelled (what the Python binding does on Ctrl-C) stops with an
//! `Interrupted` error in every engine: count and timed mode over decoded requests, and a
//! streamed file with one configuration and with several.

use std::sync::Arc;

use bufsim_core::run::{run_requests, run_trace, RunConfig, RunOptions};
use bufsim_core::timed::TimingOptions;
use bufsim_core::trace::progress::BATCH;
use bufsim_core::trace::{AddressKind, Meter, Progress, Request, TraceErrorKind};
use bufsim_core::SimError;

use crate::scratch::ScratchTrace;

fn requests() -> Vec<Request> {
    (0..3 * BATCH).map(|i| Request::read(0, (i * 7919 % 5000) * 4096, 4096)).collect()
}

fn options(cancelled: bool, timed: bool) -> RunOptions {
    let p = Arc::new(Progress::default());
    if cancelled {
        p.cancel();
    }
    let timing = timed.then(|| TimingOptions { device: "avg".into(), ..TimingOptions::default() });
    RunOptions { meter: Meter::new(p), timing, jobs: 1, ..RunOptions::default() }
}

fn interrupted<T: std::fmt::Debug>(r: Result<T, SimError>) -> bool {
    matches!(r, Err(SimError::Trace(e)) if e.kind == TraceErrorKind::Interrupted)
}

#[test]
fn decoded_requests_stop_in_count_and_timed_mode() {
    let reqs = requests();
    let configs = [RunConfig::new("lru", "100blocks"), RunConfig::new("arc", "100blocks")];
    for timed in [false, true] {
        let done = run_requests(&reqs, AddressKind::File, &configs, &options(false, timed)).unwrap();
        assert_eq!(done[0].stats.requests, 3 * BATCH);
        assert!(interrupted(run_requests(&reqs, AddressKind::File, &configs, &options(true, timed))), "timed {timed}");
    }
}

#[test]
fn a_streamed_file_stops_with_one_configuration_and_with_several() {
    let mut text = String::from("op,file,offset,size\n");
    for r in requests() {
        text.push_str(&format!("R,a,{},4096\n", r.offset));
    }
    let trace = ScratchTrace::new("cancel", "t.csv", &text);
    let path = trace.path();
    let one = [RunConfig::new("lru", "100blocks")];
    let several = [RunConfig::new("lru", "100blocks"), RunConfig::new("clock", "100blocks")];
    for configs in [&one[..], &several[..]] {
        assert_eq!(run_trace(path, configs, &options(false, false)).unwrap()[0].stats.requests, 3 * BATCH);
        assert!(interrupted(run_trace(path, configs, &options(true, false))), "{} configurations", configs.len());
    }
}
