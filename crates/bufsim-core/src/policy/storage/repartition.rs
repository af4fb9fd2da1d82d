//! Storage-aware caching's repartitioning algorithm (Forney, Arpaci-Dusseau, Arpaci-Dusseau,
//! FAST '02, §3.1 and Figure 1). Reading of the paper: a trend is the change of a partition's
//! relative wait time from one epoch to the next, "constant" within a tolerance (docs/storage-aware.md).
//!
//! Over an epoch of `W` completed device requests it sums the time the cache waited for each
//! device (its *wait time*, the cumulative delay). At the end of the epoch:
//!
//! 1. mean wait time over the devices;
//! 2. relative wait time = wait / mean;
//! 3. page consumers: partitions whose relative wait time is above the threshold `T`, each in
//!    one of four states (Figure 1): cool (at or below `T`: nothing), warming (above `T` and
//!    increasing: `I` pages, doubling for every further warming epoch), cooling (above `T` and
//!    decreasing: nothing), warm (above `T` and constant: `I` pages);
//! 4. page suppliers: partitions with below-average wait times, each giving
//!    `IRWT_j / sum of suppliers' IRWT x pages consumed`, with `IRWT = 1 - relative wait time`.
//!
//! Target sizes always sum to the cache size: pages only move from suppliers to consumers.

/// The four states of Figure 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitState {
    /// Relative wait time at or below the threshold: the normal regime.
    Cool,
    /// Above the threshold and increasing: grow by `I`, doubling while it stays warming.
    Warming,
    /// Above the threshold and decreasing: leave the size alone.
    Cooling,
    /// Above the threshold and constant: grow by `I`.
    Warm,
}

impl WaitState {
    pub fn name(self) -> &'static str {
        match self {
            WaitState::Cool => "cool",
            WaitState::Warming => "warming",
            WaitState::Cooling => "cooling",
            WaitState::Warm => "warm",
        }
    }
}

/// The three parameters of §3.1, and how close two relative wait times must be to count as
/// constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepartitionConfig {
    /// `W`: device requests per epoch (the paper's 1000).
    pub window: u64,
    /// `T`: a partition is a page consumer when its wait time exceeds `T` times the mean (5).
    pub threshold: f64,
    /// `I`: the base correction in blocks (the paper's 0.2% of the cache).
    pub base: usize,
    /// Relative change below which a wait time counts as constant (the paper gives none).
    pub tolerance: f64,
}

/// The outcome of one epoch, for tests, timelines and dumps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Epoch {
    /// Wait time of each partition's device over the epoch, ns.
    pub wait_ns: Vec<f64>,
    pub relative: Vec<f64>,
    pub states: Vec<WaitState>,
    /// Blocks each partition gained (consumers, positive) or gave (suppliers, negative).
    pub moved: Vec<i64>,
}

/// The repartitioning state of every partition.
#[derive(Clone, Debug)]
pub struct Repartitioner {
    cfg: RepartitionConfig,
    /// Wait time summed over the current epoch, per partition (ns).
    wait: Vec<f64>,
    requests: u64,
    /// Relative wait time of the previous epoch (`None` before a partition's first epoch).
    previous: Vec<Option<f64>>,
    state: Vec<WaitState>,
    /// Consecutive warming epochs so far, minus one (the doubling exponent).
    streak: Vec<u32>,
    epochs: u64,
    last: Epoch,
    // Scratch, reused every epoch so an epoch allocates nothing once sized.
    want: Vec<usize>,
    give: Vec<usize>,
    got: Vec<usize>,
}

/// The largest doubling of the base correction (2^20 x I is far beyond any cache).
const MAX_STREAK: u32 = 20;

impl Repartitioner {
    pub fn new(cfg: RepartitionConfig, partitions: usize) -> Self {
        let mut r = Repartitioner {
            cfg,
            wait: Vec::new(),
            requests: 0,
            previous: Vec::new(),
            state: Vec::new(),
            streak: Vec::new(),
            epochs: 0,
            last: Epoch::default(),
            want: Vec::new(),
            give: Vec::new(),
            got: Vec::new(),
        };
        for _ in 0..partitions {
            r.add_partition();
        }
        r
    }

