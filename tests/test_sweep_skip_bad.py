"""`bufsim sweep --skip-bad`: malformed records are counted and passed over, as in `bufsim run`."""

from __future__ import annotations

import duckdb

from conftest import bufsim_cli


def test_sweep_skips_bad_records_only_when_asked(tmp_path):
    trace = tmp_path / "bad.csv"
    trace.write_text("op,file,offset,size\nR,f,0,4096\nR,f,xx,4096\nR,f,4096,4096\nR,f,0,4096\n")
    db = tmp_path / "s.duckdb"
    p = bufsim_cli("sweep", trace, "-p", "lru", "-c", "2blocks", "-o", db, "--quiet")
    assert p.returncode == 2 and "bad.csv:3" in p.stderr and "Traceback" not in p.stderr
    p = bufsim_cli("sweep", trace, "-p", "lru", "-c", "2blocks", "-o", db, "--quiet", "--skip-bad")
    assert p.returncode == 0, p.stderr
    run = bufsim_cli("run", trace, "-p", "lru", "-c", "2blocks", "--skip-bad", "--json")
    assert run.returncode == 0, run.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        requests, hits = con.execute("select requests, hits from runs").fetchone()
    assert (requests, hits) == (3, 1)
