//! CACHEUS (Rodriguez et al., "Learning Cache Replacement with CACHEUS", FAST 2021, §4 SR-LRU and CR-LFU, §5 adaptive learning rate, Algorithm 1).
//! Deviation: rules the paper leaves open follow the authors' code (sylab/cacheus cacheus.py); weights are f64 (theirs float32); no `variant=libcachesim` (see docs/policies/cacheus.md).
//!
//! Two experts name a victim and one is drawn with the probability of its weight, as in LeCaR;
//! the victim's key goes to the history (N/2 keys) of the expert that chose it, an agreed victim
//! to none. A miss on a key in an expert's history multiplies that expert's weight by e^(-λ).
//!
//! SR-LRU (§4.1): the cache is split into R (reused blocks) and SR (blocks seen once, plus
//! blocks demoted from R). Misses enter SR's MRU end, a hit in SR promotes to R, R's overflow is
//! demoted to SR's MRU end, and SR-LRU's victim is SR's LRU end. SR grows when a block that
//! was new when the LRU expert evicted it comes back from its history (a scan went too deep),
//! R grows when a demoted block is hit in SR; each step is the ratio of the two counts.
//! CR-LFU (§4.2): least frequent first, ties to the MOST recently used block, so a churning
//! working set keeps its older members.
//! Adaptive λ (§5): every N requests the hit rate of the period is compared with the last one;
//! λ moves in the direction that improved it by |λ·Δλ|, with a random step when nothing moved
//! and a restart at the initial λ after 10 periods without hits or with falling hit rates.
//!
//! The authors' code, followed: λ starts at sqrt(2 ln 2 / N); R starts at 99% of N; until the
//! cache is full blocks fill R first; a key back from a history resumes its count (not count+1).
//!
//! Prefetching (prefetching paper §4): a prefetched block enters as a miss with count 1 and its
//! history entry, if any, is set aside; its first demand applies the regret, SR-LRU's resize
//! and the count then. A prefetched block evicted unused enters no history.

use super::experts::Coin;
use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::ghosts::{GhostList, Ghosts};
use crate::heap::IndexedHeap;
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Expert {
    #[default]
    None,
    Lru,
    Lfu,
}

/// A history entry: who evicted the key, its count then, and whether it was new to SR-LRU.
#[derive(Clone, Copy, Debug, Default)]
struct Hist {
    expert: Expert,
    freq: u64,
    new: bool,
}

/// Where a miss goes while the cache fills (authors' code), decided before any eviction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Back from a history: into R, then R is held under its target.
    Returned,
    /// Into R (the cache is filling and SR is still empty).
    Reused,
    /// Into SR, not counted as new (the cache is filling).
    Filling,
    /// Into SR as a new block.
    New,
}

