//! DULO, dual locality caching (Jiang, Ding, Chen, Xiang, Zhang, FAST 2005), §3 and Figure 2;
//! `base=linux2q` is the variant of §4.2.2 on the Linux two-list policy.
//! Deviations (docs/policies/dulo.md): young bits come only from re-references, and the bank is
//! sequenced when it holds BANK_MAX blocks; both are what make §2.1's Table 1 come out exactly.
//!
//! The LRU stack is cut into a staging section (the correlation buffer on top, then the
//! sequencing bank) and an evicting section below it (§3.1). New blocks enter the top of the
//! buffer; the buffer's bottom block drops into the bank. When the bank is full its blocks are
//! stamped with the next bank-clock time in the block table, grouped into sequences of blocks
//! adjacent on the disk (§3.3), given H(s) = L + 1/size(s) and merged into the evicting section,
//! which stays sorted by H with the smallest at the bottom (§3.4). Hits only mark blocks young,
//! as CLOCK does; a young block found at the bottom loses the mark and goes back to the top, a
//! block that is not young is the victim, and L becomes the H of its sequence.
//!
//! With `base=linux2q` (§4.2.2) the staging and evicting sections are the inactive list of
//! Linux's two-list policy (DULO §4.2.1): an active list sits above them, a second access to an
//! inactive page (the reference bit, as `linux-2list`) promotes it, refill demotes unreferenced
//! active pages to the top of the staging section, reclaim takes the bottom of the evicting
//! section, and demoted pages are sequenced apart from newly fetched ones ("marking the demoted
//! active pages and sequencing each type of page separately").

use super::queue::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::block_table::BlockTable;
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::{Capabilities, Range};
use crate::spec::SpecError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    Out,
    Buffer,
    Bank,
    Evicting,
    /// The active list of the linux2q base.
    Active,
}

/// The replacement scheme DULO is built on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Base {
    /// §3: one LRU stack run as CLOCK.
    Clock,
    /// §4.2.2: the inactive list of Linux's two lists holds the staging and evicting sections;
    /// refill keeps |active| <= ratio x |inactive|, as `linux-2list` does.
    Linux2Q { ratio: f64 },
}

/// A sequence in the evicting section: its H value, the arrival rank of its most recent block
/// (ties in H keep recency order) and its blocks, lowest disk block at the back (bottom).
#[derive(Clone, Copy)]
struct Seq {
    h: f64,
    recency: u64,
    members: List,
}

pub struct Dulo {
    base: Base,
    bank_max: usize,
    buffer_max: usize,
    max_seq: usize,
    table_limit: usize,
    keep_refills: u32,

    device: FrameVec<u16>,
    block: FrameVec<u64>,
    young: FrameVec<bool>,
    section: FrameVec<Section>,
    seq_of: FrameVec<u32>,
    arrival: FrameVec<u64>,
    /// Frame links: the buffer, the bank, each sequence's members and the active list.
    links: Links,
    buffer: List,
    bank: List,
    /// linux2q: the active list (front = head) and, per frame, the reference bit and whether
    /// the page came down from the active list (sequenced apart from new pages).
    active: List,
    referenced: FrameVec<bool>,
    demoted: FrameVec<bool>,

    seqs: Vec<Seq>,
    free_seqs: Vec<u32>,
    /// Sequence links: the evicting section, front = top, back = bottom (smallest H).
    seq_links: Links,
    evicting: List,
    evicting_blocks: usize,

    /// The inflation value: H of the last evicted sequence.
    l: f64,
    /// The bank clock, ticking once per sequencing.
    clock: u32,
    arrivals: u64,
    tables: Vec<BlockTable>,
    scratch: Vec<Frame>,
    entries: Vec<(u64, u32)>,
    new_seqs: Vec<u32>,

    /// Sequencings done, sequences formed, table reclamations.
    pub refills: u64,
    pub sequences: u64,
    pub reclaims: u64,
}

