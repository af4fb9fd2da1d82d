//! AMP's checks (AMP, UCB/CSD-05-1379): a looping scan larger than the cache beside temporally
//! clustered accesses (AMP well below LRU, and ARC once registered), MRU partitions sized by
//! marginal gain (timeline), AMP without contexts equal to its default policy, ghost hits and
//! coupons taking blocks (Figure 4), moves between partitions, MRU garbage collection, and
//! invariants under random contexts, pins and read-ahead.

use std::collections::VecDeque;
use std::path::PathBuf;

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::amp::manager::{Manager, ManagerConfig, OneShotRule, DEFAULT, FIRST_MRU, ONE_SHOT};
use bufsim_core::policy::amp::{Detector, Pattern, RecencyConfig, RecencyDetector};
use bufsim_core::policy::partition::Steal;
use bufsim_core::policy::{build, registry, Access, AnyPolicy, BuildEnv, Frame, Lru, Origin, Pins, Policy, Removal};
use bufsim_core::run::{run_requests, run_trace, RunConfig, RunOptions, RunResult};
use bufsim_core::trace::synth::generate;
use bufsim_core::trace::AddressKind;
use proptest::prelude::*;
use rustc_hash::FxHashSet;

fn cloudphysics() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/cloudphysics_vscsi.csv")
        .to_string_lossy()
        .into_owned()
}

fn run_gen(gen: &str, policies: &[&str], cache: &str) -> Vec<RunResult> {
    let s = generate(gen, 1).unwrap();
    let opts = RunOptions { jobs: 2, check: true, ..RunOptions::default() };
    let configs: Vec<RunConfig> = policies.iter().map(|p| RunConfig::new(p, cache)).collect();
    run_requests(&s.requests, AddressKind::File, &configs, &opts).unwrap()
}

fn miss_ratio(r: &RunResult) -> f64 {
    r.stats.misses as f64 / r.stats.accesses as f64
}

const MIX: &str = "amp-mix(accesses=200000,loop1=1500,loop1-share=0.5)";

/// AMP §1 and §4.2: "AMP greatly outperforms ARC and LRU when the workload is much larger than
/// the cache". A loop of 1500 blocks (context 1) beside temporally clustered accesses (context
/// 3) in a cache of 1000 blocks.
#[test]
fn looping_scan_beside_clustered_accesses() {
    let r = run_gen(MIX, &["lru", "amp(default=lru)", "dear(default=lru)", "pcc(default=lru)", "opt"], "1000blocks");
    let (lru, amp, dear, pcc, opt) =
        (miss_ratio(&r[0]), miss_ratio(&r[1]), miss_ratio(&r[2]), miss_ratio(&r[3]), miss_ratio(&r[4]));
    // Measured: LRU 0.538, AMP 0.283, DEAR 0.285, PCC* 0.305, OPT 0.240.
    assert!(amp < 0.6 * lru, "AMP {amp} against LRU {lru}");
    assert!(amp < 1.3 * opt, "AMP {amp} against OPT {opt}");
    assert!(dear < 0.6 * lru, "DEAR {dear}");
    // PCC calls the clustered context a loop too (AMP §2.2) and loses most of AMP's gain at
    // the paper's coupon price. The ghost floor (`min-ghosts`, 5% by default) lets the
    // misplaced partition give its room back, so PCC* recovers most of it, still above AMP
    // (measured 0.305 against 0.283).
    assert!(pcc > amp, "PCC* {pcc} against AMP {amp}");
    let paper = run_gen(MIX, &["amp(default=lru,min-ghosts=0)", "pcc(default=lru,min-ghosts=0)"], "1000blocks");
    let (amp0, pcc0) = (miss_ratio(&paper[0]), miss_ratio(&paper[1]));
    // Measured: AMP 0.283, PCC* 0.559.
    assert!(pcc0 > amp0 + 0.1, "PCC* {pcc0} against AMP {amp0} at the paper's price");
    let t = r[1].timeline.as_ref().unwrap();
    let last = t.samples() - 1;
    assert_eq!(t.names[FIRST_MRU], "mru1");
    assert_eq!(t.tag(last, FIRST_MRU), 1, "context 1 owns the first MRU partition");
    // ARC goes here: once ARC is registered, AMP with its paper's default beats ARC alone.
    if registry::lookup("arc").is_some() {
        let r = run_gen(MIX, &["arc", "amp(default=arc)"], "1000blocks");
        let (arc, amp_arc) = (miss_ratio(&r[0]), miss_ratio(&r[1]));
        assert!(amp_arc < 0.6 * arc, "AMP(ARC) {amp_arc} against ARC {arc}");
    }
}

