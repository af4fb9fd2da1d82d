//! Telling a trace's format from its content (the first 64 KiB after decompression, past any
//! longer block of leading comments), never from its name.

use crate::blkparse::BlkEvent;
use crate::bst;
use crate::error::{excerpt, Location, TraceError};
use crate::format::Format;
use crate::input::Opened;
use crate::lines::{other_separator, parse_fixed, parse_u64, split_ws, trim, BOM};
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
    // A whole file shorter than a .bst header that starts like one: a .bst cut short, not a
    // one-line text trace.
    if !o.head.is_empty() && o.head.len() < bst::MAGIC.len() && bst::MAGIC.starts_with(&o.head) {
        return Err(TraceError::malformed(
            path,
            Location::File,
            format!(
                "a .bst trace cut short: {} bytes, where its header alone takes 64; convert the trace to .bst again",
                o.head.len()
            ),
        ));
    }
    // Windows tools save "Unicode" text as UTF-16, which opens with its byte-order mark: every
    // other byte of it is NUL, or (a mark and little else) it would pass for a named object. A
    // binary oracleGeneral trace may open with those two bytes too (a time of 65,279 s).
    let utf16 = (o.head.starts_with(&[0xff, 0xfe]) || o.head.starts_with(&[0xfe, 0xff])).then(|| {
        TraceError::unknown_format(
            path,
            "is UTF-16 text (it opens with a UTF-16 byte-order mark); save it as UTF-8, e.g. with `iconv -f UTF-16 -t UTF-8`",
        )
    });
    loop {
        if let Some(f) = detect_bytes(&o.head, o.len) {
            if let Some(e) = utf16.filter(|_| f != Format::Oracle) {
                return Err(e);
            }
            return Ok((f, skipped));
        }
        // A head that is nothing but comments (a long command line or notes written by a
        // collector): pass over them and look at what follows.
        let dropped = (o.head.len() >= HEAD).then(|| leading_comments(&o.head)).flatten();
        let Some((bytes, lines, cut_comment)) = dropped else {
            if let Some(e) = utf16 {
                return Err(e);
            }
            let names = Format::NAMES.join(", ");
            if let Some((line, sep, header)) = header_separator(&o.head) {
                return Err(TraceError {
                    location: Location::Line(skipped + line),
                    ..TraceError::unknown_format(
                        path,
                        format!(
                            "cannot tell the trace format from its content: the header `{}` separates its columns with {sep}; separate them with commas (as in op,file,offset,size), or pass --format with one of {names}",
                            excerpt(header)
                        ),
                    )
                });
            }
            // Nothing to detect a format from: naming one would only give a run of zeros.
            if o.head.is_empty() {
                return Err(TraceError::unknown_format(
                    path,
                    "the trace is empty (no record; blank or comment lines at most): there is nothing to simulate; give a trace that holds requests",
                ));
            }
            return Err(TraceError::unknown_format(
                path,
                format!("cannot tell the trace format from its content; pass --format with one of {names}"),
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
fn leading_comments(full: &[u8]) -> Option<(usize, u64, bool)> {
    let bom = if full.starts_with(BOM) { BOM.len() } else { 0 };
    let head = &full[bom..];
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
    (end > 0 || cut_comment).then_some((bom + if cut_comment { head.len() } else { end }, lines, cut_comment))
}

/// Whether a line is one detection passes over (blkparse may open with a note per input file).
fn passed_over(line: &str) -> bool {
    line.is_empty() || line.starts_with('#') || line.starts_with("Input file ")
}

/// For a head that opens with a header whose columns are separated by `;`, `|` or tabs rather
/// than commas (as spreadsheets set to some locales export it): the header's 1-based line in the
/// head, how it is separated and its text. Only a line of two or more column names counts, so
/// data lines separated so are not mistaken for a header.
fn header_separator(head: &[u8]) -> Option<(u64, &'static str, &[u8])> {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let (i, line) = head
        .split(|&c| c == b'\n')
        .map(|l| trim(l.strip_suffix(b"\r").unwrap_or(l)))
        .enumerate()
        .find(|(_, l)| !passed_over(&String::from_utf8_lossy(l)))?;
    let (sep, name) = other_separator(line)?;
    let cols: Vec<&[u8]> = line.split(|&c| c == sep).map(trim).collect();
    let is_name = |c: &&[u8]| {
        c.first().is_some_and(u8::is_ascii_alphabetic)
            && c.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    (cols.len() >= 2 && cols.iter().all(is_name)).then_some((i as u64 + 1, name, line))
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
        let whole = !matches!(len, Some(l) if l % ORACLE_RECORD as u64 != 0);
        return (whole && plausible_oracle(head)).then_some(Format::Oracle);
    }
    // Excel and some Windows tools open a text file with a UTF-8 byte-order mark.
    let head = head.strip_prefix(BOM).unwrap_or(head);
    // A head cut off by the 64 KiB limit ends inside a line: drop that line.
    let head = match (len, memchr::memrchr(b'\n', head)) {
        (None, Some(i)) => &head[..=i],
        _ => head,
    };
    let text = String::from_utf8_lossy(head);
    let sample: Vec<&str> = text.lines().map(str::trim).filter(|l| !passed_over(l)).take(SAMPLE_LINES).collect();
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
    if !sample.iter().all(single) {
        return None;
    }
    if sample.iter().all(|l| *l == "*" || parse_u64(l.as_bytes()).is_some()) {
        return Some(Format::Lirs);
    }
    // A libCacheSim object id may be any text without blanks, but lines that all hold a `;` or
    // a `|` are a table whose columns are separated so (a header read as an object would count
    // as an access), not one id per line.
    if [';', '|'].iter().any(|&c| sample.iter().all(|l| l.contains(c))) {
        return None;
    }
    Some(Format::LcsTxt)
}

/// Next-access times above this (2^48 requests) are taken for noise: no trace comes near it,
/// while a random positive i64 falls below it once in 32,768 records.
const MAX_NEXT_ACCESS: i64 = 1 << 48;

/// Whether the whole records of `head` read as libCacheSim's oracleGeneral
/// (`u32 time, u64 obj_id, u32 size, i64 next_access`): an object id is a block bufsim can
/// address (below `u64::MAX`), and each next-access time is -1 (never again; `i64::MAX` in
/// older libCacheSim) or a later request than this one, counted from 0 or 1, below 2^48. Times
/// may go back: libCacheSim keeps them as the source trace had them, and so does `bufsim
/// convert --to oracle` (a trace merged from several hosts is out of order here and there).
/// Any length divides into 24-byte records, so without this an executable or random bytes
/// would be simulated as a trace; random records pass the next-access check about once in
/// 32,768, so even a few records leave little doubt (the head holds up to 2,730).
/// `--format oracle` reads a file without it.
fn plausible_oracle(head: &[u8]) -> bool {
    let mut any = false;
    for (i, rec) in head.chunks_exact(ORACLE_RECORD).enumerate() {
        let obj = u64::from_le_bytes(rec[4..12].try_into().unwrap());
        let next = i64::from_le_bytes(rec[16..24].try_into().unwrap());
        let later = next > i as i64 && next < MAX_NEXT_ACCESS;
        if obj == u64::MAX || !(next == -1 || next == i64::MAX || later) {
            return false;
        }
        any = true;
    }
    any
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode_oracle_record;

    fn records(recs: &[(u32, u64, u32, i64)]) -> Vec<u8> {
        recs.iter().flat_map(|&(t, o, s, n)| encode_oracle_record(t, o, s, n)).collect()
    }

    #[test]
    fn utf16_text_is_named_but_an_oracle_trace_opening_with_its_mark_is_read() {
        let dir = std::env::temp_dir().join(format!("bufsim-detect-utf16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text: Vec<u8> =
            [0xff, 0xfe].into_iter().chain("op,file,offset,size\n".bytes().flat_map(|b| [b, 0])).collect();
        for (name, bytes) in [("t16.csv", text), ("mark.txt", vec![0xff, 0xfe, b'\n'])] {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = detect(&p.to_string_lossy()).unwrap_err().to_string();
            assert!(e.contains("is UTF-16 text"), "{name}: {e}");
        }
        // 65,279 s is 0xfeff: its record opens with ff fe.
        let p = dir.join("t.oracleGeneral");
        std::fs::write(&p, records(&[(65279, 7, 1, 3), (65279, 8, 1, -1), (65280, 7, 1, -1)])).unwrap();
        assert_eq!(detect(&p.to_string_lossy()).unwrap(), Format::Oracle);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn oracle_is_told_by_plausible_records_not_by_length() {
        // As libCacheSim and `bufsim convert --to oracle` write them: next access -1, or a later
        // request counted from 0 or from 1; i64::MAX in older files.
        for recs in [
            vec![(0, 7, 1, -1), (0, 8, 1, -1), (1, 7, 1, -1)],
            vec![(0, 7, 4096, 3), (0, 8, 4096, -1), (5, 7, 4096, -1)],
            vec![(0, 7, 4096, 2), (0, 8, 4096, i64::MAX), (5, 7, 4096, -1)],
        ] {
            let b = records(&recs);
            assert_eq!(detect_bytes(&b, Some(b.len() as u64)), Some(Format::Oracle), "{recs:?}");
        }
        // Times going back, as in a trace merged from several hosts, which libCacheSim keeps.
        let b = records(&[(5, 7, 1, 2), (4, 8, 1, -1), (9, 7, 1, -1), (1, 9, 1, -1)]);
        assert_eq!(detect_bytes(&b, Some(b.len() as u64)), Some(Format::Oracle));
        // A next access at or before the request itself, before -1, or past 2^48 requests.
        for recs in [
            vec![(0, 7, 1, -1), (0, 8, 1, 1)],
            vec![(0, 7, 1, 1 << 48)],
            vec![(0, 7, 1, i64::MAX - 1)],
            vec![(0, 7, 1, 0)],
            vec![(0, 7, 1, -2)],
            vec![(0, u64::MAX, 1, -1)],
        ] {
            let b = records(&recs);
            assert_eq!(detect_bytes(&b, Some(b.len() as u64)), None, "{recs:?}");
        }
        // Bytes that are no trace, a whole number of records long.
        let mut rng = bufsim_config::rng::Rng::new(1);
        let noise: Vec<u8> = (0..2400).map(|_| rng.next_u64() as u8).collect();
        assert_eq!(detect_bytes(&noise, Some(2400)), None);
        assert_eq!(detect_bytes(&[0u8; 2400], Some(2400)), None);
    }

    #[test]
    fn a_table_separated_by_semicolons_or_pipes_is_no_object_per_line() {
        // Once these were libCacheSim txt, the header counted as an access.
        for t in [
            "op;file;offset;size\nR;a;0;4096\n",
            "op|file|offset|size\nR|a|0|4096\nW|b|4096|512\n",
            "op;file;offset;size\n",
            "obj_id;time\nx;1\n",
        ] {
            assert_eq!(detect_bytes(t.as_bytes(), Some(t.len() as u64)), None, "{t}");
        }
        // Object ids may hold either, as long as not every line does.
        for t in ["42\nabc\n", "a;b\nc\n", "key|1\nkey2\nkey;3\n", "user:1\n/usr/lib/x.so\n"] {
            assert_eq!(detect_bytes(t.as_bytes(), Some(t.len() as u64)), Some(Format::LcsTxt), "{t}");
        }
    }

    #[test]
    fn a_header_separated_otherwise_than_by_commas_is_named_with_its_line() {
        let dir = std::env::temp_dir().join(format!("bufsim-detect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (text, want) in [
            ("op;file;offset;size\nR;a;0;4096\n", ":1: cannot tell the trace format from its content: the header `op;file;offset;size` separates its columns with `;`; separate them with commas"),
            ("# from a spreadsheet\n\nop|device|offset|size\nR|0|0|4096\n", ":3: cannot tell the trace format from its content: the header `op|device|offset|size` separates its columns with `|`;"),
            ("name\tkind\nx\ty\n", ":1: cannot tell the trace format from its content: the header `name\tkind` separates its columns with tabs;"),
        ] {
            let path = dir.join("t.csv");
            std::fs::write(&path, text).unwrap();
            let e = detect(path.to_str().unwrap()).unwrap_err();
            assert_eq!(e.kind, crate::TraceErrorKind::UnknownFormat);
            let e = e.to_string();
            assert!(e.contains(want) && e.contains("--format") && !e.contains('\n'), "{e}");
        }
        // Rows of numbers separated so have no header to name.
        std::fs::write(dir.join("t.csv"), "1;2\n3;4\n").unwrap();
        let e = detect(dir.join("t.csv").to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("t.csv: cannot tell the trace format from its content; pass --format"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_header() {
        let t = b"\xEF\xBB\xBFop,file,offset,size\nR,a,0,4096\n";
        assert_eq!(detect_bytes(t, Some(t.len() as u64)), Some(Format::Csv));
        let t = b"\xEF\xBB\xBFobj_id\n1\n";
        assert_eq!(detect_bytes(t, Some(t.len() as u64)), Some(Format::LcsCsv));
    }
}
