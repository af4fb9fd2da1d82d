"""Text tables: aligned columns, byte sizes, the table of run results. A low-level module: it
imports nothing of bufsim."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence


def human_bytes(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool]) -> str:
    """An aligned text table: numbers right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for k, r in enumerate(cells):
        parts = [c.rjust(w) if right[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def results_table(results) -> str:
    """The run table; read-ahead columns appear when some run prefetches, timing columns when
    some run is timed."""
    prefetching = any(r.prefetch != "none" for r in results)
    timed = any(r.exec_time_s is not None for r in results)
    devices = sorted({r.device for r in results if r.device}) if timed else []
    headers = (
        ["policy"]
        + (["prefetch"] if prefetching else [])
        + (["device"] if len(devices) > 1 else [])
        + ["cache", "blocks", "requests", "accesses", "hits", "misses", "hit ratio", "disk reqs"]
    )
    if prefetching:
        headers += ["sync", "async", "blocks read", "prefetched", "unused"]
    if timed:
        headers += ["exec s", "MB/s", "io s", "stall s", "sync ms", "async ms", "p99 ms", "util"]
    rows = []
    for r in results:
        row = (
            [r.policy]
            + ([r.prefetch] if prefetching else [])
            + ([r.device or ""] if len(devices) > 1 else [])
            + [
                human_bytes(r.cache_blocks * r.block_size),
                r.cache_blocks,
                r.requests,
                r.accesses,
                r.hits,
                r.misses,
                f"{r.hit_ratio:.4f}",
                r.disk_requests,
            ]
        )
        if prefetching:
            row += [r.sync_requests, r.async_requests, r.blocks_read, r.prefetched, r.prefetched_unused]
        if timed:
            if r.exec_time_s is None:
                row += [""] * 8
            else:
                util = max((d["utilization"] for d in r.devices or []), default=0.0)
                mb_s = f"{r.throughput_mb_s:.2f}" if r.throughput_mb_s is not None else ""
                row += [
                    f"{r.exec_time_s:.3f}",
                    mb_s,
                    f"{r.io_time_s:.3f}",
                    f"{r.stall_time_s:.3f}",
                    f"{r.sync_time_ms:.2f}",
                    f"{r.async_time_ms:.2f}",
                    f"{r.response_p99_ms:.2f}",
                    f"{util:.2f}",
                ]
        rows.append(row)
    left = 1 + prefetching + (len(devices) > 1)
    right = [False] * left + [True] * (len(headers) - left)
    return format_table(headers, rows, right)