/// The adaptive learning rate (§5; the authors' rounding to 1/1000).
struct LearningRate {
    rate: f64,
    reset: f64,
    curr: f64,
    prev: f64,
    period: u64,
    hits: u64,
    hitrate_prev: f64,
    zero_count: u32,
    nega_count: u32,
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl LearningRate {
    fn new(period: u64, rate: f64) -> Self {
        LearningRate {
            rate,
            reset: rate.clamp(0.001, 1.0),
            curr: rate,
            prev: 0.0,
            period: period.max(1),
            hits: 0,
            hitrate_prev: 0.0,
            zero_count: 0,
            nega_count: 0,
        }
    }

    /// Called at the start of request number `time` (from 1).
    fn update(&mut self, time: u64, coin: &mut Coin) {
        if !time.is_multiple_of(self.period) {
            return;
        }
        let hitrate = round3(self.hits as f64 / self.period as f64);
        let diff = round3(hitrate - self.hitrate_prev);
        let d_lr = round3(self.curr) - round3(self.prev);
        let product = d_lr * diff;
        if product > 0.0 {
            self.rate = (self.rate + (self.rate * d_lr).abs()).min(1.0);
            self.zero_count = 0;
            self.nega_count = 0;
        } else if product < 0.0 {
            self.rate = (self.rate - (self.rate * d_lr).abs()).max(0.001);
            self.zero_count = 0;
            self.nega_count = 0;
        } else if diff <= 0.0 {
            if hitrate <= 0.0 && diff == 0.0 {
                self.zero_count += 1;
            }
            if diff < 0.0 {
                self.nega_count += 1;
                self.zero_count += 1;
            }
            if self.zero_count >= 10 {
                self.rate = self.reset;
                self.zero_count = 0;
            } else if diff < 0.0 {
                if self.nega_count >= 10 {
                    self.rate = self.reset;
                    self.nega_count = 0;
                } else if self.rate >= 1.0 {
                    self.rate = 0.9;
                } else if self.rate <= 0.001 {
                    self.rate = 0.005;
                } else if coin.below(0.5) {
                    self.rate = (self.rate * 1.25).min(1.0);
                } else {
                    self.rate = (self.rate * 0.75).max(0.001);
                }
            }
        }
        self.prev = self.curr;
        self.curr = self.rate;
        self.hitrate_prev = hitrate;
        self.hits = 0;
    }
}

pub struct Cacheus {
    capacity: usize,
    links: Links,
    /// R, front = most recently used.
    reused: List,
    /// SR, front = most recently used; SR-LRU's victim is its back.
    scan: List,
    in_scan: FrameVec<bool>,
    demoted: FrameVec<bool>,
    new: FrameVec<bool>,
    /// Min-heap on (count, newest first, key): CR-LFU's victim is the top.
    lfu: IndexedHeap<(u64, u64, u64)>,
    freq: FrameVec<u64>,
    last: FrameVec<u64>,
    keys: FrameVec<u64>,
    ghosts: Ghosts<Hist>,
    lru_hist: GhostList,
    lfu_hist: GhostList,
    hist_cap: usize,
    /// R's and SR's targets (authors' s_limit and q_limit); they sum to the capacity.
    r_limit: usize,
    sr_limit: usize,
    /// Demoted blocks resident in SR, and new blocks in the LRU expert's history.
    dem_count: u64,
    new_count: u64,
    w_lru: f64,
    w_lfu: f64,
    lr: LearningRate,
    adapt: bool,
    coin: Coin,
    now: u64,
    incoming: Hist,
    place: Place,
    /// History entries of prefetched blocks, applied at their first demand.
    deferred: FrameVec<Hist>,
    chosen: Option<(Frame, Expert)>,
}

impl Cacheus {
    pub(crate) fn new(capacity: usize, hist_cap: usize, lru_weight: f64, lr: Option<f64>, coin: Coin) -> Self {
        let n = capacity.max(1);
        let r0 = (0.01 * n as f64 + 0.5) as usize;
        let sr_limit = r0.max(1).min(n);
        // sqrt(2 ln 2 / N) passes 1, the bound every update keeps, only for N = 1.
        let rate = lr.unwrap_or_else(|| (2.0 * std::f64::consts::LN_2 / n as f64).sqrt().min(1.0));
        Cacheus {
            capacity: n,
            links: Links::with_nodes(capacity),
            reused: List::new(),
            scan: List::new(),
            in_scan: FrameVec::filled(false, capacity),
            demoted: FrameVec::filled(false, capacity),
            new: FrameVec::filled(false, capacity),
            lfu: IndexedHeap::with_nodes(capacity),
            freq: FrameVec::filled(0, capacity),
            last: FrameVec::filled(0, capacity),
            keys: FrameVec::filled(0, capacity),
            ghosts: Ghosts::with_capacity(2 * hist_cap + 2),
            lru_hist: GhostList::new(),
            lfu_hist: GhostList::new(),
            hist_cap,
            r_limit: n - sr_limit,
            sr_limit,
            dem_count: 0,
            new_count: 0,
            w_lru: lru_weight,
            w_lfu: 1.0 - lru_weight,
            lr: LearningRate::new(n as u64, rate),
            adapt: lr.is_none(),
            coin,
            now: 0,
            incoming: Hist::default(),
            place: Place::New,
            deferred: FrameVec::filled(Hist::default(), capacity),
            chosen: None,
        }
    }

    pub fn lru_weight(&self) -> f64 {
        self.w_lru
    }

