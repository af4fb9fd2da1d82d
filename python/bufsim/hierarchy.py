"""Multi-level caches (the MQ paper): first-level client caches whose misses form the stream a
shared second-level cache sees (the Table 3 breakdown, with ``first_level=``, is
:func:`bufsim.distance_breakdown`)."""

from __future__ import annotations

import contextlib
import numbers
import os

from bufsim import _core
from bufsim._core import SpecError
from bufsim.frozen import Frozen
from bufsim.options import Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

    import pandas

    from bufsim.options import PathLike, SizeLike

CLIENT_COLUMNS = ("all", "pid", "device")


class FirstLevel(Frozen):
    """The first level of a hierarchy: one cache per client, all alike unless ``clients`` names
    one (``{3: ("lru", "16MiB")}``). ``client`` says which trace column tells clients apart:
    ``all`` (one client), ``pid`` or ``device``. With ``write_back`` writes stay in the client
    cache and reach the second level when a dirty block is evicted; otherwise every first-level
    miss, read or write, goes down as itself. A size of 0 passes everything down. Read-only;
    two first levels with the same fields are equal."""

    __slots__ = ("policy", "cache", "client", "write_back", "clients")
    #: Each field's default, in order (the command line's defaults too).
    DEFAULTS = {"policy": "lru", "cache": "8MiB", "client": "all", "write_back": False, "clients": None}

    def __init__(
        self,
        policy: str = "lru",
        cache: SizeLike = "8MiB",
        client: str = "all",
        write_back: bool = False,
        clients: Mapping[int, tuple[str, SizeLike]] | None = None,
    ):
        clients = {} if clients is None else clients
        if client not in CLIENT_COLUMNS:
            raise SpecError(f"unknown client column `{client}`; use one of {', '.join(CLIENT_COLUMNS)}")
        for k, v in clients.items():
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
                raise SpecError(f"client ids are non-negative integers, not {k!r}")
            if not (isinstance(v, (tuple, list)) and len(v) == 2):
                raise SpecError(f"client {k}: give (policy, size), not {v!r}")
        self._fill((policy, cache, client, write_back, clients))

    def to_mapping(self) -> dict[str, Any]:
        """The first level as the core's ``first_level`` option reads it (a TOML table's shape)."""
        return {
            "policy": str(self.policy),
            "cache": self.cache,
            "client": self.client,
            "write_back": self.write_back,
            "clients": {str(k): [str(p), s] for k, (p, s) in sorted(self.clients.items())},
        }

    @classmethod
    def parse_client(cls, text: str) -> tuple[int, tuple[str, str]]:
        """Parses a command-line override ``ID=SPEC@SIZE``, e.g. ``3=lru@16MiB``."""
        ident, eq, rest = text.partition("=")
        spec, at, size = rest.rpartition("@")
        if not eq or not at or not ident.strip().isdigit() or not spec or not size:
            raise SpecError(f"first-level client `{text}` must look like ID=SPEC@SIZE, e.g. 3=lru@16MiB")
        return int(ident), (spec.strip(), size.strip())

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "first_level") -> "FirstLevel":
        """From a TOML table: ``policy``, ``cache``, ``client``, ``write_back``, and ``clients``
        (a table of ``"ID" = ["SPEC", "SIZE"]``)."""
        known = {"policy", "cache", "client", "write_back", "clients"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        clients = {}
        for k, v in dict(data.get("clients", {})).items():
            if not str(k).isdigit():
                raise SpecError(f"{where}.clients: client ids are integers, not {k!r}")
            clients[int(k)] = tuple(v)
        d = cls.DEFAULTS
        return cls(
            policy=data.get("policy", d["policy"]),
            cache=data.get("cache", d["cache"]),
            client=data.get("client", d["client"]),
            write_back=bool(data.get("write_back", d["write_back"])),
            clients=clients,
        )


def filter_trace(trace: PathLike, out: PathLike, first_level: FirstLevel, **options: Any) -> "pandas.DataFrame":
    """Writes the second-level stream of ``trace`` through ``first_level`` to ``out`` as a
    ``block-csv`` trace (device-addressed: a storage server sees device blocks) and returns the
    first level's counters, one row per client. The stream is exactly the first-level misses
    (and write-backs) in order. Other keywords are run options (``format``, ``block_size``,
    ``reads_only``, ``seed``)."""
    import pandas as pd

    if not isinstance(first_level, FirstLevel):
        raise SpecError("first_level must be a bufsim.FirstLevel")
    if not os.fspath(out).endswith(".csv"):
        raise SpecError(f"{os.fspath(out)}: the second-level stream is written as block-csv; name the output *.csv")
    opts = Options(options, first_level=first_level)
    try:
        written, rows = _core.filter_trace(os.fspath(trace), os.fspath(out), opts.to_json())
    except SpecError:
        # An override of a client the trace lacks is found once the trace has been read: a
        # stream written without the override asked for is no result.
        with contextlib.suppress(OSError):
            os.remove(out)
        raise
    df = pd.DataFrame(rows, columns=["client", "cache_blocks", "accesses", "hits", "misses", "write_backs"])
    df.attrs["requests_written"] = written
    return df
