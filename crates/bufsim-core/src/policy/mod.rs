//! Replacement policies behind one prefetch-aware contract.
//!
//! The cache ([`crate::cache::Cache`]) owns residency: which block sits in which frame, which
//! frames are free, pinned, or hold a prefetched block not yet demanded. A policy owns only the
//! order in which frames are given up, and whatever history it keeps (ghosts, counts).
//!
//! Rules from the prefetching paper (Butt, Gniady, Hu, IEEE TC 2007, §4) hold for every policy:
//! a prefetched block enters at the MRU side with no access history (`insert` with
//! [`Origin::Prefetch`]); its first demand access counts as a first access (`first_demand`); a
//! prefetched block evicted unused leaves no ghost or history entry ([`Removal::UnusedPrefetch`]).

pub mod amp;
pub(crate) mod forward;
pub mod partition;
pub mod registry;
pub mod storage;

mod arc;
mod cacheus;
mod car;
mod car_clocks;
mod cart;
mod clock;
mod clock_pro;
mod dulo;
mod experts;
mod fifo;
mod gds;
mod gdsf;
mod hyperbolic;
mod lecar;
mod lfu;
mod lhd;
mod linux;
mod linux_2list;
mod lru;
mod mq;
mod mru;
mod opt;
mod queue;
mod random;
mod ring;
#[cfg(test)]
pub(crate) mod steps;
mod w_tinylfu;

pub use arc::{Arc, ArcDump};
// Policies that keep history beyond recency: LRU-K, 2Q, LIRS, LRFU, FBR.
mod fbr;
mod heap_victim;
mod lirs;
mod lrfu;
mod lru_k;
mod shares;
mod two_q;

pub use amp::{Amp, Dear, Pcc};
pub use cacheus::Cacheus;
pub use car::Car;
pub use cart::Cart;
pub use clock::Clock;
pub use clock_pro::ClockPro;
pub use dulo::Dulo;
pub use fbr::Fbr;
pub use fifo::Fifo;
pub use gds::Gds;
pub use gdsf::Gdsf;
pub use hyperbolic::Hyperbolic;
pub use lecar::Lecar;
pub use lfu::Lfu;
pub use lhd::Lhd;
pub use linux::Linux;
pub use linux_2list::Linux2List;
pub use lirs::Lirs;
pub use lrfu::Lrfu;
pub use lru::Lru;
pub use lru_k::LruK;
pub use mq::{Lifetime, Mq, MqDump};
pub use mru::Mru;
pub use opt::Opt;
pub use random::Random;
pub use two_q::TwoQ;
pub use w_tinylfu::WTinyLfu;
// Today's FIFO-family baselines: SIEVE, S3-FIFO, SLRU, CLOCK-2Q+, QD-LP.
mod clock2q_plus;
mod s3_fifo;
mod sieve;
mod slru;
pub use clock2q_plus::Clock2QPlus;
pub use s3_fifo::S3Fifo;
pub use sieve::Sieve;
pub use slru::Slru;
// Linux's multi-generational LRU.
mod mglru;
pub use mglru::Mglru;
pub use registry::{
    build, AnyPolicy, Args, BuildEnv, Capabilities, Limit, ParamInfo, PolicyDef, PolicyInfo, PolicyVisitor, Range,
    POLICIES, PRESETS,
};
pub use storage::{EagerLru, Landlord, LazyClock, LazyLru, StaticSplit};

/// A cache frame: `0..capacity`. Policies index their per-block state by frame.
pub type Frame = u32;

/// No further use of the block (OPT's next use of a block never seen again).
pub const NEVER: u64 = u64::MAX;

/// Why a block is being inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A demand miss.
    Demand,
    /// Read-ahead brought the block before any demand for it.
    Prefetch,
}

/// Why a block leaves the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Evicted after being demanded at least once: policies may remember it (ghosts, history).
    Evicted,
    /// Evicted before any demand access: leave no ghost or history (prefetching paper §4).
    UnusedPrefetch,
    /// The trace dropped the block's data (a file truncated, deleted or punched): not an
    /// eviction, and nothing to remember, as Linux's truncation leaves no shadow entry.
    Dropped,
}

