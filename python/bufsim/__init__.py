"""bufsim: a trace-driven buffer cache simulator.

    >>> import bufsim
    >>> r = bufsim.simulate("trace.csv", policy="lru", cache="64MiB")   # doctest: +SKIP
    >>> r.hit_ratio                                                      # doctest: +SKIP

The simulation runs in Rust (``bufsim._core``); this package holds the Python conveniences:
results as plain objects and pandas DataFrames, the ``bufsim`` command line, and errors as
specific exceptions carrying the same one-line messages the command line prints.
"""

from bufsim._core import BufsimError, SpecError, TraceFormatError, __version__
from bufsim.api import RESULT_FIELDS, Result, devices, policies, prefetchers, registry, run, simulate, sweep
from bufsim.options import OPTION_FIELDS, Options
from bufsim.hierarchy import FirstLevel, filter_trace
from bufsim.amp import detect, generate, generators, partition_timeline, plot_partition_timeline
from bufsim.analysis import Analysis, analyze, distance_breakdown, mrc
from bufsim.formats import SkippedRecordsWarning, convert

__all__ = [
    "__version__",
    "Analysis",
    "analyze",
    "BufsimError",
    "convert",
    "detect",
    "devices",
    "distance_breakdown",
    "filter_trace",
    "FirstLevel",
    "generate",
    "generators",
    "mrc",
    "OPTION_FIELDS",
    "Options",
    "partition_timeline",
    "plot_partition_timeline",
    "policies",
    "prefetchers",
    "registry",
    "Result",
    "RESULT_FIELDS",
    "run",
    "simulate",
    "SkippedRecordsWarning",
    "SpecError",
    "sweep",
    "TraceFormatError",
]
