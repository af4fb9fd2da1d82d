//! AMP's access-pattern detector: average reference recency R̄ per program context (AMP, Zhou,
//! von Behren, Brewer, UCB/CSD-05-1379, §3.1), with one-shot detection and block sampling.
//! Deviation: R̄ is exact but costs O(log |L|) per access (an order-statistics tree), not O(|L|).

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use super::detect::{block_hash, ContextReport, Detector, LoopStats, Pattern, Sampling, FULL_Q};
use super::manager::Manager;
use super::{
    build_manager, read_hints, P_DEFAULT, P_GC, P_HINTS, P_MAX_PARTITIONS, P_MIN_GHOSTS, P_ONE_SHOT, P_PERIOD, P_SEED,
    P_STEAL, P_TIMELINE,
};
use crate::policy::{Args, BuildEnv, ParamInfo, PolicyInfo, Range};
use crate::spec::SpecError;

/// A block seen again: where its previous access sits in L_i.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reref {
    /// p_i: position of the block's last access in L_i, 0 = oldest.
    pub pos: usize,
    /// |L_i|: distinct blocks seen before this access.
    pub len: usize,
    /// Virtual time of the block's previous access.
    pub last_time: u64,
}

impl Reref {
    /// R_i = p_i / (|L_i| - 1), or 0.5 when |L_i| = 1 (AMP §3.1).
    #[inline]
    pub fn recency(&self) -> f64 {
        if self.len > 1 {
            self.pos as f64 / (self.len - 1) as f64
        } else {
            0.5
        }
    }

    /// Distinct blocks accessed since the block's previous access, itself included: for a loop,
    /// the loop's size.
    #[inline]
    pub fn distance(&self) -> usize {
        self.len - self.pos
    }
}

/// The list L of AMP §3.1: every block seen once, ordered by last access, "analogous to a move
/// to front list". Kept as slots in access order with a Fenwick tree counting the live ones, so
/// p_i (live slots before the block's slot) costs O(log n). An access frees its old slot and
/// takes the next one; when slots run out the live ones are renumbered in order (O(|L|), after
/// at least |L| accesses: amortized O(1)). Memory: about 40 bytes per block in L.
#[derive(Clone, Debug)]
pub struct RecencyList {
    slot_of: FxHashMap<u64, u32>,
    key_at: Vec<u64>,
    /// Virtual time of the access that took the slot (nondecreasing in slot order).
    time_at: Vec<u64>,
    alive: Vec<bool>,
    /// Fenwick tree over slots, 1-based: `tree[j]` counts live slots in `(j - lowbit(j), j]`.
    tree: Vec<u32>,
    next: usize,
    live: usize,
    /// Slots below this one are known dead or expired (history horizon scan).
    low: usize,
}

const MIN_SLOTS: usize = 64;

impl Default for RecencyList {
    fn default() -> Self {
        RecencyList::new()
    }
}

impl RecencyList {
    pub fn new() -> Self {
        RecencyList {
            slot_of: FxHashMap::default(),
            key_at: vec![0; MIN_SLOTS],
            time_at: vec![0; MIN_SLOTS],
            alive: vec![false; MIN_SLOTS],
            tree: vec![0; MIN_SLOTS + 1],
            next: 0,
            live: 0,
            low: 0,
        }
    }

    /// |L|.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    #[inline]
    fn add(&mut self, slot: usize, delta: i32) {
        let mut j = slot + 1;
        while j < self.tree.len() {
            self.tree[j] = self.tree[j].wrapping_add(delta as u32);
            j += j & j.wrapping_neg();
        }
    }

    /// Live slots in `[0, slot)`.
    #[inline]
    fn before(&self, slot: usize) -> usize {
        let mut s = 0u32;
        let mut j = slot;
        while j > 0 {
            s += self.tree[j];
            j &= j - 1;
        }
        s as usize
    }

    fn kill(&mut self, slot: usize) {
        self.alive[slot] = false;
        self.add(slot, -1);
        self.live -= 1;
    }

