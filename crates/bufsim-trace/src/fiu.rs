//! FIU block traces (Koller and Rangaswami, "I/O Deduplication", FAST 2010; the SNIA IOTTA
//! repository's FIU homes, mail and web-vm traces): one request per line,
//! `ts pid process lba size rw major minor md5`, separated by blanks.
//!
//! `ts` is nanoseconds, `lba` and `size` count 512-byte sectors, `rw` is `R` or `W`; each
//! major,minor pair is one device, numbered in order of first appearance. The process name may
//! contain blanks, so the six last fields are read from the end of the line.

use crate::devices::DeviceTable;
use crate::error::TraceError;
use crate::lines::{parse_u64, split_ws, LineReader};
use crate::request::{Op, Request};

const SECTOR: u64 = 512;

pub struct FiuReader {
    lines: LineReader,
    fields: Vec<(usize, usize)>,
    devices: DeviceTable,
    key: [u8; 8],
}

impl FiuReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        FiuReader { lines, fields: Vec::with_capacity(12), devices: DeviceTable::default(), key: [0; 8] }
    }

    pub fn device_names(&self) -> &[String] {
        self.devices.names()
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if !self.lines.advance_content()? {
            return Ok(None);
        }
        let lines = &self.lines;
        split_ws(&lines.buf, &mut self.fields);
        let n = self.fields.len();
        if n < 9 {
            return Err(lines
                .error_quoting(&format!("expected 9 fields (ts pid process lba size rw major minor md5), found {n}")));
        }
        let f = |i: usize| {
            let (a, b) = self.fields[i];
            &lines.buf[a..b]
        };
        let time_ns =
            parse_u64(f(0)).ok_or_else(|| lines.error_quoting("ts must be a non-negative integer (nanoseconds)"))?;
        let pid = parse_u64(f(1))
            .and_then(|p| u32::try_from(p).ok())
            .ok_or_else(|| lines.error_quoting("pid must be a non-negative 32-bit integer"))?;
        let lba = parse_u64(f(n - 6))
            .ok_or_else(|| lines.error_quoting("lba must be a non-negative integer (512-byte sectors)"))?;
        let sectors = parse_u64(f(n - 5))
            .ok_or_else(|| lines.error_quoting("size must be a non-negative integer (512-byte sectors)"))?;
        let op = match f(n - 4) {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            _ => return Err(lines.error_quoting("rw must be R or W")),
        };
        let major = parse_u64(f(n - 3)).and_then(|v| u32::try_from(v).ok());
        let minor = parse_u64(f(n - 2)).and_then(|v| u32::try_from(v).ok());
        let (Some(major), Some(minor)) = (major, minor) else {
            return Err(lines.error_quoting("major and minor must be non-negative 32-bit integers"));
        };
        let (offset, size) = match (lba.checked_mul(SECTOR), sectors.checked_mul(SECTOR)) {
            (Some(o), Some(s)) if o.checked_add(s).is_some() => (o, s),
            _ => return Err(lines.error_quoting("lba and size are past the largest byte address")),
        };
        self.key[..4].copy_from_slice(&major.to_le_bytes());
        self.key[4..8].copy_from_slice(&minor.to_le_bytes());
        let file = self.devices.id(&self.key, || format!("{major},{minor}")).map_err(|m| lines.error_quoting(&m))?;
        Ok(Some(Request { time_ns, pid, op, ..Request::read(file, offset, size) }))
    }
}
