//! Every parameter of every registry (policies, read-ahead, devices, schedulers, generators)
//! declares a range, and the registry enforces each bound: a value at a bound is accepted, a
//! value just outside is refused with one line naming the parameter, the range and the spec.

use bufsim_core::config::registry::{boundary_values, Args, Info, Kind, Range};
use bufsim_core::config::Spec;
use bufsim_core::policy::{build, BuildEnv};
use bufsim_core::run::{run_requests, RunConfig, RunOptions};
use bufsim_core::trace::{AddressKind, Request};
use bufsim_core::{device, prefetch, trace};

fn entries(kind: Kind) -> Vec<&'static Info> {
    match kind {
        Kind::Policy => bufsim_core::policy::registry::all().collect(),
        Kind::Prefetch => prefetch::all().collect(),
        Kind::Device => device::DEVICES.iter().collect(),
        Kind::Scheduler => device::SCHEDULERS.iter().collect(),
        Kind::Generator => trace::synth::generators().collect(),
    }
}

/// Builds `spec` of `kind` the way a run does; generators only check their arguments (a
/// generator at its size bound would write a hundred million requests).
fn build_any(kind: Kind, info: &Info, spec: &Spec) -> Result<(), String> {
    let text = spec.to_string();
    let env = BuildEnv { capacity: 1000, block_size: 4096, seed: 1 };
    match kind {
        Kind::Policy => build(&text, &env).map(|_| ()),
        Kind::Prefetch => prefetch::build(&text).map(|_| ()),
        Kind::Device => device::build_device(&text, 1).map(|_| ()),
        Kind::Scheduler => device::build_scheduler(&text).map(|_| ()),
        Kind::Generator => Args::new(kind, info, &spec.args).map(|_| ()),
    }
    .map_err(|e| e.to_string())
}

#[test]
fn every_parameter_declares_a_range_its_default_is_in() {
    for kind in Kind::ALL {
        for info in entries(kind) {
            for p in info.params {
                assert!(
                    p.range.admits(p.default),
                    "{} {}: default {}={} is outside {}",
                    kind.noun(),
                    info.name,
                    p.name,
                    p.default,
                    p.range
                );
                assert!(!p.range.to_string().is_empty());
            }
        }
    }
}

#[test]
fn every_bound_is_enforced_by_the_registry() {
    let mut checked = 0;
    for kind in Kind::ALL {
        for info in entries(kind) {
            for p in info.params {
                for (value, admitted) in boundary_values(&p.range) {
                    let spec = Spec { name: info.name.to_string(), args: vec![(p.name.to_string(), value.clone())] };
                    let result = build_any(kind, info, &spec);
                    let what = format!("{} `{spec}`", kind.noun());
                    if admitted {
                        // At a bound the registry accepts; the component may still refuse a
                        // combination with another parameter's default, but never by range.
                        assert!(Args::new(kind, info, &spec.args).is_ok(), "{what} refused at its bound");
                        if let Err(e) = &result {
                            assert!(!e.contains(&format!("{} must be", p.name)), "{what}: {e}");
                        }
                    } else {
                        let e = result.expect_err(&format!("{what} accepted outside {}", p.range));
                        let rule = match p.range {
                            Range::Cache(limit) => format!("it must be {}", limit.words()),
                            r => format!("{} must be {r}", p.name),
                        };
                        assert!(e.contains(&rule), "{what}: {e} (want {rule})");
                        assert!(e.contains(&format!("(in `{spec}`)")), "{what}: {e}");
                        assert!(!e.contains('\n'), "{what}: {e}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

/// Whether a refusal of a bound says it is the cache that is too small for it (`bank (1000
/// blocks) + evict (16384 blocks) exceed the cache of 1000 blocks`).
fn blames_the_cache(e: &str) -> bool {
    e.contains("cache of 1000 blocks") || e.contains("cache holds 1000 blocks")
}

/// Whether a refusal names another parameter of `info` than `param`: the value is refused in
/// combination with that one's default (`active-ratio applies to base=linux2q only`,
/// `cold-min (1000 blocks) exceeds cold-max (990 blocks)`), and the user is told which.
fn names_another_parameter(e: &str, info: &Info, param: &str) -> bool {
    let words: Vec<&str> = e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).collect();
    info.params.iter().any(|p| p.name != param && words.contains(&p.name))
}

#[test]
fn every_policy_runs_at_each_bound_of_its_parameters() {
    // 2,000 reads of 1,500 blocks, some read twice: a cache of 1,000 blocks fills and evicts.
    let requests: Vec<Request> =
        (0..2000u64).map(|i| Request::read(0, (if i % 4 == 3 { i / 2 } else { i }) % 1500 * 4096, 4096)).collect();
    let opts = RunOptions { check: true, jobs: 1, ..RunOptions::default() };
    let run = |spec: &str, cache: &str| {
        run_requests(&requests, AddressKind::File, &[RunConfig::new(spec, cache)], &opts).map_err(|e| e.to_string())
    };
    let (mut ran, mut refused) = (0, Vec::new());
    for info in bufsim_core::policy::registry::POLICIES {
        for p in info.params {
            for (value, _) in boundary_values(&p.range).into_iter().filter(|(_, admitted)| *admitted) {
                let spec = Spec { name: info.name.to_string(), args: vec![(p.name.to_string(), value)] }.to_string();
                // A bound refused at 1,000 blocks for the cache's sake must run at 4 GiB.
                let result = match run(&spec, "1000blocks") {
                    Err(e) if blames_the_cache(&e) => run(&spec, "1048576blocks"),
                    r => r,
                };
                match result {
                    Ok(r) => assert_eq!(r[0].stats.accesses, 2000, "{spec}"),
                    Err(e) if names_another_parameter(&e, info, p.name) => {}
                    Err(e) => refused.push(format!("policy `{spec}`: {e}")),
                }
                ran += 1;
            }
        }
    }
    assert!(refused.is_empty(), "inside the declared range but refused:\n{}", refused.join("\n"));
    assert!(ran > 100, "{ran}");
}

#[test]
fn policies_that_had_no_checks_now_refuse_out_of_range_values() {
    let env = BuildEnv { capacity: 100, block_size: 4096, seed: 1 };
    let e = build("fbr(new=2.0)", &env).err().unwrap().to_string();
    assert!(e.contains("new must be a share of the cache between 0% and 100%") && e.contains("`fbr(new=2.0)`"), "{e}");
    let e = build("lru-k(k=0)", &env).err().unwrap().to_string();
    assert!(e.contains("k must be a whole number from 1 to 8") && e.contains("`lru-k(k=0)`"), "{e}");
}
