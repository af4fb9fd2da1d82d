//! The text `blkparse -i TRACE` prints by default (blktrace, Linux's block-layer tracer): one
//! event per line, `dev cpu seq secs.nsecs pid action rwbs [details]`, as in
//! `  8,0    3        2     0.000001056   697  Q   W 223490 + 8 [kjournald]`.
//!
//! One event kind becomes the requests: queue events `Q` (the default: every I/O as the upper
//! layers issued it, before merging), dispatches `D` or completions `C` (merged requests as the
//! device served them), chosen with `blkparse(event=C)`. Sectors are 512 bytes; each major,minor
//! pair is one device, numbered in order of first appearance. Other actions (merges, plugs,
//! remaps, splits, `m` messages), events that are neither reads nor writes (flushes `FN`,
//! discards `D`) and events without a sector range are passed over. The summary blkparse prints
//! at the end (`CPU0 (8,0):`, `Total (8,0):`, `Throughput`, `Events`, `Skips`) is skipped; any
//! other line that is not an event is an error.

use crate::devices::DeviceTable;
use crate::error::TraceError;
use crate::lines::{parse_fixed, parse_u64, split_ws, trim, LineReader};
use crate::request::{Op, Request};

const SECTOR: u64 = 512;

/// Which blkparse events are the trace's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BlkEvent {
    /// `Q`: queued, as issued (before merges).
    #[default]
    Queue,
    /// `D`: dispatched to the driver (after merges).
    Dispatch,
    /// `C`: completed.
    Complete,
}

impl BlkEvent {
    pub fn action(self) -> &'static [u8] {
        match self {
            BlkEvent::Queue => b"Q",
            BlkEvent::Dispatch => b"D",
            BlkEvent::Complete => b"C",
        }
    }

    pub fn parse(s: &str) -> Option<BlkEvent> {
        match s {
            "Q" | "q" | "queue" => Some(BlkEvent::Queue),
            "D" | "d" | "dispatch" => Some(BlkEvent::Dispatch),
            "C" | "c" | "complete" | "completion" => Some(BlkEvent::Complete),
            _ => None,
        }
    }
}

pub struct BlkparseReader {
    lines: LineReader,
    event: BlkEvent,
    fields: Vec<(usize, usize)>,
    devices: DeviceTable,
    in_summary: bool,
}

/// `8,0`: digits, a comma, digits.
fn is_device(t: &[u8]) -> bool {
    match memchr::memchr(b',', t) {
        Some(c) => {
            c > 0
                && c + 1 < t.len()
                && t[..c].iter().all(u8::is_ascii_digit)
                && t[c + 1..].iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// The first line of blkparse's closing summary (or of a section of it).
fn starts_summary(t: &[u8]) -> bool {
    (t.starts_with(b"CPU") && t.get(3).is_some_and(u8::is_ascii_digit))
        || t.starts_with(b"Total (")
        || t.starts_with(b"Throughput")
        || t.starts_with(b"Events (")
        || t.starts_with(b"Skips:")
}

impl BlkparseReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader, event: BlkEvent) -> Self {
        BlkparseReader {
            lines,
            event,
            fields: Vec::with_capacity(12),
            devices: DeviceTable::default(),
            in_summary: false,
        }
    }

    pub fn device_names(&self) -> &[String] {
        self.devices.names()
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let t = trim(&self.lines.buf);
            if t.is_empty() {
                continue;
            }
            split_ws(&self.lines.buf, &mut self.fields);
            let lines = &self.lines;
            let f = |i: usize| {
                let (a, b) = self.fields[i];
                &lines.buf[a..b]
            };
            if !is_device(f(0)) {
                if self.in_summary || starts_summary(t) {
                    self.in_summary = true;
                    continue;
                }
                if t.starts_with(b"Input file ") {
                    continue; // blkparse's note on each per-CPU file it opens
                }
                return Err(lines.error_quoting(
                    "not a blkparse event line (`dev cpu seq time pid action rwbs ...`); read it with the default `blkparse -i` output format",
                ));
            }
            if self.fields.len() < 7 {
                return Err(
                    lines.error_quoting("a blkparse event has at least 7 fields: dev cpu seq time pid action rwbs")
                );
            }
            if parse_u64(f(1)).is_none() || parse_u64(f(2)).is_none() {
                return Err(lines.error_quoting("cpu and sequence number must be non-negative integers"));
            }
            let time_ns = parse_fixed(f(3), 9)
                .ok_or_else(|| lines.error_quoting("time must be seconds with a fraction, such as 0.000001056"))?;
            let pid = parse_u64(f(4))
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| lines.error_quoting("pid must be a non-negative 32-bit integer"))?;
            if f(5) != self.event.action() {
                continue;
            }
            let rwbs = f(6);
            // blktrace's RWBS: an optional leading F (preflush), then W, R, D (discard) or N,
            // then modifier letters (F FUA, A read-ahead, S sync, M meta, ...).
            let mut k = 0;
            while rwbs.get(k) == Some(&b'F') {
                k += 1;
            }
            let op = match rwbs.get(k) {
                Some(b'R') => Op::Read,
                Some(b'W') => Op::Write,
                Some(c) if c.is_ascii_uppercase() => continue, // discard, flush, secure erase, ...
                None if k > 0 => continue,                     // a bare flush
                _ => return Err(lines.error_quoting("RWBS must be letters such as R, W, WS, RA, FWFS or N")),
            };
            let Some(&(a, _)) = self.fields.get(7) else { continue };
            if matches!(lines.buf[a], b'[' | b'(') {
                continue; // no sector range: a zero-length or pass-through request
            }
            if self.fields.len() < 10 || f(8) != b"+" {
                return Err(lines.error_quoting("expected `sector + count` after the RWBS field"));
            }
            let sector = parse_u64(f(7)).ok_or_else(|| lines.error_quoting("sector must be a non-negative integer"))?;
            let count =
                parse_u64(f(9)).ok_or_else(|| lines.error_quoting("sector count must be a non-negative integer"))?;
            let (offset, size) = match (sector.checked_mul(SECTOR), count.checked_mul(SECTOR)) {
                (Some(o), Some(s)) if o.checked_add(s).is_some() => (o, s),
                _ => return Err(lines.error_quoting("sector range is past the largest byte address")),
            };
            let dev = f(0);
            let file = self
                .devices
                .id(dev, || String::from_utf8_lossy(dev).into_owned())
                .map_err(|m| lines.error_quoting(&m))?;
            return Ok(Some(Request { time_ns, pid, op, ..Request::read(file, offset, size) }));
        }
    }
}
