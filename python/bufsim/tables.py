"""Text tables: aligned columns, byte sizes, the table of run results, all drawn by the core
(crates/bufsim-cli), which the native `bufsim run` prints with too. A low-level module: it
imports nothing of bufsim but the core."""

from __future__ import annotations

from bufsim import _core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence


def human_bytes(n: int) -> str:
    """A byte count in binary units, as tables show it: ``64MiB``, ``1.5KiB``."""
    return _core.human_bytes(n)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool]) -> str:
    """An aligned text table: numbers right-aligned, text left-aligned (the core's, which
    ``bufsim run`` prints with)."""
    return _core.format_table([str(h) for h in headers], [[str(c) for c in r] for r in rows], list(right))


def results_text(results, as_json: bool = False) -> str:
    """What ``bufsim run`` prints for these results, drawn by the core as the native entry point
    draws it: the run table (read-ahead columns when some run prefetches, timing columns when
    some run is timed), or with ``as_json`` one JSON object per run and line."""
    import json

    return _core.results_text(json.dumps([r.to_dict() for r in results]), as_json)


def results_table(results) -> str:
    """The run table of :func:`results_text`."""
    return results_text(results)
