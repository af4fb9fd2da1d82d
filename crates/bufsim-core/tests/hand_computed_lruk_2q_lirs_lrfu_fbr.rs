//! Hand-computed sequences for LRU-K, 2Q, LIRS, LRFU and FBR, step by step.
//! Each comment gives the state after the access, in the form the policy's test-only `dump`
//! prints; the asserts compare against that dump. Times are demand access numbers from 0.
//! The prefetch cases follow the prefetching paper §4 rule by rule.

use bufsim_core::cache::{Cache, Demand};
use bufsim_core::policy::{build, Access, AnyPolicy, BuildEnv, Origin};

struct Sim {
    cache: Cache<AnyPolicy>,
    time: u64,
    pattern: String,
}

impl Sim {
    fn new(spec: &str, capacity: usize) -> Sim {
        let env = BuildEnv { capacity, block_size: 4096, seed: 1 };
        Sim { cache: Cache::new(build(spec, &env).unwrap(), capacity), time: 0, pattern: String::new() }
    }

    /// Demand accesses, one time step each.
    fn run(&mut self, blocks: &[u64]) -> &mut Self {
        for &b in blocks {
            let a = Access { key: b, block: b, time: self.time, ..Access::default() };
            self.pattern.push(match self.cache.demand(&a) {
                Demand::Hit | Demand::PrefetchHit => 'H',
                _ => 'M',
            });
            self.cache.check().unwrap_or_else(|e| panic!("after {b} at {}: {e}", self.time));
            self.time += 1;
        }
        self
    }

    /// Read-ahead of `b` at the time of the last demand access (no time step).
    fn prefetch(&mut self, b: u64) -> &mut Self {
        let a = Access { key: b, block: b, time: self.time.saturating_sub(1), ..Access::default() };
        assert!(!self.cache.contains(b));
        self.cache.insert(&a, Origin::Prefetch).expect("prefetch inserted");
        self.cache.check().unwrap();
        self
    }

    fn dump(&self) -> String {
        // Frames fill from 0 and an evicted frame is refilled at once, so frame f holds the
        // f-th resident key in frame order.
        let keys = self.cache.resident_keys();
        let k = |f: u32| keys[f as usize];
        match &self.cache.policy {
            AnyPolicy::LruK(p) => p.dump(k),
            AnyPolicy::TwoQ(p) => p.dump(k),
            AnyPolicy::Lirs(p) => p.dump(k),
            AnyPolicy::Lrfu(p) => p.dump(self.time.saturating_sub(1), k),
            AnyPolicy::Fbr(p) => p.dump(k),
            _ => unreachable!("no dump for this policy"),
        }
    }

    fn resident(&self) -> Vec<u64> {
        let mut r = self.cache.resident_keys();
        r.sort();
        r
    }
}

// ---------------------------------------------------------------------------------------------
// LRU-K (O'Neil et al. 1993): dumps list the eligible blocks in victim order as
// key:HIST(p,1)/HIST(p,2) (`-` = no such reference), then the blocks inside the CRP.

#[test]
fn lru2_evicts_the_oldest_penultimate_reference() {
    let mut s = Sim::new("lru-k(k=2,crp=0,history=0)", 3);
    s.run(&[1, 2, 3, 1]);
    // 1 has two references (3/0); 2 and 3 one each: infinite distance, oldest first.
    assert_eq!(s.dump(), "eligible=[2:1/- 3:2/- 1:3/0] crp=[] retained=[]");
    s.run(&[4]); // victim 2
    assert_eq!(s.dump(), "eligible=[3:2/- 4:4/- 1:3/0] crp=[] retained=[]");
    s.run(&[2, 5]); // victims 3, then 4
    assert_eq!(s.dump(), "eligible=[2:5/- 5:6/- 1:3/0] crp=[] retained=[]");
    s.run(&[1, 2]); // 1: 7/3, 2: 8/5; 1's penultimate reference (3) is older than 2's (5)
    assert_eq!(s.dump(), "eligible=[5:6/- 1:7/3 2:8/5] crp=[] retained=[]");
    s.run(&[6, 7]); // victims 5, then 6: blocks seen once go first, 1 and 2 stay
    assert_eq!(s.dump(), "eligible=[7:10/- 1:7/3 2:8/5] crp=[] retained=[]");
    assert_eq!(s.pattern, "MMMHMMMHHMM");
    assert_eq!(s.resident(), vec![1, 2, 7]);
    // LRU on the same string loses 1 at time 6 and keeps only the last three blocks.
    let mut l = Sim::new("lru", 3);
    l.run(&[1, 2, 3, 1, 4, 2, 5, 1, 2, 6, 7]);
    assert_eq!((l.pattern.as_str(), l.resident()), ("MMMHMMMMHMM", vec![2, 6, 7]));
}

