"""DAMON's proactive reclaim, kept off a validation's cgroup.

A machine can run a DAMON daemon (``kdamond``) with a ``pageout`` scheme: it samples physical
memory regions and pages out those it finds idle, file pages included, whatever any cgroup's
limit. Sampling works by region, so a page read a moment ago in a region that looked idle goes
too (on this machine's kind: idle for 12 aggregation intervals of 5 s, at most 128 MiB a
second, anonymous memory exempted). Those evictions are no decision of the page cache that
``bufsim validate`` compares with: a small validation lost 4 pages of its file to kdamond,
re-read them with a read-ahead window of its own, and one of its nine read-ahead decisions
differed. While a validation runs, each running scheme that pages out gets a first filter that
rejects the pages of the validation's memory cgroup (DAMON's ``memcg`` filter); afterwards the
scheme's filters are restored as they were. DAMON's sysfs interface is documented in the
kernel's Documentation/admin-guide/mm/damon/usage.rst.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

DAMON_ROOT = "/sys/kernel/mm/damon/admin/kdamonds"
#: The files of one filter directory, in the order they are written (the type first: what the
#: others mean depends on it).
FILTER_FIELDS = ("type", "matching", "allow", "memcg_path", "addr_start", "addr_end", "min", "max", "damon_target_idx")


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _count(d: str) -> int:
    try:
        return int(_read(os.path.join(d, "nr_filters")))
    except (OSError, ValueError):
        return 0


def _resize(d: str, n: int) -> None:
    """Sets a filters directory to ``n`` filters; the kernel makes them afresh, with defaults."""
    _write(os.path.join(d, "nr_filters"), str(n))


@dataclass
class _Scheme:
    kdamond: str  # the kdamond's directory, whose state file commits
    filters: str  # the scheme's filters directory that takes memcg filters


def pageout_schemes(root: str = DAMON_ROOT) -> list[tuple[str, str]]:
    """(kdamond directory, filters directory) of every scheme of a running kdamond whose action
    is pageout: the ones that evict page cache on their own."""
    found = []
    try:
        kdamonds = sorted(k for k in os.listdir(root) if k.isdigit())
    except OSError:
        return []
    for k in kdamonds:
        kd = os.path.join(root, k)
        try:
            if _read(os.path.join(kd, "state")) != "on":
                continue
            contexts = os.path.join(kd, "contexts")
            for c in range(int(_read(os.path.join(contexts, "nr_contexts")))):
                schemes = os.path.join(contexts, str(c), "schemes")
                for s in range(int(_read(os.path.join(schemes, "nr_schemes")))):
                    scheme = os.path.join(schemes, str(s))
                    if _read(os.path.join(scheme, "action")) != "pageout":
                        continue
                    # Kernels since 6.15 keep the operations layer's filters (memcg among them)
                    # apart; before that one directory held all.
                    ops = os.path.join(scheme, "ops_filters")
                    found.append((kd, ops if os.path.isdir(ops) else os.path.join(scheme, "filters")))
        except (OSError, ValueError):
            continue
    return found


def _read_filters(d: str) -> list[dict[str, str]]:
    out = []
    for i in range(_count(d)):
        entry = {}
        for name in FILTER_FIELDS:
            try:
                entry[name] = _read(os.path.join(d, str(i), name))
            except OSError:
                pass
        out.append(entry)
    return out


def _write_filters(d: str, filters: list[dict[str, str]], resize: Callable[[str, int], None]) -> None:
    resize(d, len(filters))
    for i, entry in enumerate(filters):
        for name in FILTER_FIELDS:
            if name not in entry:
                continue
            path = os.path.join(d, str(i), name)
            try:
                default = _read(path)
            except OSError:
                continue
            if entry[name] != default:
                _write(path, entry[name])


def _owner_gone(entry: dict[str, str], prefix: str) -> bool:
    """A filter a validation killed outright left behind: its cgroup's owner process is gone."""
    name = entry.get("memcg_path", "").lstrip("/")
    parts = name.split("-")
    if entry.get("type") != "memcg" or not name.startswith(prefix) or len(parts) != 4 or not parts[2].isdigit():
        return False
    return not os.path.exists(f"/proc/{parts[2]}")


class PageoutExclusion:
    """Keeps every running DAMON pageout scheme off the memory cgroup ``memcg_path`` (its path
    in its hierarchy, such as ``/bufsim-validate-123-456``) between :meth:`start` and
    :meth:`stop`. Filters that earlier validations killed outright left behind are dropped."""

    def __init__(
        self, memcg_path: str, prefix: str, root: str = DAMON_ROOT, resize: Callable[[str, int], None] = _resize
    ):
        self.memcg_path = memcg_path
        self.prefix = prefix
        self.root = root
        self.resize = resize
        self.schemes: list[_Scheme] = []
        #: Why a scheme could not be kept off, if one could not (the validation goes on).
        self.failure: Optional[str] = None

    def start(self) -> "PageoutExclusion":
        for kd, d in pageout_schemes(self.root):
            saved = [f for f in _read_filters(d) if not _owner_gone(f, self.prefix)]
            ours = {"type": "memcg", "matching": "Y", "allow": "N", "memcg_path": self.memcg_path}
            try:
                _write_filters(d, [ours, *saved], self.resize)
                _write(os.path.join(kd, "state"), "commit")
                self.schemes.append(_Scheme(kd, d))
            except OSError as e:
                self.failure = f"DAMON's pageout scheme {d} could not be kept off the cgroup ({e.strerror or e})"
                try:
                    _write_filters(d, saved, self.resize)
                    _write(os.path.join(kd, "state"), "commit")
                except OSError:
                    pass
        return self

    def stop(self) -> None:
        """Restores each scheme's filters: those it had, less this validation's."""
        for s in self.schemes:
            try:
                current = _read_filters(s.filters)
                keep = [f for f in current if f.get("memcg_path") != self.memcg_path or f.get("type") != "memcg"]
                _write_filters(s.filters, keep, self.resize)
                _write(os.path.join(s.kdamond, "state"), "commit")
            except OSError:
                pass
        self.schemes = []
