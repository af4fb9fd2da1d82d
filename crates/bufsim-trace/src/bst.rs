//! bufsim's own binary trace format (`.bst`): a 64-byte header, fixed-size little-endian
//! records, then a table of names. It keeps exactly what a [`Request`] holds, only the columns
//! the source trace has, and reads fast: large sequential reads, never a memory map, so a
//! file cut short while it is read gives an error rather than a bus error. The byte layout is
//! documented in docs/trace-formats.md; change [`VERSION`] whenever it changes.
//!
//! Header (all integers little endian):
//! ```text
//!  0  8  magic  89 'B' 'S' 'T' 0d 0a 1a 0a
//!  8  2  version (1)
//! 10  2  header length (64)
//! 12  4  flags: 1 time_ns, 2 dur_ns, 4 pid, 8 ctx (optional columns present),
//!        16 block-addressed (offset and size count whole blocks),
//!        32 drops and hints (bit 30 of a record's file field marks a drop request, bits 30
//!        and 31 together a hint)
//! 16  1  address kind: 0 device (block trace), 1 file (file trace)
//! 17  1  record length in bytes (16 plus 8, 8, 4, 8 for each optional column present)
//! 18  6  reserved, zero
//! 24  8  record count
//! 32  8  byte offset of the name table (= 64 + count * record length)
//! 40  4  number of names
//! 44 20  reserved, zero
//! ```
//! Record: `u64 offset, u32 size, u32 file | write << 31 | drop << 30` (the drop bit only in
//! a trace with flag 32, where both bits mark a hint; file ids then have 30 bits, else 31), then `u64 time_ns`, `u64 dur_ns`,
//! `u32 pid`, `u64 ctx` for the columns the flags name, in that order.
//! Name table: for each file (file traces) or device (block traces that name theirs), in id
//! order, `u32 length` and that many bytes of UTF-8.

use std::fs::File;
use std::io::{BufRead, BufWriter, Read, Seek, SeekFrom, Write};

use crate::error::{Location, TraceError};
use crate::request::{AddressKind, Op, Request};

pub const MAGIC: [u8; 8] = *b"\x89BST\r\n\x1a\n";
pub const VERSION: u16 = 1;
pub const HEADER_LEN: usize = 64;

const HAS_TIME: u32 = 1;
const HAS_DUR: u32 = 2;
const HAS_PID: u32 = 4;
const HAS_CTX: u32 = 8;
const IN_BLOCKS: u32 = 16;
const DROPS: u32 = 32;
const KNOWN_FLAGS: u32 = 63;

/// Names longer than this are refused, so a corrupt length cannot ask for gigabytes.
const MAX_NAME: u32 = 1 << 16;
/// The file id shares its 32 bits with the write bit, and in a trace with drops with the drop
/// bit too; the writer keeps ids below the drop bit whatever it writes.
const MAX_FILE: u32 = (1 << 31) - 1;
const WRITE_BIT: u32 = 1 << 31;
const DROP_BIT: u32 = 1 << 30;
const MAX_FILE_WITH_DROPS: u32 = DROP_BIT - 1;

/// Which optional columns a trace carries (the others read as 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub time: bool,
    pub dur: bool,
    pub pid: bool,
    pub ctx: bool,
}

impl Columns {
    pub const ALL: Columns = Columns { time: true, dur: true, pid: true, ctx: true };
    pub const NONE: Columns = Columns { time: false, dur: false, pid: false, ctx: false };
}

/// The decoded header of a `.bst` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: AddressKind,
    pub in_blocks: bool,
    /// Records may be drop requests (flag 32).
    pub drops: bool,
    pub columns: Columns,
    pub records: u64,
    pub names: u32,
}

/// Where each column sits in a record.
#[derive(Clone, Copy, Debug)]
struct Layout {
    len: usize,
    time: Option<usize>,
    dur: Option<usize>,
    pid: Option<usize>,
    ctx: Option<usize>,
}

