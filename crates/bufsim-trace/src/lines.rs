//! Line-oriented input shared by the text readers: one reused buffer, line numbers kept,
//! comma splitting with minimal CSV quoting, number parsing with useful errors.

use std::io::BufRead;

use crate::error::{excerpt, Location, TraceError, TraceErrorKind};

/// The longest line a text reader keeps. Longer lines are reported and passed over, never
/// buffered, so arbitrary input (a binary file read as text) cannot exhaust memory.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// The UTF-8 byte-order mark some tools (Excel) write at the start of a text file; a reader
/// passes over it on the first line, and format detection looks past it.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

pub(crate) struct LineReader {
    inner: Box<dyn BufRead + Send>,
    pub(crate) path: String,
    pub(crate) buf: Vec<u8>,
    pub(crate) line_no: u64,
    /// The last line read had no line terminator: the input ended inside it.
    pub(crate) unterminated: bool,
    /// The last line was reported as too long before its end was read: the next line starts
    /// after its line end.
    long_line_rest: bool,
}

impl LineReader {
    pub(crate) fn new(inner: Box<dyn BufRead + Send>, path: &str) -> Self {
        LineReader {
            inner,
            path: path.to_string(),
            buf: Vec::with_capacity(256),
            line_no: 0,
            unterminated: false,
            long_line_rest: false,
        }
    }

    /// A reader whose first line is line `before + 1` (lines before it were read elsewhere).
    pub(crate) fn after_lines(mut self, before: u64) -> Self {
        self.line_no = before;
        self
    }

    /// Reads the next line into `self.buf` without its line terminator.
    /// Returns false at end of input. Blank lines are returned (as empty) so callers decide.
    /// A line longer than [`MAX_LINE`] is reported as malformed as soon as it is found, and its
    /// rest passed over only when reading goes on (`--skip-bad`): input without line ends
    /// (`/dev/zero`) stops the read at once instead of being read for ever. A comment of any
    /// length is consumed whole.
    pub(crate) fn advance(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        if std::mem::take(&mut self.long_line_rest) && !pass_line_end(self.inner.as_mut(), &self.path)? {
            self.unterminated = true;
            return Ok(false);
        }
        let mut seen = false;
        let mut too_long = false;
        let mut seen_newline = false;
        loop {
            // Not `fill`: once per line, and this match hands out the buffer with one call.
            let avail = match self.inner.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TraceError::io(&self.path, &e)),
            };
            if avail.is_empty() {
                break;
            }
            seen = true;
            let (take, done) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            if !too_long {
                let fits = take.min(MAX_LINE - self.buf.len());
                self.buf.extend_from_slice(&avail[..fits]);
                too_long = fits < take;
            }
            self.inner.consume(if done { take + 1 } else { take });
            if done {
                seen_newline = true;
                break;
            }
            if too_long && !self.comment_so_far() {
                self.long_line_rest = true;
                break;
            }
        }
        if !seen {
            return Ok(false);
        }
        if self.line_no == 0 && self.buf.starts_with(BOM) {
            // A byte-order mark (Excel's CSV) is not part of the first line's text.
            self.buf.drain(..BOM.len());
        }
        self.line_no += 1;
        if !seen_newline && !self.long_line_rest {
            self.unterminated = true;
        }
        if too_long {
            // A comment of any length is still a comment (a collector's note of a long
            // command line): keep its mark only.
            if trim(&self.buf).first() == Some(&b'#') {
                self.buf.truncate(1);
                self.buf[0] = b'#';
                return Ok(true);
            }
            // No text trace holds a NUL byte: binary data (`/dev/zero`, a disk image) is no
            // malformed record for `--skip-bad` to pass over, possibly for ever.
            let binary = memchr::memchr(0, &self.buf).is_some();
            self.buf.clear();
            let e = self
                .error(format!("line longer than {} MiB; is this a text trace of the format given?", MAX_LINE >> 20));
            return Err(if binary {
                self.long_line_rest = false;
                TraceError { kind: TraceErrorKind::UnknownFormat, message: format!("binary data: {}", e.message), ..e }
            } else {
                e
            });
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(true)
    }

    /// Whether the line read so far is a comment (after a byte-order mark at the start).
    fn comment_so_far(&self) -> bool {
        let bom = if self.line_no == 0 && self.buf.starts_with(BOM) { BOM.len() } else { 0 };
        trim(&self.buf[bom..]).first() == Some(&b'#')
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> TraceError {
        TraceError::malformed(&self.path, Location::Line(self.line_no), message)
    }

    /// An error that quotes the current line.
    pub(crate) fn error_quoting(&self, message: &str) -> TraceError {
        self.error(format!("{message} in `{}`", excerpt(&self.buf)))
    }

    /// The next line that is neither blank nor a `#` comment; false at end of input.
    pub(crate) fn advance_content(&mut self) -> Result<bool, TraceError> {
        loop {
            if !self.advance()? {
                return Ok(false);
            }
            let t = trim(&self.buf);
            if !t.is_empty() && t[0] != b'#' {
                return Ok(true);
            }
        }
    }
}

