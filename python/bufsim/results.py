"""Results as the core defines them (``crates/bufsim-core/src/row.rs``): the result table is
read once from the core and :class:`Result` is generated from it, so a field added to the core
reaches Python, sweep DataFrames and results databases without another edit.

A low-level module: it imports nothing of bufsim but the core and `bufsim.frozen`."""

from __future__ import annotations

from bufsim import _core
from bufsim.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

RESULT_FIELDS: list[dict[str, Any]] = _core.result_fields()
"""The core's result table: name, kind, sql, unit, timed, doc of every field of a result."""

TIMING_FIELDS = [f["name"] for f in RESULT_FIELDS if f["timed"]]
"""Fields that only timed runs fill."""

_NAMES = tuple(f["name"] for f in RESULT_FIELDS)


class Result(Frozen):
    """Counters of one (policy, read-ahead, cache size) run over a trace; with timing, also its
    execution time and I/O timing (``None`` in count mode). Fields, units and meanings are the
    core's result table, ``bufsim.RESULT_FIELDS``; see docs/timing.md. A result is read-only and
    equal to another with the same fields."""

    __slots__ = _NAMES

    def __init__(self, *values: Any, **named: Any):
        if len(values) > len(_NAMES):
            raise TypeError(f"Result takes at most {len(_NAMES)} fields, {len(values)} given")
        given = dict(zip(_NAMES, values))
        for name, value in named.items():
            if name not in _NAMES:
                raise TypeError(f"Result has no field {name!r}")
            if name in given:
                raise TypeError(f"Result got field {name!r} twice")
            given[name] = value
        self._fill([given.get(n) for n in _NAMES])

    @property
    def timed(self) -> bool:
        return self.exec_time_s is not None  # type: ignore[attr-defined]

    def sequence_size_cdf(self) -> list[tuple[int, float]]:
        """DULO's sequence-size CDF (Figures 3 and 4): for each request size s seen, the share
        of the blocks read from disk that came in requests of at most s blocks."""
        sizes: dict[int, int] = self.request_sizes  # type: ignore[attr-defined]
        total = sum(size * n for size, n in sizes.items())
        out, acc = [], 0
        for size in sorted(sizes):
            acc += size * sizes[size]
            out.append((size, acc / total))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, in the core's order (histograms copied)."""
        return {n: (dict(v) if isinstance(v, dict) else v) for n, v in zip(_NAMES, self._values())}

    def _repr_html_(self) -> str:
        """A table in Jupyter (docs/study.ipynb)."""
        from bufsim.display import result_html

        return result_html(self)


def result_of(row: Mapping[str, Any]) -> Any:
    """A :class:`Result` from a row of the core (histogram keys back to integers)."""
    vals = dict(row)
    for f in RESULT_FIELDS:
        v = vals.get(f["name"])
        if f["kind"] == "histogram" and v is not None:
            vals[f["name"]] = {int(k): int(n) for k, n in v.items()}
    return Result(**{f["name"]: vals.get(f["name"]) for f in RESULT_FIELDS})