impl Dulo {
    pub fn new(capacity: usize, bank: usize, buffer: usize, max_seq: usize, table_limit: usize) -> Self {
        Dulo {
            base: Base::Clock,
            bank_max: bank.max(1),
            buffer_max: buffer,
            max_seq: max_seq.max(1),
            table_limit,
            // Resident blocks were sequenced within about one turnover of the cache; keep the
            // history of two before reclaiming.
            keep_refills: (2 * capacity / bank.max(1) + 2).min(u32::MAX as usize) as u32,
            device: FrameVec::filled(0, capacity),
            block: FrameVec::filled(0, capacity),
            young: FrameVec::filled(false, capacity),
            section: FrameVec::filled(Section::Out, capacity),
            seq_of: FrameVec::filled(u32::MAX, capacity),
            arrival: FrameVec::filled(0, capacity),
            links: Links::with_nodes(capacity),
            buffer: List::new(),
            bank: List::new(),
            active: List::new(),
            referenced: FrameVec::filled(false, capacity),
            demoted: FrameVec::filled(false, capacity),
            seqs: Vec::new(),
            free_seqs: Vec::new(),
            seq_links: Links::default(),
            evicting: List::new(),
            evicting_blocks: 0,
            l: 0.0,
            clock: 0,
            arrivals: 0,
            tables: Vec::new(),
            scratch: Vec::new(),
            entries: Vec::new(),
            new_seqs: Vec::new(),
            refills: 0,
            sequences: 0,
            reclaims: 0,
        }
    }

    /// The same scheme on another base (§4.2.2 for [`Base::Linux2Q`]).
    pub fn with_base(mut self, base: Base) -> Self {
        self.base = base;
        self
    }

    fn inactive_len(&self) -> usize {
        self.buffer.len() + self.bank.len() + self.evicting_blocks
    }

    /// Takes a frame out of the inactive list's sections (staging or evicting) without
    /// evicting it: the page is promoted, or removed.
    fn leave_inactive(&mut self, f: Frame) {
        match self.section[f as usize] {
            Section::Buffer => self.links.remove(&mut self.buffer, f),
            Section::Bank => self.links.remove(&mut self.bank, f),
            Section::Evicting => self.leave_sequence(f),
            Section::Active | Section::Out => unreachable!("frame {f} is not in the inactive list"),
        }
    }

    /// linux2q refill_inactive (as `linux-2list`): while the active list is too long, its tail
    /// goes down to the top of the staging section unless referenced (second chance).
    fn refill_inactive(&mut self, ratio: f64) {
        let mut budget = 2 * self.active.len() + 1;
        while budget > 0 && self.active.len() as f64 > ratio * self.inactive_len() as f64 {
            budget -= 1;
            let Some(t) = self.active.back() else { break };
            let i = t as usize;
            if self.referenced[i] {
                self.referenced[i] = false;
                self.links.move_to_front(&mut self.active, t);
            } else {
                self.links.remove(&mut self.active, t);
                self.demoted[i] = true;
                self.enter_top(t);
            }
        }
    }

    fn table(&mut self, device: u16) -> &mut BlockTable {
        let d = device as usize;
        if self.tables.len() <= d {
            self.tables.resize_with(d + 1, BlockTable::new);
        }
        &mut self.tables[d]
    }

