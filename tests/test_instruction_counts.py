"""Count mode's cost per request does not creep up: instructions per request of LRU, ARC and LIRS,
counted by callgrind (deterministic, so independent of the machine's load), stay within 10% of
the baselines in tests/golden/instructions_per_request.json.

The measurement is the `count_cost` example's: the trace slice is decoded once and the same run
repeats; the instructions of 2 runs minus those of 1 run, over the slice's requests, are the
cost of simulating one request (decoding and start-up cancel out). Two cache sizes, 1% and
10% of the slice's distinct blocks, as docs/performance.md measures.

A deliberate change of cost (a faster engine, a new compiler) is re-recorded with
`BUFSIM_RECORD_INSTRUCTIONS=1 python -m pytest tests/test_instruction_counts.py`, which rewrites
the baselines and then fails, so a recording never passes unnoticed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "tests" / "golden" / "instructions_per_request.json"
EXAMPLE = ROOT / "target" / "ci" / "examples" / "count_cost"
# The first requests of the CloudPhysics trace: enough for steady state, seconds under callgrind.
SLICE_REQUESTS = 5_000
POLICIES = ["lru", "arc", "lirs"]
TOLERANCE = 0.10

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None,
    reason="valgrind is not installed (make test installs it: apt-get install valgrind); "
    "instruction counts need callgrind",
)


@pytest.fixture(scope="module")
def count_cost() -> Path:
    # Built with the test suite's profile by `cargo test --profile ci` under `make test`; then this
    # is a quick no-op.
    subprocess.run(
        ["cargo", "build", "--profile", "ci", "-q", "-p", "bufsim-core", "--example", "count_cost"],
        cwd=ROOT,
        check=True,
    )
    return EXAMPLE


@pytest.fixture(scope="module")
def trace_slice(tmp_path_factory, cloudphysics) -> tuple[Path, int]:
    """The slice and its distinct 4 KiB blocks."""
    lines = cloudphysics.read_text().splitlines(keepends=True)
    path = tmp_path_factory.mktemp("slice") / "cloudphysics_head.csv"
    path.write_text("".join(lines[: SLICE_REQUESTS + 1]))
    blocks = set()
    for line in lines[1 : SLICE_REQUESTS + 1]:
        _, _, _, size, lbn = line.split(",")
        first = int(lbn) * 512 // 4096
        last = (int(lbn) * 512 + int(size) - 1) // 4096
        blocks.update(range(first, last + 1))
    return path, len(blocks)


def instructions(exe: Path, trace: Path, policy: str, cache: str, repeat: int) -> tuple[int, int]:
    """Instructions callgrind counted for `repeat` runs, and the trace's request count."""
    p = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            str(exe),
            str(trace),
            policy,
            cache,
            str(repeat),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    refs = re.search(r"Collected : (\d+)", p.stderr)
    assert refs, p.stderr
    requests = re.search(r"requests (\d+)", p.stdout)
    assert requests, p.stdout
    return int(refs.group(1)), int(requests.group(1))


def per_request(exe: Path, trace: Path, policy: str, cache: str) -> float:
    (one, requests), (two, _) = (instructions(exe, trace, policy, cache, n) for n in (1, 2))
    return (two - one) / requests


@needs_valgrind
def test_instructions_per_request_stay_within_ten_percent_of_the_baselines(count_cost, trace_slice):
    trace, distinct = trace_slice
    runs = {
        f"{policy} {share}%": (policy, f"{max(1, distinct * share // 100)}blocks")
        for policy in POLICIES
        for share in (1, 10)
    }
    # callgrind runs one thread: one run per core.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        costs = pool.map(lambda run: per_request(count_cost, trace, *run), runs.values())
        measured = {k: round(c, 1) for k, c in zip(runs, costs)}
    if os.environ.get("BUFSIM_RECORD_INSTRUCTIONS"):
        BASELINES.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n")
        pytest.fail(f"recorded new baselines in {BASELINES}: {measured}; rerun without BUFSIM_RECORD_INSTRUCTIONS")
    baselines = json.loads(BASELINES.read_text())
    assert set(baselines) == set(measured), f"baselines {sorted(baselines)} but measured {sorted(measured)}"
    grown = {
        k: f"{measured[k]} instructions per request against a baseline of {baselines[k]}"
        for k in measured
        if measured[k] > baselines[k] * (1 + TOLERANCE)
    }
    assert not grown, f"count mode got more than {TOLERANCE:.0%} slower: {grown}"
