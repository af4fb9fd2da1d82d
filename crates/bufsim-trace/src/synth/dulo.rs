//! A workload of DULO's kind (Jiang et al., FAST 2005, §4.1): whole files read front to back
//! (spatial locality: read-ahead and clustering make them cheap to read again) alternating with
//! bursts of single-block reads of blocks scattered over a large file (each one a seek), as
//! glimpse alternates between its index and the files it scans. Each scan reads one whole file
//! without interruption; between two scans comes a burst of random reads sized so that the
//! random reads make up `random-share` of the whole. A trace is at least one scan and its
//! burst long (with both kinds of read), or the share it names would not be in it.

use bufsim_config::{rng::Rng, SpecError};

use super::{Synthetic, CANCEL_CHECK, MAX_BLOCKS};
use crate::progress::Meter;
use bufsim_config::registry::{Args, Capabilities, Info, Param, Range};

/// Files a trace may name: their names are held in memory, one string each.
const MAX_FILES: u64 = 1_000_000;
/// Distinct random blocks, all drawn (and held) before the first access: a few tens of MB.
const MAX_RANDOM_BLOCKS: u64 = 1_000_000;

pub const GENERATORS: &[Info] = &[Info {
    name: "dulo-mix",
    paper: "DULO §4.1 (mixed sequential and random access patterns, as glimpse and multi1)",
    summary: "sequential scans of whole files alternating with bursts of random one-block reads",
    params: &[
        Param { name: "accesses", default: "200000", doc: "block reads in all", range: Range::Whole(1, 100_000_000) },
        Param {
            name: "files",
            default: "40",
            doc: "files scanned; each scan reads one whole file, chosen at random",
            range: Range::Whole(0, MAX_FILES),
        },
        Param {
            name: "file-blocks",
            default: "256",
            doc: "blocks per scanned file",
            range: Range::Whole(0, MAX_BLOCKS),
        },
        Param {
            name: "random-share",
            default: "0.3",
            doc: "share of reads that are random (0 to 1)",
            range: Range::Number(0.0, 1.0),
        },
        Param {
            name: "random-blocks",
            default: "8000",
            doc: "distinct blocks the random reads revisit",
            range: Range::Whole(0, MAX_RANDOM_BLOCKS),
        },
        Param {
            name: "random-span",
            default: "1000000",
            doc: "blocks of the file the random blocks are scattered over",
            range: Range::Whole(0, MAX_BLOCKS),
        },
    ],
    aliases: &[],
    preset_of: None,
    caps: Capabilities::NONE,
}];

