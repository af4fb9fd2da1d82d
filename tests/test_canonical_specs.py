"""Spec strings have one canonical spelling, which keys sweep runs; parameters outside their
range are refused with the rule they break; one unit rule for every block parameter."""

from __future__ import annotations

import pytest

from bufsim import SpecError, _core
from conftest import bufsim_cli, write_csv


@pytest.mark.parametrize("spelling", ["lru", "LRU", " lru", "lru()", "Lru ( )"])
def test_spellings_of_lru_are_one(spelling):
    assert _core.canonical_policy(spelling) == "lru"


def test_defaults_are_dropped_and_order_fixed():
    assert _core.canonical_policy("lirs(hir=1%)") == "lirs"
    assert _core.canonical_policy("lirs(stack=2x,HIR=5%)") == "lirs(hir=5%,stack=2x)"
    with pytest.raises(SpecError, match="empty parameter"):
        _core.canonical_policy("lru(,)")


def test_a_sweep_runs_each_canonical_spec_once(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", b * 4096, 4096) for b in [1, 2, 3, 1, 2, 4, 1]])
    db = tmp_path / "s.duckdb"
    p = bufsim_cli(
        "sweep",
        t,
        "-o",
        db,
        "-p",
        "lru",
        "-p",
        "LRU",
        "-p",
        " lru",
        "-p",
        "lirs",
        "-p",
        "lirs(hir=1%)",
        "-c",
        "4blocks",
        "--quiet",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    import json

    rows = [json.loads(x) for x in p.stdout.splitlines()]
    # One row per grid cell, as for any repeated spec; once five keys and five runs.
    assert [r["policy"] for r in rows] == ["lru", "lru", "lru", "lirs", "lirs"]
    assert len({r["key"] for r in rows}) == 2


@pytest.mark.parametrize(
    "spec,rule",
    [
        ("lirs(hir=200%)", "hir=`200%` is 200% of the cache; it must be less than the cache"),
        (
            "lirs(hir-min=1000)",
            "hir-min=`1000` is 1000 blocks, with a cache of 100 blocks; it must be less than the cache",
        ),
        ("2q(kin=200%)", "kin=`200%` is 200% of the cache; it must be at most the cache"),
        ("lirs(stack=0)", "stack=`0` is 0 blocks, with a cache of 100 blocks; it must be at least the cache"),
        ("lru(,)", "empty parameter between commas"),
    ],
)
def test_out_of_range_parameters_are_refused(tmp_path, spec, rule):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    p = bufsim_cli("run", t, "-p", spec, "-c", "100blocks")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert rule in p.stderr, p.stderr


def test_block_parameters_share_one_unit_rule(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    # A bare whole number counts blocks for every policy (once mq refused it, lirs took it).
    for spec in ["mq(history=0)", "mq(history=4)", "lirs(hir=2)"]:
        p = bufsim_cli("run", t, "-p", spec, "-c", "100blocks")
        assert p.returncode == 0, (spec, p.stderr)


def test_the_default_cluster_grows_to_a_large_block(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 1 << 20)])
    p = bufsim_cli("run", t, "--block-size", "128KiB", "-c", "1MiB")
    assert p.returncode == 0, p.stderr
    p = bufsim_cli("run", t, "--block-size", "128KiB", "--cluster", "32KiB", "-c", "1MiB")
    assert p.returncode == 2 and "cluster size `32KiB` is smaller than one block" in p.stderr, p.stderr
