"""Figures for a two-column paper: every legend, title, axis label and tick label lies inside the
figure in PNG and PDF for many policy names (long parameterized specs included), no label is cut,
lines stay apart in grayscale, and the default title says what is drawn."""

from __future__ import annotations

import io
import itertools
import json
import warnings

import pandas as pd
import pytest
from matplotlib.colors import to_hex, to_rgb
from matplotlib.lines import Line2D

from bufsim import plots

LONG = ["lirs(hir=1%,hir-min=2,stack=2x)", "mq(queues=8,history=4x,lifetime=adaptive)", "opt"]
POLICY_SETS = {
    "three": ["lru", "arc", "mq"],
    "long": ["lru"] + LONG,
    "many": ["lru", "fifo", "clock", "lfu", "arc", "mq", "2q", "lirs", "mru", "random", "lrfu", "lfu(aging=dynamic)"]
    + LONG,
}


def runs(policies, *, traces=("/data/traces/cloudphysics_vscsi.csv",), prefetch=("none",), sizes=8):
    rows = []
    for t, (i, p), f, k in itertools.product(traces, enumerate(policies), prefetch, range(sizes)):
        hr = min(0.95, 0.1 + 0.08 * k + 0.01 * i)
        rows.append(
            {
                "trace": t,
                "policy": p,
                "prefetch": f,
                "cache_blocks": 1024 << k,
                "block_size": 4096,
                "hit_ratio": hr,
                "miss_ratio": 1 - hr,
                "disk_requests": int(1e6 * (1 - hr)),
                "exec_time_s": 100 * (1 - hr),
                "request_sizes": json.dumps({"1": 100 + k, "2": 10 + i, "16": 3 + k}),
            }
        )
    return pd.DataFrame(rows)


def outside(fig, fmt: str) -> list[str]:
    """Every artist whose extent leaves the figure when it is saved as `fmt`, measured with the
    renderer of that format during the save."""
    found: list[str] = []

    def check(event):
        r, fb = event.renderer, fig.bbox
        tol = 0.5

        def test(name, bb):
            if bb.width == 0 and bb.height == 0:
                return
            if bb.x0 < fb.x0 - tol or bb.y0 < fb.y0 - tol or bb.x1 > fb.x1 + tol or bb.y1 > fb.y1 + tol:
                found.append(f"{fmt}: {name} {bb.bounds} outside {fb.bounds}")

        texts = [("suptitle", fig._suptitle)] if fig._suptitle is not None else []
        for leg in list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
            test("legend", leg.get_window_extent(r))
            texts += [(f"legend text {t.get_text()!r}", t) for t in leg.get_texts()]
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            test("axes with its decorations", ax.get_tightbbox(r))
            texts += [
                ("title", ax.title),
                ("left title", ax._left_title),
                ("x label", ax.xaxis.label),
                ("y label", ax.yaxis.label),
            ]
            for axis in (ax.xaxis, ax.yaxis):
                texts += [(f"tick label {t.label1.get_text()!r}", t.label1) for t in axis._update_ticks()]
        for name, t in texts:
            if t.get_visible() and t.get_text():
                test(name, t.get_window_extent(r))

    cid = fig.canvas.mpl_connect("draw_event", check)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "constrained_layout not applied": panels collapsed
            fig.savefig(io.BytesIO(), format=fmt, dpi=200)
    finally:
        fig.canvas.mpl_disconnect(cid)
    return found


def legend_text(fig) -> str:
    legs = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return " ".join(t.get_text() for leg in legs for t in leg.get_texts())


def squeeze(s: str) -> str:
    return "".join(s.split())


def draw(kind, policies, tmp_path, **kw):
    df = runs(policies, **kw)
    if kind == "seq-cdf":
        return plots.sequence_cdf(df, tmp_path / "f.png")
    if kind == "tdist":
        td = pd.DataFrame(
            {
                "distance": [1, 3, 9, 70, 1000] * len(policies),
                "count": [5, 7, 2, 9, 1] * len(policies),
                "series": [p for p in policies for _ in range(5)],
            }
        )
        return plots.temporal_distance(td, tmp_path / "f.png")
    if kind == "partitions":
        long = pd.DataFrame(
            {
                "time": [0, 0, 100, 100],
                "partition": ["arc", "mru(queue=1,history=2x)"] * 2,
                "size_blocks": [10, 0, 6, 4],
                "policy": policies[-1],
                "cache_blocks": 10,
            }
        )
        return plots.partition_timeline(long, tmp_path / "f.png")
    return plots.KINDS[kind](df, tmp_path / "f.png")


