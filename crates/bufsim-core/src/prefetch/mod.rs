//! Kernel read-ahead: which blocks of a file to fetch besides the one demanded.
//!
//! A read-ahead algorithm sees every demand block access of a read (prefetching paper §2: the
//! kernel only prefetches for reads) and answers with a [`Plan`]: a run of following blocks of
//! the same file to fetch, synchronously (with the demanded block) or asynchronously. The engine
//! carries the plan out through the cache, pinning the blocks fetched together so they never
//! evict each other (§4), and hands the blocks it reads to the I/O clusterer.
//!
//! State is per file (per device for block traces), indexed by the dense file id.

mod bsd;
mod linux;
mod linux6;
mod ondemand;
mod simple;

pub use bsd::Bsd;
pub use linux::Linux24;
pub use linux6::{Decision, Linux6};
pub use ondemand::OnDemand;
pub use simple::Simple;

use bufsim_config::{Spec, SpecError};

/// One demand block access, as a read-ahead algorithm sees it.
#[derive(Clone, Copy, Debug)]
pub struct BlockEvent {
    pub file: u32,
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
    /// The block holding the byte right after the request (Linux's prev_pos >> PAGE_SHIFT once
    /// the read is done): `request_first + request_blocks` unless the request ends mid-block.
    pub request_end: u64,
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

/// A registered read-ahead algorithm, for `bufsim prefetchers` and the docs.
pub struct PrefetchInfo {
    pub name: &'static str,
    pub paper: &'static str,
    pub params: &'static [(&'static str, &'static str, &'static str)],
}

pub const PREFETCHERS: &[PrefetchInfo] = &[
    PrefetchInfo { name: "none", paper: "no read-ahead: only demanded blocks are read", params: &[] },
    PrefetchInfo {
        name: "linux",
        paper: "Linux 2.4 read-ahead groups and windows, prefetching paper §2.1",
        params: &[
            ("min", "3", "blocks of a synchronous (conservative) read-ahead"),
            ("max", "32", "largest read-ahead group, in blocks"),
        ],
    },
    PrefetchInfo {
        name: "linux-ondemand",
        paper:
            "Linux 2.6.23+ on-demand read-ahead (mm/readahead.c): window from the request size, ramp-up, async marker",
        params: &[("max", "32", "largest window, in blocks (128 KiB of 4 KiB pages)")],
    },
    PrefetchInfo {
        name: "linux-6",
        paper: "Linux 6.x read-ahead (mm/readahead.c, mm/filemap.c of 6.18): on-demand windows, PG_readahead markers, context read-ahead from the page cache, large-folio alignment",
        params: &[
            ("max", "32", "largest window, in blocks: the device's read_ahead_kb / 4 (128 KiB by default)"),
            ("folios", "1", "1: large folios (ext4, XFS) place the marker and align windows; 0: single pages"),
        ],
    },
    PrefetchInfo {
        name: "bsd",
        paper: "4.4BSD clustered read-ahead, prefetching paper §2.2",
        params: &[("max", "32", "largest read-ahead, in blocks (the cluster maximum)")],
    },
    PrefetchInfo {
        name: "simple",
        paper: "the simplified prefetcher of the prefetching paper's Table 1 (§3)",
        params: &[
            ("min", "3", "blocks fetched on a miss, the demanded one included"),
            ("max", "8", "blocks fetched when the stream looks sequential"),
        ],
    },
];

/// Every read-ahead algorithm, statically dispatched.
pub enum AnyReadAhead {
    Linux(Linux24),
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
            AnyReadAhead::OnDemand(r) => r.on_access(ev),
            AnyReadAhead::Linux6(r) => r.on_access_cached(ev, cached),
            AnyReadAhead::Bsd(r) => r.on_access(ev),
            AnyReadAhead::Simple(r) => r.on_access(ev),
        }
    }

    /// Whether the algorithm asks about the page cache around an access (`cached` is called).
    pub fn looks_at_cache(&self) -> bool {
        matches!(self, AnyReadAhead::Linux6(_))
    }

    /// Decisions kept by an algorithm built with a log (Linux 6 for `bufsim validate`).
    pub fn decisions(&self) -> &[Decision] {
        match self {
            AnyReadAhead::Linux6(r) => r.decisions(),
            _ => &[],
        }
    }
}

