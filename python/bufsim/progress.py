"""Progress with an estimate of the remaining time, on standard error, for work that can take
more than a couple of seconds (window runs of a heatmap, sweeps, long analyses).

A thin layer over tqdm (a well-kept library; bufsim draws no bar of its own): shown when standard
error is a terminal, quiet otherwise (logs, CI, pipes) unless asked with ``show=True`` or the
environment variable ``BUFSIM_PROGRESS=1`` (``0`` silences it everywhere)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Callable, Iterable, Optional, TypeVar

    T = TypeVar("T")

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
    from bufsim.errors import require

    # The terminal bar even in Jupyter (no widget dependency).
    tqdm = require("tqdm.std").tqdm
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


def track(call: Callable[..., T], *args: Any, show: Optional[bool] = None, desc: str = "", **kwargs: Any) -> T:
    """Calls a function of the native core that takes ``progress=`` (a ``_core.Progress``) and
    draws its stages (reading the trace in bytes, simulating in requests) as bars with the time
    left while it runs, from a thread polling the counters four times a second. Without a bar to
    show, the call runs as it is."""
    if not wanted(show):
        return call(*args, **kwargs)
    import threading

    from bufsim import _core
    from bufsim.errors import require

    # Here, not in the thread, where a missing package would end only the bars, with a traceback.
    require("tqdm.std")

    counters = _core.Progress()
    stop = threading.Event()

    def draw() -> None:
        shown, serial = None, 0
        try:
            while True:
                done_waiting = stop.wait(0.25)
                s, what, unit, done, total = counters.snapshot()
                if s != serial and s:
                    if shown is not None:
                        shown.close()
                    serial = s
                    label = f"{desc}: {what}" if desc else what
                    scale = unit == "B"
                    shown = bar(total=total or None, desc=label, unit=unit, show=True, mininterval=0)
                    shown.unit_scale = scale
                    shown.unit_divisor = 1024 if scale else 1000
                if shown is not None:
                    shown.update(done - shown.n)
                if done_waiting:
                    break
        finally:
            if shown is not None:
                shown.close()

    t = threading.Thread(target=draw, name="bufsim-progress", daemon=True)
    t.start()
    try:
        return call(*args, progress=counters, **kwargs)
    finally:
        stop.set()
        t.join()
