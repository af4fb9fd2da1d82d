"""Trace formats from Python and the command line: `bufsim convert` to the binary format (the
converted trace simulates exactly like its source), compressed input, format specs, and
`--skip-bad` / `skip_bad=True` with their reports; one-line errors with exit code 2."""

from __future__ import annotations

import gzip
import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bufsim
from bufsim import TraceFormatError
from bufsim.formats import FORMATS, SkippedRecordsWarning, detect_format
from conftest import SHARED, bufsim_cli, write_csv
from test_cli import check_error

MSR = (
    "128166372003061629,hm,0,Read,3154149376,4096,2171\n"
    "128166372003062860,hm,0,Write,3154157568,8192,1542\n"
    "128166372016219329,prxy,1,Read,3154149376,4096,40012\n"
    "128166372016219330,hm,0,Read,3154149376,512,1\n"
)
BAD_SPC = "0,1,512,r,0.1\n0,1,512,x,0.2\nnot a record\n0,2,512,w,0.3\n"


def counters(r: bufsim.Result) -> tuple:
    return (r.requests, r.accesses, r.hits, r.misses, r.write_accesses, r.evictions)


def test_every_format_name_is_listed_in_the_help():
    p = bufsim_cli("run", "--help")
    assert p.returncode == 0
    help_text = " ".join(p.stdout.split())
    for name in FORMATS:
        assert name in help_text, name
    assert set(FORMATS) >= {"msr", "blkparse", "spc", "fiu", "lcs-csv", "lcs-txt", "lirs", "arc", "bst"}


def test_converted_trace_simulates_exactly_like_its_source(tmp_path, cloudphysics):
    out = tmp_path / "cp.bst"
    p = bufsim_cli("convert", cloudphysics, "-o", out, "--json")
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert (info["format"], info["requests"], info["skipped_records"]) == ("cloudphysics", 113_872, 0)
    assert info["bytes"] == out.stat().st_size
    assert detect_format(out) == "bst"
    for policy in ("lru", "opt"):
        a = bufsim.simulate(cloudphysics, policy=policy, cache="16MiB")
        b = bufsim.simulate(out, policy=policy, cache="16MiB")
        assert counters(a) == counters(b), policy


def test_multi_device_traces_keep_their_devices_through_convert(tmp_path):
    src = tmp_path / "hm_0.csv"
    src.write_text(MSR)
    c = bufsim.convert(src, tmp_path / "hm.bst")
    assert (c.format, c.requests, c.names) == ("msr", 4, 2)
    # Device 1 (prxy) reads the same offset as device 0: a different block, so no hit there.
    for t in (src, tmp_path / "hm.bst"):
        r = bufsim.simulate(t, policy="lru", cache=100)
        assert (r.accesses, r.hits) == (1 + 2 + 1 + 1, 1), t


def test_compressed_traces_are_read_and_converted(tmp_path):
    src = tmp_path / "trace.data"  # the name says nothing; the content decides
    src.write_bytes(gzip.compress(MSR.encode()))
    assert detect_format(src) == "msr"
    out = tmp_path / "t.bst"
    p = bufsim_cli("convert", src, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "4 requests (msr, 2 names) written to" in p.stdout
    assert counters(bufsim.simulate(src, cache=100)) == counters(bufsim.simulate(out, cache=100))


def test_lirs_and_arc_traces_read_with_their_paper_counts():
    lirs = SHARED / "traces" / "lirs" / "cpp.trace.gz"
    r = bufsim.simulate(lirs, policy="lru", cache=100_000)
    assert (r.requests, r.accesses, r.misses) == (9_047, 9_047, 1_223)
    assert detect_format(SHARED / "traces" / "arc" / "OLTP.lis.zst") == "arc"


def test_blkparse_event_is_chosen_with_a_format_spec(tmp_path):
    t = tmp_path / "sda.txt"
    t.write_text(
        "  8,0    3        2     0.000001056   697  Q   W 223490 + 8 [kjournald]\n"
        "  8,0    3        3     0.000002000   697  Q   W 223498 + 8 [kjournald]\n"
        "  8,0    1        1     0.000171565     0  C   W 223490 + 16 [0]\n"
        "CPU0 (8,0):\n Reads Queued:           0,        0KiB\n"
    )
    assert bufsim.simulate(t).requests == 2
    assert bufsim.simulate(t, format="blkparse(event=C)").requests == 1
    check_error(bufsim_cli("run", t, "--format", "blkparse(event=X)"), "blkparse event `X`", "use Q")


def test_bad_records_stop_a_run_unless_skipped(tmp_path):
    t = tmp_path / "bad.spc"
    t.write_text(BAD_SPC)
    check_error(bufsim_cli("run", t), "bad.spc:2:", "Opcode must be r or w")
    p = bufsim_cli("run", t, "--skip-bad", "-c", "10blocks", "--json")
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)
    assert (row["requests"], row["skipped_records"]) == (2, 2)
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("bufsim: warning: "), err
    assert "skipped 2 malformed records" in err and "bad.spc:2:" in err and "bad.spc:3:" in err, err
    # Several configurations decode the trace once; each result carries the same report.
    p = bufsim_cli("run", t, "--skip-bad", "-c", "10blocks", "-c", "20blocks", "--json")
    assert [json.loads(l)["skipped_records"] for l in p.stdout.splitlines()] == [2, 2]


