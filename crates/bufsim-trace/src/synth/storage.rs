//! The synthetic traces of storage-aware caching (Forney et al., FAST '02), Table 1: read-only
//! requests at random places in a working set striped over a RAID-0 array, the disk of each
//! request drawn uniformly or from a Gaussian. Where Table 1 leaves a choice open, the choice is
//! written below and in docs/storage-aware.md.
//!
//! | | Trace 1 | Trace 2 | Trace 3 |
//! |---|---|---|---|
//! | request sizes | uniform | exponential | exponential |
//! | disks | uniform | uniform | Gaussian (mean disk 7, sd 3) |
//! | mean request | 256 KB | 34 KB | 34 KB |
//! | working set | 400 MB | 425 MB | 425 MB |
//! | requests | 192,000 | 750,000 | 750,000 |
//!
//! Choices the table leaves open:
//! - KB and MB are powers of 1000, as bufsim reads `KB` and `MB` (and as the paper's MB/s).
//! - A request starts on its disk: the generator draws the disk, a stripe row of the working
//!   set uniformly, and a block of that disk's stripe unit uniformly; the request then runs on
//!   through the following blocks (and so the following disks, if longer than what is left of
//!   the unit). The trace is one logical volume that `--array` stripes with the same
//!   `devices` and `unit`.
//! - Uniform sizes: a whole number of 4 KiB blocks, uniform from 1 to `2 x mean - 1` (mean
//!   `mean`). Exponential sizes: the whole blocks of an exponential size rounded up, i.e.
//!   geometric with mean `mean` blocks.
//! - Gaussian disks: rounded to the nearest disk, drawn again when outside the array.
//! - Hot disk (`disks=hot`, Figure 4's lower lines: "the slow disk receives either twice or ten
//!   times as many requests as the other disks"): disk `hot-disk` is drawn `hot-ratio` times as
//!   often as each other disk; its share of the working set stays that of any disk.
//! - Fixed sizes (`sizes=fixed`, Figure 4's "8 KB requests"): every request `mean` rounded to
//!   whole blocks (at least one).
//! - "Random locality": every request independent of the others.
//! - The working set is rounded up to whole stripe rows (`devices` x `unit`); it must hold one
//!   row and the largest request (uniform sizes: 2 x mean - 1 blocks; exponential: 16 means,
//!   longer ones cut to the working set). A request starting near its end runs past it by less
//!   than its own length.

use bufsim_config::{Rng, Size, SpecError};

use super::{Synthetic, BLOCK, CANCEL_CHECK, MAX_BLOCKS};
use crate::progress::Meter;
use crate::request::Request;
use bufsim_config::registry::{Args, Capabilities, Info, Param, Range};

const COMMON: [Param; 6] = [
    Param {
        name: "devices",
        default: "16",
        doc: "disks of the array the trace is striped over (as --array)",
        range: Range::Whole(1, 254),
    },
    Param {
        name: "unit",
        default: "8KiB",
        doc: "stripe unit of that array (as --array)",
        range: Range::Text("a whole number of 4 KiB blocks such as 8KiB, at most 1GiB"),
    },
    Param { name: "mean-disk", default: "7", doc: "Gaussian disks: mean disk", range: Range::Number(-1e6, 1e6) },
    Param {
        name: "disk-sd",
        default: "3",
        doc: "Gaussian disks: standard deviation, in disks",
        range: Range::Positive(1e6),
    },
    Param { name: "hot-disk", default: "0", doc: "hot disk: the disk drawn more often", range: Range::Whole(0, 253) },
    Param {
        name: "hot-ratio",
        default: "2",
        doc: "hot disk: its requests over those of each other disk (Figure 4: 2 or 10)",
        range: Range::Positive(1e6),
    },
];