pub(crate) fn generate(info: &Info, args: &Args, seed: u64, meter: &Meter) -> Result<Synthetic, SpecError> {
    debug_assert_eq!(info.name, "dulo-mix");
    let n = args.u64("accesses")?;
    let (files, file_blocks) = (args.u64("files")?, args.u64("file-blocks")?);
    let share = args.f64("random-share")?;
    let (hot, span) = (args.u64("random-blocks")?, args.u64("random-span")?);
    if share < 1.0 && (files == 0 || file_blocks == 0) {
        return Err(SpecError("generator `dulo-mix`: scans need files=1 or more and file-blocks=1 or more".into()));
    }
    if share > 0.0 && (hot == 0 || span < hot) {
        return Err(SpecError(format!(
            "generator `dulo-mix`: random reads need 1 <= random-blocks <= random-span (got {hot} and {span})"
        )));
    }
    // A scan makes 1 - random-share of the reads, its burst the rest: a trace shorter than one
    // scan and its burst holds no random read at all, whatever random-share says.
    if share > 0.0 && share < 1.0 {
        let least = (file_blocks as f64 / (1.0 - share)).ceil() as u64;
        if n < least {
            return Err(args.bad(
                "accesses",
                &format!(
                    "at least {least}, one scan of file-blocks={file_blocks} and its random reads at random-share={} (or fewer file-blocks)",
                    args.text("random-share")
                ),
            ));
        }
    }
    let mut rng = Rng::new(seed);
    // The random blocks: distinct positions in the big file, drawn once.
    let mut positions = std::collections::BTreeSet::new();
    while (positions.len() as u64) < hot.min(span) && share > 0.0 {
        if positions.len() % CANCEL_CHECK == 0 && meter.is_cancelled() {
            break;
        }
        positions.insert(rng.below(span));
    }
    let positions: Vec<u64> = positions.into_iter().collect();
    let random_file = files as u32;
    let mut names: Vec<String> = (0..files).map(|i| format!("seq{i}")).collect();
    names.push("random".to_string());
    let mut accesses: Vec<(u32, u64, u64)> = Vec::with_capacity(n as usize);
    // Random reads owed so far: a burst pays them off after each scan.
    let mut owed = 0.0f64;
    let per_block = if share < 1.0 { share / (1.0 - share) } else { f64::INFINITY };
    while (accesses.len() as u64) < n {
        if meter.is_cancelled() {
            break;
        }
        if share < 1.0 {
            let file = rng.below(files) as u32;
            // Reads past the `n`th are never kept: a file longer than the trace is cut short.
            let scan = file_blocks.min(n - accesses.len() as u64);
            accesses.extend((0..scan).map(|b| (file, b, 1)));
            owed += per_block * file_blocks as f64;
        } else {
            owed = (n - accesses.len() as u64) as f64;
        }
        while owed >= 1.0 && (accesses.len() as u64) < n {
            owed -= 1.0;
            accesses.push((random_file, positions[rng.below(positions.len() as u64) as usize], 2));
        }
    }
    accesses.truncate(n as usize);
    Ok(Synthetic::from_blocks(names, accesses, meter))
}

#[cfg(test)]
mod tests {
    use super::super::generate;

    #[test]
    fn sizes_are_bounded_and_a_scan_past_the_trace_costs_nothing() {
        // A file longer than the trace is read as far as the trace goes, at once.
        let t = generate("dulo-mix(accesses=10,file-blocks=1099511627776,random-share=0)", 1).unwrap();
        assert_eq!(t.requests.len(), 10);
        assert!(t.requests.iter().enumerate().all(|(i, r)| r.offset == i as u64 * 4096));
        // Cutting scans short keeps every trace as it was (the default's first 1000 reads).
        let full = generate("dulo-mix", 1).unwrap();
        assert_eq!(generate("dulo-mix(accesses=1000)", 1).unwrap().requests, full.requests[..1000]);
        // The least trace with random reads holds one scan and its burst: 256 + 109 of them.
        let least = generate("dulo-mix(accesses=366)", 1).unwrap();
        assert_eq!(least.requests.iter().filter(|r| r.ctx == 2).count(), 109);
        for (spec, rule) in [
            // Once 5000 sequential reads and not one random read.
            (
                "dulo-mix(accesses=1000,file-blocks=5000,random-share=0.5)",
                "accesses=`1000` must be at least 10000, one scan of file-blocks=5000 and its random reads at random-share=0.5",
            ),
            ("dulo-mix(accesses=365)", "at least 366, one scan of file-blocks=256"),
            ("dulo-mix(files=1000001)", "files must be a whole number, at most 1000000"),
            ("dulo-mix(random-blocks=1000001)", "random-blocks must be a whole number, at most 1000000"),
            ("dulo-mix(random-span=1099511627777)", "random-span must be a whole number, at most 1099511627776"),
            ("dulo-mix(file-blocks=1099511627777)", "file-blocks must be a whole number, at most 1099511627776"),
            ("dulo-mix(random-blocks=100,random-span=10)", "1 <= random-blocks <= random-span"),
        ] {
            let e = generate(spec, 1).unwrap_err().to_string();
            assert!(e.contains(rule) && !e.contains('\n'), "{spec}: {e}");
        }
    }
}
