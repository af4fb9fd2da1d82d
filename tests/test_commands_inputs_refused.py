"""Arguments and files of `report`, `plot`, `heatmap`, `timeline`, `generate`, `reproduce`,
`sweep`, `workloads` and `validate`, and the Python functions behind them: what a user can get
wrong is refused on one line (exit status 2; the package's own exception in Python) before any
work, and no output is ever written over an input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import block_trace, bufsim_cli, write_csv
from test_cli import check_error

import bufsim


def _sweep_db(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0, 1, 3])
    db = tmp_path / "r.duckdb"
    assert bufsim_cli("sweep", trace, "-c", "2blocks", "-c", "4blocks", "-o", db).returncode == 0
    return trace, db


def test_report_never_writes_over_the_results_it_reads(tmp_path):
    _, db = _sweep_db(tmp_path)
    before = db.read_bytes()
    check_error(bufsim_cli("report", db, "-o", db), "is the results file the report reads", "-o")
    link = tmp_path / "report.html"
    link.symlink_to(db)
    check_error(bufsim_cli("report", db, "-o", link), "is the results file the report reads")
    check_error(bufsim_cli("report", db, "-o", tmp_path / "r.txt"), "r.txt: the report is an HTML page", ".html")
    assert db.read_bytes() == before


def test_plot_never_writes_over_its_source(tmp_path):
    _, db = _sweep_db(tmp_path)
    before = db.read_bytes()
    link = tmp_path / "fig.png"
    link.symlink_to(db)
    check_error(bufsim_cli("plot", "mrc", db, "-o", link), "is the results file to plot", "--out")
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        ["heatmap", "{t}", "-c", "4blocks", "-o", "{d}/h.png", "--csv", "{t}"],
        ["timeline", "{t}", "-p", "amp", "-c", "4blocks", "--csv", "{t}"],
    ],
)
def test_heatmap_and_timeline_never_write_over_the_trace(tmp_path, command):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0, 1, 2])
    before = trace.read_bytes()
    p = bufsim_cli(*[a.format(t=trace, d=tmp_path) for a in command])
    check_error(p, "t.csv: is the input trace", "--csv")
    assert trace.read_bytes() == before


@pytest.mark.parametrize(
    "command, fragment",
    [
        (["heatmap", "{t}", "-c", "4blocks", "-o", "{d}/h.png", "--csv", "{d}/h.png"], "is also the --out figure"),
        (["timeline", "{t}", "-p", "amp", "-c", "4blocks", "--plot", "{d}/h.png", "--csv", "{d}/h.png"], "--plot"),
    ],
)
def test_two_outputs_of_one_command_may_not_share_a_file(tmp_path, command, fragment):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0, 1, 2])
    check_error(bufsim_cli(*[a.format(t=trace, d=tmp_path) for a in command]), fragment, "--csv")
    assert not (tmp_path / "h.png").exists()


@pytest.mark.parametrize(
    "report, fragment",
    [
        ({"sizes": 5, "miss_ratio": [0.1], "shards": None}, "`sizes` must be a list"),
        ({"sizes": [1, 2], "miss_ratio": [0.1], "shards": None}, "`miss_ratio` must be a list of 2"),
        ({"sizes": [1, 2], "miss_ratio": [0.1, 0.2], "shards": 3}, "`shards` must be an object"),
        (
            {"sizes": [1], "miss_ratio": [0.1], "shards": {"mode": "fixed-rate", "rate": "x", "miss_ratio": [0.1]}},
            "`shards.rate` must be a number",
        ),
        ({"temporal_distance": 5, "footprint": 1}, "`temporal_distance.bins` must be a list"),
        ({"temporal_distance": {"bins": [{"distance": 1}]}, "footprint": 1}, "with `distance` and `count`"),
        ({"temporal_distance": {"bins": [{"distance": "x", "count": 1}]}, "footprint": 1}, "bin 1: distance"),
    ],
)
def test_plot_refuses_json_reports_of_the_wrong_shape(tmp_path, report, fragment):
    src = tmp_path / "r.json"
    src.write_text(json.dumps(report))
    kind = "tdist" if "footprint" in report else "mrc"
    check_error(bufsim_cli("plot", kind, src, "-o", tmp_path / "f.png"), "r.json", fragment)


@pytest.mark.parametrize(
    "kind, table, fragment",
    [
        ("tdist", "distance,count\nx,1\n", "r.csv:2: distance must be a number"),
        ("tdist", "distance,count\n1,-5\n4,2\n", "r.csv:2: count must be 0 or more"),
        ("tdist", "distance,count\n,1\n4,2\n", "r.csv:2: distance is empty"),
        ("seq-cdf", "size_blocks,requests\nx,1\n", "r.csv:2: size_blocks must be a number"),
        ("heatmap", "window,cache_blocks,hit_ratio\nx,4,0.5\n", "r.csv:2: window must be a number"),
        ("heatmap", "window,cache_blocks,hit_ratio,last_request\n1,4,0.5,x\n", "last_request must be a number"),
        ("partitions", "time,partition,size_blocks\nx,a,1\n", "r.csv:2: time must be a number"),
        ("partitions", "time,partition,size_blocks\n1,,1\n", "a sample has no partition name"),
    ],
)
def test_plot_refuses_long_tables_with_wrong_numbers(tmp_path, kind, table, fragment):
    src = tmp_path / "r.csv"
    src.write_text(table)
    check_error(bufsim_cli("plot", kind, src, "-o", tmp_path / "f.png"), fragment)
    assert not (tmp_path / "f.png").exists()


def test_a_sequence_cdf_of_one_block_requests_is_drawn(tmp_path):
    df = bufsim.plots.sequence_sizes(
        __import__("pandas").DataFrame({"policy": ["lru"], "cache_blocks": [4], "request_sizes": ['{"1": 7}']})
    )
    result = bufsim.plots.sequence_cdf(df, tmp_path / "c.png")
    lines = [line for ax in result.figure.axes for line in ax.get_lines() if len(line.get_xdata())]
    assert lines and lines[0].get_marker() not in (None, "None", "")


@pytest.mark.parametrize("jobs", ["-1", "abc", "1.5"])
def test_sweep_refuses_a_bad_job_count(tmp_path, jobs):
    trace = block_trace(tmp_path / "t.csv", [0, 1])
    check_error(bufsim_cli("sweep", trace, "-c", "4blocks", "-o", tmp_path / "r.duckdb", f"--jobs={jobs}"), "jobs")


@pytest.mark.parametrize("address", ["inproc://x", "inproc://127.0.0.1/1/1"])
def test_sweep_refuses_a_dask_address_it_cannot_reach(tmp_path, address):
    trace = block_trace(tmp_path / "t.csv", [0, 1])
    p = bufsim_cli("sweep", trace, "-c", "4blocks", "-o", tmp_path / "r.duckdb", "--dask", address)
    check_error(p, f"--dask {address}: Dask cannot connect there")


def test_a_sweep_file_names_itself_for_a_value_json_cannot_carry(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1])
    config = tmp_path / "s.toml"
    config.write_text(f'traces = ["{trace}"]\npolicies = ["lru"]\ncaches = ["4blocks"]\nmax_requests = nan\n')
    check_error(bufsim_cli("sweep", "--config", config, "-o", tmp_path / "r.duckdb"), "s.toml: ", "max_requests")


@pytest.mark.parametrize(
    "manifest, fragment",
    [
        ("{", "not valid JSON"),
        ('{"a": 1}', "a JSON list of workloads"),
        ("[1, 2]", "workload 1 is not an object with a `name`"),
        ('[{"name": "cscope", "path": "x.bst"}]', "workload cscope: `requests` must be a whole number"),
        (
            '[{"name": "gcc", "path": "x", "requests": 1, "block_accesses": 1, "footprint_blocks": 1, "traced_s": "x"}]',
            "`traced_s` must be a number",
        ),
        (
            '[{"name": "gcc", "path": "x", "requests": -5, "block_accesses": 1, "footprint_blocks": 1}]',
            "workload gcc: `requests` must be a whole number of 0 or more, not -5",
        ),
        (
            '[{"name": "gcc", "path": "x", "requests": 1, "block_accesses": 1, "footprint_blocks": 1, "traced_s": NaN}]',
            "`traced_s` must be a number of seconds of 0 or more, not NaN",
        ),
        (
            '[{"name": "gcc", "path": "x", "requests": 1, "block_accesses": 1, "footprint_blocks": 1, '
            '"traced_s": Infinity}]',
            "`traced_s` must be a number of seconds of 0 or more, not Infinity",
        ),
        (
            '[{"name": "gcc", "path": "x", "requests": 1, "block_accesses": 1, "footprint_blocks": 1, "kernel": [1]}]',
            "workload gcc: `kernel` must be text",
        ),
    ],
)
def test_workloads_refuses_a_damaged_manifest(tmp_path, manifest, fragment):
    (tmp_path / "workloads.json").write_text(manifest)
    check_error(bufsim_cli("workloads", "--dir", tmp_path), "workloads.json", fragment, "make workloads")


def test_generate_without_a_spec_says_what_to_give():
    check_error(bufsim_cli("generate"), "give the generator spec", "bufsim generate --list")


def test_generate_from_python_refuses_what_the_command_line_refuses(tmp_path):
    with pytest.raises(bufsim.SpecError, match="2\\^64-1"):
        bufsim.generate("amp-a", seed=1 << 70, out=tmp_path / "g.csv")
    with pytest.raises(bufsim.SpecError, match="is a directory"):
        bufsim.generate("amp-a", out=tmp_path)


def test_detect_and_timeline_plots_refuse_wrong_arguments_with_spec_errors(tmp_path):
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    with pytest.raises(bufsim.SpecError, match="reads only"):
        bufsim.detect(trace, reads_only="yes")
    df = bufsim.partition_timeline(trace, "amp", 4)
    with pytest.raises(bufsim.SpecError, match="unknown figure format"):
        bufsim.plot_partition_timeline(df, tmp_path / "t.txt")
    with pytest.raises(bufsim.SpecError, match="lacks column"):
        bufsim.plot_partition_timeline(df.iloc[:0, :1], tmp_path / "t.png")
    with pytest.raises(bufsim.SpecError, match="unknown registry"):
        bufsim.registry(None)


def test_a_timeline_of_a_trace_without_accesses_plots_empty_axes(tmp_path):
    # No sample (or only empty partitions): the stacked plot failed with a numpy TypeError.
    for name, rows in [("e.csv", []), ("z.csv", [("R", "f", 0, 0)])]:
        out = tmp_path / f"{name}.png"
        p = bufsim_cli("timeline", write_csv(tmp_path / name, rows), "-p", "amp", "-c", "4blocks", "--plot", out)
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        assert out.stat().st_size > 0


def test_a_timeline_turned_off_is_told_to_turn_it_on(tmp_path):
    # amp is a partitioned policy: "use a partitioned policy" sent the user in a circle.
    trace = block_trace(tmp_path / "t.csv", [0, 1, 2, 0])
    p = bufsim_cli("timeline", trace, "-p", "amp(timeline=0)", "-c", "4blocks")
    check_error(p, "records no partition timeline with timeline=0; give timeline=N")
    check_error(bufsim_cli("timeline", trace, "-p", "lru", "-c", "4blocks"), "use a partitioned policy")


def _quick(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """The command line, stopped after ``timeout`` seconds: a check made after minutes of work
    fails the test by its timeout."""
    return subprocess.run(
        [sys.executable, "-m", "bufsim", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_reproduce_checks_its_figure_directory_before_running(tmp_path):
    f = write_csv(tmp_path / "f.csv", [])
    check_error(_quick("reproduce", "prefetch-figures", "--quick", "--out", f), "f.csv: is not a directory", "--out")
    check_error(_quick("reproduce", "dulo-figures", "--out", "/proc/bufsim-none"), "cannot create the directory")


def test_reproduce_refuses_two_ways_of_printing_and_unknown_names():
    check_error(_quick("reproduce", "prefetch-table1", "--json", "--rows"), "not allowed with argument --json")
    from bufsim.reproduce import main

    with pytest.raises(bufsim.SpecError, match="unknown reproduction `nosuch`"):
        main("nosuch")


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--memory", "4000TiB"], "--memory 4000TiB is more than the model's cache can hold"),
        (["--memory", "64MiB", "--policy", "arc"], "--policy arc: the model's cache follows the memory"),
    ],
)
def test_validate_refuses_what_it_could_only_find_after_the_command(tmp_path, args, fragment):
    marker = tmp_path / "ran"
    check_error(bufsim_cli("validate", *args, "--", "touch", marker), fragment)
    assert not marker.exists()


def test_validate_refuses_an_out_dir_that_is_a_file(tmp_path):
    f = write_csv(tmp_path / "f.csv", [])
    marker = tmp_path / "ran"
    check_error(
        bufsim_cli("validate", "--memory", "64MiB", "--out-dir", f, "--", "touch", marker), "is not a directory"
    )
    assert not marker.exists()


@pytest.mark.parametrize(
    "command, memories, kwargs, fragment",
    [
        ("true", [64 << 20], {}, "the command must be a list of words"),
        ([5], [64 << 20], {}, "the command must be a list of words"),
        (["true"], [3.5e7], {}, "--memory must be a size"),
        (["true"], [64 << 20], {"timeout": "5"}, "--timeout 5 is not a time to wait"),
        (["true"], [64 << 20], {"policy": None}, "--policy must be a spec"),
    ],
)
def test_validate_from_python_refuses_wrong_types(command, memories, kwargs, fragment):
    from bufsim.validate import ValidateError, validate

    with pytest.raises(ValidateError, match=fragment):
        validate(command, memories, **kwargs)


def test_a_drain_thread_is_stopped_before_its_descriptor_closes_even_when_interrupted():
    # CPython before 3.13: a join interrupted by Ctrl-C makes is_alive() False while the thread
    # runs on; the second finish() (the tracer's `finally`) closed the descriptor under it.
    import os
    import signal
    import threading
    import time

    from bufsim.fd_thread import DrainThread

    class Slow(DrainThread):
        def __init__(self, fd):
            super().__init__()
            self.fd = fd
            self.slept = self.read_after_close = False
            self.checked = threading.Event()  # join() cannot say when it has run (the bug)

        def drain(self):
            if threading.current_thread() is self and self._done.is_set() and not self.slept:
                self.slept = True
                time.sleep(0.4)  # still reading after being told to stop
                self.read_after_close = self.fd < 0
                self.checked.set()

    r, w = os.pipe()
    t = Slow(r)
    t.start()
    main = threading.main_thread().ident
    threading.Timer(0.15, lambda: signal.pthread_kill(main, signal.SIGINT)).start()  # Ctrl-C, mid-join
    try:
        t.finish()
    except KeyboardInterrupt:
        t.finish()
    assert t.checked.wait(5)
    os.close(w)
    assert t.slept and not t.read_after_close


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("plot", "hit-ratio", "{db}", "--out", ""), "--out '': an empty path; give a figure file name"),
        (("plot", "hit-ratio", "{db}", "--out", " "), "--out ' ': an empty path"),
        (("heatmap", "{trace}", "--out", ""), "--out '': an empty path; give a figure file name"),
        (("report", "{db}", "--out", ""), "-o '': an empty path"),
        (("timeline", "{trace}", "-p", "amp", "-c", "2blocks", "--plot", ""), "--plot '': an empty path"),
        (("timeline", "{trace}", "-p", "amp", "-c", "2blocks", "--csv", ""), "--csv '': an empty path"),
        (("filter-trace", "{trace}", "--first-level", "lru", "--out", ""), "--out '': an empty path"),
        (("collect", "--out", "", "--", "true"), "-o '': an empty path"),
        (("reproduce", "dulo-figures", "--out", ""), "--out '': an empty path; give a directory for the figures"),
        (("validate", "--memory", "64MiB", "--out-dir", "", "--", "true"), "--out-dir '': an empty path"),
        (("validate", "--memory", "64MiB", "--plot", "", "--", "true"), "--plot '': an empty path"),
    ],
)
def test_an_empty_output_path_is_refused_and_nothing_is_written(tmp_path, args, fragment):
    trace, db = _sweep_db(tmp_path)
    work = tmp_path / "cwd"
    work.mkdir()
    argv = [a.format(db=db, trace=trace) for a in args]
    p = subprocess.run([sys.executable, "-m", "bufsim", *argv], capture_output=True, text=True, cwd=work, timeout=120)
    check_error(p, fragment)
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    "option, spec, fragment",
    [
        ("--policy", "lru(", "--policy 'lru(': `lru(`: missing closing parenthesis"),
        ("--policy", "arc(adapt=nope)", "--policy 'arc(adapt=nope)': policy `arc`: adapt must be one of"),
        ("--policy", "nosuch", "--policy 'nosuch': unknown policy `nosuch`"),
        ("--prefetch", "linux(", "--prefetch 'linux(': `linux(`: missing closing parenthesis"),
    ],
)
def test_plot_and_report_name_a_malformed_spec_filter(tmp_path, option, spec, fragment):
    _, db = _sweep_db(tmp_path)
    check_error(bufsim_cli("plot", "hit-ratio", db, option, spec, "-o", tmp_path / "p.png"), fragment)
    check_error(bufsim_cli("report", db, option, spec, "-o", tmp_path / "r.html"), fragment)
    assert not (tmp_path / "p.png").exists() and not (tmp_path / "r.html").exists()


def test_a_policy_of_another_version_still_filters_as_stored(tmp_path):
    import duckdb

    _, db = _sweep_db(tmp_path)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE runs SET policy = 'retired(x=1)'")
    p = bufsim_cli("plot", "hit-ratio", db, "--policy", "retired(x=1)", "-o", tmp_path / "p.png")
    assert p.returncode == 0, p.stderr