    /// Bytes the block tables hold now and at their peak.
    pub fn table_bytes(&self) -> (usize, usize) {
        self.tables.iter().map(|t| t.bytes()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }

    /// Puts a block at the top of the stack; the buffer's bottom drops into the bank.
    fn enter_top(&mut self, f: Frame) {
        self.section[f as usize] = Section::Buffer;
        self.links.push_front(&mut self.buffer, f);
        if self.buffer.len() > self.buffer_max {
            let b = self.links.pop_back(&mut self.buffer).expect("buffer is not empty");
            self.enter_bank(b);
        }
    }

    fn enter_bank(&mut self, f: Frame) {
        self.section[f as usize] = Section::Bank;
        self.arrival[f as usize] = self.arrivals;
        self.arrivals += 1;
        self.links.push_front(&mut self.bank, f);
        // Deviation from Figure 2 (which counts losses and sequences just before placing the
        // missed block): sequence when the bank is full. Each loss lets one block into the bank,
        // so the count is the same, but the block just placed is included and the cold start,
        // when blocks arrive without losses, is covered too.
        if self.bank.len() >= self.bank_max {
            self.refill();
        }
    }

    fn alloc_seq(&mut self, recency: u64) -> u32 {
        let s = Seq { h: 0.0, recency, members: List::new() };
        match self.free_seqs.pop() {
            Some(i) => {
                self.seqs[i as usize] = s;
                i
            }
            None => {
                self.seqs.push(s);
                self.seq_links.push_node()
            }
        }
    }

    /// refill_evicting_section() of Figure 2: sequence the bank and merge it into the evicting
    /// section by H.
    fn refill(&mut self) {
        if self.bank.is_empty() {
            return;
        }
        self.refills += 1;
        self.clock += 1;
        let now = self.clock;
        let mut frames = std::mem::take(&mut self.scratch);
        frames.clear();
        frames.extend(self.links.iter(&self.bank));
        self.bank = List::new();
        for &f in &frames {
            let (d, b) = (self.device[f as usize], self.block[f as usize]);
            self.table(d).record(b, now);
        }
        frames.sort_unstable_by_key(|&f| (self.device[f as usize], self.block[f as usize]));
        // §3.3: walk the table's current-time entries in disk order (the same blocks as the
        // bank, device by device) and cut sequences by rules 1 to 4.
        self.new_seqs.clear();
        let mut i = 0;
        while i < frames.len() {
            let dev = self.device[frames[i] as usize];
            let mut entries = std::mem::take(&mut self.entries);
            entries.clear();
            self.tables[dev as usize].for_each_current(now, |b, prev| entries.push((b, prev)));
            // (sequence, its last block, that block's previous time, size, that block's frame)
            let mut open: Option<(u32, u64, u32, usize, Frame)> = None;
            for &(b, prev) in &entries {
                let f = frames[i];
                debug_assert_eq!(
                    (self.device[f as usize], self.block[f as usize]),
                    (dev, b),
                    "table and bank disagree"
                );
                i += 1;
                let joins = open.is_some_and(|(_, last, last_prev, size, last_f)| {
                    // §4.2.2: demoted active pages are sequenced apart from newly fetched ones.
                    self.demoted[last_f as usize] == self.demoted[f as usize]
                        && joins(last, last_prev, size, b, prev, self.max_seq)
                });
                let s = match (joins, open) {
                    (true, Some((s, ..))) => s,
                    _ => {
                        let s = self.alloc_seq(0);
                        self.new_seqs.push(s);
                        s
                    }
                };
                let size = if joins { open.map_or(0, |o| o.3) } else { 0 } + 1;
                open = Some((s, b, prev, size, f));
                let seq = &mut self.seqs[s as usize];
                seq.recency = seq.recency.max(self.arrival[f as usize]);
                // Ascending disk order pushed at the front leaves the lowest block at the back.
                self.links.push_front(&mut seq.members, f);
                self.section[f as usize] = Section::Evicting;
                self.seq_of[f as usize] = s;
            }
            self.entries = entries;
        }
        self.evicting_blocks += frames.len();
        self.scratch = frames;
        self.sequences += self.new_seqs.len() as u64;
        for &s in &self.new_seqs {
            let seq = &mut self.seqs[s as usize];
            seq.h = self.l + 1.0 / seq.members.len() as f64;
        }
        let seqs = &self.seqs;
        self.new_seqs.sort_unstable_by(|&a, &b| {
            let (x, y) = (&seqs[a as usize], &seqs[b as usize]);
            x.h.total_cmp(&y.h).then(x.recency.cmp(&y.recency))
        });
        // Merge (Figure 2's merge_sort): walk up from the bottom; an equal H stays below.
        let mut cursor = self.evicting.back();
        for k in 0..self.new_seqs.len() {
            let s = self.new_seqs[k];
            let h = self.seqs[s as usize].h;
            while let Some(c) = cursor {
                if self.seqs[c as usize].h <= h {
                    cursor = self.seq_links.prev(c);
                } else {
                    break;
                }
            }
            match cursor.and_then(|c| self.seq_links.next(c)) {
                Some(below) => self.seq_links.insert_before(&mut self.evicting, below, s),
                None if cursor.is_some() => self.seq_links.push_back(&mut self.evicting, s),
                None => {
                    // Above everything (or the section is empty): the new top.
                    match self.evicting.front() {
                        Some(top) => self.seq_links.insert_before(&mut self.evicting, top, s),
                        None => self.seq_links.push_front(&mut self.evicting, s),
                    }
                }
            }
        }
        self.maybe_reclaim();
    }

    fn maybe_reclaim(&mut self) {
        if self.table_limit == 0 || self.table_bytes().0 <= self.table_limit {
            return;
        }
        // §3.2: drop the table's history older than a clock threshold; narrow the kept window
        // until the table is back under three quarters of its limit.
        let mut keep = self.keep_refills.max(1);
        loop {
            let threshold = self.clock.saturating_sub(keep);
            for t in &mut self.tables {
                t.reclaim(threshold);
            }
            self.reclaims += 1;
            if self.table_bytes().0 * 4 <= self.table_limit * 3 || keep == 1 {
                break;
            }
            keep = (keep / 2).max(1);
        }
    }

    /// Unlinks a frame from its sequence, freeing the sequence when it empties.
    fn leave_sequence(&mut self, f: Frame) {
        let s = self.seq_of[f as usize];
        self.links.remove(&mut self.seqs[s as usize].members, f);
        self.evicting_blocks -= 1;
        if self.seqs[s as usize].members.is_empty() {
            self.seq_links.remove(&mut self.evicting, s);
            self.free_seqs.push(s);
        }
        self.seq_of[f as usize] = u32::MAX;
    }

    /// The evicting section from bottom to top as (H, blocks bottom to top) (tests, dumps).
    pub fn evicting_section(&self) -> Vec<(f64, Vec<u64>)> {
        let mut out: Vec<(f64, Vec<u64>)> = self
            .seq_links
            .iter(&self.evicting)
            .map(|s| {
                let seq = &self.seqs[s as usize];
                let mut blocks: Vec<u64> = self.links.iter(&seq.members).map(|f| self.block[f as usize]).collect();
                blocks.reverse();
                (seq.h, blocks)
            })
            .collect();
        out.reverse();
        out
    }

    /// Blocks of the staging section, top first: the buffer then the bank (tests, dumps).
    pub fn staging(&self) -> (Vec<u64>, Vec<u64>) {
        let blocks = |l: &List| self.links.iter(l).map(|f| self.block[f as usize]).collect();
        (blocks(&self.buffer), blocks(&self.bank))
    }

    pub fn inflation(&self) -> f64 {
        self.l
    }
}

/// Whether block `next` (previous time `next_prev`) continues a sequence ending at `last`
/// (previous time `last_prev`) of `size` blocks: the cut rules of §3.3. Both blocks carry the
/// current time (they are in the bank); a previous time of 0 means none.
#[inline]
fn joins(last: u64, last_prev: u32, size: usize, next: u64, next_prev: u32, max_seq: usize) -> bool {
    // Rule 1 (read as "NOT accessed in the current clock time": the next block must be in this
    // bank) holds for every block visited; what is left of it is adjacency on the disk.
    last.checked_add(1) == Some(next)
        // Rule 2: one of the two was never sequenced before, the other was.
        && (last_prev == 0) == (next_prev == 0)
        // Rule 3: both were, at times more than one tick apart.
        && (last_prev == 0 || last_prev.abs_diff(next_prev) <= 1)
        // Rule 4: the sequence is full.
        && size < max_seq
}

impl Policy for Dulo {
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let f = frame as usize;
        self.device[f] = a.device;
        self.block[f] = a.block;
        // Not young: a first access, whether demanded or read ahead, earns no second chance
        // (prefetching paper §4; see the file header).
        self.young[f] = false;
        self.demoted[f] = false;
        // linux2q: a demand fault is followed by mark_page_accessed, read-ahead is not.
        self.referenced[f] = matches!(self.base, Base::Linux2Q { .. }) && origin == Origin::Demand;
        self.enter_top(frame);
    }