#[test]
fn lru2_retained_history_gives_a_refetched_block_its_penultimate_reference() {
    let mut s = Sim::new("lru-k(k=2,crp=0,history=3)", 3);
    s.run(&[1, 2, 3, 1, 4]); // 4 evicts 2; 2's history (1/-) is retained
    assert_eq!(s.dump(), "eligible=[3:2/- 4:4/- 1:3/0] crp=[] retained=[2]");
    s.run(&[2]); // 2 returns with HIST = 5/1 (the retained reference shifts down); victim 3
    assert_eq!(s.dump(), "eligible=[4:4/- 1:3/0 2:5/1] crp=[] retained=[3]");
    s.run(&[5, 1, 2, 6]); // victims 4, then 5
    assert_eq!(s.dump(), "eligible=[6:9/- 1:7/3 2:8/5] crp=[] retained=[5 4 3]");
    s.run(&[3]); // 3 comes back as 10/2: now ahead of 1 (3) and 2 (5); 6 evicted and retained
    assert_eq!(s.dump(), "eligible=[3:10/2 1:7/3 2:8/5] crp=[] retained=[6 5 4]");
    assert_eq!(s.pattern, "MMMHMMMHHMM");
}

#[test]
fn lru2_correlated_references_count_once() {
    // CRP = 2 demand accesses (§2).
    let mut s = Sim::new("lru-k(k=2,crp=2,history=0)", 3);
    s.run(&[1, 1, 2, 2, 3]);
    // The second references of 1 and 2 fall inside the CRP: no new HIST entry.
    assert_eq!(s.dump(), "eligible=[] crp=[3:4/- 2:2/- 1:0/-] retained=[]");
    s.run(&[1]);
    // Uncorrelated: HIST(1,2) = old HIST(1,1) + the correlated period (LAST - HIST(1,1) = 1).
    assert_eq!(s.dump(), "eligible=[] crp=[1:5/1 3:4/- 2:2/-] retained=[]");
    s.run(&[4]); // at time 6 only 2 (last reference 3) is past the CRP: it goes, not 3
    assert_eq!(s.dump(), "eligible=[] crp=[4:6/- 1:5/1 3:4/-] retained=[]");
    s.run(&[5]); // 3 leaves the CRP and goes
    s.run(&[2]); // 1 is the only block past the CRP: even its two references cannot save it
    assert_eq!(s.dump(), "eligible=[] crp=[2:8/- 5:7/- 4:6/-] retained=[]");
    assert_eq!(s.pattern, "MHMHMHMMM");
    // Nothing eligible at all: the block with the oldest last reference goes.
    let mut s = Sim::new("lru-k(k=2,crp=5,history=0)", 2);
    s.run(&[1, 2, 3]);
    assert_eq!(s.resident(), vec![2, 3]);
}

