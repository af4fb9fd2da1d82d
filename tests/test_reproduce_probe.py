"""The rules that judge the reproductions' findings, on hand-made rows: each verdict must follow
from the `paper` and `bufsim` cells printed beside it, and a finding must be able to differ."""

from __future__ import annotations

from bufsim.reproduce import _amp_table1_findings
from bufsim.reproduce_mq import ONLINE, mq_tables_findings


def _amp_row(stream: str, correct: str, paper_amp: str, amp: str) -> dict:
    return {
        "stream": stream,
        "r_bar": 0.5,
        "paper_r_bar": 0.5,
        "correct": correct,
        "amp": amp,
        "paper_amp": paper_amp,
        "pcc": correct,
        "paper_pcc": correct,
        "dear": correct,
        "paper_dear": correct,
        "description": "",
    }


def test_amp_table1_compares_amp_with_the_papers_amp_column():
    """Where the paper's AMP column missed its correct column, the finding is that miss: ours
    agrees by repeating it and differs by being right."""
    rows = [
        _amp_row("a", "other", "other", "other"),  # paper right, ours right
        _amp_row("b", "loop", "loop", "other"),  # paper right, ours wrong
        _amp_row("c", "loop", "other", "other"),  # paper wrong, ours repeats it
        _amp_row("d", "loop", "other", "loop"),  # paper wrong, ours right
    ]
    amp = {f.finding: f for f in _amp_table1_findings(rows) if "AMP classifies" in f.finding}
    assert {name: f.agrees for name, f in amp.items()} == {
        "stream a (other): AMP classifies it correctly": True,
        "stream b (loop): AMP classifies it correctly": False,
        "stream c (loop): AMP classifies it wrongly, as other": True,
        "stream d (loop): AMP classifies it wrongly, as other": False,
    }
    for f in amp.values():
        assert f.agrees == (f.paper == f.bufsim), f


def _mq_rows(from_512: float, mq_below: int, mq_above: int) -> list[dict]:
    """One stream's rows, as `mq_tables` builds them, with the two measures under test."""
    t2 = {"table": "2", "stream": "s", "blocks": 2048, "OPT": 50.0}
    t2 |= {c: 40.0 - i for i, c in enumerate(ONLINE)}
    t3 = [
        {
            "table": "3",
            "stream": "s",
            "blocks": 2048,
            "policy": c,
            "below_hits": 10,
            "below_misses": mq_below if c == "MQ" else 0,
            "above_hits": 10,
            "above_misses": mq_above if c == "MQ" else 1000,
        }
        for c in ["OPT", *ONLINE]
    ]
    fig3 = {"table": "figure 3", "stream": "s", "first_level": 1024, "peak": 4096, "from_512": from_512}
    top = {"table": "figure 4, top 10% of blocks", "stream": "s", "access_share": 0.6}
    return [t2, *t3, fig3, top]


def _finding(rows: list[dict], key: str):
    (f,) = [f for f in mq_tables_findings(rows) if key in f.finding]
    return f


def test_mq_figure2_cell_shows_what_the_rule_judged():
    """98.9% of correlated accesses at 512 or farther is below the paper's 99%: the cell must not
    round it to "99%" beside `differs`."""
    below = _finding(_mq_rows(0.989, 1, 9), "Figure 2: 99%")
    assert (below.bufsim, below.agrees) == ("98.9%", False)
    at = _finding(_mq_rows(0.99, 1, 9), "Figure 2: 99%")
    assert (at.bufsim, at.agrees) == ("99.0%", True)


def test_mq_misses_below_share_is_judged_on_the_printed_percent():
    # 105 of 1000 is 10.5%: printed as a whole percent, and judged on that same number.
    for below, above in ((100, 900), (105, 895), (106, 894), (115, 885)):
        f = _finding(_mq_rows(0.99, below, above), "only about 10% of its misses")
        assert f.agrees == (int(f.bufsim.rstrip("%")) <= 10), f
    assert _finding(_mq_rows(0.99, 100, 900), "only about 10% of its misses").agrees
    assert not _finding(_mq_rows(0.99, 110, 890), "only about 10% of its misses").agrees


def _fake(monkeypatch, rows, figures):
    """Registers a reproduction `probe` whose rows and figures are the given functions."""
    from bufsim import reproduce
    from bufsim.findings import equal

    fake = reproduce.Reproduction(rows, lambda rs: [equal("n", 1, len(rs))], quick=True, figures=figures)
    monkeypatch.setitem(reproduce.REPRODUCTIONS, "probe", fake)
    return reproduce


def test_out_is_removed_when_the_run_is_interrupted(monkeypatch, tmp_path):
    """Ctrl-C during the runs leaves neither the directories --out made nor anything in them."""
    import pytest

    def rows(quick=False):
        raise KeyboardInterrupt

    reproduce = _fake(monkeypatch, rows, lambda rs, d: [])
    with pytest.raises(KeyboardInterrupt):
        reproduce.main("probe", quick=True, out=str(tmp_path / "new" / "figs"))
    assert list(tmp_path.iterdir()) == []
    # A directory that was there stays, and stays as it was.
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "old.png").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        reproduce.main("probe", quick=True, out=str(tmp_path / "kept"))
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["old.png"]


def test_out_keeps_no_partial_figures(monkeypatch, tmp_path):
    """A failure half way through drawing leaves none of the figures drawn before it; a whole set
    lands in --out with nothing else beside it."""
    import pytest

    def half(rows, directory):
        (directory / "a.png").write_text("a")
        raise OSError(28, "No space left on device")

    reproduce = _fake(monkeypatch, lambda quick=False: [{"x": 1}], half)
    with pytest.raises(OSError):
        reproduce.main("probe", quick=True, out=str(tmp_path / "figs"))
    assert list(tmp_path.iterdir()) == []

    def whole(rows, directory):
        for name in ("a.png", "b.png"):
            (directory / name).write_text(name)
        return [directory / "a.png", directory / "b.png"]

    reproduce = _fake(monkeypatch, lambda quick=False: [{"x": 1}], whole)
    assert reproduce.main("probe", quick=True, json_out=True, out=str(tmp_path / "figs")) == 0
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["a.png", "b.png"]


def test_out_that_takes_no_files_is_refused_before_the_runs(monkeypatch):
    """/proc is a directory that root's os.access calls writable; nothing can be created in it."""
    import pytest

    import bufsim

    def rows(quick=False):
        raise AssertionError("ran before refusing --out")

    reproduce = _fake(monkeypatch, rows, lambda rs, d: [])
    with pytest.raises(bufsim.SpecError, match="cannot write into this directory"):
        reproduce.main("probe", quick=True, out="/proc")


def test_quick_help_names_the_reproductions_that_have_a_reduced_version():
    import argparse

    from bufsim.cli.figures import add_commands
    from bufsim.reproduce import REPRODUCTIONS

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    rep = parser._subparsers._group_actions[0].choices["reproduce"]
    (quick,) = [a for a in rep._actions if "--quick" in a.option_strings]
    listed = quick.help.split("(", 1)[1].split(";", 1)[0]
    assert {n.strip() for n in listed.split(",")} == {n for n, r in REPRODUCTIONS.items() if r.quick}
