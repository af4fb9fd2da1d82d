//! Reading speed of the trace readers: requests per second from memory (the page cache), so the
//! numbers are the parsers', not the disk's. docs/performance.md keeps the latest table.
//! Run: cargo bench -p bufsim-trace --bench reading -- cpu/   (the reading thread's CPU time)
//!      cargo bench -p bufsim-trace --bench reading -- wall/  (wall-clock time, on an idle machine)

use std::hint::black_box;
use std::io::{BufRead, Cursor, Write};
use std::time::Duration;

use bufsim_trace::{convert, encode_oracle_record, BlkEvent, Format, ReadOptions, TraceReader};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// CPU time of the calling thread (user and system, so page faults of a memory map count).
struct ThreadCpu;

fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

impl Measurement for ThreadCpu {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu() - start
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

const LINES: u64 = 1_000_000;
const RECORDS: u64 = 10_000_000;

/// A pseudo-random but fixed sequence (no RNG dependency in the bench).
fn mix(i: u64) -> u64 {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
}

fn text(format: Format) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * LINES as usize);
    match format {
        Format::Csv => writeln!(out, "op,file,offset,size,time_us,pid").unwrap(),
        Format::CloudPhysics => writeln!(out, "version,time,op,size,lbn").unwrap(),
        _ => {}
    }
    for i in 0..LINES {
        let x = mix(i);
        let sector = x % (1 << 32);
        let w = x.is_multiple_of(5);
        match format {
            Format::Csv => writeln!(
                out,
                "{},/data/f{},{},4096,{}.{:03},{}",
                if w { 'W' } else { 'R' },
                x % 1000,
                sector * 512,
                i,
                i % 1000,
                x % 64
            ),
            Format::CloudPhysics => {
                writeln!(out, "1,{},{},4096,{}", 5_000_000 + i, if w { "2a" } else { "28" }, sector)
            }
            Format::Msr => writeln!(
                out,
                "{},hm,{},{},{},4096,{}",
                128_166_372_003_061_629 + i * 1000,
                x % 2,
                if w { "Write" } else { "Read" },
                sector * 512,
                x % 50_000
            ),
            Format::Spc => writeln!(
                out,
                "{},{},4096,{},{}.{:06}",
                x % 3,
                sector,
                if w { 'w' } else { 'r' },
                i / 1000,
                i % 1_000_000
            ),
            Format::Blkparse(_) => writeln!(
                out,
                "  8,0    {}   {:6}  {:5}.{:09} {:5}  Q   {} {} + 8 [proc{}]",
                x % 4,
                i,
                i / 1000,
                i % 1_000_000_000,
                x % 9999,
                if w { 'W' } else { 'R' },
                sector,
                x % 10
            ),
            Format::Fiu => writeln!(
                out,
                "{} {} proc{} {} 8 {} 8 0 0a7ed8b3cf0b3aa52e7b97e0abad64e3",
                89_966_527_949_234 + i * 1000,
                x % 9999,
                x % 10,
                sector,
                if w { 'W' } else { 'R' }
            ),
            Format::Lirs => writeln!(out, "{}", x % 100_000),
            _ => unreachable!(),
        }
        .unwrap();
    }
    out
}

fn read_all(r: &mut TraceReader) -> u64 {
    let mut n = 0u64;
    let mut acc = 0u64;
    while let Some(req) = r.next_request().unwrap() {
        n += 1;
        acc = acc.wrapping_add(req.offset ^ req.size);
    }
    black_box(acc);
    n
}

fn text_readers<M: Measurement>(c: &mut Criterion<M>, clock: &str) {
    let mut g = c.benchmark_group(format!("{clock}/text"));
    g.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(LINES));
    for format in [
        Format::Csv,
        Format::CloudPhysics,
        Format::Msr,
        Format::Spc,
        Format::Blkparse(BlkEvent::Queue),
        Format::Fiu,
        Format::Lirs,
    ] {
        let data: &'static [u8] = Box::leak(text(format).into_boxed_slice());
        g.bench_function(format.name(), |b| {
            b.iter(|| {
                let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(data));
                let mut r = TraceReader::from_input(input, "bench", format).unwrap();
                assert_eq!(read_all(&mut r), LINES);
            })
        });
    }
    g.finish();
}

fn binary_readers<M: Measurement>(c: &mut Criterion<M>, clock: &str) {
    let dir = std::env::temp_dir().join(format!("bufsim-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let oracle = dir.join("trace.oracleGeneral");
    let mut bytes = Vec::with_capacity(24 * RECORDS as usize);
    for i in 0..RECORDS {
        bytes.extend_from_slice(&encode_oracle_record(i as u32 / 1000, mix(i) % 1_000_000, 4096, -1));
    }
    std::fs::write(&oracle, &bytes).unwrap();
    drop(bytes);
    let oracle = oracle.to_string_lossy().into_owned();
    let bst = dir.join("trace.bst").to_string_lossy().into_owned();
    convert(&oracle, Some(Format::Oracle), &bst, &ReadOptions::default()).unwrap();

    let mut g = c.benchmark_group(format!("{clock}/binary"));
    g.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(RECORDS));
    g.bench_function("bst (mmap)", |b| {
        b.iter(|| {
            let mut r = TraceReader::open(&bst, None).unwrap();
            assert_eq!(read_all(&mut r), RECORDS);
        })
    });
    g.bench_function("oracle (file)", |b| {
        b.iter(|| {
            let mut r = TraceReader::open(&oracle, Some(Format::Oracle)).unwrap();
            assert_eq!(read_all(&mut r), RECORDS);
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn cpu(c: &mut Criterion<ThreadCpu>) {
    text_readers(c, "cpu");
    binary_readers(c, "cpu");
}

fn wall(c: &mut Criterion) {
    text_readers(c, "wall");
    binary_readers(c, "wall");
}

criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = cpu
}
criterion_group!(wall_time, wall);
criterion_main!(cpu_time, wall_time);
