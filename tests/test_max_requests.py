"""`max_requests`: a run of the first N requests equals a run of a trace holding only them, however
the trace is read (a file, a pipe, several configurations streamed together, timed mode)."""

from __future__ import annotations

import json
import subprocess
import sys

import bufsim
from conftest import bufsim_cli

N = 3000
POLICIES = ["lru", "arc", "opt"]


def head(cloudphysics, tmp_path, n=N):
    lines = cloudphysics.read_text().splitlines(keepends=True)
    out = tmp_path / "head.csv"
    out.write_text("".join(lines[: n + 1]))
    return out


def counts(results):
    return [(r.policy, r.requests, r.hits, r.misses, r.disk_requests) for r in results]


def test_the_first_requests_equal_a_trace_of_only_them(cloudphysics, tmp_path):
    short = head(cloudphysics, tmp_path)
    want = bufsim.run(short, POLICIES, ["1MiB", "4MiB"])
    got = bufsim.run(cloudphysics, POLICIES, ["1MiB", "4MiB"], {"max_requests": N})
    assert counts(got) == counts(want) and got[0].requests == N
    one = bufsim.run(cloudphysics, "lru", "4MiB", {"max_requests": N, "timing": True})
    alone = bufsim.run(short, "lru", "4MiB", {"timing": True})
    assert one[0].exec_time_s == alone[0].exec_time_s


def test_from_standard_input_and_in_the_database(cloudphysics, tmp_path):
    cmd = [sys.executable, "-m", "bufsim", "run", "-", "-p", "lru", "-c", "1MiB", "--max-requests", str(N), "--json"]
    with open(cloudphysics, "rb") as f:
        p = subprocess.run(cmd, stdin=f, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["requests"] == N
    db = tmp_path / "s.duckdb"
    p = bufsim_cli("sweep", cloudphysics, "-p", "lru", "-c", "1MiB", "--max-requests", "100", "-o", db, "--quiet")
    assert p.returncode == 0, p.stderr
    import duckdb

    assert duckdb.connect(str(db)).sql("select requests, max_requests from runs").fetchall() == [(100, 100)]


def test_zero_means_the_whole_trace_and_a_negative_count_is_refused(cloudphysics):
    assert counts(bufsim.run(cloudphysics, "lru", "1MiB", {"max_requests": 0})) == counts(
        bufsim.run(cloudphysics, "lru", "1MiB")
    )
    p = bufsim_cli("run", cloudphysics, "-p", "lru", "-c", "1MiB", "--max-requests", "-1")
    assert p.returncode == 2 and "--max-requests" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