@pytest.mark.parametrize("which", sorted(POLICY_SETS))
@pytest.mark.parametrize("kind", ["mrc", "hit-ratio", "prefetch", "seq-cdf", "tdist", "partitions"])
def test_every_text_stays_on_the_canvas(kind, which, tmp_path):
    policies = POLICY_SETS[which]
    p = draw(kind, policies, tmp_path)
    assert p.out is not None, p.notes
    for fmt in ("png", "pdf"):
        assert outside(p.figure, fmt) == []
    text = (
        squeeze(legend_text(p.figure))
        + squeeze(p.figure._suptitle.get_text() if p.figure._suptitle else "")
        + "".join(squeeze(ax.get_title(loc="left")) for ax in p.figure.axes)
    )
    if kind in ("mrc", "hit-ratio", "prefetch", "seq-cdf", "tdist"):
        if kind == "seq-cdf" and len(policies) > 12:  # one panel per policy, the first 12
            assert p.panels == 12 and "first 12" in p.notes[0]
            policies = policies[:12]
        for policy in policies:  # every name whole, wrapped at most ("opt" was once drawn as "op")
            assert squeeze(policy) in text, (policy, text)


def test_several_traces_and_read_ahead_settings_fit(tmp_path):
    df = runs(
        POLICY_SETS["long"],
        traces=("a/grep.csv.gz", "b/a_rather_long_trace_file_name_from_a_lab.blkparse"),
        prefetch=("none", "linux", "amp(trigger=2,degree=8)"),
    )
    for fn in (plots.hit_ratio, plots.prefetch_panels, plots.mrc):
        p = fn(df, tmp_path / "f.pdf")
        assert outside(p.figure, "pdf") == [] and outside(p.figure, "png") == []


def test_paper_sizes_and_fonts(tmp_path):
    one = plots.mrc(runs(["lru", "arc"]), tmp_path / "a.pdf").figure
    three = plots.prefetch_panels(runs(["lru", "arc"]), tmp_path / "b.pdf").figure
    assert one.get_figwidth() == 3.5 and three.get_figwidth() == 7.0
    sizes = {
        t.get_fontsize()
        for fig in (one, three)
        for t in fig.findobj(lambda a: hasattr(a, "get_fontsize"))
        if t.get_text()
    }
    assert sizes and min(sizes) >= 8 and max(sizes) <= 9, sizes


def grey(colour) -> float:
    r, g, b = to_rgb(colour)
    return 0.299 * r + 0.587 * g + 0.114 * b


@pytest.mark.parametrize("which", sorted(POLICY_SETS))
def test_lines_stay_apart_in_grayscale(which, tmp_path):
    policies = POLICY_SETS[which]
    p = plots.hit_ratio(runs(policies, prefetch=("none", "linux")), tmp_path / "g.png")
    lines = [ln for ln in p.figure.axes[0].get_lines() if isinstance(ln, Line2D)]
    assert len(lines) == 2 * len(policies)
    for a, b in itertools.combinations(lines, 2):
        apart = (
            abs(grey(a.get_color()) - grey(b.get_color())) >= 0.12
            or a.get_marker() != b.get_marker()
            or a.get_linestyle() != b.get_linestyle()
        )
        assert apart, (a.get_label(), b.get_label())


def test_lru_arc_mq_are_not_three_blues():
    colours = [to_rgb(plots.policy_colour(p)) for p in ("lru", "arc", "mq")]
    dominant = {max(range(3), key=lambda i: c[i]) for c in colours}
    assert len(dominant) == 3, [to_hex(c) for c in colours]
    assert len({plots.policy_marker(p) for p in ("lru", "arc", "mq")}) == 3


def test_sequence_cdf_sizes_darken_to_lighten():
    ramp = plots.cache_size_colours(8)
    levels = [grey(c) for c in ramp]
    assert levels == sorted(levels) and levels[-1] - levels[0] > 0.4


def test_default_title_says_what_is_drawn(tmp_path):
    df = runs(["lru", "arc", "mq"], traces=("/x/grep.csv.gz",))
    fig = plots.mrc(df, tmp_path / "m.png").figure
    assert fig._suptitle.get_text() == "Miss ratio vs cache size — grep, 3 policies"
    assert plots.mrc(df, tmp_path / "n.png", title="").figure._suptitle is None
    assert plots.hit_ratio(df, tmp_path / "h.png", title="Fig. 3").figure._suptitle.get_text() == "Fig. 3"


def test_wrap_label_breaks_at_parameters():
    assert plots.wrap_label("opt", 2) == "opt"
    wrapped = plots.wrap_label("mq(queues=8,history=4x,lifetime=adaptive)", 16)
    assert squeeze(wrapped) == "mq(queues=8,history=4x,lifetime=adaptive)"
    assert all(len(line) <= 19 for line in wrapped.split("\n")), wrapped
