"""bufsim's binary trace format (docs/trace-formats.md) as an array of fixed-length records, for
the reproductions that cut a trace down (its first requests, the requests of some files) and
write the rest as a trace again. The core reads and writes the format; this only slices it."""

from __future__ import annotations

import struct
from pathlib import Path

# The header's length. Its fields read here (docs/trace-formats.md): the record length (byte 17),
# the record count (24), where the name table starts (32) and how many names it holds (40).
HEADER = 64


def read_bst(path: Path):
    """A .bst trace as (header, records (n x length bytes, numpy), names, name table bytes)."""
    import numpy as np

    data = path.read_bytes()
    length, count = data[17], int.from_bytes(data[24:32], "little")
    names_at, n_names = int.from_bytes(data[32:40], "little"), int.from_bytes(data[40:44], "little")
    records = np.frombuffer(data, dtype=np.uint8, count=count * length, offset=HEADER).reshape(count, length)
    names, at = [], names_at
    for _ in range(n_names):
        n = struct.unpack_from("<I", data, at)[0]
        names.append(data[at + 4 : at + 4 + n].decode())
        at += 4 + n
    return bytearray(data[:HEADER]), records, names, data[names_at:]


def write_bst(out: Path, header: bytearray, records, table: bytes) -> Path:
    """Writes `records` (rows of a trace read by :func:`read_bst`) with its header and name table."""
    header = bytearray(header)
    header[24:32] = len(records).to_bytes(8, "little")
    header[32:40] = (HEADER + records.size).to_bytes(8, "little")
    out.write_bytes(bytes(header) + records.tobytes() + table)
    return out


def column(records, at: int, width: int):
    """The little-endian unsigned field of `width` bytes at byte `at` of every record."""
    import numpy as np

    return np.ascontiguousarray(records[:, at : at + width]).view(f"<u{width}").ravel()


def head_bst(trace: Path, out: Path, limit: int) -> Path:
    """The first `limit` requests of a trace (any format the core reads), as a .bst trace."""
    from bufsim.formats import convert

    full = out.with_suffix(".full.bst")
    convert(trace, full)
    header, records, _, table = read_bst(full)
    full.unlink()
    return write_bst(out, header, records[:limit], table)