impl Removal {
    /// Whether a policy may remember the block (a ghost, a shadow, history): only a block
    /// evicted after a demand access.
    #[inline]
    pub fn remembered(self) -> bool {
        self == Removal::Evicted
    }
}

/// What a policy may know about one block access, beyond the block itself.
///
/// Extra knowledge arrives here and never through globals: the device block number (DULO),
/// program context (AMP), device (storage-aware), logical time (MQ, LRU-K), the future (OPT).
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The cache key: device number and device block packed by [`crate::layout::block_key`].
    pub key: u64,
    pub device: u16,
    /// Block number on its device.
    pub block: u64,
    /// Logical time: the number of demand block accesses before this one.
    pub time: u64,
    /// Program context of the request (0 if the trace has none).
    pub ctx: u64,
    pub pid: u32,
    pub write: bool,
    /// Logical time of the next demand access of this block, or [`NEVER`]. Only filled when the
    /// run needs the future (OPT); otherwise [`NEVER`].
    pub next_use: u64,
    /// Cost of fetching this block again (GreedyDual-Size / LANDLORD); 1.0 unless a device
    /// model says otherwise.
    pub cost: f64,
    /// A block of the request that AccuSim's read-ahead loop reached and looked up in the cache
    /// before demanding it (prefetch.cc `perform_io`: `checkInCache` with ghost removal on);
    /// only `arc(variant=accusim)` reads it, since that lookup deletes an ARC ghost.
    pub looked_up_by_read_ahead: bool,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            key: 0,
            device: 0,
            block: 0,
            time: 0,
            ctx: 0,
            pid: 0,
            write: false,
            next_use: NEVER,
            cost: 1.0,
            looked_up_by_read_ahead: false,
        }
    }
}

/// Which frames a victim search must skip: blocks whose I/O is in flight, and blocks fetched
/// together with the one being inserted (they do not evict each other, prefetching paper §4).
#[derive(Clone, Copy)]
pub struct Pins<'a> {
    flags: &'a [u8],
}

/// Frame flag: pinned, never a victim.
pub const PINNED: u8 = 1;
/// Frame flag: holds a prefetched block not yet demanded.
pub const PREFETCHED: u8 = 2;

impl<'a> Pins<'a> {
    pub fn new(flags: &'a [u8]) -> Self {
        Pins { flags }
    }

    /// No frame pinned (tests, and callers without in-flight state).
    pub fn none() -> Pins<'static> {
        Pins { flags: &[] }
    }

    #[inline]
    pub fn pinned(&self, f: Frame) -> bool {
        self.flags.get(f as usize).is_some_and(|&x| x & PINNED != 0)
    }

    #[inline]
    pub fn any(&self) -> bool {
        self.flags.iter().any(|&x| x & PINNED != 0)
    }
}

/// The frames a policy expects to evict next ([`Policy::likely_victims`]). A policy that
/// chooses between two candidates names both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LikelyVictims {
    /// The candidates of the next eviction, the likelier first.
    pub next: [Option<Frame>; 2],
    /// The candidates of the eviction after it, if the next takes the candidate beside them.
    pub after: [Option<Frame>; 2],
}

impl LikelyVictims {
    pub const NONE: LikelyVictims = LikelyVictims { next: [None, None], after: [None, None] };
}

/// The contract between the cache and a replacement policy.
///
/// Call order for an insertion: `prepare_insert` (always), then zero or more
/// `victim` + `remove` pairs while no frame is free, then `insert`.
pub trait Policy {
    /// A block is about to be inserted (demand miss or prefetch), before any victim is chosen.
    /// Policies that adapt on ghost hits (ARC, 2Q, MQ, LIRS) look the key up here.
    fn prepare_insert(&mut self, _a: &Access, _origin: Origin) {}

    /// The block `a.key` now sits in the free frame `frame`.
    fn insert(&mut self, frame: Frame, a: &Access, origin: Origin);

    /// The block `a.key` now sits in the free frame `frame`, not accessed now: a partitioned
    /// manager moves in a block it held elsewhere (AMP's rescued one-shot blocks). It goes where
    /// the policy looks for its next victim, as the least recently used block would, so that it
    /// claims no recency it does not have; a policy without such a place inserts it as `insert`
    /// does. Called after `prepare_insert`, like `insert`.
    fn insert_cold(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.insert(frame, a, origin)
    }