    /// An access of `key` at virtual time `time` (never less than the previous access's).
    /// Returns where the block was in L_i if it was there; either way the block is then the
    /// newest entry of L.
    #[inline]
    pub fn access(&mut self, key: u64, time: u64) -> Option<Reref> {
        if self.next == self.alive.len() {
            self.renumber();
        }
        let s = self.next;
        // One probe of the map: the block's old slot, replaced by its new one.
        let old = match self.slot_of.entry(key) {
            Entry::Occupied(mut e) => Some(std::mem::replace(e.get_mut(), s as u32) as usize),
            Entry::Vacant(e) => {
                e.insert(s as u32);
                None
            }
        };
        let before = old.map(|o| {
            let r = Reref { pos: self.before(o), len: self.live, last_time: self.time_at[o] };
            self.kill(o);
            r
        });
        self.next += 1;
        self.key_at[s] = key;
        self.time_at[s] = time;
        self.alive[s] = true;
        self.add(s, 1);
        self.live += 1;
        before
    }

    /// Renumbers the live slots `0..live` in order, in an array of twice that size.
    fn renumber(&mut self) {
        let cap = (self.live * 2).max(MIN_SLOTS);
        let mut key_at = vec![0; cap];
        let mut time_at = vec![0; cap];
        let mut k = 0;
        for s in 0..self.next {
            if self.alive[s] {
                key_at[k] = self.key_at[s];
                time_at[k] = self.time_at[s];
                self.slot_of.insert(key_at[k], k as u32);
                k += 1;
            }
        }
        debug_assert_eq!(k, self.live);
        self.key_at = key_at;
        self.time_at = time_at;
        self.alive = vec![false; cap];
        self.alive[..k].iter_mut().for_each(|a| *a = true);
        // The first k slots are live: tree[j] = |(j - lowbit(j), j] ∩ [1, k]|.
        self.tree = (0..=cap)
            .map(|j| if j == 0 { 0 } else { (j.min(k)).saturating_sub(j - (j & j.wrapping_neg())) as u32 })
            .collect();
        self.next = k;
        self.low = 0;
    }

    /// Forgets blocks last accessed before virtual time `time` (a history horizon).
    pub fn expire(&mut self, time: u64) {
        while self.low < self.next {
            let s = self.low;
            if self.alive[s] {
                if self.time_at[s] >= time {
                    return;
                }
                self.slot_of.remove(&self.key_at[s]);
                self.kill(s);
            }
            self.low += 1;
        }
    }

    /// Keeps only the blocks for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(u64) -> bool) {
        for s in 0..self.next {
            if self.alive[s] && !keep(self.key_at[s]) {
                self.slot_of.remove(&self.key_at[s]);
                self.kill(s);
            }
        }
    }

    /// L from the oldest to the most recent entry (tests and dumps).
    pub fn list(&self) -> Vec<u64> {
        (0..self.next).filter(|&s| self.alive[s]).map(|s| self.key_at[s]).collect()
    }

    pub fn check(&self) -> Result<(), String> {
        let alive = self.alive[..self.next].iter().filter(|&&a| a).count();
        if alive != self.live || self.slot_of.len() != self.live || self.before(self.next) != self.live {
            return Err(format!(
                "recency list: {} live, {alive} alive slots, {} mapped, tree counts {}",
                self.live,
                self.slot_of.len(),
                self.before(self.next)
            ));
        }
        for (&k, &s) in &self.slot_of {
            if !self.alive[s as usize] || self.key_at[s as usize] != k {
                return Err(format!("recency list: block {k} maps to slot {s} that does not hold it"));
            }
        }
        Ok(())
    }
}

