"""Figures: every kind from the session's sweep (and from small frames of the documented shapes),
formats by suffix, byte-identical output, policy colours actually drawn, absent columns as notes,
and the `bufsim plot` command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from bufsim import plots
from conftest import MD5GREP, SWEEP_POLICIES, add_runs, timed_and_count_db


@pytest.fixture(scope="module")
def runs(sweep_db):
    return plots.load(sweep_db)


def colour_pixels(png, colour: str, tol: int = 40) -> int:
    """How many pixels of the image are within `tol` (per channel) of `colour`."""
    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(img - rgb).max(axis=2) <= tol).sum())


def test_hit_ratio_draws_every_policy_in_its_colour(runs, tmp_path):
    out = tmp_path / "hr.png"
    p = plots.hit_ratio(runs, out)
    assert p.out == out and p.notes == [] and p.panels == 1
    for policy in SWEEP_POLICIES:
        assert colour_pixels(out, plots.policy_colour(policy)) > 300, policy
    # A colour of no policy in the sweep is absent: the count means something.
    assert colour_pixels(out, plots.policy_colour("mru"), tol=10) < 50


def test_prefetch_panels_leave_out_execution_time_until_timed_mode(runs, tmp_path):
    p = plots.prefetch_panels(runs, tmp_path / "p.png")
    assert p.panels == 2
    assert len(p.notes) == 1 and "exec_time_s" in p.notes[0] and "--timing" in p.notes[0]
    timed = runs.assign(exec_time_s=runs["misses"] * 0.005)  # a stand-in column of the right shape
    p = plots.prefetch_panels(timed, tmp_path / "p3.png")
    assert p.panels == 3 and p.notes == []
    # Several panels span both columns of a paper (7 in at 200 dpi).
    assert Image.open(tmp_path / "p.png").size[0] == Image.open(tmp_path / "p3.png").size[0] == 1400
    assert len(p.figure.axes) == 3


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF"), (".svg", b"<?xml")])
def test_format_by_suffix_and_identical_bytes(runs, tmp_path, suffix, magic):
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    plots.prefetch_panels(runs, a)
    plots.prefetch_panels(runs, b)
    assert a.read_bytes()[:5].startswith(magic)
    assert a.read_bytes() == b.read_bytes()


def test_mrc_from_runs_is_one_minus_hit_ratio(runs, tmp_path):
    lru = runs[(runs["policy"] == "lru") & (runs["prefetch"] == "none")]
    p = plots.mrc(lru, tmp_path / "mrc.svg")
    assert p.out is not None and p.notes == []
    # An MRC from an analysis (no policy column; a `method` column names the series).
    mattson = pd.DataFrame({"cache_blocks": [1, 2, 4, 8], "miss_ratio": [0.9, 0.7, 0.4, 0.2], "method": "mattson"})
    assert plots.mrc(mattson, tmp_path / "m.png").out is not None


def test_sequence_cdf_is_weighted_by_blocks(tmp_path):
    # 4 one-block requests and 1 four-block request: half the blocks sit in sequences of 1.
    x, y = plots.sequence_cdf_points(pd.Series({1: 4, 4: 1}))
    assert list(x) == [1, 4] and list(y) == [0.5, 1.0]
    long = pd.DataFrame(
        {"policy": ["lru", "lru", "dulo", "dulo"], "size_blocks": [1, 4, 1, 4], "requests": [4, 1, 1, 2]}
    )
    assert plots.sequence_cdf(long, tmp_path / "cdf.png").out is not None


def test_sequence_cdf_from_the_runs_column(runs, tmp_path):
    p = plots.sequence_cdf(runs.drop(columns=["request_sizes"]), tmp_path / "none.png")
    assert p.out is None and "request_sizes" in p.notes[0]
    # Real runs carry their disk request sizes: a few of them draw without a note.
    few = runs[(runs.cache_blocks == runs.cache_blocks.min()) & (runs.prefetch == "linux")]
    drawn = plots.sequence_cdf(few, tmp_path / "real.png")
    assert drawn.out is not None and not drawn.notes and len(few) >= 2
    some = runs.head(2).assign(request_sizes=[json.dumps({"1": 10, "8": 5}), json.dumps({"2": 3})])
    long = plots.sequence_sizes(some)
    assert sorted(long["size_blocks"]) == [1, 2, 8] and long["requests"].sum() == 18
    assert {"policy", "cache_blocks"} <= set(long.columns)
    assert plots.sequence_cdf(some, tmp_path / "cdf.pdf").out is not None


def test_partition_timeline_shapes(tmp_path):
    long = pd.DataFrame(
        {"time": [0, 0, 100, 100, 200, 200], "partition": ["arc", "mru1"] * 3, "size_blocks": [10, 0, 6, 4, 3, 7]}
    )
    assert plots.partition_timeline(long, tmp_path / "amp.png").out is not None
    assert plots.partition_timeline(long, tmp_path / "sa.svg", stacked=False).out is not None
    run = pd.DataFrame(
        {
            "key": ["k"],
            "policy": ["amp"],
            "cache_blocks": [10],
            "partition_timeline": [json.dumps({"unit": "s", "samples": [[0.5, "disk0", 4], [0.5, "disk1", 6]]})],
        }
    )
    exploded = plots.partition_sizes(run)
    assert list(exploded.columns[:3]) == ["time_s", "partition", "size_blocks"]
    assert plots.partition_timeline(run, tmp_path / "r.png").out is not None


def test_temporal_distances_round_up_to_powers_of_two(tmp_path):
    # MQ §2: in ABCDBAX the distance of A6 is 5 and of B5 is 3; 5 counts in bin 8, 3 in bin 4.
    bins = plots.power_of_two_bins(pd.DataFrame({"distance": [5, 3, 1, 2, 8, 9], "count": [1] * 6}))
    assert bins.to_dict() == {1: 1, 2: 1, 4: 1, 8: 2, 16: 1}
    assert plots.temporal_distance(pd.DataFrame({"distance": [5, 3], "count": [2, 1]}), tmp_path / "t.png").out


def test_policy_colours_are_stable_and_distinct():
    assert plots.policy_colour("lru") == plots.policy_colour("LRU") == plots.policy_colour("lru(x=1)")
    assert len({plots.policy_colour(p) for p in ["lru", "fifo", "clock", "lfu", "opt", "mru", "random"]}) == 7
    assert plots.policy_colour("some-new-policy") == plots.policy_colour("some-new-policy")


def test_filters(runs):
    df = plots.select(runs, policies=["lru"], prefetches=["linux"], traces=["cloudphysics_vscsi.csv"])
    assert len(df) == 8 and set(df["policy"]) == {"lru"}
    assert len(plots.select(runs, traces=[runs["trace_hash"].iloc[0][:8]])) == 64
    assert plots.select(runs, traces=["other.csv"]).empty


def cli(capsys, *args) -> tuple[int, str, str]:
    """`bufsim ARGS` in this process (the subprocess path is covered by the report test)."""
    from bufsim.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli(sweep_db, tmp_path, capsys):
    out = tmp_path / "fig.svg"
    code, _, err = cli(capsys, "plot", "prefetch", sweep_db, "-o", out, "--policy", "lru", "--policy", "clock")
    assert code == 0, err
    assert out.exists() and "note: execution time" in err
    code, _, err = cli(
        capsys, "plot", "hit-ratio", sweep_db, "-o", tmp_path / "c.png", "--cache", "4MiB", "--cache", "8MiB"
    )
    assert code == 0, err
    code, out, _ = cli(
        capsys, "plot", "seq-cdf", sweep_db, "-o", tmp_path / "s.png", "-c", "1024blocks", "--prefetch", "linux"
    )
    assert code == 0 and "wrote" in out
    code, _, err = cli(capsys, "plot", "partitions", sweep_db, "-o", tmp_path / "p.png")
    assert code == 2 and "nothing to plot" in err and "partition_timeline" in err
    code, _, err = cli(capsys, "plot", "hit-ratio", sweep_db, "-o", tmp_path / "x.jpeg")
    assert code == 2 and "end the name with .png, .pdf or .svg" in err
    code, _, err = cli(capsys, "plot", "hit-ratio", tmp_path / "missing.duckdb", "-o", out)
    assert code == 2 and "no such file" in err
    csv = tmp_path / "td.csv"
    csv.write_text("distance,count\n1,5\n3,7\n64,2\n")
    assert cli(capsys, "plot", "tdist", csv, "-o", tmp_path / "td.png")[0] == 0
    pq = tmp_path / "runs.parquet"
    assert cli(capsys, "results", "export", sweep_db, "-o", pq)[0] == 0
    code, _, err = cli(capsys, "plot", "mrc", pq, "-o", tmp_path / "mrc.pdf", "--prefetch", "none")
    assert code == 0, err


def test_a_metric_empty_in_every_selected_run_is_named_with_what_to_do(tmp_path, capsys):
    """A database of timed and count-mode runs has an `exec_time_s` column that the count-mode
    runs leave NULL, and a hand-edited one may hold a NULL ratio: the note (and, when nothing
    could be drawn, the error) once said "no `hit_ratio` column in these results" of a column
    that is there, and gave no way out."""
    import shutil

    import duckdb

    db = timed_and_count_db(tmp_path / "r.duckdb")
    code, _, err = cli(capsys, "plot", "prefetch", db, "-o", tmp_path / "fifo.png", "--policy", "fifo")
    assert code == 0, err
    assert err.splitlines() == [
        "bufsim: note: execution time (s): `exec_time_s` is empty for every selected run (runs made without "
        "--timing?); select timed runs, or run the sweep in timed mode (--timing)"
    ]
    code, _, err = cli(capsys, "plot", "prefetch", db, "-o", tmp_path / "both.png")
    assert code == 0 and err == "", err

    # With several traces, one whose runs all lack the metric leaves its panel blank: a note says why.
    add_runs(db, MD5GREP, "-p", "lru", "-c", "64blocks")
    code, _, err = cli(capsys, "plot", "prefetch", db, "-o", tmp_path / "two.png")
    assert code == 0, err
    assert "`exec_time_s` is empty for every selected run of md5grep.csv.gz (runs made without --timing?)" in err

    # Nothing to draw: one line naming the metric and what to do, exit status 2, no figure.
    edited = tmp_path / "edited.duckdb"
    shutil.copy(db, edited)
    with duckdb.connect(str(edited)) as con:
        con.execute("UPDATE runs SET hit_ratio = NULL, miss_ratio = NULL WHERE policy = 'fifo'")
    for kind, column, label in (("hit-ratio", "hit_ratio", "hit ratio"), ("mrc", "miss_ratio", "miss ratio")):
        out = tmp_path / f"{kind}.png"
        code, _, err = cli(capsys, "plot", kind, edited, "-o", out, "--policy", "fifo")
        assert code == 2 and err == (
            f"bufsim: error: {edited}: nothing to plot for `{kind}` ({label}: `{column}` is empty for every "
            "selected run; select runs that have it (--trace, --policy, --prefetch, --cache) or plot another kind)\n"
        ), err
        assert not out.exists()
        assert cli(capsys, "plot", kind, edited, "-o", out)[0] == 0  # the other runs have it


def test_prefetch_panels_name_an_empty_execution_time_column(runs, tmp_path):
    p = plots.prefetch_panels(runs.assign(exec_time_s=np.nan), tmp_path / "p.png")
    assert p.panels == 2
    assert p.notes == [
        "execution time (s): `exec_time_s` is empty for every selected run (runs made without --timing?); "
        "select timed runs, or run the sweep in timed mode (--timing)"
    ]
    p = plots.hit_ratio(runs.assign(hit_ratio=None), tmp_path / "h.png")
    assert p.out is None and not (tmp_path / "h.png").exists()
    assert p.notes == [
        "hit ratio: `hit_ratio` is empty for every selected run; select runs that have it (--trace, --policy, "
        "--prefetch, --cache) or plot another kind"
    ]


def test_a_setting_that_count_mode_runs_leave_empty_is_left_out_of_their_labels(tmp_path):
    """Timed runs record a device, hit rule, I/O scheduler and think time; count-mode runs leave
    them NULL. In a figure of both, the settings split the series, and the count-mode entry once
    read `fifo device=nan hit_rule=nan io_scheduler=nan think=nan timing=False`."""
    db = timed_and_count_db(tmp_path / "r.duckdb")
    add_runs(db, MD5GREP, "-p", "lru", "-c", "64blocks")
    df = plots.load(db)
    assert {"device", "hit_rule", "timing"} <= set(plots.series_columns(df))
    p = plots.prefetch_panels(df, tmp_path / "p.png")
    labels = sorted({line.get_label() for ax in p.figure.axes for line in ax.get_lines()})
    timed = [lb for lb in labels if lb.startswith("lru device=")]
    assert labels == sorted(["fifo timing=False", "lru timing=False", *timed]) and len(timed) == 1, labels
    assert "hit_rule=" in timed[0] and timed[0].endswith("timing=True"), timed
    legend = [t.get_text() for leg in p.figure.legends for t in leg.get_texts()]
    assert len(legend) == 3 and not any("nan" in t for t in legend), legend
    # Sequence-size CDF panels are titled by the same settings.
    p = plots.sequence_cdf(df, tmp_path / "c.png")
    titles = [ax.get_title(loc="left").replace("\n", " ") for ax in p.figure.axes if ax.get_visible()]
    assert "grep.csv.gz, fifo, timing=False" in titles and "md5grep.csv.gz, lru, timing=False" in titles, titles
    assert not any("nan" in t or ", ," in t for t in titles), titles