    pub fn config(&self) -> &RepartitionConfig {
        &self.cfg
    }

    pub fn add_partition(&mut self) {
        self.wait.push(0.0);
        self.previous.push(None);
        self.state.push(WaitState::Cool);
        self.streak.push(0);
    }

    pub fn partitions(&self) -> usize {
        self.wait.len()
    }

    /// Counts one completed device request of partition `p` that the cache waited `wait_ns`
    /// for; true when it ends the epoch (call [`Repartitioner::repartition`] then).
    #[inline]
    pub fn record(&mut self, p: usize, wait_ns: f64) -> bool {
        self.wait[p] += wait_ns;
        self.requests += 1;
        self.requests >= self.cfg.window
    }

    /// Wait time of partition `p` in the epoch so far, ns.
    pub fn epoch_wait(&self, p: usize) -> f64 {
        self.wait[p]
    }

    pub fn state(&self, p: usize) -> WaitState {
        self.state[p]
    }

    pub fn epochs(&self) -> u64 {
        self.epochs
    }

    /// The last epoch's figures.
    pub fn last(&self) -> &Epoch {
        &self.last
    }

    /// Ends the epoch: classifies every partition and moves target blocks from suppliers to
    /// consumers in `targets` (one per partition; their sum does not change). Returns the
    /// blocks moved.
    pub fn repartition(&mut self, targets: &mut [usize]) -> usize {
        let n = self.wait.len();
        debug_assert_eq!(targets.len(), n);
        self.epochs += 1;
        self.requests = 0;
        let last = &mut self.last;
        last.wait_ns.clear();
        last.wait_ns.extend_from_slice(&self.wait);
        last.relative.clear();
        last.states.clear();
        last.moved.clear();
        last.moved.resize(n, 0);
        self.wait.iter_mut().for_each(|w| *w = 0.0);
        // §3.1 step 1: the mean wait time across devices.
        let mean = last.wait_ns.iter().sum::<f64>() / n.max(1) as f64;
        if mean.is_nan() || mean <= 0.0 {
            // Nothing waited on: no relative wait times, and no trend to carry over.
            last.relative.resize(n, 0.0);
            for p in 0..n {
                self.state[p] = WaitState::Cool;
                self.streak[p] = 0;
                self.previous[p] = Some(0.0);
            }
            last.states.extend_from_slice(&self.state);
            return 0;
        }
        // Step 2: relative wait times; step 3: the consumers and what each wants.
        self.want.clear();
        self.want.resize(n, 0);
        let t = self.cfg.threshold;
        for p in 0..n {
            let rel = last.wait_ns[p] / mean;
            last.relative.push(rel);
            let state = if rel <= t {
                WaitState::Cool
            } else {
                match self.previous[p] {
                    // Crossing the threshold from below is an increase.
                    None => WaitState::Warming,
                    Some(prev) if prev <= t || rel > prev * (1.0 + self.cfg.tolerance) => WaitState::Warming,
                    Some(prev) if rel < prev * (1.0 - self.cfg.tolerance) => WaitState::Cooling,
                    Some(_) => WaitState::Warm,
                }
            };
            // "A reclassification of a partition as warming from any other state restarts
            // exponential correction."
            if state == WaitState::Warming {
                self.streak[p] =
                    if self.state[p] == WaitState::Warming { (self.streak[p] + 1).min(MAX_STREAK) } else { 0 };
            } else {
                self.streak[p] = 0;
            }
            self.want[p] = match state {
                WaitState::Warming => self.cfg.base.saturating_mul(1usize << self.streak[p]),
                WaitState::Warm => self.cfg.base,
                WaitState::Cool | WaitState::Cooling => 0,
            };
            self.state[p] = state;
            self.previous[p] = Some(rel);
        }
        last.states.extend_from_slice(&self.state);
        let wanted: usize = self.want.iter().fold(0usize, |a, &w| a.saturating_add(w));
        if wanted == 0 {
            // "If no page consumers are found, repartitioning stops."
            return 0;
        }
        // Step 4: suppliers are the partitions with below-average wait times, weighted by
        // their inverse relative wait time.
        let irwt = |p: usize, rel: &[f64]| if rel[p] < 1.0 { 1.0 - rel[p] } else { 0.0 };
        let available: usize = (0..n).filter(|&p| irwt(p, &last.relative) > 0.0).map(|p| targets[p]).sum();
        let grant = wanted.min(available);
        if grant == 0 {
            return 0;
        }
        self.give.clear();
        self.give.resize(n, 0);
        apportion(grant, |p| irwt(p, &last.relative), |p| targets[p], &mut self.give);
        // Consumers share what the suppliers gave, in proportion to what they asked.
        let supplied: usize = self.give.iter().sum();
        self.got.clear();
        self.got.resize(n, 0);
        let want = &self.want;
        apportion(supplied, |p| want[p] as f64, |p| want[p], &mut self.got);
        for (p, t) in targets.iter_mut().enumerate().take(n) {
            *t = *t + self.got[p] - self.give[p];
            last.moved[p] = self.got[p] as i64 - self.give[p] as i64;
        }
        supplied
    }
}

