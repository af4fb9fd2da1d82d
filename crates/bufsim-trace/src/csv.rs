//! bufsim's own interchange CSV (docs/trace-formats.md).
//!
//! A header names the columns, in any order: `op,file,offset,size` are required,
//! `time_us,dur_us,pid,ctx,asked,opened` optional, other columns are ignored. `op` is
//! `R`/`W`/`D`/`H` or `read`/`write`/`drop`/`hint` (`drop`: the range's data is gone; size 0: the
//! file was truncated at `offset`, [`Op::Drop`]; `hint`: the program asked for the range to be
//! read ahead, fadvise(WILLNEED), size 0 to the end of the file, [`Op::Hint`]); `offset` and
//! `size` are bytes; `ctx` is decimal or `0x` hex; times are
//! microseconds and may carry a fraction; `asked` is the bytes a read asked for (at least `size`;
//! more when the end of the file cut it short); `opened` is 1 on a read that is the first through
//! a newly opened file description (Linux starts its read-ahead state afresh). Lines starting
//! with `#` and blank lines are skipped.
//!
//! A header naming `device` in place of `file` makes a block trace (format `block-csv`): the
//! column holds a device number (0 to 65535) and offsets are byte addresses on that device, as a
//! storage server sees them (second-level streams written by `bufsim filter` use it).

use rustc_hash::FxHashMap;

use crate::error::TraceError;
use crate::lines::{other_separator, parse_u64, parse_u64_or_hex, parse_us_as_ns, split_commas, trim, LineReader};
use crate::request::{Op, Request};

const REQUIRED: [&str; 4] = ["op", "file", "offset", "size"];

#[derive(Default)]
struct Columns {
    op: usize,
    /// The `file` column, or the `device` column of a block trace.
    file: usize,
    device_addressed: bool,
    offset: usize,
    size: usize,
    time_us: Option<usize>,
    dur_us: Option<usize>,
    pid: Option<usize>,
    ctx: Option<usize>,
    asked: Option<usize>,
    opened: Option<usize>,
    count: usize,
}

pub struct CsvReader {
    lines: LineReader,
    cols: Columns,
    fields: Vec<(usize, usize)>,
    names: FxHashMap<Box<[u8]>, u32>,
    file_names: Vec<String>,
    last_file: Option<(Vec<u8>, u32)>,
}

impl CsvReader {
    pub(crate) fn lines(&self) -> &LineReader {
        &self.lines
    }

    pub(crate) fn new(mut lines: LineReader) -> Result<Self, TraceError> {
        // Find the header: the first line that is neither blank nor a comment.
        loop {
            if !lines.advance()? {
                return Err(lines.error("empty trace: expected a header line naming the columns op,file,offset,size"));
            }
            let t = trim(&lines.buf);
            if !t.is_empty() && t[0] != b'#' {
                break;
            }
        }
        let mut fields = Vec::new();
        split_commas(&mut lines.buf, &mut fields).map_err(|m| lines.error(m))?;
        let mut found: [Option<usize>; 11] = [None; 11];
        const ALL: [&str; 11] =
            ["op", "file", "offset", "size", "time_us", "dur_us", "pid", "ctx", "device", "asked", "opened"];
        for (i, &(a, b)) in fields.iter().enumerate() {
            let name = String::from_utf8_lossy(trim(&lines.buf[a..b])).to_ascii_lowercase();
            if let Some(k) = ALL.iter().position(|&n| n == name) {
                if found[k].is_some() {
                    return Err(lines.error(format!("column `{name}` appears twice in the header")));
                }
                found[k] = Some(i);
            }
        }
        let device_addressed = found[8].is_some();
        if device_addressed && found[1].is_some() {
            return Err(lines.error_quoting(
                "header names both `file` and `device`; a trace addresses either files (file) or devices (device)",
            ));
        }
        if device_addressed {
            found[1] = found[8];
        }
        let missing: Vec<&str> =
            REQUIRED.iter().enumerate().filter(|(k, _)| found[*k].is_none()).map(|(_, n)| *n).collect();
        if !missing.is_empty() {
            let missing = missing.join(",");
            if let Some((_, sep)) = other_separator(&lines.buf) {
                return Err(lines.error_quoting(&format!(
                    "header lacks required column(s) {missing}: its columns are separated by {sep}; separate them with commas (op,file,offset,size, or op,device,offset,size for a block trace)"
                )));
            }
            return Err(lines.error_quoting(&format!(
                "header lacks required column(s) {missing}; the header must name op,file,offset,size (or op,device,offset,size for a block trace; time_us,dur_us,pid,ctx,asked,opened optional)"
            )));
        }
        let cols = Columns {
            op: found[0].unwrap(),
            file: found[1].unwrap(),
            device_addressed,
            offset: found[2].unwrap(),
            size: found[3].unwrap(),
            time_us: found[4],
            dur_us: found[5],
            pid: found[6],
            ctx: found[7],
            asked: found[9],
            opened: found[10],
            count: fields.len(),
        };
        Ok(CsvReader { lines, cols, fields, names: FxHashMap::default(), file_names: Vec::new(), last_file: None })
    }

    pub fn file_names(&self) -> &[String] {
        &self.file_names
    }

    /// The optional columns the header names.
    pub fn columns(&self) -> crate::bst::Columns {
        crate::bst::Columns {
            time: self.cols.time_us.is_some(),
            dur: self.cols.dur_us.is_some(),
            pid: self.cols.pid.is_some(),
            ctx: self.cols.ctx.is_some(),
        }
    }

