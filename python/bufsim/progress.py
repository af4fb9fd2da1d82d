"""Progress with an estimate of the remaining time, on standard error, for work that can take
more than a couple of seconds (window runs of a heatmap, sweeps, long analyses).

A thin layer over tqdm (a well-kept library; bufsim draws no bar of its own): shown when standard
error is a terminal, quiet otherwise (logs, CI, pipes) unless asked with ``show=True`` or the
environment variable ``BUFSIM_PROGRESS=1`` (``0`` silences it everywhere)."""

from __future__ import annotations

import os
import sys
from typing import IO, Any, Iterable, Optional

ENV = "BUFSIM_PROGRESS"


def wanted(show: Optional[bool] = None, file: Optional[IO[str]] = None) -> bool:
    """Whether to show progress: ``show`` when given, else ``BUFSIM_PROGRESS`` (1 or 0), else
    whether ``file`` (standard error by default) is a terminal."""
    if show is not None:
        return bool(show)
    env = os.environ.get(ENV, "").strip().lower()
    if env in ("1", "yes", "true", "always"):
        return True
    if env in ("0", "no", "false", "never"):
        return False
    stream = file if file is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def bar(
    iterable: Optional[Iterable[Any]] = None,
    *,
    total: Optional[float] = None,
    desc: str = "",
    unit: str = "it",
    show: Optional[bool] = None,
    file: Optional[IO[str]] = None,
    mininterval: float = 0.25,
):
    """A progress bar over ``iterable`` (or updated by hand: ``with bar(total=n) as b:
    b.update(1)``), with rate and time left; disabled as :func:`wanted` says. Standard error
    by default, so it never mixes with results printed on standard output."""
    from tqdm.std import tqdm  # the terminal bar even in Jupyter (no widget dependency)

    out = file if file is not None else sys.stderr
    return tqdm(
        iterable,
        total=total,
        desc=desc or None,
        unit=unit,
        file=out,
        disable=not wanted(show, out),
        leave=False,
        dynamic_ncols=True,
        mininterval=mininterval,
        smoothing=0.1,
    )