    fn hit(&mut self, frame: Frame, _a: &Access) {
        let f = frame as usize;
        match self.base {
            Base::Clock => self.young[f] = true,
            Base::Linux2Q { .. } => {
                if self.section[f] != Section::Active && self.referenced[f] {
                    // A second access while inactive: activate (DULO §4.2.1).
                    self.leave_inactive(frame);
                    self.links.push_front(&mut self.active, frame);
                    self.section[f] = Section::Active;
                    self.referenced[f] = false;
                } else {
                    self.referenced[f] = true;
                }
            }
        }
    }

    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        if let Base::Linux2Q { .. } = self.base {
            // The first demand of a read-ahead page is its first access: the bit, no promotion.
            self.referenced[frame as usize] = true;
        }
    }

    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if let Base::Linux2Q { ratio } = self.base {
            self.refill_inactive(ratio);
        }
        // Every round either returns, makes a young block old, or sequences blocks into the
        // evicting section; all of these are bounded by the blocks resident.
        let resident = self.buffer.len() + self.bank.len() + self.evicting_blocks;
        let mut rounds = 4 * resident + 4;
        'search: while rounds > 0 {
            rounds -= 1;
            // Figure 2: examine the bottom of the evicting section, upwards past pinned blocks.
            let mut s = self.evicting.back();
            while let Some(seq) = s {
                let mut f = self.seqs[seq as usize].members.back();
                while let Some(frame) = f {
                    if pins.pinned(frame) {
                        f = self.links.prev(frame);
                        continue;
                    }
                    if self.young[frame as usize] {
                        // Revoke the young state and move it to the top (a loss).
                        self.young[frame as usize] = false;
                        self.leave_sequence(frame);
                        self.enter_top(frame);
                        continue 'search;
                    }
                    return Some(frame);
                }
                s = self.seq_links.prev(seq);
            }
            // Nothing to take below: sequence the bank (or the buffer's bottom) and look again.
            if self.bank.is_empty() {
                let Some(b) = self.links.pop_back(&mut self.buffer) else {
                    // linux2q with the whole inactive list pinned: reclaim from the active tail.
                    return back_unpinned(&self.links, &self.active, pins);
                };
                self.section[b as usize] = Section::Bank;
                self.arrival[b as usize] = self.arrivals;
                self.arrivals += 1;
                self.links.push_front(&mut self.bank, b);
            }
            self.refill();
        }
        None
    }

    fn remove(&mut self, frame: Frame, _key: u64, why: Removal) {
        let f = frame as usize;
        match self.section[f] {
            Section::Buffer => self.links.remove(&mut self.buffer, frame),
            Section::Bank => self.links.remove(&mut self.bank, frame),
            Section::Evicting => {
                let s = self.seq_of[f];
                if self.evicting.back() == Some(s) {
                    // Figure 2: L = H(s) of the evicted block's sequence.
                    self.l = self.l.max(self.seqs[s as usize].h);
                }
                self.leave_sequence(frame);
            }
            Section::Active => self.links.remove(&mut self.active, frame),
            Section::Out => debug_assert!(false, "removing a frame DULO does not hold"),
        }
        if !why.remembered() {
            // No history for a block read ahead and never used (prefetching paper §4), nor
            // for one whose data the trace dropped.
            let (d, b) = (self.device[f], self.block[f]);
            self.table(d).forget(b);
        }
        self.section[f] = Section::Out;
        self.young[f] = false;
        self.referenced[f] = false;
    }

    fn metrics(&self, out: &mut Vec<(&'static str, f64)>) {
        let (now, peak) = self.table_bytes();
        out.push(("block_table_bytes", now as f64));
        out.push(("block_table_peak_bytes", peak as f64));
        out.push(("sequencings", self.refills as f64));
        out.push(("sequences_formed", self.sequences as f64));
        out.push(("table_reclaims", self.reclaims as f64));
    }

    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.buffer)?;
        self.links.check(&self.bank)?;
        self.seq_links.check(&self.evicting)?;
        self.links.check(&self.active)?;
        let held = self.inactive_len() + self.active.len();
        if held != resident {
            return Err(format!("DULO holds {held} blocks, the cache {resident}"));
        }
        if self.buffer.len() > self.buffer_max {
            return Err(format!("correlation buffer of {} blocks, limit {}", self.buffer.len(), self.buffer_max));
        }
        if self.bank.len() >= self.bank_max {
            return Err(format!("bank of {} blocks was not sequenced (BANK_MAX {})", self.bank.len(), self.bank_max));
        }
        let mut last_h = f64::NEG_INFINITY;
        let mut counted = 0;
        for (h, blocks) in self.evicting_section() {
            if h < last_h {
                return Err(format!("evicting section out of H order: {h} above {last_h}"));
            }
            if h < self.l {
                return Err(format!("a sequence with H {h} below L {}", self.l));
            }
            last_h = h;
            if blocks.is_empty() || blocks.len() > self.max_seq {
                return Err(format!("sequence of {} blocks", blocks.len()));
            }
            if blocks.windows(2).any(|w| w[1] != w[0] + 1) {
                return Err(format!("sequence of blocks not adjacent on the disk: {blocks:?}"));
            }
            counted += blocks.len();
        }
        if counted != self.evicting_blocks {
            return Err(format!("evicting section counts {} blocks, holds {counted}", self.evicting_blocks));
        }
        Ok(())
    }
}

