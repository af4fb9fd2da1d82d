//! A workload of DULO's kind (Jiang et al., FAST 2005, §4.1): whole files read front to back
//! (spatial locality: read-ahead and clustering make them cheap to read again) alternating with
//! bursts of single-block reads of blocks scattered over a large file (each one a seek), as
//! glimpse alternates between its index and the files it scans. Each scan reads one whole file
//! without interruption; between two scans comes a burst of random reads sized so that the
//! random reads make up `random-share` of the whole.

use bufsim_config::{rng::Rng, SpecError};

use super::Synthetic;
use bufsim_config::registry::{Args, Capabilities, Info, Param, Range};

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
            range: Range::Whole(0, u64::MAX),
        },
        Param { name: "file-blocks", default: "256", doc: "blocks per scanned file", range: Range::Whole(0, u64::MAX) },
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
            range: Range::Whole(0, u64::MAX),
        },
        Param {
            name: "random-span",
            default: "1000000",
            doc: "blocks of the file the random blocks are scattered over",
            range: Range::Whole(0, u64::MAX),
        },
    ],
    aliases: &[],
    preset_of: None,
    caps: Capabilities::NONE,
}];

pub(crate) fn generate(info: &Info, args: &Args, seed: u64) -> Result<Synthetic, SpecError> {
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
    let mut rng = Rng::new(seed);
    // The random blocks: distinct positions in the big file, drawn once.
    let mut positions = std::collections::BTreeSet::new();
    while (positions.len() as u64) < hot.min(span) && share > 0.0 {
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
        if share < 1.0 {
            let file = rng.below(files) as u32;
            accesses.extend((0..file_blocks).map(|b| (file, b, 1)));
            owed += per_block * file_blocks as f64;
        } else {
            owed = (n - accesses.len() as u64) as f64;
        }
        while owed >= 1.0 && (accesses.len() as u64) < n + file_blocks {
            owed -= 1.0;
            accesses.push((random_file, positions[rng.below(positions.len() as u64) as usize], 2));
        }
    }
    accesses.truncate(n as usize);
    Ok(Synthetic::from_blocks(names, accesses))
}
