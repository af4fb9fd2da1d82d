"""`bufsim results show --where COLUMN=VALUE` compares as the column's type: a number column by
value, a yes/no column by truth, a trace as `show` prints it; a value of the wrong kind is a
one-line error, not an empty table."""

from __future__ import annotations

import pytest

from conftest import ROOT, bufsim_cli

GREP = ROOT / "traces" / "grep.csv.gz"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    out = tmp_path_factory.mktemp("where") / "r.duckdb"
    p = bufsim_cli("sweep", GREP.resolve(), "-p", "lru", "-p", "fifo", "-c", "64blocks", "-o", out, "--quiet")
    assert p.returncode == 0, p.stderr
    return out


@pytest.mark.parametrize(
    "cond, runs",
    [
        ("hit_ratio=0", 2),  # stored as 0.0
        ("cache_blocks=64.0", 2),
        ("cache_blocks=65", 0),
        ("reads_only=false", 2),
        ("reads_only=TRUE", 0),
        ("seed=42", 2),
        ("trace=grep.csv.gz", 2),  # the file name `show` prints, for a sweep given an absolute path
        ("policy=LRU", 1),
        ("streams=1", 0),  # a timing column, NULL in count mode
    ],
)
def test_where_compares_as_the_column_type(db, cond, runs):
    p = bufsim_cli("results", "show", db, "--where", cond)
    assert p.returncode == 0, p.stderr
    shown = p.stdout.count("grep.csv.gz")
    assert shown == runs, p.stdout


@pytest.mark.parametrize(
    "cond, said",
    [
        ("cache_blocks=abc", "cache_blocks holds numbers"),
        ("reads_only=maybe", "reads_only is true or false"),
        ("policy=lru(", "--where 'policy=lru(': `lru(`: missing closing parenthesis"),
        ("policy=nosuch", "unknown policy `nosuch`"),
    ],
)
def test_where_refuses_a_value_of_the_wrong_kind(db, cond, said):
    p = bufsim_cli("results", "show", db, "--where", cond)
    assert p.returncode == 2 and said in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