impl PolicyDef for Dulo {
    const INFO: PolicyInfo = PolicyInfo {
        name: "dulo",
        aliases: &["dual-locality"],
        paper: "DULO (Jiang, Ding, Chen, Xiang, Zhang, FAST 2005) §3: staging and evicting sections, block table, \
                sequences ordered by GreedyDual-Size H = L + 1/size",
        summary: "CLOCK-based LRU stack whose bottom holds disk-adjacent sequences, long ones evicted first",
        params: &[
            ParamInfo { name: "bank", default: "8MiB", doc: "BANK_MAX: the sequencing bank's size (§3.1), at least one block (a share below one block is one); scaled to 1/16 of the cache when neither bank nor evict is given and they exceed it", range: Range::PositiveShare(1.0) },
            ParamInfo { name: "evict", default: "64MiB", doc: "the minimal evicting-section size (§4.1.3); scaled to half the cache when neither bank nor evict is given and they exceed it", range: Range::Share(0.0, 1.0) },
            ParamInfo { name: "buffer", default: "auto", doc: "correlation buffer size; auto = cache - evict - bank", range: Range::Or(&["auto"], &Range::Share(0.0, 1.0)) },
            ParamInfo { name: "max-seq", default: "128", doc: "longest sequence in blocks (§3.3 rule 4)", range: Range::Whole(1, u64::MAX) },
            ParamInfo { name: "table", default: "auto", doc: "block table memory before reclamation (§3.2); auto = 64 bytes per cache block, at least 1MiB; 0 = no limit", range: Range::Or(&["auto"], &Range::Bytes(0, 1 << 50)) },
            ParamInfo { name: "base", default: "clock", doc: "clock: one CLOCK-run LRU stack (§3); linux2q: inside the inactive list of Linux's two lists (§4.2.2)", range: Range::Choice(&["clock", "linux2q"]) },
            ParamInfo { name: "active-ratio", default: "1", doc: "linux2q: refill keeps |active| <= ratio x |inactive|, as linux-2list", range: Range::Positive(1e6) },
        ],
        preset_of: None,
        caps: Capabilities::NONE,
    };

    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let base = match args.choice("base", &["clock", "linux2q"])? {
            "clock" => Base::Clock,
            _ => {
                let ratio = args.f64("active-ratio")?;
                if ratio <= 0.0 {
                    return Err(SpecError(format!("policy `dulo`: active-ratio={ratio} must be above 0")));
                }
                Base::Linux2Q { ratio }
            }
        };
        if base == Base::Clock && args.is_given("active-ratio") {
            return Err(SpecError("policy `dulo`: active-ratio applies to base=linux2q only".into()));
        }
        // The sections share the inactive list with linux2q: about 1/(1 + ratio) of the cache.
        let c = match base {
            Base::Clock => env.capacity as u64,
            Base::Linux2Q { ratio } => ((env.capacity as f64 / (1.0 + ratio)) as u64).max(1),
        };
        // The bank sequences the blocks it holds (§3.1): one block at least, whatever share of a
        // small cache it was given.
        let (mut bank, mut evict) = (args.blocks("bank", env)?.max(1), args.blocks("evict", env)?);
        if bank + evict > c {
            if args.is_given("bank") || args.is_given("evict") {
                // The defaults are scaled only when neither is given: say so, or giving one
                // of them reads as a bad value.
                return Err(SpecError(format!(
                    "policy `dulo`: bank ({bank} blocks) + evict ({evict} blocks) exceed the cache of {c} blocks; give both bank and evict that fit (the defaults are scaled to the cache only when neither is given)"
                )));
            }
            // The paper's sizes assume 80 MB or more (§4.1.1); keep their proportions below that.
            evict = c / 2;
            bank = (c / 16).max(1);
        }
        let buffer = if args.text("buffer") == "auto" {
            c.saturating_sub(evict + bank)
        } else {
            let b = args.blocks("buffer", env)?;
            if b + bank > c {
                return Err(SpecError(format!(
                    "policy `dulo`: buffer ({b}) + bank ({bank}) exceed the cache of {c} blocks"
                )));
            }
            b
        };
        let max_seq = args.u64("max-seq")?;
        if max_seq == 0 {
            return Err(SpecError("policy `dulo`: max-seq must be at least 1".into()));
        }
        let table = if args.text("table") == "auto" {
            (64 * c).max(1 << 20)
        } else {
            crate::spec::Size::parse(args.text("table"))
                .map_err(|e| SpecError(format!("policy `dulo`: parameter table: {e}")))?
                .to_blocks(1)
        };
        Ok(Dulo::new(env.capacity, bank as usize, buffer as usize, max_seq as usize, table as usize).with_base(base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;

    fn access(block: u64) -> Access {
        Access { key: block, block, ..Access::default() }
    }

    /// A DULO cache of `capacity` blocks with no buffer and the given bank.
    fn cache(capacity: usize, bank: usize) -> Cache<Dulo> {
        Cache::new(Dulo::new(capacity, bank, 0, 128, 0), capacity)
    }

    #[test]
    fn new_blocks_adjacent_on_disk_form_one_sequence_up_to_max_seq() {
        let mut c = Cache::new(Dulo::new(16, 8, 0, 3, 0), 16);
        for b in [7, 1, 2, 3, 4, 5, 9, 20] {
            c.demand(&access(b));
        }
        // Bank of 8 sequenced at once: 1..3 | 4..5 (cut at max_seq = 3) | 7 | 9 | 20.
        let sizes: Vec<Vec<u64>> = c.policy.evicting_section().into_iter().map(|(_, b)| b).collect();
        assert_eq!(sizes, vec![vec![1, 2, 3], vec![4, 5], vec![7], vec![9], vec![20]]);
        let h: Vec<f64> = c.policy.evicting_section().iter().map(|s| s.0).collect();
        assert_eq!(h, vec![1.0 / 3.0, 0.5, 1.0, 1.0, 1.0]);
        c.check().unwrap();
    }

    #[test]
    fn sequences_are_cut_by_the_four_rules_of_section_3_3() {
        // (last block, its previous time, size so far, next block, its previous time)
        assert!(joins(10, 0, 1, 11, 0, 128), "two new adjacent blocks join");
        assert!(!joins(10, 0, 1, 12, 0, 128), "rule 1: not adjacent");
        assert!(!joins(10, 4, 1, 11, 0, 128), "rule 2: old then new");
        assert!(!joins(10, 0, 1, 11, 4, 128), "rule 2: new then old");
        assert!(joins(10, 4, 1, 11, 5, 128), "rule 3: one tick apart is close enough");
        assert!(!joins(10, 4, 1, 11, 6, 128), "rule 3: two ticks apart");
        assert!(!joins(10, 0, 128, 11, 0, 128), "rule 4: 128 blocks");
        assert!(!joins(u64::MAX, 0, 1, 0, 0, 128), "no wrap-around at the end of the disk");
    }

    #[test]
    fn rule_3_joins_blocks_last_sequenced_together() {
        let mut c = cache(4, 2);
        // 5 and 6 sequenced together at time 1, both evicted, then read again: one sequence.
        for b in [5, 6, 100, 200, 300, 400, 5, 6] {
            c.demand(&access(b));
        }
        let seqs: Vec<Vec<u64>> = c.policy.evicting_section().into_iter().map(|(_, b)| b).collect();
        assert!(seqs.contains(&vec![5, 6]), "{seqs:?}");
        c.check().unwrap();
    }

    #[test]
    fn young_blocks_go_round_and_pinned_ones_are_passed() {
        let mut c = cache(4, 2);
        for b in [1, 3, 5, 7] {
            c.demand(&access(b));
        }
        c.demand(&access(1)); // 1 young
        c.demand(&access(9)); // victim search: 1 young goes to the top, 3 is evicted
        assert!(c.contains(1) && !c.contains(3));
        let f5 = c.frame_of(5).unwrap();
        c.pin(f5);
        c.demand(&access(11)); // 5 is pinned: the next one up goes
        assert!(c.contains(5));
        c.unpin(f5);
        c.check().unwrap();
    }

    #[test]
    fn an_unused_prefetch_leaves_no_history() {
        let mut c = cache(4, 2);
        c.insert(&access(8), Origin::Prefetch);
        c.demand(&access(50));
        for b in [60, 70, 80] {
            c.demand(&access(b));
        }
        assert!(!c.contains(8));
        assert_eq!(c.policy.tables[0].times(8), (0, 0));
        assert!(c.policy.tables[0].times(50).0 > 0);
    }

    #[test]
    fn on_linux_two_lists_demoted_pages_are_sequenced_apart_from_new_ones() {
        // Driven through the policy contract so that only the §4.2.2 rule can keep two blocks
        // apart: both enter one bank with equal previous times (rules 1-3 would join them).
        let mut p = Dulo::new(8, 2, 0, 128, 0).with_base(Base::Linux2Q { ratio: 1.0 });
        p.insert(0, &access(11), Origin::Demand);
        p.insert(1, &access(12), Origin::Demand); // bank full: [11 12] sequenced at time 1
        assert_eq!(p.evicting_section(), vec![(0.5, vec![11, 12])]);
        p.hit(0, &access(11)); // second access (the fault set the bit): 11 goes active
        assert_eq!(p.active.len(), 1);
        p.remove(1, 12, Removal::Evicted);
        p.insert(1, &access(12), Origin::Demand); // 12 read again: into the bank
        p.refill_inactive(0.5); // 1 active > 0.5 x 1 inactive: 11 is demoted into the bank
        assert!(p.demoted[0]);
        // The bank was sequenced at time 2: both blocks have previous time 1, adjacent, yet apart.
        assert_eq!(p.tables[0].times(11), (2, 1));
        assert_eq!(p.tables[0].times(12), (2, 1));
        let seqs: Vec<Vec<u64>> = p.evicting_section().into_iter().map(|(_, b)| b).collect();
        assert_eq!(seqs, vec![vec![12], vec![11]], "equal H: the older arrival (12) lower");
        p.check(2).unwrap();
    }

    #[test]
    fn the_block_table_is_reclaimed_at_its_limit() {
        let mut c = Cache::new(Dulo::new(64, 8, 0, 128, 64 * 1024), 64);
        for i in 0..20_000u64 {
            c.demand(&access(i * 1000));
        }
        let (now, peak) = c.policy.table_bytes();
        assert!(c.policy.reclaims > 0);
        assert!(now <= 64 * 1024, "table holds {now} bytes");
        assert!(peak <= 64 * 1024 + 16 * crate::block_table::NODE_BYTES, "peak {peak}");
        c.check().unwrap();
    }
}
