"""Every parameter of every registry declares its range, shown by the catalog commands; a value
outside it is one line naming the parameter, the range and the spec, exit 2."""

from __future__ import annotations

import re

import pytest

import bufsim
from bufsim.options import OPTION_FIELDS
from conftest import bufsim_cli, write_csv


@pytest.mark.parametrize(
    "spec,rule",
    [
        ("fbr(new=2.0)", "new must be a share of the cache between 0% and 100%, not `2.0` (in `fbr(new=2.0)`)"),
        ("lru-k(k=0)", "k must be a whole number from 1 to 8"),
        ("lru-k(k=9)", "(in `lru-k(k=9)`)"),
        ("lrfu(lambda=1.5)", "lambda must be a number between 0 and 1"),
        ("arc(adapt=sometimes)", "adapt must be one of real, integer"),
    ],
)
def test_values_outside_a_declared_range_are_one_line(tmp_path, spec, rule):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    p = bufsim_cli("run", t, "-p", spec, "-c", "100blocks")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert rule in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_read_ahead_and_devices_check_their_ranges_too(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    p = bufsim_cli("run", t, "-p", "lru", "-c", "100blocks", "--prefetch", "simple(max=0)")
    assert p.returncode == 2 and "max must be" in p.stderr and "simple(max=0)" in p.stderr, p.stderr
    p = bufsim_cli("run", t, "-p", "lru", "-c", "100blocks", "--timing", "--device", "ssd(channels=0)")
    assert p.returncode == 2 and "channels must be a whole number from 1 to 4096" in p.stderr, p.stderr


@pytest.mark.parametrize("kind", ["policy", "prefetch", "device", "scheduler", "generator"])
def test_one_registry_function_lists_every_kind_with_ranges(kind):
    entries = bufsim.registry(kind)
    assert entries and all(e["kind"] == kind for e in entries)
    for e in entries:
        assert len(e["ranges"]) == len(e["params"]) and all(e["ranges"]), e["name"]
        assert {"name", "aliases", "paper", "summary", "preset_of", "needs_future", "partitioned"} <= e.keys()


def test_capabilities_are_flags_of_the_registry():
    flags = {p["name"]: p for p in bufsim.registry("policy")}
    assert flags["opt"]["needs_future"] and not flags["lru"]["needs_future"]
    assert flags["amp"]["partitioned"] and flags["lazy-clock"]["partitioned"] and not flags["arc"]["partitioned"]
    # A preset has the flags of what it stands for.
    assert flags["lru2-accusim"]["needs_future"] == flags["lru-k"]["needs_future"]


def test_catalog_shows_ranges():
    p = bufsim_cli("policies")
    assert p.returncode == 0 and "k=2  " in p.stdout and "[a whole number from 1 to 8" in p.stdout
    p = bufsim_cli("prefetchers")
    assert p.returncode == 0 and "max=32" in p.stdout and "[a whole number from 1 to 4294967296" in p.stdout


def test_options_json_is_one_object_per_option_with_its_range():
    import json

    p = bufsim_cli("options", "--json")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["name"] for r in rows] == [f.name for f in OPTION_FIELDS]
    block = next(r for r in rows if r["name"] == "block_size")
    assert block["flags"] == ["--block-size"] and block["range"] == [512, 1 << 30] and block["default"] == 4096


def test_read_ahead_sizes_stop_where_their_arithmetic_would_wrap(tmp_path):
    # Sizes near 2^64 wrapped when doubled (linux(min=2^63) read nothing ahead on a first
    # access at block 0): they are refused, and the largest allowed acts as any size past
    # every file does.
    rows = [("R", f, b * 4096, 8192) for f in "abc" for b in range(0, 40, 2)] * 2
    t = write_csv(tmp_path / "t.csv", rows)
    for spec in ("linux(min=9223372036854775808,max=9223372036854775808)", "linux-6(max=18446744073709551615)"):
        p = bufsim_cli("run", t, "-c", "30blocks", "--prefetch", spec)
        assert p.returncode == 2 and "from 1 to 4294967296" in p.stderr, p.stderr
    for name, params in [
        ("linux", "min={n},max={n}"),
        ("linux-accusim", "min={n},max={n}"),
        ("simple", "min={n},max={n}"),
    ]:
        runs = [bufsim.simulate(t, "lru", 30, prefetch=f"{name}({params.format(n=n)})") for n in (1 << 20, 1 << 32)]
        assert runs[0].misses == runs[1].misses and runs[0].prefetched == runs[1].prefetched, name
    for name in ("linux-ondemand", "linux-6", "bsd"):
        runs = [bufsim.simulate(t, "lru", 30, prefetch=f"{name}(max={n})") for n in (1 << 20, 1 << 32)]
        assert runs[0].misses == runs[1].misses and runs[0].prefetched == runs[1].prefetched, name


@pytest.mark.parametrize("field", [f for f in OPTION_FIELDS if f.sql in ("BIGINT", "UBIGINT")], ids=lambda f: f.name)
def test_the_least_value_a_numeric_option_names_is_taken_and_the_one_below_refused(tmp_path, field):
    # --closed once said "from 0" and refused 0: the message names the range the core holds to.
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    flag = field.flags[0]
    p = bufsim_cli("run", t, "-c", "100blocks", flag, str(2**70))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    least = re.search(r"from (\d+)", p.stderr)
    assert least, p.stderr
    assert int(least.group(1)) == field.range[0], (p.stderr, field.range)
    p = bufsim_cli("run", t, "-c", "100blocks", flag, least.group(1))
    assert p.returncode == 0, p.stderr
    p = bufsim_cli("run", t, "-c", "100blocks", flag, str(int(least.group(1)) - 1))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert f"from {least.group(1)} to" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
