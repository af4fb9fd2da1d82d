//! DULO §2.1, Table 1: an 8-block cache, Linux-like read-ahead, random blocks A..D on different
//! tracks and two 4-block files X and Y. The traditional scheme misses 10 times (95.0 ms at
//! 9.5 ms per disk request), DULO 7 times (66.5 ms); without read-ahead both miss 16 times.
//! Each disk request costs 9.5 ms in the example (6.5 ms seek + 3.0 ms rotation, transfer
//! ignored), so the times are disk requests x 9.5 ms; the timed engine checks them in seconds.

use bufsim_core::engine::{Engine, EngineConfig, Prefetching, Stats};
use bufsim_core::layout::Layout;
use bufsim_core::policy::{build, AnyPolicy, BuildEnv, Dulo, Policy};
use bufsim_core::trace::Request;

/// Files: A, B, C, D (one block each), X and Y (four blocks each), 100 blocks apart on the disk.
const SIZES: [u64; 6] = [1, 1, 1, 1, 4, 4];
const STRING: &str = "A B C D X1 X2 X3 X4 Y1 Y2 Y3 Y4 X1 X2 X3 X4 A B C D";

fn requests() -> Vec<Request> {
    STRING
        .split(' ')
        .map(|name| {
            let file = "ABCDXY".find(&name[..1]).unwrap() as u32;
            let block = name[1..].parse::<u64>().map_or(0, |n| n - 1);
            Request::read(file, block * 4096, 4096)
        })
        .collect()
}

fn run<P: Policy>(policy: P, prefetch: bool, mut each: impl FnMut(usize, &P)) -> Stats {
    let layout = Layout::first_touch(&SIZES, 100).unwrap();
    let mut e = Engine::new(policy, 8, EngineConfig::default(), &layout, None);
    if prefetch {
        let readahead = bufsim_core::prefetch::build("linux").unwrap().unwrap();
        e = e.with_prefetching(Prefetching::new(readahead, &SIZES, 4096), None);
    }
    for (i, r) in requests().iter().enumerate() {
        e.request(r);
        each(i + 1, &e.cache.policy);
        e.cache.check().unwrap_or_else(|err| panic!("after access {}: {err}", i + 1));
    }
    e.finish().0
}

fn policy(spec: &str) -> AnyPolicy {
    build(spec, &BuildEnv { capacity: 8, block_size: 4096, seed: 1 }).unwrap()
}

const DULO: &str = "dulo(bank=4blocks,evict=4blocks)";
const MS_PER_REQUEST: f64 = 9.5;

#[test]
fn dulo_misses_7_times_and_takes_66_5_ms() {
    let s = run(policy(DULO), true, |_, _| ());
    assert_eq!((s.misses, s.disk_requests), (7, 7));
    assert_eq!(s.disk_requests as f64 * MS_PER_REQUEST, 66.5);
}

#[test]
fn the_traditional_scheme_misses_10_times_and_takes_95_ms() {
    for spec in ["lru", "clock"] {
        let s = run(policy(spec), true, |_, _| ());
        assert_eq!((s.misses, s.disk_requests), (10, 10), "{spec}");
        assert_eq!(s.disk_requests as f64 * MS_PER_REQUEST, 95.0);
    }
}

#[test]
fn without_read_ahead_both_miss_16_times() {
    for spec in [DULO, "lru", "clock"] {
        assert_eq!(run(policy(spec), false, |_, _| ()).misses, 16, "{spec}");
    }
}

#[test]
fn dulo_keeps_the_random_blocks_and_evicts_the_sequences_first() {
    // Device blocks: A 0, B 101, C 202, D 303, X 404..407, Y 508..511.
    let (a, b, c, d) = (0, 101, 202, 303);
    let x: Vec<u64> = (404..408).collect();
    let y: Vec<u64> = (508..512).collect();
    let dulo = Dulo::new(8, 4, 0, 128, 0);
    run(dulo, true, |step, p| {
        let got = p.evicting_section();
        let want: Vec<(f64, Vec<u64>)> = match step {
            // A..D sequenced one by one (H = 0 + 1/1); the bank is full at D.
            4 => vec![(1.0, vec![a]), (1.0, vec![b]), (1.0, vec![c]), (1.0, vec![d])],
            // X1..X4 form one sequence with H = 0 + 1/4, below the random blocks (Table 1, row 5:
            // "D C B A X4 X3 X2 X1").
            5..=8 => vec![(0.25, x.clone()), (1.0, vec![a]), (1.0, vec![b]), (1.0, vec![c]), (1.0, vec![d])],
            // Y replaces X (L = 0.25): H = 0.25 + 1/4.
            9..=12 => vec![(0.5, y.clone()), (1.0, vec![a]), (1.0, vec![b]), (1.0, vec![c]), (1.0, vec![d])],
            // X comes back and replaces Y (L = 0.5); its blocks' previous times agree (rule 3).
            13..=20 => vec![(0.75, x.clone()), (1.0, vec![a]), (1.0, vec![b]), (1.0, vec![c]), (1.0, vec![d])],
            _ => return,
        };
        assert_eq!(got, want, "evicting section after access {step}");
    });
}
