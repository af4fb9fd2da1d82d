//! Inputs that can be read only once, outputs that appear whole or not at all, traces that end
//! or change while they are read, and records no request can be: each test reproduces a way a
//! trace was once lost or misread silently.

use std::ffi::CString;
use std::io::Write;
use std::path::PathBuf;

use bufsim_trace::{
    convert, encode_oracle_record, AddressKind, BstWriter, Columns, Format, ReadOptions, Request, TraceReader,
};

fn dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("one-pass-{test}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A block csv of `n` requests, larger than detection's 64 KiB head when `n` is large.
fn block_csv(n: u64) -> Vec<u8> {
    let mut t = b"op,device,offset,size\n".to_vec();
    for i in 0..n {
        writeln!(t, "R,0,{},4096", (i * 7919 % 1000) * 4096).unwrap();
    }
    t
}

fn count(path: &str, format: Option<Format>) -> Result<u64, String> {
    let mut r = TraceReader::open(path, format).map_err(|e| e.to_string())?;
    let mut n = 0;
    while r.next_request().map_err(|e| e.to_string())?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// A FIFO at `path` that a thread fills with `bytes` once a reader opens it.
fn fifo(path: &std::path::Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let c = CString::new(path.to_string_lossy().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        let _ = f.write_all(&bytes);
    })
}

#[test]
fn a_fifo_is_read_whole_in_one_pass_with_detection() {
    let d = dir("fifo");
    // Detection once read the first 64 KiB and opened the input again: a pipe lost that head
    // (fewer requests, exit 0) and a FIFO shorter than the head waited for a second writer.
    for n in [3u64, 20_000] {
        let bytes = block_csv(n);
        let file = d.join(format!("t{n}.csv"));
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(count(&s(&file), None).unwrap(), n);
        for format in [None, Some(Format::BlockCsv)] {
            let f = d.join(format!("f{n}-{}", format.is_some()));
            let w = fifo(&f, bytes.clone());
            assert_eq!(count(&s(&f), format).unwrap(), n, "FIFO of {n} requests, format {format:?}");
            w.join().unwrap();
        }
        // Compressed through a pipe as well.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&bytes).unwrap();
        let f = d.join(format!("gz{n}"));
        let w = fifo(&f, gz.finish().unwrap());
        assert_eq!(count(&s(&f), None).unwrap(), n);
        w.join().unwrap();
    }
    assert!(!bufsim_trace::rewindable("-"));
    assert!(bufsim_trace::rewindable(&s(&d.join("t3.csv"))));
    assert!(!bufsim_trace::rewindable(&s(&d.join("f3-false"))));
    let e = bufsim_trace::resolve(&s(&d.join("f3-false")), None).unwrap_err().to_string();
    assert!(e.contains("cannot be read again; save the trace to a file first"), "{e}");
}

#[test]
fn convert_from_a_fifo_writes_every_request() {
    let d = dir("convert-fifo");
    let bytes = block_csv(30_000);
    let f = d.join("in");
    let w = fifo(&f, bytes);
    let out = s(&d.join("t.bst"));
    let c = convert(&s(&f), None, &out, &ReadOptions::default()).unwrap();
    w.join().unwrap();
    assert_eq!(c.requests, 30_000);
    assert_eq!(count(&out, None).unwrap(), 30_000);
}

#[test]
fn convert_follows_no_planted_symlink_and_concurrent_converts_each_leave_a_whole_file() {
    let d = dir("convert-atomic");
    let src = d.join("t.csv");
    std::fs::write(&src, block_csv(50_000)).unwrap();
    let out = d.join("t.bst");
    // The old fixed temporary name: a symlink there once redirected the write to its target.
    let victim = d.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, d.join("t.bst.partial")).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (src, out) = (s(&src), s(&out));
            std::thread::spawn(move || convert(&src, None, &out, &ReadOptions::default()).map(|c| c.requests))
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap().unwrap(), 50_000);
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(count(&s(&out), None).unwrap(), 50_000);
    let left: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["t.bst", "t.bst.partial", "t.csv", "victim"], "no temporary file is left behind");
}

#[test]
fn a_bst_whose_header_promises_more_than_the_file_holds_is_refused() {
    let d = dir("bst-count");
    let out = s(&d.join("t.bst"));
    let mut w = BstWriter::create(&out, AddressKind::Device, false, Columns::NONE).unwrap();
    for i in 0..1000 {
        w.write(&Request::read(0, i * 4096, 4096)).unwrap();
    }
    w.finish(&[]).unwrap();
    let len = std::fs::metadata(&out).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&out).unwrap().set_len(len - 100).unwrap();
    let e = count(&out, None).unwrap_err();
    assert!(e.contains("truncated: the header promises 1000 records, the file holds 993"), "{e}");
}