    pub fn learning_rate(&self) -> f64 {
        self.lr.rate
    }

    /// `R: MRU..LRU | SR: MRU..LRU (d = demoted) | LFU: key:count in victim order | H_LRU | H_LFU | limits | w_lru`.
    pub fn dump(&self) -> String {
        let list = |l: &List| {
            self.links
                .iter(l)
                .map(|f| {
                    let d = if self.demoted[f as usize] { "d" } else { "" };
                    format!("{}{d}", self.keys[f as usize])
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut lfu: Vec<((u64, u64, u64), Frame)> = self.lfu.nodes().map(|f| (self.lfu.key(f), f)).collect();
        lfu.sort();
        let lfu: Vec<String> = lfu.iter().map(|&((c, _, _), f)| format!("{}:{c}", self.keys[f as usize])).collect();
        let hist = |l: &GhostList| self.ghosts.keys_of(l).iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" ");
        format!(
            "R: {} | SR: {} | LFU: {} | H_LRU: {} | H_LFU: {} | r={} sr={} | w_lru={:.4}",
            list(&self.reused),
            list(&self.scan),
            lfu.join(" "),
            hist(&self.lru_hist),
            hist(&self.lfu_hist),
            self.r_limit,
            self.sr_limit,
            self.w_lru
        )
    }

    /// A demand access begins: the learning rate's period ends every N requests.
    #[inline]
    fn tick(&mut self, time: u64) {
        self.now = time;
        if self.adapt {
            self.lr.update(time + 1, &mut self.coin);
        }
    }

    /// Algorithm 1's weight update on a history hit, held in [0.01, 0.99] as the authors do.
    fn regret(&mut self, expert: Expert) {
        let loss = (-self.lr.rate).exp();
        match expert {
            Expert::Lru => self.w_lru *= loss,
            Expert::Lfu => self.w_lfu *= loss,
            Expert::None => return,
        }
        let s = self.w_lru + self.w_lfu;
        self.w_lru /= s;
        self.w_lfu = 1.0 - self.w_lru;
        if self.w_lru >= 0.99 {
            (self.w_lru, self.w_lfu) = (0.99, 0.01);
        } else if self.w_lfu >= 0.99 {
            (self.w_lru, self.w_lfu) = (0.01, 0.99);
        }
    }

    /// SR-LRU's resize (§4.1): a demoted block hit in SR grows R; a new block back from the
    /// LRU expert's history grows SR.
    fn resize(&mut self, grow_reused: bool) {
        let n = self.capacity;
        if n < 2 {
            // One frame: SR keeps it (each target would otherwise reach N - 1 = 0).
            return;
        }
        if grow_reused {
            let step = ((self.new_count as f64 / self.dem_count.max(1) as f64) + 0.5) as usize;
            self.r_limit = (self.r_limit + step.max(1)).min(n.saturating_sub(1));
            self.sr_limit = n - self.r_limit;
        } else {
            let step = ((self.dem_count as f64 / self.new_count.max(1) as f64) + 0.5) as usize;
            self.sr_limit = (self.sr_limit + step.max(1)).min(n.saturating_sub(1));
            self.r_limit = n - self.sr_limit;
        }
    }

    /// Consumes a history entry on a demand: the expert's regret and SR-LRU's resize.
    fn returned(&mut self, h: Hist) {
        if h.expert == Expert::Lru && h.new {
            self.resize(false);
        }
        self.regret(h.expert);
    }

    #[inline]
    fn touch(&mut self, frame: Frame, count: u64) {
        let f = frame as usize;
        self.freq[f] = count;
        self.last[f] = self.now;
        self.lfu.set(frame, (count, u64::MAX - self.now, self.keys[f]));
    }

    fn demote_one(&mut self) {
        if let Some(y) = self.links.pop_back(&mut self.reused) {
            self.links.push_front(&mut self.scan, y);
            self.in_scan[y as usize] = true;
            self.demoted[y as usize] = true;
            self.dem_count += 1;
        }
    }

    /// R may not reach its target: its LRU blocks go to SR as demoted.
    fn limit_reused(&mut self) {
        while !self.reused.is_empty() && self.reused.len() >= self.r_limit {
            self.demote_one();
        }
    }

    fn remember(&mut self, key: u64, h: Hist) {
        if self.hist_cap == 0 {
            return;
        }
        let list = if h.expert == Expert::Lru { &mut self.lru_hist } else { &mut self.lfu_hist };
        if list.len() >= self.hist_cap {
            if let Some((_, old)) = self.ghosts.pop_back(list) {
                if old.expert == Expert::Lru && old.new {
                    self.new_count -= 1;
                }
            }
        }
        self.ghosts.push_front(list, key, h);
        if h.expert == Expert::Lru && h.new {
            self.new_count += 1;
        }
    }
}

impl Policy for Cacheus {
    fn prepare_insert(&mut self, a: &Access, origin: Origin) {
        if origin == Origin::Demand {
            self.tick(a.time);
        } else {
            self.now = a.time;
        }
        self.incoming = Hist::default();
        if let Some(node) = self.ghosts.find(a.key) {
            let h = self.ghosts.data(node);
            let list = if h.expert == Expert::Lru { &mut self.lru_hist } else { &mut self.lfu_hist };
            self.ghosts.remove(list, node);
            if h.expert == Expert::Lru && h.new {
                self.new_count -= 1;
            }
            self.incoming = h;
            if origin == Origin::Demand {
                self.returned(h);
            }
        }
        let (r, sr) = (self.reused.len(), self.scan.len());
        self.place = if self.incoming.expert != Expert::None && origin == Origin::Demand {
            Place::Returned
        } else if r < self.r_limit && sr == 0 {
            Place::Reused
        } else if r + sr < self.capacity && sr < self.sr_limit {
            Place::Filling
        } else {
            Place::New
        };
    }

    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let f = frame as usize;
        self.keys[f] = a.key;
        self.demoted[f] = false;
        let h = std::mem::take(&mut self.incoming);
        self.deferred[f] = Hist::default();
        let mut count = 1;
        if origin == Origin::Prefetch {
            self.deferred[f] = h;
        } else if h.expert != Expert::None {
            count = h.freq;
        }
        self.new[f] = self.place == Place::New;
        if matches!(self.place, Place::Returned | Place::Reused) {
            self.links.push_front(&mut self.reused, frame);
            self.in_scan[f] = false;
        } else {
            self.links.push_front(&mut self.scan, frame);
            self.in_scan[f] = true;
        }
        self.touch(frame, count);
        if matches!(self.place, Place::Returned | Place::New) {
            self.limit_reused();
        }
    }

    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.tick(a.time);
        self.lr.hits += 1;
        let f = frame as usize;
        let c = self.freq[f] + 1;
        self.touch(frame, c);
        if !self.in_scan[f] {
            self.links.move_to_front(&mut self.reused, frame);
            return;
        }
        if self.demoted[f] {
            self.resize(true);
            self.demoted[f] = false;
            self.dem_count -= 1;
        }
        self.links.remove(&mut self.scan, frame);
        if self.reused.len() >= self.r_limit {
            self.demote_one();
        }
        self.links.push_front(&mut self.reused, frame);
        self.in_scan[f] = false;
    }

    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.tick(a.time);
        self.lr.hits += 1;
        let f = frame as usize;
        let l = if self.in_scan[f] { &mut self.scan } else { &mut self.reused };
        self.links.move_to_front(l, frame);
        let h = std::mem::take(&mut self.deferred[f]);
        if h.expert != Expert::None {
            self.returned(h);
            self.touch(frame, h.freq);
        }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let by_lru =
            back_unpinned(&self.links, &self.scan, pins).or_else(|| back_unpinned(&self.links, &self.reused, pins))?;
        let top = self.lfu.peek()?;
        let by_lfu = if pins.pinned(top) { self.lfu.min_unskipped(|f| pins.pinned(f))? } else { top };
        // The authors draw at every eviction, agreed or not.
        let lru_drawn = self.coin.below(self.w_lru);
        let (frame, expert) = if by_lru == by_lfu {
            (by_lru, Expert::None)
        } else if lru_drawn {
            (by_lru, Expert::Lru)
        } else {
            (by_lfu, Expert::Lfu)
        };
        self.chosen = Some((frame, expert));
        Some(frame)
    }