/// Splits `total` units among partitions in proportion to `weight(p)`, none above `cap(p)`,
/// into `out`: rounds of whole shares until every share rounds down to nothing, then one unit
/// each to the largest shares (ties to the lowest index). Exact: `out` sums to
/// `min(total, sum of caps over positive weights)`. At most 256 partitions.
pub(crate) fn apportion(total: usize, weight: impl Fn(usize) -> f64, cap: impl Fn(usize) -> usize, out: &mut [usize]) {
    let n = out.len();
    assert!(n <= 256, "at most 256 partitions");
    out.iter_mut().for_each(|x| *x = 0);
    let capacity = (0..n).filter(|&p| weight(p) > 0.0).map(&cap).fold(0usize, |a, c| a.saturating_add(c));
    let mut left = total.min(capacity);
    let open = |p: usize, out: &[usize]| weight(p) > 0.0 && out[p] < cap(p);
    while left > 0 {
        let sum: f64 = (0..n).filter(|&p| open(p, out)).map(&weight).sum();
        if sum.is_nan() || sum <= 0.0 {
            break;
        }
        let mut placed = 0usize;
        for p in 0..n {
            if open(p, out) {
                let whole = ((left as f64 * weight(p) / sum).floor() as usize).min(cap(p) - out[p]);
                out[p] += whole;
                placed += whole;
            }
        }
        if placed > 0 {
            left -= placed;
            continue;
        }
        // Every share is below one unit, so fewer units are left than open partitions: one
        // each to the largest shares.
        let mut bumped = [0u64; 4];
        while left > 0 {
            let pick = (0..n).filter(|&p| open(p, out) && bumped[p / 64] & (1 << (p % 64)) == 0).fold(
                None::<usize>,
                |best, p| match best {
                    Some(b) if weight(b) >= weight(p) => Some(b),
                    _ => Some(p),
                },
            );
            let Some(p) = pick else { break };
            bumped[p / 64] |= 1 << (p % 64);
            out[p] += 1;
            left -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RepartitionConfig {
        RepartitionConfig { window: 4, threshold: 5.0, base: 10, tolerance: 0.01 }
    }

    /// Feeds one epoch of per-partition wait times (ms), one request each padded to the window.
    fn epoch(r: &mut Repartitioner, waits_ms: &[f64], targets: &mut [usize]) -> usize {
        let w = r.config().window as usize;
        assert!(waits_ms.len() <= w);
        let mut ended = false;
        for (p, &ms) in waits_ms.iter().enumerate() {
            ended = r.record(p, ms * 1e6);
        }
        for _ in waits_ms.len()..w {
            ended = r.record(0, 0.0);
        }
        assert!(ended);
        r.repartition(targets)
    }

    #[test]
    fn cool_partitions_below_the_threshold_change_nothing() {
        let mut r = Repartitioner::new(cfg(), 4);
        let mut t = [100, 100, 100, 100];
        // Relative waits 0.4, 0.8, 1.2, 1.6: all at or below T = 5.
        assert_eq!(epoch(&mut r, &[1.0, 2.0, 3.0, 4.0], &mut t), 0);
        assert_eq!(t, [100; 4]);
        assert!(r.last().states.iter().all(|&s| s == WaitState::Cool));
        assert_eq!(r.last().relative, vec![0.4, 0.8, 1.2, 1.6]);
    }

    #[test]
    fn warming_grows_exponentially_cooling_holds_warm_adds_the_base() {
        // 8 partitions: partition 0's device is slow. Relative wait = 8w / (w + 7) for a wait
        // of w against 1 elsewhere.
        let mut r = Repartitioner::new(RepartitionConfig { window: 8, ..cfg() }, 8);
        let mut t = [100usize; 8];
        let waits = |w: f64| [w, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        // w = 10: rel 4.71 <= 5, cool.
        epoch(&mut r, &waits(10.0), &mut t);
        assert_eq!(r.state(0), WaitState::Cool);
        // w = 20: rel 5.93 > 5, crossing from below: warming, +I = 10.
        assert_eq!(epoch(&mut r, &waits(20.0), &mut t), 10);
        assert_eq!((r.state(0), t[0]), (WaitState::Warming, 110));
        // w = 40: rel 6.98, increasing: warming again, +2I.
        assert_eq!(epoch(&mut r, &waits(40.0), &mut t), 20);
        assert_eq!(t[0], 130);
        // w = 80: +4I.
        assert_eq!(epoch(&mut r, &waits(80.0), &mut t), 40);
        assert_eq!(t[0], 170);
        // w = 40: decreasing (6.98 < 7.51): cooling, no change.
        assert_eq!(epoch(&mut r, &waits(40.0), &mut t), 0);
        assert_eq!((r.state(0), t[0]), (WaitState::Cooling, 170));
        // The same wait again: constant: warm, +I.
        assert_eq!(epoch(&mut r, &waits(40.0), &mut t), 10);
        assert_eq!((r.state(0), t[0]), (WaitState::Warm, 180));
        // Warming again restarts the correction at I.
        assert_eq!(epoch(&mut r, &waits(60.0), &mut t), 10);
        assert_eq!((r.state(0), t[0]), (WaitState::Warming, 190));
        assert_eq!(t.iter().sum::<usize>(), 800);
    }

    #[test]
    fn suppliers_give_in_proportion_to_inverse_relative_wait_time() {
        let mut r = Repartitioner::new(RepartitionConfig { base: 60, ..cfg() }, 4);
        let mut t = [1000usize; 4];
        // Waits 0, 2, 4, 34 ms: mean 10; relative 0, 0.2, 0.4, 3.4. With T = 3 partition 3
        // consumes; IRWT 1, 0.8, 0.6 (sum 2.4): suppliers give 25, 20, 15 of 60.
        r.cfg.threshold = 3.0;
        assert_eq!(epoch(&mut r, &[0.0, 2.0, 4.0, 34.0], &mut t), 60);
        assert_eq!(t, [975, 980, 985, 1060]);
        assert_eq!(r.last().moved, vec![-25, -20, -15, 60]);
        // Partitions above average but below T are neither suppliers nor consumers.
        let mut r = Repartitioner::new(RepartitionConfig { base: 60, threshold: 3.0, ..cfg() }, 4);
        let mut t = [1000usize; 4];
        // Waits 1, 1, 14, 24: mean 10; relative 0.1, 0.1, 1.4, 2.4 (<= 3): no consumer.
        assert_eq!(epoch(&mut r, &[1.0, 1.0, 14.0, 24.0], &mut t), 0);
    }

    #[test]
    fn supply_is_capped_by_what_suppliers_hold_and_sizes_keep_their_sum() {
        let mut r = Repartitioner::new(RepartitionConfig { base: 500, threshold: 2.0, ..cfg() }, 3);
        let mut t = [7usize, 3, 990];
        // Partition 2 consumes 500 but the suppliers hold only 10 blocks.
        assert_eq!(epoch(&mut r, &[0.0, 1.0, 99.0], &mut t), 10);
        assert_eq!(t, [0, 0, 1000]);
        // Nothing left to give: no change.
        assert_eq!(epoch(&mut r, &[0.0, 1.0, 199.0], &mut t), 0);
        assert_eq!(t.iter().sum::<usize>(), 1000);
    }

    #[test]
    fn two_consumers_share_a_short_supply_by_what_they_asked() {
        let mut r = Repartitioner::new(RepartitionConfig { base: 30, threshold: 1.5, ..cfg() }, 4);
        let mut t = [10usize, 10, 100, 100];
        // Waits 0, 0, 2, 2 ms: relative 0, 0, 2, 2: both consumers warming (+30 each), the
        // suppliers hold 20: each consumer gets 10.
        assert_eq!(epoch(&mut r, &[0.0, 0.0, 2.0, 2.0], &mut t), 20);
        assert_eq!(t, [0, 0, 110, 110]);
    }

    #[test]
    fn apportion_is_exact() {
        let mut out = [0usize; 3];
        apportion(10, |_| 1.0, |_| 100, &mut out);
        assert_eq!(out, [4, 3, 3]);
        apportion(10, |p| [1.0, 0.0, 3.0][p], |p| [100, 100, 2][p], &mut out);
        assert_eq!(out, [8, 0, 2]);
        apportion(1000, |_| 1.0, |_| 5, &mut out);
        assert_eq!(out, [5, 5, 5]);
    }

    proptest::proptest! {
        /// Whatever the waits: targets keep their sum, only consumers (above T, warming or
        /// warm) grow, only below-average partitions shrink, and nothing moves without a consumer.
        #[test]
        fn targets_keep_their_sum_and_move_only_from_suppliers_to_consumers(
            start in proptest::collection::vec(0usize..500, 2..12),
            epochs in proptest::collection::vec(proptest::collection::vec(0u32..1000, 12), 1..20),
            base in 1usize..200,
            threshold in 1.0f64..6.0,
        ) {
            let n = start.len();
            let total: usize = start.iter().sum();
            let mut r = Repartitioner::new(RepartitionConfig { window: n as u64, threshold, base, tolerance: 0.01 }, n);
            let mut t = start.clone();
            for waits in &epochs {
                let before = t.clone();
                let mut ended = false;
                for (p, &w) in waits.iter().enumerate().take(n) {
                    ended = r.record(p, w as f64);
                }
                proptest::prop_assert!(ended);
                let moved = r.repartition(&mut t);
                proptest::prop_assert_eq!(t.iter().sum::<usize>(), total);
                let e = r.last();
                let gained: i64 = e.moved.iter().filter(|m| **m > 0).sum();
                proptest::prop_assert_eq!(gained as usize, moved);
                for p in 0..n {
                    let d = t[p] as i64 - before[p] as i64;
                    proptest::prop_assert_eq!(d, e.moved[p]);
                    if d > 0 {
                        proptest::prop_assert!(e.relative[p] > threshold);
                        proptest::prop_assert!(matches!(e.states[p], WaitState::Warming | WaitState::Warm));
                    }
                    if d < 0 {
                        proptest::prop_assert!(e.relative[p] < 1.0);
                    }
                }
                if !e.states.iter().any(|s| matches!(s, WaitState::Warming | WaitState::Warm)) {
                    proptest::prop_assert_eq!(moved, 0);
                }
            }
        }
    }
}
