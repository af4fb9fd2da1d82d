"""bufsim: a trace-driven buffer cache simulator.

    >>> import bufsim
    >>> r = bufsim.simulate("trace.csv", policy="lru", cache="64MiB")   # doctest: +SKIP
    >>> r.hit_ratio                                                      # doctest: +SKIP

The simulation runs in Rust (``bufsim._core``); this package holds the Python conveniences:
results as plain objects and pandas DataFrames, the ``bufsim`` command line, and errors as
specific exceptions carrying the same one-line messages the command line prints.
"""

from bufsim._core import BufsimError, SpecError, TraceFormatError, __version__
from bufsim.api import Result, policies, prefetchers, simulate, sweep
from bufsim.formats import SkippedRecordsWarning, convert

__all__ = [
    "BufsimError",
    "Result",
    "SkippedRecordsWarning",
    "SpecError",
    "TraceFormatError",
    "__version__",
    "convert",
    "policies",
    "prefetchers",
    "simulate",
    "sweep",
]