    fn remove(&mut self, frame: Frame, key: u64, why: Removal) {
        let f = frame as usize;
        let l = if self.in_scan[f] { &mut self.scan } else { &mut self.reused };
        self.links.remove(l, frame);
        self.lfu.remove(frame);
        if self.demoted[f] {
            self.demoted[f] = false;
            self.dem_count -= 1;
        }
        self.deferred[f] = Hist::default();
        let expert = match self.chosen.take() {
            Some((c, e)) if c == frame => e,
            _ => Expert::None,
        };
        if why == Removal::Evicted && expert != Expert::None {
            let h = Hist { expert, freq: self.freq[f], new: self.new[f] };
            self.remember(key, h);
        }
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.reused)?;
        self.links.check(&self.scan)?;
        self.lfu.check()?;
        self.ghosts.check(&[&self.lru_hist, &self.lfu_hist])?;
        if self.reused.len() + self.scan.len() != resident || self.lfu.len() != resident {
            return Err(format!(
                "Cacheus: R {} + SR {} and LFU {} for {resident} resident",
                self.reused.len(),
                self.scan.len(),
                self.lfu.len()
            ));
        }
        if self.r_limit + self.sr_limit != self.capacity || self.sr_limit == 0 {
            return Err(format!("Cacheus: limits R {} SR {} for {}", self.r_limit, self.sr_limit, self.capacity));
        }
        let demoted = self.links.iter(&self.scan).filter(|&f| self.demoted[f as usize]).count();
        if demoted as u64 != self.dem_count || self.links.iter(&self.reused).any(|f| self.demoted[f as usize]) {
            return Err(format!("Cacheus: {demoted} demoted blocks in SR, counted {}", self.dem_count));
        }
        let new = self.ghosts.nodes_of(&self.lru_hist).filter(|&n| self.ghosts.data(n).new).count();
        if new as u64 != self.new_count {
            return Err(format!("Cacheus: {new} new keys in H_LRU, counted {}", self.new_count));
        }
        if self.lru_hist.len() > self.hist_cap || self.lfu_hist.len() > self.hist_cap {
            return Err(format!(
                "Cacheus: histories {} and {} over {}",
                self.lru_hist.len(),
                self.lfu_hist.len(),
                self.hist_cap
            ));
        }
        if (self.w_lru + self.w_lfu - 1.0).abs() > 1e-9 || !(0.0..=1.0).contains(&self.w_lru) {
            return Err(format!("Cacheus: weights {} + {} do not make 1", self.w_lru, self.w_lfu));
        }
        if !(0.0..=1.0).contains(&self.lr.rate) {
            return Err(format!("Cacheus: learning rate {} outside [0, 1]", self.lr.rate));
        }
        for l in [&self.reused, &self.scan] {
            for f in self.links.iter(l) {
                let in_scan = std::ptr::eq(l, &self.scan);
                if self.in_scan[f as usize] != in_scan {
                    return Err(format!("Cacheus: block {} in the wrong list", self.keys[f as usize]));
                }
                if self.ghosts.find(self.keys[f as usize]).is_some() {
                    return Err(format!("Cacheus: resident block {} is also in a history", self.keys[f as usize]));
                }
            }
        }
        Ok(())
    }

    fn keeps_ghosts(&self) -> bool {
        true
    }

    fn ghost_hit(&self, key: u64) -> bool {
        self.ghosts.find(key).is_some()
    }

    fn ghost_len(&self) -> usize {
        self.ghosts.len()
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("cacheus_lru_weight", self.w_lru));
        out.push(("cacheus_learning_rate", self.lr.rate));
        out.push(("cacheus_sr_limit", self.sr_limit as f64));
    }
}