macro_rules! table1 {
    ($name:literal, $paper:literal, $summary:literal, $sizes:literal, $disks:literal, $mean:literal, $ws:literal, $n:literal) => {
        Info {
            name: $name,
            paper: $paper,
            summary: $summary,
            params: &[
                Param {
                    name: "requests",
                    default: $n,
                    doc: "requests in the trace",
                    range: Range::Whole(1, 100_000_000),
                },
                Param {
                    name: "request-size",
                    default: $mean,
                    doc: "mean request size",
                    range: Range::Text(
                        "a size above zero such as 256KB or 64blocks; at most 2GiB (uniform), 256MiB (exponential) or 4GiB - 4KiB (fixed)",
                    ),
                },
                Param {
                    name: "sizes",
                    default: $sizes,
                    doc: "request size distribution: uniform, exponential or fixed",
                    range: Range::Choice(&["uniform", "exponential", "fixed"]),
                },
                Param {
                    name: "working-set",
                    default: $ws,
                    doc: "bytes the requests fall in, in whole stripe rows",
                    range: Range::Text(
                        "a size such as 400MB, at most 4PiB; at least one stripe row (devices x unit) and the largest request (uniform: 2 x request-size, exponential: 16 x)",
                    ),
                },
                Param {
                    name: "disks",
                    default: $disks,
                    doc: "disk of each request: uniform, gaussian or hot (one disk drawn hot-ratio times as often)",
                    range: Range::Choice(&["uniform", "gaussian", "hot"]),
                },
                COMMON[0],
                COMMON[1],
                COMMON[2],
                COMMON[3],
                COMMON[4],
                COMMON[5],
            ],
            aliases: &[],
            preset_of: None,
            caps: Capabilities::NONE,
        }
    };
}

pub const GENERATORS: &[Info] = &[
    table1!(
        "sa-trace1",
        "storage-aware caching (FAST '02) Table 1, Trace 1",
        "reads of uniform size (mean 256 KB) at random places in 400 MB, disks uniform: 192,000 requests",
        "uniform",
        "uniform",
        "256KB",
        "400MB",
        "192000"
    ),
    table1!(
        "sa-trace2",
        "storage-aware caching (FAST '02) Table 1, Trace 2",
        "reads of exponential size (mean 34 KB) at random places in 425 MB, disks uniform: 750,000 requests",
        "exponential",
        "uniform",
        "34KB",
        "425MB",
        "750000"
    ),
    table1!(
        "sa-trace3",
        "storage-aware caching (FAST '02) Table 1, Trace 3",
        "as Trace 2 with the disk of each request Gaussian (mean disk 7, sd 3): 750,000 requests",
        "exponential",
        "gaussian",
        "34KB",
        "425MB",
        "750000"
    ),
];

/// The most blocks one request may read: bufsim reads requests of up to
/// [`crate::MAX_REQUEST_SIZE`] bytes, so a generated trace never holds one it would refuse.
const MAX_REQUEST_BLOCKS: u64 = crate::MAX_REQUEST_SIZE / BLOCK;
/// The largest stripe unit, in blocks (1 GiB).
const MAX_UNIT_BLOCKS: u64 = 1 << 18;

fn bytes(args: &Args, name: &str) -> Result<u64, SpecError> {
    match Size::parse(args.text(name)) {
        Ok(Size::Bytes(b)) if b > 0 => Ok(b),
        Ok(Size::Blocks(n)) if n > 0 => n.checked_mul(BLOCK).ok_or_else(|| args.bad(name, "a size below 2^64 bytes")),
        Ok(_) => Err(args.bad(name, "a size above zero such as 256KB")),
        // What is wrong with the text itself (no unit, no number) is the size parser's to say.
        Err(e) => Err(args.bad(name, &format!("a size such as 256KB ({e})"))),
    }
}

/// A size of whole 4 KiB blocks in the largest binary unit that divides it (`496KiB`, `4GiB`).
fn whole_size(bytes: u64) -> String {
    let (div, unit) = [(1u64 << 30, "GiB"), (1 << 20, "MiB")]
        .into_iter()
        .find(|(d, _)| bytes.is_multiple_of(*d))
        .unwrap_or((1 << 10, "KiB"));
    format!("{}{unit}", bytes / div)
}

#[derive(Clone, Copy, PartialEq)]
enum Sizes {
    Uniform,
    Exponential,
    Fixed,
}

#[derive(Clone, Copy, PartialEq)]
enum Disks {
    Uniform,
    Gaussian,
    Hot,
}

