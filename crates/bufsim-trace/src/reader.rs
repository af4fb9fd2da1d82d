//! [`TraceReader`]: one streaming reader over every format, with `--skip-bad`.

use std::io::{BufRead, BufReader};

use crate::arc::ArcReader;
use crate::blkparse::BlkparseReader;
use crate::bst::{BstReader, Columns, Header, MappedBstReader};
use crate::cloudphysics::CloudPhysicsReader;
use crate::csv::CsvReader;
use crate::detect::{detect_opened, HEAD};
use crate::error::{Location, TraceError, TraceErrorKind};
use crate::fiu::FiuReader;
use crate::format::Format;
use crate::input::{decompressed, open_file, Compression, Opened, READ_BUFFER};
use crate::lcs::{LcsCsvReader, LcsTxtReader};
use crate::lines::LineReader;
use crate::lirs::LirsReader;
use crate::msr::MsrReader;
use crate::oracle::OracleReader;
use crate::request::{AddressKind, Request};
use crate::spc::SpcReader;

/// How to read a trace, besides its format.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Count and pass over malformed records instead of stopping at the first one.
    pub skip_bad: bool,
    /// Where the bytes read of a trace file are counted (a progress bar's "reading" stage).
    pub meter: crate::progress::Meter,
}

/// The malformed records a `skip_bad` reader passed over: how many, and the first few
/// (constant memory however many there are); and, for any reader, whether the trace ended
/// inside a record (a text trace whose last line has no line end: cut short?).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipReport {
    pub count: u64,
    pub first: Vec<TraceError>,
    pub ended_inside: Option<TraceError>,
}

impl SkipReport {
    /// How many errors are kept to show where the bad records are.
    pub const KEEP: usize = 5;

    fn add(&mut self, e: TraceError) {
        self.count += 1;
        if self.first.len() < Self::KEEP {
            self.first.push(e);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0 && self.ended_inside.is_none()
    }

    /// One line: `skipped 12 malformed records; first: t.csv:3: ...; t.csv:9: ...`, and/or
    /// `t.csv:9: the trace ends inside this line ...` (after the list: `. also t.csv:9: ...`).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.count > 0 {
            let first: Vec<String> = self.first.iter().map(ToString::to_string).collect();
            let s = if self.count == 1 { "" } else { "s" };
            parts.push(format!("skipped {} malformed record{s}; first: {}", self.count, first.join("; ")));
        }
        if let Some(e) = &self.ended_inside {
            // A sentence of its own: after the list of skipped records it would read as one more.
            parts.push(if parts.is_empty() { e.to_string() } else { format!("also {e}") });
        }
        parts.join(". ")
    }
}

enum Inner {
    Csv(CsvReader),
    CloudPhysics(CloudPhysicsReader),
    Oracle(OracleReader),
    Msr(MsrReader),
    Blkparse(BlkparseReader),
    Spc(SpcReader),
    Fiu(FiuReader),
    LcsCsv(LcsCsvReader),
    LcsTxt(LcsTxtReader),
    Lirs(LirsReader),
    Arc(ArcReader),
    Bst(BstReader),
    MappedBst(MappedBstReader),
}

/// A streaming reader of any supported format: constant memory in the trace's length (plus
/// the names of the files or devices it has seen).
pub struct TraceReader {
    inner: Inner,
    format: Format,
    skip_bad: bool,
    skipped: SkipReport,
    /// Requests still to give before the reader says the trace has ended (`u64::MAX`: all).
    left: u64,
    /// Whether any request was given: a `skip_bad` read that passed over every record read
    /// nothing, which is an error, not an empty trace.
    gave_any: bool,
    /// Block traces: what [`DeviceBlocks`] has seen of the devices' addresses.
    devices: Option<DeviceBlocks>,
}

