"""The prefetching paper's and DULO's main evaluations on the workload suite (`bufsim reproduce
prefetch-figures --quick` and `dulo-figures --quick`): at least ten stated findings each, at
least 80% of them agree, the key ones agree, and the figures are drawn."""

from __future__ import annotations

import pytest

from bufsim.reproduce import REPRODUCTIONS
from conftest import ROOT

pytestmark = pytest.mark.skipif(
    not (ROOT / "traces" / "kernel" / "workloads.json").exists(), reason="the workload suite is not recorded"
)


def run_quick(name: str):
    reproduction = REPRODUCTIONS[name]
    rows = reproduction(quick=True)
    return rows, reproduction.findings(rows)


@pytest.fixture(scope="module")
def prefetch():
    return run_quick("prefetch-figures")


@pytest.fixture(scope="module")
def dulo():
    return run_quick("dulo-figures")


def agreeing(findings, text: str) -> bool:
    matches = [f for f in findings if text in f.finding]
    assert matches, f"no finding mentions {text!r}"
    return all(f.agrees for f in matches)


def test_prefetch_figures_agree_with_the_paper(prefetch):
    rows, findings = prefetch
    assert len(findings) >= 10
    differ = [f for f in findings if not f.agrees]
    assert len(differ) <= 0.2 * len(findings), differ
    # Key findings: gcc barely changes; cscope's requests fall and turn asynchronous, and the
    # schemes' hit ratios draw together.
    assert agreeing(findings, "gcc, key size: hit ratio, disk requests and execution time almost identical")
    assert agreeing(findings, "cscope, key size: with read-ahead, disk requests fall")
    assert agreeing(findings, "read-ahead replaces synchronous requests by asynchronous ones")
    assert agreeing(findings, "narrows the hit-ratio gap between 2Q and OPT")
    lru = next(r for r in rows if r["app"] == "cscope" and r["policy"] == "LRU" and r["prefetch"] != "none")
    assert lru["async_requests"] > lru["sync_requests"], lru


def test_dulo_figures_agree_with_the_paper(dulo):
    rows, findings = dulo
    assert len(findings) >= 10
    differ = [f for f in findings if not f.agrees]
    assert len(differ) <= 0.2 * len(findings), differ
    assert agreeing(findings, "DULO equals CLOCK")
    assert agreeing(findings, "mixed (multi1): DULO reduces execution time")
    # Sequences grow past 40 and 120 blocks (128-block clusters and read-ahead windows).
    assert max(max(r["request_sizes"]) for r in rows) > 120
    assert any(r["in_40"] > 10 for r in rows)


def test_the_figures_are_drawn(prefetch, dulo, tmp_path):
    from bufsim.reproduce_dulo import draw_dulo_figures
    from bufsim.reproduce_prefetch import draw_prefetch_figures

    paths = draw_prefetch_figures(prefetch[0], tmp_path / "p") + draw_dulo_figures(dulo[0], tmp_path / "d")
    names = sorted(p.name for p in paths)
    assert "prefetch-cscope.png" in names and "dulo-multi1-cdf.png" in names, names
    assert all(p.stat().st_size > 10_000 for p in paths)