/// The knobs of AMP's detector (§3.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecencyConfig {
    /// T: a context is looping when R̄ < T (the paper uses 0.4).
    pub threshold: f64,
    pub sampling: Sampling,
    /// Re-references (R_i defined) a detection needs before it classifies a context, and
    /// sampled accesses without any re-reference that make it one-shot.
    pub min_refs: u64,
    /// Continuous detection: R̄ is an exponential moving average with this weight, updated at
    /// every access (AMP §3.1: "can respond faster to changes in workload").
    pub ema: Option<f64>,
    /// Forget blocks a context has not touched for this much virtual time, so that blocks a
    /// context left behind stop weighing on R̄ (`None`: remember every block, L_i exactly as
    /// defined over the whole run).
    pub history: Option<u64>,
}

impl Default for RecencyConfig {
    fn default() -> Self {
        RecencyConfig { threshold: 0.4, sampling: Sampling::ALL, min_refs: 32, ema: None, history: None }
    }
}

/// Per-context state of the detector.
#[derive(Clone, Debug)]
struct Context {
    list: RecencyList,
    /// Current sampling threshold Q (adaptive sampling changes it per context).
    q: u64,
    accesses: u64,
    period_sampled: u64,
    period_refs: u64,
    period_sum: f64,
    ema: Option<f64>,
    refs: u64,
    stats: LoopStats,
    pattern: Pattern,
    r_bar: Option<f64>,
}

/// AMP's detector over every context (§3.1).
#[derive(Clone, Debug)]
pub struct RecencyDetector {
    cfg: RecencyConfig,
    contexts: FxHashMap<u64, Context>,
}

impl RecencyDetector {
    pub fn new(cfg: RecencyConfig) -> Self {
        RecencyDetector { cfg, contexts: FxHashMap::default() }
    }

    /// The current sampling threshold Q of a context (tests of adaptive sampling).
    pub fn q(&self, ctx: u64) -> Option<u64> {
        self.contexts.get(&ctx).map(|c| c.q)
    }

    /// |L| of a context (sampled blocks remembered).
    pub fn list_len(&self, ctx: u64) -> usize {
        self.contexts.get(&ctx).map_or(0, |c| c.list.len())
    }
}

impl Detector for RecencyDetector {
    #[inline]
    fn access(&mut self, ctx: u64, key: u64, time: u64) -> Option<Pattern> {
        let cfg = self.cfg;
        let c = self.contexts.entry(ctx).or_insert_with(|| Context {
            list: RecencyList::new(),
            q: cfg.sampling.q0,
            accesses: 0,
            period_sampled: 0,
            period_refs: 0,
            period_sum: 0.0,
            ema: None,
            refs: 0,
            stats: LoopStats::default(),
            pattern: Pattern::Undetected,
            r_bar: None,
        });
        c.accesses += 1;
        // AMP §3.1, block sampling: "only consider the block when the hash is within a range".
        if block_hash(key) as u64 >= c.q {
            return None;
        }
        c.period_sampled += 1;
        if let Some(h) = cfg.history {
            c.list.expire(time.saturating_sub(h));
        }
        let mut changed = None;
        if let Some(r) = c.list.access(key, time) {
            let ri = r.recency();
            c.period_sum += ri;
            c.period_refs += 1;
            c.refs += 1;
            // A sampled loop of n blocks shows n * Q / 2^32 of them.
            let scale = FULL_Q as f64 / c.q as f64;
            c.stats.push(r.distance() as f64 * scale, time.saturating_sub(r.last_time) as f64);
            if let Some(alpha) = cfg.ema {
                let e = match c.ema {
                    Some(e) => e + alpha * (ri - e),
                    None => ri,
                };
                c.ema = Some(e);
                if c.refs >= cfg.min_refs {
                    let p = if e < cfg.threshold { Pattern::Looping } else { Pattern::Other };
                    c.r_bar = Some(e);
                    if p != c.pattern {
                        c.pattern = p;
                        changed = Some(p);
                    }
                }
            }
        }
        // AMP §3.1, adaptive sampling: "Q is halved whenever |L| grows over the limit N_L".
        if cfg.sampling.adaptive && c.list.len() > cfg.sampling.limit && c.q > 1 {
            c.q /= 2;
            let q = c.q;
            c.list.retain(|k| (block_hash(k) as u64) < q);
        }
        changed
    }