/// A standard normal draw (Box-Muller, one of the pair).
fn normal(rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.unit();
    let v = rng.unit();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

pub(crate) fn generate(info: &Info, args: &Args, seed: u64, meter: &Meter) -> Result<Synthetic, SpecError> {
    let n = args.u64("requests")?;
    let mean_blocks = bytes(args, "request-size")? as f64 / BLOCK as f64;
    let sizes = match args.text("sizes") {
        "uniform" => Sizes::Uniform,
        "exponential" => Sizes::Exponential,
        "fixed" => Sizes::Fixed,
        _ => return Err(args.bad("sizes", "uniform, exponential or fixed")),
    };
    let disks = match args.text("disks") {
        "uniform" => Disks::Uniform,
        "gaussian" => Disks::Gaussian,
        "hot" => Disks::Hot,
        _ => return Err(args.bad("disks", "uniform, gaussian or hot")),
    };
    // Uniform sizes reach twice the mean; exponential ones have a tail, cut at the largest
    // request, that stays out of sight (beyond 16 means: e^-16 of the requests) up to here.
    let max = MAX_REQUEST_BLOCKS as f64;
    let too_large = match sizes {
        Sizes::Fixed => mean_blocks.round() > max,
        Sizes::Uniform => (2.0 * mean_blocks).round() - 1.0 > max,
        Sizes::Exponential => mean_blocks > (max + 1.0) / 16.0,
    };
    if too_large {
        let (most, why) = match sizes {
            Sizes::Fixed => ("4GiB - 4KiB", "the largest request bufsim reads is 2^32 - 1 bytes"),
            Sizes::Uniform => {
                ("2GiB", "uniform sizes reach twice the mean, and bufsim reads requests of up to 2^32 - 1 bytes")
            }
            Sizes::Exponential => {
                ("256MiB", "exponential sizes have a long tail, and bufsim reads requests of up to 2^32 - 1 bytes")
            }
        };
        return Err(args.bad("request-size", &format!("at most {most} with sizes={} ({why})", args.text("sizes"))));
    }
    let ws_blocks = bytes(args, "working-set")?.div_ceil(BLOCK);
    if ws_blocks > MAX_BLOCKS {
        return Err(args.bad("working-set", "at most 4PiB"));
    }
    let devices = args.u64("devices")?;
    if !(1..=254).contains(&devices) {
        return Err(args.bad("devices", "a whole number from 1 to 254"));
    }
    let unit = bytes(args, "unit")?;
    if unit % BLOCK != 0 || unit / BLOCK > MAX_UNIT_BLOCKS {
        return Err(args.bad("unit", "a whole number of 4 KiB blocks, at most 1GiB"));
    }
    let unit = unit / BLOCK;
    let span = (2.0 * mean_blocks).round().max(2.0) as u64 - 1;
    let fixed = mean_blocks.round().max(1.0) as u64;
    // The requests fall in the working set, so it must hold one: a request starts in a stripe
    // row drawn from its whole rows (so at least one row) and runs on for its length (so at
    // least the largest request; for exponential sizes 16 means, past which e^-16 of them run,
    // and those are cut to the working set below). Smaller, the trace would span many times the
    // working set it names.
    let row = devices * unit;
    let (largest, why) = match sizes {
        Sizes::Uniform => (span, "uniform sizes reach twice the mean"),
        Sizes::Fixed => (fixed, "every request is that long"),
        Sizes::Exponential => ((16.0 * mean_blocks).ceil() as u64, "exponential sizes run to 16 means and beyond"),
    };
    let least = row.max(largest);
    if bytes(args, "working-set")? < least * BLOCK {
        let need = if largest >= row {
            format!("request-size={} with sizes={} ({why})", args.text("request-size"), args.text("sizes"))
        } else {
            format!("one stripe row of devices={} x unit={}", args.text("devices"), args.text("unit"))
        };
        return Err(args.bad("working-set", &format!("at least {}, to hold {need}", whole_size(least * BLOCK))));
    }
    let mean_disk: f64 = args.text("mean-disk").parse().map_err(|_| args.bad("mean-disk", "a number"))?;
    let sd: f64 = args
        .text("disk-sd")
        .parse()
        .ok()
        .filter(|v: &f64| *v > 0.0)
        .ok_or_else(|| args.bad("disk-sd", "a number above 0"))?;
    let gaussian = disks == Disks::Gaussian;
    let hot_disk = args.u64("hot-disk")?;
    if disks == Disks::Hot && hot_disk >= devices {
        return Err(args.bad("hot-disk", &format!("one of the array's disks, 0 to {}", devices - 1)));
    }
    let hot_ratio = args.f64("hot-ratio")?;
    if hot_ratio <= 0.0 {
        return Err(args.bad("hot-ratio", "a number above 0"));
    }
    if gaussian && !(mean_disk > -3.0 * sd && mean_disk < devices as f64 - 1.0 + 3.0 * sd) {
        return Err(args.bad("mean-disk", "within three standard deviations of the array's disks"));
    }
    let rows = ws_blocks.div_ceil(row);
    let longest = MAX_REQUEST_BLOCKS.min(rows * row);
    // Geometric with mean m blocks: P(k) = (1 - q) q^(k-1), q = 1 - 1/m.
    let q = 1.0 - 1.0 / mean_blocks.max(1.0);
    let mut rng = Rng::new(seed);
    let mut requests = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        if i % CANCEL_CHECK == 0 && meter.is_cancelled() {
            break;
        }
        let disk = match disks {
            Disks::Gaussian => loop {
                let d = (mean_disk + sd * normal(&mut rng)).round();
                if d >= 0.0 && d < devices as f64 {
                    break d as u64;
                }
            },
            Disks::Uniform => rng.below(devices),
            Disks::Hot => {
                // Weights: hot-ratio for the hot disk, 1 for each of the others.
                let u = rng.unit() * (hot_ratio + (devices - 1) as f64);
                if u < hot_ratio {
                    hot_disk
                } else {
                    let other = ((u - hot_ratio) as u64).min(devices - 2);
                    other + u64::from(other >= hot_disk)
                }
            }
        };
        let row = rng.below(rows);
        let start = (row * devices + disk) * unit + rng.below(unit);
        let blocks = match sizes {
            Sizes::Uniform => 1 + rng.below(span),
            Sizes::Fixed => fixed,
            Sizes::Exponential if q <= 0.0 => 1,
            Sizes::Exponential => (1 + ((1.0 - rng.unit()).ln() / q.ln()).floor() as u64).min(longest),
        };
        requests.push(Request::read(0, start * BLOCK, blocks * BLOCK));
    }
    debug_assert!(info.name.starts_with("sa-"));
    Ok(Synthetic { requests, file_names: vec!["volume".to_string()] })
}