/// Splits `line` on commas into `fields` (byte ranges of `line`). A field wrapped in double
/// quotes may contain commas; a doubled quote inside it stands for one quote and is unescaped in
/// place, which is why the line is mutable. Returns an error message on an unterminated quote.
/// The reader's buffered input, read again when a signal interrupts the read (for the cold
/// paths; it may call `fill_buf` twice).
fn fill<'a>(inner: &'a mut (dyn BufRead + Send), path: &str) -> Result<&'a [u8], TraceError> {
    loop {
        match inner.fill_buf() {
            // The end of input: no second read (a terminal would wait for more).
            Ok([]) => return Ok(&[]),
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TraceError::io(path, &e)),
        }
    }
    // Data is buffered: this hands it out without reading. (Returning the first call's slice from
    // inside the loop would keep the reader borrowed across iterations.)
    inner.fill_buf().map_err(|e| TraceError::io(path, &e))
}

/// Consumes input up to and including the next line end; false if the input ended first.
pub(crate) fn pass_line_end(inner: &mut (dyn BufRead + Send), path: &str) -> Result<bool, TraceError> {
    loop {
        let avail = fill(inner, path)?;
        if avail.is_empty() {
            return Ok(false);
        }
        match memchr::memchr(b'\n', avail) {
            Some(i) => {
                inner.consume(i + 1);
                return Ok(true);
            }
            None => {
                let n = avail.len();
                inner.consume(n);
            }
        }
    }
}

pub(crate) fn split_commas(line: &mut [u8], fields: &mut Vec<(usize, usize)>) -> Result<(), &'static str> {
    fields.clear();
    let len = line.len();
    let mut i = 0;
    loop {
        if i < len && line[i] == b'"' {
            // Quoted field: unescape into the same buffer, compacting as we go.
            let start = i + 1;
            let mut read = start;
            let mut write = start;
            loop {
                if read >= len {
                    return Err("unterminated quoted field");
                }
                if line[read] == b'"' {
                    if read + 1 < len && line[read + 1] == b'"' {
                        line[write] = b'"';
                        write += 1;
                        read += 2;
                        continue;
                    }
                    break;
                }
                line[write] = line[read];
                write += 1;
                read += 1;
            }
            fields.push((start, write));
            i = read + 1;
            if i < len && line[i] != b',' {
                return Err("text after a closing quote");
            }
        } else {
            let start = i;
            while i < len && line[i] != b',' {
                i += 1;
            }
            fields.push((start, i));
        }
        if i >= len {
            return Ok(());
        }
        i += 1; // skip the comma
    }
}

/// The separator of a line that holds no comma but one of those spreadsheets and locales offer
/// in place of commas (`;`, `|`, tab), and how an error names it: bufsim's CSV formats split on
/// commas only, so such a header is one unknown column, and errors say what to change.
pub(crate) fn other_separator(line: &[u8]) -> Option<(u8, &'static str)> {
    if line.contains(&b',') {
        return None;
    }
    [(b';', "`;`"), (b'|', "`|`"), (b'\t', "tabs")].into_iter().find(|(c, _)| line.contains(c))
}

/// Trims ASCII spaces and tabs around a field.
#[inline]
pub(crate) fn trim(s: &[u8]) -> &[u8] {
    let mut a = 0;
    let mut b = s.len();
    while a < b && (s[a] == b' ' || s[a] == b'\t') {
        a += 1;
    }
    while b > a && (s[b - 1] == b' ' || s[b - 1] == b'\t') {
        b -= 1;
    }
    &s[a..b]
}

