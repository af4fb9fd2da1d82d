//! Trace readers for bufsim.
//!
//! Every reader streams (constant memory in the trace length), yields [`Request`]s and reports
//! malformed input as a [`TraceError`] naming the file, the line (or byte offset) and what to do.
//! Formats are told apart by content ([`detect`]); gzip and zstd files are decompressed as they
//! are read. docs/trace-formats.md describes every format.

mod arc;
mod blkparse;
pub mod bst;
mod cloudphysics;
mod convert;
mod csv;
mod detect;
mod devices;
mod error;
mod fiu;
mod format;
#[doc(hidden)]
pub mod fuzz;
mod input;
mod lcs;
mod lines;
mod lirs;
pub mod msr;
mod oracle;
pub mod progress;
mod reader;
mod request;
mod spc;
pub mod synth;
mod writer;

pub use blkparse::BlkEvent;
pub use bst::{BstWriter, Columns};
pub use convert::{check_not_input, convert, write_atomically, ConvertSummary};
pub use detect::{detect, detect_bytes};
pub use devices::MAX_DEVICES;
pub use error::{Location, TraceError, TraceErrorKind};
pub use format::Format;
pub use input::{not_rewindable, rewindable, Compression, STDIN};
pub use lcs::object_block;
pub use oracle::{encode_record as encode_oracle_record, OracleReader, RECORD as ORACLE_RECORD};
pub use progress::{Meter, Progress};
pub use reader::{resolve, ReadOptions, SkipReport, TraceReader, MAX_REQUEST_SIZE};
pub use request::{AddressKind, Op, Request};
pub use writer::{BlockCsvWriter, LcsCsvWriter, OracleWriter};

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

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
            (
                "op,file,offset,size,time_us\nR,a,0,4,18446744073709551615\n",
                ":2: time_us must be a non-negative number of microseconds, below 2^64 ns",
            ),
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
        let reqs = read_all(
            "op,device,offset,size,time_us,pid,ctx\nR,3,8192,4096,1.5,7,9\nW,0,0,512,2,0,0\n",
            Format::BlockCsv,
        )
        .unwrap();
        let mut w = BlockCsvWriter::new(Vec::new(), "out.csv", 4096).unwrap();
        reqs.iter().for_each(|r| w.write(r).unwrap());
        let text = String::from_utf8(w.finish().unwrap().0).unwrap();
        assert_eq!(read_all(&text, Format::BlockCsv).unwrap(), reqs);
        let mut big = reqs[0];
        big.in_blocks = true;
        big.offset = u64::MAX / 2;
        let mut w = BlockCsvWriter::new(Vec::new(), "out.csv", 4096).unwrap();
        let err = w.write(&big).unwrap_err().to_string();
        assert!(err.starts_with("out.csv: cannot write block") && err.contains("past 2^64"), "{err}");
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
    fn several_devices_keep_their_blocks_below_the_shared_key_space() {
        // Device 0's block 2^48 and device 1's block 0 have one cache key: refused, whichever
        // comes first, at the line that makes them meet.
        let far = 1u64 << 60; // block 2^48 of 4 KiB, past 2^57 bytes
        for (text, want) in [
            (
                format!("op,device,offset,size\nR,0,{far},4096\nR,1,0,4096\n"),
                ":3: byte 0 (+ 4096) of device 1 joins device 0, which reached past 2^57 bytes (128 PiB) at line 2",
            ),
            (
                format!("op,device,offset,size\nR,1,0,4096\nR,0,{far},4096\n"),
                ":3: byte 1152921504606846976 (+ 4096) of device 0 is past 2^57 bytes",
            ),
            (
                format!("op,device,offset,size\nR,2,{far},4096\n"),
                ":2: byte 1152921504606846976 (+ 4096) of device 2 is past",
            ),
        ] {
            let err = read_all(&text, Format::BlockCsv).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
        // One device takes any address; several take any below the limit.
        let near = (1u64 << 57) - 4096;
        let text = format!("op,device,offset,size\nR,0,{far},4096\nR,0,0,1\n");
        assert_eq!(read_all(&text, Format::BlockCsv).unwrap().len(), 2);
        let text = format!("op,device,offset,size\nR,0,{near},4096\nR,3,{near},4096\nR,0,{near},4096\n");
        assert_eq!(read_all(&text, Format::BlockCsv).unwrap().len(), 3);
        // File traces place every file on one device: no limit.
        let text = format!("op,file,offset,size\nR,a,{far},4096\nR,b,{far},4096\n");
        assert_eq!(read_all(&text, Format::Csv).unwrap().len(), 2);
    }

    #[test]
    fn cloudphysics_converts_sectors_and_opcodes() {
        let reqs =
            read_all("version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,7,28,4096,8\n", Format::CloudPhysics)
                .unwrap();
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
        // Block 2^64-1 has no block after it: its one-block range cannot be expressed.
        let err = r.next_request().unwrap_err().to_string();
        assert!(err.starts_with("t.bin: byte 24: block 18446744073709551615 (+ 1) is past the largest block"), "{err}");
        let err = r.next_request().unwrap_err().to_string();
        assert_eq!(err, "t.bin: byte 48: truncated record: 3 of 24 bytes; an oracleGeneral file is a whole number of 24-byte records");
    }

    #[test]
    fn detects_formats_by_content() {
        assert_eq!(detect_bytes(b"version,time,op,size,lbn\n1,2,28,512,3\n", Some(100)), Some(Format::CloudPhysics));
        assert_eq!(detect_bytes(b"1,2,2a,512,3\n", Some(100)), Some(Format::CloudPhysics));
        assert_eq!(detect_bytes(b"op,file,offset,size\nR,a,0,1\n", Some(100)), Some(Format::Csv));
        assert_eq!(detect_bytes(b"op,device,offset,size,pid\nR,2,0,1,4\n", Some(100)), Some(Format::BlockCsv));
        assert_eq!(detect_bytes(&encode_oracle_record(1, 2, 3, 4), Some(48)), Some(Format::Oracle));
        assert_eq!(detect_bytes(&encode_oracle_record(1, 2, 3, 4), Some(50)), None);
        assert_eq!(detect_bytes(b"hello world\n", Some(12)), None);
    }
}
