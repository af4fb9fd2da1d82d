//! bufsim's binary format: exact round trips from every format (read from a file and streamed,
//! plain and compressed), the documented header bytes, and errors at byte offsets. Also gzip
//! and zstd input for every format.

use std::io::Write;
use std::path::PathBuf;

use bufsim_trace::bst::{Header, HEADER_LEN, MAGIC};
use bufsim_trace::{
    convert, detect, encode_oracle_record, AddressKind, BlkEvent, BstWriter, Columns, Format, Op, ReadOptions, Request,
    TraceReader,
};

fn tmp(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bst");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

fn write(name: &str, bytes: &[u8]) -> String {
    let p = tmp(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 3).unwrap()
}

fn read(path: &str, format: Option<Format>) -> (Vec<Request>, Vec<String>, Format) {
    let mut r = TraceReader::open(path, format).unwrap();
    let reqs: Vec<Request> = r.by_ref().collect::<Result<_, _>>().unwrap();
    (reqs, r.file_names().to_vec(), r.format())
}

/// One sample per format (the binary oracle one built from records).
fn samples() -> Vec<(&'static str, Vec<u8>, Format)> {
    let mut oracle = Vec::new();
    for (t, id) in [(1u32, 42u64), (2, u64::MAX - 1), (3, 42)] {
        oracle.extend_from_slice(&encode_oracle_record(t, id, 4096, -1));
    }
    vec![
        ("csv", b"op,file,offset,size,time_us,dur_us,pid,ctx\nR,/a,0,4096,1.5,2,7,0x10\nW,/b,8192,100,3,0,8,9\nR,/a,4096,4096,4,1,7,16\n".to_vec(), Format::Csv),
        ("csv-few", b"op,file,offset,size\nR,a,0,4096\nW,b,1,2\n".to_vec(), Format::Csv),
        ("csv-drops", b"op,file,offset,size\nR,a,0,8192\nD,a,5000,0\ndrop,b,0,4096\nR,a,0,4096\n".to_vec(), Format::Csv),
        ("block-csv-drops", b"op,device,offset,size\nR,3,0,8192\nD,3,4096,4096\n".to_vec(), Format::BlockCsv),
        ("csv-hints", b"op,file,offset,size\nH,a,0,16384\nR,a,0,8192\nhint,b,4096,0\nD,a,0,0\nW,b,0,10\n".to_vec(), Format::Csv),
        ("block-csv", b"op,device,offset,size,pid\nR,3,8192,4096,5\nW,0,0,512,6\n".to_vec(), Format::BlockCsv),
        ("cloudphysics", b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,7,28,4096,8\n".to_vec(), Format::CloudPhysics),
        ("oracle", oracle, Format::Oracle),
        ("msr", b"128166372003061629,hm,0,Read,3154152960,4096,2171\n128166372016219329,prxy,1,Write,0,512,40012\n".to_vec(), Format::Msr),
        ("blkparse", b"  8,0 3 1 0.000001056 697 Q W 223490 + 8 [kjournald]\n  8,16 0 1 0.5 12 Q R 8 + 8 [a b]\n  8,0 1 1 0.6 0 C W 223490 + 8 [0]\n".to_vec(), Format::Blkparse(BlkEvent::Queue)),
        ("spc", b"0,303567,3584,w,0.000000\n2,20941264,8192,r,0.551706\n".to_vec(), Format::Spc),
        ("fiu", b"89966527949234 4454 syslogd 23140760 8 W 6 0 0a7e\n89966528100000 4499 Web Content 1024 16 R 8 1 9b2e\n".to_vec(), Format::Fiu),
        ("lcs-csv", b"time,obj_id,obj_size,op\n1,42,4096,get\n2,abc,100,set\n".to_vec(), Format::LcsCsv),
        ("lcs-txt", b"42\nabc\n7\n".to_vec(), Format::LcsTxt),
        ("lirs", b"0\n1\n*\n2\n\n1\n".to_vec(), Format::Lirs),
        ("arc", b"230027 8 0 0\n1842745 64 0 1\n".to_vec(), Format::Arc),
    ]
}

#[test]
fn every_format_reads_the_same_plain_gzipped_and_zstd_compressed() {
    for (name, bytes, format) in samples() {
        let plain = write(&format!("{name}.plain"), &bytes);
        let want = read(&plain, Some(format));
        assert!(!want.0.is_empty(), "{name}");
        assert_eq!(detect(&plain).unwrap(), format, "{name}");
        for (suffix, packed) in [("gz", gzip(&bytes)), ("zst", zstd(&bytes))] {
            // The name says nothing: the magic bytes decide.
            let p = write(&format!("{name}.{suffix}.trace"), &packed);
            assert_eq!(detect(&p).unwrap(), format, "{name} {suffix}");
            assert_eq!(read(&p, None), want, "{name} {suffix}");
        }
    }
}

#[test]
fn every_format_converts_to_bst_and_reads_back_exactly() {
    for (name, bytes, format) in samples() {
        let src = write(&format!("{name}.src"), &bytes);
        let (want, names, _) = read(&src, Some(format));
        let out = tmp(&format!("{name}.bst"));
        let summary = convert(&src, None, &out, &ReadOptions::default()).unwrap();
        assert_eq!(
            (summary.format, summary.requests, summary.names),
            (format, want.len() as u64, names.len()),
            "{name}"
        );
        assert_eq!(summary.bytes, std::fs::metadata(&out).unwrap().len());
        // Memory-mapped.
        let (got, got_names, f) = read(&out, None);
        assert_eq!(f, Format::Bst(format.address_kind()), "{name}");
        assert_eq!((&got, &got_names), (&want, &names), "{name}");
        // Streamed from a compressed copy: the names come at the end.
        let packed = write(&format!("{name}.bst.zst"), &zstd(&std::fs::read(&out).unwrap()));
        assert_eq!(read(&packed, Some(Format::parse("bst").unwrap())), (want.clone(), names.clone(), f), "{name}");
        let packed = write(&format!("{name}.bst.gz"), &gzip(&std::fs::read(&out).unwrap()));
        assert_eq!(read(&packed, None).0, want, "{name}");
    }
}

#[test]
fn bst_keeps_only_the_columns_the_source_has() {
    let src = write("few.csv", b"op,file,offset,size\nR,a,0,4096\nW,b,1,2\n");
    let out = tmp("few.bst");
    convert(&src, None, &out, &ReadOptions::default()).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let h = Header::decode(&bytes, &out).unwrap();
    assert_eq!((h.columns, h.kind, h.in_blocks, h.records, h.names), (Columns::NONE, AddressKind::File, false, 2, 2));
    // 64-byte header, two 16-byte records, names "a" and "b" with their u32 lengths.
    assert_eq!(bytes.len(), HEADER_LEN + 2 * 16 + 2 * 5);
}

#[test]
fn bst_header_bytes_are_as_documented() {
    let h = Header {
        kind: AddressKind::File,
        in_blocks: false,
        drops: false,
        columns: Columns { time: true, dur: false, pid: true, ctx: false },
        records: 3,
        names: 2,
    };
    let b = h.encode();
    assert_eq!(&b[0..8], &[0x89, b'B', b'S', b'T', 0x0d, 0x0a, 0x1a, 0x0a]);
    assert_eq!(&b[8..12], &[1, 0, 64, 0]); // version 1, header length 64
    assert_eq!(&b[12..16], &[1 | 4, 0, 0, 0]); // time and pid
    assert_eq!((b[16], b[17]), (1, 16 + 8 + 4)); // file trace, 28-byte records
    assert_eq!(&b[24..32], &3u64.to_le_bytes());
    assert_eq!(&b[32..40], &(64u64 + 3 * 28).to_le_bytes());
    assert_eq!(&b[40..44], &2u32.to_le_bytes());
    assert!(b[18..24].iter().chain(&b[44..64]).all(|&x| x == 0));
    assert_eq!(Header::decode(&b, "x").unwrap(), h);
}

#[test]
fn bst_record_bytes_are_as_documented() {
    let mut w =
        BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::Device, false, Columns::ALL).unwrap();
    let r = Request {
        time_ns: 5,
        dur_ns: 6,
        pid: 7,
        ctx: 8,
        op: Op::Write,
        file: 3,
        offset: 0x0102,
        size: 512,
        in_blocks: false,
        unfilled: 0,
        opened: false,
    };
    w.write(&r).unwrap();
    let out = w.finish(&[]).unwrap().into_inner();
    let rec = &out[HEADER_LEN..];
    assert_eq!(rec.len(), 44);
    assert_eq!(&rec[0..8], &0x0102u64.to_le_bytes());
    assert_eq!(&rec[8..12], &512u32.to_le_bytes());
    assert_eq!(&rec[12..16], &(3u32 | 1 << 31).to_le_bytes());
    assert_eq!(&rec[16..24], &5u64.to_le_bytes());
    assert_eq!(&rec[24..32], &6u64.to_le_bytes());
    assert_eq!(&rec[32..36], &7u32.to_le_bytes());
    assert_eq!(&rec[36..44], &8u64.to_le_bytes());
}

#[test]
fn bst_marks_drops_with_bit_30_and_a_header_flag() {
    let mut w = BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::File, false, Columns::NONE).unwrap();
    w.write(&Request::read(5, 0, 4096)).unwrap();
    w.write(&Request { op: Op::Drop, ..Request::read(5, 100, 0) }).unwrap();
    let out = w.finish(&vec!["f".to_string(); 6]).unwrap().into_inner();
    let h = Header::decode(&out, "x").unwrap();
    assert!(h.drops);
    assert_eq!(&out[12..16], &32u32.to_le_bytes());
    assert_eq!(&out[HEADER_LEN + 12..HEADER_LEN + 16], &5u32.to_le_bytes());
    assert_eq!(&out[HEADER_LEN + 28..HEADER_LEN + 32], &(5u32 | 1 << 30).to_le_bytes());
    // A hint sets both op bits (a write that drops is no request) and the same flag.
    let mut w = BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::File, false, Columns::NONE).unwrap();
    w.write(&Request { op: Op::Hint, ..Request::read(5, 0, 8192) }).unwrap();
    let out = w.finish(&vec!["f".to_string(); 6]).unwrap().into_inner();
    assert!(Header::decode(&out, "x").unwrap().drops);
    assert_eq!(&out[HEADER_LEN + 12..HEADER_LEN + 16], &(5u32 | 3 << 30).to_le_bytes());
    // Without drops the flag stays off, so a bufsim that predates drops reads the file.
    let mut w = BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::File, false, Columns::NONE).unwrap();
    w.write(&Request::read(5, 0, 4096)).unwrap();
    assert!(!Header::decode(&w.finish(&vec!["f".to_string(); 6]).unwrap().into_inner(), "x").unwrap().drops);
    // File ids keep below the drop bit.
    let mut w = BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::File, false, Columns::NONE).unwrap();
    assert!(w.write(&Request::read(1 << 30, 0, 1)).unwrap_err().to_string().contains("30 bits"));
}

