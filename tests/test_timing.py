"""Timed mode through Python and the command line: results, the table, `bufsim devices`,
sweeps over devices (keys of count-mode runs unchanged), and one-line errors."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import pytest

import bufsim
from bufsim import _core
from bufsim.api import TIMING_FIELDS
from bufsim.sweeps import RunSpec, SweepSpec, run_sweep
from conftest import bufsim_cli, write_csv

TIMED = {
    "exec_time_s",
    "io_time_s",
    "stall_time_s",
    "service_p50_ms",
    "service_p90_ms",
    "service_p99_ms",
    "sync_requests",
    "sync_time_ms",
    "async_requests",
    "async_time_ms",
    "devices",
}


def dulo_trace(path):
    """DULO §2.1, Table 1: A, B, C, D (one block each), files X and Y of four blocks."""
    rows = [("R", f, 0, 4096) for f in "ABCD"]
    rows += [("R", "X", i * 4096, 4096) for i in range(4)]
    rows += [("R", "Y", i * 4096, 4096) for i in range(4)]
    rows += [("R", "X", i * 4096, 4096) for i in range(4)]
    rows += [("R", f, 0, 4096) for f in "ABCD"]
    return write_csv(path, rows)


def test_dulo_table_1_through_python(tmp_path):
    t = dulo_trace(tmp_path / "dulo.csv")
    r = bufsim.simulate(t, "lru", 8, prefetch="linux", device="avg(seek=6.5ms,rotation=3.0ms)", think=0)
    assert r.timed and r.misses == 10 and r.disk_requests == 10
    assert r.exec_time_s == pytest.approx(0.095, abs=1e-12)
    assert r.service_p50_ms == 9.5 and r.device.startswith("avg")


def test_timed_results_on_the_real_trace(cloudphysics):
    count = bufsim.simulate(cloudphysics, "lru", "64MiB")
    timed = bufsim.simulate(cloudphysics, "lru", "64MiB", timing=True)
    assert not count.timed and count.exec_time_s is None
    assert timed.device == "st39102lw" and timed.io_scheduler == "noop" and timed.think == "trace"
    # No read-ahead and one stream: the same hits and misses as count mode.
    assert (timed.hits, timed.misses, timed.disk_requests) == (count.hits, count.misses, count.disk_requests)
    assert timed.exec_time_s >= timed.think_time_s > 0
    assert timed.exec_time_s == pytest.approx(timed.think_time_s + timed.stall_time_s + timed.flush_time_s, rel=1e-9)
    assert 0 < timed.io_time_s <= timed.end_time_s
    assert timed.service_p50_ms <= timed.service_p90_ms <= timed.service_p99_ms
    assert timed.sync_requests == timed.disk_requests and timed.async_requests == 0
    [dev] = timed.devices
    assert dev["device"] == 0 and dev["requests"] == timed.sync_requests + timed.write_requests + timed.flush_requests
    assert 0 < dev["utilization"] <= 1


def test_sweep_function_and_same_seed_same_times(cloudphysics):
    df = bufsim.sweep(
        cloudphysics,
        ["lru"],
        ["4MiB", "64MiB"],
        prefetches=["linux"],
        device="ibm-9lzx(age=2)",
        io_scheduler="deadline",
        think="0.1ms",
        jobs=2,
    )
    assert list(df["device"]) == ["ibm-9lzx(age=2)"] * 2
    assert (df["exec_time_s"] > 0).all()
    again = bufsim.sweep(
        cloudphysics,
        ["lru"],
        ["4MiB", "64MiB"],
        prefetches=["linux"],
        device="ibm-9lzx(age=2)",
        io_scheduler="deadline",
        think="0.1ms",
        jobs=1,
    )
    assert df.drop(columns=["devices"]).equals(again.drop(columns=["devices"]))


def test_cli_timing_table_and_json(cloudphysics):
    p = bufsim_cli("run", cloudphysics, "--timing", "-c", "16MiB", "--prefetch", "linux", "--io-scheduler", "cscan")
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[0]
    for col in ["exec s", "io s", "stall s", "sync ms", "async ms", "p99 ms", "util"]:
        assert col in header
    p = bufsim_cli("run", cloudphysics, "--device", "ssd", "-c", "16MiB", "--json", "--think", "50us")
    row = json.loads(p.stdout)
    assert TIMED <= row.keys() and row["device"] == "ssd" and row["think"] == "50us"
    # Count mode keeps its JSON: no timing keys.
    row = json.loads(bufsim_cli("run", cloudphysics, "-c", "16MiB", "--json").stdout)
    assert not set(TIMING_FIELDS) & row.keys()


def test_devices_command_lists_models_presets_and_schedulers():
    p = bufsim_cli("devices")
    assert p.returncode == 0
    for name in ["avg", "disk", "ssd", "st39102lw", "ultrastar-18zx", "ibm-9lzx", "noop", "sstf", "cscan", "deadline"]:
        assert f"  {name}" in p.stdout, name
    assert "seek-avg=5.47ms" in p.stdout and "read-expire=500ms" in p.stdout
    rows = [json.loads(l) for l in bufsim_cli("devices", "--json").stdout.splitlines()]
    assert {r["kind"] for r in rows} == {"device", "preset", "scheduler"}
    assert rows == json.loads(json.dumps(bufsim.devices()))


def check_error(p, *fragments):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == ""
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err


def test_bad_timing_options_give_one_line_errors(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(bufsim_cli("run", t, "--device", "floppy"), "unknown device `floppy`", "bufsim devices")
    check_error(bufsim_cli("run", t, "--timing", "--io-scheduler", "elevator"), "unknown scheduler `elevator`")
    check_error(bufsim_cli("run", t, "--think", "5"), "think time `5`", "unit")
    check_error(bufsim_cli("run", t, "--think", "3parsecs"), "think time", "ms")
    check_error(bufsim_cli("run", t, "--device", "disk(seek-avg=-1ms)"), "seek-avg")
    check_error(bufsim_cli("run", t, "--file-gap", "lots"), "file gap")
    check_error(bufsim_cli("sweep", t, "--device", "dsik", "--out", tmp_path / "x.duckdb", "-q"), "unknown device")
    with pytest.raises(bufsim.SpecError, match="timing=False"):
        bufsim.simulate(t, device="avg", timing=False)
    with pytest.raises(bufsim.SpecError, match="think"):
        bufsim.simulate(t, think=-1.0)


def test_hit_rule_decides_whether_a_requests_own_read_ahead_hits(tmp_path):
    # Two 4-block reads of a cold file: each request reads its blocks in its own synchronous
    # read-ahead and waits for it. §5.1's rule (the default) counts all 8 as misses, own-reads
    # counts the 6 blocks read with a first one as prefetch hits; the disk sees the same.
    t = write_csv(tmp_path / "two.csv", [("R", "f", 0, 16384), ("R", "f", 65536, 16384)])
    run = dict(prefetch="linux", device="st39102lw")
    completed = bufsim.simulate(t, "lru", 100, **run)
    own = bufsim.simulate(t, "lru", 100, hit_rule="own-reads", **run)
    assert (completed.hit_rule, completed.hits, completed.misses) == ("completed", 0, 8)
    assert (own.hit_rule, own.hits, own.prefetch_hits) == ("own-reads", 6, 6)
    assert (completed.sync_requests, completed.exec_time_s) == (own.sync_requests, own.exec_time_s)
    # AccuSim's read-ahead demands a request's own blocks instead of reading them ahead: misses
    # under either rule and in count mode.
    for rule in ("completed", "own-reads"):
        r = bufsim.simulate(t, "lru", 100, prefetch="linux-accusim", device="st39102lw", hit_rule=rule)
        assert (r.hits, r.misses) == (0, 8), rule
    assert bufsim.simulate(t, "lru", 100, prefetch="linux-accusim").hits == 0
    # The rule alone turns timed mode on; count mode has no rule (every read completes at once).
    assert bufsim.simulate(t, "lru", 100, prefetch="linux", hit_rule="own-reads").timed
    assert bufsim.simulate(t, "lru", 100, prefetch="linux", hit_rule="Completed").hit_rule == "completed"
    count = bufsim.simulate(t, "lru", 100, prefetch="linux")
    # Count mode has no time: every block read ahead is a hit at its first demand (7 of the 8).
    assert count.hit_rule is None and count.hits == 7
    p = bufsim_cli("run", t, "-p", "lru", "-c", "100blocks", "--prefetch", "linux", "--hit-rule", "own-reads", "--json")
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)
    row = row[0] if isinstance(row, list) else row
    assert (row["hit_rule"], row["hits"]) == ("own-reads", 6)
    check_error(bufsim_cli("run", t, "--hit-rule", "sometimes"), "hit rule `sometimes` is not known", "own-reads")
    with pytest.raises(bufsim.SpecError, match="hit rule"):
        bufsim.simulate(t, hit_rule="never")


def test_count_mode_sweep_keys_are_unchanged():
    spec = RunSpec("t.csv", "abc", "csv", "lru", "none", 1024, 4096, False, "64KiB", 42)
    # The key as versions before timed mode computed it, from their ten fields.
    old = {
        k: v
        for k, v in asdict(spec).items()
        if k
        in ("trace_hash", "format", "policy", "prefetch", "cache_blocks", "block_size", "reads_only", "cluster", "seed")
    }
    old["bufsim_version"] = _core.__version__
    text = json.dumps(old, sort_keys=True, separators=(",", ":"))
    assert spec.key == hashlib.sha256(text.encode()).hexdigest()[:32]
    timed = RunSpec(
        "t.csv",
        "abc",
        "csv",
        "lru",
        "none",
        1024,
        4096,
        False,
        "64KiB",
        42,
        timing=True,
        device="avg",
        io_scheduler="noop",
        think="trace",
    )
    assert (
        len(
            {
                spec.key,
                timed.key,
                RunSpec(**{**asdict(timed), "device": "ssd"}).key,
                RunSpec(**{**asdict(spec), "file_gap": "1blocks"}).key,
            }
        )
        == 4
    )


def test_sweep_over_devices_into_the_database(cloudphysics, tmp_path):
    out = str(tmp_path / "r.duckdb")
    spec = SweepSpec(
        traces=[str(cloudphysics)],
        policies=["lru"],
        caches=["16MiB"],
        devices=["avg", "ssd"],
        io_schedulers=["noop", "sstf"],
    )
    df = run_sweep(spec, out, jobs=2, progress=False)
    assert len(df) == 4 and set(df["device"]) == {"avg", "ssd"} and set(df["io_scheduler"]) == {"noop", "sstf"}
    assert df["exec_time_s"].notna().all()
    # A count-mode run into the same database leaves the timing columns empty.
    df2 = run_sweep(SweepSpec(traces=[str(cloudphysics)], policies=["lru"], caches=["16MiB"]), out, progress=False)
    assert df2["exec_time_s"].isna().all() and not df2["timing"].any()
    # The CLI shows both kinds, and --resume finds every timed run done.
    p = bufsim_cli(
        "sweep",
        cloudphysics,
        "-p",
        "lru",
        "-c",
        "16MiB",
        "--device",
        "avg",
        "--device",
        "ssd",
        "--io-scheduler",
        "noop",
        "--io-scheduler",
        "sstf",
        "--out",
        out,
        "--resume",
        "-q",
    )
    assert p.returncode == 0, p.stderr
    assert "exec s" in p.stdout and "4 runs" in p.stdout


def test_a_database_from_before_timed_mode_gains_its_columns(tmp_path):
    import duckdb

    from bufsim.sweeps import CONFIG_COLUMNS, STAT_COLUMNS, ResultsStore

    # As versions before timed mode (and before rows by path) wrote it: `key` the primary key.
    old_types = {"key": "VARCHAR PRIMARY KEY", "trace": "VARCHAR"}
    old_cols = [
        (n, old_types.get(n, t))
        for n, t in CONFIG_COLUMNS
        if n not in ("timing", "device", "io_scheduler", "think", "single_stream", "file_gap")
    ]
    old_cols += STAT_COLUMNS + [("config", "JSON"), ("seconds", "DOUBLE"), ("finished_at", "TIMESTAMP")]
    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    con.execute(f"CREATE TABLE runs ({', '.join(f'{n} {t}' for n, t in old_cols)})")
    con.execute("INSERT INTO runs (key, policy) VALUES ('k1', 'lru')")
    con.close()
    store = ResultsStore(db)
    try:
        df = store.frame()
        assert list(df["key"]) == ["k1"] and "exec_time_s" in df and df["exec_time_s"].isna().all()
    finally:
        store.close()


def test_file_gap_moves_files_apart_on_the_disk(tmp_path):
    # Two one-block files: adjacent, the second read continues the first (transfer only); 1 MiB
    # apart it pays a seek and a rotation.
    t = write_csv(tmp_path / "two.csv", [("R", "a", 0, 4096), ("R", "b", 0, 4096)])
    near = bufsim.simulate(t, "lru", 8, think=0)
    far = bufsim.simulate(t, "lru", 8, think=0, file_gap="1MiB")
    assert far.exec_time_s > near.exec_time_s + 0.0005
    assert bufsim.simulate(t, "lru", 8, think=0, file_gap=256).exec_time_s == far.exec_time_s
