//! Multi-level caches, as the MQ paper studies them (Zhou, Philbin, Li, USENIX 2001, §2 and §5):
//! N clients, each with its own first-level cache, whose misses (and, optionally, write-backs)
//! form the reference stream of one shared second-level cache.
//!
//! The second-level stream is device-addressed: a storage server sees device blocks, not files,
//! so file traces go through the layout first (the same first-touch placement the engine uses)
//! and the stream is a block trace whatever the input was. Consecutive missed blocks of one
//! request that are adjacent on the device travel as one second-level request; the block
//! sequence is exactly the first-level misses in order.

use crate::frames::FrameVec;
use bufsim_trace::{AddressKind, Format, Meter, Op, ReadOptions, Request, TraceError, TraceReader};
use rustc_hash::FxHashMap;

use crate::access::{included, EngineConfig};
use crate::cache::{Cache, Demand};
use crate::layout::{block_key, FileExtents, Layout};
use crate::policy::{build, registry::needs_future, Access, AnyPolicy, BuildEnv, Origin};
use crate::spec::{Size, SpecError};
use crate::SimError;

/// Which trace column tells the clients apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientBy {
    /// One client: the whole trace goes through one first-level cache.
    All,
    /// One client per process id (`pid`): an NFS client, a database instance.
    Pid,
    /// One client per device (block traces: the trace's device or disk number; file traces
    /// have one device). MSR-style traces name a (host, disk) pair as a device.
    Device,
}

impl ClientBy {
    pub const NAMES: [&'static str; 3] = ["all", "pid", "device"];

    pub fn parse(text: &str) -> Result<ClientBy, SpecError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "all" | "none" | "one" => Ok(ClientBy::All),
            "pid" | "process" => Ok(ClientBy::Pid),
            "device" | "disk" | "host" => Ok(ClientBy::Device),
            other => {
                Err(SpecError(format!("unknown client column `{other}`; use one of {}", ClientBy::NAMES.join(", "))))
            }
        }
    }
}

/// What the first level sends down besides read misses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// Every first-level miss, read or write, goes down as itself; write hits stay above.
    Misses,
    /// Write-back first level: writes dirty the block (a write miss allocates it without a
    /// read, whole-block writes as in the engine) and reach the second level only when a dirty
    /// block is evicted, as a one-block write issued just before the miss that evicted it.
    /// Blocks still dirty at the end of the trace are not written.
    WriteBack,
}

impl Forward {
    pub fn parse(text: &str) -> Result<Forward, SpecError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "misses" | "miss" | "write-through" => Ok(Forward::Misses),
            "write-back" | "writeback" => Ok(Forward::WriteBack),
            other => Err(SpecError(format!("unknown write mode `{other}`; use misses or write-back"))),
        }
    }
}

/// The first-level cache of a client: a policy spec and a size (`0` lets everything through).
#[derive(Clone, Debug, PartialEq)]
pub struct LevelSpec {
    pub policy: String,
    pub cache: String,
}

/// The first level of a hierarchy: the same cache for every client unless `per_client` names
/// one (the Auspex setup: LRU 8 MiB per client).
#[derive(Clone, Debug, PartialEq)]
pub struct FirstLevelConfig {
    pub default: LevelSpec,
    pub per_client: Vec<(u64, LevelSpec)>,
    pub client_by: ClientBy,
    pub forward: Forward,
}

impl FirstLevelConfig {
    pub fn new(policy: &str, cache: &str) -> Self {
        FirstLevelConfig {
            default: LevelSpec { policy: policy.into(), cache: cache.into() },
            per_client: Vec::new(),
            client_by: ClientBy::All,
            forward: Forward::Misses,
        }
    }

    fn spec_of(&self, client: u64) -> &LevelSpec {
        self.per_client.iter().find(|(c, _)| *c == client).map(|(_, s)| s).unwrap_or(&self.default)
    }

