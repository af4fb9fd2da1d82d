"""Arguments of `analyze`, `mrc`, `sweep`, `validate`, `workloads`, `timeline` and the first-level options:
what a user can mistype is refused on one line (exit status 2) before any work starts, and what
the other commands accept is accepted here too."""

from __future__ import annotations

import json

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


@pytest.mark.parametrize("sizes", [["--sizes", "all", "--sizes", "1MiB"], ["--sizes", "all,16blocks"]])
def test_mrc_sizes_all_with_other_sizes_is_refused(tmp_path, sizes):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    check_error(bufsim_cli("mrc", trace, *sizes), "--sizes all takes every size already", "give it alone")
    assert bufsim_cli("mrc", trace, "--sizes", "all").returncode == 0


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


def test_a_heatmap_of_an_empty_trace_is_refused_in_one_line(tmp_path):
    # The figure asked for cannot be drawn: exit status 2, not a warning beside status 0.
    p = bufsim_cli("heatmap", write_csv(tmp_path / "h.csv", []), "-c", "10blocks", "-o", tmp_path / "h.png")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert "h.csv: the trace holds no requests" in p.stderr and "h.png not written" in p.stderr, p.stderr
    assert not (tmp_path / "h.png").exists()


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


@pytest.mark.parametrize(
    "args, fragments",
    [
        (
            ["run", "T", "-c", "4blocks", "--device", "ssd", "--device", "st39102lw"],
            ["--device given twice (ssd, st39102lw): `run` takes one device; `sweep` takes several"],
        ),
        (["run", "T", "--think", "0", "--think", "trace"], ["--think given twice (0, trace): give it once"]),
        (["run", "T", "--block-size", "4KiB", "--block-size", "8KiB"], ["--block-size given twice (4KiB, 8KiB)"]),
        (["heatmap", "T", "-p", "lru", "-p", "arc", "-o", "h.png"], ["--policy given twice (lru, arc)", "`run`"]),
        (["timeline", "T", "-p", "amp", "-c", "1MiB", "-c", "2MiB"], ["--cache given twice (1MiB, 2MiB)"]),
        (["detect", "T", "-d", "amp", "-d", "pcc"], ["--detector given twice (amp, pcc): give it once"]),
        (["filter-trace", "T", "-o", "a.csv", "-o", "b.csv", "--first-level", "lru"], ["--out given twice"]),
        (
            ["run", "T", "--timing", "--device-for", "0=ssd", "--device-for", "0=st39102lw"],
            ["--device-for given twice for device 0 (0=ssd, 0=st39102lw): give each device once"],
        ),
        (
            ["run", "T", "--array", "8", "--device-for", "3=ssd", "--device-for", "0-7=st39102lw"],
            ["--device-for given twice for device 3", "3=ssd would do nothing"],
        ),
        (
            ["filter-trace", "T", "-o", "f.csv", "--first-level", "lru", "--first-level-client", "pid"]
            + ["--first-level-clients", "7=arc@4KiB", "--first-level-clients", "7=lru@64MiB"],
            ["--first-level-clients given twice for client 7 (7=arc@4KiB, 7=lru@64MiB): give each client once"],
        ),
    ],
)
def test_an_option_that_keeps_one_value_is_refused_when_given_twice(tmp_path, args, fragments):
    # argparse kept the last value without a word; the command line stops before any work.
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    words = [trace if a == "T" else tmp_path / a if a.endswith((".png", ".csv")) else a for a in args]
    check_error(bufsim_cli(*words), *fragments, f"see `bufsim {args[0]} --help`")
    assert not any(p.name != "t.csv" for p in tmp_path.iterdir()), "an output was written"


def test_options_meant_to_repeat_still_repeat(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 0])
    p = bufsim_cli("run", trace, "-p", "lru", "-p", "fifo", "-c", "1blocks", "-c", "2blocks", "--json")
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 4, p.stderr
    # Different devices, and a range with a later exception, are not the same key twice.
    for entries in (["0=ssd", "1=avg"], ["0-3=ssd", "2=avg"]):
        words = [w for e in entries for w in ("--device-for", e)]
        p = bufsim_cli("run", trace, "-c", "2blocks", "--array", "4", *words, "--json")
        assert p.returncode == 0, p.stderr
    p = bufsim_cli(
        "sweep", trace, "-c", "2blocks", "--device", "ssd", "--device", "avg", "-o", tmp_path / "r.duckdb", "-q"
    )
    assert p.returncode == 0 and "2 runs in" in p.stdout, p.stderr


def test_a_first_level_override_of_a_client_not_in_the_trace_is_refused(tmp_path):
    trace = write_csv(
        tmp_path / "t.csv", [("R", "f", 0, 4096, 3), ("R", "f", 4096, 4096, 9)], "op,file,offset,size,pid"
    )
    out = tmp_path / "f.csv"
    # One client (0) unless a column tells clients apart: refused before the trace is read.
    p = bufsim_cli("filter-trace", trace, "-o", out, "--first-level", "lru", "--first-level-clients", "5=lru@1MiB")
    check_error(p, "client 5 is not in the trace; its clients are 0")
    assert not out.exists()
    p = bufsim_cli(
        "filter-trace", trace, "-o", out, "--first-level", "lru", "--first-level-client", "pid",
        "--first-level-clients", "5=lru@1MiB",
    )  # fmt: skip
    check_error(p, "client 5 is not in the trace (by pid); its clients are 3, 9")
    assert not out.exists(), "the stream written without the override was left behind"
    p = bufsim_cli(
        "filter-trace", trace, "-o", out, "--first-level", "lru", "--first-level-client", "pid",
        "--first-level-clients", "9=lru@1MiB", "--json",
    )  # fmt: skip
    assert p.returncode == 0 and out.exists(), p.stderr
    # run and sweep refuse it as well, rather than run without the override.
    clients = ("--first-level", "lru", "--first-level-client", "pid", "--first-level-clients", "5=lru@1MiB")
    check_error(bufsim_cli("run", trace, "-c", "2blocks", *clients), "client 5 is not in the trace (by pid)")
    p = bufsim_cli("sweep", trace, "-c", "2blocks", *clients, "-o", tmp_path / "r.duckdb", "-q")
    check_error(p, "client 5 is not in the trace (by pid)")


