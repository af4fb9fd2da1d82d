"""Arguments of `analyze`, `mrc`, `sweep`, `validate`, `workloads`, `timeline` and the first-level options:
what a user can mistype is refused on one line (exit status 2) before any work starts, and what
the other commands accept is accepted here too."""

from __future__ import annotations

import pytest
from conftest import block_trace, bufsim_cli, write_csv
from test_cli import check_error


@pytest.mark.parametrize("command", ["analyze", "mrc"])
def test_a_block_size_in_bytes_is_taken_as_run_takes_it(tmp_path, command):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    plain = bufsim_cli(command, trace, "--block-size", "4096", "--json")
    unit = bufsim_cli(command, trace, "--block-size", "4KiB", "--json")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == unit.stdout


@pytest.mark.parametrize("command", [["analyze"], ["mrc"], ["mrc", "--policy", "arc", "--sample", "0.5"]])
def test_a_header_only_trace_is_called_empty(tmp_path, command):
    p = bufsim_cli(command[0], write_csv(tmp_path / "h.csv", []), *command[1:])
    assert p.returncode == 0, p.stderr
    assert "h.csv: the trace holds no requests" in p.stderr


def test_a_sweep_of_a_header_only_trace_says_so(tmp_path):
    trace, other = write_csv(tmp_path / "h.csv", []), block_trace(tmp_path / "t.csv", [0, 1, 0])
    p = bufsim_cli("sweep", trace, other, "-c", "64blocks", "-o", tmp_path / "r.duckdb", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "h.csv: the trace holds no requests" in p.stderr and "t.csv" not in p.stderr


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--timeout", "-1"], "--timeout -1.0 is not a time to wait"),
        (["--timeout", "0"], "--timeout 0.0 is not a time to wait"),
        (["--timeout", "nan"], "--timeout nan is not a time to wait"),
        (["--policy", "nosuch"], "unknown policy `nosuch`"),
        (["--prefetch", "linux-6(x=1)"], "has no parameter `x`"),
    ],
)
def test_validate_refuses_bad_arguments_before_running_anything(tmp_path, args, fragment):
    marker = tmp_path / "ran"
    p = bufsim_cli("validate", "--memory", "64MiB", *args, "--", "touch", marker)
    check_error(p, fragment)
    assert not marker.exists(), "the command ran although an argument was bad"


def test_workloads_from_a_directory_that_is_not_there(tmp_path):
    check_error(bufsim_cli("workloads", "--dir", tmp_path / "none"), "none: no such directory", "--dir")
    f = write_csv(tmp_path / "f.csv", [])
    check_error(bufsim_cli("workloads", "--dir", f), "f.csv: is not a directory")


def test_a_first_level_size_without_a_first_level_is_refused(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1])
    p = bufsim_cli("run", trace, "-c", "10blocks", "--first-level-cache", "4blocks")
    check_error(p, "--first-level-cache", "give --first-level SPEC too")
    # With a first level, its default size still applies when none is given.
    ok = bufsim_cli("run", trace, "-c", "10blocks", "--first-level", "lru", "--json")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--plot", "t.txt"], "unknown figure format `.txt`"),
        (["--plot", "noext"], "unknown figure format `(none)`"),
        (["--plot", "nodir/t.png"], "nodir: no such directory"),
        (["--csv", "nodir/t.csv"], "nodir: no such directory for --csv"),
    ],
)
def test_timeline_checks_its_outputs_before_simulating(tmp_path, args, fragment):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0, 1, 2])
    p = bufsim_cli(
        "timeline", trace, "-p", "amp", "-c", "4blocks", *[str(tmp_path / a) if "/" in a else a for a in args]
    )
    check_error(p, fragment)


def test_validate_checks_its_figure_before_running_anything(tmp_path):
    marker = tmp_path / "ran"
    p = bufsim_cli("validate", "--memory", "64MiB", "--plot", tmp_path / "out.txt", "--", "touch", marker)
    check_error(p, "unknown figure format `.txt`")
    assert not marker.exists()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["sweep", "t.csv", "--seed", "-1", "-o", "x.duckdb"], "see `bufsim sweep --help`"),
        (["run"], "the following arguments are required: trace; see `bufsim run --help`"),
        (["nosuch"], "invalid choice: 'nosuch'"),
    ],
)
def test_usage_errors_take_one_line(args, fragment):
    check_error(bufsim_cli(*args), fragment)


def test_results_show_says_when_nothing_matches(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 0])
    db = tmp_path / "r.duckdb"
    assert bufsim_cli("sweep", trace, "-c", "10blocks", "-o", db).returncode == 0
    p = bufsim_cli("results", "show", db, "--where", "cache_blocks=11")
    assert p.returncode == 0 and p.stdout.strip() == "no runs match cache_blocks=11"
    # A value of the wrong kind is a mistake to name, not an empty match.
    check_error(bufsim_cli("results", "show", db, "--where", "cache_blocks=abc"), "cache_blocks holds numbers")
    check_error(bufsim_cli("results", "show", db, "--where", "policy==lru"), "write one `=`, as in policy=lru")
    check_error(bufsim_cli("results", "show", db, "--columns", ",,"), "give column names")


def test_a_heatmap_of_an_empty_trace_says_so(tmp_path):
    p = bufsim_cli("heatmap", write_csv(tmp_path / "h.csv", []), "-c", "10blocks", "-o", tmp_path / "h.png")
    assert p.returncode == 0 and "h.csv: the trace holds no requests" in p.stderr


def test_a_value_that_looks_like_an_option_is_told_to_go_after_an_equals_sign(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    p = bufsim_cli("run", trace, "--cache", "2blocks", "--think", "-1s")
    check_error(
        p, "argument --think: expected one argument (a value that starts with `-` goes after `=`: --think=VALUE)"
    )
    p = bufsim_cli("run", trace, "--cache", "2blocks", "--think=-1s")
    check_error(p, "think time `-1s` must be `trace` or a time that is not negative")


def test_cache_steps_joined_by_commas_are_told_the_separator(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    p = bufsim_cli("run", trace, "--cache", "2blocks", "--cache-steps", "1=1,2=2")
    check_error(p, "cache step `1=1,2=2` holds more than one step: separate steps with `;`")
    p = bufsim_cli("run", trace, "--cache", "2blocks", "--cache-steps", "1=1;2=2", "--json")
    assert p.returncode == 0, p.stderr


def test_a_breakdown_cache_too_large_names_the_limit(tmp_path):
    # Above 2^32 blocks the breakdown said "give at least 1block".
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    p = bufsim_cli("analyze", trace, "--no-working-set", "--breakdown", "1000000000000blocks")
    check_error(p, "is 2^31 blocks or more; use a larger block size")
    check_error(bufsim_cli("analyze", trace, "--breakdown", "0blocks"), "holds no whole 4096-byte block")
