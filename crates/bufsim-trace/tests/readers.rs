//! Each reader on hand-made samples of its real format: values, device numbering, edge lines,
//! and errors that name the file and line.

use std::io::{BufRead, Cursor};

use bufsim_trace::msr::{filetime_to_unix_ns, UNIX_EPOCH_FILETIME};
use bufsim_trace::{detect_bytes, object_block, BlkEvent, Format, Op, ReadOptions, Request, TraceError, TraceReader};

fn reader(text: &str, format: Format, skip_bad: bool) -> Result<TraceReader, TraceError> {
    let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(text.as_bytes().to_vec()));
    TraceReader::from_input_with(input, "t.trace", format, &ReadOptions { skip_bad, ..Default::default() })
}

fn read_all(text: &str, format: Format) -> Result<Vec<Request>, TraceError> {
    reader(text, format, false)?.collect()
}

fn err(text: &str, format: Format) -> String {
    read_all(text, format).unwrap_err().to_string()
}

fn req(op: Op, file: u32, offset: u64, size: u64) -> (Op, u32, u64, u64) {
    (op, file, offset, size)
}

fn shape(r: &Request) -> (Op, u32, u64, u64) {
    (r.op, r.file, r.offset, r.size)
}

// ---- MSR Cambridge ----

const MSR: &str = "\
128166372003061629,hm,0,Read,3154152960,4096,2171
128166372003062860,hm,0,Write,3154161152,8192,1542
128166372016219329,prxy,1,Read,0,512,40012
128166372016219330,hm,0,read,512,512,0
";

#[test]
fn msr_converts_windows_filetimes_to_unix_nanoseconds() {
    // Well-known instants: the Unix epoch, and 2000-01-01T00:00:00Z = 125911584000000000.
    assert_eq!(UNIX_EPOCH_FILETIME, 116_444_736_000_000_000);
    assert_eq!(filetime_to_unix_ns(UNIX_EPOCH_FILETIME), Some(0));
    assert_eq!(filetime_to_unix_ns(125_911_584_000_000_000), Some(946_684_800_000_000_000));
    assert_eq!(filetime_to_unix_ns(UNIX_EPOCH_FILETIME - 1), None);
    let r = read_all(MSR, Format::Msr).unwrap();
    // 128166372003061629 ticks since 1601 = 1172163600.3061629 s since 1970 (2007-02-22 17:00 UTC).
    assert_eq!(r[0].time_ns, 1_172_163_600_306_162_900);
    assert_eq!(r[1].time_ns - r[0].time_ns, 123_100);
    // ResponseTime is in the same 100 ns ticks.
    assert_eq!((r[0].dur_ns, r[2].dur_ns), (217_100, 4_001_200));
}

#[test]
fn msr_numbers_each_host_and_disk_as_a_device() {
    let mut rd = reader(MSR, Format::Msr, false).unwrap();
    let r: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    let got: Vec<_> = r.iter().map(shape).collect();
    assert_eq!(
        got,
        vec![
            req(Op::Read, 0, 3_154_152_960, 4096),
            req(Op::Write, 0, 3_154_161_152, 8192),
            req(Op::Read, 1, 0, 512),
            req(Op::Read, 0, 512, 512),
        ]
    );
    assert_eq!(rd.file_names(), ["hm_0", "prxy_1"]);
    assert_eq!(rd.address_kind(), bufsim_trace::AddressKind::Device);
}