    fn detect(&mut self, now: u64) {
        let cfg = self.cfg;
        for c in self.contexts.values_mut() {
            if let Some(h) = cfg.history {
                c.list.expire(now.saturating_sub(h));
            }
            if c.period_sampled > 0 {
                let r_bar = match cfg.ema {
                    Some(_) => c.ema,
                    None => (c.period_refs > 0).then(|| c.period_sum / c.period_refs as f64),
                };
                if c.period_refs == 0 && c.period_sampled >= cfg.min_refs {
                    // AMP §3.1: "If none of the blocks accessed by a context are accessed again
                    // after a long time, the detector assigns the one-shot pattern".
                    c.pattern = Pattern::OneShot;
                } else if c.period_refs >= cfg.min_refs || (cfg.ema.is_some() && c.refs >= cfg.min_refs) {
                    let r = r_bar.expect("re-references give R̄");
                    // AMP §3.1: "categorizes all contexts with R̄ < T as having looping patterns".
                    c.pattern = if r < cfg.threshold { Pattern::Looping } else { Pattern::Other };
                }
                if r_bar.is_some() {
                    c.r_bar = r_bar;
                }
            }
            // AMP §3.1: Q is "doubled when |L| drops below N_L/2 and Q > Q_0" (read: Q < Q_0,
            // since Q only ever goes below Q_0); checked at detections, so the band between
            // N_L/2 and N_L damps oscillation.
            if cfg.sampling.adaptive && c.list.len() < cfg.sampling.limit / 2 && c.q < cfg.sampling.q0 {
                c.q = (c.q * 2).min(cfg.sampling.q0);
            }
            c.period_sampled = 0;
            c.period_refs = 0;
            c.period_sum = 0.0;
            c.stats.publish();
        }
    }

    fn report(&self, ctx: u64) -> Option<ContextReport> {
        self.contexts.get(&ctx).map(|c| ContextReport {
            pattern: c.pattern,
            unique_blocks: c.list.len() as f64 * FULL_Q as f64 / c.q as f64,
            r_bar: c.r_bar,
            loop_size: c.stats.loop_size(),
            loop_time: c.stats.loop_time(),
            accesses: c.accesses,
        })
    }

    fn contexts(&self, out: &mut Vec<u64>) {
        let start = out.len();
        out.extend(self.contexts.keys().copied());
        out[start..].sort_unstable();
    }

    fn check(&self) -> Result<(), String> {
        for (ctx, c) in &self.contexts {
            c.list.check().map_err(|e| format!("context {ctx}: {e}"))?;
        }
        Ok(())
    }
}