fn bst_bytes() -> Vec<u8> {
    let src = write("errs.csv", b"op,file,offset,size,time_us\nR,a,0,4096,1\nW,b,4096,4096,2\nR,a,8192,4096,3\n");
    let out = tmp("errs.bst");
    convert(&src, None, &out, &ReadOptions::default()).unwrap();
    std::fs::read(&out).unwrap()
}

fn open_err(bytes: &[u8], name: &str) -> String {
    let p = write(name, bytes);
    match TraceReader::open(&p, Some(Format::parse("bst").unwrap())) {
        Err(e) => e.to_string(),
        Ok(r) => r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string(),
    }
}

#[test]
fn bst_errors_name_the_byte() {
    let good = bst_bytes();
    let rec = 24; // 16 + time
    let mut bad = good.clone();
    bad[0] = b'X';
    assert!(open_err(&bad, "magic.bst").ends_with(
        "magic.bst: byte 0: not a bufsim binary trace (bad magic); convert a trace with `bufsim convert IN -o OUT.bst`"
    ));
    let mut bad = good.clone();
    bad[8] = 9;
    assert!(open_err(&bad, "version.bst").contains("byte 8: format version 9; this bufsim reads version 1"));
    let mut bad = good.clone();
    bad[12] |= 0x80;
    assert!(open_err(&bad, "flags.bst").contains("byte 12: unknown flags"));
    // Cut inside the third record.
    let cut = &good[..HEADER_LEN + 2 * rec + 5];
    assert!(open_err(cut, "cut.bst").contains(&format!(
        "byte {}: truncated: the header promises 3 records, the file holds 2",
        HEADER_LEN + 2 * rec
    )));
    // The same cut, streamed: the first two records come out, then the error.
    let p = write("cut.bst.gz", &gzip(cut));
    let mut r = TraceReader::open(&p, None).unwrap();
    assert!(r.next_request().unwrap().is_some() && r.next_request().unwrap().is_some());
    let e = r.next_request().unwrap_err().to_string();
    assert!(e.contains(&format!("byte {}: truncated", HEADER_LEN + 2 * rec)), "{e}");
    // A record naming a file the table lacks.
    let mut bad = good.clone();
    bad[HEADER_LEN + rec + 12] = 9;
    let e = open_err(&bad, "file.bst");
    assert!(e.contains(&format!("byte {}: file or device id 9 is out of range", HEADER_LEN + rec)), "{e}");
    // ... which --skip-bad passes over.
    let p = write("file-skip.bst", &bad);
    let mut r = TraceReader::open_with(&p, None, &ReadOptions { skip_bad: true, ..Default::default() }).unwrap();
    assert_eq!(r.by_ref().count(), 2);
    assert_eq!(r.skipped().count, 1);
    // A name table cut short.
    let e = open_err(&good[..good.len() - 1], "names.bst");
    assert!(e.contains("name table ends inside name 1"), "{e}");
}

