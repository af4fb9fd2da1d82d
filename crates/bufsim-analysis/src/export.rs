//! Writes a trace in libCacheSim's formats (its oracleGeneral binary and its csv), so the same
//! stream can be replayed by libCacheSim and the two simulators cross-checked.
//!
//! libCacheSim caches whole objects; bufsim caches blocks. Each block access the engine makes
//! (the same expansion as [`crate::access::walk`]: `reads_only` filtering, `block_size` blocks,
//! the first-touch layout of file traces) becomes one object access, the object id being the
//! engine's cache key (a device-0 block's number is the block number itself) and its size the
//! block size. Times are whole seconds, as libCacheSim keeps them. Read back by bufsim (formats
//! `oracle` and `lcs-csv`), the stream is the same block stream, so every policy counts the
//! same hits and misses.
//!
//! oracleGeneral records carry the number of the record that next accesses the same object
//! (libCacheSim's Belady reads it): a first pass over the trace finds them, holding one 8-byte
//! slot per access (as OPT's own pre-pass does), and a second pass writes the records. An input
//! that cannot be read twice (standard input, a pipe) is refused for it; the csv needs one pass.

use std::io::BufWriter;

use rustc_hash::FxHashMap;

use bufsim_core::engine::EngineConfig;
use bufsim_core::run::resolve_format;
use bufsim_core::trace::{
    check_not_input, not_rewindable, rewindable, write_atomically, Format, LcsCsvWriter, Meter, OracleWriter, Request,
    TraceError,
};
use bufsim_core::SimError;

use crate::access::{walk, BlockAccess, Source, Visitor};

/// libCacheSim's formats bufsim writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcsFormat {
    /// The oracleGeneral binary (`format=oracle` when read back).
    Oracle,
    /// The csv with a `time,obj_id,obj_size,op` header (`format=lcs-csv` when read back).
    Csv,
}

/// What an export read and wrote.
#[derive(Clone, Debug)]
pub struct ExportSummary {
    pub format: Format,
    /// Records written: one per block access.
    pub records: u64,
    pub bytes: u64,
    /// Drop requests of the input (truncated or deleted files) the output cannot hold:
    /// libCacheSim's formats have accesses only.
    pub drops: u64,
    /// Hint requests of the input (fadvise(WILLNEED)) the output cannot hold either.
    pub hints: u64,
}

/// Requests of the input that are not accesses, passed over by an export.
#[derive(Clone, Copy, Debug, Default)]
struct LeftOut {
    drops: u64,
    hints: u64,
}

/// Writes the trace at `input` (in `format`, or detected) to `output` in libCacheSim's `to`
/// format, block accesses expanded as `engine` says. The output appears only when complete.
pub fn export_lcs(
    input: &str,
    format: Option<Format>,
    output: &str,
    to: LcsFormat,
    engine: &EngineConfig,
    meter: &Meter,
) -> Result<ExportSummary, SimError> {
    bufsim_core::run::check_block_size(engine.block_size)?;
    let size = u32::try_from(engine.block_size).map_err(|_| {
        bufsim_core::spec::SpecError(format!(
            "block size {} is over libCacheSim's 32-bit object size; use a smaller --block-size",
            engine.block_size
        ))
    })?;
    check_not_input(input, output)?;
    if to == LcsFormat::Oracle && !rewindable(input) {
        return Err(not_rewindable(input, "writing oracleGeneral (its next-access times)").into());
    }
    if !rewindable(input) {
        // One pass over a pipe: its requests are kept in memory for the walk (a file trace's
        // layout needs a pass of its own).
        let loaded = bufsim_core::run::LoadedTrace::load_with(
            input,
            format,
            &bufsim_core::trace::ReadOptions { meter: meter.clone(), ..Default::default() },
        )?;
        let source = Source::Memory { requests: &loaded.requests, kind: loaded.format.address_kind(), meter };
        let (records, bytes, left) = write_csv(&source, output, engine, size)?;
        return Ok(ExportSummary { format: loaded.format, records, bytes, drops: left.drops, hints: left.hints });
    }
    let format = resolve_format(input, format)?;
    let source = Source::File { path: input, format, meter };
    let (records, bytes, left) = match to {
        LcsFormat::Csv => write_csv(&source, output, engine, size)?,
        LcsFormat::Oracle => write_oracle(&source, output, engine, size)?,
    };
    Ok(ExportSummary { format, records, bytes, drops: left.drops, hints: left.hints })
}

fn seconds(time_ns: u64) -> u64 {
    time_ns / 1_000_000_000
}

/// Remembers the request whose block accesses follow (they carry its time).
struct Timed<F: FnMut(u64, &BlockAccess) -> Result<(), TraceError>> {
    time_s: u64,
    each: F,
    failed: Option<TraceError>,
    /// Drop and hint requests passed over: libCacheSim's formats have no way to say data is
    /// gone or wanted soon.
    left: LeftOut,
}

impl<F: FnMut(u64, &BlockAccess) -> Result<(), TraceError>> Visitor for Timed<F> {
    fn request(&mut self, r: &Request) {
        self.time_s = seconds(r.time_ns);
    }