    /// Refuses an override (`per_client`) of a client the trace did not have: it would do
    /// nothing, silently. `stats` are the clients the trace had, in order of appearance.
    pub fn check_clients(&self, stats: &[ClientStats]) -> Result<(), SpecError> {
        let mut absent: Vec<u64> =
            self.per_client.iter().map(|&(c, _)| c).filter(|c| !stats.iter().any(|s| s.client == *c)).collect();
        if absent.is_empty() {
            return Ok(());
        }
        absent.sort_unstable();
        let mut present: Vec<u64> = stats.iter().map(|s| s.client).collect();
        present.sort_unstable();
        let mut listed = present.iter().take(5).map(u64::to_string).collect::<Vec<_>>().join(", ");
        if present.len() > 5 {
            listed += &format!(" and {} more", present.len() - 5);
        }
        if listed.is_empty() {
            listed = "none".into();
        }
        let column = match self.client_by {
            ClientBy::All => String::new(),
            ClientBy::Pid => " (by pid)".into(),
            ClientBy::Device => " (by device)".into(),
        };
        let (which, verb) = if absent.len() == 1 { ("client", "is") } else { ("clients", "are") };
        let ids = absent.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        Err(SpecError(format!(
            "first-level {which} {ids} {verb} not in the trace{column}; its clients are {listed}: drop the override \
             or name a client the trace has"
        )))
    }

    /// Checks every level spec before any request is read, and with one client (`All`, client
    /// 0) that the overrides name it.
    pub fn validate(&self, cfg: &EngineConfig, seed: u64) -> Result<(), SpecError> {
        if self.client_by == ClientBy::All {
            self.check_clients(&[ClientStats::default()])?;
        }
        for s in std::iter::once(&self.default).chain(self.per_client.iter().map(|(_, s)| s)) {
            level_cache(s, cfg, seed)?;
        }
        Ok(())
    }
}

/// Builds a first-level cache; `None` for a size of zero (the level passes everything down).
fn level_cache(s: &LevelSpec, cfg: &EngineConfig, seed: u64) -> Result<Option<Cache<AnyPolicy>>, SpecError> {
    let blocks =
        Size::parse(&s.cache).map_err(|e| SpecError(format!("first-level cache size: {e}")))?.to_blocks(cfg.block_size);
    if blocks > crate::cache::MAX_FRAMES {
        return Err(SpecError(format!("first-level cache `{}` is 2^31 blocks or more", s.cache)));
    }
    if needs_future(&s.policy) {
        return Err(SpecError(
            "opt cannot be a first-level policy: a client cache does not know the future; use it at the second level"
                .into(),
        ));
    }
    let env = BuildEnv { capacity: blocks.max(1) as usize, block_size: cfg.block_size, seed };
    let policy = build(&s.policy, &env).map_err(|e| SpecError(format!("first-level policy: {e}")))?;
    Ok((blocks > 0).then(|| Cache::new(policy, blocks as usize)))
}

/// Counters of one client's first-level cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub client: u64,
    pub cache_blocks: u64,
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Dirty blocks written to the second level on eviction (write-back mode).
    pub write_backs: u64,
}

struct Client {
    cache: Option<Cache<AnyPolicy>>,
    /// Per frame: the block was written since it came in (write-back mode), and where it lives.
    dirty: FrameVec<bool>,
    place: FrameVec<(u16, u64)>,
    time: u64,
    stats: ClientStats,
}

/// A run of consecutive device blocks with one op, waiting to go down as one request.
#[derive(Clone, Copy)]
struct Run {
    req: Request,
    device: u16,
    start: u64,
    blocks: u64,
}

/// The first level of a hierarchy, turning a trace into the second-level stream.
pub struct FirstLevel<'a> {
    cfg: FirstLevelConfig,
    engine: EngineConfig,
    layout: &'a Layout,
    /// The input names whole blocks (oracleGeneral): the output does too.
    in_blocks: bool,
    seed: u64,
    clients: FxHashMap<u64, Client>,
    /// Client ids in order of first appearance (deterministic reports).
    order: Vec<u64>,
    run: Option<Run>,
}