/// Mean size of each partition over the second half of a timeline, by the context it serves.
fn mean_sizes(r: &RunResult) -> Vec<(u64, f64)> {
    let t = r.timeline.as_ref().unwrap();
    let half = t.samples() / 2;
    (0..t.names.len())
        .map(|p| {
            let mean = (half..t.samples()).map(|i| t.size(i, p) as f64).sum::<f64>() / (t.samples() - half) as f64;
            (t.tag(t.samples() - 1, p), mean)
        })
        .collect()
}

/// AMP §3.2 and §4.3 (Figure 13): partitions grow in proportion to their marginal gain, so the
/// loop with the shorter loop time gets more of the cache; loops with equal gains get equal
/// shares. Two loops of 1200 blocks beside clustered accesses, cache 1500 blocks.
#[test]
fn mru_partitions_get_space_by_marginal_gain() {
    // Context 1 makes 40% of accesses, context 2 10%: loop times 3000 and 12000 accesses,
    // marginal gains 4:1.
    let r = run_gen(
        "amp-mix(accesses=400000,loop1=1200,loop1-share=0.4,loop2=1200,loop2-share=0.1)",
        &["amp(default=lru)"],
        "1500blocks",
    );
    let sizes = mean_sizes(&r[0]);
    let of = |ctx: u64| sizes.iter().find(|s| s.0 == ctx).map(|s| s.1).unwrap();
    // Measured: context 1 holds 1159 blocks, context 2 178, the default partition 164.
    assert!(of(1) > 3.0 * of(2), "{sizes:?}");
    assert!(of(2) > 50.0, "the lower gain still earns space: {sizes:?}");
    // Equal shares, equal gains: equal space (measured 695 and 670).
    let r = run_gen(
        "amp-mix(accesses=400000,loop1=1200,loop1-share=0.25,loop2=1200,loop2-share=0.25)",
        &["amp(default=lru)"],
        "1500blocks",
    );
    let sizes = mean_sizes(&r[0]);
    let of = |ctx: u64| sizes.iter().find(|s| s.0 == ctx).map(|s| s.1).unwrap();
    assert!((of(1) / of(2) - 1.0).abs() < 0.2, "{sizes:?}");
    // The default partition keeps the clustered context's working set throughout.
    assert!(sizes[DEFAULT].1 > 80.0, "{sizes:?}");
}

/// AMP §3 "Opportunistic optimization": without contexts (ctx = 0 everywhere) AMP, PCC* and
/// DEAR are exactly their default policy, for every registered policy as the default.
#[test]
fn without_contexts_the_default_policy_alone() {
    let defaults: Vec<&str> = registry::all()
        .filter(|p| p.preset_of.is_none() && !["amp", "pcc", "dear", "opt"].contains(&p.name))
        .map(|p| p.name)
        .collect();
    let mut configs = Vec::new();
    for d in &defaults {
        for c in ["500blocks", "8000blocks"] {
            configs.push(RunConfig::new(d, c));
            configs.push(RunConfig::new(&format!("amp(default={d},period=500)"), c));
            configs.push(RunConfig::new(&format!("pcc(default={d},period=500)"), c));
            configs.push(RunConfig::new(&format!("dear(default={d},interval=100)"), c));
        }
    }
    let opts = RunOptions { check: true, ..RunOptions::default() };
    let results = run_trace(&cloudphysics(), &configs, &opts).unwrap();
    for group in results.chunks(4) {
        for r in &group[1..] {
            assert_eq!(r.stats, group[0].stats, "{} at {} blocks", r.policy, r.cache_blocks);
        }
    }
}