impl crate::policy::PolicyDef for super::Amp {
    const INFO: PolicyInfo = PolicyInfo {
        name: "amp",
        aliases: &[],
        paper: "AMP, Zhou, von Behren, Brewer, UCB/CSD-05-1379: §3.1 detection, §3.2 and Figure 4 partitions",
        summary: "program-context adaptive multi-policy: looping contexts (R̄ < threshold) get MRU partitions, one-shot contexts a partition freed first, the rest the default policy; partitions sized by randomized marginal gain",
        params: &[
            P_DEFAULT,
            ParamInfo { name: "threshold", default: "0.4", doc: "T: a context loops when its R̄ < T (§3.1)", range: Range::Number(0.0, 1.0) },
            P_MAX_PARTITIONS,
            ParamInfo { name: "sampling", default: "1", doc: "fraction of blocks the detector considers, by block hash (Q_0/2^32: 1, 1/4, 25%)", range: Range::Text("a fraction in (0, 1] such as 1, 1/4 or 25%") },
            ParamInfo { name: "adaptive", default: "false", doc: "adaptive sampling: halve Q when |L| > nl, double it back when |L| < nl/2 (§3.1)", range: Range::Flag },
            ParamInfo { name: "nl", default: "4096", doc: "N_L, the |L| limit of adaptive sampling", range: Range::Whole(2, u64::MAX) },
            ParamInfo { name: "detect", default: "periodic", doc: "periodic (R̄ over each period) or continuous (exponential moving average, switching at any access)", range: Range::Choice(&["periodic", "continuous"]) },
            ParamInfo { name: "alpha", default: "0.01", doc: "weight of a new R_i in the continuous detector's moving average", range: Range::Positive(1.0) },
            ParamInfo { name: "min-refs", default: "32", doc: "re-references a detection needs (and sampled accesses without one that make a context one-shot)", range: Range::Whole(1, u64::MAX) },
            ParamInfo { name: "history", default: "10x", doc: "forget blocks a context has not touched for this many accesses (Nx: N periods; all: L_i over the whole run)", range: Range::Text("all, a number of accesses, or a number of periods such as 10x") },
            P_PERIOD,
            P_HINTS,
            P_MIN_GHOSTS,
            P_STEAL,
            P_GC,
            P_ONE_SHOT,
            P_TIMELINE,
            P_SEED,
        ],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        context_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };

    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let (cfg, default) = build_manager(args, env, "amp")?;
        let fraction = Sampling::parse_fraction(args.text("sampling")).ok_or_else(|| {
            SpecError(format!(
                "policy `amp`: sampling=`{}` must be a fraction in (0, 1] such as 1, 1/4 or 25%",
                args.text("sampling")
            ))
        })?;
        let mut sampling = Sampling::fraction(fraction);
        if args.bool("adaptive")? {
            sampling.adaptive = true;
            sampling.limit = args.u64("nl")?.max(2) as usize;
        }
        let ema = match args.choice("detect", &["periodic", "continuous"])? {
            "continuous" => Some(args.f64("alpha")?),
            _ => None,
        };
        let history = match args.text("history").trim().to_ascii_lowercase().as_str() {
            "all" => None,
            t => {
                let n = match t.strip_suffix('x') {
                    Some(k) => k.trim().parse::<u64>().ok().map(|k| k.saturating_mul(cfg.period)),
                    None => t.parse::<u64>().ok(),
                };
                match n {
                    Some(n) if n > 0 => Some(n),
                    _ => {
                        return Err(SpecError(format!(
                            "policy `amp`: history=`{}` must be all, a number of accesses, or a number of periods such as 10x",
                            args.text("history")
                        )))
                    }
                }
            }
        };
        let det = RecencyConfig {
            threshold: args.f64("threshold")?,
            sampling,
            min_refs: args.u64("min-refs")?.max(1),
            ema,
            history,
        };
        let mut m = Manager::new(cfg, RecencyDetector::new(det), default, env.capacity);
        m.set_hints(read_hints(args, "amp")?);
        Ok(m)
    }
}

