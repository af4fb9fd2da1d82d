"""`bufsim convert` into libCacheSim's formats: libCacheSim's own reader replays the oracleGeneral
file to bufsim's miss counts (LRU, and Belady, which reads the next-access times), and bufsim
reads both formats back to the same results as the original trace."""

from __future__ import annotations

import struct
import subprocess
import sys

import libcachesim as lcs
import pytest

import bufsim
from bufsim.formats import detect_format
from conftest import bufsim_cli

SIZES = [1024, 4096, 16384]
BLOCK = 4096


@pytest.fixture(scope="module")
def exported(cloudphysics, tmp_path_factory):
    d = tmp_path_factory.mktemp("lcs")
    oracle, csv = d / "cp.oracleGeneral", d / "cp.lcs.csv"
    c = bufsim.convert(cloudphysics, oracle, progress=False)
    assert c.bytes == 24 * c.requests
    p = bufsim_cli("convert", cloudphysics, "-o", csv, "--to", "lcs-csv")
    assert p.returncode == 0, p.stderr
    return oracle, csv, c.requests


def libcachesim_misses(path, n, cls, cache_blocks):
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    # Objects are blocks of BLOCK bytes, so the cache holds cache_blocks of them.
    cache = getattr(lcs, cls)(cache_size=cache_blocks * BLOCK, hashpower=max(16, min(24, (n - 1).bit_length())))
    ratio, _ = cache.process_trace(reader)
    return round(ratio * n)


@pytest.mark.parametrize("policy,cls", [("lru", "LRU"), ("opt", "Belady")])
def test_libcachesim_replays_the_oracle_file_to_bufsims_misses(policy, cls, cloudphysics, exported):
    oracle, _, n = exported
    ours = bufsim.run(cloudphysics, [policy], SIZES, progress=False)
    assert all(r.accesses == n for r in ours)
    theirs = [libcachesim_misses(oracle, n, cls, c) for c in SIZES]
    assert [r.misses for r in ours] == theirs


def test_bufsim_reads_both_formats_back_to_the_same_runs(cloudphysics, exported):
    oracle, csv, _ = exported
    policies = ["lru", "arc", "opt"]
    want = [(r.policy, r.cache_blocks, r.hits, r.misses) for r in bufsim.run(cloudphysics, policies, SIZES)]
    for path, fmt in ((oracle, "oracle"), (csv, "lcs-csv")):
        assert detect_format(path) == fmt
        got = [(r.policy, r.cache_blocks, r.hits, r.misses) for r in bufsim.run(path, policies, SIZES)]
        assert got == want, fmt


def test_writes_reads_and_ops_and_the_next_access_numbers(tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("op,file,offset,size,time_us\nR,f,0,8192,0\nW,f,4096,4096,2500000\nR,f,0,4096,3000000\n")
    out = tmp_path / "t.oracleGeneral"
    assert bufsim.convert(t, out).requests == 4  # one record per block
    recs = [struct.unpack_from("<IQIq", out.read_bytes(), 24 * i) for i in range(4)]
    # Blocks 0, 1, 1, 0 at 0, 0, 2, 3 s; block 0 comes back as record 4, block 1 as record 3.
    assert recs == [(0, 0, BLOCK, 4), (0, 1, BLOCK, 3), (2, 1, BLOCK, -1), (3, 0, BLOCK, -1)]
    csv = tmp_path / "t.lcs.csv"
    bufsim.convert(t, csv, to="lcs-csv")
    assert csv.read_text().splitlines() == [
        "time,obj_id,obj_size,op",
        "0,0,4096,read",
        "0,1,4096,read",
        "2,1,4096,write",
        "3,0,4096,read",
    ]
    reads = tmp_path / "r.lcs.csv"
    bufsim.convert(t, reads, to="lcs-csv", reads_only=True)
    assert len(reads.read_text().splitlines()) == 4


def test_an_oracle_file_whose_times_go_back_is_read_back_without_format(tmp_path):
    # A trace merged from several hosts: its times go back now and then, and the oracleGeneral
    # file keeps them so. Detection once refused it ("cannot tell the trace format").
    t = tmp_path / "t.csv"
    t.write_text(
        "op,device,offset,size,time_us\n"
        + "".join(
            f"R,0,{b * 4096},4096,{s}\n"
            for b, s in [(1, 9000000), (2, 4000000), (1, 7000000), (3, 1000000), (2, 8000000)]
        )
    )
    out = tmp_path / "t.oracleGeneral"
    bufsim.convert(t, out)
    assert bufsim.formats.detect_format(out) == "oracle"
    r = bufsim.simulate(out, "lru", 2)
    assert (r.hits, r.misses) == (bufsim.simulate(t, "lru", 2).hits, bufsim.simulate(t, "lru", 2).misses) == (1, 4)


def test_oracle_from_a_pipe_is_refused_in_one_line_and_the_csv_streams(cloudphysics, tmp_path):
    out = tmp_path / "p.oracleGeneral"
    with open(cloudphysics, "rb") as f:
        p = subprocess.run(
            [sys.executable, "-m", "bufsim", "convert", "-", "-o", str(out)], stdin=f, capture_output=True, text=True
        )
    assert p.returncode == 2 and not out.exists()
    assert len(p.stderr.strip().splitlines()) == 1 and "cannot be read again" in p.stderr, p.stderr
    csv = tmp_path / "p.csv"
    with open(cloudphysics, "rb") as f:
        p = subprocess.run(
            [sys.executable, "-m", "bufsim", "convert", "-", "-o", str(csv), "--to", "lcs-csv"],
            stdin=f,
            capture_output=True,
            text=True,
        )
    assert p.returncode == 0, p.stderr
    assert bufsim.run(csv, ["lru"], [4096])[0].misses == bufsim.run(cloudphysics, ["lru"], [4096])[0].misses


def test_unknown_output_format_and_skip_bad_are_one_line_errors(cloudphysics, tmp_path):
    p = bufsim_cli("convert", cloudphysics, "-o", tmp_path / "x", "--to", "parquet")
    assert p.returncode == 2 and "invalid choice" in p.stderr
    p = bufsim_cli("convert", cloudphysics, "-o", tmp_path / "x.oracleGeneral", "--skip-bad")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_larger_block_size_writes_that_size_and_libcachesim_agrees(cloudphysics, tmp_path):
    # One record per 8 KiB block access, each of obj_size 8192: libCacheSim's LRU over a cache
    # of N * 8192 bytes is bufsim's LRU over N blocks of 8 KiB.
    out = tmp_path / "cp8.oracleGeneral"
    p = bufsim_cli("convert", cloudphysics, "-o", out, "--to", "oracle", "--block-size", "8192")
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    n = len(data) // 24
    assert {struct.unpack_from("<IQIq", data, 24 * i)[2] for i in range(n)} == {8192}
    for blocks in (1024, 16384):
        ours = bufsim.simulate(cloudphysics, "lru", blocks, block_size=8192)
        assert ours.accesses == n
        reader = lcs.TraceReader(str(out), lcs.TraceType.ORACLE_GENERAL_TRACE)
        cache = lcs.LRU(cache_size=blocks * 8192, hashpower=max(16, min(24, (n - 1).bit_length())))
        ratio, _ = cache.process_trace(reader)
        assert round(ratio * n) == ours.misses
