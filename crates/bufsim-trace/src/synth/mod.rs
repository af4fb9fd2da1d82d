//! Synthetic traces from a generator spec and a seed (`amp-c`, `amp-mix(loop1=1500)`,
//! `sa-trace1`): the papers' constructed workloads, as requests, or written as bufsim's
//! interchange CSV so every reader and tool can use them. The same spec and seed give the same
//! trace.

pub mod amp;
pub mod dulo;
pub mod storage;

use std::io::{self, Write};

use bufsim_config::registry::{unknown, Args, Info, Kind};
use bufsim_config::{Spec, SpecError};

use crate::request::Request;

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
type Family = (&'static [Info], fn(&Info, &Args, u64) -> Result<Synthetic, SpecError>);

/// AMP's streams, DULO's mixed workload, then storage-aware caching's traces.
const FAMILIES: &[Family] =
    &[(amp::GENERATORS, amp::generate), (dulo::GENERATORS, dulo::generate), (storage::GENERATORS, storage::generate)];

/// Every generator, in the order `bufsim generate --list` shows them.
pub fn generators() -> impl Iterator<Item = &'static GeneratorInfo> {
    FAMILIES.iter().flat_map(|f| f.0.iter())
}

impl Synthetic {
    /// A trace of one-block reads: `(file, block, ctx)` per access.
    pub fn from_blocks(file_names: Vec<String>, accesses: impl IntoIterator<Item = (u32, u64, u64)>) -> Self {
        let requests = accesses
            .into_iter()
            .map(|(file, block, ctx)| Request { ctx, ..Request::read(file, block * BLOCK, BLOCK) })
            .collect();
        Synthetic { requests, file_names }
    }

    /// Writes the trace as interchange CSV (`op,file,offset,size,ctx`).
    pub fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "op,file,offset,size,ctx")?;
        for r in &self.requests {
            let op = r.op.letter();
            writeln!(out, "{op},{},{},{},{}", self.file_names[r.file as usize], r.offset, r.size, r.ctx)?;
        }
        Ok(())
    }
}

/// Generates the trace `spec` names (`amp-a`, `amp-mix(loop1=2000,loop1-share=0.4)`) from `seed`.
pub fn generate(spec: &str, seed: u64) -> Result<Synthetic, SpecError> {
    let parsed = Spec::parse(spec)?;
    let (info, build) = FAMILIES
        .iter()
        .flat_map(|(list, build)| list.iter().map(move |g| (g, build)))
        .find(|(g, _)| g.is_named(&parsed.name))
        .ok_or_else(|| unknown(Kind::Generator, &parsed.name, generators(), "generate --list"))?;
    build(info, &Args::new(Kind::Generator, info, &parsed.args)?, seed)
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
    fn every_generator_is_seeded_and_writes_csv() {
        for g in generators() {
            let a = generate(g.name, 7).unwrap();
            assert_eq!(a, generate(g.name, 7).unwrap(), "{}", g.name);
            assert!(!a.requests.is_empty());
            let mut out = Vec::new();
            a.write_csv(&mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.starts_with("op,file,offset,size,ctx\nR,"), "{}", g.name);
            assert_eq!(text.lines().count(), a.requests.len() + 1);
        }
    }
}