impl Layout {
    fn of(c: Columns) -> Layout {
        let mut at = 16;
        let mut place = |present: bool, width: usize| {
            present.then(|| {
                let p = at;
                at += width;
                p
            })
        };
        let time = place(c.time, 8);
        let dur = place(c.dur, 8);
        let pid = place(c.pid, 4);
        let ctx = place(c.ctx, 8);
        Layout { len: at, time, dur, pid, ctx }
    }
}

impl Header {
    pub fn record_len(&self) -> usize {
        Layout::of(self.columns).len
    }

    fn flags(&self) -> u32 {
        let c = self.columns;
        (c.time as u32 * HAS_TIME)
            | (c.dur as u32 * HAS_DUR)
            | (c.pid as u32 * HAS_PID)
            | (c.ctx as u32 * HAS_CTX)
            | (self.in_blocks as u32 * IN_BLOCKS)
            | (self.drops as u32 * DROPS)
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        h[12..16].copy_from_slice(&self.flags().to_le_bytes());
        h[16] = match self.kind {
            AddressKind::Device => 0,
            AddressKind::File => 1,
        };
        h[17] = self.record_len() as u8;
        h[24..32].copy_from_slice(&self.records.to_le_bytes());
        let names_at = HEADER_LEN as u64 + self.records * self.record_len() as u64;
        h[32..40].copy_from_slice(&names_at.to_le_bytes());
        h[40..44].copy_from_slice(&self.names.to_le_bytes());
        h
    }

    /// Decodes and checks a header; `path` names the file in errors.
    pub fn decode(bytes: &[u8], path: &str) -> Result<Header, TraceError> {
        let bad = |at: u64, m: String| TraceError::malformed(path, Location::Byte(at), m);
        if bytes.len() < HEADER_LEN {
            return Err(bad(0, format!("truncated header: {} of {HEADER_LEN} bytes", bytes.len())));
        }
        if bytes[0..8] != MAGIC {
            return Err(bad(
                0,
                "not a bufsim binary trace (bad magic); convert a trace with `bufsim convert IN -o OUT.bst`".into(),
            ));
        }
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        let version = u16_at(8);
        if version != VERSION {
            return Err(bad(
                8,
                format!("format version {version}; this bufsim reads version {VERSION} (convert the trace again)"),
            ));
        }
        if u16_at(10) as usize != HEADER_LEN {
            return Err(bad(10, format!("header length {} (expected {HEADER_LEN})", u16_at(10))));
        }
        let flags = u32_at(12);
        if flags & !KNOWN_FLAGS != 0 {
            return Err(bad(12, format!("unknown flags {flags:#x}; the file was written by a newer bufsim")));
        }
        let kind = match bytes[16] {
            0 => AddressKind::Device,
            1 => AddressKind::File,
            k => return Err(bad(16, format!("address kind {k} (expected 0 device or 1 file)"))),
        };
        let columns = Columns {
            time: flags & HAS_TIME != 0,
            dur: flags & HAS_DUR != 0,
            pid: flags & HAS_PID != 0,
            ctx: flags & HAS_CTX != 0,
        };
        let header = Header {
            kind,
            in_blocks: flags & IN_BLOCKS != 0,
            drops: flags & DROPS != 0,
            columns,
            records: u64_at(24),
            names: u32_at(40),
        };
        let len = header.record_len();
        if bytes[17] as usize != len {
            return Err(bad(17, format!("record length {} does not match the flags (expected {len})", bytes[17])));
        }
        let names_at = header.records.checked_mul(len as u64).and_then(|b| b.checked_add(HEADER_LEN as u64));
        if names_at != Some(u64_at(32)) {
            return Err(bad(32, "name table offset does not match the record count".into()));
        }
        if kind == AddressKind::File && header.records > 0 && header.names == 0 {
            return Err(bad(40, "a file trace without file names".into()));
        }
        Ok(header)
    }

