"""Memory that follows the trace, not the cache size: every registered policy runs a 1 TiB cache
on a small trace in a small process; several configurations stream one pass of a file with the
results of separate runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import bufsim

HERE = os.path.dirname(__file__)
TRACE = os.path.join(HERE, "..", "traces", "grep.csv.gz")
CLI = [sys.executable, "-m", "bufsim"]
POLICIES = [p["name"] for p in bufsim.policies()]


# A fresh, small interpreter runs the command and reports its children's peak RSS: measured from
# the test process itself, a fork of a large pytest process would count the copy's pages.
# Its first argument is the file to give the command as standard input ("" for none).
_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "stdin = open(sys.argv[1], 'rb') if sys.argv[1] else subprocess.DEVNULL\n"
    "p = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True, timeout=300)\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
    "print(json.dumps([p.returncode, p.stdout.decode(), p.stderr.decode(errors='replace')[-400:], peak]))\n"
)


def _peak_child_rss_mb(args: list[str], stdin: str = "") -> tuple[subprocess.CompletedProcess, float]:
    """Runs `bufsim ARGS` under a fresh wrapper process, so RUSAGE_CHILDREN is its own peak."""
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, stdin] + CLI + args, capture_output=True, text=True, timeout=360
    )
    rc, stdout, err, peak = json.loads(out.stdout)
    return subprocess.CompletedProcess(args, rc, stdout.encode(), err.encode()), peak


@pytest.mark.parametrize("policy", POLICIES)
def test_a_1tib_cache_on_a_small_trace_fits_in_100mb(policy):
    p, peak = _peak_child_rss_mb(["run", TRACE, "-p", policy, "-c", "1TiB"])
    assert p.returncode == 0, p.stderr.decode()
    assert peak < 100, f"{policy}: peak RSS {peak:.0f} MB"


def test_results_do_not_depend_on_the_cache_being_larger_than_the_trace():
    """A cache larger than the footprint holds every block whatever its size: 1 TiB and the
    footprint's size give the same counts for every policy (per-frame state grows on demand)."""
    big = bufsim.run(TRACE, POLICIES, "1TiB")
    foot = bufsim.run(TRACE, "lru", "64GiB")
    for r in big:
        if r.policy.startswith(("dulo", "opt")):
            continue
        assert r.misses == foot[0].misses, r.policy


def test_several_configurations_stream_and_match_single_runs():
    """Several configurations over a file run from chunks of one pass; each equals its own run."""
    policies = ["lru", "arc", "lirs", "2q", "s3-fifo", "clock-pro", "mglru", "w-tinylfu"]
    together = bufsim.run(TRACE, policies, ["64KiB", "1MiB"], {"jobs": 2})
    for r in together:
        alone = bufsim.run(TRACE, r.policy, f"{r.cache_blocks}blocks")[0]
        assert (r.hits, r.misses, r.evictions) == (alone.hits, alone.misses, alone.evictions), r.policy


def test_a_cache_beyond_the_frame_numbering_is_a_one_line_error():
    p = subprocess.run(CLI + ["run", TRACE, "-p", "lru", "-c", "8TiB"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "2^31 blocks" in p.stderr.strip().splitlines()[-1], p.stderr


def test_the_working_set_search_streams_a_trace_file(tmp_path):
    """`analyze` finds the working set (OPT runs over the whole trace) reading a file once per run:
    2M requests in a fraction of what holding them takes (56 bytes each, as standard input must
    be held), with the same answer."""
    import random

    rng = random.Random(3)
    csv = tmp_path / "z.csv"
    with open(csv, "w") as f:
        f.write("op,file,offset,size\n")
        f.writelines(f"R,f,{int(rng.paretovariate(0.3)) % 200_000 * 4096},4096\n" for _ in range(2_000_000))
    bst = tmp_path / "z.bst"
    subprocess.run(CLI + ["convert", str(csv), "-o", str(bst), "--no-progress"], check=True, capture_output=True)
    streamed, file_peak = _peak_child_rss_mb(["analyze", str(bst), "--json", "--no-progress"])
    piped, stdin_peak = _peak_child_rss_mb(["analyze", "-", "--format", "bst", "--json", "--no-progress"], str(bst))
    assert streamed.returncode == 0 and piped.returncode == 0, (streamed.stderr, piped.stderr)
    ws = json.loads(streamed.stdout)["working_set"]
    assert ws == json.loads(piped.stdout)["working_set"] and ws["blocks"] > 100
    assert file_peak < 120 and file_peak < 0.6 * stdin_peak, (file_peak, stdin_peak)


def test_several_configurations_stream_standard_input_too(tmp_path):
    """A pipe is read once, as a file is: several count-mode runs share the pass, chunk by chunk,
    in constant memory (3M requests: 168 MB decoded at 56 bytes each), with each run's result."""
    import numpy as np

    record = np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("next", "<i8")])
    n = 3_000_000
    rng = np.random.default_rng(5)
    records = np.zeros(n, dtype=record)
    records["id"] = (rng.pareto(0.8, n) * 1000).astype(np.uint64) % 500_000
    records["sz"] = 4096
    records["next"] = -1
    trace = tmp_path / "z.oracleGeneral"
    records.tofile(trace)
    args = [
        "run",
        "-",
        "--format",
        "oracle",
        "-p",
        "lru",
        "-p",
        "arc",
        "-p",
        "s3-fifo",
        "-p",
        "lirs",
        "-c",
        "4096blocks",
    ]
    piped, peak = _peak_child_rss_mb([*args, "--json"], str(trace))
    assert piped.returncode == 0, piped.stderr
    assert peak < 100, f"peak RSS {peak:.0f} MB: the pipe was held in memory"
    from_file = subprocess.run(CLI + [*args[:1], str(trace), *args[2:], "--json"], capture_output=True, timeout=300)
    assert piped.stdout == from_file.stdout
