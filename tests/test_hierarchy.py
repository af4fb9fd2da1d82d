"""Hierarchies (MQ paper): `bufsim filter`, second-level runs, the Table 3 breakdown, per-client
first levels, sweeps over a second level, and one-line errors."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import pandas as pd
import pytest

import bufsim
from bufsim.sweeps import SweepSpec, run_sweep
from conftest import bufsim_cli, write_csv

L1 = bufsim.FirstLevel("lru", "16MiB")


def test_filter_writes_the_misses_and_runs_on_them_equal_in_memory_runs(tmp_path, cloudphysics):
    out = tmp_path / "l2.csv"
    p = bufsim_cli(
        "filter-trace", cloudphysics, "--first-level", "lru", "--first-level-cache", "16MiB", "-o", out, "--json"
    )
    assert p.returncode == 0, p.stderr
    [client] = [json.loads(line) for line in p.stdout.splitlines()]
    # 16 MiB of LRU on the CloudPhysics trace: the misses equal a plain LRU run at 4096 blocks.
    assert client["misses"] == bufsim.simulate(cloudphysics, "lru", "16MiB").misses == 1022509
    assert out.read_text().splitlines()[0] == "op,device,offset,size,time_us,pid,ctx"
    from_file = bufsim.sweep(out, ["lru", "fifo", "opt"], ["64MiB", "256MiB"])
    in_memory = bufsim.sweep(cloudphysics, ["lru", "fifo", "opt"], ["64MiB", "256MiB"], first_level=L1)
    cols = ["policy", "cache_blocks", "accesses", "hits", "misses"]
    pd.testing.assert_frame_equal(from_file[cols], in_memory[cols])
    assert (from_file.accesses == client["misses"]).all()


def test_lru_has_no_misses_below_c_on_the_second_level(cloudphysics):
    df = bufsim.distance_breakdown(cloudphysics, ["64MiB", "256MiB"], ["lru", "fifo"], first_level=L1)
    lru = df[df.policy == "lru"]
    assert (lru.below_misses == 0).all() and (lru.above_misses > 0).all()
    total = df[["below_hits", "below_misses", "above_hits", "above_misses", "first"]].sum(axis=1)
    assert (total == 1022509).all()
    # FIFO can evict a block re-used within C: a miss LRU cannot have.
    assert df[df.policy == "fifo"].below_misses.sum() > 0


def test_clients_by_pid_with_a_different_cache_for_one(tmp_path):
    # Two processes read the same 3 blocks twice; pid 2's first level holds only 1 block.
    rows = [("R", "f", b * 4096, 4096, pid) for _ in range(2) for pid in (1, 2) for b in range(3)]
    t = write_csv(tmp_path / "t.csv", rows, header="op,file,offset,size,pid")
    fl = bufsim.FirstLevel("lru", "4blocks", client="pid", clients={2: ("lru", "1blocks")})
    df = bufsim.filter_trace(t, tmp_path / "l2.csv", fl)
    assert df.to_dict("records") == [
        {"client": 1, "cache_blocks": 4, "accesses": 6, "hits": 3, "misses": 3, "write_backs": 0},
        {"client": 2, "cache_blocks": 1, "accesses": 6, "hits": 0, "misses": 6, "write_backs": 0},
    ]
    assert df.attrs["requests_written"] == 9


def test_write_back_first_level_sends_dirty_victims(tmp_path):
    rows = [("W", "f", 0, 4096), ("R", "f", 4096, 4096), ("R", "f", 8192, 4096)]
    t = write_csv(tmp_path / "t.csv", rows)
    p = bufsim_cli(
        "filter-trace",
        t,
        "--first-level",
        "lru",
        "--first-level-cache",
        "2blocks",
        "--first-level-write-back",
        "-o",
        tmp_path / "l2.csv",
    )
    assert p.returncode == 0, p.stderr
    lines = (tmp_path / "l2.csv").read_text().splitlines()[1:]
    assert [(l.split(",")[0], int(l.split(",")[2]) // 4096) for l in lines] == [("R", 1), ("W", 0), ("R", 2)]


def test_a_first_level_of_size_0_passes_everything_as_its_help_says(tmp_path):
    rows = [("R", "f", b * 4096, 4096) for _ in range(2) for b in range(3)]
    t = write_csv(tmp_path / "t.csv", rows)
    runs = []
    for size in ("0", "0blocks", "0B"):
        p = bufsim_cli("run", t, "--first-level", "lru", "--first-level-cache", size, "-c", "8blocks", "--json")
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout))
    assert runs[0] == runs[1] == runs[2] and (runs[0]["hits"], runs[0]["misses"]) == (3, 3)
    # Only 0 goes without a unit: any other bare number is still ambiguous.
    p = bufsim_cli("run", t, "--first-level", "lru", "--first-level-cache", "16")
    assert p.returncode == 2 and "write 16blocks" in p.stderr, p.stderr


def test_a_sweep_over_a_second_level_from_a_toml_file(tmp_path, cloudphysics):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(
        f'traces = ["{cloudphysics}"]\npolicies = ["lru", "fifo"]\ncaches = ["64MiB"]\n'
        '[first_level]\npolicy = "lru"\ncache = "16MiB"\nclient = "all"\n'
    )
    spec = SweepSpec.from_toml(str(cfg))
    df = run_sweep(spec, str(tmp_path / "r.duckdb"), progress=False)
    want = bufsim.sweep(cloudphysics, ["lru", "fifo"], ["64MiB"], first_level=L1)
    assert list(df.misses) == list(want.misses)
    assert df.first_level.str.contains('"lru","4096blocks"').all()
    plain = next(SweepSpec([str(cloudphysics)], ["lru"], ["64MiB"]).runs())
    # The hierarchy is part of a run's identity; a plain run keeps the key it had before
    # hierarchies existed (its configuration without the field).
    assert next(spec.runs()).key != plain.key
    before = (
        "trace_hash",
        "format",
        "policy",
        "prefetch",
        "cache_blocks",
        "block_size",
        "reads_only",
        "cluster",
        "seed",
    )
    old = {k: v for k, v in asdict(plain).items() if k in before}
    old["bufsim_version"] = bufsim.__version__
    assert plain.key == hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--first-level", "lur"], "first-level policy: unknown policy `lur`"),
        (["--first-level", "opt"], "opt cannot be a first-level policy"),
        (["--first-level", "lru", "--first-level-cache", "lots"], "first-level cache size"),
        (["--first-level", "lru", "--first-level-clients", "x=lru"], "ID=SPEC@SIZE"),
        (["--first-level-write-back"], "give --first-level SPEC too"),
    ],
)
def test_bad_first_levels_give_one_line_errors(tmp_path, args, fragment):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    p = bufsim_cli("run", t, *args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert fragment in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize(
    "table,fragment",
    [
        # A string is truthy: taken as a flag, "false" would have turned write-back on.
        ({"write_back": "false"}, "first_level.write_back must be true or false"),
        ({"cache": True}, "first_level.cache must be a size"),
        ({"policy": 3}, "first_level.policy must be a policy spec"),
        ({"clients": {"2": "lru"}}, 'first_level.clients.2 must be ["SPEC", "SIZE"]'),
        ({"clients": {"x": ["lru", "1blocks"]}}, "client ids are integers"),
        ({"clients": [1]}, "first_level.clients must be a table"),
    ],
)
def test_a_first_level_table_of_the_wrong_types_names_the_key(table, fragment):
    with pytest.raises(bufsim.SpecError) as e:
        bufsim.FirstLevel.from_mapping({"policy": "lru", "cache": "2blocks", **table})
    assert fragment in str(e.value)


def test_a_first_level_write_back_given_as_a_string_in_toml_is_refused(tmp_path):
    cfg = tmp_path / "exp.toml"
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    cfg.write_text(
        f'traces = ["{t}"]\npolicies = ["lru"]\ncaches = ["4blocks"]\n'
        '[first_level]\npolicy = "lru"\ncache = "2blocks"\nwrite_back = "false"\n'
    )
    p = bufsim_cli("sweep", "--config", cfg, "--out", tmp_path / "r.duckdb")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "must be true or false" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_first_level_write_back_given_as_true_in_toml_is_honoured():
    on = bufsim.FirstLevel.from_mapping({"policy": "lru", "cache": "2blocks", "write_back": True})
    off = bufsim.FirstLevel.from_mapping({"policy": "lru", "cache": "2blocks", "write_back": False})
    assert on.to_mapping()["write_back"] is True and off.to_mapping()["write_back"] is False