    /// The byte offset where the records end (the name table starts), checked against the
    /// length of the whole file: a header promising more records than the file holds is a
    /// file cut short (or still being written).
    fn end(&self, file_len: u64, path: &str) -> Result<u64, TraceError> {
        let len = self.record_len() as u64;
        let end = HEADER_LEN as u64 + self.records * len;
        if end > file_len {
            let whole = (file_len - HEADER_LEN as u64) / len;
            return Err(TraceError::malformed(
                path,
                Location::Byte(HEADER_LEN as u64 + whole * len),
                format!("truncated: the header promises {} records, the file holds {whole}", self.records),
            ));
        }
        Ok(end)
    }

    /// How many file or device ids records may use.
    fn ids(&self) -> u32 {
        match (self.kind, self.names) {
            (AddressKind::File, n) => n,
            (AddressKind::Device, 0) => 1 << 16,
            (AddressKind::Device, n) => n.min(1 << 16),
        }
    }

    /// Whether a decoded record fits the header; `max` is [`Header::ids`].
    #[inline(always)]
    fn valid(&self, r: &Request, max: u32) -> bool {
        r.file < max && (self.in_blocks || r.offset.checked_add(r.size).is_some())
    }

    #[cold]
    #[inline(never)]
    fn bad_record(r: &Request, max: u32, path: &str, at: u64) -> TraceError {
        let m = if r.file >= max {
            format!("file or device id {} is out of range (the trace names {max})", r.file)
        } else {
            "offset + size is past the largest byte address (2^64)".to_string()
        };
        TraceError::malformed(path, Location::Byte(at), m)
    }
}

