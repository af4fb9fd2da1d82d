"""Results as the core defines them (``crates/bufsim-core/src/row.rs``): the result table is
read once from the core and :class:`Result` is generated from it, so a field added to the core
reaches Python, sweep DataFrames and results databases without another edit.

A low-level module: it imports nothing of bufsim but the core."""

from __future__ import annotations

from dataclasses import asdict, field, make_dataclass
from typing import Any, Mapping, Optional

from bufsim import _core

RESULT_FIELDS: list[dict[str, Any]] = _core.result_fields()
"""The core's result table: name, kind, sql, unit, timed, doc of every field of a result."""

TIMING_FIELDS = [f["name"] for f in RESULT_FIELDS if f["timed"]]
"""Fields that only timed runs fill."""

_PY_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "histogram": dict, "json": Any}


class _ResultMethods:
    """What a result knows beyond its fields."""

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
        return asdict(self)  # type: ignore[call-overload]

    def _repr_html_(self) -> str:
        """A table in Jupyter (docs/study.ipynb)."""
        from bufsim.display import result_html

        return result_html(self)


Result = make_dataclass(
    "Result",
    [(f["name"], Optional[_PY_TYPES.get(f.get("kind"), Any)], field(default=None, metadata=f)) for f in RESULT_FIELDS],
    bases=(_ResultMethods,),
    frozen=True,
)
Result.__module__ = __name__
Result.__doc__ = (
    "Counters of one (policy, read-ahead, cache size) run over a trace; with timing, also its "
    "execution time and I/O timing (``None`` in count mode). Fields, units and meanings are the "
    "core's result table, ``bufsim.RESULT_FIELDS``; see docs/timing.md."
)


def result_of(row: Mapping[str, Any]) -> Any:
    """A :class:`Result` from a row of the core (histogram keys back to integers)."""
    vals = dict(row)
    for f in RESULT_FIELDS:
        v = vals.get(f["name"])
        if f["kind"] == "histogram" and v is not None:
            vals[f["name"]] = {int(k): int(n) for k, n in v.items()}
    return Result(**{f["name"]: vals.get(f["name"]) for f in RESULT_FIELDS})
