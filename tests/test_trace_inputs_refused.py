"""Bad trace inputs and outputs get one line naming the file and what to do, exit 2, and leave
every file as it was: filter-trace over its own input, convert into a device, FIFO or symlink,
generator sizes a trace cannot hold, binary noise taken for oracleGeneral, a CSV with a
byte-order mark."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bufsim.formats import detect_format
from conftest import bufsim_cli, write_csv

ROOT = Path(__file__).resolve().parent.parent


def cli(*args) -> subprocess.CompletedProcess:
    """`bufsim_cli` with a time limit: a regression here has been a hang (or a FIFO never opened)."""
    return subprocess.run(
        [sys.executable, "-m", "bufsim", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def refused(p, *words: str) -> None:
    """Exit 2 with one line on stderr, `bufsim: error: ...`, holding each of `words`."""
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("bufsim: error: "), p.stderr
    assert "Traceback" not in p.stderr and all(w in lines[0] for w in words), p.stderr


# Item 1: filter-trace over its own input.


@pytest.mark.parametrize("name", ["same", "symlink", "hard link"])
def test_filter_trace_refuses_to_write_over_its_input(tmp_path, name):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096), ("R", "a", 0, 4096)])
    before = md5(t)
    out = t
    if name == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to("t.csv")
    elif name == "hard link":
        out = tmp_path / "hard.csv"
        os.link(t, out)
    p = bufsim_cli("filter-trace", t, "--first-level", "lru", "-o", out)
    refused(p, str(out), "is the input trace")
    assert md5(t) == before and p.stdout == ""


# Item 2: convert never replaces a device, a FIFO or a symlink.


def read_fifo(path: Path, got: list) -> threading.Thread:
    def run():
        with open(path, "rb") as f:
            got.append(f.read())

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


@pytest.mark.parametrize("to", ["bst", "lcs-csv", "oracle"])
def test_convert_into_a_fifo_writes_into_it(tmp_path, to):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 8192)])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list = []
    th = read_fifo(fifo, got)
    p = cli("convert", t, "-o", fifo, "--to", to, "--json")
    th.join(timeout=10)
    if th.is_alive() and stat.S_ISFIFO(os.lstat(fifo).st_mode):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the reader still waits: let it end
    th.join(timeout=10)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert got and len(got[0]) > 0
    if to == "lcs-csv":
        assert got[0].decode().count("\n") == 3  # header and two block accesses
    if to == "oracle":
        assert len(got[0]) == 2 * 24
    assert sorted(os.listdir(tmp_path)) == ["fifo", "t.csv"], "a temporary file was left behind"


def test_convert_into_a_character_device_keeps_the_device(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096)])
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # as /dev/null
    except PermissionError:
        pytest.skip("making a device node needs root")
    for to in ["bst", "lcs-csv"]:
        p = bufsim_cli("convert", t, "-o", null, "--to", to)
        assert p.returncode == 0, p.stderr
        st = os.lstat(null)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), f"--to {to} replaced the device"
    assert sorted(os.listdir(tmp_path)) == ["null", "t.csv"]


def test_convert_refuses_a_block_device(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096)])
    disk = tmp_path / "disk"
    try:
        # Major 240 is for local or experimental use: no such disk is here to harm.
        os.mknod(disk, 0o600 | stat.S_IFBLK, os.makedev(240, 0))
    except PermissionError:
        pytest.skip("making a device node needs root")
    refused(bufsim_cli("convert", t, "-o", disk), str(disk), "block device")
    assert stat.S_ISBLK(os.lstat(disk).st_mode)


def test_convert_through_a_symlink_keeps_the_link(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096)])
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "t.bst"
    target.write_bytes(b"old")
    link = tmp_path / "t.bst"
    link.symlink_to("real/t.bst")
    p = bufsim_cli("convert", t, "-o", link)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == "real/t.bst"
    assert target.read_bytes().startswith(b"\x89BST")
    assert bufsim_cli("run", link, "-c", "10blocks").returncode == 0


# Items 5 and 6: dulo-mix sizes.


@pytest.mark.parametrize(
    "spec,param",
    [
        ("dulo-mix(files=100000000000000,accesses=10)", "files"),
        ("dulo-mix(file-blocks=100000000000000,accesses=10)", "file-blocks"),
        ("dulo-mix(random-blocks=100000000000,random-span=100000000000,accesses=10)", "random-blocks"),
        ("dulo-mix(random-span=18446744073709551615,accesses=10)", "random-span"),
        ("amp-mix(loop1=18446744073709551615,accesses=10)", "loop1"),
    ],
)
def test_generators_refuse_sizes_they_cannot_hold(tmp_path, spec, param):
    out = tmp_path / "g.csv"
    p = cli("generate", spec, "-o", out)
    refused(p, f"{param} must be a whole number, at most")
    assert not out.exists()


def test_a_scan_longer_than_the_trace_is_cut_short(tmp_path):
    out = tmp_path / "g.csv"
    p = cli(
        "generate",
        "dulo-mix(file-blocks=1099511627776,random-span=1099511627776,accesses=10,random-share=0)",
        "-o",
        out,
    )
    assert p.returncode == 0, p.stderr
    assert len(out.read_text().splitlines()) == 11
    # With random reads asked for, a trace too short for one scan and its burst would hold none.
    p = cli("generate", "dulo-mix(accesses=1000,file-blocks=5000,random-share=0.5)", "-o", out)
    refused(p, "accesses=`1000`", "at least 10000", "file-blocks=5000", "random-share=0.5")


# Item 14: generated requests bufsim would refuse to read.


def test_generate_refuses_requests_larger_than_bufsim_reads(tmp_path):
    out = tmp_path / "g.csv"
    p = bufsim_cli("generate", "sa-trace1(requests=10,sizes=fixed,request-size=5GB)", "-o", out)
    refused(p, "request-size", "at most 4GiB - 4KiB")
    assert not out.exists()
    # The largest fixed size, in a working set that holds it, is read back.
    p = bufsim_cli(
        "generate", "sa-trace1(requests=3,sizes=fixed,request-size=1048575blocks,working-set=4GiB)", "-o", out
    )
    assert p.returncode == 0, p.stderr
    assert bufsim_cli("run", out, "-c", "10blocks").returncode == 0


def test_generate_refuses_a_working_set_that_cannot_hold_its_requests(tmp_path):
    # 1 KB once gave offsets up to 116 KiB (a whole stripe row) and requests up to 476 KiB.
    out = tmp_path / "g.csv"
    for spec, words in (
        ("sa-trace1(working-set=1KB,requests=10)", ("working-set=`1KB`", "at least 496KiB", "request-size=256KB")),
        ("sa-trace1(working-set=64KiB,sizes=fixed,request-size=8KB)", ("at least 128KiB", "devices=16 x unit=8KiB")),
        ("sa-trace2(working-set=100KB)", ("at least 532KiB", "sizes=exponential")),
    ):
        refused(bufsim_cli("generate", spec, "-o", out), *words)
        assert not out.exists()
    # The least it names is taken, and the requests start in it and are no longer.
    p = bufsim_cli("generate", "sa-trace1(working-set=496KiB,requests=2000)", "-o", out)
    assert p.returncode == 0, p.stderr
    rows = [line.split(",") for line in out.read_text().splitlines()[1:]]
    assert len(rows) == 2000 and all(int(r[2]) < 512 * 1024 and int(r[3]) <= 496 * 1024 for r in rows)


# Item 15: binary noise is no oracleGeneral trace.


def test_binary_noise_is_not_taken_for_an_oracle_trace(tmp_path):
    noise = tmp_path / "noise.bin"
    noise.write_bytes(os.urandom(2400))
    elf = tmp_path / "elf.bin"
    so = next((ROOT / "python" / "bufsim").glob("_core*.so"))
    elf.write_bytes(so.read_bytes()[:24000])
    for f in (noise, elf):
        refused(bufsim_cli("run", f, "-c", "10blocks"), str(f), "cannot tell the trace format", "--format")
    # Given the format, any whole number of records is read.
    assert bufsim_cli("run", noise, "-c", "10blocks", "--format", "oracle").returncode == 0


def test_oracle_traces_are_still_detected(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "a", 0, 16384), ("R", "a", 4096, 4096)])
    out = tmp_path / "t.oracleGeneral"
    assert bufsim_cli("convert", t, "-o", out).returncode == 0
    assert struct.unpack_from("<IQIq", out.read_bytes(), 24)[3] == 5  # block 1's next access: record 5
    assert detect_format(out) == "oracle"
    real = sorted(ROOT.glob("bench-data/*.oracleGeneral")) + sorted(
        (ROOT.parent / "shared" / "traces").glob("**/*.oracleGeneral")
    )
    for f in real:
        head = tmp_path / f.name
        with open(f, "rb") as src:
            head.write_bytes(src.read(24 * 5000))
        assert detect_format(head) == "oracle", f


# Item 21: a byte-order mark.


def test_a_csv_with_a_byte_order_mark_is_read(tmp_path):
    t = tmp_path / "bom.csv"
    t.write_bytes(b"\xef\xbb\xbfop,file,offset,size\r\nR,a,0,4096\r\nR,a,0,4096\r\n")
    plain = write_csv(tmp_path / "plain.csv", [("R", "a", 0, 4096), ("R", "a", 0, 4096)])
    want = bufsim_cli("run", plain, "-c", "10blocks", "--json")
    assert want.returncode == 0, want.stderr
    for extra in [[], ["--format", "csv"]]:
        p = bufsim_cli("run", t, "-c", "10blocks", "--json", *extra)
        assert p.returncode == 0, p.stderr
        assert p.stdout.replace("bom.csv", "plain.csv") == want.stdout


def test_a_csv_separated_by_semicolons_pipes_or_tabs_is_refused_with_the_fix(tmp_path):
    # Once `;` and `|` were read as libCacheSim txt, the header counted as an access (exit 0).
    for name, sep in (("semicolon.csv", ";"), ("pipe.csv", "|")):
        t = tmp_path / name
        t.write_text(f"op{sep}file{sep}offset{sep}size\nR{sep}a{sep}0{sep}4096\n")
        refused(
            bufsim_cli("run", t, "-c", "16blocks"),
            f"{t}:1: cannot tell the trace format",
            f"separates its columns with `{sep}`",
            "separate them with commas",
            "--format",
        )
    tab = tmp_path / "tab.csv"
    tab.write_text("op\tfile\toffset\tsize\nR\ta\t0\t4096\n")
    refused(bufsim_cli("run", tab, "-c", "16blocks"), f"{tab}:1: header lacks", "separated by tabs", "with commas")
    # Object ids that hold a `;` or `|` on some lines are still libCacheSim txt.
    ids = tmp_path / "ids.txt"
    ids.write_text("user;1\nuser2\nkey|3\n")
    assert detect_format(ids) == "lcs-txt"