#[cfg(test)]
mod tests {
    use super::super::generate as generate_spec;

    fn stats(spec: &str) -> (f64, Vec<u64>) {
        let t = generate_spec(spec, 3).unwrap();
        let n = t.requests.len() as f64;
        let mean = t.requests.iter().map(|r| r.size as f64).sum::<f64>() / n;
        // Disk of each request's first block: 16 disks, 8 KiB units.
        let mut disks = vec![0u64; 16];
        for r in &t.requests {
            disks[((r.offset / 4096 / 2) % 16) as usize] += 1;
        }
        (mean, disks)
    }

    #[test]
    fn table_1_sizes_and_disk_distributions() {
        let (mean, disks) = stats("sa-trace1(requests=40000)");
        // 256 KB = 62.5 blocks: uniform from 1 to 124 blocks.
        assert!((mean / 256_000.0 - 1.0).abs() < 0.02, "{mean}");
        assert!(disks.iter().all(|&d| (2200..2800).contains(&d)), "{disks:?}");
        let (mean, disks) = stats("sa-trace2(requests=40000)");
        assert!((mean / 34_000.0 - 1.0).abs() < 0.03, "{mean}");
        assert!(disks.iter().all(|&d| (2200..2800).contains(&d)), "{disks:?}");
        let (mean, disks) = stats("sa-trace3(requests=40000)");
        assert!((mean / 34_000.0 - 1.0).abs() < 0.03, "{mean}");
        // Gaussian around disk 7, sd 3: disk 7 about 13% of requests, disk 0 under 2%.
        assert!((4700..5900).contains(&disks[7]), "{disks:?}");
        assert!(disks[0] < 800 && disks[15] < 300, "{disks:?}");
    }

    #[test]
    fn a_hot_disk_gets_its_ratio_of_the_requests_and_fixed_sizes_are_exact() {
        // Figure 4's 10:1 line: disk 0 draws 10 of every 25 requests, each other disk 1.
        let (mean, disks) = stats("sa-trace1(requests=25000,disks=hot,hot-ratio=10,sizes=fixed,request-size=8KB)");
        assert_eq!(mean, 8192.0);
        assert!((9600..10400).contains(&disks[0]), "{disks:?}");
        assert!(disks[1..].iter().all(|&d| (850..1150).contains(&d)), "{disks:?}");
        // Another hot disk, 2:1: the disks after it keep their share.
        let (_, disks) = stats("sa-trace1(requests=17000,disks=hot,hot-disk=15,hot-ratio=2)");
        assert!((1800..2200).contains(&disks[15]), "{disks:?}");
        assert!(disks[..15].iter().all(|&d| (850..1150).contains(&d)), "{disks:?}");
        for (spec, word) in
            [("sa-trace1(disks=hot,hot-disk=16)", "0 to 15"), ("sa-trace1(disks=hot,hot-ratio=0)", "above 0")]
        {
            let e = generate_spec(spec, 1).unwrap_err().to_string();
            assert!(e.contains(word), "{spec}: {e}");
        }
    }

