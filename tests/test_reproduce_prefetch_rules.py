"""The rules that judge the prefetching paper's findings (python/bufsim/reproduce_prefetch.py), on
hand-made rows: a finding stated over every size is judged on every size run, the paper's sizes
in megabytes land on the same fraction of our working sets, and a stated flip agrees only when
the order really turns."""

from __future__ import annotations

import pytest

from bufsim import reproduce_prefetch as rp

SCHEMES = ["LRU", "LRU-2", "2Q", "LIRS", "LRFU", "MQ", "ARC"]


def row(app, fraction, policy, prefetch, hit, requests=1000, time=100.0):
    return {
        "app": app,
        "fraction": fraction,
        "policy": policy,
        "prefetch": prefetch,
        "hit_ratio": hit,
        "disk_requests": requests,
        "exec_time_s": time,
    }


def pair(app, fraction, policy, off, on):
    """A scheme's run without read-ahead and with it: (hit, requests, time) each."""
    return [row(app, fraction, policy, "none", *off), row(app, fraction, policy, "linux-accusim", *on)]


def finding(findings, name):
    (f,) = [f for f in findings if f.finding == name]
    return f


def test_a_finding_over_every_size_takes_every_size_not_the_last():
    # multi1's requests fall 90% at half size and 10% at the key size: 50% on average over both.
    # Pairing runs by scheme name alone kept only the key size's (10%).
    rows = []
    for p in SCHEMES:
        rows += pair("multi1", 0.5, p, (0.5, 1000, 100.0), (0.9, 100, 90.0))
        rows += pair("multi1", rp.KEY, p, (0.5, 1000, 100.0), (0.6, 900, 99.0))
    assert len(rp._every_size(rows, "multi1")) == 2 * len(SCHEMES)
    f = finding(rp._multi1_findings(rows), "multi1: read-ahead almost halves disk requests")
    assert f.bufsim == "50.0% fewer on average" and f.agrees


def test_the_impact_finding_counts_each_size_of_each_application():
    rows = []
    for fraction in (0.5, rp.KEY):
        for p in SCHEMES:
            rows += pair("gcc", fraction, p, (0.5,), (0.6,))
    # One scheme at one size does not move: one run of fourteen, so the finding differs.
    rows[1]["hit_ratio"] = 0.5
    (f,) = rp._impact_findings(rows)
    assert f.bufsim.startswith("13 of 14 runs") and not f.agrees


@pytest.mark.parametrize(
    "app, mb, fraction",
    [("cscope", 128, rp.KEY), ("multi1", 128, rp.KEY), ("glimpse", 32, 0.06), ("glimpse", 128, 0.23), ("gcc", 1, 1.0)],
)
def test_the_papers_sizes_are_the_same_fraction_of_our_working_sets(app, mb, fraction):
    assert rp.paper_size(app, mb) == fraction


def test_the_full_run_adds_the_sizes_the_text_names():
    assert rp.extra_fractions("glimpse") == [0.06, 0.11, 0.23]
    assert rp.extra_fractions("gcc") == [1.0]
    assert rp.extra_fractions("cscope") == rp.extra_fractions("multi1") == []


@pytest.mark.parametrize(
    "lirs, agrees",
    [
        ((0.60, 0.95), True),  # behind 2Q without read-ahead, ahead with it: the stated flip
        ((0.75, 0.95), False),  # ahead both ways
        ((0.60, 0.895), False),  # closer but still behind
    ],
)
def test_a_stated_flip_agrees_only_when_the_order_turns(lirs, agrees):
    rows = pair("multi1", rp.KEY, "2Q", (0.70,), (0.90,)) + pair("multi1", rp.KEY, "LIRS", (lirs[0],), (lirs[1],))
    f = finding(rp._stated_flip_findings(rows), "multi1 at the paper's 128 MB: read-ahead puts LIRS ahead of 2Q")
    assert f.agrees is agrees, f


def test_a_flip_whose_direction_is_unsaid_counts_either_way():
    assert rp._flipped(-2.0, 3.0, either=True) and rp._flipped(2.0, -3.0, either=True)
    assert not rp._flipped(-2.0, 3.0, either=False)
    # Within half a point is no order at all.
    assert not rp._flipped(0.4, -3.0, either=True)


def test_a_flip_at_a_size_not_run_is_left_out():
    # --quick runs the key size only: glimpse's flips at 32, 64 and 128 MB are not judged.
    rows = pair("glimpse", rp.KEY, "2Q", (0.5,), (0.6,)) + pair("glimpse", rp.KEY, "ARC", (0.6,), (0.5,))
    assert not [f for f in rp._stated_flip_findings(rows) if f.finding.startswith("glimpse")]


def lirs_rows(app, ten, one):
    """LIRS (10% HIR) and LIRS (1% HIR) at the key size: (hit, time) without and with read-ahead."""
    rows = []
    for name, ((h0, t0), (h1, t1)) in (("LIRS", ten), ("LIRS (1% HIR)", one)):
        rows += pair(app, rp.KEY, name, (h0, 1000, t0), (h1, 500, t1))
    for r in rows:
        r.update(prefetched=100, prefetched_unused=10)
    return rows


def test_the_hir_share_findings_judge_the_time_saving_kept_and_the_hit_ratio_without_read_ahead():
    # 1% keeps 40 of 100 s saved on a, 30 of 50 on b: median 50%, not under half -> differs;
    # c saves 1 s of 100 (under 5%) and is left out, whatever 1% does there.
    rows = lirs_rows("a", ((0.5, 200.0), (0.9, 100.0)), ((0.5, 200.0), (0.6, 160.0)))
    rows += lirs_rows("b", ((0.5, 100.0), (0.9, 50.0)), ((0.5, 100.0), (0.6, 70.0)))
    rows += lirs_rows("c", ((0.5, 100.0), (0.6, 99.0)), ((0.5, 100.0), (0.6, 150.0)))
    saving, no_worse = rp._lirs_hir_findings(rows)
    assert "keeps 50% of 10%'s time saving" in saving.bufsim and "over 2" in saving.bufsim
    assert not saving.agrees and no_worse.agrees
    # b keeps 10 of 50 s: the median is now 30%, under half; without read-ahead 10% is 2 points
    # below 1% on c, more than the point the second finding allows.
    rows = lirs_rows("a", ((0.5, 200.0), (0.9, 100.0)), ((0.5, 200.0), (0.6, 160.0)))
    rows += lirs_rows("b", ((0.5, 100.0), (0.9, 50.0)), ((0.5, 100.0), (0.6, 90.0)))
    rows += lirs_rows("c", ((0.50, 100.0), (0.6, 99.0)), ((0.52, 100.0), (0.6, 150.0)))
    saving, no_worse = rp._lirs_hir_findings(rows)
    assert saving.agrees and not no_worse.agrees and "2.0 points below 1% (c)" in no_worse.bufsim
