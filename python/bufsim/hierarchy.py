"""Multi-level caches (the MQ paper): first-level client caches whose misses form the stream a
shared second-level cache sees (the Table 3 breakdown, with ``first_level=``, is
:func:`bufsim.distance_breakdown`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from bufsim import _core
from bufsim._core import SpecError
from bufsim.api import PathLike, SizeLike, block_size_bytes, size_text

if TYPE_CHECKING:
    import pandas

CLIENT_COLUMNS = ("all", "pid", "device")


def _level_size(size: SizeLike) -> str:
    # A first level of size 0 passes everything down (allowed here, unlike a cache of a run).
    if isinstance(size, int) and not isinstance(size, bool) and size == 0:
        return "0blocks"
    return size_text(size, "first-level cache size")


@dataclass(frozen=True)
class FirstLevel:
    """The first level of a hierarchy: one cache per client, all alike unless ``clients`` names
    one (``{3: ("lru", "16MiB")}``). ``client`` says which trace column tells clients apart:
    ``all`` (one client), ``pid`` or ``device``. With ``write_back`` writes stay in the client
    cache and reach the second level when a dirty block is evicted; otherwise every first-level
    miss, read or write, goes down as itself. A size of 0 passes everything down."""

    policy: str = "lru"
    cache: SizeLike = "8MiB"
    client: str = "all"
    write_back: bool = False
    clients: Mapping[int, tuple[str, SizeLike]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.client not in CLIENT_COLUMNS:
            raise SpecError(f"unknown client column `{self.client}`; use one of {', '.join(CLIENT_COLUMNS)}")
        for k, v in self.clients.items():
            if isinstance(k, bool) or not isinstance(k, int) or k < 0:
                raise SpecError(f"client ids are non-negative integers, not {k!r}")
            if not (isinstance(v, (tuple, list)) and len(v) == 2):
                raise SpecError(f"client {k}: give (policy, size), not {v!r}")

    def to_core(self) -> tuple:
        return (str(self.policy), _level_size(self.cache), self.client,
                "write-back" if self.write_back else "misses",
                [(int(k), str(p), _level_size(s)) for k, (p, s) in sorted(self.clients.items())])

    def to_json(self, block_size: int | None = None) -> str:
        """A canonical text form, stored with sweep results and sent to sweep workers; with
        ``block_size`` sizes are written in blocks, so equal caches give equal text."""
        policy, cache, client, forward, clients = self.to_core()
        if block_size is not None:
            blocks = lambda s: f"{_core.size_to_blocks(s, block_size)}blocks"  # noqa: E731
            cache, clients = blocks(cache), [(c, p, blocks(s)) for c, p, s in clients]
        return json.dumps([policy, cache, client, forward, clients], separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "FirstLevel":
        policy, cache, client, forward, clients = json.loads(text)
        return cls(policy, cache, client=client, write_back=forward == "write-back",
                   clients={c: (p, s) for c, p, s in clients})

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
        return cls(policy=data.get("policy", "lru"), cache=data.get("cache", "8MiB"),
                   client=data.get("client", "all"), write_back=bool(data.get("write_back", False)),
                   clients=clients)


def filter_trace(
    trace: PathLike,
    out: PathLike,
    first_level: FirstLevel,
    *,
    format: str = "auto",
    block_size: SizeLike = 4096,
    reads_only: bool = False,
    seed: int = 42,
) -> "pandas.DataFrame":
    """Writes the second-level stream of ``trace`` through ``first_level`` to ``out`` as a
    ``block-csv`` trace (device-addressed: a storage server sees device blocks) and returns the
    first level's counters, one row per client. The stream is exactly the first-level misses
    (and write-backs) in order."""
    import pandas as pd

    if not isinstance(first_level, FirstLevel):
        raise SpecError("first_level must be a bufsim.FirstLevel")
    if not os.fspath(out).endswith(".csv"):
        raise SpecError(f"{os.fspath(out)}: the second-level stream is written as block-csv; name the output *.csv")
    written, rows = _core.filter_trace(os.fspath(trace), os.fspath(out), first_level.to_core(), format=format,
                                       block_size=block_size_bytes(block_size), reads_only=reads_only, seed=seed)
    df = pd.DataFrame(rows, columns=["client", "cache_blocks", "accesses", "hits", "misses", "write_backs"])
    df.attrs["requests_written"] = written
    return df