/// A test-only LRU with ghosts of its evictions (at most `capacity`), as ARC keeps B1 and B2:
/// the manager then sizes the default partition from the policy's own ghosts.
struct GhostLru {
    lru: Lru,
    ghosts: FxHashSet<u64>,
    order: VecDeque<u64>,
    capacity: usize,
}

impl GhostLru {
    fn new(capacity: usize) -> Self {
        GhostLru { lru: Lru::new(capacity), ghosts: FxHashSet::default(), order: VecDeque::new(), capacity }
    }
}

impl Policy for GhostLru {
    fn prepare_insert(&mut self, a: &Access, _o: Origin) {
        self.ghosts.remove(&a.key);
    }
    fn insert(&mut self, f: Frame, a: &Access, o: Origin) {
        self.lru.insert(f, a, o)
    }
    fn hit(&mut self, f: Frame, a: &Access) {
        self.lru.hit(f, a)
    }
    fn first_demand(&mut self, f: Frame, a: &Access) {
        self.lru.first_demand(f, a)
    }
    fn victim(&mut self, pins: &Pins, a: &Access) -> Option<Frame> {
        self.lru.victim(pins, a)
    }
    fn remove(&mut self, f: Frame, key: u64, why: Removal) {
        self.lru.remove(f, key, why);
        if why == Removal::Evicted {
            self.ghosts.insert(key);
            self.order.push_back(key);
            while self.ghosts.len() > self.capacity {
                let k = self.order.pop_front().unwrap();
                self.ghosts.remove(&k);
            }
            // Drop stale entries (ghosts consumed by prepare_insert) from the front.
            while self.order.front().is_some_and(|k| !self.ghosts.contains(k)) {
                self.order.pop_front();
            }
        }
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.lru.check(resident)
    }
    fn keeps_ghosts(&self) -> bool {
        true
    }
    fn ghost_hit(&self, key: u64) -> bool {
        self.ghosts.contains(&key)
    }
    fn ghost_len(&self) -> usize {
        self.ghosts.len()
    }
}

fn manager_cfg(period: u64) -> ManagerConfig {
    ManagerConfig {
        max_partitions: 10,
        period,
        adaptive_period: false,
        min_ghosts: 0,
        steal: Steal::Uniform,
        gc: true,
        timeline_every: 1000,
        one_shot: OneShotRule::First,
        seed: 7,
    }
}

fn drive<P: Policy>(cache: &mut Cache<P>, requests: &[(u64, u64)], check_every: usize) -> u64 {
    let mut misses = 0;
    for (t, &(ctx, key)) in requests.iter().enumerate() {
        let a = Access { key, block: key, ctx, time: t as u64, ..Access::default() };
        if matches!(cache.demand(&a), Demand::Miss | Demand::MissBypassed) {
            misses += 1;
        }
        if check_every > 0 && t % check_every == 0 {
            cache.check().unwrap_or_else(|e| panic!("step {t}: {e}"));
        }
    }
    cache.check().unwrap();
    misses
}

fn mix_accesses(gen: &str) -> Vec<(u64, u64)> {
    let s = generate(gen, 1).unwrap();
    // Files become disjoint key ranges.
    s.requests.iter().map(|r| (r.ctx, ((r.file as u64) << 40) | (r.offset / 4096))).collect()
}

