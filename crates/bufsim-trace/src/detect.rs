//! Telling a trace's format from its content (the first 64 KiB after decompression, past any
//! longer block of leading comments), never from its name.

use crate::blkparse::BlkEvent;
use crate::bst;
use crate::error::TraceError;
use crate::format::Format;
use crate::input::Opened;
use crate::lines::{parse_fixed, parse_u64, split_ws, trim};
use crate::request::AddressKind;
use crate::{cloudphysics, msr, ORACLE_RECORD};

pub(crate) const HEAD: usize = 64 * 1024;
/// Content lines looked at (a separator or a named object can sit a few lines in).
const SAMPLE_LINES: usize = 64;

/// Tells the format of the trace at `path` from its content.
pub fn detect(path: &str) -> Result<Format, TraceError> {
    let mut opened = Opened::open(path, HEAD)?;
    Ok(detect_opened(&mut opened, path)?.0)
}

/// Tells the format of an opened trace from its head, and how many leading lines (comments too
/// long for the head) it passed over; those are consumed, everything else stays to be read.
pub(crate) fn detect_opened(o: &mut Opened, path: &str) -> Result<(Format, u64), TraceError> {
    let mut skipped = 0u64;
    loop {
        if let Some(f) = detect_bytes(&o.head, o.len) {
            return Ok((f, skipped));
        }
        // A head that is nothing but comments (a long command line or notes written by a
        // collector): pass over them and look at what follows.
        let dropped = (o.head.len() >= HEAD).then(|| leading_comments(&o.head)).flatten();
        let Some((bytes, lines, cut_comment)) = dropped else {
            let what =
                if o.head.is_empty() { "the trace is empty" } else { "cannot tell the trace format from its content" };
            return Err(TraceError::unknown_format(
                path,
                format!("{what}; pass --format with one of {}", Format::NAMES.join(", ")),
            ));
        };
        o.drop_head(bytes);
        skipped += lines;
        if cut_comment {
            o.skip_line(path)?;
            skipped += 1;
        }
        let want = HEAD - o.head.len();
        if o.extend_head(want, path)? < want {
            o.len = Some(o.head.len() as u64);
        } else {
            o.len = None;
        }
    }
}

/// For a text head whose whole lines are all blank or `#` comments: the bytes and the number of
/// those lines, and whether the cut-off line after them is a comment too. `None` otherwise.
fn leading_comments(head: &[u8]) -> Option<(usize, u64, bool)> {
    let end = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let mut lines = 0;
    let whole = if end > 0 { &head[..end - 1] } else { &[][..] };
    for line in whole.split(|&c| c == b'\n').take(if end > 0 { usize::MAX } else { 0 }) {
        let t = trim(line.strip_suffix(b"\r").unwrap_or(line));
        if !t.is_empty() && t[0] != b'#' {
            return None;
        }
        lines += 1;
    }
    let rest = trim(&head[end..]);
    let cut_comment = rest.first() == Some(&b'#');
    if !cut_comment && !rest.is_empty() {
        // A content line longer than the head is no trace bufsim reads.
        return None;
    }
    (end > 0 || cut_comment).then_some((if cut_comment { head.len() } else { end }, lines, cut_comment))
}

