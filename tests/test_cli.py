"""The command line: tables, JSON lines, and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest

from conftest import block_trace, bufsim_cli, write_csv

REQUIRED = {"policy", "cache_blocks", "requests", "accesses", "hits", "misses", "hit_ratio"}


def test_run_prints_an_aligned_table(cloudphysics):
    p = bufsim_cli("run", cloudphysics, "-p", "lru", "-p", "clock", "-c", "4MiB", "-c", "64MiB")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["policy", "cache", "blocks"]
    assert len(lines) == 2 + 4
    assert len({len(l) for l in lines[1:]}) <= 2  # aligned columns
    assert "1009752" in p.stdout  # LRU misses at 16384 blocks, equal to libCacheSim's


def test_run_json_lines(tmp_path):
    t = block_trace(tmp_path / "t.csv", [1, 2, 1, 3])
    p = bufsim_cli("run", t, "--policy", "lru", "--policy", "opt", "--cache", "2blocks", "--json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    assert [r["policy"] for r in rows] == ["lru", "opt"]
    assert all(REQUIRED <= r.keys() for r in rows)
    assert rows[0]["hits"] == 1


def check_error(p, *fragments):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert p.stdout == ""
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err


def test_bad_input_gives_one_line_errors(tmp_path):
    check_error(bufsim_cli("run", tmp_path / "missing.csv"), "missing.csv", "no such file")
    cols = write_csv(tmp_path / "cols.csv", [("R", "a", 0)])
    check_error(bufsim_cli("run", cols), "cols.csv:2:", "expected 4 columns")
    neg = write_csv(tmp_path / "neg.csv", [("R", "a", 0, 4), ("R", "a", 0, -4)])
    check_error(bufsim_cli("run", neg), "neg.csv:3:", "size must be a non-negative")
    num = write_csv(tmp_path / "num.csv", [("R", "a", "zero", 4)])
    check_error(bufsim_cli("run", num), "num.csv:2:", "offset")
    check_error(bufsim_cli("run", neg, "--format", "nope"), "unknown trace format")
    ok = block_trace(tmp_path / "ok.csv", [1])
    check_error(bufsim_cli("run", ok, "-p", "lru(k=2)"), "takes no parameters")
    check_error(bufsim_cli("run", ok, "-p", "nosuch"), "unknown policy")
    check_error(bufsim_cli("run", ok, "-c", "0blocks"), "no whole")
    check_error(bufsim_cli("run", ok, "-c", "lots"), "size `lots`")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    check_error(bufsim_cli("run", junk), "cannot tell the trace format", "--format")


def test_policies_command_lists_every_policy():
    p = bufsim_cli("policies")
    assert p.returncode == 0
    for n in ["lru", "fifo", "clock", "mru", "random", "lfu", "opt"]:
        assert f"\n{n}" in "\n" + p.stdout
    assert "aging=none" in p.stdout


def test_help_describes_commands():
    p = bufsim_cli("--help")
    assert p.returncode == 0 and "run" in p.stdout and "policies" in p.stdout
    p = bufsim_cli("run", "--help")
    assert "--reads-only" in p.stdout and "--block-size" in p.stdout


@pytest.mark.parametrize("size", ["3B", "3000B", "256B", "2GiB"])
def test_block_sizes_that_no_system_has_are_refused(cloudphysics, size):
    p = bufsim_cli("run", cloudphysics, "--block-size", size)
    assert p.returncode == 2 and "power of two from 512 B" in p.stderr and "Traceback" not in p.stderr
    assert p.stdout == ""


def test_a_header_only_trace_says_it_is_empty(tmp_path):
    p = bufsim_cli("run", write_csv(tmp_path / "h.csv", []), "-p", "lru", "-c", "1MiB")
    assert p.returncode == 0 and "holds no requests" in p.stderr