#[test]
fn a_bst_cut_short_while_it_is_read_ends_in_an_error_not_a_bus_error() {
    let d = dir("bst-cut");
    let out = s(&d.join("t.bst"));
    let n = 2_000_000u64;
    let mut w = BstWriter::create(&out, AddressKind::Device, false, Columns::NONE).unwrap();
    for i in 0..n {
        w.write(&Request::read(0, i * 4096, 4096)).unwrap();
    }
    w.finish(&[]).unwrap();
    let mut r = TraceReader::open(&out, None).unwrap();
    for _ in 0..10 {
        r.next_request().unwrap().unwrap();
    }
    // A memory-mapped reader took SIGBUS on the first page past the new end.
    std::fs::OpenOptions::new().write(true).open(&out).unwrap().set_len(4096).unwrap();
    let mut read = 10u64;
    let err = loop {
        match r.next_request() {
            Ok(Some(_)) => read += 1,
            Ok(None) => panic!("a trace cut to 4 KiB ended quietly after {read} records"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(read < n, "{read}");
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn a_text_trace_ending_inside_a_line_is_reported() {
    let d = dir("text-cut");
    let p = d.join("t.csv");
    std::fs::write(&p, "op,device,offset,size\nR,0,0,4096\nR,0,4096,40").unwrap();
    let mut r = TraceReader::open(&s(&p), None).unwrap();
    while r.next_request().unwrap().is_some() {}
    let e = r.skipped().ended_inside.as_ref().expect("a warning").to_string();
    assert!(e.ends_with("t.csv:3: the trace ends inside this line (no line end): was it cut short? Its last record may be incomplete"), "{e}");
    assert!(r.skipped().summary().contains(":3: the trace ends inside this line"));
    std::fs::write(&p, "op,device,offset,size\nR,0,0,4096\n").unwrap();
    let mut r = TraceReader::open(&s(&p), None).unwrap();
    while r.next_request().unwrap().is_some() {}
    assert!(r.skipped().is_empty());
    // After a list of skipped records the note is a sentence of its own, not one more of them.
    std::fs::write(&p, "op,device,offset,size\nX,0,0,4096\nR,0,4096,40").unwrap();
    let opts = bufsim_trace::ReadOptions { skip_bad: true, ..Default::default() };
    let mut r = TraceReader::open_with(&s(&p), None, &opts).unwrap();
    while r.next_request().unwrap().is_some() {}
    let summary = r.skipped().summary();
    assert!(summary.starts_with("skipped 1 malformed record; first: "), "{summary}");
    assert!(summary.contains(". also ") && summary.ends_with("t.csv:3: the trace ends inside this line (no line end): was it cut short? Its last record may be incomplete"), "{summary}");
}

#[test]
fn block_numbers_and_sizes_no_request_can_have_are_refused_at_their_line() {
    let d = dir("ranges");
    let max = u64::MAX;
    let text_cases: [(&str, String, Format, &str); 6] = [
        ("lirs", format!("1\n{max}\n"), Format::Lirs, ":2: block 18446744073709551615 (+ 1) is past the largest block"),
        ("lcs-txt", format!("1\n{max}\n"), Format::LcsTxt, ":2: block 18446744073709551615"),
        ("lcs-csv", format!("obj_id\n1\n{max}\n"), Format::LcsCsv, ":3: block 18446744073709551615"),
        (
            "arc",
            format!("0 {max} 0 1\n"),
            Format::Arc,
            ":1: a request of 18446744073709551615 blocks is larger than bufsim takes",
        ),
        (
            "csv",
            format!("op,file,offset,size\nR,a,0,{max}\n"),
            Format::Csv,
            ":2: a request of 18446744073709551615 bytes",
        ),
        ("arc-end", format!("{} 1 0 1\n", max - 1), Format::Arc, "no error"),
    ];
    for (name, text, format, want) in text_cases {
        let p = d.join(name);
        std::fs::write(&p, &text).unwrap();
        match count(&s(&p), Some(format)) {
            Err(e) => assert!(e.contains(want), "{name}: {e}"),
            Ok(n) => assert_eq!((want, n), ("no error", 1), "{name}"),
        }
    }
    let mut oracle = encode_oracle_record(1, 5, 1, -1).to_vec();
    oracle.extend_from_slice(&encode_oracle_record(2, max, 1, -1));
    let p = d.join("oracle");
    std::fs::write(&p, &oracle).unwrap();
    let e = count(&s(&p), Some(Format::Oracle)).unwrap_err();
    assert!(e.contains(": byte 24: block 18446744073709551615"), "{e}");
    let out = s(&d.join("t.bst"));
    let mut w = BstWriter::create(&out, AddressKind::Device, true, Columns::NONE).unwrap();
    let mut r = Request::read(0, max, 1);
    r.in_blocks = true;
    w.write(&r).unwrap();
    w.finish(&[]).unwrap();
    let e = count(&out, None).unwrap_err();
    assert!(e.contains(": byte 64: block 18446744073709551615"), "{e}");
}

#[test]
fn comments_of_any_size_do_not_defeat_detection_or_the_line_limit() {
    let d = dir("comments");
    // A collector's note of a command line over 1 MiB, then 100 KiB of short comments.
    let mut t = format!("# command: {}\n", "x".repeat(1_500_000)).into_bytes();
    for i in 0..10_000 {
        writeln!(t, "# note {i}").unwrap();
    }
    t.extend_from_slice(&block_csv(5));
    t.extend_from_slice(b"R,0,x,1\n");
    let p = d.join("t.csv");
    std::fs::write(&p, &t).unwrap();
    let e = count(&s(&p), None).unwrap_err();
    // Line numbers still count the comments passed over by detection.
    assert!(e.contains("t.csv:10008: offset must be"), "{e}");
    t.truncate(t.len() - 8);
    std::fs::write(&p, &t).unwrap();
    assert_eq!(count(&s(&p), None).unwrap(), 5);
    let f = d.join("fifo");
    let w = fifo(&f, t);
    assert_eq!(count(&s(&f), None).unwrap(), 5);
    w.join().unwrap();
}
