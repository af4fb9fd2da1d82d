//! Synthetic traces from a generator spec and a seed (`amp-c`, `amp-mix(loop1=1500)`,
//! `sa-trace1`): the papers' constructed workloads, as requests, or written as bufsim's
//! interchange CSV so every reader and tool can use them. The same spec and seed give the same
//! trace.

pub mod amp;
pub mod dulo;
pub mod storage;

use std::io::{self, BufWriter, Write};

use bufsim_config::registry::{unknown, Args, Info, Kind};
use bufsim_config::{Spec, SpecError};

use crate::error::{Cancelled, TraceError};
use crate::progress::Meter;
use crate::request::Request;

/// Requests generated or lines written between two looks at the cancel flag.
pub(crate) const CANCEL_CHECK: usize = 1 << 16;

/// A generated trace: requests over named files, in blocks of [`BLOCK`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Synthetic {
    pub requests: Vec<Request>,
    /// Name of each file, indexed by `Request::file`.
    pub file_names: Vec<String>,
}

/// Bytes per block of generated traces (each request reads one block).
pub const BLOCK: u64 = 4096;

/// The most blocks a generated file or volume spans (4 PiB): parameters that size one are
/// bounded by it, so every offset (block x [`BLOCK`]) stays far from overflowing 64 bits.
pub const MAX_BLOCKS: u64 = 1 << 40;

/// One generator: an entry of the shared registry shape.
pub type GeneratorInfo = Info;

/// A family of generators: their list and the function that builds any of them.
///
/// Each stops early once the meter's work is cancelled, with the trace cut short.
type Family = (&'static [Info], fn(&Info, &Args, u64, &Meter) -> Result<Synthetic, SpecError>);

/// AMP's streams, DULO's mixed workload, then storage-aware caching's traces.
const FAMILIES: &[Family] =
    &[(amp::GENERATORS, amp::generate), (dulo::GENERATORS, dulo::generate), (storage::GENERATORS, storage::generate)];

/// Every generator, in the order `bufsim generate --list` shows them.
pub fn generators() -> impl Iterator<Item = &'static GeneratorInfo> {
    FAMILIES.iter().flat_map(|f| f.0.iter())
}

impl Synthetic {
    /// A trace of one-block reads: `(file, block, ctx)` per access; cut short once `meter`'s
    /// work is cancelled (so a lazy `accesses` stops being generated too).
    pub fn from_blocks(
        file_names: Vec<String>,
        accesses: impl IntoIterator<Item = (u32, u64, u64)>,
        meter: &Meter,
    ) -> Self {
        let accesses = accesses.into_iter();
        let mut requests = Vec::with_capacity(accesses.size_hint().0);
        for (i, (file, block, ctx)) in accesses.enumerate() {
            if i % CANCEL_CHECK == 0 && meter.is_cancelled() {
                break;
            }
            requests.push(Request { ctx, ..Request::read(file, block * BLOCK, BLOCK) });
        }
        Synthetic { requests, file_names }
    }

    /// Writes the trace as interchange CSV (`op,file,offset,size,ctx`); stops with an error
    /// whose payload is [`Cancelled`] once `meter`'s work is cancelled.
    pub fn write_csv(&self, out: &mut impl Write, meter: &Meter) -> io::Result<()> {
        writeln!(out, "op,file,offset,size,ctx")?;
        for (i, r) in self.requests.iter().enumerate() {
            if i % CANCEL_CHECK == 0 && meter.is_cancelled() {
                return Err(io::Error::new(io::ErrorKind::Interrupted, Cancelled));
            }
            let op = r.op.letter();
            writeln!(out, "{op},{},{},{},{}", self.file_names[r.file as usize], r.offset, r.size, r.ctx)?;
        }
        Ok(())
    }

    /// Writes the trace as interchange CSV to `path`, whole or not at all: into a fresh file
    /// renamed onto `path` once complete ([`crate::write_atomically`]), so an interrupted or
    /// failed write leaves nothing behind. Returns the bytes written.
    pub fn write_file(&self, path: &str, meter: &Meter) -> Result<u64, TraceError> {
        let ((), bytes) = crate::write_atomically(path, meter, |file| {
            let mut out = BufWriter::new(file);
            self.write_csv(&mut out, meter).map_err(|e| TraceError::io(path, &e))?;
            let file = out.into_inner().map_err(|e| TraceError::io(path, e.error()))?;
            Ok((file, ()))
        })?;
        Ok(bytes)
    }
}

/// Generates the trace `spec` names (`amp-a`, `amp-mix(loop1=2000,loop1-share=0.4)`) from `seed`.
pub fn generate(spec: &str, seed: u64) -> Result<Synthetic, SpecError> {
    generate_until(spec, seed, &Meter::default())
}

/// [`generate`], stopping early once `meter`'s work is cancelled. The trace is then cut short:
/// the caller, which cancelled it, throws it away ([`Synthetic::write_file`] with the same meter
/// writes nothing).
pub fn generate_until(spec: &str, seed: u64, meter: &Meter) -> Result<Synthetic, SpecError> {
    let parsed = Spec::parse(spec)?;
    let (info, build) = FAMILIES
        .iter()
        .flat_map(|(list, build)| list.iter().map(move |g| (g, build)))
        .find(|(g, _)| g.is_named(&parsed.name))
        .ok_or_else(|| unknown(Kind::Generator, &parsed.name, generators(), "generate --list"))?;
    build(info, &Args::new(Kind::Generator, info, &parsed.args)?, seed, meter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_checked() {
        let e = generate("amp-z", 1).unwrap_err().to_string();
        assert!(e.contains("unknown generator `amp-z`") && e.contains("amp-a"), "{e}");
        let e = generate("amp-a(lenght=5)", 1).unwrap_err().to_string();
        assert!(e.contains("no parameter `lenght`") && e.contains("length"), "{e}");
        let e = generate("amp-mix(loop1-share=2)", 1).unwrap_err().to_string();
        assert!(e.contains("between 0 and 1"), "{e}");
    }

    #[test]
    fn a_cancelled_generation_stops_early_and_writes_nothing() {
        use std::sync::Arc;
        let progress = Arc::new(crate::progress::Progress::default());
        let meter = Meter::new(Arc::clone(&progress));
        progress.cancel();
        for spec in ["amp-mix(accesses=100000000)", "dulo-mix(accesses=100000000)", "sa-trace1(requests=100000000)"] {
            let cut = generate_until(spec, 1, &meter).unwrap();
            assert!(cut.requests.len() < CANCEL_CHECK, "{spec}: {}", cut.requests.len());
        }
        let dir = std::env::temp_dir().join(format!("bufsim-synth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let e = generate("amp-b", 1).unwrap().write_file(path.to_str().unwrap(), &meter).unwrap_err();
        assert_eq!(e.kind, crate::TraceErrorKind::Interrupted);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no file, finished or temporary, is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_generator_is_seeded_and_writes_csv() {
        for g in generators() {
            let a = generate(g.name, 7).unwrap();
            assert_eq!(a, generate(g.name, 7).unwrap(), "{}", g.name);
            assert!(!a.requests.is_empty());
            let mut out = Vec::new();
            a.write_csv(&mut out, &Meter::default()).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.starts_with("op,file,offset,size,ctx\nR,"), "{}", g.name);
            assert_eq!(text.lines().count(), a.requests.len() + 1);
        }
    }
}