#[test]
fn convert_leaves_nothing_behind_on_error_and_never_overwrites_its_input() {
    let src = write("bad.csv", b"op,file,offset,size\nR,a,0,4096\nR,a,x,4096\n");
    let out = tmp("bad.bst");
    let _ = std::fs::remove_file(&out); // left by an earlier run (the directory is kept)
    let e = convert(&src, None, &out, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.ends_with("bad.csv:3: offset must be a non-negative integer number of bytes in `R,a,x,4096`"), "{e}");
    assert!(!std::path::Path::new(&out).exists() && !PathBuf::from(format!("{out}.partial")).exists());
    let s = convert(&src, None, &out, &ReadOptions { skip_bad: true, ..Default::default() }).unwrap();
    assert_eq!((s.requests, s.skipped.count), (1, 1));
    let e = convert(&src, None, &src, &ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("is the input trace"), "{e}");
}

#[test]
fn bst_refuses_requests_it_cannot_hold() {
    let mut w =
        BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::Device, false, Columns::NONE).unwrap();
    let mut r = Request::read(0, 0, 1 << 32);
    assert!(w.write(&r).unwrap_err().to_string().contains("does not fit the 32-bit size"));
    r.size = 1;
    r.in_blocks = true;
    assert!(w.write(&r).unwrap_err().to_string().contains("addressing"));
    assert_eq!(&MAGIC[1..4], b"BST");
}