#[test]
fn lru2_prefetch_rules() {
    // Prefetching paper §4 (LRU-2): a prefetched block has no access history, its first
    // demand access is its first reference (the prefetch time is not a penultimate reference),
    // and an unused prefetch leaves no retained history.
    let mut s = Sim::new("lru-k(k=2,crp=0,history=3)", 3);
    s.run(&[1]).prefetch(2);
    assert_eq!(s.dump(), "eligible=[1:0/- 2p:-/-] crp=[] retained=[]");
    s.run(&[2]); // first demand: one reference, not two
    assert_eq!(s.dump(), "eligible=[1:0/- 2:1/-] crp=[] retained=[]");
    s.run(&[2]);
    assert_eq!(s.dump(), "eligible=[1:0/- 2:2/1] crp=[] retained=[]");
    s.prefetch(3).prefetch(4); // 4 evicts 1 (demanded: retained)
    assert_eq!(s.dump(), "eligible=[3p:-/- 4p:-/- 2:2/1] crp=[] retained=[1]");
    s.prefetch(5); // evicts 3 unused: nothing retained
    assert_eq!(s.dump(), "eligible=[4p:-/- 5p:-/- 2:2/1] crp=[] retained=[1]");
    s.run(&[1]); // 1 returns with its retained reference: 3/0; 4 goes unused
    assert_eq!(s.dump(), "eligible=[5p:-/- 1:3/0 2:2/1] crp=[] retained=[]");
    assert_eq!(s.pattern, "MHHM");
    // With a CRP, a prefetched block is "last accessed" at its prefetch, so it is not eligible
    // until the CRP has passed: 4 evicts 1 (past the CRP, two references) rather than 3.
    let mut s = Sim::new("lru-k(k=2,crp=1,history=0)", 3);
    s.run(&[1, 2, 1, 2]).prefetch(3);
    assert_eq!(s.dump(), "eligible=[] crp=[3p:-/- 2:3/1 1:2/0] retained=[]");
    s.run(&[4]);
    assert_eq!(s.dump(), "eligible=[] crp=[4:4/- 3p:-/- 2:3/1] retained=[]");
    // Without a CRP the block with no history goes first.
    let mut s = Sim::new("lru-k(k=2,crp=0,history=0)", 3);
    s.run(&[1, 2, 1, 2]).prefetch(3).run(&[4]);
    assert_eq!(s.resident(), vec![1, 2, 4]);
}

#[test]
fn lru2_accusim_prefetch_rules() {
    // AccuSim's lru2.cc (variant=accusim): the first demand access of a prefetched block is a
    // correlated reference. It sets LAST (and HIST(p,1), the block having none) but does not
    // move the block: one whose CRP ran out before it was demanded stays eligible, with no
    // penultimate reference, and is the next victim. The paper's rule (variant=paper) makes
    // that access the block's first reference and puts it back inside the CRP.
    let spec = |v: &str| format!("lru-k(k=2,crp=2,history=0,variant={v})");
    let mut a = Sim::new(&spec("accusim"), 3);
    let mut p = Sim::new(&spec("paper"), 3);
    for s in [&mut a, &mut p] {
        s.run(&[1]).prefetch(2).run(&[3, 1, 3]);
    }
    // At time 3 the prefetched 2 (LAST = 0) is past its CRP: AccuSim moves it into its heap at
    // once (it looks through its CRP list at every reference), the paper's variant when a victim
    // is needed.
    assert_eq!(a.dump(), "eligible=[2p:-/-] crp=[3:1/- 1:0/-] retained=[]");
    assert_eq!(p.dump(), "eligible=[] crp=[3:1/- 1:0/- 2p:-/-] retained=[]");
    a.run(&[2]);
    p.run(&[2]);
    // The references to 1 and 3 at times 3 and 4 fell inside their CRPs: one reference each.
    assert_eq!(a.dump(), "eligible=[2:4/-] crp=[3:1/- 1:0/-] retained=[]");
    assert_eq!(p.dump(), "eligible=[] crp=[2:4/- 3:1/- 1:0/-] retained=[]");
    // Block 4 at time 5: 1's CRP has run out too. AccuSim evicts 2, which entered the heap
    // first; under the paper's rule 1 is the only eligible block.
    a.run(&[4]);
    p.run(&[4]);
    assert_eq!(a.resident(), vec![1, 3, 4]);
    assert_eq!(p.resident(), vec![2, 3, 4]);

    // A prefetched block that comes back with retained history: AccuSim orders it by that
    // history, the paper's rule as a block with none (both put 1 first here).
    let spec = |v: &str| format!("lru-k(k=2,crp=0,history=4,variant={v})");
    let mut a = Sim::new(&spec("accusim"), 2);
    let mut p = Sim::new(&spec("paper"), 2);
    for s in [&mut a, &mut p] {
        s.run(&[1, 1, 2, 2, 3]).prefetch(1);
    }
    assert_eq!(a.dump(), "eligible=[1p:1/0 2:3/2] crp=[] retained=[3]");
    assert_eq!(p.dump(), "eligible=[1p:1/0 2:3/2] crp=[] retained=[3]");
    // Its first demand: AccuSim keeps 1/0 (HIST(p,1) is set), the paper's rule shifts it in.
    a.run(&[1]);
    p.run(&[1]);
    assert_eq!(a.dump(), "eligible=[1:1/0 2:3/2] crp=[] retained=[3]");
    assert_eq!(p.dump(), "eligible=[1:5/1 2:3/2] crp=[] retained=[3]");
}

