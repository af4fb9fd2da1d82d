//! Kernel read-ahead: which blocks of a file to fetch besides the one demanded.
//!
//! A read-ahead algorithm sees every demand block access of a read (prefetching paper §2: the
//! kernel only prefetches for reads) and answers with a [`Plan`]: a run of following blocks of
//! the same file to fetch, synchronously (with the demanded block) or asynchronously. The engine
//! carries the plan out through the cache, pinning the blocks fetched together so they never
//! evict each other (§4), and hands the blocks it reads to the I/O clusterer.
//!
//! State is per file (per device for block traces), indexed by the dense file id.

mod accusim;
mod bsd;
mod linux;
mod linux6;
mod ondemand;
mod simple;

pub use accusim::AccuSim;
pub use bsd::Bsd;
pub use linux::Linux24;
pub use linux6::{Decision, Linux6};
pub use ondemand::OnDemand;
pub use simple::Simple;

use bufsim_config::registry::{unknown, Args, Capabilities, Info, Kind, Param, Range};
use bufsim_config::{Spec, SpecError};

/// One demand block access, as a read-ahead algorithm sees it.
#[derive(Clone, Copy, Debug)]
pub struct BlockEvent {
    pub file: u32,
    /// The process that reads (the trace's pid; 0 when it has none): Linux keeps a read-ahead
    /// window per open file, and a process stands for its opens here.
    pub pid: u32,
    /// The first block of the first read through a newly opened file (`Request::opened`): the
    /// process's window on the file starts afresh.
    pub opened: bool,
    /// Block number within the file (or device).
    pub block: u64,
    /// Blocks in the file (read-ahead never goes past the end).
    pub file_blocks: u64,
    /// The block was not resident.
    pub miss: bool,
    /// The block's I/O is still in flight (timed mode; never in count mode).
    pub in_flight: bool,
    /// The resident copy was brought in by read-ahead (at any time), not by a demand miss.
    pub by_prefetch: bool,
    /// The application request this access belongs to: its first block and its length in
    /// blocks (the on-demand algorithm sizes its first window from it).
    pub request_first: u64,
    pub request_blocks: u64,
    /// The request's length in blocks as it was asked for: more than `request_blocks` when the
    /// end of the file cut a read short (`Request::unfilled`). Linux sizes its windows from what
    /// was asked (mm/filemap.c: `last_index` comes from the read's count).
    pub request_asked_blocks: u64,
    /// The block holding the byte right after the request (Linux's prev_pos >> PAGE_SHIFT once
    /// the read is done): `request_first + request_blocks` unless the request ends mid-block.
    pub request_end: u64,
    /// Bytes from the start of the request's first block to its end (its offset within that
    /// block plus its length): Linux 2.4 sizes read-ahead from it.
    pub request_bytes: u64,
    pub block_size: u64,
}

/// What to fetch after a demand access: blocks `start..start+len` of the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub start: u64,
    pub len: u64,
    /// Synchronous read-ahead: the blocks go out with the demanded block.
    pub sync: bool,
    /// Stop at the first block already cached (the simple prefetcher of Table 1); otherwise
    /// cached blocks are skipped but stay part of the group (§2.1).
    pub stop_at_cached: bool,
    /// Stop rather than evict a block fetched together with this one (Table 1's rule);
    /// otherwise the victim search simply skips those blocks.
    pub stop_before_group_eviction: bool,
}

impl Plan {
    /// A plan of `len` blocks from `start`, clipped to the end of the file; `None` if empty.
    pub fn clipped(start: u64, len: u64, file_blocks: u64, sync: bool) -> Option<Plan> {
        let end = start.saturating_add(len).min(file_blocks);
        (end > start).then(|| Plan {
            start,
            len: end - start,
            sync,
            stop_at_cached: false,
            stop_before_group_eviction: false,
        })
    }
}

/// A read-ahead algorithm.
pub trait ReadAhead {
    /// Called for every demand read of a block, after the cache has looked it up (and inserted
    /// it on a miss).
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan>;