fn blocks_arg(spec: &Spec, name: &str, default: u64) -> Result<u64, SpecError> {
    match spec.args.iter().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, v)) => v.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
            SpecError(format!("prefetch `{}`: {name}=`{v}` must be a whole number of blocks, at least 1", spec.name))
        }),
    }
}

/// Builds a read-ahead algorithm from its spec (`linux`, `simple(min=3,max=8)`); `none` gives
/// `None`.
pub fn build(text: &str) -> Result<Option<AnyReadAhead>, SpecError> {
    let spec = Spec::parse(text)?;
    let info = PREFETCHERS.iter().find(|p| p.name == spec.name).ok_or_else(|| {
        let names: Vec<&str> = PREFETCHERS.iter().map(|p| p.name).collect();
        SpecError(format!("unknown prefetch `{}`; use one of {}", spec.name, names.join(", ")))
    })?;
    for (k, _) in &spec.args {
        if !info.params.iter().any(|(n, _, _)| n == k) {
            let known: Vec<&str> = info.params.iter().map(|p| p.0).collect();
            return Err(SpecError(format!(
                "prefetch `{}` has no parameter `{k}`{}",
                spec.name,
                if known.is_empty() { String::new() } else { format!("; it takes {}", known.join(", ")) }
            )));
        }
    }
    let default = |n: &str| info.params.iter().find(|p| p.0 == n).map(|p| p.1.parse::<u64>().unwrap()).unwrap();
    Ok(match info.name {
        "none" => None,
        "linux" => {
            let (min, max) = (blocks_arg(&spec, "min", default("min"))?, blocks_arg(&spec, "max", default("max"))?);
            if min > max {
                return Err(SpecError(format!("prefetch `linux`: min={min} exceeds max={max}")));
            }
            Some(AnyReadAhead::Linux(Linux24::new(min, max)))
        }
        "linux-ondemand" => Some(AnyReadAhead::OnDemand(OnDemand::new(blocks_arg(&spec, "max", default("max"))?))),
        "linux-6" => {
            let folios = match spec.args.iter().find(|(k, _)| k == "folios").map(|(_, v)| v.as_str()) {
                None | Some("1") => true,
                Some("0") => false,
                Some(v) => return Err(SpecError(format!("prefetch `linux-6`: folios=`{v}` must be 0 or 1"))),
            };
            Some(AnyReadAhead::Linux6(Linux6::new(blocks_arg(&spec, "max", default("max"))?, folios)))
        }
        "bsd" => Some(AnyReadAhead::Bsd(Bsd::new(blocks_arg(&spec, "max", default("max"))?))),
        "simple" => {
            let (min, max) = (blocks_arg(&spec, "min", default("min"))?, blocks_arg(&spec, "max", default("max"))?);
            if min > max {
                return Err(SpecError(format!("prefetch `simple`: min={min} exceeds max={max}")));
            }
            Some(AnyReadAhead::Simple(Simple::new(min, max)))
        }
        _ => unreachable!(),
    })
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::BlockEvent;

    /// A sequential-friendly event: a read of one block of a 1000-block file.
    pub fn ev(block: u64, miss: bool) -> BlockEvent {
        BlockEvent {
            file: 0,
            block,
            file_blocks: 1000,
            miss,
            in_flight: false,
            by_prefetch: !miss,
            request_first: block,
            request_blocks: 1,
            request_end: block + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_checked() {
        assert!(build("none").unwrap().is_none());
        assert!(build("linux").unwrap().is_some());
        assert!(build("simple(min=3,max=8)").unwrap().is_some());
        for (bad, want) in [
            ("windows", "unknown prefetch"),
            ("linux(mx=3)", "no parameter `mx`"),
            ("linux(min=0)", "at least 1"),
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
