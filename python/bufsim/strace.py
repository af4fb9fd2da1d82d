"""The grammar of ``strace -f -k -y -ttt -T`` output, one line at a time.

Pure functions and small value types, no state: :mod:`bufsim.collect` keeps the processes, file
descriptors and offsets. The shapes handled (strace 5.x and 6.x):

    PID  SECONDS.MICROS NAME(ARGS) = RET[<path>] [ERRNO (text)] <DURATION>
    PID  SECONDS.MICROS NAME(ARGS_SO_FAR <unfinished ...>
    PID  SECONDS.MICROS <... NAME resumed>REST_OF_ARGS) = RET ... <DURATION>
    PID  SECONDS.MICROS +++ exited with N +++        (or killed by SIGX, superseded by execve)
    PID  SECONDS.MICROS --- SIGX {...} ---
     > /path/to/module(symbol+0x1a) [0x1193]          (a -k stack frame of the line above)

``[pid N] `` prefixes (strace writing to stderr) are accepted as well as bare PIDs. ``-y`` paths
arrive C-escaped (``\\76`` for ``>``, octal for non-ASCII bytes); :func:`unescape` undoes that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# PID (bare or "[pid N]") is optional: a single-process strace prints none.
_PREFIX = re.compile(r"^(?:\[pid\s+(\d+)\]\s+|(\d+)\s+)?(\d+)\.(\d+)\s+")
_DURATION = re.compile(r"\s<(\d+)\.(\d+)>\s*$")
_EXIT = re.compile(r"^\+\+\+ (?:exited with (\d+)|killed by (SIG\w+)(?: \(core dumped\))?|superseded by execve) \+\+\+")
_FRAME_ADDR = re.compile(r"\s\[0x([0-9a-fA-F]+)\]\s*$")
UNFINISHED = " <unfinished ...>"
U64_MAX = (1 << 64) - 1

#: Calls that read or write at the position given as their fourth argument; the ``v2`` ones take
#: -1 for the descriptor's own offset, every other negative position fails with EINVAL.
_POSITIONED = {
    "pread64": False,
    "pwrite64": False,
    "preadv": False,
    "pwritev": False,
    "preadv2": True,
    "pwritev2": True,
}


class DamagedLine(ValueError):
    """A line no strace writes for a call that returned: a number past what a system call returns
    or takes. The replay cannot trust the log past it; whoever reads the log adds where it is."""


@dataclass(frozen=True)
class Syscall:
    """A whole system call: either one line or an unfinished line joined with its resumed line."""

    name: str
    args: list[str]
    ret: str  # the raw return token: "3", "-1", "?", "0x7f..."
    ret_path: Optional[str]  # the -y annotation of the returned fd, still escaped
    errno: Optional[str]
    dur_us: int

    @property
    def failed(self) -> bool:
        return self.errno is not None or self.ret == "?" or self.ret.startswith("-")

    def ret_int(self) -> Optional[int]:
        return parse_int(self.ret)


@dataclass(frozen=True)
class Line:
    """One line of strace output. ``kind`` is one of: ``call`` (a whole call in ``text``),
    ``unfinished`` (``text`` is the call so far), ``resumed`` (``text`` is the rest, ``name`` the
    call), ``exit`` (``status`` or ``signal``; both None for superseded by execve), ``signal``,
    ``frame`` (``frame`` holds it), ``other``."""

    kind: str
    pid: Optional[int] = None
    time_us: int = 0
    text: str = ""
    name: str = ""
    status: Optional[int] = None
    signal: Optional[str] = None
    frame: Optional["Frame"] = None


@dataclass(frozen=True)
class Frame:
    """A ``-k`` stack frame: ``module`` is the object file's path (None when strace could not
    tell), ``offset`` the return address relative to that module (what strace prints in brackets)."""

    module: Optional[str]
    symbol: str
    offset: int
    truncated: bool = False  # strace's "too many stack frames" marker


def parse_line(raw: str) -> Line:
    """Classifies one line (without its newline)."""
    if raw.startswith(" > "):
        return Line("frame", frame=parse_frame(raw))
    m = _PREFIX.match(raw)
    if m is None:
        return Line("other", text=raw)
    pid_s = m.group(1) or m.group(2)
    pid = int(pid_s) if pid_s else None
    micros = m.group(4)
    # -ttt prints 6 digits; scale anything else so the unit stays microseconds.
    time_us = int(m.group(3)) * 1_000_000 + int((micros + "000000")[:6])
    body = raw[m.end() :]
    if body.startswith("<... "):
        close = body.find(" resumed>")
        if close < 0:
            return Line("other", pid=pid, time_us=time_us, text=body)
        return Line("resumed", pid=pid, time_us=time_us, name=body[5:close], text=body[close + 9 :])
    if body.startswith("+++ "):
        e = _EXIT.match(body)
        if e is None:
            return Line("other", pid=pid, time_us=time_us, text=body)
        status = int(e.group(1)) if e.group(1) is not None else None
        return Line("exit", pid=pid, time_us=time_us, status=status, signal=e.group(2), text=body)
    if body.startswith("--- "):
        return Line("signal", pid=pid, time_us=time_us, text=body)
    if body.endswith(UNFINISHED):
        paren = body.find("(")
        name = body[:paren] if paren > 0 else ""
        return Line("unfinished", pid=pid, time_us=time_us, name=name, text=body[: -len(UNFINISHED)])
    paren = body.find("(")
    if paren <= 0 or not _is_name(body[:paren]):
        return Line("other", pid=pid, time_us=time_us, text=body)
    return Line("call", pid=pid, time_us=time_us, name=body[:paren], text=body)


def _is_name(s: str) -> bool:
    return s.replace("_", "a").isalnum()


def parse_frame(raw: str) -> Frame:
    """Parses `` > /lib/x.so(sym+0x10) [0xabc]``; unknown shapes become a frame without a module."""
    text = raw[3:].rstrip()
    m = _FRAME_ADDR.search(text)
    if m is None:
        return Frame(None, text, 0, truncated=text.startswith("too many stack frames"))
    offset = int(m.group(1), 16)
    head = text[: m.start()]
    if head.endswith(")"):
        open_paren = head.rfind("(")
        if open_paren > 0:
            return Frame(head[:open_paren], head[open_paren + 1 : -1], offset)
    # "unexpected_backtracing_error [0x...]" and the like: no module, so the address is absolute.
    return Frame(None, head, offset)


def parse_call(name: str, text: str) -> Optional[Syscall]:
    """Parses ``NAME(ARGS) = RET ...`` (``text`` starts with ``NAME(``). None if malformed."""
    start = len(name) + 1
    args, end = split_args(text, start)
    if end < 0:
        return None
    rest = text[end + 1 :]
    eq = rest.find("= ")
    if eq < 0:
        return None
    after = rest[eq + 2 :]
    i = 0
    while i < len(after) and not after[i].isspace() and after[i] != "<":
        i += 1
    ret = after[:i]
    ret_path = None
    if i < len(after) and after[i] == "<" and ret and ret[0].isdigit():
        j = _annotation_end(after, i)
        ret_path = after[i + 1 : j]
        i = j + 1
    tail = after[i:].lstrip()
    errno = None
    if ret.startswith("-") and tail[:1] == "E":
        errno = tail.split(" ", 1)[0]
    elif ret == "?" and tail.startswith("ERESTART"):
        errno = tail.split(" ", 1)[0]
    d = _DURATION.search(rest)
    dur_us = int(d.group(1)) * 1_000_000 + int((d.group(2) + "000000")[:6]) if d else 0
    call = Syscall(name, args, ret, ret_path, errno, dur_us)
    _check_numbers(call)
    return call


def _check_numbers(call: Syscall) -> None:
    """Refuses the numbers no kernel gives: a return value above 2^64-1 (a size or an offset the
    replay would record as it is), and a position a successful pread or pwrite cannot have had
    (the replay would read it as "the descriptor's offset")."""
    n = parse_int(call.ret)
    if n is not None and n > U64_MAX:
        raise DamagedLine(f"{call.name} returned {call.ret}, more than 2^64-1")
    takes_minus_one = _POSITIONED.get(call.name)
    if takes_minus_one is None or call.failed or len(call.args) < 4:
        return
    at = parse_int(call.args[3])
    if at is None:
        return
    if at > U64_MAX:
        raise DamagedLine(f"{call.name} at offset {call.args[3]}, more than 2^64-1")
    if at < 0 and not (takes_minus_one and at == -1):
        raise DamagedLine(f"{call.name} at offset {call.args[3]} succeeded, which no kernel allows")


def _annotation_end(s: str, i: int) -> int:
    """Index of the ``>`` closing the ``<`` at ``i``: strace writes a ``>`` inside a -y path as
    ``\\76``, so the first one closes it."""
    j = s.find(">", i + 1)
    return j if j >= 0 else len(s) - 1


_SPECIAL = re.compile(r'["<()\[\]{},]')


def split_args(text: str, start: int) -> tuple[list[str], int]:
    """Splits the arguments that begin at ``start`` into top-level fields. Returns the fields and
    the index of the closing parenthesis (-1 if the line ends first). Quoted strings, ``-y``
    annotations ``<...>`` and nested ``() [] {}`` are kept whole."""
    args: list[str] = []
    depth = 0
    field_start = start
    n = len(text)
    search = _SPECIAL.search
    i = start
    while True:
        m = search(text, i)
        if m is None:
            return args, -1
        i = m.start()
        c = text[i]
        if c == '"':
            i += 1
            while i < n:
                q = text.find('"', i)
                if q < 0:
                    return args, -1
                backslashes = 0
                k = q - 1
                while k >= i and text[k] == "\\":
                    backslashes += 1
                    k -= 1
                i = q + 1
                if backslashes % 2 == 0:
                    break
            continue
        if c == "<":
            i = _annotation_end(text, i) + 1
            continue
        if c in "([{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == ")":
            if depth == 0:
                last = text[field_start:i].strip()
                if last or args:
                    args.append(last)
                return args, i
            depth -= 1
        elif depth == 0:  # a comma at the top level
            args.append(text[field_start:i].strip())
            field_start = i + 1
        i += 1


_HEX = "0123456789abcdefABCDEF"
_ESCAPES = {"n": 10, "t": 9, "r": 13, "v": 11, "f": 12, "a": 7, "b": 8, "\\": 92, '"': 34, "'": 39}


def unescape(s: str) -> bytes:
    """Undoes strace's C escaping of strings and ``-y`` paths (``\\n``, ``\\"``, octal ``\\303``,
    hex ``\\xc3``) and returns the raw bytes."""
    if "\\" not in s:
        return s.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c != "\\" or i + 1 >= n:
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        d = s[i + 1]
        if d in "01234567":
            j = i + 1
            while j < n and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1 : j], 8) & 0xFF)
            i = j
        elif d == "x" and i + 4 <= n and all(ch in _HEX for ch in s[i + 2 : i + 4]):
            out.append(int(s[i + 2 : i + 4], 16))
            i += 4
        elif d in _ESCAPES:
            out.append(_ESCAPES[d])
            i += 2
        else:
            out += d.encode("utf-8", "surrogateescape")
            i += 2
    return bytes(out)


def string_arg(arg: str) -> Optional[bytes]:
    """The bytes of a quoted string argument ``"..."`` (None if the argument is not a string)."""
    if len(arg) >= 2 and arg[0] == '"':
        end = arg.rfind('"')
        if end > 0:
            return unescape(arg[1:end])
    return None


def fd_arg(arg: str) -> tuple[Optional[int], Optional[str]]:
    """``3</tmp/x>`` -> (3, "/tmp/x") with the path still escaped; ``AT_FDCWD</d>`` -> (None, "/d")."""
    lt = arg.find("<")
    head = arg if lt < 0 else arg[:lt]
    path = arg[lt + 1 : _annotation_end(arg, lt)] if lt >= 0 else None
    return parse_int(head), path


def parse_int(s: str) -> Optional[int]:
    """Decimal, negative or 0x-hex integers as strace prints them; ``~0U`` style all-ones too."""
    s = s.strip()
    if not s:
        return None
    try:
        if s.startswith(("0x", "0X")):
            return int(s, 16)
        if s.startswith("~"):
            return (1 << 64) - 1
        return int(s)
    except ValueError:
        return None


def bracket_int(arg: str) -> Optional[int]:
    """The value before any ``=>`` of a pointed-to integer: ``[0] => [100]`` -> 0; ``NULL`` -> None."""
    a = arg.strip()
    if not a.startswith("["):
        return None
    end = a.find("]")
    return parse_int(a[1:end]) if end > 0 else None


def bracket_result(arg: str) -> Optional[int]:
    """The value after ``=>`` (what the kernel wrote back), else the only bracketed value."""
    a = arg.strip()
    arrow = a.find("=>")
    return bracket_int(a[arrow + 2 :]) if arrow >= 0 else bracket_int(a)


def flag_words(arg: str) -> set[str]:
    """``O_WRONLY|O_CREAT|0x40000`` -> {"O_WRONLY", "O_CREAT", "0x40000"}; also finds
    ``flags=...`` inside a struct such as openat2's ``{flags=O_RDONLY, resolve=0}``."""
    a = arg.strip()
    if a.startswith("{"):
        m = re.search(r"flags=([^,}]*)", a)
        a = m.group(1) if m else ""
    return {w.strip() for w in a.split("|") if w.strip()}