#[test]
fn lru2_accusim_order_of_leaving_the_crp() {
    // AccuSim's lru2.cc looks through its CRP list, most recently listed block first, at every
    // reference and moves each block whose CRP has passed into its heap, where blocks seen once
    // leave in the order they came in. Blocks of one LAST (a demand and the blocks read ahead
    // with it) thus go in the reverse of the order they were listed in.
    let spec = |v: &str| format!("lru-k(k=2,crp=2,history=0,variant={v})");
    let mut a = Sim::new(&spec("accusim"), 4);
    let mut p = Sim::new(&spec("paper"), 4);
    for s in [&mut a, &mut p] {
        s.run(&[1]).prefetch(2).prefetch(3);
        s.run(&[4, 4, 4]); // 1, 2 and 3 leave the CRP at time 3; 4's references are correlated
    }
    assert_eq!(a.dump(), "eligible=[3p:-/- 2p:-/- 1:0/-] crp=[4:1/-] retained=[]");
    a.run(&[5]);
    p.run(&[5]);
    assert_eq!(a.resident(), vec![1, 2, 4, 5]);
    assert_eq!(p.resident(), vec![2, 3, 4, 5]);

    // A block whose CRP ends at its first demand (2, read ahead at time 1) enters the heap
    // after a block whose CRP ended before (1): AccuSim moved 1 at time 3.
    let mut a = Sim::new(&spec("accusim"), 5);
    a.run(&[1, 3]).prefetch(2);
    a.run(&[4, 5, 2]);
    assert_eq!(a.dump(), "eligible=[1:0/- 2:4/- 3:1/-] crp=[5:3/- 4:2/-] retained=[]");
    a.run(&[6]);
    assert_eq!(a.resident(), vec![2, 3, 4, 5, 6]);
}