/// The format of a trace whose (decompressed) content starts with `head`; `len` is the whole
/// decompressed length when known.
pub fn detect_bytes(head: &[u8], len: Option<u64>) -> Option<Format> {
    if head.is_empty() {
        return None;
    }
    if head.starts_with(&bst::MAGIC) {
        let kind = if head.get(16) == Some(&1) { AddressKind::File } else { AddressKind::Device };
        return Some(Format::Bst(kind));
    }
    let is_text =
        head.iter().all(|&c| c == b'\n' || c == b'\r' || c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80);
    if !is_text {
        return (!matches!(len, Some(l) if l % ORACLE_RECORD as u64 != 0)).then_some(Format::Oracle);
    }
    // A head cut off by the 64 KiB limit ends inside a line: drop that line.
    let head = match (len, memchr::memrchr(b'\n', head)) {
        (None, Some(i)) => &head[..=i],
        _ => head,
    };
    let text = String::from_utf8_lossy(head);
    let sample: Vec<&str> =
        // (blkparse may open with a note per input file.)
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("Input file "))
            .take(SAMPLE_LINES)
            .collect();
    let first = *sample.first()?;
    let lower = first.to_ascii_lowercase();
    if lower == cloudphysics::HEADER {
        return Some(Format::CloudPhysics);
    }
    if lower == msr::HEADER {
        return Some(Format::Msr);
    }
    let sep = if lower.contains('\t') && !lower.contains(',') { '\t' } else { ',' };
    let cols: Vec<&str> = lower.split(sep).map(str::trim).collect();
    let has = |names: &[&str]| names.iter().all(|c| cols.contains(c));
    if has(&["op", "file", "offset", "size"]) {
        return Some(Format::Csv);
    }
    if has(&["op", "device", "offset", "size"]) {
        return Some(Format::BlockCsv);
    }
    if cols.iter().any(|c| matches!(*c, "obj_id" | "obj-id" | "objid")) {
        return Some(Format::LcsCsv);
    }
    if let Some(f) = data_line_format(first.as_bytes()) {
        return Some(f);
    }
    // One token per line: block numbers (LIRS, also libCacheSim txt with numeric ids) or named
    // objects (libCacheSim txt).
    let single = |l: &&str| !l.contains([' ', '\t', ',']);
    if sample.iter().all(single) {
        let numeric = sample.iter().all(|l| *l == "*" || parse_u64(l.as_bytes()).is_some());
        return Some(if numeric { Format::Lirs } else { Format::LcsTxt });
    }
    None
}

fn digits(s: &[u8]) -> bool {
    parse_u64(s).is_some()
}

/// The format of a headerless first data line.
fn data_line_format(line: &[u8]) -> Option<Format> {
    let commas: Vec<&[u8]> = line.split(|&c| c == b',').map(trim).collect();
    if commas.len() == 5
        && commas.iter().all(|c| !c.is_empty() && c.iter().all(u8::is_ascii_hexdigit))
        && matches!(commas[2], b"28" | b"2a" | b"08" | b"0a" | b"88" | b"8a" | b"a8" | b"aa")
    {
        return Some(Format::CloudPhysics);
    }
    if commas.len() == 7
        && digits(commas[0])
        && !commas[1].is_empty()
        && digits(commas[2])
        && (commas[3].eq_ignore_ascii_case(b"read") || commas[3].eq_ignore_ascii_case(b"write"))
        && commas[4..].iter().all(|c| digits(c))
    {
        return Some(Format::Msr);
    }
    if commas.len() >= 5
        && commas[..3].iter().all(|c| digits(c))
        && matches!(commas[3], b"r" | b"R" | b"w" | b"W")
        && parse_fixed(commas[4], 9).is_some()
    {
        return Some(Format::Spc);
    }
    let mut f = Vec::new();
    split_ws(line, &mut f);
    let w: Vec<&[u8]> = f.iter().map(|&(a, b)| &line[a..b]).collect();
    let n = w.len();
    let is_dev = |t: &[u8]| {
        let mut parts = t.splitn(2, |&c| c == b',');
        matches!((parts.next(), parts.next()), (Some(a), Some(b)) if digits(a) && digits(b))
    };
    if n >= 7
        && is_dev(w[0])
        && digits(w[1])
        && digits(w[2])
        && w[3].contains(&b'.')
        && parse_fixed(w[3], 9).is_some()
        && digits(w[4])
    {
        return Some(Format::Blkparse(BlkEvent::Queue));
    }
    if n >= 9
        && digits(w[0])
        && digits(w[1])
        && digits(w[n - 6])
        && digits(w[n - 5])
        && matches!(w[n - 4], b"R" | b"W" | b"r" | b"w")
        && digits(w[n - 3])
        && digits(w[n - 2])
    {
        return Some(Format::Fiu);
    }
    if n == 4 && w.iter().all(|t| digits(t)) {
        return Some(Format::Arc);
    }
    None
}