impl<'a> FirstLevel<'a> {
    /// A first level over requests placed by `layout`. Specs are checked here, before any
    /// request.
    pub fn new(cfg: FirstLevelConfig, engine: EngineConfig, layout: &'a Layout, seed: u64) -> Result<Self, SpecError> {
        cfg.validate(&engine, seed)?;
        Ok(FirstLevel {
            cfg,
            engine,
            layout,
            in_blocks: false,
            seed,
            clients: FxHashMap::default(),
            order: Vec::new(),
            run: None,
        })
    }

    fn client_id(&self, r: &Request, device: u16) -> u64 {
        match self.cfg.client_by {
            ClientBy::All => 0,
            ClientBy::Pid => r.pid as u64,
            ClientBy::Device => device as u64,
        }
    }

    fn client(&mut self, id: u64) -> &mut Client {
        if !self.clients.contains_key(&id) {
            let spec = self.cfg.spec_of(id);
            // Specs were validated in `new`; a seed per client keeps random policies independent.
            let cache = level_cache(spec, &self.engine, self.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .expect("first-level specs are validated when the level is built");
            let blocks = cache.as_ref().map_or(0, |c| c.capacity());
            self.clients.insert(
                id,
                Client {
                    cache,
                    dirty: FrameVec::filled(false, blocks),
                    place: FrameVec::filled((0, 0), blocks),
                    time: 0,
                    stats: ClientStats { client: id, cache_blocks: blocks as u64, ..Default::default() },
                },
            );
            self.order.push(id);
        }
        self.clients.get_mut(&id).expect("inserted above")
    }

    /// Passes one request through its client's cache; second-level requests go to `out` in
    /// order.
    pub fn request(&mut self, r: &Request, out: &mut impl FnMut(Request)) {
        if !included(r, &self.engine) {
            return;
        }
        self.in_blocks = r.in_blocks;
        if r.op.is_drop() {
            self.drop_range(r, out);
            return;
        }
        if r.op.is_hint() {
            self.hint_range(r, out);
            return;
        }
        let write = r.op.is_write();
        let write_back = self.cfg.forward == Forward::WriteBack;
        let (first, n) = r.block_range(self.engine.block_size);
        for b in first..first + n {
            let (device, block) = self.layout.place(r.file, b);
            let id = self.client_id(r, device);
            let client = self.client(id);
            client.stats.accesses += 1;
            let Some(cache) = client.cache.as_mut() else {
                client.stats.misses += 1;
                self.emit(r, r.op, device, block, out);
                continue;
            };
            let a = Access {
                key: block_key(device, block),
                device,
                block,
                time: client.time,
                ctx: r.ctx,
                pid: r.pid,
                write,
                ..Access::default()
            };
            client.time += 1;
            let outcome = cache.demand(&a);
            let hit = matches!(outcome, Demand::Hit | Demand::PrefetchHit);
            let victim = cache.take_victim();
            let frame = cache.frame_of(a.key);
            if hit {
                client.stats.hits += 1;
            } else {
                client.stats.misses += 1;
            }
            let mut flush = None;
            if write_back {
                if let Some((vf, _)) = victim {
                    if std::mem::take(&mut client.dirty[vf as usize]) {
                        client.stats.write_backs += 1;
                        flush = Some(client.place[vf as usize]);
                    }
                }
                if let Some(f) = frame {
                    client.place[f as usize] = (device, block);
                    client.dirty[f as usize] |= write;
                }
            }
            if let Some((vd, vb)) = flush {
                self.flush_run(out);
                self.emit(r, Op::Write, vd, vb, out);
                self.flush_run(out);
            }
            if !hit && (!write || !write_back) {
                self.emit(r, r.op, device, block, out);
            }
        }
        self.flush_run(out);
    }

    /// A drop: the data is gone from every client's cache (dirty or not, nothing is written
    /// back) and from the second level, which is told of each block in the range.
    fn drop_range(&mut self, r: &Request, out: &mut impl FnMut(Request)) {
        let (first, end) = self.layout.dropped_blocks(r, self.engine.block_size);
        for b in first..end {
            let (device, block) = self.layout.place(r.file, b);
            let key = block_key(device, block);
            for id in &self.order {
                let client = self.clients.get_mut(id).expect("listed clients exist");
                let Some(cache) = client.cache.as_mut() else { continue };
                match cache.frame_of(key) {
                    Some(f) => {
                        client.dirty[f as usize] = false;
                        cache.drop_frame(f);
                    }
                    None => cache.forget(key),
                }
            }
            self.emit(r, Op::Drop, device, block, out);
        }
        self.flush_run(out);
    }

    /// A hint (fadvise(WILLNEED)): the client's cache reads the blocks of the range it does not
    /// hold, as read ahead (neither counted as accesses nor marked used), and the second level
    /// sees those reads; a client without a cache passes the hint down.
    fn hint_range(&mut self, r: &Request, out: &mut impl FnMut(Request)) {
        let (first, end) = self.layout.hinted_blocks(r, self.engine.block_size, None);
        let write_back = self.cfg.forward == Forward::WriteBack;
        for b in first..end {
            let (device, block) = self.layout.place(r.file, b);
            let id = self.client_id(r, device);
            let client = self.client(id);
            let Some(cache) = client.cache.as_mut() else {
                self.emit(r, Op::Hint, device, block, out);
                continue;
            };
            let key = block_key(device, block);
            if cache.contains(key) {
                continue;
            }
            let a = Access {
                key,
                device,
                block,
                time: client.time,
                ctx: r.ctx,
                pid: r.pid,
                write: false,
                ..Access::default()
            };
            let Some(frame) = cache.insert(&a, Origin::Prefetch) else { continue };
            let mut flush = None;
            if let Some((vf, _)) = cache.take_victim() {
                if write_back && std::mem::take(&mut client.dirty[vf as usize]) {
                    client.stats.write_backs += 1;
                    flush = Some(client.place[vf as usize]);
                }
            }
            client.place[frame as usize] = (device, block);
            client.dirty[frame as usize] = false;
            if let Some((vd, vb)) = flush {
                self.flush_run(out);
                self.emit(r, Op::Write, vd, vb, out);
                self.flush_run(out);
            }
            self.emit(r, Op::Read, device, block, out);
        }
        self.flush_run(out);
    }

    /// Queues one block for the second level, joining the pending run when it continues it.
    fn emit(&mut self, r: &Request, op: Op, device: u16, block: u64, out: &mut impl FnMut(Request)) {
        if let Some(run) = &mut self.run {
            if run.req.op == op && run.device == device && run.start.checked_add(run.blocks) == Some(block) {
                run.blocks += 1;
                return;
            }
        }
        self.flush_run(out);
        let mut req = *r;
        req.op = op;
        self.run = Some(Run { req, device, start: block, blocks: 1 });
    }

    fn flush_run(&mut self, out: &mut impl FnMut(Request)) {
        if let Some(run) = self.run.take() {
            let bs = self.engine.block_size;
            let (offset, size, in_blocks) =
                if self.in_blocks { (run.start, run.blocks, true) } else { (run.start * bs, run.blocks * bs, false) };
            out(Request { dur_ns: 0, file: run.device as u32, offset, size, in_blocks, ..run.req });
        }
    }

    /// Per-client counters, in order of first appearance.
    pub fn stats(&self) -> Vec<ClientStats> {
        self.order.iter().map(|id| self.clients[id].stats).collect()
    }
}

/// Streams the trace at `path` through the first level and hands every second-level request to
/// `out`, in order; returns the first level's counters. File traces are read twice (once for
/// the file sizes the layout needs), in constant memory.
pub fn filter_file(
    path: &str,
    format: Option<Format>,
    cfg: &FirstLevelConfig,
    engine: &EngineConfig,
    seed: u64,
    meter: &Meter,
    mut out: impl FnMut(&Request) -> Result<(), TraceError>,
) -> Result<Vec<ClientStats>, SimError> {
    cfg.validate(engine, seed)?;
    let format = bufsim_trace::resolve(path, format)?;
    let layout = match format.address_kind() {
        AddressKind::Device => Layout::Identity,
        AddressKind::File => {
            let mut ext = FileExtents::default();
            let sizes = ReadOptions { meter: meter.quiet(), ..ReadOptions::default() };
            for r in TraceReader::open_with(path, Some(format), &sizes)? {
                ext.push(&r?, engine.block_size);
            }
            Layout::first_touch(&ext.finish(), 0)?
        }
    };
    let mut level = FirstLevel::new(cfg.clone(), *engine, &layout, seed)?;
    let mut failed: Option<TraceError> = None;
    let mut reader =
        TraceReader::open_with(path, Some(format), &ReadOptions { meter: meter.clone(), ..ReadOptions::default() })?;
    while let Some(r) = reader.next_request()? {
        level.request(&r, &mut |x| {
            if failed.is_none() {
                failed = out(&x).err();
            }
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
    }
    let stats = level.stats();
    cfg.check_clients(&stats)?;
    Ok(stats)
}

/// The second-level stream of requests already in memory, with the first level's counters.
/// The stream is a block trace ([`AddressKind::Device`]).
pub fn second_level(
    requests: &[Request],
    kind: AddressKind,
    cfg: &FirstLevelConfig,
    engine: &EngineConfig,
    seed: u64,
) -> Result<(Vec<Request>, Vec<ClientStats>), SpecError> {
    let layout = Layout::for_trace(kind, requests.iter(), engine.block_size)?;
    let mut level = FirstLevel::new(cfg.clone(), *engine, &layout, seed)?;
    let mut out = Vec::new();
    for r in requests {
        level.request(r, &mut |x| out.push(x));
    }
    let stats = level.stats();
    cfg.check_clients(&stats)?;
    Ok((out, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(file: u32, block: u64) -> Request {
        Request {
            time_ns: 0,
            dur_ns: 0,
            pid: file,
            ctx: 0,
            op: Op::Read,
            file,
            offset: block * 4096,
            size: 4096,
            in_blocks: false,
            unfilled: 0,
            opened: false,
        }
    }

    fn blocks(stream: &[Request]) -> Vec<(u32, u64, Op)> {
        stream.iter().flat_map(|r| (0..r.size / 4096).map(move |i| (r.file, r.offset / 4096 + i, r.op))).collect()
    }

    #[test]
    fn lru_first_level_passes_only_misses_down() {
        // LRU of 2 blocks over 1 2 1 3 1 2: misses 1 2 3 2 (1 stays, 2 was evicted by 3).
        let reqs: Vec<Request> = [1, 2, 1, 3, 1, 2].iter().map(|&b| read(0, b)).collect();
        let cfg = FirstLevelConfig::new("lru", "2blocks");
        let (l2, stats) = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap();
        assert_eq!(blocks(&l2).iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 2, 3, 2]);
        assert_eq!((stats[0].hits, stats[0].misses), (2, 4));
    }

    #[test]
    fn consecutive_misses_of_one_request_travel_together() {
        let mut r = read(0, 10);
        r.size = 4 * 4096;
        let reqs = vec![read(0, 11), r];
        let (l2, _) = second_level(
            &reqs,
            AddressKind::Device,
            &FirstLevelConfig::new("lru", "8blocks"),
            &EngineConfig::default(),
            1,
        )
        .unwrap();
        // 11 is cached: 10 goes alone, then 12..14 together.
        assert_eq!(
            l2.iter().map(|r| (r.offset / 4096, r.size / 4096)).collect::<Vec<_>>(),
            vec![(11, 1), (10, 1), (12, 2)]
        );
    }

    #[test]
    fn clients_have_their_own_caches() {
        // Two pids reading the same block: each misses once.
        let mut reqs = vec![read(0, 5), read(0, 5)];
        reqs[1].pid = 9;
        let mut cfg = FirstLevelConfig::new("lru", "4blocks");
        cfg.client_by = ClientBy::Pid;
        cfg.per_client = vec![(9, LevelSpec { policy: "fifo".into(), cache: "0blocks".into() })];
        let (l2, stats) = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap();
        assert_eq!(l2.len(), 2);
        assert_eq!(stats.iter().map(|s| (s.client, s.cache_blocks)).collect::<Vec<_>>(), vec![(0, 4), (9, 0)]);
    }

    #[test]
    fn an_override_of_a_client_the_trace_lacks_is_refused() {
        let mut reqs = vec![read(0, 5), read(0, 6)];
        reqs[1].pid = 9;
        let mut cfg = FirstLevelConfig::new("lru", "4blocks");
        cfg.client_by = ClientBy::Pid;
        cfg.per_client = vec![(7, LevelSpec { policy: "fifo".into(), cache: "0blocks".into() })];
        let e = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap_err();
        assert!(e.to_string().contains("client 7 is not in the trace (by pid); its clients are 0, 9"), "{e}");
        // One client: only client 0 exists, and that is known before the trace is read.
        cfg.client_by = ClientBy::All;
        let e = cfg.validate(&EngineConfig::default(), 1).unwrap_err();
        assert!(e.to_string().contains("client 7 is not in the trace; its clients are 0"), "{e}");
    }

    #[test]
    fn write_back_sends_dirty_victims_before_the_miss_that_evicts_them() {
        let mut w = read(0, 1);
        w.op = Op::Write;
        // W1 (dirty, nothing sent), R2, R3 evicts 1 (LRU of 2): write 1, then read 3.
        let reqs = vec![w, read(0, 2), read(0, 3)];
        let mut cfg = FirstLevelConfig::new("lru", "2blocks");
        cfg.forward = Forward::WriteBack;
        let (l2, stats) = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap();
        assert_eq!(blocks(&l2), vec![(0, 2, Op::Read), (0, 1, Op::Write), (0, 3, Op::Read)]);
        assert_eq!(stats[0].write_backs, 1);
        // In miss mode the write miss itself goes down and nothing is written back.
        cfg.forward = Forward::Misses;
        let (l2, _) = second_level(&reqs, AddressKind::Device, &cfg, &EngineConfig::default(), 1).unwrap();
        assert_eq!(blocks(&l2), vec![(0, 1, Op::Write), (0, 2, Op::Read), (0, 3, Op::Read)]);
    }

    #[test]
    fn file_traces_come_out_device_addressed() {
        // Files a (3 blocks) and b: b's block 0 sits after a on the device.
        let reqs = vec![read(0, 2), read(1, 0)];
        let (l2, _) = second_level(
            &reqs,
            AddressKind::File,
            &FirstLevelConfig::new("lru", "0blocks"),
            &EngineConfig::default(),
            1,
        )
        .unwrap();
        assert_eq!(blocks(&l2).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(), vec![(0, 2), (0, 3)]);
    }

    #[test]
    fn bad_specs_are_refused_before_any_request() {
        let e = |c: FirstLevelConfig| {
            second_level(&[], AddressKind::Device, &c, &EngineConfig::default(), 1).unwrap_err().to_string()
        };
        assert!(e(FirstLevelConfig::new("lur", "4blocks")).contains("first-level policy: unknown policy"));
        assert!(e(FirstLevelConfig::new("opt", "4blocks")).contains("opt cannot be a first-level policy"));
        assert!(e(FirstLevelConfig::new("lru", "lots")).contains("first-level cache size"));
        assert!(ClientBy::parse("host").is_ok() && ClientBy::parse("tenant").is_err());
    }
}