/// Figure 4 with a default policy that keeps ghosts: ghost hits of the default partition and
/// coupons of the MRU partition both take blocks from the other partition; with ctx = 0 the
/// manager is the ghost policy exactly.
#[test]
fn ghost_hits_and_coupons_take_blocks() {
    let reqs = mix_accesses(MIX);
    let cap = 1000;
    let m = Manager::new(manager_cfg(10_000), RecencyDetector::new(RecencyConfig::default()), GhostLru::new(cap), cap);
    let mut cache = Cache::new(m, cap);
    let amp_misses = drive(&mut cache, &reqs, 5000);
    let st = cache.policy.stats;
    assert!(st.ghost_steals > 1000 && st.coupon_steals > 1000, "{st:?}");
    assert_eq!(cache.policy.partition_ctx(FIRST_MRU), 1);
    assert_eq!(cache.policy.detector().report(3).unwrap().pattern, Pattern::Other);
    let mut lru = Cache::new(GhostLru::new(cap), cap);
    let lru_misses = drive(&mut lru, &reqs, 0);
    assert!((amp_misses as f64) < 0.7 * lru_misses as f64, "{amp_misses} against {lru_misses}");
    // Without contexts: the ghost policy's misses exactly.
    let no_ctx: Vec<(u64, u64)> = reqs.iter().map(|&(_, k)| (0, k)).collect();
    let m = Manager::new(manager_cfg(10_000), RecencyDetector::new(RecencyConfig::default()), GhostLru::new(cap), cap);
    let mut cache = Cache::new(m, cap);
    let mut plain = Cache::new(GhostLru::new(cap), cap);
    assert_eq!(drive(&mut cache, &no_ctx, 0), drive(&mut plain, &no_ctx, 0));
    assert_eq!(cache.policy.stats.ghost_steals, 0);
}

fn amp(cap: usize, spec: &str) -> Cache<AnyPolicy> {
    let env = BuildEnv { capacity: cap, block_size: 4096, seed: 3 };
    Cache::new(build(spec, &env).unwrap(), cap)
}

fn manager(c: &Cache<AnyPolicy>) -> &bufsim_core::policy::Amp {
    match &c.policy {
        AnyPolicy::Amp(m) => m,
        _ => panic!("not AMP"),
    }
}

/// §3.2: "blocks accessed by several different program contexts over time ... are simply moved
/// among the partitions". A looping context's block touched by a clustered context moves to
/// the default partition, then back when the loop touches it again.
#[test]
fn blocks_move_to_the_partition_of_the_context_touching_them() {
    let mut c = amp(20, "amp(default=lru,period=300,min-refs=8)");
    let reqs: Vec<(u64, u64)> = (0..10).flat_map(|_| (0..50u64).map(|k| (1, k))).collect();
    drive(&mut c, &reqs, 1);
    let m = manager(&c);
    assert_eq!(m.target_of(1), FIRST_MRU);
    let f = c.frame_of(0).expect("MRU keeps the head of the loop");
    assert_eq!(m.map().owner(f), Some(FIRST_MRU));
    let before = manager(&c).stats.moves;
    let a = Access { key: 0, ctx: 2, time: 500, ..Access::default() };
    assert_eq!(c.demand(&a), Demand::Hit);
    assert_eq!(manager(&c).map().owner(f), Some(DEFAULT));
    assert_eq!(manager(&c).stats.moves, before + 1);
    let a = Access { key: 0, ctx: 1, time: 501, ..Access::default() };
    c.demand(&a);
    assert_eq!(manager(&c).map().owner(f), Some(FIRST_MRU));
    c.check().unwrap();
}