    /// Whether the header named `device` (a block trace) rather than `file`.
    pub fn device_addressed(&self) -> bool {
        self.cols.device_addressed
    }

    fn intern(&mut self, name: &[u8]) -> u32 {
        if let Some((last, id)) = &self.last_file {
            if last.as_slice() == name {
                return *id;
            }
        }
        let id = match self.names.get(name) {
            Some(&id) => id,
            None => {
                let id = self.file_names.len() as u32;
                self.names.insert(name.into(), id);
                self.file_names.push(String::from_utf8_lossy(name).into_owned());
                id
            }
        };
        match &mut self.last_file {
            Some((buf, last_id)) => {
                buf.clear();
                buf.extend_from_slice(name);
                *last_id = id;
            }
            None => self.last_file = Some((name.to_vec(), id)),
        }
        id
    }

    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let t = trim(&self.lines.buf);
            if t.is_empty() || t[0] == b'#' {
                continue;
            }
            break;
        }
        let lines = &mut self.lines;
        split_commas(&mut lines.buf, &mut self.fields).map_err(|m| lines.error_quoting(m))?;
        if self.fields.len() != self.cols.count {
            return Err(lines.error_quoting(&format!(
                "expected {} columns as in the header, found {}",
                self.cols.count,
                self.fields.len()
            )));
        }
        let field = |i: usize| {
            let (a, b) = self.fields[i];
            trim(&self.lines.buf[a..b])
        };
        let op = match field(self.cols.op) {
            b"R" | b"r" | b"read" | b"READ" | b"Read" => Op::Read,
            b"W" | b"w" | b"write" | b"WRITE" | b"Write" => Op::Write,
            b"D" | b"d" | b"drop" | b"DROP" | b"Drop" => Op::Drop,
            b"H" | b"h" | b"hint" | b"HINT" | b"Hint" => Op::Hint,
            _ => return Err(self.lines.error_quoting("op must be R, W, D, H, read, write, drop or hint")),
        };
        let offset = parse_u64(field(self.cols.offset))
            .ok_or_else(|| self.lines.error_quoting("offset must be a non-negative integer number of bytes"))?;
        let size = parse_u64(field(self.cols.size))
            .ok_or_else(|| self.lines.error_quoting("size must be a non-negative integer number of bytes"))?;
        if offset.checked_add(size).is_none() {
            return Err(self.lines.error_quoting("offset + size is past the largest byte address (2^64)"));
        }
        if matches!(op, Op::Drop | Op::Hint) && size == 0 && self.cols.device_addressed {
            let what = if op == Op::Drop { "drop" } else { "hint" };
            return Err(self.lines.error_quoting(&format!(
                "a {what} of size 0 runs to the end of a file, and a device has none here: give the size in bytes"
            )));
        }
        let opt_num = |col: Option<usize>, parse: fn(&[u8]) -> Option<u64>, what: &str| match col {
            None => Ok(0),
            Some(i) => {
                let f = field(i);
                if f.is_empty() {
                    Ok(0)
                } else {
                    parse(f).ok_or_else(|| self.lines.error_quoting(what))
                }
            }
        };
        let time_ns = opt_num(
            self.cols.time_us,
            parse_us_as_ns,
            "time_us must be a non-negative number of microseconds, below 2^64 ns (about 584 years)",
        )?;
        let dur_ns = opt_num(
            self.cols.dur_us,
            parse_us_as_ns,
            "dur_us must be a non-negative number of microseconds, below 2^64 ns (about 584 years)",
        )?;
        let pid = opt_num(self.cols.pid, parse_u64, "pid must be a non-negative integer")?;
        let pid = u32::try_from(pid).map_err(|_| self.lines.error_quoting("pid must fit in 32 bits"))?;
        let ctx = opt_num(self.cols.ctx, parse_u64_or_hex, "ctx must be a non-negative integer (decimal or 0x hex)")?;
        let asked = opt_num(self.cols.asked, parse_u64, "asked must be a non-negative integer number of bytes")?;
        // A write transfers what it asks for; only a read comes back short.
        let unfilled = if op == Op::Read { asked.saturating_sub(size).min(u32::MAX as u64) as u32 } else { 0 };
        let opened = match self.cols.opened.map(field) {
            None | Some(b"") | Some(b"0") => false,
            Some(b"1") => true,
            Some(_) => return Err(self.lines.error_quoting("opened must be 1 (a new open's first read), 0 or empty")),
        };
        let file = if self.cols.device_addressed {
            parse_u64(field(self.cols.file))
                .and_then(|d| u16::try_from(d).ok())
                .ok_or_else(|| self.lines.error_quoting("device must be a device number from 0 to 65535"))?
                as u32
        } else {
            let (a, b) = self.fields[self.cols.file];
            // The line is lent out while its file name is interned (no copy per request).
            let buf = std::mem::take(&mut self.lines.buf);
            let name = trim(&buf[a..b]);
            let id = if name.is_empty() { None } else { Some(self.intern(name)) };
            self.lines.buf = buf;
            id.ok_or_else(|| self.lines.error_quoting("file is empty"))?
        };
        Ok(Some(Request { time_ns, dur_ns, pid, ctx, op, file, offset, size, in_blocks: false, unfilled, opened }))
    }
}
