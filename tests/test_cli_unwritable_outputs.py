"""Outputs that cannot be written, and inputs with nothing in them: one line on standard error
naming the file (or standard output) and what to do, exit status 2, never exit status 0 with the
output lost, a traceback, or a warning beside a figure that was not drawn. Also the messages a
command gives in its own words (flags, not Python keywords; the package that is missing; no SQL)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import block_trace, bufsim_cli, write_csv
from test_cli import check_error

NATIVE = Path(sys.executable).parent / "bufsim"
FULL = "/dev/full"

pytestmark = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this system")


def into_full(*args, command: list[str] | None = None) -> subprocess.CompletedProcess:
    """A command whose standard output is a full disk."""
    with open(FULL, "w") as out:
        return subprocess.run(
            (command or [sys.executable, "-m", "bufsim"]) + [str(a) for a in args],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
        )


def one_line(p: subprocess.CompletedProcess, *fragments: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    err = p.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err


@pytest.mark.parametrize("args", [["run", "-c", "4blocks"], ["run", "-c", "4blocks", "--json"], ["analyze"], ["mrc"]])
def test_a_full_standard_output_is_an_error_that_names_it(tmp_path, args):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    p = into_full(args[0], trace, *args[1:])
    one_line(p, "standard output: No space left on device", "free some space")


def test_the_native_run_reports_a_full_standard_output_as_python_does(tmp_path):
    with open(NATIVE, "rb") as f:
        if f.read(4) != b"\x7fELF":
            pytest.skip(f"{NATIVE} is not the native entry point: run `make build-ci`")
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    native = into_full("run", trace, "-c", "4blocks", command=[str(NATIVE)])
    python = into_full("run", trace, "-c", "4blocks")
    one_line(native, "standard output: No space left on device")
    assert native.stderr == python.stderr


def test_a_figure_or_report_on_a_full_disk_names_the_file(tmp_path, sweep_db):
    full_png, full_html = tmp_path / "full.png", tmp_path / "full.html"
    full_png.symlink_to(FULL)
    full_html.symlink_to(FULL)
    check_error(bufsim_cli("plot", "hit-ratio", sweep_db, "-o", full_png), f"{full_png}: No space left on device")
    check_error(bufsim_cli("report", sweep_db, "-o", full_html), f"{full_html}: No space left on device")
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0] * 50)
    check_error(
        bufsim_cli("heatmap", trace, "-c", "4blocks", "--windows", "2", "-o", full_png),
        f"{full_png}: No space left on device",
    )


def test_an_output_in_proc_is_refused_with_what_to_do(tmp_path, sweep_db):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    for p in (
        bufsim_cli("timeline", trace, "-c", "4blocks", "--csv", "/proc/bufsim-test.csv"),
        bufsim_cli("report", sweep_db, "-o", "/proc/bufsim-test.html"),
    ):
        check_error(p, "/proc/bufsim-test", "no file can be created in /proc")


def test_a_column_named_twice_is_refused(sweep_db, tmp_path):
    check_error(bufsim_cli("results", "show", sweep_db, "--columns", "policy,policy"), "policy named twice")
    out = tmp_path / "dup.csv"
    check_error(bufsim_cli("results", "export", sweep_db, "--columns", "policy,policy", "-o", out), "named twice")
    assert not out.exists()


def stub_missing(tmp_path: Path, package: str) -> dict:
    """An environment in which importing ``package`` fails as an uninstalled one does."""
    (tmp_path / "stubs" / package).mkdir(parents=True)
    (tmp_path / "stubs" / package / "__init__.py").write_text(
        f'raise ModuleNotFoundError("No module named {package!r}", name={package!r})\n'
    )
    return {**os.environ, "PYTHONPATH": str(tmp_path / "stubs")}


@pytest.mark.parametrize("command", [["run", "-c", "4blocks"], ["analyze"], ["mrc"], ["convert", "-o", "x.bst"]])
def test_progress_without_tqdm_is_one_line_naming_the_package(tmp_path, command):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", command[0], trace, *command[1:], "--progress"],
        capture_output=True,
        text=True,
        env=stub_missing(tmp_path, "tqdm"),
        cwd=tmp_path,
    )
    check_error(p, "needs the Python package tqdm,", "pip install tqdm")


def test_results_without_pandas_names_the_package_not_the_database(tmp_path, sweep_db):
    p = subprocess.run(
        [sys.executable, "-m", "bufsim", "results", "show", sweep_db],
        capture_output=True,
        text=True,
        env=stub_missing(tmp_path, "pandas"),
    )
    check_error(p, "needs the Python package pandas")
    assert "results database" not in p.stderr


def test_a_damaged_parquet_file_is_named_without_sql(tmp_path, sweep_db):
    whole = tmp_path / "runs.parquet"
    assert bufsim_cli("results", "export", sweep_db, "-o", whole).returncode == 0
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes()[:2000])
    p = bufsim_cli("plot", "hit-ratio", cut, "-o", tmp_path / "x.png")
    check_error(p, f"{cut}: not a readable Parquet file")
    assert "SELECT" not in p.stderr and "LINE 1" not in p.stderr


def test_an_infinite_whole_number_in_a_table_is_one_line(tmp_path):
    table = tmp_path / "inf.csv"
    table.write_text("policy,cache_blocks,hit_ratio\nlru,1e400,0.5\n")
    check_error(bufsim_cli("plot", "hit-ratio", table, "-o", tmp_path / "x.png"), "inf.csv:2: cache_blocks", "finite")


def test_traces_without_requests(tmp_path):
    header = write_csv(tmp_path / "h.csv", [])
    for command in (["detect"], ["timeline", "-c", "10blocks"]):
        p = bufsim_cli(command[0], header, *command[1:])
        assert p.returncode == 0, p.stderr
        assert "h.csv: the trace holds no requests" in p.stderr, p.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    p = bufsim_cli("run", empty)
    check_error(p, "empty.csv: the trace is empty", "nothing to simulate")
    assert "--format" not in p.stderr
    p = bufsim_cli("heatmap", header, "-c", "10blocks", "--csv", "", "-o", tmp_path / "h.png")
    check_error(p, "--csv ''", "an empty path")


def test_commands_speak_in_their_own_flags(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    p = bufsim_cli("mrc", trace, "--policy", "opt")
    check_error(p, "needs the future", "one pass over the trace")
    assert "sample" not in p.stderr
    check_error(bufsim_cli("run", trace, "--format", ""), "an empty trace format", "auto or one of csv")
    check_error(bufsim_cli("analyze", trace, "-p", "lru"), "(--breakdown SIZE)")
    check_error(bufsim_cli("generate", "amp-a", "--list", "-o", tmp_path / "g.csv"), "--list")
    assert not (tmp_path / "g.csv").exists()
    p = bufsim_cli()
    check_error(p, "give a command", "bufsim --help")
