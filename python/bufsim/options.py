"""Run options as the core defines them (``crates/bufsim-core/src/options.rs``): one table of
names, sections, defaults and documentation, read once from the core. Python writes no
default: an :class:`Options` holds only what the caller set, the core fills in the rest,
validates, and settles the rules between options (any timing option turns timed mode on).

A low-level module: it imports nothing of bufsim but the core and `bufsim.frozen`."""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping

from bufsim import _core
from bufsim._core import SpecError
from bufsim.frozen import Frozen

# typing is not imported at run time: it is a measurable share of `bufsim run`'s start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator, Optional, Sequence, Union

    PathLike = Union[str, "os.PathLike[str]"]
    SizeLike = Union[int, str]


def __getattr__(name: str) -> Any:
    """``PathLike`` (a path as ``str`` or ``os.PathLike``) and ``SizeLike`` (a size: an ``int``
    is a number of blocks; a string carries its unit, ``"64MiB"``, ``"2000blocks"``), the type
    aliases of the API's signatures, built on first use."""
    if name not in ("PathLike", "SizeLike"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Union

    aliases = {"PathLike": Union[str, "os.PathLike[str]"], "SizeLike": Union[int, str]}
    globals().update(aliases)
    return aliases[name]


class OptionField(Frozen):
    """One row of the core's option table (read-only)."""

    __slots__ = ("name", "section", "default", "implied", "sql", "many", "doc", "flags", "range", "keyed")

    def __init__(
        self,
        name: str,
        section: str,
        default: Any,
        implied: Optional[str],
        sql: str,
        many: bool,
        doc: str,
        flags: Sequence[str] = (),
        range: Optional[tuple[int, int]] = None,
        keyed: Optional[str] = None,
    ):
        self._fill((name, section, default, implied, sql, many, doc, tuple(flags), range, keyed))

    @property
    def shown_default(self) -> str:
        """The default as help texts show it (what an unset timed option stands for)."""
        if self.implied is not None:
            return self.implied
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        return str(self.default)


OPTION_FIELDS: tuple[OptionField, ...] = tuple(
    OptionField(**{**f, "default": json.loads(f["default"])}) for f in _core.option_fields()
)
"""Every option, in the core's order."""

FIELDS_BY_NAME: dict[str, OptionField] = {f.name: f for f in OPTION_FIELDS}


def _plain(value: Any) -> Any:
    """A value as JSON can carry it: objects that describe themselves (``FirstLevel``) become
    their mapping, tuples lists, mapping keys strings."""
    if hasattr(value, "to_mapping"):
        return _plain(value.to_mapping())
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # numpy's scalars (an np.int64 from an arange, a DataFrame cell, np.True_) as Python's own.
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        return int(value)
    return value


def _not_finite(value: Any) -> bool:
    """Whether a plain option value holds a NaN or an infinity anywhere."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_not_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_not_finite(v) for v in value)
    return False


class Options(Mapping):
    """The options of a run: only those set (``None`` means unset). Names and meanings are the
    core's (:data:`OPTION_FIELDS`, ``bufsim options``); an unknown name is a ``SpecError``."""

    __slots__ = ("_set",)

    def __init__(self, options: Optional[Mapping[str, Any]] = None, /, **set_options: Any):
        if options is not None and not isinstance(options, Mapping):
            raise SpecError(
                f"options must be a mapping of option names to values (`bufsim options` lists them), "
                f"not {type(options).__name__} {options!r:.60}"
            )
        merged = {**(dict(options) if options else {}), **set_options}
        # Keys that are not names at all (a number) are unknown options too, not a TypeError.
        unknown = sorted(repr(k) if not isinstance(k, str) else k for k in merged if k not in FIELDS_BY_NAME)
        if unknown:
            raise SpecError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(FIELDS_BY_NAME)}")
        self._set = {k: _plain(v) for k, v in merged.items() if v is not None}
        for k, v in self._set.items():
            # JSON has no NaN or infinity: said here by name, not as a parse error in the core.
            if _not_finite(v):
                raise SpecError(f"option {k} must be a finite value, not {v!r}")
            try:
                json.dumps(v)
            except (TypeError, ValueError):
                raise SpecError(
                    f"option {k} takes a number, a string, true/false, or a list or mapping of them (`bufsim options` "
                    f"says which), not {type(v).__name__} {v!r:.60}"
                ) from None

    def __getitem__(self, name: str) -> Any:
        return self._set[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._set)

    def __len__(self) -> int:
        return len(self._set)

    def __repr__(self) -> str:
        return f"Options({', '.join(f'{k}={v!r}' for k, v in self._set.items())})"

    def replace(self, **changes: Any) -> "Options":
        """These options with some set (or unset, with ``None``)."""
        merged = {**self._set, **changes}
        return Options({k: v for k, v in merged.items() if v is not None})

    def to_json(self) -> str:
        """What crosses to the core: a JSON object of the options set."""
        return json.dumps(self._set)

    def resolved(
        self, policies: Sequence[str] = (), caches: Sequence[str] = (), prefetches: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Every option in canonical form (defaults filled in, timing decided), checked by the
        core together with these policies, cache sizes and read-ahead specs."""
        return json.loads(_core.resolve_options(self.to_json(), list(policies), list(caches), list(prefetches)))


def size_text(size: SizeLike, what: str = "size") -> str:
    """A cache size for the core: ints are block counts."""
    if isinstance(size, bool):
        raise SpecError(f"{what} must be a number of blocks or a string such as '64MiB', not {size!r}")
    if isinstance(size, numbers.Integral):
        # Any whole number (numpy's and pandas' integers too, as an np.arange of sizes gives).
        size = int(size)
    if isinstance(size, int):
        if size <= 0:
            raise SpecError(f"{what} {size} must be a positive number of blocks")
        return f"{size}blocks"
    if isinstance(size, str):
        return size
    raise SpecError(f"{what} must be a number of blocks or a string such as '64MiB', not {size!r}")


def block_size_bytes(block_size: SizeLike) -> int:
    """Block size in bytes (an int is bytes here), checked by the core's rule."""
    return Options(block_size=block_size).resolved()["block_size"]