#[test]
fn msr_accepts_a_header_and_reports_bad_lines() {
    let with_header = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{MSR}");
    assert_eq!(read_all(&with_header, Format::Msr).unwrap().len(), 4);
    let cases = [
        ("128166372003061629,hm,0,Read,0,4096\n", "t.trace:1: expected 7 columns"),
        ("128166372003061629,hm,0,Trim,0,4096,1\n", "t.trace:1: Type must be Read or Write"),
        ("5,hm,0,Read,0,4096,1\n", "t.trace:1: Timestamp is a Windows filetime before 1970"),
        ("128166372003061629,hm,x,Read,0,4096,1\n", "t.trace:1: DiskNumber must be"),
        ("128166372003061629,,0,Read,0,4096,1\n", "t.trace:1: Hostname is empty"),
        ("128166372003061629,hm,0,Read,18446744073709551615,1,1\n", "past the largest byte address"),
        (&format!("{MSR}128166372003061629,hm,0,Read,-1,4096,1\n"), "t.trace:5: Offset must be"),
    ];
    for (text, want) in cases {
        let e = err(text, Format::Msr);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
}

// ---- blkparse ----

/// `blkparse -i` output with the lines real traces have: remaps, merges, plugs and unplugs, a
/// cfq message, a split, a flush and a discard, process names with brackets and blanks, a
/// completion of a flush, and the closing summary.
const BLKPARSE: &str = "\
Input file sda.blktrace.0 added
  8,0    3        1     0.000000000   697  A   W 223490 + 8 <- (8,1) 223427
  8,0    3        2     0.000001056   697  Q   W 223490 + 8 [kjournald]
  8,0    3        3     0.000004568   697  G   W 223490 + 8 [kjournald]
  8,0    3        4     0.000006399   697  P   N [kjournald]
  8,0    3        5     0.000007883   697  I   W 223490 + 8 [kjournald]
  8,0    3        0     0.000010000     0  m   N cfq697 insert_request
  8,0    3        6     0.000011000   697  Q   W 223498 + 8 [kjournald]
  8,0    3        7     0.000012000   697  M   W 223498 + 8 [kjournald]
  8,0    3        8     0.000013018   697  U   N [kjournald] 1
  8,0    3        9     0.000014018   697  D   W 223490 + 16 [kjournald]
  8,16   0        1     0.000020000  1234  Q  RA 1000 + 32 [Chrome_IOThread]
  8,16   0        2     0.000020500  1234  X  RA 1000 / 1016 [Chrome_IOThread]
  8,0    0        2     0.000030000  4321  Q FWS [jbd2/sda1-8]
  8,0    0        3     0.000031000  4321  Q   D 5000 + 2048 [fstrim]
  8,0    1        1     0.000171565     0  C   W 223490 + 16 [0]
  8,16   1        2     0.000200000     0  C  RA 1000 + 32 [0]
  8,0    1        3     0.000300000     0  C  FN [0]
  8,0    2        1     1.000400000   555  Q  WS 2000 + 8 [kworker/u8:2 [flush] x]
  8,0    2        2     1.000500000   555  Q FWFS 3000 + 8 [jbd2/sda1-8]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        0,        0KiB
Total (8,0):
 Reads Queued:           1,       16KiB\t Writes Queued:           4,       16KiB

Throughput (R/W): 0KiB/s / 13KiB/s
Events (8,0): 19 entries
Skips: 0 forward (0 -   0.0%)
";

#[test]
fn blkparse_queue_events_are_the_default_requests() {
    let mut rd = reader(BLKPARSE, Format::Blkparse(BlkEvent::Queue), false).unwrap();
    let r: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    let got: Vec<_> = r.iter().map(shape).collect();
    assert_eq!(
        got,
        vec![
            req(Op::Write, 0, 223_490 * 512, 8 * 512),
            req(Op::Write, 0, 223_498 * 512, 8 * 512),
            req(Op::Read, 1, 1000 * 512, 32 * 512),
            req(Op::Write, 0, 2000 * 512, 8 * 512),
            req(Op::Write, 0, 3000 * 512, 8 * 512),
        ]
    );
    assert_eq!((r[0].time_ns, r[0].pid), (1056, 697));
    assert_eq!((r[3].time_ns, r[3].pid), (1_000_400_000, 555));
    assert_eq!(rd.file_names(), ["8,0", "8,16"]);
}

#[test]
fn blkparse_selects_completions_or_dispatches() {
    let c = read_all(BLKPARSE, Format::Blkparse(BlkEvent::Complete)).unwrap();
    let got: Vec<_> = c.iter().map(shape).collect();
    // Device numbers follow first appearance among the selected events.
    assert_eq!(got, vec![req(Op::Write, 0, 223_490 * 512, 16 * 512), req(Op::Read, 1, 1000 * 512, 32 * 512)]);
    assert_eq!((c[0].time_ns, c[0].pid), (171_565, 0));
    let d = read_all(BLKPARSE, Format::parse("blkparse(event=D)").unwrap()).unwrap();
    assert_eq!(d.iter().map(shape).collect::<Vec<_>>(), vec![req(Op::Write, 0, 223_490 * 512, 16 * 512)]);
}

#[test]
fn blkparse_reports_lines_that_are_not_events() {
    let cases = [
        ("hello there\n", "t.trace:1: not a blkparse event line"),
        ("  8,0  3  1  0.5  697  Q  W 12 + x [a]\n", "t.trace:1: sector count must be"),
        ("  8,0  3  1  0.5  697  Q  W 12 8 [a]\n", "t.trace:1: expected `sector + count`"),
        ("  8,0  3  1  zero  697  Q  W 12 + 8 [a]\n", "t.trace:1: time must be seconds"),
        ("  8,0  3  1  0.5\n", "t.trace:1: a blkparse event has at least 7 fields"),
        ("  8,0  3  1  0.5  697  Q  w 12 + 8 [a]\n", "t.trace:1: RWBS must be letters"),
        ("  8,0  3  1  0.5  -7  Q  W 12 + 8 [a]\n", "t.trace:1: pid must be"),
    ];
    for (text, want) in cases {
        let e = err(text, Format::Blkparse(BlkEvent::Queue));
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
    // Text before the summary is an error; after it, anything goes (per-process statistics).
    let after = format!("{BLKPARSE}kjournald (697)\n Reads Queued: 0\n");
    assert_eq!(read_all(&after, Format::Blkparse(BlkEvent::Queue)).unwrap().len(), 5);
}

// ---- SPC-1 (UMass) ----

const SPC: &str = "\
0,303567,3584,w,0.000000
1,55590,3072,w,0.000000
0,303574,3584,r,0.026214
2,20941264,8192,W,0.551706
1,55596,512,R,1.5,extra,fields
";

#[test]
fn spc_numbers_asus_as_devices_and_lbas_as_sectors() {
    let mut rd = reader(SPC, Format::Spc, false).unwrap();
    let r: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    let got: Vec<_> = r.iter().map(shape).collect();
    assert_eq!(
        got,
        vec![
            req(Op::Write, 0, 303_567 * 512, 3584),
            req(Op::Write, 1, 55_590 * 512, 3072),
            req(Op::Read, 0, 303_574 * 512, 3584),
            req(Op::Write, 2, 20_941_264 * 512, 8192),
            req(Op::Read, 1, 55_596 * 512, 512),
        ]
    );
    assert_eq!(r[2].time_ns, 26_214_000);
    assert_eq!(r[3].time_ns, 551_706_000);
    assert_eq!(rd.file_names(), ["asu 0", "asu 1", "asu 2"]);
    for (text, want) in [
        ("0,1,512,x,0.1\n", "t.trace:1: Opcode must be r or w"),
        ("0,1,512,r\n", "t.trace:1: expected 5 columns"),
        ("0,1,512,r,-0.1\n", "t.trace:1: Timestamp must be"),
        ("a,1,512,r,0.1\n", "t.trace:1: ASU must be"),
    ] {
        let e = err(text, Format::Spc);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
}

// ---- FIU ----

const FIU: &str = "\
89966527949234 4454 syslogd 23140760 8 W 6 0 0a7ed8b3cf0b3aa52e7b97e0abad64e3
89966528012345 4454 syslogd 23140768 8 W 6 0 5e79c8a7b1b2bfb5e1c9a6d2a0b7fe01
89966528100000 4499 Web Content 1024 16 R 8 1 9b2e1c4d5f6a7b8c9d0e1f2a3b4c5d6e
";

#[test]
fn fiu_reads_names_with_blanks_and_sector_sizes() {
    let mut rd = reader(FIU, Format::Fiu, false).unwrap();
    let r: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    let got: Vec<_> = r.iter().map(shape).collect();
    assert_eq!(
        got,
        vec![
            req(Op::Write, 0, 23_140_760 * 512, 8 * 512),
            req(Op::Write, 0, 23_140_768 * 512, 8 * 512),
            req(Op::Read, 1, 1024 * 512, 16 * 512),
        ]
    );
    assert_eq!((r[0].time_ns, r[0].pid, r[2].pid), (89_966_527_949_234, 4454, 4499));
    assert_eq!(rd.file_names(), ["6,0", "8,1"]);
    for (text, want) in [
        ("1 2 p 3 4 X 6 0 md5\n", "t.trace:1: rw must be R or W"),
        ("1 2 p 3 4 W 6 0\n", "t.trace:1: expected 9 fields"),
        ("1 2 p q 4 W 6 0 md5\n", "t.trace:1: lba must be"),
    ] {
        let e = err(text, Format::Fiu);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
}

// ---- libCacheSim csv and txt ----

#[test]
fn lcs_csv_reads_named_columns_and_hashes_named_objects() {
    let text = "time,obj_id,obj_size,op\n1,42,4096,get\n2,abc,100,set\n3,7,1,delete\n4.5,42,4096,read\n";
    let r = read_all(text, Format::LcsCsv).unwrap();
    let got: Vec<_> = r.iter().map(|r| (r.op, r.offset, r.size, r.in_blocks, r.time_ns)).collect();
    assert_eq!(
        got,
        vec![
            (Op::Read, 42, 1, true, 1_000_000_000),
            (Op::Write, object_block(b"abc"), 1, true, 2_000_000_000),
            (Op::Read, 42, 1, true, 4_500_000_000),
        ]
    );
    // FNV-1a of "abc" (a fixed function, so ids are the same in every run and process).
    assert_eq!(object_block(b"abc"), 0xe71f_a219_0541_574b);
    let tabs = read_all("obj_id\tobj_size\n5\t10\n", Format::LcsCsv).unwrap();
    assert_eq!(tabs[0].offset, 5);
    for (text, want) in [
        ("time,size\n1,2\n", "t.trace:1: header lacks the obj_id column"),
        ("obj_id,op\n1,get\n2,frob\n", "t.trace:3: op must be get"),
        ("obj_id,time\n1,2\n3\n", "t.trace:3: expected 2 columns"),
        ("obj_id,obj_size\n1,-2\n", "t.trace:2: obj_size must be"),
    ] {
        let e = err(text, Format::LcsCsv);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
}

#[test]
fn a_header_separated_otherwise_than_by_commas_says_to_use_commas() {
    // A tab-separated header is told as csv by its column names, then read as one column.
    let t = "op\tfile\toffset\tsize\nR\ta\t0\t4096\n";
    assert_eq!(detect_bytes(t.as_bytes(), Some(t.len() as u64)), Some(Format::Csv));
    for (text, format, want) in [
        (t, Format::Csv, "t.trace:1: header lacks required column(s) op,file,offset,size: its columns are separated by tabs; separate them with commas"),
        ("op;device;offset;size\nR;0;0;4096\n", Format::BlockCsv, "t.trace:1: header lacks required column(s) op,file,offset,size: its columns are separated by `;`; separate them with commas"),
        ("obj_id|time\n1|2\n", Format::LcsCsv, "t.trace:1: header lacks the obj_id column: its columns are separated by `|`; separate them with commas (or tabs)"),
    ] {
        let e = err(text, format);
        assert!(e.starts_with(want) && !e.contains('\n'), "{e:?} should start with {want:?}");
    }
}

#[test]
fn lcs_txt_reads_one_object_per_line() {
    let r = read_all("42\nabc\n\n 7 \n", Format::LcsTxt).unwrap();
    let ids: Vec<u64> = r.iter().map(|r| r.offset).collect();
    assert_eq!(ids, vec![42, object_block(b"abc"), 7]);
    assert!(r.iter().all(|r| r.in_blocks && r.size == 1 && r.file == 0));
}

// ---- LIRS and ARC ----

#[test]
fn lirs_skips_separators_and_blank_lines() {
    let r = read_all("0\n1\n*\n2\n\n1\n", Format::Lirs).unwrap();
    assert_eq!(r.iter().map(|r| r.offset).collect::<Vec<_>>(), vec![0, 1, 2, 1]);
    let e = err("0\n1\nabc\n", Format::Lirs);
    assert!(e.starts_with("t.trace:3: expected one block number per line"), "{e}");
    assert!(e.contains("--format lcs-txt"), "{e}");
}

#[test]
fn arc_lines_are_runs_of_blocks() {
    let r = read_all("230027 8 0 0\n1842745 64 0 1\n", Format::Arc).unwrap();
    let got: Vec<_> = r.iter().map(|r| (r.offset, r.size, r.in_blocks)).collect();
    assert_eq!(got, vec![(230_027, 8, true), (1_842_745, 64, true)]);
    assert_eq!(r[1].block_range(4096), (1_842_745, 64));
    for (text, want) in [
        ("1 2 3\n", "t.trace:1: expected 4 fields"),
        ("1 x 0 0\n", "t.trace:1: fields must be non-negative integers"),
        ("18446744073709551615 2 0 0\n", "t.trace:1: start + nblocks is past"),
    ] {
        let e = err(text, Format::Arc);
        assert!(e.contains(want), "{e:?} should contain {want:?}");
    }
}

// ---- detection ----

#[test]
fn every_sample_is_detected_by_content() {
    let cases: [(&str, Format); 10] = [
        (MSR, Format::Msr),
        ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n", Format::Msr),
        (BLKPARSE, Format::Blkparse(BlkEvent::Queue)),
        (&BLKPARSE[BLKPARSE.find('\n').unwrap() + 1..], Format::Blkparse(BlkEvent::Queue)),
        (SPC, Format::Spc),
        (FIU, Format::Fiu),
        ("time,obj_id,obj_size\n1,2,3\n", Format::LcsCsv),
        ("42\nabc\n", Format::LcsTxt),
        ("0\n1\n*\n2\n", Format::Lirs),
        ("1 1 0 0\n2 1 0 1\n", Format::Arc),
    ];
    for (text, want) in cases {
        assert_eq!(detect_bytes(text.as_bytes(), Some(text.len() as u64)), Some(want), "{text}");
    }
    // A head cut off at 64 KiB ignores its partial last line.
    let mut long = "0\n".repeat(40_000);
    long.push_str("12x");
    assert_eq!(detect_bytes(&long.as_bytes()[..long.len()], None), Some(Format::Lirs));
}

// ---- skip-bad ----

#[test]
fn skip_bad_counts_and_locates_malformed_records() {
    let text = "0,1,512,r,0.1\n0,1,512,x,0.2\nnot a record\n0,2,512,w,0.3\n";
    let e = err(text, Format::Spc);
    assert!(e.starts_with("t.trace:2: Opcode must be r or w"), "{e}");
    let mut rd = reader(text, Format::Spc, true).unwrap();
    let r: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(r.len(), 2);
    let s = rd.skipped();
    assert_eq!(s.count, 2);
    let at: Vec<String> = s.first.iter().map(|e| e.to_string()).collect();
    assert!(at[0].starts_with("t.trace:2: ") && at[1].starts_with("t.trace:3: "), "{at:?}");
    assert!(s.summary().starts_with("skipped 2 malformed records; first: t.trace:2: Opcode"), "{}", s.summary());
}

#[test]
fn skip_bad_keeps_only_the_first_few_locations() {
    let mut text = String::from("op,file,offset,size\n");
    for i in 0..1000 {
        text.push_str(if i % 2 == 0 { "R,a,0,4096\n" } else { "R,a,zero,4096\n" });
    }
    let mut rd = reader(&text, Format::Csv, true).unwrap();
    assert_eq!(rd.by_ref().filter(|r| r.is_ok()).count(), 500);
    assert_eq!(rd.skipped().count, 500);
    assert_eq!(rd.skipped().first.len(), bufsim_trace::SkipReport::KEEP);
}

#[test]
fn skip_bad_never_skips_a_bad_header() {
    let e = reader("time,size\n1,2\n", Format::LcsCsv, true).err().unwrap().to_string();
    assert!(e.contains("lacks the obj_id column"), "{e}");
}

// ---- interchange CSV: what a read asked for ----

#[test]
fn csv_keeps_what_a_short_read_asked_for() {
    // The kernel tracer writes `asked` (the read's count): a 5000-byte file read with a 128 KiB
    // buffer comes back short; a write transfers what it asks; an empty field means unknown.
    let text = "\
time_us,dur_us,pid,ctx,op,file,offset,size,asked
1,2,7,0,R,a,0,5000,131072
2,2,7,0,R,a,5000,0,131072
3,2,7,0,W,b,0,100,4096
4,2,7,0,R,c,0,4096,
5,2,7,0,R,c,0,4096,100
";
    let r = read_all(text, Format::Csv).unwrap();
    let unfilled: Vec<u32> = r.iter().map(|x| x.unfilled).collect();
    assert_eq!(unfilled, vec![131072 - 5000, 131072, 0, 0, 0]);
    assert!(err("op,file,offset,size,asked\nR,a,0,1,x\n", Format::Csv).contains("asked must be"));
}

// ---- fill: a batch at a time is what one at a time gives ----

fn oracle_bytes(ids: &[u64], tail: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> =
        ids.iter().enumerate().flat_map(|(i, &id)| bufsim_trace::encode_oracle_record(i as u32, id, 1, -1)).collect();
    bytes.extend(std::iter::repeat_n(7u8, tail));
    bytes
}

fn oracle_reader(bytes: &[u8], skip_bad: bool, limit: u64) -> TraceReader {
    let input: Box<dyn BufRead + Send> = Box::new(Cursor::new(bytes.to_vec()));
    let opts = ReadOptions { skip_bad, ..Default::default() };
    TraceReader::from_input_with(input, "t.oracleGeneral", Format::Oracle, &opts).unwrap().limited(limit)
}

/// Every request and the error (as text) a reader gives, one at a time or in batches of `batch`.
fn drain(mut r: TraceReader, batch: Option<usize>) -> (Vec<Request>, Option<String>, String) {
    let mut out = Vec::new();
    let err = loop {
        match batch {
            None => match r.next_request() {
                Ok(Some(q)) => out.push(q),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            },
            Some(b) => match r.fill(&mut out, b) {
                Ok(0) => break None,
                Ok(_) => {}
                Err(e) => break Some(e.to_string()),
            },
        }
    };
    (out, err, r.skipped().summary())
}

#[test]
fn batches_give_what_single_requests_give() {
    let ids: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 613).collect();
    let mut bad = ids.clone();
    bad[3001] = u64::MAX; // its block range overflows: an error at that record
    for (ids, tail) in [(&ids, 0), (&ids, 5), (&bad, 0)] {
        let bytes = oracle_bytes(ids, tail);
        for skip_bad in [false, true] {
            for limit in [0, 1, 2999, 3002, 4999] {
                let one = drain(oracle_reader(&bytes, skip_bad, limit), None);
                for batch in [1, 7, 4096, 100_000] {
                    let many = drain(oracle_reader(&bytes, skip_bad, limit), Some(batch));
                    assert_eq!(many, one, "tail {tail} skip_bad {skip_bad} limit {limit} batch {batch}");
                }
            }
        }
    }
}