/// §3.2 MRU garbage collection: "although the access patterns of program contexts are the
/// same, the working set may gradually shift. In this case vanilla MRU will eventually fail
/// because it holds only old data". A loop over 60 blocks slides forward 3 blocks a pass; blocks
/// it left behind, unused for longer than loop_time + 3 deviations, go to the one-shot
/// partition and are the first to leave.
#[test]
fn mru_garbage_collection_follows_a_shifting_working_set() {
    let mut reqs = Vec::new();
    for pass in 0..100u64 {
        for k in 0..60u64 {
            reqs.push((1, 3 * pass + k));
            if k % 6 == 0 {
                reqs.push((2, 5000 + k % 12));
            }
        }
    }
    // A short history (2 periods) keeps the blocks left behind from weighing on R̄.
    let mut with_gc = amp(100, "amp(default=lru,period=200,min-refs=8,history=2x)");
    let gc_misses = drive(&mut with_gc, &reqs, 7);
    let mut without = amp(100, "amp(default=lru,period=200,min-refs=8,history=2x,gc=false)");
    let plain_misses = drive(&mut without, &reqs, 0);
    let m = manager(&with_gc);
    assert_eq!(m.detector().report(1).unwrap().pattern, Pattern::Looping);
    assert!(m.stats.collected > 200, "{:?}", m.stats);
    // The current window is cached; no block left behind three passes ago or more (unused for
    // over three loop times) is still in the MRU partition (the first blocks, inserted before
    // detection, stay in the default partition, which the loop does not take from).
    assert!((297..357).all(|k| with_gc.contains(k)));
    assert!((0..288)
        .filter(|&k| with_gc.contains(k))
        .all(|k| m.map().owner(with_gc.frame_of(k).unwrap()) != Some(FIRST_MRU)));
    // Vanilla MRU holds old data and misses the window's new blocks again and again.
    let old_kept = (0..297).filter(|&k| without.contains(k)).count();
    assert!(old_kept > 20, "{old_kept}");
    let compulsory = reqs.iter().map(|r| r.1).collect::<FxHashSet<u64>>().len() as u64;
    assert!(
        (gc_misses - compulsory) * 4 < plain_misses - compulsory,
        "{gc_misses} with collection, {plain_misses} without, {compulsory} compulsory"
    );
}

/// AMP §3.1 and §3.3: a context that never re-references its blocks is one-shot; its blocks
/// are freed first, so a scan cannot push out the clustered context's working set.
#[test]
fn one_shot_contexts_do_not_pollute() {
    let mut reqs = Vec::new();
    for i in 0..40_000u64 {
        reqs.push((1, 1_000_000 + i));
        reqs.push((2, i % 50));
    }
    let mut c = amp(80, "amp(default=lru,period=1000)");
    let amp_misses = drive(&mut c, &reqs, 997);
    let mut lru = amp(80, "lru");
    let lru_misses = drive(&mut lru, &reqs, 0);
    let m = manager(&c);
    assert_eq!(m.target_of(1), ONE_SHOT);
    assert!(m.map().len(ONE_SHOT) <= 1);
    // The scan misses every time; the 50 hot blocks only at the start and until detection.
    assert!(amp_misses < 40_000 + 2_000, "{amp_misses}");
    assert_eq!(lru_misses, 80_000);
}

/// The limit on MRU partitions keeps the contexts with the most unique blocks (§3.3).
#[test]
fn mru_partitions_go_to_the_most_popular_loops() {
    let mut reqs = Vec::new();
    for _ in 0..30 {
        for ctx in 1..=4u64 {
            // Context c loops over 20 * c blocks.
            for k in 0..20 * ctx {
                reqs.push((ctx, ctx * 10_000 + k));
            }
        }
    }
    let mut c = amp(60, "amp(default=lru,max-partitions=2,period=2000,min-refs=8)");
    drive(&mut c, &reqs, 101);
    let m = manager(&c);
    let served: Vec<u64> = (FIRST_MRU..FIRST_MRU + 2).map(|p| m.partition_ctx(p)).collect();
    assert!(served.contains(&4) && served.contains(&3), "{served:?}");
    assert_eq!(m.target_of(1), DEFAULT);
    assert_eq!(m.detector().report(1).unwrap().pattern, Pattern::Looping);
    // Without MRU partitions a context that was one-shot and now loops returns to the default
    // partition.
    let mut reqs: Vec<(u64, u64)> = (0..3000u64).map(|k| (1, 100_000 + k)).collect();
    reqs.extend((0..200).flat_map(|_| (0..30u64).map(|k| (1, k))));
    // (`one-shot=first`: the adaptive rule would keep the context out of the one-shot partition
    // once its loop misses blocks that partition evicted; `adaptive_one_shot_*` tests that.)
    let mut c = amp(60, "amp(default=lru,max-partitions=0,period=3000,min-refs=8,history=100,one-shot=first)");
    for (t, &(ctx, key)) in reqs.iter().enumerate() {
        c.demand(&Access { key, ctx, time: t as u64, ..Access::default() });
        if t == 3500 {
            assert_eq!(manager(&c).target_of(1), ONE_SHOT);
        }
    }
    c.check().unwrap();
    assert_eq!(manager(&c).detector().report(1).unwrap().pattern, Pattern::Looping);
    assert_eq!(manager(&c).target_of(1), DEFAULT);
}