/// R̄ of one access string and every R_i (`None` where undefined), by the definition.
pub fn average_reference_recency(blocks: &[u64]) -> (Option<f64>, Vec<Option<f64>>) {
    let mut list = RecencyList::new();
    let rs: Vec<Option<f64>> =
        blocks.iter().enumerate().map(|(i, &b)| list.access(b, i as u64).map(|r| r.recency())).collect();
    let defined: Vec<f64> = rs.iter().flatten().copied().collect();
    let mean = (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64);
    (mean, rs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// AMP §3.1 Example 1: a pure loop has R̄ = 0.
    #[test]
    fn example_1_pure_loop() {
        let (r, rs) = average_reference_recency(&[1, 2, 3, 1, 2, 3]);
        assert_eq!(r, Some(0.0));
        assert_eq!(rs, vec![None, None, None, Some(0.0), Some(0.0), Some(0.0)]);
    }

    /// AMP §3.1 Example 2: the table of L_i, p_i and R_i, and R̄ = 0.79.
    #[test]
    fn example_2_temporally_clustered() {
        let s = [1, 2, 3, 4, 4, 3, 4, 5, 6, 5, 6];
        // (L_i, p_i) for i = 1..=11 from the paper's table; p_i = None where undefined.
        let table: [(&[u64], Option<usize>); 11] = [
            (&[], None),
            (&[1], None),
            (&[1, 2], None),
            (&[1, 2, 3], None),
            (&[1, 2, 3, 4], Some(3)),
            (&[1, 2, 3, 4], Some(2)),
            (&[1, 2, 4, 3], Some(2)),
            (&[1, 2, 3, 4], None),
            (&[1, 2, 3, 4, 5], None),
            (&[1, 2, 3, 4, 5, 6], Some(4)),
            (&[1, 2, 3, 4, 6, 5], Some(4)),
        ];
        let mut list = RecencyList::new();
        for (i, (&b, (l, p))) in s.iter().zip(table).enumerate() {
            assert_eq!(list.list(), l.to_vec(), "L_{}", i + 1);
            let got = list.access(b, i as u64);
            assert_eq!(got.map(|r| r.pos), p, "p_{}", i + 1);
        }
        let (r, rs) = average_reference_recency(&s);
        let want =
            [None, None, None, None, Some(1.0), Some(2.0 / 3.0), Some(2.0 / 3.0), None, None, Some(0.8), Some(0.8)];
        for (i, (g, w)) in rs.iter().zip(want).enumerate() {
            match (g, w) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "R_{}", i + 1),
                (g, w) => assert_eq!(*g, w, "R_{}", i + 1),
            }
        }
        // The paper rounds to 0.79 (R_6 and R_7 printed as 0.67).
        assert_eq!((r.unwrap() * 100.0).round() / 100.0, 0.79);
    }

    /// AMP §3.1: for [4 2 3 1 2 3], L_6 = {4, 3, 1, 2} and L_7 = {4, 1, 2, 3}.
    #[test]
    fn l6_and_l7_of_the_papers_string() {
        let mut list = RecencyList::new();
        for (i, b) in [4, 2, 3, 1, 2].into_iter().enumerate() {
            list.access(b, i as u64);
        }
        assert_eq!(list.list(), vec![4, 3, 1, 2]);
        let r = list.access(3, 5).unwrap();
        assert_eq!((r.pos, r.len), (1, 4));
        assert_eq!(list.list(), vec![4, 1, 2, 3]);
    }

    #[test]
    fn one_block_list_has_recency_one_half() {
        let (r, rs) = average_reference_recency(&[7, 7]);
        assert_eq!(rs, vec![None, Some(0.5)]);
        assert_eq!(r, Some(0.5));
    }

    fn naive(blocks: &[u64]) -> Vec<Option<(usize, usize)>> {
        let mut l: Vec<u64> = Vec::new();
        blocks
            .iter()
            .map(|&b| {
                let r = l.iter().position(|&x| x == b).map(|p| (p, l.len()));
                l.retain(|&x| x != b);
                l.push(b);
                r
            })
            .collect()
    }

    proptest! {
        /// The tree gives the positions of the definition's O(|L|) list, through renumbering,
        /// expiry-free retains and growth.
        #[test]
        fn matches_the_naive_list(blocks in prop::collection::vec(0u64..300, 1..3000)) {
            let mut list = RecencyList::new();
            let got: Vec<Option<(usize, usize)>> = blocks
                .iter()
                .enumerate()
                .map(|(i, &b)| list.access(b, i as u64).map(|r| (r.pos, r.len)))
                .collect();
            prop_assert_eq!(got, naive(&blocks));
            list.check().map_err(TestCaseError::fail)?;
        }

        #[test]
        fn retain_and_expire_keep_the_order(blocks in prop::collection::vec(0u64..200, 1..1500), keep_mod in 2u64..5, horizon in 1u64..400) {
            let mut list = RecencyList::new();
            for (i, &b) in blocks.iter().enumerate() {
                list.access(b, i as u64);
            }
            let before = list.list();
            list.retain(|k| k % keep_mod != 0);
            let want: Vec<u64> = before.iter().copied().filter(|k| k % keep_mod != 0).collect();
            prop_assert_eq!(list.list(), want.clone());
            let n = blocks.len() as u64;
            list.expire(n.saturating_sub(horizon));
            // Entries last touched within the horizon survive, in order.
            let last: FxHashMap<u64, u64> = blocks.iter().enumerate().map(|(i, &b)| (b, i as u64)).collect();
            let kept: Vec<u64> = want.into_iter().filter(|k| last[k] >= n.saturating_sub(horizon)).collect();
            prop_assert_eq!(list.list(), kept);
            list.check().map_err(TestCaseError::fail)?;
        }
    }

    fn run(blocks: &[u64], cfg: RecencyConfig) -> ContextReport {
        let mut d = RecencyDetector::new(cfg);
        for (t, &b) in blocks.iter().enumerate() {
            d.access(9, b, t as u64);
        }
        d.detect(blocks.len() as u64);
        d.check().unwrap();
        d.report(9).unwrap()
    }

    #[test]
    fn loops_one_shots_and_clusters_are_told_apart() {
        let lp: Vec<u64> = (0..10).flat_map(|_| 0..200u64).collect();
        let r = run(&lp, RecencyConfig::default());
        assert_eq!((r.pattern, r.r_bar), (Pattern::Looping, Some(0.0)));
        assert_eq!(r.loop_size, Some(200.0));
        assert_eq!(r.loop_time.map(|t| t.0), Some(200.0));
        let scan: Vec<u64> = (0..1000).collect();
        assert_eq!(run(&scan, RecencyConfig::default()).pattern, Pattern::OneShot);
        let hot: Vec<u64> = (0..2000u64).map(|i| (i / 10) * 3 + i % 3).collect();
        let r = run(&hot, RecencyConfig::default());
        assert_eq!(r.pattern, Pattern::Other);
        assert!(r.r_bar.unwrap() > 0.9);
    }

    #[test]
    fn adaptive_sampling_halves_and_doubles_q() {
        let cfg = RecencyConfig {
            sampling: Sampling { q0: FULL_Q, adaptive: true, limit: 100 },
            history: Some(2000),
            ..RecencyConfig::default()
        };
        let mut d = RecencyDetector::new(cfg);
        let mut t = 0;
        for b in 0..1000u64 {
            d.access(1, b, t);
            t += 1;
        }
        // 1000 distinct blocks against N_L = 100: Q fell to a few sixteenths, |L| stayed bounded.
        let q = d.q(1).unwrap();
        assert!(q <= FULL_Q / 8, "q = {q}");
        assert!(d.list_len(1) <= 100);
        // A tiny working set of blocks sampled at any Q lets |L| shrink through the horizon,
        // and Q doubles back to Q_0.
        let small: Vec<u64> = (1_000_000u64..).filter(|&k| block_hash(k) < 1 << 20).take(4).collect();
        for _ in 0..40 {
            for &b in &small {
                for _ in 0..200 {
                    d.access(1, b, t);
                    t += 1;
                }
            }
            d.detect(t);
        }
        assert_eq!(d.q(1), Some(FULL_Q));
        d.check().unwrap();
    }

    #[test]
    fn continuous_detection_switches_within_a_period() {
        let cfg = RecencyConfig { ema: Some(0.05), min_refs: 8, ..RecencyConfig::default() };
        let mut d = RecencyDetector::new(cfg);
        let mut t = 0;
        let mut changes = Vec::new();
        for _ in 0..5 {
            for b in 0..50u64 {
                if let Some(p) = d.access(3, b, t) {
                    changes.push(p);
                }
                t += 1;
            }
        }
        for i in 0..2000u64 {
            if let Some(p) = d.access(3, 1000 + i / 20, t) {
                changes.push(p);
            }
            t += 1;
        }
        assert_eq!(changes, vec![Pattern::Looping, Pattern::Other]);
    }
}