#[inline]
fn decode_record(rec: &[u8], l: &Layout, in_blocks: bool, drops: bool) -> Request {
    // The fixed part as an array: its fields need no bounds checks.
    let base: &[u8; 16] = rec[..16].try_into().unwrap();
    let file_op = u32::from_le_bytes([base[12], base[13], base[14], base[15]]);
    let u32_at = |i: usize| u32::from_le_bytes(rec[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(rec[i..i + 8].try_into().unwrap());
    Request {
        offset: u64::from_le_bytes([base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7]]),
        size: u32::from_le_bytes([base[8], base[9], base[10], base[11]]) as u64,
        file: file_op & if drops { MAX_FILE_WITH_DROPS } else { MAX_FILE },
        op: match (file_op & WRITE_BIT != 0, drops && file_op & DROP_BIT != 0) {
            (false, false) => Op::Read,
            (true, false) => Op::Write,
            (false, true) => Op::Drop,
            // A write that drops is no request: the pair marks a hint.
            (true, true) => Op::Hint,
        },
        time_ns: l.time.map_or(0, u64_at),
        dur_ns: l.dur.map_or(0, u64_at),
        pid: l.pid.map_or(0, u32_at),
        ctx: l.ctx.map_or(0, u64_at),
        in_blocks,
        // Not kept in .bst: what a short read asked for matters only to read-ahead validation.
        unfilled: 0,
        opened: false,
    }
}

/// Writes a `.bst` file: records as they come, names at the end, then the header's counts.
pub struct BstWriter<W: Write + Seek> {
    out: BufWriter<W>,
    path: String,
    header: Header,
    layout: Layout,
    rec: Vec<u8>,
}

impl BstWriter<File> {
    /// Creates (or replaces) the file at `path`.
    pub fn create(path: &str, kind: AddressKind, in_blocks: bool, columns: Columns) -> Result<Self, TraceError> {
        let f = File::create(path).map_err(|e| TraceError::io(path, &e))?;
        BstWriter::new(f, path, kind, in_blocks, columns)
    }
}

impl<W: Write + Seek> BstWriter<W> {
    pub fn new(out: W, path: &str, kind: AddressKind, in_blocks: bool, columns: Columns) -> Result<Self, TraceError> {
        let header = Header { kind, in_blocks, drops: false, columns, records: 0, names: 0 };
        let layout = Layout::of(columns);
        let mut out = BufWriter::with_capacity(1 << 20, out);
        out.write_all(&header.encode()).map_err(|e| TraceError::io(path, &e))?;
        Ok(BstWriter { out, path: path.to_string(), header, layout, rec: vec![0; layout.len] })
    }

    /// Appends one request. Sizes must fit 32 bits (Linux caps one read or write at
    /// 0x7ffff000 bytes) and ids 30 bits; a request of the other addressing is refused.
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let n = self.header.records;
        let bad = |m: String| {
            Err(TraceError::malformed(&self.path, Location::Byte(HEADER_LEN as u64 + n * self.layout.len as u64), m))
        };
        if r.in_blocks != self.header.in_blocks {
            return bad("request addressing (bytes or whole blocks) differs from the trace's".into());
        }
        let Ok(size) = u32::try_from(r.size) else {
            return bad(format!("request size {} does not fit the 32-bit size of a .bst record", r.size));
        };
        if r.file > MAX_FILE_WITH_DROPS {
            return bad(format!("file id {} does not fit 30 bits", r.file));
        }
        let rec = &mut self.rec;
        rec[0..8].copy_from_slice(&r.offset.to_le_bytes());
        rec[8..12].copy_from_slice(&size.to_le_bytes());
        let file_op = r.file
            | match r.op {
                Op::Read => 0,
                Op::Write => WRITE_BIT,
                Op::Drop => DROP_BIT,
                Op::Hint => WRITE_BIT | DROP_BIT,
            };
        self.header.drops |= matches!(r.op, Op::Drop | Op::Hint);
        rec[12..16].copy_from_slice(&file_op.to_le_bytes());
        let l = self.layout;
        if let Some(p) = l.time {
            rec[p..p + 8].copy_from_slice(&r.time_ns.to_le_bytes());
        }
        if let Some(p) = l.dur {
            rec[p..p + 8].copy_from_slice(&r.dur_ns.to_le_bytes());
        }
        if let Some(p) = l.pid {
            rec[p..p + 4].copy_from_slice(&r.pid.to_le_bytes());
        }
        if let Some(p) = l.ctx {
            rec[p..p + 8].copy_from_slice(&r.ctx.to_le_bytes());
        }
        self.out.write_all(rec).map_err(|e| TraceError::io(&self.path, &e))?;
        self.header.records += 1;
        Ok(())
    }

    pub fn records(&self) -> u64 {
        self.header.records
    }

    /// Writes the name table and the final header; returns the writer's output.
    pub fn finish(mut self, names: &[String]) -> Result<W, TraceError> {
        let io = |e: std::io::Error| TraceError::io(&self.path, &e);
        let count = u32::try_from(names.len())
            .map_err(|_| TraceError::malformed(&self.path, Location::File, "more than 2^32 names"))?;
        for n in names {
            let len = u32::try_from(n.len()).ok().filter(|&l| l <= MAX_NAME).ok_or_else(|| {
                TraceError::malformed(
                    &self.path,
                    Location::File,
                    format!("name longer than {MAX_NAME} bytes: {}...", n.chars().take(64).collect::<String>()),
                )
            })?;
            self.out.write_all(&len.to_le_bytes()).map_err(io)?;
            self.out.write_all(n.as_bytes()).map_err(io)?;
        }
        self.header.names = count;
        let mut out = self.out.into_inner().map_err(|e| TraceError::io(&self.path, e.error()))?;
        out.seek(SeekFrom::Start(0)).map_err(io)?;
        out.write_all(&self.header.encode()).map_err(io)?;
        out.flush().map_err(io)?;
        Ok(out)
    }
}

