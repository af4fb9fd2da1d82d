//! SNIA MSR Cambridge block traces (Narayanan et al., "Write off-loading", FAST 2008; the SNIA
//! IOTTA repository): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! `Timestamp` is a Windows filetime (100 ns ticks since 1601-01-01 UTC), converted to
//! nanoseconds since the Unix epoch; `ResponseTime` is in the same ticks and becomes the
//! request's duration. `Type` is `Read` or `Write`, `Offset` and `Size` are bytes. Each
//! (hostname, disk) pair is one device, numbered in order of first appearance and named
//! `host_disk` as the trace files are. The files have no header; one is accepted on line 1.

use crate::devices::DeviceTable;
use crate::error::TraceError;
use crate::lines::{parse_u64, split_commas, trim, LineReader};
use crate::request::{Op, Request};

pub const HEADER: &str = "timestamp,hostname,disknumber,type,offset,size,responsetime";

/// The Unix epoch (1970-01-01) as a Windows filetime.
pub const UNIX_EPOCH_FILETIME: u64 = 116_444_736_000_000_000;

/// Nanoseconds since the Unix epoch of a Windows filetime; `None` before 1970 or past 2554.
pub fn filetime_to_unix_ns(ticks: u64) -> Option<u64> {
    ticks.checked_sub(UNIX_EPOCH_FILETIME)?.checked_mul(100)
}

pub struct MsrReader {
    lines: LineReader,
    fields: Vec<(usize, usize)>,
    devices: DeviceTable,
    key: Vec<u8>,
}

impl MsrReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        MsrReader { lines, fields: Vec::with_capacity(8), devices: DeviceTable::default(), key: Vec::new() }
    }

    pub fn device_names(&self) -> &[String] {
        self.devices.names()
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance_content()? {
                return Ok(None);
            }
            if self.lines.line_no == 1 && trim(&self.lines.buf).eq_ignore_ascii_case(HEADER.as_bytes()) {
                continue;
            }
            break;
        }
        let lines = &mut self.lines;
        split_commas(&mut lines.buf, &mut self.fields).map_err(|m| lines.error_quoting(m))?;
        let lines = &self.lines;
        if self.fields.len() != 7 {
            return Err(lines.error_quoting(&format!(
                "expected 7 columns (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {}",
                self.fields.len()
            )));
        }
        let f = |i: usize| {
            let (a, b) = self.fields[i];
            trim(&lines.buf[a..b])
        };
        let ticks = parse_u64(f(0)).ok_or_else(|| {
            lines.error_quoting("Timestamp must be a Windows filetime (an integer of 100 ns ticks since 1601)")
        })?;
        let time_ns = filetime_to_unix_ns(ticks).ok_or_else(|| {
            lines.error_quoting("Timestamp is a Windows filetime before 1970 or after 2554; MSR timestamps count 100 ns ticks since 1601")
        })?;
        let host = f(1);
        if host.is_empty() {
            return Err(lines.error_quoting("Hostname is empty"));
        }
        let disk = f(2);
        parse_u64(disk).ok_or_else(|| lines.error_quoting("DiskNumber must be a non-negative integer"))?;
        let op = match f(3) {
            t if t.eq_ignore_ascii_case(b"read") => Op::Read,
            t if t.eq_ignore_ascii_case(b"write") => Op::Write,
            _ => return Err(lines.error_quoting("Type must be Read or Write")),
        };
        let offset = parse_u64(f(4))
            .ok_or_else(|| lines.error_quoting("Offset must be a non-negative integer number of bytes"))?;
        let size = parse_u64(f(5))
            .ok_or_else(|| lines.error_quoting("Size must be a non-negative integer number of bytes"))?;
        if offset.checked_add(size).is_none() {
            return Err(lines.error_quoting("Offset + Size is past the largest byte address (2^64)"));
        }
        let response = parse_u64(f(6))
            .ok_or_else(|| lines.error_quoting("ResponseTime must be a non-negative integer of 100 ns ticks"))?;
        let dur_ns = response.checked_mul(100).ok_or_else(|| lines.error_quoting("ResponseTime is too large"))?;
        self.key.clear();
        self.key.extend_from_slice(host);
        self.key.push(0);
        self.key.extend_from_slice(disk);
        let file = self
            .devices
            .id(&self.key, || format!("{}_{}", String::from_utf8_lossy(host), String::from_utf8_lossy(disk)))
            .map_err(|m| lines.error_quoting(&m))?;
        Ok(Some(Request { time_ns, dur_ns, op, ..Request::read(file, offset, size) }))
    }
}
