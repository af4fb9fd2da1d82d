//! SPC-1 traces as the UMass Trace Repository publishes them (Financial1/2, WebSearch1-3):
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`.
//!
//! Each application storage unit (ASU) is one device, numbered in order of first appearance
//! and named `asu N`; `LBA` counts 512-byte sectors, `Size` bytes, `Opcode` is `r`/`R` or
//! `w`/`W`, `Timestamp` seconds with a fraction since the start of the trace. Further columns
//! (the repository's specification allows optional ones) are ignored.

use crate::devices::DeviceTable;
use crate::error::TraceError;
use crate::lines::{parse_fixed, parse_u64, split_commas, trim, LineReader};
use crate::request::{Op, Request};

const SECTOR: u64 = 512;

pub struct SpcReader {
    lines: LineReader,
    fields: Vec<(usize, usize)>,
    devices: DeviceTable,
}

impl SpcReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(lines: LineReader) -> Self {
        SpcReader { lines, fields: Vec::with_capacity(8), devices: DeviceTable::default() }
    }

    pub fn device_names(&self) -> &[String] {
        self.devices.names()
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if !self.lines.advance_content()? {
            return Ok(None);
        }
        let lines = &mut self.lines;
        split_commas(&mut lines.buf, &mut self.fields).map_err(|m| lines.error_quoting(m))?;
        let lines = &self.lines;
        if self.fields.len() < 5 {
            return Err(lines.error_quoting(&format!(
                "expected 5 columns (ASU,LBA,Size,Opcode,Timestamp), found {}",
                self.fields.len()
            )));
        }
        let f = |i: usize| {
            let (a, b) = self.fields[i];
            trim(&lines.buf[a..b])
        };
        let asu_text = f(0);
        let asu = parse_u64(asu_text).ok_or_else(|| lines.error_quoting("ASU must be a non-negative integer"))?;
        let lba = parse_u64(f(1))
            .ok_or_else(|| lines.error_quoting("LBA must be a non-negative integer (512-byte sectors)"))?;
        let size = parse_u64(f(2))
            .ok_or_else(|| lines.error_quoting("Size must be a non-negative integer number of bytes"))?;
        let op = match f(3) {
            b"r" | b"R" => Op::Read,
            b"w" | b"W" => Op::Write,
            _ => return Err(lines.error_quoting("Opcode must be r or w")),
        };
        let time_ns = parse_fixed(f(4), 9)
            .ok_or_else(|| lines.error_quoting("Timestamp must be non-negative seconds, such as 0.551706"))?;
        let offset = lba
            .checked_mul(SECTOR)
            .filter(|o| o.checked_add(size).is_some())
            .ok_or_else(|| lines.error_quoting("LBA * 512 + Size is past the largest byte address"))?;
        let file = self.devices.id(&asu.to_le_bytes(), || format!("asu {asu}")).map_err(|m| lines.error_quoting(&m))?;
        Ok(Some(Request { time_ns, op, ..Request::read(file, offset, size) }))
    }
}