/// Parses an unsigned decimal integer. Rejects signs, blanks and overflow.
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Parses an unsigned hexadecimal integer (no prefix).
#[inline]
pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// Decimal, or hexadecimal with a `0x` prefix (program-context ids are often printed in hex).
pub(crate) fn parse_u64_or_hex(s: &[u8]) -> Option<u64> {
    if s.len() > 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') {
        parse_hex(&s[2..])
    } else {
        parse_u64(s)
    }
}

/// Parses a non-negative number of microseconds, possibly with a fraction (`12.345`), into
/// nanoseconds. Digits past the nanosecond are truncated.
pub(crate) fn parse_us_as_ns(s: &[u8]) -> Option<u64> {
    parse_fixed(s, 3)
}

/// Splits `line` on runs of spaces and tabs into `fields` (byte ranges of `line`).
pub(crate) fn split_ws(line: &[u8], fields: &mut Vec<(usize, usize)>) {
    fields.clear();
    let mut i = 0;
    let len = line.len();
    loop {
        while i < len && (line[i] == b' ' || line[i] == b'\t') {
            i += 1;
        }
        if i >= len {
            return;
        }
        let start = i;
        while i < len && line[i] != b' ' && line[i] != b'\t' {
            i += 1;
        }
        fields.push((start, i));
    }
}

