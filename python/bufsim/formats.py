"""Trace formats: converting any trace into bufsim's binary format, and reporting the malformed
records a ``skip_bad`` read passed over."""

from __future__ import annotations

import os
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Optional, Union

from bufsim import _core

PathLike = Union[str, "os.PathLike[str]"]

FORMATS: list[str] = list(_core.FORMATS)
"""Every name ``format=`` takes besides ``"auto"`` (``blkparse`` also takes ``blkparse(event=C)``)."""


class SkippedRecordsWarning(UserWarning):
    """A ``skip_bad=True`` read passed over malformed records; the message says how many and where."""


def warn_skipped(trace: PathLike, summary: str) -> None:
    if summary:
        warnings.warn(f"{os.fspath(trace)}: {summary}", SkippedRecordsWarning, stacklevel=3)


@dataclass(frozen=True)
class Conversion:
    """What :func:`convert` read and wrote."""

    format: str
    """The input's format (detected or given)."""
    requests: int
    names: int
    """File (or device) names in the output's name table."""
    bytes: int
    """Size of the output file."""
    skipped_records: int
    skipped: str
    """One line locating the first skipped records ("" when none were skipped)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def convert(
    trace: PathLike, out: PathLike, *, format: str = "auto", skip_bad: bool = False, progress: Optional[bool] = None
) -> Conversion:
    """Converts ``trace`` (any format bufsim reads, gzip or zstd compressed or not) into bufsim's
    binary format at ``out`` (``.bst``: fixed-size records, memory-mapped when read; see
    docs/trace-formats.md). With ``skip_bad`` malformed records are counted and left out (a
    :class:`SkippedRecordsWarning` says where) instead of stopping the conversion. A failed
    conversion leaves no output file. Raises ``FileNotFoundError``, ``TraceFormatError`` or
    ``SpecError`` (unknown format name)."""
    from bufsim.progress import track

    d = track(_core.convert, os.fspath(trace), os.fspath(out), format=format, skip_bad=skip_bad, show=progress)
    result = Conversion(**d)
    warn_skipped(trace, result.skipped)
    return result


def detect_format(trace: PathLike) -> str:
    """The format bufsim reads ``trace`` as, told from its content (never its name)."""
    return _core.detect_format(os.fspath(trace))