/// The engine's cache key of a block on device 0 is the block number itself (so one device takes
/// any 64-bit block id, such as libCacheSim's hashed object ids), and on any other device the
/// device number above the block's low 48 bits (`layout::block_key` in bufsim-core). Blocks of a
/// trace of several devices past 2^48 would share keys with other blocks and count each other's
/// hits, so such a trace is refused at the first request that would: on a device other than 0,
/// or on device 0 once another device has appeared (and another device once device 0 went
/// that far). Byte addresses are held to 2^48 blocks of the smallest block size, 512 bytes
/// (128 PiB; no device is larger), so the limit does not depend on `--block-size`.
#[derive(Default)]
struct DeviceBlocks {
    /// A device other than 0 has appeared.
    several: bool,
    /// Where device 0 first reached past the limit.
    far0: Option<Location>,
}

/// Blocks a device of a trace of several devices can have (see [`DeviceBlocks`]).
pub const MAX_DEVICE_BLOCKS: u64 = 1 << 48;
/// The byte address that is [`MAX_DEVICE_BLOCKS`] blocks of the smallest block size.
const MAX_DEVICE_BYTES: u64 = MAX_DEVICE_BLOCKS * 512;

impl DeviceBlocks {
    /// Whether `r` can need a look: it reaches past the limit, or is the first on a device
    /// other than 0. Cheap: most requests of most traces are neither.
    #[inline]
    fn unusual(&self, r: &Request) -> bool {
        let limit = if r.in_blocks { MAX_DEVICE_BLOCKS } else { MAX_DEVICE_BYTES };
        r.offset + r.size > limit || (r.file != 0 && !self.several)
    }
}

/// The format to read `path` with: `format` if given (a `bst` file's address kind is read
/// from its header), otherwise detected from the content.
///
/// It opens and reads the trace, so on an input that cannot be read twice (standard input, a
/// pipe, see [`crate::rewindable`]) use [`TraceReader::open_with`] with the format unresolved
/// instead: it detects and reads in one pass.
pub fn resolve(path: &str, format: Option<Format>) -> Result<Format, TraceError> {
    if !crate::rewindable(path) {
        return Err(crate::input::not_rewindable(path, "this command"));
    }
    match format {
        None => crate::detect(path),
        Some(Format::Bst(_)) => {
            let o = Opened::open(path, crate::bst::HEADER_LEN)?;
            Ok(Format::Bst(Header::decode(&o.head, path)?.kind))
        }
        Some(f) => {
            // Reports a missing file before anything else.
            open_file(path, &crate::Meter::default())?;
            Ok(f)
        }
    }
}

/// The most one request may cover: 2^32 - 1 bytes, or blocks in traces that count blocks (what
/// a `.bst` record's size field holds). Anything larger is no request a system issues, and
/// splitting it into block accesses would run for hours.
pub const MAX_REQUEST_SIZE: u64 = u32::MAX as u64;

impl TraceReader {
    /// Opens `path` in `format` (`None` detects it from the content); gzip and zstd files are
    /// decompressed as they are read.
    pub fn open(path: &str, format: Option<Format>) -> Result<TraceReader, TraceError> {
        Self::open_with(path, format, &ReadOptions::default())
    }

    /// The trace is opened once and read in one pass: detection looks at a buffered head that
    /// the reader then consumes, so standard input (`-`), pipes and FIFOs lose nothing.
    pub fn open_with(path: &str, format: Option<Format>, opts: &ReadOptions) -> Result<TraceReader, TraceError> {
        let mut opened = Opened::open_metered(path, HEAD, &opts.meter)?;
        let (format, lines_before) = match format {
            Some(f) => (f, 0),
            None => detect_opened(&mut opened, path)?,
        };
        if matches!(format, Format::Bst(_)) {
            if let Some(file) = opened.file.take() {
                // A plain file is read by position (never mapped: a file cut short while it is
                // read must give an error, not a bus error).
                let r = BstReader::from_file(file, path, &opts.meter)?;
                let format = Format::Bst(r.header().kind);
                return Ok(TraceReader::with(Inner::Bst(r), format, opts));
            }
        }
        Self::from_input_at(opened.into_input(), path, format, opts, lines_before)
    }