    /// A demand access to a resident block that has been demanded before.
    fn hit(&mut self, frame: Frame, a: &Access);

    /// The first demand access to a block that read-ahead inserted. It counts as a first
    /// access: no hit history is credited (prefetching paper §4).
    fn first_demand(&mut self, frame: Frame, a: &Access);

    /// Chooses a resident frame to give up for `incoming`, skipping pinned frames.
    /// Returns `None` when every resident frame is pinned, or when the policy refuses to cache
    /// `incoming` (libCacheSim's GDSF rule): the block is then not cached. Must not change residency:
    /// the cache calls `remove` for the chosen frame next.
    fn victim(&mut self, pins: &Pins, incoming: &Access) -> Option<Frame>;

    /// The block `key` leaves `frame`. The caller guarantees the frame is resident.
    fn remove(&mut self, frame: Frame, key: u64, why: Removal);

    /// The victim `frame` (of `victim`) gives its frame to the incoming block `a` at once: the
    /// same as `remove(frame, key, why)` then `insert(frame, a, origin)`, which is what it
    /// does unless a policy can do both in one step (a ring whose victim and newest block sit
    /// side by side). Called after `prepare_insert`, like `insert`.
    #[inline(always)]
    fn replace(&mut self, frame: Frame, key: u64, why: Removal, a: &Access, origin: Origin) {
        self.remove(frame, key, why);
        self.insert(frame, a, origin);
    }

    /// A resident frame the policy gives up of its own accord right after a `hit`: the cache
    /// asks until `None` and evicts each (a `remove` with [`Removal::Evicted`]), leaving frames
    /// free. Only `w-tinylfu(variant=libcachesim)` answers, for libCacheSim's SLRU main cache,
    /// which evicts at a hit that overfills its first segment. Must skip pinned frames.
    #[inline(always)]
    fn surplus(&mut self, _pins: &Pins) -> Option<Frame> {
        None
    }

    /// A resident frame the policy gives up because its partition holds more than its target
    /// (eager partitioning, storage-aware caching §2.3: "when new partition sizes are desired,
    /// the algorithm immediately reallocates pages"): asked after every `device_done` until
    /// `None` and after an insertion into a free frame (once); each answer is evicted, leaving
    /// its frame free. Only `eager-lru` answers. Must skip pinned frames.
    #[inline(always)]
    fn reallocate(&mut self, _pins: &Pins) -> Option<Frame> {
        None
    }

    /// The trace dropped the data of block `key`, which is not resident ([`Removal::Dropped`]
    /// is the resident case): forget what is remembered of it. Linux clears the shadow entries
    /// of a truncated range (mm/truncate.c); policies whose papers say nothing of deleted data
    /// keep their ghosts.
    #[inline]
    fn forget(&mut self, _key: u64) {}

    /// The frames the policy expects to give up at its next eviction and at the one after,
    /// when it can tell at the cost of a list end (the back of an LRU or FIFO queue and its
    /// neighbour). A memory hint only: the cache starts loading the next candidates' index
    /// entries and the later candidates' frame state (their keys and flags, and the policy's
    /// own through [`Policy::warm`]), so that each eviction finds in the CPU cache what it
    /// touches, and each hint reads only what an earlier hint loaded. It never changes what is
    /// simulated.
    #[inline(always)]
    fn likely_victims(&self) -> LikelyVictims {
        LikelyVictims::NONE
    }

    /// Whether the policy can keep its ghosts (keys of evicted blocks it remembers) in the
    /// cache's own index instead of one of its own. The cache asks once, when it is built, and
    /// then calls
    /// [`Policy::share_index`] once, before any access, when its frame numbers leave room for
    /// the ghost mark, and from then on: a miss on a key the index holds as a ghost calls
    /// [`Policy::prepare_insert_ghost`] instead of `prepare_insert`; after `prepare_insert*`
    /// and after `remove` the cache drops from its index the keys [`Policy::take_forgotten`]
    /// hands it; after `remove` it turns the removed key's entry into the ghost
    /// [`Policy::take_ghost`] names, or drops it. One index instead of two saves a deletion, an
    /// insertion and a lookup per miss.
    fn shares_index(&self) -> bool {
        false
    }

