//! `analyze` end to end: agreement with libCacheSim's trace analyzer on the bundled trace, the
//! working-set definition checked by OPT runs around the answer, and a hand-computed file trace.

use std::collections::BTreeMap;

use crate::common::cloudphysics;
use bufsim_analysis::access::{walk, BlockAccess, Source, Visitor};
use bufsim_analysis::breakdown::distance_breakdown;
use bufsim_analysis::history::BlockHistory;
use bufsim_analysis::{analyze_requests, analyze_trace, AnalysisOptions};
use bufsim_core::engine::EngineConfig;
use bufsim_core::run::{run_requests, run_trace, RunConfig, RunOptions};
use bufsim_core::trace::{AddressKind, Format, Op, Request};

fn golden() -> serde_json::Value {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden/analysis_libcachesim_cloudphysics.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn as_map(v: &serde_json::Value) -> BTreeMap<i64, u64> {
    v.as_object().unwrap().iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect()
}

#[test]
fn frequencies_and_temporal_distances_equal_libcachesim() {
    let g = golden();
    let a =
        analyze_trace(&cloudphysics(), &AnalysisOptions { working_set: false, ..AnalysisOptions::default() }).unwrap();
    assert_eq!(a.accesses.total, g["accesses"].as_u64().unwrap());
    let ours: BTreeMap<i64, u64> = a.frequency.distribution.iter().map(|&(f, n)| (f as i64, n)).collect();
    assert_eq!(ours, as_map(&g["popularity"]));
    // libCacheSim buckets the same distances by floor(ln d / ln 1.5); first references in -1.
    struct Buckets(BlockHistory, BTreeMap<i64, u64>);
    impl Visitor for Buckets {
        fn access(&mut self, a: &BlockAccess) {
            let b = match self.0.access(a.key) {
                Some(d) => ((d as f64).ln() / 1.5f64.ln()) as i64,
                None => -1,
            };
            *self.1.entry(b).or_insert(0) += 1;
        }
    }
    let path = cloudphysics();
    let mut v = Buckets(BlockHistory::default(), BTreeMap::new());
    walk(
        &Source::File { path: &path, format: Format::CloudPhysics, meter: &Default::default() },
        &EngineConfig::default(),
        &mut v,
    )
    .unwrap();
    assert_eq!(v.1, as_map(&g["reuse_vtime_log1.5"]));
    // The power-of-two histogram holds the same distances.
    let t = &a.temporal_distance;
    assert_eq!(t.first, v.1[&-1]);
    assert_eq!(t.correlated + t.first, a.accesses.total);
    assert_eq!(t.bins[0].count, v.1[&0], "distance 1 is bucket 0 in both");
}

#[test]
fn bundled_trace_characterization_is_consistent() {
    let a = analyze_trace(&cloudphysics(), &AnalysisOptions::default()).unwrap();
    assert_eq!((a.requests.total, a.accesses.total, a.footprint.blocks), (113_872, 1_141_869, 269_210));
    assert_eq!(a.requests.reads + a.requests.writes, a.requests.total);
    assert_eq!(a.accesses.reads + a.accesses.writes, a.accesses.total);
    assert_eq!(a.footprint.bytes, 269_210 * 4096);
    assert_eq!(a.frequency.blocks, a.footprint.blocks);
    assert_eq!(a.frequency.points[0].block_share, 1.0);
    assert_eq!(a.consecutive.references, a.accesses.total);
    assert_eq!(a.requests.files, 1);
    // One context: its gaps are all the gaps.
    let g = &a.inter_reference_gaps;
    assert_eq!((g.contexts, g.by_context.len()), (1, 1));
    assert_eq!(g.all.gaps, a.temporal_distance.correlated);
    assert_eq!(g.by_context[0].cdf, g.all.cdf);
    // Working set: OPT reaches 90 percent of the infinite-cache hits at the answer, not one
    // block below it.
    let w = a.working_set.as_ref().unwrap();
    let max_hits = a.accesses.total - a.footprint.blocks;
    let configs = [
        RunConfig::new("opt", &format!("{}blocks", w.blocks)),
        RunConfig::new("opt", &format!("{}blocks", w.blocks - 1)),
    ];
    let runs = run_trace(&cloudphysics(), &configs, &RunOptions::default()).unwrap();
    assert!(runs[0].stats.hits * 10 >= max_hits * 9);
    assert!(runs[1].stats.hits * 10 < max_hits * 9);
    assert_eq!(w.hit_ratio, runs[0].stats.hits as f64 / a.accesses.total as f64);
    assert!(w.probes.len() <= 40, "{} OPT runs", w.probes.len());
    // Streaming (no working set) gives the same numbers.
    let streamed =
        analyze_trace(&cloudphysics(), &AnalysisOptions { working_set: false, ..AnalysisOptions::default() }).unwrap();
    assert_eq!(streamed.temporal_distance, a.temporal_distance);
    assert_eq!(streamed.frequency, a.frequency);
}

fn req(op: Op, file: u32, block: u64, blocks: u64, ctx: u64) -> Request {
    Request {
        time_ns: block * 1000,
        dur_ns: 0,
        pid: 3,
        ctx,
        op,
        file,
        offset: block * 4096,
        size: blocks * 4096,
        in_blocks: false,
        unfilled: 0,
        opened: false,
    }
}

#[test]
fn hand_computed_file_trace() {
    // File 0 blocks 0-3 read in one request by context 7; file 1 block 0 written by context 9;
    // file 0 blocks 0-1 read again by context 7.
    // Accesses: f0b0 f0b1 f0b2 f0b3 f1b0 f0b0 f0b1 (7 references, 5 blocks).
    let requests = vec![req(Op::Read, 0, 0, 4, 7), req(Op::Write, 1, 0, 1, 9), req(Op::Read, 0, 0, 2, 7)];
    let opts = AnalysisOptions { jobs: 1, ..AnalysisOptions::default() };
    let a = analyze_requests(&requests, Format::Csv, "hand.csv", &opts).unwrap();
    assert_eq!((a.requests.total, a.requests.reads, a.requests.writes), (3, 2, 1));
    assert_eq!((a.accesses.total, a.accesses.writes), (7, 1));
    assert_eq!(
        a.requests.size.histogram.iter().map(|b| (b.bytes, b.requests)).collect::<Vec<_>>(),
        vec![(4096, 1), (8192, 1), (16384, 1)]
    );
    assert_eq!(a.footprint.blocks, 5);
    assert_eq!(a.requests.files, 2);
    // Consecutive: b1, b2, b3 follow their predecessor; f1b0 and the return to f0b0 do not; f0b1 does.
    assert_eq!((a.consecutive.consecutive, a.consecutive.references), (4, 7));
    // Temporal distances: f0b0 5 (rounds to 8), f0b1 5 (8).
    let bins: Vec<(u64, u64)> = a.temporal_distance.bins.iter().map(|b| (b.distance, b.count)).collect();
    assert_eq!(bins, vec![(1, 0), (2, 0), (4, 0), (8, 2)]);
    let hill = a.temporal_distance.hill.as_ref().unwrap();
    assert_eq!((hill.min_dist, hill.max_dist, hill.peak_distance), (8, 8, 8));
    // Frequencies: two blocks twice, three once; 4 of 7 accesses go to the blocks seen twice.
    let f2 = a.frequency.at(2);
    assert_eq!((f2.block_share, f2.access_share), (0.4, 4.0 / 7.0));
    // Gaps (distance - 1 = 4) belong to context 7; context 9 has none.
    let g = &a.inter_reference_gaps;
    assert_eq!(g.contexts, 2);
    assert_eq!(g.by_context[0].ctx, Some(7));
    assert_eq!((g.by_context[0].accesses, g.by_context[0].gaps), (6, 2));
    assert_eq!(g.by_context[0].cdf, vec![(4, 1.0)]);
    assert_eq!((g.by_context[1].ctx, g.by_context[1].gaps), (Some(9), 0));
    // OPT with an infinite cache hits 2 of 7; 90 percent of that needs both hits. 3 blocks do:
    // b0 and b1 stay while b2, b3 and f1b0 take turns in the third frame; with 2 blocks, b2
    // must push out b0 or b1.
    let w = a.working_set.as_ref().unwrap();
    assert_eq!(w.max_hit_ratio, 2.0 / 7.0);
    assert_eq!((w.blocks, w.hit_ratio), (3, 2.0 / 7.0));
    // Reads only: the write leaves the stream.
    let r = analyze_requests(
        &requests,
        Format::Csv,
        "hand.csv",
        &AnalysisOptions { engine: EngineConfig { reads_only: true, ..EngineConfig::default() }, ..opts },
    )
    .unwrap();
    assert_eq!((r.requests.total, r.accesses.total, r.consecutive.consecutive), (2, 6, 4));
}

#[test]
fn bad_options_and_inputs_are_errors() {
    let e = analyze_trace("/nonexistent/t.csv", &AnalysisOptions::default()).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/t.csv") && e.contains("no such file"), "{e}");
    let bad = AnalysisOptions { hill_fraction: 0.0, ..AnalysisOptions::default() };
    assert!(analyze_trace(&cloudphysics(), &bad).unwrap_err().to_string().contains("hill fraction"));
    let dir = std::env::temp_dir().join(format!("bufsim-analysis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.csv");
    std::fs::write(&p, "op,file,offset,size\nR,a,0,4096\nR,a,x,4096\n").unwrap();
    let e = analyze_trace(p.to_str().unwrap(), &AnalysisOptions::default()).unwrap_err().to_string();
    assert!(e.contains("bad.csv:3: offset"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn table3_breakdown_lru_never_misses_below_c() {
    let path = cloudphysics();
    let requests = bufsim_core::run::decode(&path, Format::CloudPhysics).unwrap();
    let policies: Vec<String> = ["lru", "fifo", "opt", "lfu"].iter().map(|s| s.to_string()).collect();
    for cache in [4096u64, 65_536] {
        let rows =
            distance_breakdown(&requests, AddressKind::Device, &EngineConfig::default(), &policies, cache, 42).unwrap();
        let configs: Vec<RunConfig> = policies.iter().map(|p| RunConfig::new(p, &format!("{cache}blocks"))).collect();
        let runs = run_requests(&requests, AddressKind::Device, &configs, &RunOptions::default()).unwrap();
        for (row, run) in rows.iter().zip(&runs) {
            assert_eq!(row.policy, run.policy);
            assert_eq!(row.below_hits + row.above_hits, run.stats.hits, "{} at {cache}", row.policy);
            assert_eq!(row.below_misses + row.above_misses + row.first, run.stats.misses, "{} at {cache}", row.policy);
            assert_eq!(row.first, 269_210);
        }
        // MQ paper §5: "LRU has no miss in the left category".
        assert_eq!(rows[0].below_misses, 0);
        assert!(rows[0].below_hits > 0 && rows[0].above_misses > 0);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// On any trace and cache size, LRU hits every re-reference closer than C.
    #[test]
    fn lru_hits_every_short_re_reference(blocks in proptest::collection::vec(0u64..50, 1..400), cache in 1u64..60) {
        let requests: Vec<Request> = blocks.iter().map(|&b| req(Op::Read, 0, b, 1, 0)).collect();
        let rows = distance_breakdown(&requests, AddressKind::Device, &EngineConfig::default(), &["lru".to_string()], cache, 1).unwrap();
        proptest::prop_assert_eq!(rows[0].below_misses, 0);
    }
}