    /// Reads any input in one pass, detecting its format from a buffered head (as
    /// [`TraceReader::open_with`] reads standard input); `name` is used in errors.
    pub fn detect_read(
        input: Box<dyn std::io::Read + Send>,
        name: &str,
        opts: &ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        let mut opened = Opened::from_read(input, name, HEAD, None, None)?;
        let (format, lines_before) = detect_opened(&mut opened, name)?;
        Self::from_input_at(opened.into_input(), name, format, opts, lines_before)
    }

    fn with(inner: Inner, format: Format, opts: &ReadOptions) -> TraceReader {
        let devices = (format.address_kind() == AddressKind::Device).then(DeviceBlocks::default);
        TraceReader {
            inner,
            format,
            skip_bad: opts.skip_bad,
            skipped: SkipReport::default(),
            left: u64::MAX,
            gave_any: false,
            devices,
        }
    }

    /// Reads a whole trace held in memory (decompressing it if it is gzip or zstd); a `bst`
    /// is decoded in place, as from a memory map.
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: &str,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        if matches!(format, Format::Bst(_)) && Compression::sniff(&bytes) == Compression::None {
            let r = MappedBstReader::from_bytes(bytes, name)?;
            let format = Format::Bst(r.header().kind);
            return Ok(TraceReader::with(Inner::MappedBst(r), format, opts));
        }
        // Bytes in memory need no read buffer (a decompressor gets its own).
        let (input, _) = decompressed(Box::new(std::io::Cursor::new(bytes)), name)?;
        Self::from_input_with(input, name, format, opts)
    }

    /// Reads `format` from any buffered, already decompressed input; `name` is used in errors.
    pub fn from_input(input: Box<dyn BufRead + Send>, name: &str, format: Format) -> Result<TraceReader, TraceError> {
        Self::from_input_with(input, name, format, &ReadOptions::default())
    }

    /// Reads `format` from any input, decompressing it if its first bytes are gzip or zstd.
    pub fn from_read(
        input: Box<dyn std::io::Read + Send>,
        name: &str,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        let (input, _) = decompressed(Box::new(BufReader::with_capacity(READ_BUFFER, input)), name)?;
        Self::from_input_with(input, name, format, opts)
    }

    pub fn from_input_with(
        input: Box<dyn BufRead + Send>,
        name: &str,
        format: Format,
        opts: &ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        Self::from_input_at(input, name, format, opts, 0)
    }

    /// [`TraceReader::from_input_with`] for input whose first `lines_before` lines were read
    /// already (comments detection passed over), so errors name the right lines.
    fn from_input_at(
        input: Box<dyn BufRead + Send>,
        name: &str,
        format: Format,
        opts: &ReadOptions,
        lines_before: u64,
    ) -> Result<TraceReader, TraceError> {
        let inner = match format {
            Format::Oracle => Inner::Oracle(OracleReader::new(input, name)),
            Format::Bst(_) => Inner::Bst(BstReader::new(input, name)?),
            _ => {
                let lines = LineReader::new(input, name).after_lines(lines_before);
                match format {
                    Format::Csv | Format::BlockCsv => {
                        let r = CsvReader::new(lines)?;
                        if r.device_addressed() != (format == Format::BlockCsv) {
                            let (has, want) =
                                if r.device_addressed() { ("device", "block-csv") } else { ("file", "csv") };
                            return Err(TraceError::unknown_format(
                                name,
                                format!("the header names `{has}` columns: read it with --format {want} (or auto)"),
                            ));
                        }
                        Inner::Csv(r)
                    }
                    Format::CloudPhysics => Inner::CloudPhysics(CloudPhysicsReader::new(lines)),
                    Format::Msr => Inner::Msr(MsrReader::new(lines)),
                    Format::Blkparse(event) => Inner::Blkparse(BlkparseReader::new(lines, event)),
                    Format::Spc => Inner::Spc(SpcReader::new(lines)),
                    Format::Fiu => Inner::Fiu(FiuReader::new(lines)),
                    Format::LcsCsv => Inner::LcsCsv(LcsCsvReader::new(lines)?),
                    Format::LcsTxt => Inner::LcsTxt(LcsTxtReader::new(lines)),
                    Format::Lirs => Inner::Lirs(LirsReader::new(lines)),
                    Format::Arc => Inner::Arc(ArcReader::new(lines)),
                    Format::Oracle | Format::Bst(_) => unreachable!("binary formats are matched above"),
                }
            }
        };
        let format = match &inner {
            Inner::Bst(r) => Format::Bst(r.header().kind),
            _ => format,
        };
        Ok(TraceReader::with(inner, format, opts))
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn address_kind(&self) -> AddressKind {
        self.format.address_kind()
    }

    /// Whether requests name whole blocks (`Request::in_blocks`).
    pub fn in_blocks(&self) -> bool {
        match &self.inner {
            Inner::Bst(r) => r.header().in_blocks,
            Inner::MappedBst(r) => r.header().in_blocks,
            _ => self.format.in_blocks(),
        }
    }

    /// The optional columns this trace carries; the others read as 0.
    pub fn columns(&self) -> Columns {
        let c = |time, dur, pid, ctx| Columns { time, dur, pid, ctx };
        match &self.inner {
            Inner::Csv(r) => r.columns(),
            Inner::CloudPhysics(_) | Inner::Oracle(_) | Inner::Spc(_) => c(true, false, false, false),
            Inner::Msr(_) => c(true, true, false, false),
            Inner::Blkparse(_) | Inner::Fiu(_) => c(true, false, true, false),
            Inner::LcsCsv(r) => c(r.has_time(), false, false, false),
            Inner::LcsTxt(_) | Inner::Lirs(_) | Inner::Arc(_) => Columns::NONE,
            Inner::Bst(r) => r.header().columns,
            Inner::MappedBst(r) => r.header().columns,
        }
    }

    /// Names of the files (file traces) or devices (block traces that name several) seen so
    /// far, indexed by `Request::file`. A compressed `bst` stream has them only at its end.
    pub fn file_names(&self) -> &[String] {
        match &self.inner {
            Inner::Csv(r) if !r.device_addressed() => r.file_names(),
            Inner::Msr(r) => r.device_names(),
            Inner::Blkparse(r) => r.device_names(),
            Inner::Spc(r) => r.device_names(),
            Inner::Fiu(r) => r.device_names(),
            Inner::Bst(r) => r.names(),
            Inner::MappedBst(r) => r.names(),
            _ => &[],
        }
    }

    /// Whether malformed records are passed over (`ReadOptions::skip_bad`).
    pub fn skips_bad(&self) -> bool {
        self.skip_bad
    }

    /// The malformed records passed over so far (always empty without `skip_bad`).
    pub fn skipped(&self) -> &SkipReport {
        &self.skipped
    }

    #[inline]
    fn next_raw(&mut self) -> Result<Option<Request>, TraceError> {
        match &mut self.inner {
            Inner::Csv(r) => r.next_request(),
            Inner::CloudPhysics(r) => r.next_request(),
            Inner::Oracle(r) => r.next_request(),
            Inner::Msr(r) => r.next_request(),
            Inner::Blkparse(r) => r.next_request(),
            Inner::Spc(r) => r.next_request(),
            Inner::Fiu(r) => r.next_request(),
            Inner::LcsCsv(r) => r.next_request(),
            Inner::LcsTxt(r) => r.next_request(),
            Inner::Lirs(r) => r.next_request(),
            Inner::Arc(r) => r.next_request(),
            Inner::Bst(r) => r.next_request(),
            Inner::MappedBst(r) => r.next_request(),
        }
    }

    /// Appends the next requests to `out`, at most `max`, and returns how many (0 at the end
    /// of the trace): what [`TraceReader::next_request`] would give one at a time, with the
    /// same errors. Formats of fixed-size records are decoded in a tight loop.
    pub fn fill(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let want = max.min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let mut n = 0;
        if let Inner::Oracle(r) = &mut self.inner {
            n = r.decode_into(out, want)?;
            self.left -= n as u64;
            self.gave_any |= n > 0;
        }
        while n < want {
            match self.next_request()? {
                Some(r) => out.push(r),
                None => break,
            }
            n += 1;
        }
        Ok(n)
    }

    /// Whether [`TraceReader::fill_blocks`] can give this trace's requests: every record of an
    /// oracleGeneral trace is a read of one block of device 0.
    pub fn gives_blocks(&self) -> bool {
        matches!(self.inner, Inner::Oracle(_))
    }

    /// [`TraceReader::fill`] for a trace that [`TraceReader::gives_blocks`]: appends to `out`
    /// the block number each request reads, with nothing else to build, up to `max`. Returns
    /// how many; 0 at the end of the trace, for a record that needs [`TraceReader::fill`]'s
    /// care (a malformed one, reported or skipped there) and for other formats.
    pub fn fill_blocks(&mut self, out: &mut Vec<u64>, max: usize) -> Result<usize, TraceError> {
        let want = max.min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let Inner::Oracle(r) = &mut self.inner else { return Ok(0) };
        let n = r.decode_blocks(out, want)?;
        self.left -= n as u64;
        self.gave_any |= n > 0;
        Ok(n)
    }

    /// Ends the trace after its first `n` requests (0: reads them all).
    pub fn limited(mut self, n: u64) -> Self {
        self.left = if n == 0 { u64::MAX } else { n };
        self
    }

    /// The next request; `Ok(None)` at the end of the trace. With `skip_bad`, a malformed record
    /// (one the reader has consumed, reported at its line or byte) is counted and passed over;
    /// input that cannot be read at all still stops the reader.
    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        loop {
            let next = match self.next_raw() {
                Ok(Some(r)) if r.size > MAX_REQUEST_SIZE || (r.in_blocks && r.offset.checked_add(r.size).is_none()) => {
                    Err(self.out_of_range(&r))
                }
                Ok(Some(r)) if self.devices.as_ref().is_some_and(|d| d.unusual(&r)) => self.check_devices(r),
                Ok(None) => {
                    self.note_end();
                    return match self.skipped.first.first() {
                        Some(first) if !self.gave_any => Err(self.nothing_read(first)),
                        _ => Ok(None),
                    };
                }
                other => other,
            };
            match next {
                Err(e)
                    if self.skip_bad
                        && e.kind == TraceErrorKind::Malformed
                        && matches!(e.location, Location::Line(_) | Location::Byte(_)) =>
                {
                    self.skipped.add(e)
                }
                r => {
                    self.gave_any |= matches!(r, Ok(Some(_)));
                    return r;
                }
            }
        }
    }

    /// The error of a `skip_bad` read whose every record was malformed: a trace of another
    /// format, most likely, rather than one with a few bad lines.
    #[cold]
    fn nothing_read(&self, first: &TraceError) -> TraceError {
        let n = self.skipped.count;
        // About the whole file (the first bad record is quoted with its place), so that no
        // caller takes it for one more record to pass over.
        TraceError::malformed(
            &first.path,
            Location::File,
            format!(
                "none of its {n} record{} could be read as {} (--skip-bad passes over a few bad records, not all); the first: {first}; check --format",
                if n == 1 { "" } else { "s" },
                self.format.name(),
            ),
        )
    }
}

