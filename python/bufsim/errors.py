"""One-line errors for the command line: every failure the user's input or environment can
cause becomes ``bufsim: error: <where>: <problem>`` and exit status 2, never a traceback.

The CLI runs each command through :func:`guard`; library code raises ``SpecError`` /
``TraceFormatError`` / ``OSError`` as usual, and the few failures that come from elsewhere
(a path that is not UTF-8, a results database DuckDB cannot open, an optional package that is
not installed) are named here once, so every command reports them the same way."""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
from pathlib import Path
import re
import sys
import unicodedata

from bufsim._core import SpecError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

EXIT_USAGE = 2

# The optional packages a command may need, and the extra that installs each.
# Packages some commands import, and the extra of bufsim that brings them (`None`: a dependency
# of bufsim itself, so it is missing only from a broken install).
OPTIONAL = {
    "pandas": None,
    "numpy": None,
    "duckdb": None,
    "matplotlib": None,
    "tqdm": None,
    "pyarrow": None,
    "dask": "distributed",
    "distributed": "distributed",
}


def require(module: str, extra: str | None = None) -> Any:
    """Imports ``module``, or raises a ``SpecError`` saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = module.split(".")[0]
        raise SpecError(missing_package(package, extra or OPTIONAL.get(package), e)) from None


def missing_package(module: str, extra: str | None, e: BaseException | None = None) -> str:
    how = (
        f"`pip install 'bufsim[{extra}]'`"
        if extra
        else f"`pip install {module}` (bufsim depends on it: reinstall bufsim)"
    )
    return f"this command needs the Python package {module}, which is not installed; install it with {how}"


U64_MAX = (1 << 64) - 1


def whole(text: str, lo: int = 0, hi: int = U64_MAX) -> int:
    """An argparse type: a whole number from ``lo`` to ``hi``."""
    try:
        n = int(text, 0)
    except ValueError:
        raise _argtype_error(f"expected a whole number, not {text!r}") from None
    if not lo <= n <= hi:
        most = f"2^64-1 ({U64_MAX})" if hi == U64_MAX else str(hi)
        raise _argtype_error(f"{text} is out of range: give a whole number from {lo} to {most}")
    return n


def u64(text: str) -> int:
    """An argparse type: a whole number from 0 to 2^64 - 1 (seeds)."""
    return whole(text)


def _argtype_error(message: str) -> Exception:
    import argparse

    return argparse.ArgumentTypeError(message)


# `tcp://host:port`, `host:port`, or another Dask protocol with a host and port.
_SCHEDULER = re.compile(
    r"^(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$|^inproc://\S+$"
)


def check_scheduler(address: str) -> str:
    """Refuses a Dask scheduler address without a host and a port (from 1 to 65535) before
    connecting to it."""
    if not isinstance(address, str) or not _SCHEDULER.match(address):
        raise SpecError(
            f"--dask {address!r} is not a Dask scheduler address; "
            "give tcp://HOST:PORT (the address `dask scheduler` prints, e.g. tcp://127.0.0.1:8786)"
        )
    port = scheduler_port(address)
    if port is not None and not 0 < port < 1 << 16:
        raise SpecError(
            f"--dask {address!r}: port {port} is out of range; give the port `dask scheduler` prints "
            "(1 to 65535, e.g. tcp://127.0.0.1:8786)"
        )
    return address


def scheduler_port(address: str) -> int | None:
    """The port of a scheduler address :func:`check_scheduler` accepts (``None`` for inproc://)."""
    if address.startswith("inproc://"):
        return None
    return int(address.rsplit(":", 1)[1])


def not_utf8(e: UnicodeDecodeError) -> str:
    """Where a file that should be UTF-8 text is not: the first byte that is not."""
    return f"not UTF-8 text: byte {e.object[e.start]:#04x} at offset {e.start}"


def shown(value: Any) -> str:
    """A value of the wrong type as an error shows it: its type and the start of its repr."""
    return f"{type(value).__name__} {value!r:.60}"


def path_of(value: Any, what: str) -> str:
    """``value`` as a path (a ``str`` or ``os.PathLike``); anything else is a SpecError naming
    ``what`` it should have been."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise SpecError(f"{what} must be a path (a str or os.PathLike), not {shown(value)}")


def refuse_empty(path: Any, option: str, what: str = "the output file's name") -> str:
    """Refuses an empty path (or one of only spaces) given to ``option``: the OS takes it for
    no file, or for the working directory. Returns the path as text."""
    text = path_of(path, option)
    if not text.strip():
        raise SpecError(f"{option} {text!r}: an empty path; give {what}")
    return text


def check_output(path: Any, option: str) -> str:
    """Refuses, before any work, an output path no file can be written to: empty, a directory,
    or a name in a directory that does not exist. Returns the path as text."""
    text = refuse_empty(path, option)
    if os.path.isdir(text):
        raise SpecError(f"{text}: is a directory; give a file name for {option}")
    refuse_under_a_file(text)
    parent = os.path.dirname(text) or "."
    if not os.path.isdir(parent):
        raise SpecError(f"{parent}: no such directory for {option}; create it first or give another path")
    return text


def refuse_under_a_file(path: Any) -> None:
    """Refuses an output path whose nearest existing part is a file (`t.csv/x.png`): writing
    there fails with a bare "Not a directory", and only after the work."""
    text = os.fspath(path)
    above = next((p for p in Path(text).parents if os.path.exists(p)), None)
    if above is not None and not os.path.isdir(above):
        raise SpecError(f"{text}: {above} is a file, not a directory; give an output path in a directory")


def same_file(a: Any, b: Any) -> bool:
    """Whether two paths name one file: the same path once symbolic links are followed (the
    file need not exist yet), or one file under two names (a hard link)."""
    try:
        a, b = os.fspath(a), os.fspath(b)
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.samefile(a, b)
    except (OSError, TypeError, ValueError):
        return False  # either is missing (or no path): nothing to destroy


def check_not_input(out: Any, source: Any, what: str, option: str) -> None:
    """Refuses, before any work, an output ``out`` that names ``source`` (``what`` it is, e.g.
    "the input trace") by any name: writing it would destroy what is read or written besides."""
    if source is not None and same_file(out, source):
        raise SpecError(f"{os.fspath(out)}: is {what}; give {option} another file name")


# What DuckDB says of a database another process holds, and of one that is damaged.
_DB_LOCKED = re.compile(r"could not set lock|conflicting lock", re.IGNORECASE)
_DB_CORRUPT = re.compile(
    r"corrupt|checksum|could not read enough bytes|not a valid duckdb database|truncated|invalid block",
    re.IGNORECASE,
)


def duckdb_text(e: BaseException) -> str:
    """DuckDB's message on one line, without the SQL it quotes after it (``LINE 1: SELECT ...``),
    which is bufsim's, not the user's."""
    return " ".join(str(e).split()).split(" LINE 1:")[0]


def database_message(e: BaseException, path: str | None = None) -> str:
    """The one line for a DuckDB error on the results database at ``path`` (``None``: not known):
    a package it needs that is missing, held by another process, damaged, or something else
    DuckDB says."""
    text = duckdb_text(e)
    needed = re.search(r"'(\w+)' is required", text)
    if needed and needed.group(1) in OPTIONAL:
        return missing_package(needed.group(1), OPTIONAL[needed.group(1)])
    subject = f"{path}: the results database" if path is not None else "the results database"
    if _DB_LOCKED.search(text):
        return (
            f"{subject} is locked ({text}); another bufsim (or program) has it open: wait for it to "
            "finish, or write to another file"
        )
    if _DB_CORRUPT.search(text):
        lower = text.lower()
        why = "checksum mismatch" if "checksum" in lower else "cut short" if "enough bytes" in lower else text
        return f"{subject} is corrupt ({why}); restore it from a copy or run the sweep again into a new file"
    return f"{path}: results database: {text}" if path is not None else f"results database: {text}"


def import_message(e: ImportError) -> str:
    """A package that is missing or does not import. Packages re-raise their own dependencies'
    failures as a plain ImportError with only a message (pandas: "Unable to import required
    dependency numpy"), and a broken install fails inside the package: the package is taken from
    the error's name, else from its message, else the message is given as it is."""
    named = (e.name or "").split(".")[0]
    if not named:
        found = re.search(r"(?:No module named|dependenc(?:y|ies)) '?(\w+)", str(e))
        named = found.group(1) if found else ""
    if named in OPTIONAL:
        if isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] == named:
            return missing_package(named, OPTIONAL[named])
        how = f"`pip install 'bufsim[{OPTIONAL[named]}]'`" if OPTIONAL[named] else "reinstall bufsim"
        return f"the Python package {named} does not import ({_first_sentence(e)}); {how}"
    text = _first_sentence(e) or type(e).__name__
    return f"a Python package this command needs does not import ({text}); reinstall bufsim and its dependencies"


def _first_sentence(e: BaseException) -> str:
    # Packages add advice for a traceback the user will not see ("Please see the traceback").
    return " ".join(str(e).split()).split(". ")[0].rstrip(".")


def message(e: BaseException) -> str | None:
    """The one-line message for a failure the user can fix; ``None`` for a bug in bufsim."""
    if isinstance(e, UnicodeError) and isinstance(getattr(e, "object", None), str) and "surrogate" in str(e):
        shown = os.fsencode(e.object).decode("ascii", "backslashreplace")
        return (
            f"{shown}: the name is not valid UTF-8, which bufsim cannot pass on; rename the file "
            f"(or link to it under a UTF-8 name)"
        )
    if isinstance(e, ImportError):
        return import_message(e)
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(e, duckdb.Error):
        return database_message(e)
    if isinstance(e, OverflowError):
        return f"a number is out of range ({e}); check the numbers given"
    return None


# What to do about an operating-system error on a path the user gave, by its errno.
_OS_ADVICE = {
    errno.ENOSPC: "free some space or give a path on another file system",
    errno.EDQUOT: "free some space or give a path on another file system",
    errno.ENOENT: "check the path (an output's directory must exist)",
    errno.ENOTDIR: "a part of the path is a file, not a directory; check the path",
    errno.EACCES: "give a path you may read or write (or run with the rights it needs)",
    errno.EPERM: "give a path you may read or write (or run with the rights it needs)",
    errno.EROFS: "the file system is read-only; give a path on a writable one",
    errno.EISDIR: "it is a directory; give a file name",
}


def os_message(e: OSError) -> str:
    """The one line for an operating-system error: the file it concerns, what went wrong, and
    what to do."""
    what = e.strerror or str(e)
    advice = _OS_ADVICE.get(e.errno or 0)
    if e.filename is None:
        return what + (f"; {advice}" if advice else "")
    where = os.fsdecode(e.filename)
    if where.startswith(("/proc/", "/sys/")):
        return f"{where}: {what}; no file can be created in /proc or /sys: give a path in a writable directory"
    return f"{where}: {what}" + (f"; {advice}" if advice else "")


@contextlib.contextmanager
def writing(path: Any) -> Iterator[None]:
    """Names ``path`` in an operating-system error raised while writing it: a write to a full
    disk fails without the file's name, which the one-line error then could not give."""
    try:
        yield
    except OSError as e:
        if e.filename is not None or isinstance(e, BrokenPipeError):
            raise
        raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from None


class NamedOutput:
    """A text stream whose failed writes name it (``standard output``): a write to a full disk
    behind ``> file`` fails without a file name, so its one-line error could not say where."""

    def __init__(self, inner: Any, name: str):
        self._inner, self._name = inner, name

    def write(self, text: str) -> int:
        with writing(self._name):
            return self._inner.write(text)

    def flush(self) -> None:
        with writing(self._name):
            self._inner.flush()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\n``, ``\\x1b``): a file name or a
    record quoted in a message cannot break its line or send escape sequences to the terminal."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)


def say(kind: str, text: str) -> None:
    """Prints ``bufsim: KIND: TEXT`` on one line of standard error (``kind``: error, warning)."""
    print(f"bufsim: {kind}: {printable(text)}", file=sys.stderr)


def guard(func: Callable[[Any], int], args: Any) -> int:
    """Runs one command; a failure :func:`message` knows is printed on one line (exit 2)."""
    try:
        return func(args)
    except Exception as e:
        text = message(e)
        if text is None:
            raise
        say("error", text)
        return EXIT_USAGE