#[test]
fn lru1_is_lru() {
    let seq: Vec<u64> = (0..3000u64).map(|i| (i * 7919 + i / 13) % 97).collect();
    for cap in [1, 5, 32, 96] {
        let mut a = Sim::new("lru-k(k=1)", cap);
        let mut b = Sim::new("lru", cap);
        a.run(&seq);
        b.run(&seq);
        assert_eq!(a.pattern, b.pattern, "cap {cap}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2Q (Johnson and Shasha 1994, full version), 4 frames: Kin = 1, Kout = 2.

#[test]
fn two_q_full_version() {
    let mut s = Sim::new("2q", 4);
    s.run(&[1, 2, 3, 4, 1]); // the hit on 1 in A1in does nothing
    assert_eq!(s.dump(), "A1in=[4,3,2,1] Am=[] A1out=[]");
    s.run(&[5, 6]); // |A1in| > Kin: its tail goes, identifiers to A1out
    assert_eq!(s.dump(), "A1in=[6,5,4,3] Am=[] A1out=[2,1]");
    s.run(&[1]); // in A1out: reclaim (A1in's tail 3 to A1out), 1 to Am
    assert_eq!(s.dump(), "A1in=[6,5,4] Am=[1] A1out=[3,2]");
    s.run(&[7]); // 4 to A1out, which drops its tail 2 (Kout = 2)
    assert_eq!(s.dump(), "A1in=[7,6,5] Am=[1] A1out=[4,3]");
    s.run(&[1, 3]); // hit in Am; 3 from A1out to Am
    assert_eq!(s.dump(), "A1in=[7,6] Am=[3,1] A1out=[5,4]");
    s.run(&[8, 9, 10, 7]); // 7 returns from A1out to Am
    assert_eq!(s.dump(), "A1in=[10] Am=[7,3,1] A1out=[9,8]");
    s.run(&[11]); // |A1in| = Kin: Am's LRU block 1 goes and is not remembered
    assert_eq!(s.dump(), "A1in=[11,10] Am=[7,3] A1out=[9,8]");
    assert_eq!(s.pattern, "MMMMHMMMMHMMMMMM");
}

#[test]
fn two_q_prefetch_rules() {
    // Prefetching paper §4 (2Q): prefetched blocks enter A1in; the first demand access leaves
    // them there; evicted unused they do not go to A1out; a prefetched block found in A1out is
    // promoted to Am as if demanded.
    let mut s = Sim::new("2q", 4);
    s.run(&[1]).prefetch(2).prefetch(3);
    s.run(&[2]); // first demand: stays where it is in A1in
    assert_eq!(s.dump(), "A1in=[3,2,1] Am=[] A1out=[]");
    s.prefetch(4).prefetch(5).prefetch(6); // 1 and 2 (both demanded) go to A1out
    assert_eq!(s.dump(), "A1in=[6,5,4,3] Am=[] A1out=[2,1]");
    s.prefetch(7); // 3 leaves unused: not remembered
    assert_eq!(s.dump(), "A1in=[7,6,5,4] Am=[] A1out=[2,1]");
    s.prefetch(1); // in A1out: promoted to Am; 4 leaves unused
    assert_eq!(s.dump(), "A1in=[7,6,5] Am=[1] A1out=[2]");
    s.run(&[1]);
    assert_eq!(s.pattern, "MHH");
}

// ---------------------------------------------------------------------------------------------
// LIRS (Jiang and Zhang 2002). 3 frames, Lhirs = 1, Llirs = 2. Dumps: S from the top (L = LIR,
// H = resident HIR, n = non-resident HIR), Q from its end to its front (the next victim).

/// The state of the paper's §3 example at time 10: LIR = {A, B}, E the resident HIR block,
/// D non-resident in S, C out of S. A = 1, B = 2, C = 3, D = 4, E = 5.
fn lirs_paper_state() -> Sim {
    let mut s = Sim::new("lirs(hir=1,hir-min=1)", 3);
    s.run(&[2, 1, 3]); // B and A fill the LIR set; C is HIR
    assert_eq!(s.dump(), "S=[3H 1L 2L] Q=[3]");
    s.run(&[2]); // LIR hit at the bottom: B to the top, A is the bottom now
    assert_eq!(s.dump(), "S=[2L 3H 1L] Q=[3]");
    s.run(&[4]); // C evicted, stays in S as non-resident
    assert_eq!(s.dump(), "S=[4H 2L 3n 1L] Q=[4]");
    s.run(&[1]); // LIR hit at the bottom: pruning drops C's entry
    assert_eq!(s.dump(), "S=[1L 4H 2L] Q=[4]");
    s.run(&[5]); // D evicted, non-resident in S
    assert_eq!(s.dump(), "S=[5H 1L 4n 2L] Q=[5]");
    s
}

#[test]
fn lirs_paper_example_at_time_10() {
    // Recencies now: E 0, A 1, D 2, B 3, C 4; Rmax (B) = 3.
    // A reference to D (recency 2 < Rmax): D becomes LIR, B becomes HIR (§3, case 3).
    let mut s = lirs_paper_state();
    s.run(&[4]);
    assert_eq!(s.dump(), "S=[4L 5n 1L] Q=[2]");
    // A reference to C (recency 4 > Rmax, not in S): C stays HIR.
    let mut s = lirs_paper_state();
    s.run(&[3]);
    assert_eq!(s.dump(), "S=[3H 5n 1L 4n 2L] Q=[3]");
    // A reference to E (resident HIR in S): E becomes LIR, B goes to Q, D's entry is pruned.
    let mut s = lirs_paper_state();
    s.run(&[5]);
    assert_eq!(s.dump(), "S=[5L 1L] Q=[2]");
    // A reference to B (LIR at the bottom): B to the top, D's entry is pruned.
    let mut s = lirs_paper_state();
    s.run(&[2]);
    assert_eq!(s.dump(), "S=[2L 5H 1L] Q=[5]");
}

#[test]
fn lirs_hit_on_resident_hir_outside_s() {
    let mut s = lirs_paper_state();
    s.run(&[6]); // E evicted (non-resident in S), F resident HIR
    assert_eq!(s.dump(), "S=[6H 5n 1L 4n 2L] Q=[6]");
    s.run(&[1, 2]); // B's hit prunes everything below A
    assert_eq!(s.dump(), "S=[2L 1L] Q=[6]");
    // F is resident HIR but no longer in S: a hit moves it to the top of S, it stays HIR.
    s.run(&[6]);
    assert_eq!(s.dump(), "S=[6H 2L 1L] Q=[6]");
    // libCacheSim's LIRS.c demotes the bottom LIR block on that hit instead.
    let mut l = Sim::new("lirs(hir=1,hir-min=1,variant=libcachesim)", 3);
    l.run(&[2, 1, 3, 2, 4, 1, 5, 6, 1, 2, 6]);
    assert_eq!(l.dump(), "S=[6H 2L] Q=[1 6]");
}

#[test]
fn lirs_stack_bound_drops_the_lowest_hir_entry() {
    // S may hold 4 entries: past that, the HIR entry nearest the bottom leaves S.
    let mut s = Sim::new("lirs(hir=1,hir-min=1,stack=4)", 3);
    s.run(&[1, 2, 3, 4, 5]);
    // 5 entries after 5: C's entry (the HIR nearest the bottom) leaves.
    assert_eq!(s.dump(), "S=[5H 4n 2L 1L] Q=[5]");
    s.run(&[6]);
    assert_eq!(s.dump(), "S=[6H 5n 2L 1L] Q=[6]");
}

#[test]
fn lirs_prefetch_rules() {
    // Prefetching paper §4 (LIRS): a prefetched block goes into Q, not onto S; an entry it has in
    // S stays in place; its first demand access makes it LIR if it has an entry, HIR at the top
    // of S if not; an unused prefetch leaves no entry.
    let mut s = lirs_paper_state(); // S=[5H 1L 4n 2L] Q=[5]
    s.prefetch(4); // E evicted (non-resident); D resident again at its old place in S
    assert_eq!(s.dump(), "S=[5n 1L 4H 2L] Q=[4]");
    s.run(&[4]); // first demand: D had an entry, so it becomes LIR; B to Q
    assert_eq!(s.dump(), "S=[4L 5n 1L] Q=[2]");
    s.prefetch(6); // B evicted (not in S: forgotten); F only in Q
    assert_eq!(s.dump(), "S=[4L 5n 1L] Q=[6]");
    s.prefetch(7); // F evicted unused: no entry
    assert_eq!(s.dump(), "S=[4L 5n 1L] Q=[7]");
    s.run(&[7]); // first demand without an entry: HIR at the top of S
    assert_eq!(s.dump(), "S=[7H 4L 5n 1L] Q=[7]");
    assert!(s.pattern.ends_with("HH"));
}

#[test]
fn lirs_accusim_rules() {
    // AccuSim's lirs.c (variant=accusim): blocks read ahead into a cold cache do not become LIR
    // at their first demand (only a demand miss with more than Lhirs frames free does), and a
    // block read ahead and evicted unused keeps its entry in S.
    let spec = |v: &str| format!("lirs(hir=1,hir-min=1,variant={v})");
    let mut a = Sim::new(&spec("accusim"), 3);
    let mut p = Sim::new(&spec("paper"), 3);
    for s in [&mut a, &mut p] {
        s.run(&[1]).prefetch(2).prefetch(3);
        s.run(&[2, 3]);
    }
    // 1 was missed with 3 frames free: LIR in both. 2 and 3: LIR while the LIR set has room
    // (the paper's rule), HIR under AccuSim's, the cache having filled by read-ahead.
    assert_eq!(p.dump(), "S=[3H 2L 1L] Q=[3]");
    assert_eq!(a.dump(), "S=[3H 2H 1L] Q=[3 2]");
    // 2 again: a resident HIR in S becomes LIR in both.
    a.run(&[2]);
    assert_eq!(a.dump(), "S=[2L 3H 1L] Q=[3]");
    // 3 is in S; read ahead again after its eviction and evicted unused, it keeps its entry.
    a.run(&[4]); // 3 evicted, non-resident in S
    a.prefetch(3); // 4 evicted (in S: non-resident); 3 resident again at its place
    a.prefetch(5); // 3 evicted unused
    assert_eq!(a.dump(), "S=[4n 2L 3n 1L] Q=[5]");
    let mut q = Sim::new(&spec("paper"), 3);
    q.run(&[1]).prefetch(2).prefetch(3);
    q.run(&[2, 3, 2, 4]).prefetch(3);
    q.prefetch(5);
    assert!(!q.dump().contains("3n"), "{}", q.dump());
}

// ---------------------------------------------------------------------------------------------
// LRFU (Lee et al. 2001): dumps list blocks in victim order as key:CRF at the last access time.

#[test]
fn lrfu_spans_lru_to_lfu() {
    // 1 1 2 3 2 1 with 2 frames.
    // lambda = 0.5: at time 3, CRF(1) = (1 + 2^-0.5) 2^-1 = 0.8536 > CRF(2) = 2^-0.5: 2 goes.
    let mut s = Sim::new("lrfu(lambda=0.5)", 2);
    s.run(&[1, 1]);
    assert_eq!(s.dump(), "1:1.7071");
    s.run(&[2]);
    assert_eq!(s.dump(), "2:1.0000 1:1.2071");
    s.run(&[3]);
    assert_eq!(s.dump(), "1:0.8536 3:1.0000");
    // At time 4, CRF(1) = 1.7071 2^-1.5 = 0.6036 < CRF(3) = 0.7071: recency wins, 1 goes.
    s.run(&[2]);
    assert_eq!(s.dump(), "3:0.7071 2:1.0000");
    s.run(&[1]);
    assert_eq!((s.pattern.as_str(), s.resident()), ("MHMMMM", vec![1, 2]));
    // lambda = 0.1: CRF(1) = 1.9330 decays slowly; 1 survives both misses.
    let mut s = Sim::new("lrfu(lambda=0.1)", 2);
    s.run(&[1, 1, 2, 3]);
    assert_eq!(s.dump(), "3:1.0000 1:1.6828");
    s.run(&[2, 1]);
    assert_eq!((s.pattern.as_str(), s.resident()), ("MHMMMH", vec![1, 2]));
    // lambda = 1 is LRU: 1 goes at time 3.
    let mut s = Sim::new("lrfu(lambda=1)", 2);
    s.run(&[1, 1, 2, 3, 2, 1]);
    let mut l = Sim::new("lru", 2);
    l.run(&[1, 1, 2, 3, 2, 1]);
    assert_eq!(s.pattern, "MHMMHM");
    assert_eq!(s.pattern, l.pattern);
}

#[test]
fn lrfu_prefetch_rule() {
    // Prefetching paper §4 (LRFU): a prefetched block enters as most recent with F(0); at its
    // first demand access its CRF is reset to F(0), not updated (seen once, not twice).
    let mut s = Sim::new("lrfu(lambda=0.5)", 3);
    s.run(&[1, 1]).prefetch(2);
    assert_eq!(s.dump(), "2:1.0000 1:1.7071");
    s.run(&[2]);
    assert_eq!(s.dump(), "2:1.0000 1:1.2071");
    assert_eq!(s.pattern, "MHH");
    // With read-ahead lambda = 1 is not quite LRU: 2 is prefetched in the time step of 1's hit,
    // and 1's CRF (1 + 2^-1) outranks 2's fresh F(0), where LRU ranks the later arrival first.
    let mut s = Sim::new("lrfu(lambda=1)", 2);
    s.run(&[1, 1]).prefetch(2).run(&[3]);
    assert_eq!(s.resident(), vec![1, 3]);
    let mut l = Sim::new("lru", 2);
    l.run(&[1, 1]).prefetch(2).run(&[3]);
    assert_eq!(l.resident(), vec![2, 3]);
}

#[test]
fn lrfu_lambda_one_is_lru_and_zero_is_lfu() {
    let seq: Vec<u64> = (0..4000u64).map(|i| (i * 7919 + i / 7) % 131).collect();
    for cap in [1, 7, 40, 120] {
        let (mut a, mut b) = (Sim::new("lrfu(lambda=1)", cap), Sim::new("lru", cap));
        a.run(&seq);
        b.run(&seq);
        assert_eq!(a.pattern, b.pattern, "lambda=1 vs lru, cap {cap}");
        let (mut a, mut b) = (Sim::new("lrfu(lambda=0)", cap), Sim::new("lfu", cap));
        a.run(&seq);
        b.run(&seq);
        assert_eq!(a.pattern, b.pattern, "lambda=0 vs lfu, cap {cap}");
    }
}

// ---------------------------------------------------------------------------------------------
// FBR (Robinson and Devarakonda 1990): 4 frames, new section 1, old section 2, middle 1.
// Dumps: the sections from the top, key:count.

#[test]
fn fbr_factors_out_locality_and_evicts_by_count() {
    let mut s = Sim::new("fbr(new=25%,old=50%)", 4);
    s.run(&[1, 2, 1]); // 1 was in the middle section: counted
    assert_eq!(s.dump(), "new=[1:2] middle=[2:1] old=[]");
    s.run(&[1]); // hit in the new section: not counted
    assert_eq!(s.dump(), "new=[1:2] middle=[2:1] old=[]");
    s.run(&[3, 4]);
    assert_eq!(s.dump(), "new=[4:1] middle=[3:1] old=[1:2 2:1]");
    s.run(&[5]); // the old section's count-1 block 2 goes (also the least recent)
    assert_eq!(s.dump(), "new=[5:1] middle=[4:1] old=[3:1 1:2]");
    s.run(&[6]); // 3 (count 1) goes although 1 (count 2) is less recent
    assert_eq!(s.dump(), "new=[6:1] middle=[5:1] old=[4:1 1:2]");
    s.run(&[7]);
    assert_eq!(s.dump(), "new=[7:1] middle=[6:1] old=[5:1 1:2]");
    assert_eq!(s.pattern, "MMHHMMMMM");
    // With C_max = 1 all counts tie: the old section is LRU, and 1 goes at 6.
    let mut s = Sim::new("fbr(new=25%,old=50%,cmax=1)", 4);
    s.run(&[1, 2, 1, 1, 3, 4, 5, 6]);
    assert_eq!(s.dump(), "new=[6:1] middle=[5:1] old=[4:1 3:1]");
}

#[test]
fn fbr_ages_counts_when_the_mean_passes_amax() {
    let mut s = Sim::new("fbr(new=0%,old=50%,amax=2)", 2);
    s.run(&[1, 2, 1, 1]); // counts 3 and 1: mean 2, not above A_max
    assert_eq!(s.dump(), "new=[] middle=[1:3] old=[2:1]");
    s.run(&[1]); // 4 and 1: mean 2.5 > 2, so every count C becomes ceil(C/2)
    assert_eq!(s.dump(), "new=[] middle=[1:2] old=[2:1]");
}

#[test]
fn fbr_without_a_middle_section() {
    // new + old = the cache: a block leaving the new section lets the old section's top move
    // up into the new section (there is no middle section for it to stop in).
    let mut s = Sim::new("fbr(new=50%,old=50%)", 2);
    s.run(&[1, 2]);
    assert_eq!(s.dump(), "new=[2:1] middle=[] old=[1:1]");
    s.run(&[2]); // hit in the new section: not counted, and 1 stays where it is
    assert_eq!(s.dump(), "new=[2:1] middle=[] old=[1:1]");
    s.run(&[1]); // hit in the old section: counted, 2 goes down to the old section
    assert_eq!(s.dump(), "new=[1:2] middle=[] old=[2:1]");
    s.run(&[3]); // 2 is the old section's only block
    assert_eq!(s.dump(), "new=[3:1] middle=[] old=[1:2]");
    assert_eq!(s.pattern, "MMHHM");
}

#[test]
fn fbr_prefetch_rules() {
    // Prefetching paper §4: a prefetched block is "not accessed yet" (count 0); its first demand
    // access counts once even in the new section; an unused prefetch is the first victim.
    let mut s = Sim::new("fbr(new=25%,old=50%,history=4)", 4);
    s.run(&[1]).prefetch(2).prefetch(3);
    assert_eq!(s.dump(), "new=[3:0] middle=[2:0] old=[1:1]");
    s.run(&[3]);
    assert_eq!(s.dump(), "new=[3:1] middle=[2:0] old=[1:1]");
    s.prefetch(4).prefetch(5); // 5 evicts 2, unused (count 0 in the old section)
    assert_eq!(s.dump(), "new=[5:0] middle=[4:0] old=[3:1 1:1]");
    s.prefetch(6); // no count 0 in the old section: 1 (count 1, least recent) goes, remembered
    assert_eq!(s.dump(), "new=[6:0] middle=[5:0] old=[4:0 3:1]");
    s.run(&[1]); // 1 returns with its remembered count, plus this reference; 4 goes unused
    assert_eq!(s.dump(), "new=[1:2] middle=[6:0] old=[5:0 3:1]");
    s.run(&[4]); // 4 left unused, so nothing was remembered: count 1; 5 goes unused
    assert_eq!(s.dump(), "new=[4:1] middle=[1:2] old=[6:0 3:1]");
    assert_eq!(s.pattern, "MHMM");
}