/// Reads the name table from `bytes` (`at` is its byte offset in the file).
fn decode_names(bytes: &[u8], count: u32, at: u64, path: &str) -> Result<Vec<String>, TraceError> {
    let mut names = Vec::new();
    let mut p = 0usize;
    for i in 0..count {
        let bad = |m: String| TraceError::malformed(path, Location::Byte(at + p as u64), m);
        let Some(len) = bytes.get(p..p + 4) else {
            return Err(bad(format!("name table ends after {i} of {count} names")));
        };
        let len = u32::from_le_bytes(len.try_into().unwrap());
        if len > MAX_NAME {
            return Err(bad(format!("name {i} claims {len} bytes (at most {MAX_NAME})")));
        }
        let Some(text) = bytes.get(p + 4..p + 4 + len as usize) else {
            return Err(bad(format!("name table ends inside name {i}")));
        };
        names.push(String::from_utf8_lossy(text).into_owned());
        p += 4 + len as usize;
    }
    if p != bytes.len() {
        return Err(TraceError::malformed(
            path,
            Location::Byte(at + p as u64),
            format!("{} bytes after the name table", bytes.len() - p),
        ));
    }
    Ok(names)
}

/// A whole `.bst` held in memory, its records decoded in place.
pub struct MappedBstReader {
    map: Vec<u8>,
    path: String,
    header: Header,
    layout: Layout,
    names: Vec<String>,
    ids: u32,
    pos: usize,
    end: usize,
}

impl MappedBstReader {
    /// Reads a whole `.bst` held in memory.
    pub fn from_bytes(bytes: Vec<u8>, path: &str) -> Result<Self, TraceError> {
        let map = bytes;
        let header = Header::decode(&map, path)?;
        let layout = Layout::of(header.columns);
        let end = header.end(map.len() as u64, path)? as usize;
        let names = decode_names(&map[end..], header.names, end as u64, path)?;
        let ids = header.ids();
        Ok(MappedBstReader { map, path: path.to_string(), header, layout, names, ids, pos: HEADER_LEN, end })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The byte offset of the record read last.
    pub(crate) fn record_offset(&self) -> u64 {
        self.pos.saturating_sub(self.layout.len) as u64
    }

    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let at = self.pos;
        self.pos += self.layout.len;
        let r = decode_record(&self.map[at..self.pos], &self.layout, self.header.in_blocks, self.header.drops);
        if !self.header.valid(&r, self.ids) {
            return Err(Header::bad_record(&r, self.ids, &self.path, at as u64));
        }
        Ok(Some(r))
    }
}

/// Reads a `.bst` from a stream (a compressed file): records in order, names at the end.
pub struct BstReader {
    inner: Box<dyn BufRead + Send>,
    path: String,
    header: Header,
    layout: Layout,
    names: Vec<String>,
    buf: Vec<u8>,
    read: u64,
}

fn read_full(inner: &mut dyn BufRead, buf: &mut [u8], path: &str) -> Result<usize, TraceError> {
    let mut got = 0;
    while got < buf.len() {
        match inner.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, &e)),
        }
    }
    Ok(got)
}

impl BstReader {
    pub(crate) fn new(mut inner: Box<dyn BufRead + Send>, path: &str) -> Result<Self, TraceError> {
        let mut head = [0u8; HEADER_LEN];
        let got = read_full(&mut *inner, &mut head, path)?;
        let header = Header::decode(&head[..got], path)?;
        let layout = Layout::of(header.columns);
        Ok(BstReader {
            inner,
            path: path.to_string(),
            header,
            layout,
            names: Vec::new(),
            buf: vec![0; layout.len],
            read: 0,
        })
    }

