"""The example notebook docs/study.ipynb runs from top to bottom in a fresh kernel, its tables
and figures come out, and it is stored without outputs."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_study_notebook_executes():
    nb = nbformat.read(DOCS / "study.ipynb", as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "store it without outputs"
    # The notebook writes its figures to a fresh temporary directory, as a reader's run should;
    # the test removes the ones its run made.
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("bufsim-study-*"))
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(DOCS)}}).execute()
    finally:
        for made in set(temp.glob("bufsim-study-*")) - before:
            shutil.rmtree(made, ignore_errors=True)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("<b>" in h and "miss_ratio" in h for h in html), "the sweep renders as a table"
    assert any("arc, 4096 blocks" in h for h in html), "a Result renders as a table"
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 4  # tdist, mrc, miss-ratio, heatmap
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "report.html" in text and "hit-ratio.pdf" in text and "heatmap.png" in text