def test_cache_steps_past_the_end_of_the_trace_are_warned_of(tmp_path):
    trace = write_csv(tmp_path / "t.csv", [("R", "f", 4096 * i, 4096) for i in range(6)], "op,file,offset,size")
    p = bufsim_cli("run", trace, "-c", "4blocks", "--cache-steps", "2=2blocks;6=3blocks;9=1blocks", "--json")
    assert p.returncode == 0, p.stderr
    assert "the trace ends before request 6: cache steps 6=3blocks;9=1blocks never applied" in p.stderr
    assert json.loads(p.stdout)["cache_steps_unreached"] == 2
    # The last request is index 5: a step there applies, and nothing is said.
    p = bufsim_cli("run", trace, "-c", "4blocks", "--cache-steps", "5=2blocks", "--json")
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    assert json.loads(p.stdout)["cache_steps_unreached"] == 0


def test_every_option_that_keeps_one_value_refuses_a_second_in_every_command(capsys):
    import argparse

    from bufsim.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    checked = 0
    for command, sub in commands.items():
        for action in sub._actions:
            if type(action).__name__ != "StoreOnce" or not action.option_strings:
                continue
            value = str(action.choices[0]) if action.choices else "4096"  # in every numeric range
            flag = action.option_strings[-1]
            with pytest.raises(SystemExit) as e:
                parser.parse_args([command, f"{flag}={value}", f"{flag}={value}"])
            err = capsys.readouterr().err
            assert e.value.code == 2 and " given twice (" in err and len(err.strip().splitlines()) == 1, (command, err)
            checked += 1
    assert checked > 50


def test_a_bst_cut_inside_its_magic_is_not_read_as_text(tmp_path):
    src = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)] * 3)
    bst = tmp_path / "t.bst"
    assert bufsim_cli("convert", src, "-o", bst).returncode == 0
    for n in (1, 6):
        cut = tmp_path / f"cut{n}.bst"
        cut.write_bytes(bst.read_bytes()[:n])
        check_error(bufsim_cli("run", cut, "-c", "4blocks"), f"a .bst trace cut short: {n} bytes", "convert")


def test_skip_bad_that_passes_over_every_record_is_an_error(tmp_path):
    # A CSV trace read as MSR: every line is malformed, so nothing was read at all.
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)] * 4)
    for args in (("run", t, "-c", "4blocks"), ("convert", t, "-o", tmp_path / "o.bst")):
        p = bufsim_cli(*args, "--format", "msr", "--skip-bad")
        check_error(p, "none of its 5 records could be read as msr", "--format")
    # One good record among bad ones is still a run with a warning.
    rows = "op,file,offset,size\nR,f,0,4096\nR,f,zero,4096\n"
    (tmp_path / "some.csv").write_text(rows)
    p = bufsim_cli("run", tmp_path / "some.csv", "-c", "4blocks", "--skip-bad")
    assert p.returncode == 0 and "skipped 1 malformed record" in p.stderr, p.stderr


def test_faults_given_twice_or_empty_are_refused(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(
        bufsim_cli("run", t, "--faults", "device=0,at=0s,slowdown=50,at=1000s"), "parameter `at` is given twice"
    )
    check_error(bufsim_cli("run", t, "--faults", ""), "the fault is empty")


def test_a_linux_cache_larger_than_the_machine_costs_nothing_up_front(tmp_path):
    # Its per-frame tables grow with the frames used, as every other policy's do.
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)] * 3)
    p = bufsim_cli("run", t, "-p", "linux", "-c", "2147483647blocks", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["hits"] == 2


def test_messages_name_what_is_wrong(tmp_path):
    t = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(bufsim_cli("run", t, "-c", "4blocks", "-p", "lru,arc"), "one spec at a time", "-p lru -p arc")
    check_error(bufsim_cli("generate", "sa-trace1(unit=3000)"), "has no unit", "3000blocks")
    check_error(
        bufsim_cli("filter-trace", tmp_path, "-o", tmp_path / "o.csv", "--first-level", "lru"), "is a directory"
    )
    damaged = tmp_path / "d.csv.zst"
    damaged.write_bytes(b"\x28\xb5\x2f\xfd" + b"not a zstd frame at all" * 4)
    check_error(bufsim_cli("run", damaged, "-c", "4blocks"), "corrupt or cut short")
    # A name with a line end and an escape sequence stays on one line, and sends no escape.
    p = bufsim_cli("run", tmp_path / "no\nsuch\x1b[31m.csv")
    check_error(p, "no\\nsuch\\x1b[31m.csv", "no such file")
    assert "\x1b" not in p.stderr


def test_a_header_only_trace_converted_is_called_empty(tmp_path):
    h = write_csv(tmp_path / "h.csv", [])
    p = bufsim_cli("convert", h, "-o", tmp_path / "h.bst")
    assert p.returncode == 0 and "h.csv: the trace holds no requests" in p.stderr and "h.bst holds none" in p.stderr