impl PolicyDef for Cacheus {
    const INFO: PolicyInfo = PolicyInfo {
        name: "cacheus",
        aliases: &[],
        paper: "Rodriguez et al., CACHEUS, FAST 2021, §4 (SR-LRU, CR-LFU) and §5 (adaptive learning rate); authors' code for open details",
        summary: "SR-LRU and CR-LFU experts with histories; regret-weighted random choice with an adaptive learning rate",
        params: &[
            ParamInfo { name: "lru-weight", default: "0.5", doc: "initial weight (probability) of the SR-LRU expert, 0..1", range: Range::Number(0.0, 1.0) },
            ParamInfo { name: "learning-rate", default: "adaptive", doc: "adaptive (§5, starting at sqrt(2 ln 2 / N)) or a fixed λ in (0, 1]", range: Range::Or(&["adaptive"], &Range::Number(1e-9, 1.0)) },
            ParamInfo { name: "history", default: "50%", doc: "entries in each expert's history (the paper: N/2)", range: Range::Share(0.0, 100.0) },
            ParamInfo { name: "seed", default: "run", doc: "seed of the expert draws and the learning rate's random steps; `run` uses --seed", range: Range::Seed },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let lru_weight = args.f64("lru-weight")?;
        let lr = if args.text("learning-rate") == "adaptive" { None } else { Some(args.f64("learning-rate")?) };
        let hist_cap = args.blocks("history", env)? as usize;
        Ok(Cacheus::new(env.capacity, hist_cap, lru_weight, lr, Coin::own(args.seed(env.seed)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::steps::Steps;

    /// A fixed λ = ln 2 and a coin that (nearly) always says LRU (w = 1) or LFU (w = 0).
    fn cacheus(cap: usize, w: f64) -> Cacheus {
        Cacheus::new(cap, cap / 2, w, Some(std::f64::consts::LN_2), Coin::own(1))
    }

    #[test]
    fn sr_lru_demotes_promotes_and_resizes() {
        // N = 4: SR's target is max(1, round(1% of 4)) = 1, R's 3. The cache fills R first.
        let mut s = Steps::new(cacheus(4, 1.0), 4);
        assert_eq!(s.run(&[1, 2, 3, 4, 5]), "MMMMM");
        // 5: both experts name 4 (SR's LRU end; the newest of the count-1 blocks): no history.
        // 5 enters SR as new and R, at its target, demotes 1.
        assert_eq!(
            s.policy().dump(),
            "R: 3 2 | SR: 1d 5 | LFU: 5:1 3:1 2:1 1:1 | H_LRU:  | H_LFU:  | r=3 sr=1 | w_lru=1.0000"
        );
        // 5 is hit in SR: promoted to R. 6: SR-LRU names 1, CR-LFU 3; the coin says LRU.
        assert_eq!(s.run(&[5, 6]), "HM");
        assert_eq!(
            s.policy().dump(),
            "R: 5 3 | SR: 2d 6 | LFU: 6:1 3:1 2:1 5:2 | H_LRU: 1 | H_LFU:  | r=3 sr=1 | w_lru=1.0000"
        );
        // 7: both name 6. 8: LRU evicts 2; 9: LRU evicts the new 7, and H_LRU (N/2 = 2) drops 1.
        assert_eq!(s.run(&[7, 8, 9]), "MMM");
        assert_eq!(
            s.policy().dump(),
            "R: 5 3 | SR: 9 8 | LFU: 9:1 8:1 3:1 5:2 | H_LRU: 7 2 | H_LFU:  | r=3 sr=1 | w_lru=1.0000"
        );
        // 7 returns while new: SR grows by max(1, round(0 demoted / 1 new)) = 1; the LRU
        // expert's regret sends w_lru to 1, held at 0.99. LRU evicts 8 (new); 7 goes to R
        // with its count, and R, over its new target 2, demotes 3 and 5.
        assert_eq!(s.demand(7), 'M');
        assert_eq!(
            s.policy().dump(),
            "R: 7 | SR: 5d 3d 9 | LFU: 7:1 9:1 3:1 5:2 | H_LRU: 8 2 | H_LFU:  | r=2 sr=2 | w_lru=0.9900"
        );
        // A hit on the demoted 3: R grows by max(1, round(1 new / 2 demoted)) = 1.
        assert_eq!(s.demand(3), 'H');
        assert_eq!(
            s.policy().dump(),
            "R: 3 7 | SR: 5d 9 | LFU: 7:1 9:1 3:2 5:2 | H_LRU: 8 2 | H_LFU:  | r=3 sr=1 | w_lru=0.9900"
        );
    }

    #[test]
    fn cr_lfu_evicts_the_newest_of_the_least_frequent() {
        let mut s = Steps::new(cacheus(4, 0.0), 4);
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 5, 6]), "MMMMMHM");
        // 6: SR-LRU names 1, CR-LFU the newest count-1 block 3 (not the oldest, 1); LFU's.
        assert_eq!(
            s.policy().dump(),
            "R: 5 2 | SR: 6 1d | LFU: 6:1 2:1 1:1 5:2 | H_LRU:  | H_LFU: 3 | r=3 sr=1 | w_lru=0.0000"
        );
        // 3 returns: w_lfu = 1 → 0.99; LFU evicts 6; 3 enters R, which demotes 2.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(
            s.policy().dump(),
            "R: 3 5 | SR: 2d 1d | LFU: 3:1 2:1 1:1 5:2 | H_LRU:  | H_LFU: 6 | r=3 sr=1 | w_lru=0.0100"
        );
    }

    #[test]
    fn prefetched_blocks_defer_their_history_to_the_first_demand() {
        let mut s = Steps::new(cacheus(4, 0.0), 4);
        assert_eq!(s.run(&[1, 2, 3, 4, 5, 5, 6]), "MMMMMHM");
        // Prefetching 3 takes it out of H_LFU with the weights untouched. It is a miss as any
        // other: SR-LRU names 1, CR-LFU the newest count-1 block 6; LFU evicts 6.
        s.prefetch(3);
        assert_eq!(
            s.policy().dump(),
            "R: 5 2 | SR: 3 1d | LFU: 3:1 2:1 1:1 5:2 | H_LRU:  | H_LFU: 6 | r=3 sr=1 | w_lru=0.0000"
        );
        // The first demand applies LFU's regret.
        assert_eq!(s.demand(3), 'H');
        assert!(s.policy().dump().ends_with("w_lru=0.0100"), "{}", s.policy().dump());
    }

    #[test]
    fn an_unused_prefetched_victim_enters_no_history() {
        // N = 2: R's target 1, SR's 1.
        let mut s = Steps::new(cacheus(2, 1.0), 2);
        assert_eq!(s.demand(1), 'M');
        s.prefetch(2);
        // 3: SR-LRU names the prefetched 2, CR-LFU 1; LRU's: 2 leaves no history.
        assert_eq!(s.demand(3), 'M');
        assert_eq!(s.policy().dump(), "R:  | SR: 1d 3 | LFU: 3:1 1:1 | H_LRU:  | H_LFU:  | r=1 sr=1 | w_lru=1.0000");
        assert_eq!(s.demand(2), 'M');
        assert!(s.policy().dump().ends_with("w_lru=1.0000"));
    }

    #[test]
    fn learning_rate_climbs_the_hit_rate_gradient() {
        let mut c = Coin::own(1);
        let mut lr = LearningRate::new(10, 0.1);
        // First period: hit rate 0 → 0.5 with λ 0 → 0.1: same sign, λ += |λ·Δλ| = 0.11.
        lr.hits = 5;
        lr.update(10, &mut c);
        assert!((lr.rate - 0.11).abs() < 1e-12, "{}", lr.rate);
        // Second: 0.5 → 0.3 while λ rose by 0.01: opposite signs, λ -= |λ·Δλ|.
        lr.hits = 3;
        lr.update(20, &mut c);
        assert!((lr.rate - (0.11 - 0.11 * 0.01)).abs() < 1e-12, "{}", lr.rate);
        // Third: the hit rate stays: λ stays. Not a period end: nothing happens.
        lr.hits = 3;
        lr.update(25, &mut c);
        lr.update(30, &mut c);
        assert!((lr.rate - 0.1089).abs() < 1e-12, "{}", lr.rate);
        // Ten periods without a hit restart λ at its initial value.
        for t in 4..=14 {
            lr.update(10 * t, &mut c);
        }
        assert!((lr.rate - 0.1).abs() < 1e-12, "{}", lr.rate);
    }
}