def test_skip_bad_in_python_counts_and_warns(tmp_path):
    t = tmp_path / "bad.spc"
    t.write_text(BAD_SPC)
    with pytest.raises(TraceFormatError, match=r"bad\.spc:2: Opcode"):
        bufsim.simulate(t)
    with pytest.warns(SkippedRecordsWarning, match=r"skipped 2 malformed records; first: .*bad\.spc:2:"):
        r = bufsim.simulate(t, skip_bad=True)
    assert (r.requests, r.skipped_records) == (2, 2)
    assert r.to_dict()["skipped"].startswith("skipped 2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean trace warns about nothing
        assert bufsim.simulate(write_csv(tmp_path / "ok.csv", [("R", "a", 0, 4096)])).skipped_records == 0


def test_convert_errors_are_one_line_and_leave_no_output(tmp_path):
    t = tmp_path / "bad.spc"
    t.write_text(BAD_SPC)
    out = tmp_path / "out.bst"
    check_error(bufsim_cli("convert", t, "-o", out), "bad.spc:2:", "Opcode")
    assert not out.exists() and not (tmp_path / "out.bst.partial").exists()
    check_error(bufsim_cli("convert", tmp_path / "missing", "-o", out), "missing", "no such file")
    check_error(bufsim_cli("convert", t, "-o", out, "--format", "nope"), "unknown trace format `nope`")
    check_error(bufsim_cli("convert", t, "-o", t, "--skip-bad"), "is the input trace")
    corrupt = tmp_path / "corrupt.bst"
    corrupt.write_bytes(b"\x89BST\r\n\x1a\n" + b"\x07" * 60)
    check_error(bufsim_cli("run", corrupt), "corrupt.bst: byte 8: format version")
    p = bufsim_cli("convert", t, "-o", out, "--skip-bad")
    assert p.returncode == 0 and out.exists(), p.stderr
    assert p.stderr.startswith("bufsim: warning: ") and "skipped 2" in p.stderr
    assert bufsim.simulate(out).requests == 2


def test_convert_to_bst_refuses_what_only_libcachesim_outputs_take(tmp_path):
    # A .bst keeps every request in bytes; --reads-only once wrote the writes too, exit status 0.
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096), ("W", "a", 4096, 4096)])
    out = tmp_path / "out.bst"
    for opts, named in (
        (["--reads-only"], "--reads-only is for --to oracle or lcs-csv"),
        (["--block-size", "8KiB"], "--block-size is for --to oracle or lcs-csv"),
        (["--to", "bst", "--reads-only", "--block-size", "8KiB"], "--reads-only and --block-size are for"),
    ):
        check_error(bufsim_cli("convert", t, "-o", out, *opts), "out.bst:", named)
        assert not out.exists()
    with pytest.raises(bufsim.SpecError, match="--reads-only is for"):
        bufsim.convert(t, out, reads_only=True)
    # The outputs that take them still do.
    p = bufsim_cli("convert", t, "-o", tmp_path / "out.lcs.csv", "--to", "lcs-csv", "--reads-only")
    assert p.returncode == 0 and p.stdout.startswith("1 requests"), p.stderr


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from("RW"),
            st.sampled_from(["a", "b", "c,d", "é"]),
            st.integers(0, 1 << 40),
            st.integers(0, 1 << 20),
            st.integers(0, 10**9),
            st.integers(0, 99),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_convert_round_trips_any_file_trace(tmp_path_factory, rows):
    d = tmp_path_factory.mktemp("rt")
    src = d / "t.csv"
    src.write_text(
        "op,file,offset,size,time_us,pid\n"
        + "".join(f'{op},"{f}",{off},{size},{t},{pid}\n' for op, f, off, size, t, pid in rows)
    )
    c = bufsim.convert(src, d / "t.bst")
    assert c.requests == len(rows) and c.names == len({r[1] for r in rows})
    for policy in ("lru", "opt"):
        assert counters(bufsim.simulate(src, policy=policy, cache=64)) == counters(
            bufsim.simulate(d / "t.bst", policy=policy, cache=64)
        )