    fn dropped(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {
        self.left.drops += 1;
    }

    fn hinted(&mut self, _r: &Request, _keys: &mut dyn Iterator<Item = u64>) {
        self.left.hints += 1;
    }

    fn access(&mut self, a: &BlockAccess) {
        if self.failed.is_none() {
            if let Err(e) = (self.each)(self.time_s, a) {
                self.failed = Some(e);
            }
        }
    }
}

/// Calls `each` on every block access of `source`; returns the drops and hints passed over.
fn each_access(
    source: &Source,
    engine: &EngineConfig,
    each: impl FnMut(u64, &BlockAccess) -> Result<(), TraceError>,
) -> Result<LeftOut, TraceError> {
    let mut v = Timed { time_s: 0, each, failed: None, left: LeftOut::default() };
    walk(source, engine, &mut v)?;
    v.failed.map_or(Ok(v.left), Err)
}

/// Writes libCacheSim's csv; returns the records and bytes written and the drops and hints
/// passed over.
fn write_csv(
    source: &Source,
    output: &str,
    engine: &EngineConfig,
    size: u32,
) -> Result<(u64, u64, LeftOut), TraceError> {
    let mut drops = LeftOut::default();
    let (records, bytes) = write_atomically(output, source.meter(), |file| {
        let mut w = LcsCsvWriter::new(BufWriter::with_capacity(1 << 20, file), output)?;
        drops = each_access(source, engine, |t, a| w.write(t, a.key, size, a.write))?;
        let (out, n) = w.finish()?;
        Ok((out.into_inner().map_err(|e| TraceError::io(output, e.error()))?, n))
    })?;
    Ok((records, bytes, drops))
}

/// Writes libCacheSim's oracleGeneral; returns what [`write_csv`] returns.
fn write_oracle(
    source: &Source,
    output: &str,
    engine: &EngineConfig,
    size: u32,
) -> Result<(u64, u64, LeftOut), TraceError> {
    // Pass 1: each access's next access, as a 1-based record number (-1: none).
    let mut next: Vec<i64> = Vec::new();
    let mut last: FxHashMap<u64, usize> = FxHashMap::default();
    let drops = each_access(source, engine, |_, a| {
        let i = next.len();
        if let Some(prev) = last.insert(a.key, i) {
            next[prev] = i as i64 + 1;
        }
        next.push(-1);
        Ok(())
    })?;
    drop(last);
    // Pass 2: the records.
    let (records, bytes) = write_atomically(output, source.meter(), |file| {
        let mut w = OracleWriter::new(BufWriter::with_capacity(1 << 20, file), output);
        let mut i = 0usize;
        each_access(source, engine, |t, a| {
            let n = next.get(i).copied().ok_or_else(|| {
                TraceError::unknown_format(
                    source_name(source),
                    "changed while it was read twice; convert a copy that stays put",
                )
            })?;
            i += 1;
            w.write(u32::try_from(t).unwrap_or(u32::MAX), a.key, size, n)
        })?;
        if i != next.len() {
            return Err(TraceError::unknown_format(
                source_name(source),
                "changed while it was read twice; convert a copy that stays put",
            ));
        }
        let (out, n) = w.finish()?;
        Ok((out.into_inner().map_err(|e| TraceError::io(output, e.error()))?, n))
    })?;
    Ok((records, bytes, drops))
}

fn source_name<'a>(source: &Source<'a>) -> &'a str {
    match source {
        Source::File { path, .. } => path,
        Source::Memory { .. } => "-",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bufsim_core::trace::{TraceReader, ORACLE_RECORD};

    fn trace(dir: &std::path::Path, blocks: &[u64]) -> String {
        let p = dir.join("t.csv");
        let mut text = String::from("op,file,offset,size,time_us\n");
        for (i, b) in blocks.iter().enumerate() {
            text += &format!("R,f,{},4096,{}\n", b * 4096, i as u64 * 1_500_000);
        }
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn oracle_records_point_at_the_next_access() {
        let dir = std::env::temp_dir().join(format!("bufsim-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = trace(&dir, &[5, 7, 5, 9, 7, 5]);
        let out = dir.join("t.oracleGeneral").to_string_lossy().into_owned();
        let s = export_lcs(&input, None, &out, LcsFormat::Oracle, &EngineConfig::default(), &Meter::default()).unwrap();
        assert_eq!(s.records, 6);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len(), 6 * ORACLE_RECORD);
        let field = |r: usize, a: usize, b: usize| &bytes[r * ORACLE_RECORD + a..r * ORACLE_RECORD + b];
        let next: Vec<i64> = (0..6).map(|r| i64::from_le_bytes(field(r, 16, 24).try_into().unwrap())).collect();
        assert_eq!(next, vec![3, 5, 6, -1, -1, -1]);
        let times: Vec<u32> = (0..6).map(|r| u32::from_le_bytes(field(r, 0, 4).try_into().unwrap())).collect();
        assert_eq!(times, vec![0, 1, 3, 4, 6, 7]);
        let mut r = TraceReader::open(&out, None).unwrap();
        let mut blocks = Vec::new();
        while let Some(q) = r.next_request().unwrap() {
            blocks.push(q.offset);
        }
        assert_eq!(blocks, vec![5, 7, 5, 9, 7, 5]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
