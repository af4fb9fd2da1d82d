//! Streaming in constant memory: requests synthesized on the fly (never stored) go through the
//! real readers, and the process's resident memory must not grow with the number read.
//! `scale_one_billion_requests` (ignored by default; `cargo test --release -p bufsim-trace
//! --test scale -- --ignored`) streams 10^9 CSV requests.

use std::io::Read;

use bufsim_trace::bst::{Header, HEADER_LEN};
use bufsim_trace::{AddressKind, Columns, Format, Op, ReadOptions, TraceReader};

/// An endless-looking trace: `records` lines of bufsim's CSV over 100 files, made as they are
/// read.
struct SynthCsv {
    records: u64,
    next: u64,
    line: Vec<u8>,
    pos: usize,
}

impl SynthCsv {
    fn new(records: u64) -> Self {
        SynthCsv { records, next: 0, line: b"op,file,offset,size,time_us\n".to_vec(), pos: 0 }
    }
}

impl Read for SynthCsv {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < out.len() {
            if self.pos == self.line.len() {
                if self.next == self.records {
                    break;
                }
                let i = self.next;
                self.next += 1;
                self.line.clear();
                let op = if i.is_multiple_of(7) { 'W' } else { 'R' };
                use std::io::Write;
                writeln!(self.line, "{op},/data/file{},{},4096,{}", i % 100, (i * 2_654_435_761) % (1 << 30) * 4096, i)
                    .unwrap();
                self.pos = 0;
            }
            let k = (self.line.len() - self.pos).min(out.len() - n);
            out[n..n + k].copy_from_slice(&self.line[self.pos..self.pos + k]);
            self.pos += k;
            n += k;
        }
        Ok(n)
    }
}

/// A `.bst` stream of `records` 24-byte records (time column), made as it is read.
struct SynthBst {
    header: Vec<u8>,
    records: u64,
    next: u64,
    rec: [u8; 24],
    pos: usize,
    names: Vec<u8>,
}

impl SynthBst {
    fn new(records: u64) -> Self {
        let h = Header {
            kind: AddressKind::Device,
            in_blocks: false,
            drops: false,
            columns: Columns { time: true, ..Columns::NONE },
            records,
            names: 1,
        };
        SynthBst {
            header: h.encode().to_vec(),
            records,
            next: 0,
            rec: [0; 24],
            pos: 24,
            names: b"\x03\0\0\0sda".to_vec(),
        }
    }
}

impl Read for SynthBst {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if !self.header.is_empty() {
            let k = self.header.len().min(out.len());
            out[..k].copy_from_slice(&self.header[..k]);
            self.header.drain(..k);
            return Ok(k);
        }
        let mut n = 0;
        while n < out.len() {
            if self.pos == 24 {
                if self.next == self.records {
                    let k = self.names.len().min(out.len() - n);
                    out[n..n + k].copy_from_slice(&self.names[..k]);
                    self.names.drain(..k);
                    return Ok(n + k);
                }
                let i = self.next;
                self.next += 1;
                self.rec[0..8].copy_from_slice(&((i * 2_654_435_761) % (1 << 40) * 512).to_le_bytes());
                self.rec[8..12].copy_from_slice(&4096u32.to_le_bytes());
                self.rec[12..16].copy_from_slice(&((i.is_multiple_of(3) as u32) << 31).to_le_bytes());
                self.rec[16..24].copy_from_slice(&(i * 1000).to_le_bytes());
                self.pos = 0;
            }
            let k = (24 - self.pos).min(out.len() - n);
            out[n..n + k].copy_from_slice(&self.rec[self.pos..self.pos + k]);
            self.pos += k;
            n += k;
        }
        Ok(n)
    }
}

/// Resident memory of this process, bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
}

/// Reads `total` requests (every `every_nth_writes`-th one a write, from the first), measuring
/// memory after a warm-up; returns the growth in bytes.
fn stream(mut r: TraceReader, total: u64, every_nth_writes: u64) -> u64 {
    let warm = total / 10;
    let (mut n, mut writes, mut last_time) = (0u64, 0u64, 0u64);
    let mut before = 0;
    while let Some(req) = r.next_request().unwrap() {
        n += 1;
        writes += (req.op == Op::Write) as u64;
        assert!(req.time_ns >= last_time, "requests come out in order");
        last_time = req.time_ns;
        if n == warm {
            before = rss();
        }
    }
    assert_eq!(n, total);
    assert_eq!(writes, total.div_ceil(every_nth_writes));
    rss().saturating_sub(before)
}

const MIB: u64 = 1 << 20;

#[test]
fn csv_streams_in_constant_memory() {
    let total = 3_000_000;
    let r = TraceReader::from_read(Box::new(SynthCsv::new(total)), "synth.csv", Format::Csv, &ReadOptions::default())
        .unwrap();
    let grew = stream(r, total, 7);
    // Storing requests would cost 56 bytes each: 150 MiB here. The reader keeps one line.
    assert!(grew < 4 * MIB, "memory grew by {} KiB while streaming", grew / 1024);
}

#[test]
fn bst_streams_in_constant_memory() {
    let total = 10_000_000;
    let r = TraceReader::from_read(
        Box::new(SynthBst::new(total)),
        "synth.bst",
        Format::parse("bst").unwrap(),
        &ReadOptions::default(),
    )
    .unwrap();
    let grew = stream(r, total, 3);
    assert!(grew < 4 * MIB, "memory grew by {} KiB while streaming", grew / 1024);
    assert_eq!(HEADER_LEN, 64);
}

#[test]
#[ignore = "streams 10^9 requests (minutes); run with --ignored"]
fn scale_one_billion_requests() {
    let total = 1_000_000_000;
    let start = std::time::Instant::now();
    let r = TraceReader::from_read(Box::new(SynthCsv::new(total)), "synth.csv", Format::Csv, &ReadOptions::default())
        .unwrap();
    let grew = stream(r, total, 7);
    eprintln!(
        "csv: 10^9 requests in {:.1} s, memory grew by {} KiB, resident {} MiB at the end",
        start.elapsed().as_secs_f64(),
        grew / 1024,
        rss() / MIB
    );
    assert!(grew < 4 * MIB);
    let start = std::time::Instant::now();
    let r = TraceReader::from_read(
        Box::new(SynthBst::new(total)),
        "synth.bst",
        Format::parse("bst").unwrap(),
        &ReadOptions::default(),
    )
    .unwrap();
    let grew = stream(r, total, 3);
    eprintln!("bst: 10^9 requests in {:.1} s, memory grew by {} KiB", start.elapsed().as_secs_f64(), grew / 1024);
    assert!(grew < 4 * MIB);
}
