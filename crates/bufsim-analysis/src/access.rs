//! Block accesses exactly as the engine sees them: requests filtered by `reads_only`, split into
//! blocks of `block_size` bytes, placed by the same layout (identity for block traces, first-touch
//! for file traces, prefetching paper §5.1) and keyed by `block_key`. A test pins this expansion
//! to `bufsim_core::run::block_keys`, so analyses and simulations always count the same stream.

use bufsim_core::engine::{included, EngineConfig};
use bufsim_core::layout::{block_key, FileExtents, Layout};
use bufsim_core::trace::progress::{Ticker, IN_MEMORY};
use bufsim_core::trace::{AddressKind, Format, Location, Meter, ReadOptions, Request, TraceError, TraceReader};

/// One demand access to one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAccess {
    /// The cache key (device and device block packed, as the engine keys its cache).
    pub key: u64,
    /// File (file traces) or device (block traces) of the request.
    pub file: u32,
    /// Block number within `file`, before the layout places it.
    pub file_block: u64,
    pub write: bool,
    /// Program context of the request (AMP), 0 if the trace has none.
    pub ctx: u64,
    pub pid: u32,
}

/// What an analysis is told: every simulated request, then each of its block accesses in order.
pub trait Visitor {
    /// A request the engine simulates (after `reads_only` filtering), before its blocks.
    fn request(&mut self, _r: &Request) {}
    fn access(&mut self, a: &BlockAccess);
    /// Drop request `r` (a file truncated or deleted) removed the data of these blocks, by
    /// cache key: they are gone from any cache, as if never accessed. A drop is
    /// not a request, and its blocks are not accesses.
    fn dropped(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {}
    /// Hint request `r` (fadvise(WILLNEED)) asked for these blocks, by cache key, to be read
    /// ahead (as far as the file's extent). A hint is not a request, and its blocks are not
    /// accesses.
    fn hinted(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {}
}

/// Where requests come from: a trace file read as a stream, or requests already in memory.
/// Each pass counts its progress on `meter` (bytes read of the file, or requests).
#[derive(Clone, Copy)]
pub enum Source<'a> {
    File { path: &'a str, format: Format, meter: &'a Meter },
    Memory { requests: &'a [Request], kind: AddressKind, meter: &'a Meter },
}

impl<'a> Source<'a> {
    /// The same requests, counting progress on `meter` instead.
    pub fn with_meter<'b>(&self, meter: &'b Meter) -> Source<'b>
    where
        'a: 'b,
    {
        match *self {
            Source::File { path, format, .. } => Source::File { path, format, meter },
            Source::Memory { requests, kind, .. } => Source::Memory { requests, kind, meter },
        }
    }

    /// Where the passes count their progress and learn of a cancellation.
    pub fn meter(&self) -> &'a Meter {
        match *self {
            Source::File { meter, .. } | Source::Memory { meter, .. } => meter,
        }
    }

    fn kind(&self) -> AddressKind {
        match self {
            Source::File { format, .. } => format.address_kind(),
            Source::Memory { kind, .. } => *kind,
        }
    }

    /// Calls `f` on every request of the trace, in order.
    pub fn for_each_request(&self, mut f: impl FnMut(&Request)) -> Result<(), TraceError> {
        match self {
            Source::File { path, format, meter } => {
                let read = ReadOptions { meter: (*meter).clone(), ..Default::default() };
                let mut reader = TraceReader::open_with(path, Some(*format), &read)?;
                while let Some(r) = reader.next_request()? {
                    f(&r);
                }
            }
            Source::Memory { requests, meter, .. } => {
                meter.stage("analyzing the trace in memory", "request", requests.len() as u64);
                let mut ticks = Ticker::new(meter, IN_MEMORY);
                for r in requests.iter() {
                    ticks.tick()?;
                    f(r);
                }
            }
        }
        Ok(())
    }
}

/// The engine's layout for `source`: file traces need a pass to learn each file's size (the
/// engine's own pre-pass, with the same rule: a file spans up to the highest block it touches).
pub fn layout(source: &Source, cfg: &EngineConfig) -> Result<Layout, TraceError> {
    if source.kind() == AddressKind::Device {
        return Ok(Layout::Identity);
    }
    let mut extents = FileExtents::default();
    source.for_each_request(|r| extents.push(r, cfg.block_size))?;
    Layout::first_touch(&extents.finish(), 0).map_err(|e| {
        let path = match source {
            Source::File { path, .. } => path,
            Source::Memory { .. } => "the trace",
        };
        TraceError::malformed(path, Location::File, e.0)
    })
}

/// Streams every block access of `source` to `visitor` (one pass, or two for file traces).
pub fn walk<V: Visitor>(source: &Source, cfg: &EngineConfig, visitor: &mut V) -> Result<(), TraceError> {
    let layout = layout(source, cfg)?;
    source.for_each_request(|r| {
        if !included(r, cfg) {
            return;
        }
        if r.op.is_drop() {
            let (first, end) = layout.dropped_blocks(r, cfg.block_size);
            visitor.dropped(
                r,
                &mut (first..end).map(|b| {
                    let (device, block) = layout.place(r.file, b);
                    block_key(device, block)
                }),
            );
            return;
        }
        if r.op.is_hint() {
            let (first, end) = layout.hinted_blocks(r, cfg.block_size, None);
            visitor.hinted(
                r,
                &mut (first..end).map(|b| {
                    let (device, block) = layout.place(r.file, b);
                    block_key(device, block)
                }),
            );
            return;
        }
        visitor.request(r);
        let (first, n) = r.block_range(cfg.block_size);
        let write = r.op.is_write();
        for b in first..first + n {
            let (device, block) = layout.place(r.file, b);
            visitor.access(&BlockAccess {
                key: block_key(device, block),
                file: r.file,
                file_block: b,
                write,
                ctx: r.ctx,
                pid: r.pid,
            });
        }
    })
}

/// Collects the cache keys of a source (tests, small traces).
pub fn keys(source: &Source, cfg: &EngineConfig) -> Result<Vec<u64>, TraceError> {
    struct Keys(Vec<u64>);
    impl Visitor for Keys {
        fn access(&mut self, a: &BlockAccess) {
            self.0.push(a.key);
        }
    }
    let mut k = Keys(Vec::new());
    walk(source, cfg, &mut k)?;
    Ok(k.0)
}