fn ops() -> impl Strategy<Value = Vec<(u64, u64, u8)>> {
    prop::collection::vec((0u64..4, 0u64..60, 0u8..8), 1..600)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random contexts, prefetch inserts and pins: residency and every partition's bookkeeping
    /// stay consistent, a pinned frame is never given up, the same seed gives the same misses.
    #[test]
    fn partitions_stay_consistent(ops in ops(), cap in 2usize..24, which in 0usize..4) {
        let spec = ["amp(default=lru,period=40,min-refs=4)", "amp(default=clock,period=30,min-refs=2,detect=continuous,alpha=0.2,sampling=1/2,adaptive=true,nl=8,history=50)", "pcc(default=lfu,period=25,threshold=5,steal=size)", "dear(default=fifo,interval=20,group=2,period=33)"][which];
        let mut runs = Vec::new();
        for _ in 0..2 {
            let mut c = amp(cap, spec);
            let mut pinned: Option<(u64, u32)> = None;
            let mut misses = 0u64;
            for (t, &(ctx, key, kind)) in ops.iter().enumerate() {
                // A loop-ish key stream per context, with noise.
                let k = if kind < 5 { ctx * 100 + (key + t as u64) % (10 + 7 * ctx) } else { key };
                let a = Access { key: k, block: k, ctx, time: t as u64, ..Access::default() };
                match kind {
                    0..=5 => misses += matches!(c.demand(&a), Demand::Miss | Demand::MissBypassed) as u64,
                    6 => if !c.contains(k) { c.insert(&a, Origin::Prefetch); },
                    _ => {
                        if let Some((_, f)) = pinned.take() {
                            c.unpin(f);
                        } else if let Some(f) = c.frame_of(k) {
                            c.pin(f);
                            pinned = Some((k, f));
                        }
                    }
                }
                if let Some((pk, pf)) = pinned {
                    prop_assert_eq!(c.frame_of(pk), Some(pf), "{} gave up a pinned block", spec);
                }
                c.check().map_err(|e| TestCaseError::fail(format!("{spec} step {t}: {e}")))?;
            }
            runs.push(misses);
        }
        prop_assert_eq!(runs[0], runs[1]);
    }
}

/// Read-ahead brings blocks into the partition of the context whose read triggered it; every
/// run keeps its invariants and its counters add up.
#[test]
fn read_ahead_with_contexts() {
    let s = generate("amp-mix(accesses=30000,loop1=700,loop2=300,loop2-share=0.2,loop1-share=0.3,lag=20)", 2).unwrap();
    let opts = RunOptions { jobs: 2, check: true, ..RunOptions::default() };
    let mut configs = Vec::new();
    for p in ["amp(default=lru,period=2000)", "pcc(default=clock,period=2000)", "dear(default=lru,interval=300)"] {
        for f in ["linux", "linux-ondemand", "bsd"] {
            configs.push(RunConfig::new(p, "500blocks").with_prefetch(f));
        }
    }
    for r in run_requests(&s.requests, AddressKind::File, &configs, &opts).unwrap() {
        let st = r.stats;
        assert_eq!(st.hits + st.misses, st.accesses);
        assert!(st.prefetched > 0 && st.prefetch_hits > 0, "{} {}: {st:?}", r.policy, r.prefetch);
        assert_eq!(st.blocks_read, st.misses + st.prefetched);
        assert!(r.timeline.unwrap().samples() > 10);
    }
}
