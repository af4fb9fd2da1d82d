"""Bad input to sweeps, results databases, plots and reports gets one line and exit status 2,
and leaves every file it was given as it was: no traceback, no hang, no replaced device, no
database changed by a command that only reads it, no results silently lost."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys

import duckdb
import pytest

from conftest import bufsim_cli
from bufsim.sweeps import cache_range

TRACE = "op,file,offset,size\nR,a,0,4096\nR,a,0,4096\nR,b,0,4096\n"


def cli(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bufsim", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def one_line(p: subprocess.CompletedProcess, *fragments: str) -> str:
    """The single error line of a refused command, which must hold every fragment."""
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bufsim: error: "), p.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    path.write_text(TRACE)
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory, trace):
    path = tmp_path_factory.mktemp("db") / "r.duckdb"
    p = bufsim_cli("sweep", trace, "-c", "10blocks", "-c", "20blocks", "-o", path, "--quiet")
    assert p.returncode == 0, p.stderr
    return path


def foreign_db(path):
    with duckdb.connect(str(path)) as con:
        con.execute("create table runs (key varchar, policy varchar, misses int)")
        con.execute("insert into runs values ('a', 'lru', 5)")
    return path


def columns(path) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        return len(con.execute("describe runs").fetchall())


# --- export never replaces what is not a regular file --------------------------------------------


def test_export_writes_into_a_device_and_leaves_it_one(db, tmp_path):
    node = tmp_path / "null.csv"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    p = cli("results", "export", db, "-o", node)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode), "the device was replaced by a regular file"
    assert [f.name for f in tmp_path.iterdir()] == ["null.csv"]


def test_export_writes_into_a_fifo_and_leaves_it_one(db, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        p = cli("results", "export", db, "-o", fifo, timeout=30)
        got = reader.communicate(timeout=30)[0].decode()
    finally:
        reader.kill()
    assert p.returncode == 0, p.stderr
    assert got.startswith("key,") and len(got.splitlines()) == 3, got
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"


def test_export_through_a_symlink_writes_its_target(db, tmp_path):
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    p = cli("results", "export", db, "-o", link)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("key,")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["link.csv", "real.csv"]


def test_export_to_a_directory_or_a_missing_one_says_so(db, tmp_path):
    d = tmp_path / "d.csv"
    d.mkdir()
    line = one_line(cli("results", "export", db, "-o", d), f"{d}: is a directory; give a file name for -o")
    assert "partial" not in line and "Errno" not in line
    missing = tmp_path / "nodir" / "x.csv"
    line = one_line(cli("results", "export", db, "-o", missing), f"{missing.parent}: no such directory for -o")
    assert "partial" not in line and "results database" not in line
    assert sorted(f.name for f in tmp_path.iterdir()) == ["d.csv"] and not any(d.iterdir())


# --- a sweep refuses an output that is not a results database ------------------------------------


@pytest.mark.parametrize("name", ["old.csv", "runs.parquet", "notes.duckdb"])
def test_sweep_into_an_existing_file_that_is_not_a_database_is_refused(trace, tmp_path, name):
    out = tmp_path / name
    out.write_bytes(b"a,b\n1,2\n")
    one_line(cli("sweep", trace, "-c", "10blocks", "-o", out, "-q"), f"{out}: not a results database")
    assert out.read_bytes() == b"a,b\n1,2\n"


def test_sweep_into_a_directory_or_a_missing_one_says_so(trace, tmp_path):
    one_line(cli("sweep", trace, "-c", "10blocks", "-o", tmp_path), "is a directory; give a file name for -o")
    one_line(cli("sweep", trace, "-c", "10blocks", "-o", tmp_path / "no" / "r.duckdb"), "no such directory for -o")
    assert not (tmp_path / "no").exists()


# --- reading a database never changes it ------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["results", "show", "{db}"],
        ["results", "export", "{db}", "-o", "{tmp}/x.csv"],
        ["report", "{db}", "-o", "{tmp}/r.html"],
        ["plot", "hit-ratio", "{db}", "-o", "{tmp}/p.png"],
    ],
)
def test_a_foreign_runs_table_is_refused_and_left_alone(tmp_path, argv):
    db = foreign_db(tmp_path / "f.duckdb")
    before = db.read_bytes()
    line = one_line(
        cli(*(a.format(db=db, tmp=tmp_path) for a in argv)), f"{db}: its `runs` table is not bufsim's", "trace"
    )
    assert "(-o)" not in line
    assert db.read_bytes() == before and columns(db) == 3
    assert sorted(f.name for f in tmp_path.iterdir()) == ["f.duckdb"]


def test_a_sweep_does_not_alter_a_foreign_runs_table(trace, tmp_path):
    db = foreign_db(tmp_path / "f.duckdb")
    one_line(cli("sweep", trace, "-c", "10blocks", "-o", db, "-q"), "its `runs` table is not bufsim's")
    assert columns(db) == 3


def test_show_leaves_an_older_database_as_it_was(db, tmp_path):
    # Written before timed mode: no timing columns, which a store (not a reader) adds.
    old = tmp_path / "old.duckdb"
    old.write_bytes(db.read_bytes())
    with duckdb.connect(str(old)) as con:
        con.execute("alter table runs drop column exec_time_s")
    n, before = columns(old), old.read_bytes()
    p = cli("results", "show", old)
    assert p.returncode == 0 and "miss_ratio" in p.stdout, p.stderr
    assert cli("results", "export", old, "-o", tmp_path / "x.csv").returncode == 0
    assert columns(old) == n and old.read_bytes() == before


def test_a_database_another_process_writes_to_is_named_as_in_use(trace, tmp_path):
    """A second sweep into a database a running sweep holds (DuckDB's file lock) gets one line."""
    db = tmp_path / "r.duckdb"
    assert cli("sweep", trace, "-c", "10blocks", "-o", db, "-q").returncode == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print(1, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "1"
        line = one_line(cli("sweep", trace, "-c", "20blocks", "-o", db, "-q"), f"{db}: the results database is locked")
        assert "another bufsim (or program) has it open" in line
        one_line(cli("results", "export", db, "-o", tmp_path / "e.csv"), "is locked")
    finally:
        holder.communicate("")
    assert cli("sweep", trace, "-c", "20blocks", "-o", db, "-q").returncode == 0


def test_a_corrupt_database_is_called_corrupt(db, tmp_path):
    bad = tmp_path / "c.duckdb"
    data = bytearray(db.read_bytes())
    for i in range(4096, len(data), 997):
        data[i] ^= 0x5A
    bad.write_bytes(bytes(data))
    for argv in (["results", "show", bad], ["report", bad, "-o", tmp_path / "r.html"]):
        line = one_line(cli(*argv), f"{bad}: the results database is corrupt", "run the sweep again into a new file")
        assert "another bufsim" not in line and "(-o)" not in line
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(db.read_bytes()[:300_000])
    one_line(cli("results", "show", cut), "is corrupt (cut short)")


def test_reading_a_directory_or_a_fifo_as_a_database_says_so(tmp_path):
    line = one_line(cli("results", "show", tmp_path), f"{tmp_path}: is a directory")
    assert "Errno" not in line
    fifo = tmp_path / "r.duckdb"
    os.mkfifo(fifo)
    one_line(cli("results", "show", fifo, timeout=30), "not a regular file")


# --- cache ranges are counted, not stepped through ----------------------------------------------


@pytest.mark.parametrize(
    "cache,says",
    [
        ("1blocks:2000000000blocks:x1.0000000001", "gives 2,000,000,000 sizes"),
        ("1blocks:2000000000blocks:+1blocks", "gives 2,000,000,000 sizes"),
        ("1blocks:3000000blocks:x1.0000001", "gives 3,000,000 sizes"),
        ("1blocks:100blocks:xinf", "the factor must be a finite number above 1"),
        ("1blocks:100blocks:xnan", "the factor must be a finite number above 1"),
    ],
)
def test_a_huge_or_impossible_cache_range_is_refused_at_once(trace, tmp_path, cache, says):
    out = tmp_path / "s.duckdb"
    one_line(cli("sweep", trace, "-c", cache, "-o", out, timeout=30), f"cache range `{cache}`", says)
    assert not out.exists()


def test_a_factor_barely_above_one_lists_each_size_once(trace, tmp_path):
    # Billions of steps of x1.0000000001 from 1 to 2 blocks: two sizes, listed at once.
    p = cli("sweep", trace, "-c", "1blocks:2blocks:x1.0000000001", "-o", tmp_path / "s.duckdb", "-q", "--json")
    assert p.returncode == 0, p.stderr
    assert [json.loads(line)["cache_blocks"] for line in p.stdout.splitlines()] == [1, 2]
    assert cache_range("1blocks:5blocks:x1.000001") == [f"{b}blocks" for b in range(1, 6)]
    assert cache_range("1024blocks:8192blocks:x2") == ["1024blocks", "2048blocks", "4096blocks", "8192blocks"]


# --- files that are not UTF-8, numbers that are not numbers --------------------------------------


def test_files_that_are_not_utf8_are_named(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_bytes(b"\xff\xfe\n")
    one_line(cli("sweep", "--config", toml, "-o", tmp_path / "s.duckdb"), f"{toml}: not valid TOML (not UTF-8 text")
    for name in ("b.json", "b.csv"):
        path = tmp_path / name
        path.write_bytes(b"\xff\xfe")
        one_line(cli("plot", "mrc", path, "-o", tmp_path / "p.png"), f"{path}: ", "not UTF-8 text")
        one_line(cli("report", path, "-o", tmp_path / "r.html"), f"{path}: ", "not UTF-8 text")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["b.csv", "b.json", "c.toml"]


@pytest.mark.parametrize(
    "rows,says",
    [
        ("policy,cache_blocks,hit_ratio\nlru,abc,0.5\n", ":2: cache_blocks must be a number, not 'abc'"),
        ("policy,cache_blocks,hits,misses\nlru,,5,5\n", ":2: cache_blocks is empty"),
        ("policy,cache_blocks,hit_ratio\nlru,10,0.5\nlru,20,2.5\n", ":3: hit_ratio must be a fraction from 0 to 1"),
        ("policy,cache_blocks,hit_ratio\nlru,10,-1\n", ":2: hit_ratio must be 0 or more"),
        ("policy,cache_blocks,hits,misses\nlru,10,-5,3\n", ":2: hits must be 0 or more, not -5"),
        ("policy,cache_blocks,hits,misses\nlru,10.5,5,3\n", ":2: cache_blocks must be a whole number"),
    ],
)
def test_bad_numbers_in_a_csv_are_refused_with_file_row_and_column(tmp_path, rows, says):
    src = tmp_path / "runs.csv"
    src.write_text(rows)
    one_line(cli("plot", "hit-ratio", src, "-o", tmp_path / "p.png"), f"{src}{says}")
    one_line(cli("report", src, "-o", tmp_path / "r.html"), f"{src}{says}")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["runs.csv"]


_RUN = {"trace": "t", "policy": "lru", "prefetch": "off", "cache_blocks": 64, "hits": 1, "misses": 1}


@pytest.mark.parametrize(
    "kind,row,says",
    [
        ("hit-ratio", {"config": "{bad"}, ":1: config must be a JSON object, not '{bad'"),
        ("hit-ratio", {"config": [1]}, ":1: config must be a JSON object"),
        ("hit-ratio", {"policy": [1]}, ":1: policy must be text, not [1]"),
        ("seq-cdf", {"request_sizes": "notjson"}, ":1: request_sizes must be a JSON object of whole numbers"),
        ("seq-cdf", {"request_sizes": [1, 2]}, ":1: request_sizes must be a JSON object of whole numbers"),
        ("seq-cdf", {"request_sizes": {"a": "b"}}, ":1: request_sizes must be a JSON object of whole numbers"),
        ("partitions", {"partition_timeline": {}}, ":1: partition_timeline must be a JSON object"),
        ("partitions", {"partition_timeline": {"samples": 5}}, ":1: partition_timeline must be a JSON object"),
        ("partitions", {"partition_timeline": "xx"}, ":1: partition_timeline must be a JSON object"),
    ],
)
def test_wrong_json_cells_of_a_runs_file_are_refused_with_file_and_row(tmp_path, kind, row, says):
    src = tmp_path / "runs.jsonl"
    src.write_text(json.dumps({**_RUN, **row}) + "\n")
    one_line(cli("plot", kind, src, "-o", tmp_path / "p.png"), f"{src}{says}")
    one_line(cli("report", src, "-o", tmp_path / "r.html"), f"{src}{says}")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["runs.jsonl"]


@pytest.mark.parametrize("text", ["[1, 2, 3]\n", '{"a": 1}\n', "[[1, 2], [3, 4]]\n", "5\n", "null\n"])
def test_json_that_is_not_runs_is_refused(tmp_path, text):
    src = tmp_path / "runs.json"
    src.write_text(text)
    one_line(cli("plot", "hit-ratio", src, "-o", tmp_path / "p.png"), str(src))
    one_line(cli("report", src, "-o", tmp_path / "r.html"), str(src))


def test_an_exported_database_still_plots_and_reports(db, tmp_path):
    out = tmp_path / "runs.csv"
    assert cli("results", "export", db, "-o", out).returncode == 0
    p = cli("report", out, "-o", tmp_path / "r.html")
    assert p.returncode == 0 and "(2 runs)" in p.stdout, p.stderr


# --- sweep output: the skipped-records warning, strict JSON ---------------------------------------


def test_sweep_skip_bad_warns_as_run_does(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("op,file,offset,size\nR,a,0,4096\nX,a,0,1\nR,a,0,4096\n")
    run = cli("run", trace, "--skip-bad", "-c", "10blocks")
    sweep = cli("sweep", trace, "--skip-bad", "-c", "10blocks", "-c", "20blocks", "-o", tmp_path / "s.duckdb", "-q")
    assert run.returncode == 0 and sweep.returncode == 0, sweep.stderr
    warning = [line for line in run.stderr.splitlines() if "skipped 1 malformed record" in line]
    assert warning and warning[0].startswith("bufsim: warning: ")
    assert [line for line in sweep.stderr.splitlines() if line.startswith("bufsim: warning")] == warning


def test_sweep_json_is_strict_json_and_leaves_out_what_run_leaves_out(trace, tmp_path):
    p = cli("sweep", trace, "-c", "10blocks", "-o", tmp_path / "s.duckdb", "-q", "--json")
    assert p.returncode == 0, p.stderr

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    row = json.loads(p.stdout.splitlines()[0], parse_constant=refuse)
    run = json.loads(cli("run", trace, "-c", "10blocks", "--json").stdout)
    for k, v in run.items():
        assert row[k] == v, k
    assert "exec_time_s" not in row and "exec_time_s" not in run
    assert row["key"] and row["trace_hash"] and row["seconds"] >= 0


# --- raw errno and late checks ---------------------------------------------------------------


def test_output_paths_are_checked_before_any_work(db, tmp_path):
    one_line(cli("report", db, "-o", tmp_path), f"{tmp_path}: is a directory; give a file name for -o")
    one_line(cli("sweep", "--config", tmp_path, "-o", tmp_path / "s.duckdb"), f"{tmp_path}: is a directory")
    # A trace heatmap cannot read: a check made after the runs would blame the trace instead.
    bad = tmp_path / "bad.csv"
    bad.write_text("op,file,offset,size\nX,a,0,1\n")
    one_line(
        cli("heatmap", bad, "-c", "10blocks", "-o", tmp_path / "h.png", "--csv", tmp_path / "no" / "x.csv"),
        f"{tmp_path / 'no'}: no such directory for --csv",
    )
    one_line(cli("heatmap", bad, "-c", "10blocks", "-o", tmp_path / "h.txt"), "unknown figure format `.txt`")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.csv"]


# --- Dask addresses ------------------------------------------------------------------------------


def test_an_impossible_or_refused_dask_address_fails_at_once(trace, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    # Dask's client waits 30 s before it gives up; the refusal is known at once.
    one_line(
        cli("sweep", trace, "-o", tmp_path / "d.duckdb", "--dask", f"tcp://127.0.0.1:{port}", timeout=25),
        "connection refused",
    )
    one_line(
        cli("sweep", trace, "-o", tmp_path / "d.duckdb", "--dask", "tcp://127.0.0.1:99999", timeout=25),
        "port 99999 is out of range",
    )
    assert not (tmp_path / "d.duckdb").exists()
