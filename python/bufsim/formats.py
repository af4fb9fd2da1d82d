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


class DropsLeftOutWarning(UserWarning):
    """A conversion to libCacheSim's formats left out the trace's drop requests."""


def drops_note(trace: PathLike, drops: int, hints: int = 0) -> str:
    """The one line that says a conversion left out ``drops`` drop requests and ``hints`` hint
    requests ("" for none)."""
    if not drops and not hints:
        return ""
    parts = []
    if drops:
        parts.append(f"{drops} drop requests (truncated or deleted files; its replay keeps those blocks cached)")
    if hints:
        parts.append(f"{hints} hint requests (fadvise WILLNEED; its replay reads nothing ahead for them)")
    return (
        f"{os.fspath(trace)}: {' and '.join(parts)} left out: libCacheSim's formats hold accesses only; "
        "convert to .bst to keep them"
    )


def warn_skipped(trace: PathLike, summary: str) -> None:
    if summary:
        warnings.warn(skipped_text(trace, summary), SkippedRecordsWarning, stacklevel=3)


def skipped_text(trace: PathLike, summary: str) -> str:
    """The warning for the core's line on what a read passed over: the trace's name first,
    unless the line is one located note ("t.csv:9: ...") that names it already."""
    name = os.fspath(trace)
    return summary if summary.startswith(f"{name}:") else f"{name}: {summary}"


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
    drops_left_out: int = 0
    """Drop requests (truncated or deleted files) of the input that libCacheSim's formats cannot
    hold: its replay keeps the dropped blocks cached (a :class:`DropsLeftOutWarning` says so)."""
    hints_left_out: int = 0
    """Hint requests (fadvise WILLNEED) of the input that libCacheSim's formats cannot hold either
    (the same warning says so)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: What :func:`convert` writes: bufsim's binary and libCacheSim's two formats.
OUTPUT_FORMATS = ("bst", "oracle", "lcs-csv")


def output_format(out: PathLike, to: str = "auto") -> str:
    """The format ``to`` names, or with ``"auto"`` the one ``out``'s name says: a name ending in
    ``.oracleGeneral`` (``.bin`` may follow) is libCacheSim's oracleGeneral, anything else ``.bst``."""
    if to != "auto":
        if to not in OUTPUT_FORMATS:
            raise _core.SpecError(f"unknown output format `{to}`; use auto or one of {', '.join(OUTPUT_FORMATS)}")
        return to
    name = os.fspath(out).lower()
    return "oracle" if name.endswith((".oraclegeneral", ".oraclegeneral.bin")) else "bst"


def convert(
    trace: PathLike,
    out: PathLike,
    *,
    format: str = "auto",
    skip_bad: bool = False,
    progress: Optional[bool] = None,
    to: str = "auto",
    block_size: Union[int, str, None] = None,
    reads_only: bool = False,
) -> Conversion:
    """Converts ``trace`` (any format bufsim reads, gzip or zstd compressed or not) into bufsim's
    binary format at ``out`` (``.bst``: fixed-size records, read in large sequential reads; see
    docs/trace-formats.md), or with ``to="oracle"`` / ``"lcs-csv"`` (or ``out`` ending in
    ``.oracleGeneral``) into libCacheSim's oracleGeneral binary or csv: one record per block
    access of ``block_size`` bytes (the run option's default when None; ``reads_only`` keeps reads only), so libCacheSim can replay the
    stream bufsim simulates; a ``.bst`` holds every request in bytes, so either one given for it
    is a ``SpecError``. oracleGeneral's next-access times need a second pass, so its input
    must be a file (not a pipe). With ``skip_bad`` (``.bst`` only) malformed records are counted
    and left out (a :class:`SkippedRecordsWarning` says where) instead of stopping the conversion.
    A failed conversion leaves no output file. Progress shows on standard error when it is a
    terminal (``progress=True`` or ``False`` decides). Raises ``FileNotFoundError``,
    ``TraceFormatError`` or ``SpecError`` (unknown format name)."""
    from bufsim.options import block_size_bytes
    from bufsim.progress import track

    to = output_format(out, to)
    # A .bst stores requests as the trace has them (reads, writes, byte ranges); the block
    # size and reads-only apply when it is simulated. Refused, not ignored, so no one takes a
    # .bst for reads only that still holds the writes.
    given = [o for o, on in (("--reads-only", reads_only), ("--block-size", block_size is not None)) if on]
    if to == "bst" and given:
        options = " and ".join(given)
        raise _core.SpecError(
            f"{os.fspath(out)}: {options} {'is' if len(given) == 1 else 'are'} for --to oracle or lcs-csv output, "
            f"not .bst, which keeps every request as the trace has it; give {options} to the command that reads it"
        )
    d = track(
        _core.convert,
        os.fspath(trace),
        os.fspath(out),
        format=format,
        skip_bad=skip_bad,
        to=to,
        block_size=block_size_bytes(block_size),
        reads_only=bool(reads_only),
        show=progress,
    )
    result = Conversion(**d)
    warn_skipped(trace, result.skipped)
    note = drops_note(trace, result.drops_left_out, result.hints_left_out)
    if note:
        warnings.warn(note, DropsLeftOutWarning, stacklevel=2)
    return result


def detect_format(trace: PathLike) -> str:
    """The format bufsim reads ``trace`` as, told from its content (never its name)."""
    return _core.detect_format(os.fspath(trace))