    #[test]
    fn every_request_is_one_bufsim_reads() {
        let max = crate::MAX_REQUEST_SIZE;
        for (spec, most) in [
            ("sa-trace1(requests=10,sizes=fixed,request-size=5GB)", "at most 4GiB - 4KiB with sizes=fixed"),
            ("sa-trace1(requests=10,request-size=2200MB)", "at most 2GiB with sizes=uniform"),
            ("sa-trace2(requests=10,request-size=268435457B)", "at most 256MiB with sizes=exponential"),
            ("sa-trace2(working-set=4097TiB)", "working-set=`4097TiB` must be at most 4PiB"),
            ("sa-trace2(unit=2GiB)", "at most 1GiB"),
            ("sa-trace2(request-size=18446744073709551615blocks)", "a size below 2^64 bytes"),
        ] {
            let e = generate_spec(spec, 1).unwrap_err().to_string();
            assert!(e.contains(most) && e.contains("request-size") == spec.contains("request-size"), "{spec}: {e}");
        }
        // At each bound, the largest requests still fit (in a working set that holds them).
        for spec in [
            "sa-trace1(requests=5,sizes=fixed,request-size=1048575blocks,working-set=4GiB)",
            "sa-trace1(requests=2000,request-size=2GiB,working-set=4GiB)",
            "sa-trace2(requests=2000,request-size=256MiB,working-set=4GiB)",
        ] {
            let t = generate_spec(spec, 1).unwrap();
            assert!(t.requests.iter().all(|r| r.size <= max), "{spec}");
        }
    }

    #[test]
    fn a_working_set_holds_a_stripe_row_and_the_largest_request() {
        for (spec, want) in [
            // Once 1 KB gave requests up to 600 KB over a whole 128 KiB row.
            (
                "sa-trace1(working-set=1KB,requests=10)",
                "working-set=`1KB` must be at least 496KiB, to hold request-size=256KB with sizes=uniform",
            ),
            (
                "sa-trace1(working-set=100KB,sizes=fixed,request-size=8KB)",
                "at least 128KiB, to hold one stripe row of devices=16 x unit=8KiB",
            ),
            ("sa-trace2(working-set=500KB)", "at least 532KiB, to hold request-size=34KB with sizes=exponential"),
            (
                "sa-trace3(working-set=1GB,unit=128MiB)",
                "at least 2GiB, to hold one stripe row of devices=16 x unit=128MiB",
            ),
        ] {
            let e = generate_spec(spec, 1).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{spec}: {e}");
        }
        // At the least working set, requests start in its whole rows and none is longer.
        for (spec, end) in [
            ("sa-trace1(requests=3000,working-set=496KiB)", 128 * 4096),
            ("sa-trace1(requests=3000,working-set=128KiB,sizes=fixed,request-size=8KB)", 32 * 4096),
            ("sa-trace2(requests=3000,working-set=532KiB)", 160 * 4096),
        ] {
            let t = generate_spec(spec, 5).unwrap();
            assert!(t.requests.iter().all(|r| r.offset < end && r.size <= end), "{spec}");
        }
    }

    #[test]
    fn requests_stay_in_the_working_set_rows_and_are_seeded() {
        let t = generate_spec("sa-trace2(requests=5000,working-set=1MB)", 9).unwrap();
        // 1 MB = 245 blocks: 8 stripe rows of 16 x 2 blocks; starts below 256 blocks.
        assert!(t.requests.iter().all(|r| r.offset / 4096 < 256));
        assert_eq!(t, generate_spec("sa-trace2(requests=5000,working-set=1MB)", 9).unwrap());
        assert_ne!(t, generate_spec("sa-trace2(requests=5000,working-set=1MB)", 10).unwrap());
        for (spec, word) in [
            ("sa-trace1(sizes=pareto)", "uniform, exponential, fixed"),
            ("sa-trace3(unit=6KB)", "4 KiB blocks"),
            ("sa-trace1(devices=0)", "1 to 254"),
        ] {
            let e = generate_spec(spec, 1).unwrap_err().to_string();
            assert!(e.contains(word), "{spec}: {e}");
        }
    }
}
