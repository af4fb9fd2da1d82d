//! Storage-aware caching (Forney et al., FAST '02): the shapes of Figures 2, 5, 6 and 8 on
//! scaled-down Table 1 traces, repartitioning through the timed engine, and determinism.

use bufsim_core::array::Raid0;
use bufsim_core::run::{run_requests, RunConfig, RunOptions, RunResult};
use bufsim_core::timed::{Fault, Think, TimingOptions};
use bufsim_core::trace::synth::generate;
use bufsim_core::trace::{AddressKind, Request};

fn trace(spec: &str) -> Vec<Request> {
    generate(spec, 1).unwrap().requests
}

fn opts(device_for: &[(u16, &str)], faults: Vec<Fault>, closed: u32) -> RunOptions {
    RunOptions {
        array: Some(Raid0::parse("raid0(devices=16,unit=8KiB)", 4096).unwrap()),
        timing: Some(TimingOptions {
            device: "ibm-9lzx".into(),
            device_for: device_for.iter().map(|&(d, s)| (d, s.to_string())).collect(),
            network: "loggp".into(),
            closed: Some(closed),
            think: Think::Trace,
            faults,
            ..TimingOptions::default()
        }),
        jobs: 1,
        check: true,
        ..RunOptions::default()
    }
}

fn run(reqs: &[Request], policies: &[&str], cache: &str, o: &RunOptions) -> Vec<RunResult> {
    let configs: Vec<RunConfig> = policies.iter().map(|p| RunConfig::new(p, cache)).collect();
    run_requests(reqs, AddressKind::File, &configs, o).unwrap()
}

fn mb_s(r: &RunResult) -> f64 {
    r.timing.as_ref().unwrap().throughput_mb_s()
}

#[test]
#[ignore]
fn explore() {
    let spec = std::env::var("SPEC").unwrap_or("sa-trace1(requests=20000)".into());
    let cache = std::env::var("CACHE").unwrap_or("200MB".into());
    let closed: u32 = std::env::var("CLOSED").map(|v| v.parse().unwrap()).unwrap_or(16);
    let ages: Vec<u32> = std::env::var("AGES").unwrap_or("0,2,5,10".into()).split(',').map(|a| a.parse().unwrap()).collect();
    let pols: Vec<String> = std::env::var("POLICIES").unwrap_or("lru;clock;eager-lru;lazy-lru;lazy-clock;landlord;static".into()).split(';').map(String::from).collect();
    let reqs = trace(&spec);
    for age in ages {
        let aged = format!("ibm-9lzx(age={age})");
        let o = RunOptions { jobs: 2, ..opts(&[(0, &aged)], vec![], closed) };
        let p: Vec<&str> = pols.iter().map(|s| s.as_str()).collect();
        let t0 = std::time::Instant::now();
        let rs = run(&reqs, &p, &cache, &o);
        let line: Vec<String> = rs.iter().map(|r| format!("{} {:.1} ({:.2})", r.policy, mb_s(r), r.stats.hit_ratio())).collect();
        eprintln!("age {age}: {}   [{:.1}s]", line.join(", "), t0.elapsed().as_secs_f64());
        for r in &rs {
            if let Some(tl) = &r.timeline {
                let last = tl.samples().saturating_sub(1);
                let sizes: Vec<u32> = (0..tl.names.len()).map(|p| tl.size(last, p)).collect();
                eprintln!("   {} final sizes {:?}", r.policy, sizes);
            }
        }
    }
}

#[test]
#[ignore]
fn explore_fault() {
    let spec = std::env::var("SPEC").unwrap_or("sa-trace1(requests=60000)".into());
    let closed: u32 = std::env::var("CLOSED").map(|v| v.parse().unwrap()).unwrap_or(16);
    let at: f64 = std::env::var("AT").map(|v| v.parse().unwrap()).unwrap_or(100.0);
    let reqs = trace(&spec);
    let f = vec![Fault { device: 6, at_ns: (at * 1e9) as u64, slowdown: 2.0 }];
    let o = RunOptions { jobs: 2, ..opts(&[], f, closed) };
    let rs = run(&reqs, &["lru", "clock", "eager-lru", "lazy-clock", "landlord"], "200MB", &o);
    for r in &rs {
        eprintln!("{} {:.1} MB/s exec {:.1}s", r.policy, mb_s(r), r.timing.as_ref().unwrap().exec_time_ns as f64 / 1e9);
        if r.policy == "eager-lru" {
            let tl = r.timeline.as_ref().unwrap();
            let n = tl.names.len();
            for i in (0..tl.samples()).step_by((tl.samples() / 30).max(1)) {
                let w: Vec<f64> = (0..n).map(|p| tl.value(i, p).unwrap()).collect();
                let mean = w.iter().sum::<f64>() / n as f64;
                eprintln!("  t={:.0}s dev6 {} (others ~{}) rel6 {:.2} max-other-rel {:.2}", tl.times[i] as f64 / 1e9, tl.size(i, 6), tl.size(i, 0), w[6] / mean,
                    (0..n).filter(|&p| p != 6).map(|p| w[p] / mean).fold(0.0, f64::max));
            }
        }
    }
}