    /// From now on the cache indexes the policy's ghosts (see [`Policy::shares_index`]).
    fn share_index(&mut self) {}

    /// [`Policy::prepare_insert`] for a key the cache's index holds as the policy's ghost
    /// `node` (a policy that shares the index only).
    fn prepare_insert_ghost(&mut self, a: &Access, origin: Origin, node: u32) {
        let _ = (a, origin, node);
        unreachable!("only a policy that shares the cache's index has ghosts there");
    }

    /// A key whose ghost the policy forgot since the last call (a policy that shares the
    /// index); the cache drops it from its index.
    fn take_forgotten(&mut self) -> Option<u64> {
        None
    }

    /// The ghost node the last `remove` left for the removed key, if any (a policy that shares
    /// the index).
    fn take_ghost(&mut self) -> Option<u32> {
        None
    }

    /// Ghosts the policy keeps in the cache's index (checks).
    fn shared_ghosts(&self) -> usize {
        0
    }

    /// Keys of ghosts the policy may forget at its next insertions (a policy that shares the
    /// index): a memory hint, the cache warms their index slots.
    #[inline(always)]
    fn likely_forgotten(&self) -> [Option<u64>; 4] {
        [None; 4]
    }

    /// `frame` (when `Some`) will soon be touched: it holds `key`, whose demand access is a few
    /// requests away, or it is a likely victim (then `key` means nothing). `None`: `key` is not
    /// resident and its access will miss. A memory hint only: the policy may start loading what
    /// the access or the eviction will touch (the frame's list links and state, or the ghost
    /// index). It never changes what is simulated.
    #[inline(always)]
    fn warm(&self, _frame: Option<Frame>, _key: u64) {}

    /// Whether [`Policy::warm`] does anything: for the others the cache skips the index
    /// look-up that would only feed it. A method returning a constant rather than an associated
    /// const, so that the trait stays dyn-compatible; the compiled cache folds it all the same.
    #[inline(always)]
    fn warms(&self) -> bool {
        false
    }

    /// Checks the policy's own invariants given the number of resident blocks.
    fn check(&self, _resident: usize) -> Result<(), String> {
        Ok(())
    }

    /// Figures the policy reports about itself at the end of a run, such as DULO's block
    /// table memory: `(name, value)` pairs appended to `out`. Called once, outside the hot loop.
    fn metrics(&self, _out: &mut Vec<(&'static str, f64)>) {}

    /// Whether the policy keeps ghosts (history of evicted blocks, as ARC's B1 and B2) and
    /// answers [`Policy::ghost_hit`] and [`Policy::ghost_len`] from them. AMP's manager sizes
    /// its default partition from these (AMP §3.2, Figure 4); for a policy without ghosts it
    /// keeps its own list of the default partition's evictions.
    fn keeps_ghosts(&self) -> bool {
        false
    }

    /// Whether `key`, about to be inserted, is a ghost (for ARC: in B1 or B2). Asked right
    /// before `prepare_insert` for the same key, which may then consume the ghost; must not
    /// change the policy. Meaningful only when [`Policy::keeps_ghosts`] is true.
    fn ghost_hit(&self, _key: u64) -> bool {
        false
    }

    /// How many ghosts the policy holds now (for ARC: |B1| + |B2|).
    fn ghost_len(&self) -> usize {
        0
    }

    /// Partition sizes over time, for partitioned policies (AMP); `None` for the others.
    fn partition_timeline(&self) -> Option<&partition::Timeline> {
        None
    }

    /// The devices under the cache (storage-aware caching, docs/storage-aware.md): both engines
    /// call this once before the first access, with every device the run places blocks on and
    /// its expected service time. Policies that partition by device create their partitions
    /// here; others ignore it.
    fn storage(&mut self, _view: &storage::StorageView) {}

    /// A read request to `device` completed after the cache waited `wait_ns` for it: in timed
    /// mode from issue to delivery (network, queueing and service); in count mode, which has no
    /// clock, the device's expected service time for the request. `now` is simulated ns in
    /// timed mode and demand accesses so far in count mode ([`storage::StorageView::clock`]).
    /// Storage-aware caching's repartitioning (§3.1) measures wait times from these calls.
    fn device_done(&mut self, _device: u16, _wait_ns: u64, _now: u64) {}
}
