"""Multi-level caches (the MQ paper): first-level client caches whose misses form the stream a
shared second-level cache sees (the Table 3 breakdown, with ``first_level=``, is
:func:`bufsim.distance_breakdown`)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
import numbers
import os

from bufsim import _core
from bufsim._core import SpecError
from bufsim.errors import shown
from bufsim.frozen import Frozen
from bufsim.options import Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
        if not isinstance(policy, str):
            raise SpecError(f"first-level policy must be a spec such as 'lru', not {shown(policy)}")
        if isinstance(cache, bool) or not isinstance(cache, (str, numbers.Integral)):
            raise SpecError(
                f"first-level cache must be a number of blocks or a size such as '16MiB', not {shown(cache)}"
            )
        # A string is truthy: "false" taken as a flag would turn write-back on.
        if not _is_bool(write_back):
            raise SpecError(f"first-level write_back must be true or false, not {shown(write_back)}")
        if not isinstance(client, str) or client not in CLIENT_COLUMNS:
            raise SpecError(f"unknown client column `{client}`; use one of {', '.join(CLIENT_COLUMNS)}")
        for k, v in clients.items():
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
                raise SpecError(f"client ids are non-negative integers, not {k!r}")
            if not (isinstance(v, (tuple, list)) and len(v) == 2):
                raise SpecError(f"client {k}: give (policy, size), not {v!r}")
        self._fill((policy, cache, client, bool(write_back), clients))

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
        (a table of ``"ID" = ["SPEC", "SIZE"]``). Each value must have its TOML type (``write_back
        = true``, not ``"true"``); a SpecError names the key otherwise."""
        if not isinstance(data, Mapping):
            raise SpecError(f"{where} must be a table of {', '.join(cls.DEFAULTS)}, not {shown(data)}")
        known = {"policy", "cache", "client", "write_back", "clients"}
        unknown = sorted(str(k) for k in set(data) - known)
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        d = {**cls.DEFAULTS, **data}
        types = {
            "policy": (isinstance(d["policy"], str), 'a policy spec such as "lru"'),
            "cache": (
                isinstance(d["cache"], (str, int)) and not isinstance(d["cache"], bool),
                'a size such as "16MiB" or a number of blocks',
            ),
            "client": (isinstance(d["client"], str), f"one of {', '.join(CLIENT_COLUMNS)}"),
            "write_back": (_is_bool(d["write_back"]), "true or false"),
            "clients": (
                d["clients"] is None or isinstance(d["clients"], Mapping),
                'a table of "ID" = ["SPEC", "SIZE"]',
            ),
        }
        for key, (ok, want) in types.items():
            if not ok:
                raise SpecError(f"{where}.{key} must be {want}, not {shown(d[key])}")
        clients = {}
        for k, v in (d["clients"] or {}).items():
            if isinstance(k, bool) or not (isinstance(k, int) or (isinstance(k, str) and k.isdigit())):
                raise SpecError(f"{where}.clients: client ids are integers, not {k!r}")
            if not (
                isinstance(v, (list, tuple))
                and len(v) == 2
                and isinstance(v[0], str)
                and isinstance(v[1], (str, int))
                and not isinstance(v[1], bool)
            ):
                raise SpecError(
                    f'{where}.clients.{k} must be ["SPEC", "SIZE"], such as ["lru", "16MiB"], not {shown(v)}'
                )
            clients[int(k)] = tuple(v)
        return cls(
            policy=d["policy"], cache=d["cache"], client=d["client"], write_back=d["write_back"], clients=clients
        )


def _is_bool(value: Any) -> bool:
    """Whether ``value`` is true or false itself (Python's or numpy's), not merely truthy."""
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"))


def filter_trace(trace: PathLike, out: PathLike, first_level: FirstLevel, **options: Any) -> "pandas.DataFrame":
    """Writes the second-level stream of ``trace`` through ``first_level`` to ``out`` as a
    ``block-csv`` trace (device-addressed: a storage server sees device blocks) and returns the
    first level's counters, one row per client. The stream is exactly the first-level misses
    (and write-backs) in order. Other keywords are run options (``format``, ``block_size``,
    ``reads_only``, ``seed``)."""
    import pandas as pd

    if not isinstance(first_level, FirstLevel):
        raise SpecError("first_level must be a bufsim.FirstLevel")
    from bufsim.errors import refuse_empty

    if not refuse_empty(out, "--out").endswith(".csv"):
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
