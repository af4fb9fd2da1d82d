"""`bufsim results export` writes CSV, JSON lines or Parquet by extension; `results show` selects
columns and filters rows."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest

from conftest import ROOT, bufsim_cli


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "r.duckdb"
    p = bufsim_cli(
        "sweep",
        ROOT / "traces" / "grep.csv.gz",
        "-p",
        "lru",
        "-p",
        "fifo",
        "-c",
        "64blocks",
        "-c",
        "256blocks",
        "-o",
        path,
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    return path


def test_export_by_extension(db, tmp_path):
    with duckdb.connect(str(db), read_only=True) as con:
        want = sorted(con.execute("select policy, cache_blocks, misses from runs").fetchall())
    out = tmp_path / "runs.csv"
    assert bufsim_cli("results", "export", db, "-o", out).returncode == 0
    got = sorted((r["policy"], int(r["cache_blocks"]), int(r["misses"])) for r in csv.DictReader(open(out)))
    assert got == want
    out = tmp_path / "runs.jsonl"
    assert bufsim_cli("results", "export", db, "-o", out).returncode == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["policy"], r["cache_blocks"], r["misses"]) for r in rows) == want
    out = tmp_path / "runs.parquet"
    assert bufsim_cli("results", "export", db, "-o", out).returncode == 0
    assert sorted(duckdb.connect().execute(f"select policy, cache_blocks, misses from '{out}'").fetchall()) == want


def test_export_refuses_an_unknown_extension(db, tmp_path):
    p = bufsim_cli("results", "export", db, "-o", tmp_path / "runs.xlsx")
    assert p.returncode == 2 and "name the file .csv, .jsonl or .parquet" in p.stderr
    assert not (tmp_path / "runs.xlsx").exists()


def test_show_selects_and_filters(db):
    p = bufsim_cli("results", "show", db, "--where", "policy=fifo", "--columns", "policy,cache_blocks,misses")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    assert lines[0].split() == ["policy", "cache_blocks", "misses"]
    assert [line.split()[0] for line in lines[1:] if line.strip()] == ["fifo", "fifo"]
    p = bufsim_cli("results", "show", db, "--columns", "nope")
    assert p.returncode == 2 and "no column nope" in p.stderr


def test_export_takes_the_where_and_columns_of_show(db, tmp_path):
    # Export once ignored both and wrote every run and column, exit status 0.
    with duckdb.connect(str(db), read_only=True) as con:
        want = sorted(con.execute("select policy, cache_blocks, misses from runs where policy = 'fifo'").fetchall())
    out = tmp_path / "fifo.csv"
    p = bufsim_cli(
        "results", "export", db, "-o", out, "--where", "policy=FIFO", "--columns", "policy,cache_blocks,misses"
    )
    assert p.returncode == 0 and p.stdout.strip() == f"2 runs written to {out}", p.stderr
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["policy", "cache_blocks", "misses"]
    assert sorted((r[0], int(r[1]), int(r[2])) for r in rows[1:]) == want
    out = tmp_path / "fifo.parquet"
    assert bufsim_cli("results", "export", db, "-o", out, "--where", "cache_blocks=64").returncode == 0
    got = duckdb.connect().execute(f"select policy, cache_blocks, misses, seed from '{out}'").fetchall()
    assert sorted(r[:2] for r in got) == [("fifo", 64), ("lru", 64)] and all(r[3] == 42 for r in got)
    # What show refuses, export refuses, before writing anything.
    for args, says in ((["--columns", "nope"], "no column nope"), (["--where", "policy==lru"], "write one `=`")):
        p = bufsim_cli("results", "export", db, "-o", tmp_path / "bad.csv", *args)
        assert p.returncode == 2 and says in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "bad.csv").exists()


def test_show_refuses_out_and_names_export(db, tmp_path):
    # Show once dropped --out silently and wrote no file.
    p = bufsim_cli("results", "show", db, "--out", tmp_path / "x.csv")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "show prints to the terminal" in p.stderr and f"bufsim results export {db} -o" in p.stderr
    assert not (tmp_path / "x.csv").exists()


def test_exported_runs_make_the_same_report(db, tmp_path):
    # A CSV or JSON export carries `finished_at` as text; the report once stopped on it with a
    # traceback.
    pages = {}
    for ext in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"runs.{ext}"
        assert bufsim_cli("results", "export", db, "-o", out).returncode == 0
        p = bufsim_cli("report", out, "-o", tmp_path / f"{ext}.html")
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        pages[ext] = (tmp_path / f"{ext}.html").read_text()
    for page in pages.values():
        assert "bufsim report: 4 runs" in page and "finished</th><td>20" in page


def test_what_is_not_a_results_database_is_refused(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("op,file,offset,size\nR,a,0,4096\n")
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("create table t (a int)")
    # DuckDB opens a CSV file as a database, and a store once made an empty `runs` table in
    # any database it was given: `show` printed an empty table and exit status 0.
    for path, says in ((trace, "not a valid DuckDB database"), (other, "no `runs` table")):
        p = bufsim_cli("results", "show", path)
        assert p.returncode == 2 and says in p.stderr and p.stderr.count("\n") == 1, p.stderr
    with duckdb.connect(str(other), read_only=True) as con:
        assert con.execute("select table_name from information_schema.tables").fetchall() == [("t",)]
    # A report of a trace once rendered its rows as runs.
    p = bufsim_cli("report", trace, "-o", tmp_path / "r.html")
    assert p.returncode == 2 and "not bufsim runs" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "r.html").exists()


def test_nan_and_infinity_are_exported_as_null(db, tmp_path):
    """bufsim never writes NaN or infinity, but a database edited by hand may hold them: JSON
    has no such numbers and a reader would take `nan` for a value, so export writes NULL."""
    import shutil

    edited = tmp_path / "edited.duckdb"
    shutil.copy(db, edited)
    with duckdb.connect(str(edited)) as con:
        con.execute("UPDATE runs SET hit_ratio = 'nan'::DOUBLE, seconds = 'inf'::DOUBLE WHERE policy = 'lru'")
    out = tmp_path / "runs.jsonl"
    p = bufsim_cli("results", "export", edited, "-o", out)
    assert p.returncode == 0, p.stderr

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    rows = [json.loads(line, parse_constant=refuse) for line in out.read_text().splitlines()]
    assert {(r["policy"], r["hit_ratio"], r["seconds"]) for r in rows if r["policy"] == "lru"} == {("lru", None, None)}
    assert all(r["hit_ratio"] is not None and r["seconds"] >= 0 for r in rows if r["policy"] == "fifo")
    for ext in ("csv", "parquet"):
        assert bufsim_cli("results", "export", edited, "-o", tmp_path / f"runs.{ext}").returncode == 0
        nulls = duckdb.sql(
            f"SELECT count(*) FROM '{tmp_path / f'runs.{ext}'}' WHERE policy = 'lru' AND hit_ratio IS NULL"
        ).fetchall()
        assert nulls == [(2,)], ext
    p = bufsim_cli("results", "export", edited, "-o", out, "--columns", "policy,hit_ratio")
    assert p.returncode == 0 and '"hit_ratio":null' in out.read_text(), p.stderr


def test_a_result_with_nan_is_stored_as_null(tmp_path):
    from bufsim.sweeps import ResultsStore, RunSpec

    spec = RunSpec("t.csv", "abc", "csv", "lru", "none", 1024, 4096, False, "64KiB", 42)
    store = ResultsStore(str(tmp_path / "r.duckdb"))
    try:
        store.write(spec, {"hits": 1, "misses": 1, "hit_ratio": float("nan"), "miss_ratio": float("inf")}, 0.5)
        got = store.db.execute("SELECT hits, hit_ratio, miss_ratio, isnan(hit_ratio) FROM runs").fetchall()
    finally:
        store.close()
    assert got == [(1, None, None, None)]


def test_show_prints_nan_infinity_and_null_as_a_dash(db, tmp_path):
    """`results show` prints a NaN or infinity (a hand edit) as the NULL export writes for it, and
    every NULL as `-`, as bufsim's other tables show a missing value: never nan, inf, None or <NA>
    (a reader would take them for values)."""
    import re
    import shutil

    edited = tmp_path / "edited.duckdb"
    shutil.copy(db, edited)
    with duckdb.connect(str(edited)) as con:
        con.execute(
            "UPDATE runs SET hit_ratio = 'nan'::DOUBLE, miss_ratio = 'inf'::DOUBLE, seconds = '-inf'::DOUBLE, "
            "evictions = NULL WHERE policy = 'lru'"
        )
    # pandas' spellings of a missing value (`none` is a read-ahead setting)
    shown_missing = re.compile(r"(?i:\bnan\b|\binf)|None|<NA>")
    columns = "policy,cache_blocks,hit_ratio,miss_ratio,seconds,evictions,device"
    p = bufsim_cli("results", "show", edited, "--columns", columns)
    assert p.returncode == 0, p.stderr
    assert not shown_missing.search(p.stdout), p.stdout
    rows = [line.split() for line in p.stdout.splitlines()[1:]]
    assert sorted(r for r in rows if r[0] == "lru") == [["lru", b, "-", "-", "-", "-", "-"] for b in ("256", "64")]
    fifo = [r for r in rows if r[0] == "fifo"]
    assert len(fifo) == 2 and all(r[6] == "-" and float(r[3]) == 1 - float(r[2]) and int(r[5]) >= 0 for r in fifo)
    p = bufsim_cli("results", "show", edited)
    assert p.returncode == 0 and "lru" in p.stdout, p.stderr
    assert not shown_missing.search(p.stdout), p.stdout
    # An infinity is a NULL to --where too: no number matches it, in show as in export.
    p = bufsim_cli("results", "show", edited, "--where", "miss_ratio=inf")
    assert p.returncode == 0 and p.stdout.strip() == "no runs match miss_ratio=inf", p.stdout