/// Parses a non-negative decimal number such as `12.345` into an integer count of
/// `10^-digits` units (`digits` = 9 turns seconds into nanoseconds). Digits past the unit are
/// truncated; signs, exponents and blanks are rejected.
pub(crate) fn parse_fixed(s: &[u8], digits: u32) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(p) => (&s[..p], &s[p + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let whole = if int.is_empty() { 0 } else { parse_u64(int)? };
    if !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut part: u64 = 0;
    for i in 0..digits as usize {
        part = part * 10 + frac.get(i).map_or(0, |&c| (c - b'0') as u64);
    }
    whole.checked_mul(10u64.pow(digits))?.checked_add(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Result<Vec<String>, &'static str> {
        let mut line = s.as_bytes().to_vec();
        let mut f = Vec::new();
        split_commas(&mut line, &mut f)?;
        Ok(f.iter().map(|&(a, b)| String::from_utf8(line[a..b].to_vec()).unwrap()).collect())
    }

    #[test]
    fn a_byte_order_mark_is_skipped_at_the_start_only() {
        use crate::{Format, ReadOptions, TraceReader};
        let csv = b"\xEF\xBB\xBFop,file,offset,size\nR,a,0,4096\n".to_vec();
        let mut r = TraceReader::from_bytes(csv.clone(), "bom.csv", Format::Csv, &ReadOptions::default()).unwrap();
        assert_eq!(r.next_request().unwrap().unwrap().size, 4096);
        let mut r =
            TraceReader::detect_read(Box::new(std::io::Cursor::new(csv)), "bom.csv", &ReadOptions::default()).unwrap();
        assert_eq!((r.format(), r.next_request().unwrap().unwrap().offset), (Format::Csv, 0));
        // Inside the text it is data, as any other character.
        let mut l = LineReader::new(Box::new(std::io::Cursor::new(b"a\n\xEF\xBB\xBFb\n".to_vec())), "t");
        assert!(l.advance().unwrap() && l.advance().unwrap());
        assert_eq!(l.buf, b"\xEF\xBB\xBFb");
    }

    #[test]
    fn splits_plain_and_quoted_fields() {
        assert_eq!(split("a,b,,c").unwrap(), vec!["a", "b", "", "c"]);
        assert_eq!(split("R,\"x,y\",0,4").unwrap(), vec!["R", "x,y", "0", "4"]);
        assert_eq!(split("\"say \"\"hi\"\"\",1").unwrap(), vec!["say \"hi\"", "1"]);
        assert_eq!(split("").unwrap(), vec![""]);
        assert!(split("\"open,1").is_err());
        assert!(split("\"a\"b,1").is_err());
    }

    #[test]
    fn parses_numbers_strictly() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1e3"), None);
        assert_eq!(parse_u64_or_hex(b"0x1F"), Some(31));
        assert_eq!(parse_hex(b"2a"), Some(42));
    }

    #[test]
    fn parses_microseconds_with_fractions() {
        assert_eq!(parse_us_as_ns(b"12"), Some(12_000));
        assert_eq!(parse_us_as_ns(b"12.5"), Some(12_500));
        assert_eq!(parse_us_as_ns(b"0.0019"), Some(1));
        assert_eq!(parse_us_as_ns(b".25"), Some(250));
        assert_eq!(parse_us_as_ns(b"1.2.3"), None);
        assert_eq!(parse_us_as_ns(b"-1"), None);
        assert_eq!(parse_us_as_ns(b"."), None);
        assert_eq!(parse_fixed(b"0.000001056", 9), Some(1056));
        assert_eq!(parse_fixed(b"12.5", 9), Some(12_500_000_000));
        assert_eq!(parse_fixed(b"18446744073.709551615", 9), Some(u64::MAX));
        assert_eq!(parse_fixed(b"18446744074", 9), None);
    }

    #[test]
    fn splits_on_runs_of_blanks() {
        let line = b"  8,0    3 \t 1  ";
        let mut f = Vec::new();
        split_ws(line, &mut f);
        let got: Vec<&[u8]> = f.iter().map(|&(a, b)| &line[a..b]).collect();
        assert_eq!(got, vec![&b"8,0"[..], b"3", b"1"]);
    }

    #[test]
    fn overlong_lines_are_consumed_and_reported() {
        let mut text = vec![b'x'; MAX_LINE + 10];
        text.extend_from_slice(b"\nok\n");
        let mut r = LineReader::new(Box::new(std::io::Cursor::new(text)), "t");
        let err = r.advance().unwrap_err().to_string();
        assert!(err.starts_with("t:1: line longer than 1 MiB"), "{err}");
        assert!(r.advance().unwrap());
        assert_eq!((r.line_no, &r.buf[..]), (2, &b"ok"[..]));
        assert!(!r.advance().unwrap());
    }

    #[test]
    fn an_endless_line_is_reported_at_once_and_passed_over_only_when_reading_goes_on() {
        use std::io::{BufReader, Read};
        // `/dev/zero` read as text: no line ever ends. The error comes without reading on, and
        // names binary data, which `--skip-bad` does not pass over (it would read for ever).
        let mut r = LineReader::new(Box::new(BufReader::new(std::io::repeat(0))), "/dev/zero");
        let e = r.advance().unwrap_err();
        assert_eq!(e.kind, TraceErrorKind::UnknownFormat);
        assert!(e.to_string().starts_with("/dev/zero:1: binary data: line longer than 1 MiB"), "{e}");
        // Endless text: a malformed record, reported before its end.
        let mut r = LineReader::new(Box::new(BufReader::new(std::io::repeat(b'x'))), "t");
        assert_eq!(r.advance().unwrap_err().kind, TraceErrorKind::Malformed);
        // Read in small pieces, a long line's rest is passed over before the next line; a long
        // comment is still a comment, a byte-order mark before it included.
        let mut text = b"\xEF\xBB\xBF#".to_vec();
        text.extend(vec![b'c'; MAX_LINE + 10]);
        text.extend(b"\n".iter().chain(&vec![b'x'; MAX_LINE + 10]).chain(b"\nok\n"));
        let mut r = LineReader::new(Box::new(BufReader::with_capacity(4096, std::io::Cursor::new(text))), "t");
        assert!(r.advance().unwrap() && r.buf == b"#");
        assert!(r.advance().unwrap_err().to_string().starts_with("t:2: line longer"));
        assert!(r.advance().unwrap());
        assert_eq!((r.line_no, &r.buf[..], r.unterminated), (3, &b"ok"[..], false));
        assert!(!r.advance().unwrap());
        // A long last line without a line end still counts as cut short.
        let cut = std::io::Cursor::new(vec![b'x'; MAX_LINE + 10]).take(u64::MAX);
        let mut r = LineReader::new(Box::new(BufReader::with_capacity(4096, cut)), "t");
        assert!(r.advance().is_err() && !r.advance().unwrap() && r.unterminated);
    }
}