    /// As [`ReadAhead::on_access`], for algorithms that look at the page cache around the
    /// access (Linux 6's context read-ahead): `cached(block)` tells whether a block of the same
    /// file is resident.
    fn on_access_cached(&mut self, ev: &BlockEvent, _cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        self.on_access(ev)
    }
}

/// Grows a per-file state table on demand (file ids are dense).
pub(crate) fn state<T: Default + Clone>(v: &mut Vec<T>, file: u32) -> &mut T {
    let i = file as usize;
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

/// The largest read-ahead size a spec may give, in blocks (16 TiB of 4 KiB blocks, far past any
/// kernel's window): the algorithms double, quadruple and add to their sizes in u64, which
/// would wrap near 2^64 and silently turn read-ahead off or misplace a window.
pub const MAX_READAHEAD_BLOCKS: u64 = 1 << 32;

const fn blocks(name: &'static str, default: &'static str, doc: &'static str) -> Param {
    Param { name, default, doc, range: Range::Whole(1, MAX_READAHEAD_BLOCKS) }
}

const fn entry(name: &'static str, paper: &'static str, summary: &'static str, params: &'static [Param]) -> Info {
    Info { name, aliases: &[], paper, summary, params, preset_of: None, caps: Capabilities::NONE }
}

/// The read-ahead registry, each entry beside its builder (`none` builds nothing).
type Builder = fn(&Args) -> Result<Option<AnyReadAhead>, SpecError>;

const ENTRIES: &[(Info, Builder)] = &[
    (entry("none", "no read-ahead", "only demanded blocks are read", &[]), |_| Ok(None)),
    (
        entry(
            "linux",
            "Linux 2.4 read-ahead groups and windows, prefetching paper §2.1",
            "a synchronous group on a miss, windows that double while the stream stays sequential",
            &[
                blocks("min", "3", "blocks of a synchronous (conservative) read-ahead"),
                blocks("max", "32", "largest read-ahead group, in blocks"),
            ],
        ),
        |a| {
            let (min, max) = min_max(a)?;
            Ok(Some(AnyReadAhead::Linux(Linux24::new(min, max))))
        },
    ),
    (
        entry(
            "linux-accusim",
            "Linux 2.4 generic_file_readahead as AccuSim ran it (asim/sim/prefetch.cc), the prefetching paper's evaluation",
            "the request's own size on a random access; a re-read inside the window turns read-ahead asynchronous",
            &[
                blocks("min", "3", "smallest read-ahead once a request continues the window (MINRA)"),
                blocks("max", "32", "largest read-ahead, in blocks (MAXRA)"),
            ],
        ),
        |a| {
            let (min, max) = min_max(a)?;
            Ok(Some(AnyReadAhead::AccuSim(AccuSim::new(min, max))))
        },
    ),
    (
        entry(
            "linux-ondemand",
            "Linux 2.6.23+ on-demand read-ahead (mm/readahead.c)",
            "window from the request size, ramp-up, async marker",
            &[blocks("max", "32", "largest window, in blocks (128 KiB of 4 KiB pages)")],
        ),
        |a| Ok(Some(AnyReadAhead::OnDemand(OnDemand::new(a.u64("max")?)))),
    ),
    (
        entry(
            "linux-6",
            "Linux 6.x read-ahead (mm/readahead.c, mm/filemap.c of 6.18)",
            "on-demand windows, PG_readahead markers, context read-ahead from the page cache, large-folio alignment",
            &[
                blocks("max", "32", "largest window, in blocks: the device's read_ahead_kb / 4 (128 KiB by default)"),
                Param {
                    name: "folios",
                    default: "1",
                    doc: "1: large folios (ext4, XFS) place the marker and align windows; 0: single pages",
                    range: Range::Choice(&["0", "1"]),
                },
            ],
        ),
        |a| {
            let folios = a.choice("folios", &["0", "1"])? == "1";
            Ok(Some(AnyReadAhead::Linux6(Linux6::new(a.u64("max")?, folios))))
        },
    ),
    (
        entry(
            "bsd",
            "4.4BSD clustered read-ahead, prefetching paper §2.2",
            "clusters of sequential blocks read ahead",
            &[blocks("max", "32", "largest read-ahead, in blocks (the cluster maximum)")],
        ),
        |a| Ok(Some(AnyReadAhead::Bsd(Bsd::new(a.u64("max")?)))),
    ),
    (
        entry(
            "simple",
            "the simplified prefetcher of the prefetching paper's Table 1 (§3)",
            "a few blocks on a miss, more when the stream looks sequential",
            &[
                blocks("min", "3", "blocks fetched on a miss, the demanded one included"),
                blocks("max", "8", "blocks fetched when the stream looks sequential"),
            ],
        ),
        |a| {
            let (min, max) = min_max(a)?;
            Ok(Some(AnyReadAhead::Simple(Simple::new(min, max))))
        },
    ),
];

/// Every read-ahead algorithm, in the order `bufsim prefetchers` lists them.
pub fn all() -> impl Iterator<Item = &'static Info> {
    ENTRIES.iter().map(|(i, _)| i)
}

