//! Trace readers for bufsim.
//!
//! Every reader streams (constant memory in the trace length), yields [`Request`]s and reports
//! malformed input as a [`TraceError`] naming the file, the line (or byte offset) and what to do.

mod cloudphysics;
mod csv;
mod error;
mod lines;
mod oracle;
mod request;
mod writer;
pub mod synth;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

pub use cloudphysics::CloudPhysicsReader;
pub use csv::CsvReader;
pub use error::{Location, TraceError, TraceErrorKind};
pub use oracle::{encode_record as encode_oracle_record, OracleReader, RECORD as ORACLE_RECORD};
pub use request::{AddressKind, Op, Request};
pub use writer::BlockCsvWriter;

use lines::LineReader;

const READ_BUFFER: usize = 1 << 20;

/// The trace formats bufsim reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// bufsim's interchange CSV (file traces).
    Csv,
    /// The interchange CSV with a `device` column in place of `file` (block traces).
    BlockCsv,
    /// CloudPhysics VSCSI CSV (one block device).
    CloudPhysics,
    /// libCacheSim oracleGeneral binary (one access per record to a whole block).
    Oracle,
}

impl Format {
    pub const NAMES: [&'static str; 4] = ["csv", "block-csv", "cloudphysics", "oracle"];

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::BlockCsv => "block-csv",
            Format::CloudPhysics => "cloudphysics",
            Format::Oracle => "oracle",
        }
    }

    /// Parses a format name; `auto` is handled by the caller ([`detect`]).
    pub fn from_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "block-csv" | "blockcsv" => Some(Format::BlockCsv),
            "cloudphysics" | "vscsi" => Some(Format::CloudPhysics),
            "oracle" | "oraclegeneral" => Some(Format::Oracle),
            _ => None,
        }
    }

    pub fn address_kind(self) -> AddressKind {
        match self {
            Format::Csv => AddressKind::File,
            Format::BlockCsv | Format::CloudPhysics | Format::Oracle => AddressKind::Device,
        }
    }
}

fn open_file(path: &str) -> Result<File, TraceError> {
    let f = File::open(path).map_err(|e| TraceError::io(path, &e))?;
    let meta = f.metadata().map_err(|e| TraceError::io(path, &e))?;
    if meta.is_dir() {
        return Err(TraceError::unknown_format(path, "is a directory; give a trace file"));
    }
    Ok(f)
}

/// Tells the format of a trace from its content.
pub fn detect(path: &str) -> Result<Format, TraceError> {
    let mut f = open_file(path)?;
    let len = f.metadata().map_err(|e| TraceError::io(path, &e))?.len();
    let mut head = vec![0u8; 4096];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, &e)),
        }
    }
    head.truncate(got);
    detect_bytes(&head, len).ok_or_else(|| {
        TraceError::unknown_format(
            path,
            format!(
                "cannot tell the trace format from its content; pass --format with one of {}",
                Format::NAMES.join(", ")
            ),
        )
    })
}

fn detect_bytes(head: &[u8], len: u64) -> Option<Format> {
    if head.is_empty() {
        return None;
    }
    let is_text = head
        .iter()
        .all(|&c| c == b'\n' || c == b'\r' || c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80);
    if !is_text {
        return (len % ORACLE_RECORD as u64 == 0).then_some(Format::Oracle);
    }
    let text = String::from_utf8_lossy(head);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?
        .to_ascii_lowercase();
    if first == cloudphysics::HEADER {
        return Some(Format::CloudPhysics);
    }
    let cols: Vec<&str> = first.split(',').map(str::trim).collect();
    if ["op", "file", "offset", "size"].iter().all(|c| cols.contains(c)) {
        return Some(Format::Csv);
    }
    if ["op", "device", "offset", "size"].iter().all(|c| cols.contains(c)) {
        return Some(Format::BlockCsv);
    }
    // Headerless CloudPhysics: five numeric fields with a hex SCSI opcode in the third.
    if cols.len() == 5
        && cols.iter().all(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()))
        && matches!(cols[2], "28" | "2a" | "08" | "0a" | "88" | "8a" | "a8" | "aa")
    {
        return Some(Format::CloudPhysics);
    }
    None
}

