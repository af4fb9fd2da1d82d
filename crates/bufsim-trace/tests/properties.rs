//! Arbitrary bytes through every reader: no panic, no endless loop, bounded output, whether bad
//! records stop the reader or are skipped. The cargo-fuzz targets in `fuzz/` run the same
//! harness (`bufsim_trace::fuzz::read_arbitrary`) for as long as one likes; these properties keep
//! a cheap version in the normal test suite. Also: `.bst` round trips of arbitrary requests.

use proptest::prelude::*;

use bufsim_trace::fuzz::{detect_and_read_stream, read_arbitrary, ALL_FORMATS};
use bufsim_trace::{detect_bytes, AddressKind, BstWriter, Columns, Format, Op, ReadOptions, Request, TraceReader};

/// Valid lines of every format, to mutate: random bytes alone rarely get past a header.
const SEEDS: [&str; 12] = [
    "op,file,offset,size,time_us,dur_us,pid,ctx\nR,a,0,4096,1.5,2,7,0x10\n",
    "op,device,offset,size\nR,3,8192,4096\n",
    "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n",
    "128166372003061629,hm,0,Read,3154152960,4096,2171\n",
    "  8,0    3        2     0.000001056   697  Q   W 223490 + 8 [kjournald]\nCPU0 (8,0):\n",
    "0,303567,3584,w,0.000000\n",
    "89966527949234 4454 syslogd 23140760 8 W 6 0 0a7ed8b3\n",
    "time,obj_id,obj_size,op\n1,42,4096,get\n",
    "42\nabc\n",
    "0\n*\n1\n",
    "230027 8 0 0\n",
    "\u{89}BST\r\n\u{1a}\n",
];

fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (0..SEEDS.len(), proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 0..12), 1usize..4).prop_map(
        |(seed, edits, repeat)| {
            let mut b: Vec<u8> = SEEDS[seed].repeat(repeat).into_bytes();
            for (at, byte, kind) in edits {
                let at = at as usize % (b.len() + 1);
                match kind {
                    0 => b.insert(at, byte),
                    1 if at < b.len() => b[at] = byte,
                    _ if at < b.len() => {
                        b.remove(at);
                    }
                    _ => b.push(byte),
                }
            }
            b
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_or_loop(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        for format in ALL_FORMATS {
            read_arbitrary(&bytes, format);
        }
        let _ = detect_bytes(&bytes, Some(bytes.len() as u64));
        let _ = detect_bytes(&bytes, None);
        detect_and_read_stream(&bytes);
    }

    #[test]
    fn mutated_samples_never_panic_or_loop(bytes in mutated()) {
        for format in ALL_FORMATS {
            read_arbitrary(&bytes, format);
        }
        let _ = detect_bytes(&bytes, Some(bytes.len() as u64));
        detect_and_read_stream(&bytes);
    }

    #[test]
    fn leading_comments_of_any_length_never_panic_or_loop(
        comment in proptest::collection::vec(any::<u8>(), 0..200),
        repeat in 0usize..2000,
        body in mutated(),
    ) {
        // Comment blocks around detection's 64 KiB head, then a (mutated) trace.
        let mut bytes = Vec::new();
        for _ in 0..repeat {
            bytes.push(b'#');
            bytes.extend(comment.iter().filter(|&&c| c != b'\n'));
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(&body);
        detect_and_read_stream(&bytes);
    }

    #[test]
    fn bst_round_trips_arbitrary_requests(
        reqs in proptest::collection::vec(
            (any::<u64>(), any::<u32>(), 0u32..4, any::<bool>(), any::<u64>(), any::<u64>(), any::<u32>(), any::<u64>()),
            0..50),
        cols in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let columns = Columns { time: cols.0, dur: cols.1, pid: cols.2, ctx: cols.3 };
        let reqs: Vec<Request> = reqs
            .into_iter()
            .map(|(offset, size, file, write, t, d, pid, ctx)| Request {
                time_ns: if columns.time { t } else { 0 },
                dur_ns: if columns.dur { d } else { 0 },
                pid: if columns.pid { pid } else { 0 },
                ctx: if columns.ctx { ctx } else { 0 },
                op: if write { Op::Write } else { Op::Read },
                file,
                // Within 2^57 bytes: the most a device of a trace of several devices has (the
                // reader refuses more; their blocks would share cache keys).
                offset: (offset % (1 << 57)).min((1 << 57) - size as u64),
                size: size as u64,
                in_blocks: false,
                unfilled: 0, opened: false,
            })
            .collect();
        let mut w = BstWriter::new(std::io::Cursor::new(Vec::new()), "x", AddressKind::Device, false, columns).unwrap();
        for r in &reqs {
            w.write(r).unwrap();
        }
        let names: Vec<String> = (0..4).map(|i| format!("dev{i}")).collect();
        let bytes = w.finish(&names).unwrap().into_inner();
        let mut rd = TraceReader::from_read(Box::new(std::io::Cursor::new(bytes)), "x", Format::parse("bst").unwrap(), &ReadOptions::default()).unwrap();
        let got: Vec<Request> = rd.by_ref().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(got, reqs);
        prop_assert_eq!(rd.file_names(), &names[..]);
    }
}
