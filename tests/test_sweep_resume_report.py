"""`bufsim sweep --resume` says how many runs it found and skipped."""

from __future__ import annotations

from conftest import ROOT, bufsim_cli


def test_resume_reports_what_it_skipped(tmp_path):
    trace, db = ROOT / "traces" / "grep.csv.gz", tmp_path / "r.duckdb"
    assert bufsim_cli("sweep", trace, "-p", "lru", "-p", "fifo", "-c", "64blocks", "-o", db, "--quiet").returncode == 0
    p = bufsim_cli("sweep", trace, "-p", "lru", "-p", "fifo", "-p", "clock", "-c", "64blocks", "-o", db, "--resume")
    assert p.returncode == 0, p.stderr
    assert f"2 of 3 runs already in {db}, skipped; 1 to run" in p.stderr
    assert "3 runs in" in p.stdout


def test_a_run_named_twice_is_counted_once_as_the_database_holds_it(tmp_path):
    trace, db = ROOT / "traces" / "grep.csv.gz", tmp_path / "r.duckdb"
    p = bufsim_cli("sweep", trace, "-p", "lru", "-p", "LRU", "-p", "fifo", "-c", "64blocks", "-o", db)
    assert p.returncode == 0, p.stderr
    # Each grid cell is a row of the table (tests/test_canonical_specs.py); two runs are stored.
    assert sum(line.startswith("lru ") for line in p.stdout.splitlines()) == 2 and "2 runs in" in p.stdout