/// A streaming reader of any supported format.
pub enum TraceReader {
    Csv(CsvReader),
    CloudPhysics(CloudPhysicsReader),
    Oracle(OracleReader),
}

impl TraceReader {
    /// Opens `path` in `format` (`None` detects it from the content).
    pub fn open(path: &str, format: Option<Format>) -> Result<TraceReader, TraceError> {
        let format = match format {
            Some(f) => f,
            None => detect(path)?,
        };
        let file = open_file(path)?;
        let input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(READ_BUFFER, file));
        Self::from_input(input, path, format)
    }

    /// Reads `format` from any buffered input; `name` is used in error messages.
    pub fn from_input(
        input: Box<dyn BufRead + Send>,
        name: &str,
        format: Format,
    ) -> Result<TraceReader, TraceError> {
        Ok(match format {
            Format::Csv | Format::BlockCsv => {
                let r = CsvReader::new(LineReader::new(input, name))?;
                if r.device_addressed() != (format == Format::BlockCsv) {
                    let (has, want) = if r.device_addressed() { ("device", "block-csv") } else { ("file", "csv") };
                    return Err(TraceError::unknown_format(
                        name,
                        format!("the header names `{has}` columns: read it with --format {want} (or auto)"),
                    ));
                }
                TraceReader::Csv(r)
            }
            Format::CloudPhysics => {
                TraceReader::CloudPhysics(CloudPhysicsReader::new(LineReader::new(input, name)))
            }
            Format::Oracle => TraceReader::Oracle(OracleReader::new(input, name)),
        })
    }

    pub fn format(&self) -> Format {
        match self {
            TraceReader::Csv(r) if r.device_addressed() => Format::BlockCsv,
            TraceReader::Csv(_) => Format::Csv,
            TraceReader::CloudPhysics(_) => Format::CloudPhysics,
            TraceReader::Oracle(_) => Format::Oracle,
        }
    }

    pub fn address_kind(&self) -> AddressKind {
        self.format().address_kind()
    }

    /// Names of the files seen so far (file traces), indexed by `Request::file`.
    pub fn file_names(&self) -> &[String] {
        match self {
            TraceReader::Csv(r) => r.file_names(),
            _ => &[],
        }
    }

    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        match self {
            TraceReader::Csv(r) => r.next_request(),
            TraceReader::CloudPhysics(r) => r.next_request(),
            TraceReader::Oracle(r) => r.next_request(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str, format: Format) -> Result<Vec<Request>, TraceError> {
        let input: Box<dyn BufRead + Send> = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        TraceReader::from_input(input, "t.csv", format)?.collect()
    }

    #[test]
    fn csv_reads_columns_in_any_order() {
        let reqs = read_all(
            "# comment\nsize,offset,file,op,ctx,time_us,pid\n4096,0,a,R,0x10,1.5,7\n\n8192,4096,b,write,3,2,7\n",
            Format::Csv,
        )
        .unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].op, Op::Read);
        assert_eq!(reqs[0].ctx, 16);
        assert_eq!(reqs[0].time_ns, 1500);
        assert_eq!(reqs[0].pid, 7);
        assert_eq!(reqs[1].file, 1);
        assert_eq!(reqs[1].op, Op::Write);
        assert_eq!((reqs[1].offset, reqs[1].size), (4096, 8192));
    }

    #[test]
    fn csv_errors_name_the_line_and_the_problem() {
        let cases = [
            ("op,file,offset,size\nR,a,0\n", ":2: expected 4 columns"),
            ("op,file,offset,size\nR,a,x,4\n", ":2: offset must be"),
            ("op,file,offset,size\nR,a,0,-4\n", ":2: size must be a non-negative"),
            ("op,file,offset,size\nQ,a,0,4\n", ":2: op must be"),
            ("op,file,size\nR,a,4\n", ":1: header lacks required column(s) offset"),
            ("", ":0: empty trace"),
        ];
        for (text, want) in cases {
            let err = read_all(text, Format::Csv).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
            assert!(err.starts_with("t.csv:"), "{err}");
        }
    }

    #[test]
    fn block_csv_written_reads_back_the_same() {
        let reqs = read_all("op,device,offset,size,time_us,pid,ctx\nR,3,8192,4096,1.5,7,9\nW,0,0,512,2,0,0\n", Format::BlockCsv).unwrap();
        let mut w = BlockCsvWriter::new(Vec::new(), "out.csv", 4096).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        let text = String::from_utf8(w.out_for_tests()).unwrap();
        assert_eq!(read_all(&text, Format::BlockCsv).unwrap(), reqs);
        let mut big = reqs[0];
        big.in_blocks = true;
        big.offset = u64::MAX / 2;
        let mut w = BlockCsvWriter::new(Vec::new(), "out.csv", 4096).unwrap();
        let err = w.write(&big).unwrap_err().to_string();
        assert!(err.starts_with("out.csv:2: block"), "{err}");
    }

    #[test]
    fn block_csv_names_devices_by_number() {
        let reqs = read_all("op,device,offset,size\nR,3,8192,4096\nW,0,0,512\n", Format::BlockCsv).unwrap();
        assert_eq!((reqs[0].file, reqs[0].offset, reqs[1].op), (3, 8192, Op::Write));
        let err = read_all("op,device,offset,size\nR,70000,0,1\n", Format::BlockCsv).unwrap_err().to_string();
        assert!(err.contains(":2: device must be a device number"), "{err}");
        let err = read_all("op,device,file,offset,size\nR,1,a,0,1\n", Format::BlockCsv).unwrap_err().to_string();
        assert!(err.contains("both `file` and `device`"), "{err}");
        let err = read_all("op,device,offset,size\nR,1,0,1\n", Format::Csv).unwrap_err().to_string();
        assert!(err.contains("--format block-csv"), "{err}");
    }

    #[test]
    fn cloudphysics_converts_sectors_and_opcodes() {
        let reqs = read_all("version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,7,28,4096,8\n", Format::CloudPhysics).unwrap();
        assert_eq!(reqs[0].op, Op::Write);
        assert_eq!(reqs[0].offset, 42932745 * 512);
        assert_eq!(reqs[0].time_ns, 5_633_898_000);
        assert_eq!(reqs[1].op, Op::Read);
        let err = read_all("1,7,12,4096,8\n", Format::CloudPhysics).unwrap_err().to_string();
        assert!(err.contains(":1: SCSI opcode 12"), "{err}");
    }

    #[test]
    fn oracle_reads_records_and_reports_truncation_by_byte() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&encode_oracle_record(3, 42, 4096, -1));
        bytes.extend_from_slice(&encode_oracle_record(4, u64::MAX, 4096, -1));
        bytes.extend_from_slice(&[1, 2, 3]);
        let input: Box<dyn BufRead + Send> = Box::new(std::io::Cursor::new(bytes));
        let mut r = TraceReader::from_input(input, "t.bin", Format::Oracle).unwrap();
        assert_eq!(r.next_request().unwrap().unwrap().offset, 42);
        assert_eq!(r.next_request().unwrap().unwrap().offset, u64::MAX);
        let err = r.next_request().unwrap_err().to_string();
        assert_eq!(err, "t.bin: byte 48: truncated record: 3 of 24 bytes; an oracleGeneral file is a whole number of 24-byte records");
    }

    #[test]
    fn detects_formats_by_content() {
        assert_eq!(detect_bytes(b"version,time,op,size,lbn\n1,2,28,512,3\n", 100), Some(Format::CloudPhysics));
        assert_eq!(detect_bytes(b"1,2,2a,512,3\n", 100), Some(Format::CloudPhysics));
        assert_eq!(detect_bytes(b"op,file,offset,size\nR,a,0,1\n", 100), Some(Format::Csv));
        assert_eq!(detect_bytes(b"op,device,offset,size,pid\nR,2,0,1,4\n", 100), Some(Format::BlockCsv));
        assert_eq!(detect_bytes(&encode_oracle_record(1, 2, 3, 4), 48), Some(Format::Oracle));
        assert_eq!(detect_bytes(&encode_oracle_record(1, 2, 3, 4), 50), None);
        assert_eq!(detect_bytes(b"hello world\n", 12), None);
    }
}