/// Every read-ahead algorithm, statically dispatched.
pub enum AnyReadAhead {
    Linux(Linux24),
    AccuSim(AccuSim),
    OnDemand(OnDemand),
    Linux6(Linux6),
    Bsd(Bsd),
    Simple(Simple),
}

impl AnyReadAhead {
    #[inline]
    pub fn on_access(&mut self, ev: &BlockEvent, cached: &dyn Fn(u64) -> bool) -> Option<Plan> {
        match self {
            AnyReadAhead::Linux(r) => r.on_access(ev),
            AnyReadAhead::AccuSim(r) => r.on_access(ev),
            AnyReadAhead::OnDemand(r) => r.on_access(ev),
            AnyReadAhead::Linux6(r) => r.on_access_cached(ev, cached),
            AnyReadAhead::Bsd(r) => r.on_access(ev),
            AnyReadAhead::Simple(r) => r.on_access(ev),
        }
    }

    /// A hint (fadvise(WILLNEED), readahead(2)) for the `n` blocks from `first` of `file`, all
    /// inside the file: how many of them, from `first`, to read. Linux 6 reads at most the
    /// file's largest window and logs it; the others read the whole range (Linux 2.x bounded
    /// it only by free memory).
    pub fn on_hint(&mut self, file: u32, first: u64, n: u64, cached: &dyn Fn(u64) -> bool) -> u64 {
        match self {
            AnyReadAhead::Linux6(r) => r.on_hint(file, first, n, cached),
            _ => n,
        }
    }

    /// Whether the algorithm asks about the page cache around an access (`cached` is called).
    pub fn looks_at_cache(&self) -> bool {
        matches!(self, AnyReadAhead::Linux6(_))
    }

    /// Whether the blocks of the current request that a read-ahead reaches are demanded as it
    /// reaches them, before the blocks past the request are read ahead (AccuSim's
    /// `perform_io`: while the request still needs blocks, each block its loop reaches is a
    /// demand reference, so the policy sees the request's blocks demanded in order and only
    /// then the read-ahead). The others read the whole plan ahead and demand the request's
    /// blocks afterwards, in the engine's loop.
    pub fn demands_request_blocks_first(&self) -> bool {
        matches!(self, AnyReadAhead::AccuSim(_))
    }

    /// Decisions kept by an algorithm built with a log (Linux 6 for `bufsim validate`).
    pub fn decisions(&self) -> &[Decision] {
        match self {
            AnyReadAhead::Linux6(r) => r.decisions(),
            _ => &[],
        }
    }
}

/// `min` and `max` of an algorithm that has both: min may not exceed max.
fn min_max(a: &Args) -> Result<(u64, u64), SpecError> {
    let (min, max) = (a.u64("min")?, a.u64("max")?);
    if min > max {
        return Err(a.invalid("min", &format!("min={min} exceeds max={max}")));
    }
    Ok((min, max))
}