impl TraceReader {
    /// Where the reader is: the line it read last, or the byte after the record it read last.
    fn location(&self) -> Location {
        let line = |l: &LineReader| Location::Line(l.line_no);
        match &self.inner {
            Inner::Csv(r) => line(r.lines()),
            Inner::CloudPhysics(r) => line(r.lines()),
            Inner::Msr(r) => line(r.lines()),
            Inner::Blkparse(r) => line(r.lines()),
            Inner::Spc(r) => line(r.lines()),
            Inner::Fiu(r) => line(r.lines()),
            Inner::LcsCsv(r) => line(r.lines()),
            Inner::LcsTxt(r) => line(r.lines()),
            Inner::Lirs(r) => line(r.lines()),
            Inner::Arc(r) => line(r.lines()),
            Inner::Oracle(r) => Location::Byte(r.offset().saturating_sub(crate::ORACLE_RECORD as u64)),
            Inner::Bst(r) => Location::Byte(r.record_offset()),
            Inner::MappedBst(r) => Location::Byte(r.record_offset()),
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, r: &Request) -> TraceError {
        let path = self.path();
        let m = if r.size > MAX_REQUEST_SIZE {
            let unit = if r.in_blocks { "blocks" } else { "bytes" };
            format!(
                "a request of {} {unit} is larger than bufsim takes (at most {MAX_REQUEST_SIZE} {unit} per request)",
                r.size
            )
        } else {
            format!(
                "block {} (+ {}) is past the largest block number bufsim can address ({}): a sentinel value or a corrupt record?",
                r.offset,
                r.size,
                u64::MAX - 1
            )
        };
        TraceError::malformed(&path, self.location(), m)
    }

    /// Notes what `r` shows of the devices' addresses ([`DeviceBlocks`]) and gives it back, or
    /// the error of a block whose cache key another device's block would share.
    #[cold]
    #[inline(never)]
    fn check_devices(&mut self, r: Request) -> Result<Option<Request>, TraceError> {
        let Some(d) = self.devices.as_ref() else { return Ok(Some(r)) };
        let (limit, limit_text) =
            if r.in_blocks { (MAX_DEVICE_BLOCKS, "2^48 blocks") } else { (MAX_DEVICE_BYTES, "2^57 bytes (128 PiB)") };
        let far = r.offset + r.size > limit;
        let unit = if r.in_blocks { "block" } else { "byte" };
        let what = format!("{unit} {} (+ {}) of device {}", r.offset, r.size, r.file);
        let why = "the most bufsim addresses on each device of a trace of several devices (their blocks share \
                   64-bit cache keys); split the trace by device";
        let m = if far && (r.file != 0 || d.several) {
            format!("{what} is past {limit_text}, {why}")
        } else if r.file != 0 && d.far0.is_some() {
            let at = match d.far0 {
                Some(Location::Line(n)) => format!("line {n}"),
                Some(Location::Byte(n)) => format!("byte {n}"),
                _ => "an earlier record".to_string(),
            };
            format!("{what} joins device 0, which reached past {limit_text} at {at}, {why}")
        } else {
            let location = (far && d.far0.is_none()).then(|| self.location());
            let d = self.devices.as_mut().expect("checked above");
            d.several |= r.file != 0;
            if location.is_some() {
                d.far0 = location;
            }
            return Ok(Some(r));
        };
        Err(TraceError::malformed(&self.path(), self.location(), m))
    }

    /// The trace's path, as errors name it.
    pub fn path(&self) -> String {
        match &self.inner {
            Inner::Oracle(r) => r.path().to_string(),
            Inner::Bst(r) => r.path().to_string(),
            Inner::MappedBst(r) => r.path().to_string(),
            _ => match self.location_lines() {
                Some(l) => l.path.clone(),
                None => String::new(),
            },
        }
    }

    fn location_lines(&self) -> Option<&LineReader> {
        Some(match &self.inner {
            Inner::Csv(r) => r.lines(),
            Inner::CloudPhysics(r) => r.lines(),
            Inner::Msr(r) => r.lines(),
            Inner::Blkparse(r) => r.lines(),
            Inner::Spc(r) => r.lines(),
            Inner::Fiu(r) => r.lines(),
            Inner::LcsCsv(r) => r.lines(),
            Inner::LcsTxt(r) => r.lines(),
            Inner::Lirs(r) => r.lines(),
            Inner::Arc(r) => r.lines(),
            _ => return None,
        })
    }

    /// At the end of a text trace: a last line without its line end may be a record cut short.
    #[cold]
    fn note_end(&mut self) {
        if self.skipped.ended_inside.is_some() {
            return;
        }
        if let Some(l) = self.location_lines() {
            if l.unterminated {
                let e = TraceError::malformed(
                    &l.path,
                    Location::Line(l.line_no),
                    "the trace ends inside this line (no line end): was it cut short? Its last record may be incomplete",
                );
                self.skipped.ended_inside = Some(e);
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_request().transpose()
    }
}