    /// Reads a plain `.bst` file: its length and name table are checked first, then records
    /// are read in order. A file cut short while it is read ends in an error, never a fault.
    pub(crate) fn from_file(mut file: File, path: &str, meter: &crate::progress::Meter) -> Result<Self, TraceError> {
        let io = |e: std::io::Error| TraceError::io(path, &e);
        let file_len = file.metadata().map_err(io)?.len();
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut inner: Box<dyn BufRead + Send> =
            Box::new(std::io::BufReader::with_capacity(crate::input::READ_BUFFER, meter.counted(file)));
        meter.stage(&format!("reading {path}"), "B", file_len);
        let mut head = [0u8; HEADER_LEN];
        let got = read_full(&mut *inner, &mut head, path)?;
        let header = Header::decode(&head[..got], path)?;
        let end = header.end(file_len, path)?;
        // The names first (the table is at most a few MiB), from a second handle on the file.
        let mut names_file = std::io::BufReader::new(File::open(path).map_err(io)?);
        names_file.seek(SeekFrom::Start(end)).map_err(io)?;
        let mut table = Vec::new();
        std::io::Read::take(&mut names_file, file_len - end).read_to_end(&mut table).map_err(io)?;
        let names = decode_names(&table, header.names, end, path)?;
        let layout = Layout::of(header.columns);
        Ok(BstReader { inner, path: path.to_string(), header, layout, names, buf: vec![0; layout.len], read: 0 })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The byte offset of the record read last.
    pub(crate) fn record_offset(&self) -> u64 {
        self.offset().saturating_sub(self.layout.len as u64)
    }

    /// The names; read at the end of the stream, so empty until every record was read.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn offset(&self) -> u64 {
        HEADER_LEN as u64 + self.read * self.layout.len as u64
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.read >= self.header.records {
            if self.read == self.header.records {
                self.read += 1; // read the names once
                self.read_names()?;
            }
            return Ok(None);
        }
        let at = self.offset();
        let len = self.layout.len;
        // Decode straight from the input's buffer when a whole record is there.
        if let Ok(avail) = self.inner.fill_buf() {
            if avail.len() >= len {
                let r = decode_record(&avail[..len], &self.layout, self.header.in_blocks, self.header.drops);
                self.inner.consume(len);
                self.read += 1;
                if !self.header.valid(&r, self.header.ids()) {
                    return Err(Header::bad_record(&r, self.header.ids(), &self.path, at));
                }
                return Ok(Some(r));
            }
        }
        let got = read_full(&mut *self.inner, &mut self.buf, &self.path)?;
        if got < self.buf.len() {
            let promised = self.header.records;
            self.header.records = self.read; // nothing more to read
            self.read += 1; // and no name table to look for
            return Err(TraceError::malformed(
                &self.path,
                Location::Byte(at),
                format!(
                    "truncated: the header promises {promised} records, the stream ends inside record {}",
                    self.read - 1
                ),
            ));
        }
        self.read += 1;
        let r = decode_record(&self.buf, &self.layout, self.header.in_blocks, self.header.drops);
        if !self.header.valid(&r, self.header.ids()) {
            return Err(Header::bad_record(&r, self.header.ids(), &self.path, at));
        }
        Ok(Some(r))
    }

    fn read_names(&mut self) -> Result<(), TraceError> {
        let at = HEADER_LEN as u64 + self.header.records * self.layout.len as u64;
        // Bounded: each name is at most MAX_NAME bytes and the table is read as it goes.
        let mut bytes = Vec::new();
        let mut len = [0u8; 4];
        for _ in 0..self.header.names {
            let got = read_full(&mut *self.inner, &mut len, &self.path)?;
            bytes.extend_from_slice(&len[..got]);
            let n = u32::from_le_bytes(len);
            if got < 4 || n > MAX_NAME {
                break; // decode_names reports it
            }
            let start = bytes.len();
            bytes.resize(start + n as usize, 0);
            let got = read_full(&mut *self.inner, &mut bytes[start..], &self.path)?;
            bytes.truncate(start + got);
            if got < n as usize {
                break;
            }
        }
        let mut extra = [0u8; 1];
        if read_full(&mut *self.inner, &mut extra, &self.path)? > 0 {
            bytes.push(extra[0]);
        }
        self.names = decode_names(&bytes, self.header.names, at, &self.path)?;
        Ok(())
    }
}
