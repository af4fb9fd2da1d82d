"""Inputs the simulation core must survive: traces without a request in timed mode, policy
parameters given as huge absolute amounts, and caches whose tables the machine cannot hold. Each
ends in a result or a one-line error, never a panic or an abort of the interpreter."""

from __future__ import annotations

import pytest
from conftest import bufsim_cli, write_csv
from test_cli import check_error

import bufsim
from bufsim._core import SpecError


@pytest.mark.parametrize(
    "rows",
    [
        [],  # a header only
        [("H", "a", 0, 4096)],  # a hint, no read or write
        [("D", "a", 0, 0)],  # a drop
        [("H", "a", 0, 4096), ("D", "b", 0, 0)],
    ],
)
@pytest.mark.parametrize("timed", [dict(timing=True), dict(timing=True, array=2, closed=2), dict(think="1ms")])
def test_timed_runs_of_traces_without_requests_give_zeros(tmp_path, rows, timed):
    trace = write_csv(tmp_path / "t.csv", rows)
    r = bufsim.simulate(trace, "lru", 64, **timed)
    assert (r.requests, r.hits, r.misses, r.disk_requests) == (0, 0, 0, 0)
    # Only think time passes: between two hints or drops, 1 ms at most here.
    assert 0.0 <= r.exec_time_s <= 0.001


def test_an_all_write_trace_read_only_in_timed_mode(tmp_path):
    trace = write_csv(tmp_path / "w.csv", [("W", "a", 0, 4096)])
    r = bufsim.simulate(trace, "lru", 64, timing=True, reads_only=True)
    assert r.requests == 0


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("clock-pro(nonresident=18446744073709551615)", "parameter nonresident"),
        ("clock-pro(nonresident=50000000)", "give at most 20000 blocks"),
        ("lecar(history=18446744073709551615)", "parameter history"),
        ("cacheus(history=18446744073709551615)", "parameter history"),
        ("clock-pro(nonresident=80MiB)", "20480 blocks is too many"),
    ],
)
def test_absolute_amounts_are_held_to_the_declared_share(tmp_path, spec, fragment):
    trace = write_csv(tmp_path / "t.csv", [("R", "f", (i * 7 % 300) * 4096, 4096) for i in range(1000)])
    with pytest.raises(SpecError, match="too many") as e:
        bufsim.simulate(trace, spec, 200)
    assert fragment in str(e.value)
    # At the bound itself the amount is taken, as the same share would be.
    assert (
        bufsim.simulate(trace, "clock-pro(nonresident=20000)", 200).misses
        == bufsim.simulate(trace, "clock-pro(nonresident=100x)", 200).misses
    )


@pytest.mark.parametrize("spec", ["w-tinylfu", "w-tinylfu(variant=libcachesim)"])
def test_a_sketch_the_machine_cannot_hold_is_an_error_not_an_abort(tmp_path, spec):
    trace = write_csv(tmp_path / "t.csv", [("R", "a", 0, 4096), ("R", "a", 0, 4096)])
    # In a child process: were the allocation to abort, it would take the test runner with it.
    p = bufsim_cli("run", trace, "-p", spec, "-c", "1879048192blocks")
    if p.returncode == 0:
        # A machine that lends this much address space runs it: the sketch's pages stay untouched.
        assert "0.5000" in p.stdout
    else:
        check_error(p, "policy `w-tinylfu`", "give a smaller cache")


def _calls_with_block_size_zero(trace, out):
    from bufsim import _core

    return {
        "size_to_blocks": lambda: _core.size_to_blocks("1MiB", 0),
        "detect": lambda: _core.detect(trace, "amp", block_size=0),
        "analyze": lambda: _core.analyze(trace, block_size=0, seed=1),
        "mrc": lambda: _core.mrc(trace, sizes=["64KiB"], block_size=0, seed=1),
        "mrc_miniature": lambda: _core.mrc_miniature(trace, "lru", rate=0.5, sizes=["64KiB"], block_size=0, seed=1),
        "convert to oracle": lambda: _core.convert(trace, out, to="oracle", block_size=0),
    }


@pytest.mark.parametrize("name", ["size_to_blocks", "detect", "analyze", "mrc", "mrc_miniature", "convert to oracle"])
def test_a_block_size_of_zero_is_refused_by_every_core_function(tmp_path, name):
    # Each of these divides by the block size: a 0 must be the engine's refusal, never a
    # division panic surfacing as pyo3's PanicException.
    trace = write_csv(tmp_path / "t.csv", [("R", "a", 0, 8192), ("R", "a", 8192, 4096)])
    call = _calls_with_block_size_zero(str(trace), str(tmp_path / "o.oracle"))[name]
    with pytest.raises(SpecError, match="block size"):
        call()