/// Builds a read-ahead algorithm from its spec (`linux`, `simple(min=3,max=8)`); `none` gives
/// `None`.
pub fn build(text: &str) -> Result<Option<AnyReadAhead>, SpecError> {
    built(text).map(|(_, _, r)| r)
}

/// The spec `text` names, its registry entry and the algorithm built from it.
fn built(text: &str) -> Result<(Spec, &'static Info, Option<AnyReadAhead>), SpecError> {
    let spec = Spec::parse(text)?;
    let (info, build) = ENTRIES
        .iter()
        .find(|(i, _)| i.is_named(&spec.name))
        .ok_or_else(|| unknown(Kind::Prefetch, &spec.name, all(), "prefetchers"))?;
    let built = build(&Args::new(Kind::Prefetch, info, &spec.args)?)?;
    Ok((spec, info, built))
}

/// The one spelling of a read-ahead spec, as [`crate::policy::registry::canonical`] gives a
/// policy's: the registered name (lower case), the parameters in the order the registry
/// declares them, those equal to their default dropped. `LINUX`, ` linux`, `linux()` and
/// `linux(min=3)` are `linux`; `simple(max=8,min=3)` is `simple`. Sweeps key runs by it, so
/// two spellings of one read-ahead setting are one run, not two rows.
pub fn canonical(text: &str) -> Result<String, SpecError> {
    // Built as a run builds it, so what a run refuses (`simple(min=9,max=8)`) is refused here.
    let (spec, info, _) = built(text)?;
    Ok(crate::policy::registry::spelled(info.name, info.params, &spec.args, |p| p.default))
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::BlockEvent;

    /// A sequential-friendly event: a read of one block of a 1000-block file.
    pub fn ev(block: u64, miss: bool) -> BlockEvent {
        BlockEvent {
            file: 0,
            pid: 0,
            opened: false,
            block,
            file_blocks: 1000,
            miss,
            in_flight: false,
            by_prefetch: !miss,
            request_first: block,
            request_blocks: 1,
            request_asked_blocks: 1,
            request_end: block + 1,
            request_bytes: 4096,
            block_size: 4096,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_read_ahead_spec_has_one_canonical_form() {
        for (spelling, want) in [
            ("none", "none"),
            ("NONE()", "none"),
            ("LINUX", "linux"),
            (" linux ", "linux"),
            ("linux()", "linux"),
            ("linux(min=3)", "linux"),
            ("linux(max=16,min=4)", "linux(min=4,max=16)"),
            ("simple(min=3,max=8)", "simple"),
            ("Linux-6(folios=0)", "linux-6(folios=0)"),
        ] {
            assert_eq!(canonical(spelling).unwrap(), want, "{spelling}");
        }
        assert!(canonical("simple(min=9,max=8)").unwrap_err().to_string().contains("exceeds"));
        assert!(canonical("windows").unwrap_err().to_string().contains("unknown prefetch"));
    }

    #[test]
    fn specs_are_checked() {
        assert!(build("none").unwrap().is_none());
        assert!(build("linux").unwrap().is_some());
        assert!(build("simple(min=3,max=8)").unwrap().is_some());
        for (bad, want) in [
            ("windows", "unknown prefetch"),
            ("linux(mx=3)", "no parameter `mx`"),
            ("linux(min=0)", "from 1 to 4294967296"),
            ("linux(max=4294967297)", "from 1 to 4294967296"),
            ("linux-accusim(min=18446744073709551615,max=18446744073709551615)", "from 1 to 4294967296"),
            ("linux-6(max=18446744073709551615)", "from 1 to 4294967296"),
            ("simple(min=9,max=8)", "exceeds"),
            ("none(min=1)", "no parameter"),
        ] {
            let e = build(bad).err().unwrap().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn plans_stop_at_the_end_of_the_file() {
        assert_eq!(Plan::clipped(8, 5, 10, true).unwrap().len, 2);
        assert!(Plan::clipped(10, 5, 10, true).is_none());
    }
}
