#!/usr/bin/env python3
"""Regenerates the bundled real traces in traces/ with `bufsim collect`, and their README table.

    .venv/bin/python scripts/collect_workloads.py              # all four (a few minutes)
    .venv/bin/python scripts/collect_workloads.py --only tpch  # one of grep, tpch, gcc, multi, md5grep

`make workloads` installs what it needs first. The workloads follow the papers' applications:
- grep:  glimpse/cscope-like searches: five single-word `grep -r -c -w` queries over the Linux kernel's
         UAPI headers (Debian's linux-libc-dev under /usr/include/linux and asm-generic).
- tpch:  TPC-H queries on SQLite (like the papers' tpc-h on MySQL): data from tpchgen-cli (DuckDB's
         TPC-H extension downloads itself at run time and so cannot be used offline), a session of
         Q1 Q6 Q3 Q14 Q12 Q5 Q1 Q6 in the sqlite3 shell with a 1 MiB page cache (scripts/tpch_sqlite.py).
- gcc:   a build of a real C library, Brotli 1.1.0 (the C sources of its PyPI sdist): 32 compiles and
         a link, like the papers' gcc trace of a kernel build.
- multi: grep and tpch running at the same time (like multi1-3).
- md5grep: five `md5sum` passes over a 24 MiB file, each followed by three `grep -r` passes over 200
         16 KiB files: two loops of different lengths and marginal gains, AMP's partition-sizing case.
Every trace is written with gzip (mtime 0, so the same trace gives the same bytes).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import trace_stats  # noqa: E402

WORK = Path("/tmp/bufsim-workloads")
TPCH_SCALE = "0.02"
GREP_WORDS = ["ioctl", "socket", "inode", "mutex", "struct"]
GREP_TREE = ["/usr/include/linux", "/usr/include/asm-generic"]
BROTLI = ("brotli", "1.1.0", "81de08ac11bcb85841e440c13611c00b67d3bf82698314928d0b676362546724")
# The dynamic loader's reads (ELF headers of shared libraries) and pseudo-files; unlike --no-libs
# this keeps gcc's own headers and the crt*.o files the linker reads under /usr/lib.
LOADER_ONLY = ["*.so", "*.so.*", "/etc/ld.so.cache", "/proc", "/sys", "/dev"]


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, **kw)


def tool(name: str, hint: str) -> str:
    for candidate in (Path(sys.executable).parent / name, shutil.which(name)):
        if candidate and Path(candidate).exists():
            return str(candidate)
    sys.exit(f"collect_workloads: {name} not found; {hint}")


def grep_command() -> list[str]:
    words = " ".join(GREP_WORDS)
    tree = " ".join(GREP_TREE)
    return ["sh", "-c", f'for w in {words}; do grep -r -c -w "$w" {tree} > /dev/null; done']


def tpch_prepare(work: Path) -> Path:
    d = work / "tpch"
    db = d / "tpch.db"
    stamp = d / f"scale-{TPCH_SCALE}"
    if db.exists() and stamp.exists():
        return db
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    gen = tool("tpchgen-cli", "install it with `pip install tpchgen-cli` (or run `make workloads`)")
    run([gen, "-s", TPCH_SCALE, f"--output-dir={d / 'tbl'}"])
    run([sys.executable, str(ROOT / "scripts" / "tpch_sqlite.py"), "load", str(db), str(d / "tbl")])
    shutil.rmtree(d / "tbl")
    stamp.touch()
    return db


def tpch_command(db: Path) -> list[str]:
    # The session's SQL sits outside the database directory, so --include leaves its read out;
    # SQLite's temporary files (sorts) go beside the database, so --include keeps them.
    sql = db.parent.parent / "tpch-session.sql"
    with open(sql, "w") as f:
        run([sys.executable, str(ROOT / "scripts" / "tpch_sqlite.py"), "session"], stdout=f)
    sqlite = tool("sqlite3", "install it with `apt-get install sqlite3`")
    return [
        "sh",
        "-c",
        f"SQLITE_TMPDIR={shlex.quote(str(db.parent))} {sqlite} -readonly "
        f"{shlex.quote(str(db))} < {shlex.quote(str(sql))} > /dev/null",
    ]


def gcc_prepare(work: Path) -> Path:
    name, version, _ = BROTLI
    d = work / "gcc"
    src = d / f"Brotli-{version}"
    if src.exists():
        return src
    d.mkdir(parents=True, exist_ok=True)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{name}=={version}",
            "-d",
            str(d),
        ]
    )
    archive = d / f"Brotli-{version}.tar.gz"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != BROTLI[2]:
        sys.exit(f"collect_workloads: {archive} has sha256 {digest}, expected {BROTLI[2]}")
    with tarfile.open(archive) as t:
        t.extractall(d, filter="data")
    return src


def gcc_command(src: Path) -> list[str]:
    script = (
        f"cd {src} && rm -rf obj && mkdir obj && "
        "for f in c/common/*.c c/dec/*.c c/enc/*.c c/tools/brotli.c; do "
        'gcc -O1 -Ic/include -c "$f" -o "obj/$(echo "$f" | tr / _).o" || exit 1; done && '
        "gcc obj/*.o -lm -o obj/brotli"
    )
    return ["sh", "-c", script]


MD5GREP_FILES = 200


def md5grep_prepare(work: Path) -> Path:
    """A 24 MiB file and 200 text files of 16 KiB, from a fixed seed (the same bytes every time)."""
    import random

    d = work / "md5grep"
    files = d / "files"
    files.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    (d / "big.bin").write_bytes(rng.randbytes(24 << 20))
    words = ["alpha", "beta", "gamma", "delta", "inode", "mutex", "socket", "struct"]
    for i in range(MD5GREP_FILES):
        text = " ".join(rng.choice(words) for _ in range(4096))
        (files / f"f{i:03d}.txt").write_text((text + "\n")[: 16 << 10].ljust(16 << 10, "\n"))
    return d


def md5grep_command(d: Path) -> list[str]:
    # grep -c exits 1 when nothing matches; the trace is what matters.
    inner = f"for j in 1 2 3; do grep -r -c zzqq {d / 'files'} > /dev/null || true; done"
    return ["sh", "-c", f"for i in 1 2 3 4 5; do md5sum {d / 'big.bin'} > /dev/null; {inner}; done"]


def collect(name: str, command: list[str], out_dir: Path, work: Path, **options) -> Path:
    from bufsim.collect import collect as bufsim_collect

    csv_path = work / f"{name}.csv"
    print(f"== {name}: {' '.join(command)}", file=sys.stderr)
    res = bufsim_collect(command, str(csv_path), **options)
    print(res.summary(), file=sys.stderr)
    if res.exit_status != 0:
        sys.exit(f"collect_workloads: {name}: the command {res.outcome}")
    gz = out_dir / f"{name}.csv.gz"
    with open(csv_path, "rb") as src, open(gz, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    return gz


def versions() -> list[str]:
    def out(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"

    dpkg = out(["dpkg-query", "-W", "-f", "${Version}", "linux-libc-dev"])
    return [
        f"strace: {out(['strace', '-V'])}",
        f"gcc: {out(['gcc', '--version'])}",
        f"SQLite: {out(['sqlite3', '--version'])[:40]} (sqlite3 shell; the database is loaded with Python's sqlite3)",
        f"tpchgen-cli: {out([tool('tpchgen-cli', 'pip install tpchgen-cli'), '--version'])}, scale factor {TPCH_SCALE}",
        f"Linux UAPI headers (linux-libc-dev): {dpkg}",
        f"Brotli sources: PyPI sdist brotli=={BROTLI[1]}",
        f"machine: {platform.system()} {platform.release()} {platform.machine()}",
    ]


README = """# Bundled real traces

Real file-level traces recorded on this project's machines with `bufsim collect` (strace with
`-k` stacks: every record carries its program context). Regenerate them all with
`make workloads` (or `.venv/bin/python scripts/collect_workloads.py`), which also rewrites this
page; the table comes from `scripts/trace_stats.py`.

| trace | what ran | recorded files |
|---|---|---|
| `grep.csv.gz` | {grep_words} searches, one after the other: `grep -r -c -w WORD` over the Linux kernel UAPI headers ({grep_tree}), like glimpse and cscope in the papers | `--include /usr/include` |
| `tpch.csv.gz` | TPC-H on SQLite at scale factor {scale} (data from tpchgen-cli): one `sqlite3` shell session of Q1 Q6 Q3 Q14 Q12 Q5 Q1 Q6 with a 1 MiB SQLite page cache, so each query rereads lineitem from the file system ([scripts/tpch_sqlite.py](../scripts/tpch_sqlite.py)) | `--include` the database directory |
| `gcc.csv.gz` | a build of Brotli {brotli} (the C library's sources from its PyPI sdist): 32 `gcc -O1 -c` compiles and the link | everything but the loader's reads: `--exclude` {loader} |
| `multi.csv.gz` | `grep` and `tpch` running at the same time, like multi1-3 in the papers | both `--include` directories |
| `md5grep.csv.gz` | five `md5sum` passes over a 24 MiB file, each followed by three `grep -r -c` passes over 200 files of 16 KiB (seeded contents): a long loop and a short one from two program contexts, the case of AMP's partition sizing (docs/policies/amp.md) | `--include` its directory |

{table}

Columns: requests are system calls that moved data; 4 KiB refs count every block each request
touches; the footprint counts distinct file blocks; contexts are distinct program contexts
(non-zero `ctx`); consecutive is the fraction of 4 KiB references to the same block or the next
one of the same file as the same process's preceding reference (prefetching paper §6.1); traced s
is the wall time under strace, which slows each system call by about 1 ms with `-k`.

In the TPC-H session one SQLite call site reads the whole lineitem table seven times (for Q1, Q6,
Q14, Q12, Q5, then Q1 and Q6 again): a looping program context for AMP, beside the key lookups
into orders, customer and part from other contexts, and the sorts' temporary files.
`tests/test_collect_workloads.py` checks that loop and runs every trace through `bufsim run`.

bufsim's readers decompress gzip and zstd traces as they read them (told by the file's first
bytes, not its name): `bufsim run traces/tpch.csv.gz ...` reads the trace as it is.

Recorded with:
{versions}
"""


def write_readme(out_dir: Path) -> None:
    traces = [
        out_dir / f"{n}.csv.gz"
        for n in ("grep", "tpch", "gcc", "multi", "md5grep")
        if (out_dir / f"{n}.csv.gz").exists()
    ]
    table = trace_stats.markdown([trace_stats.stats(str(p)) for p in traces])
    text = README.format(
        grep_words=", ".join(f"`{w}`" for w in GREP_WORDS),
        grep_tree=", ".join(f"`{t}`" for t in GREP_TREE),
        scale=TPCH_SCALE,
        brotli=BROTLI[1],
        loader=" ".join(f"`{p}`" for p in LOADER_ONLY),
        table=table,
        versions="\n".join(f"- {v}" for v in versions()),
    )
    (out_dir / "README.md").write_text(text)
    print(table)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "traces"), help="where the .csv.gz files and README go")
    ap.add_argument("--work", default=str(WORK), help=f"scratch directory (default: {WORK})")
    ap.add_argument("--only", action="append", choices=["grep", "tpch", "gcc", "multi", "md5grep"])
    ap.add_argument("--readme-only", action="store_true", help="only recompute the README table")
    a = ap.parse_args()
    out_dir, work = Path(a.out), Path(a.work)
    out_dir.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    os.environ["LC_ALL"] = "C"  # no locale files in the traces, same messages everywhere
    wanted = a.only or ["grep", "tpch", "gcc", "multi", "md5grep"]
    if not a.readme_only:
        tool("strace", "install it with `apt-get install strace`")
        tool("gcc", "install it with `apt-get install gcc`")
        if "grep" in wanted:
            collect("grep", grep_command(), out_dir, work, include=["/usr/include"])
        if "tpch" in wanted or "multi" in wanted:
            db = tpch_prepare(work)
        if "tpch" in wanted:
            collect("tpch", tpch_command(db), out_dir, work, include=[str(db.parent)])
        if "gcc" in wanted:
            src = gcc_prepare(work)
            collect("gcc", gcc_command(src), out_dir, work, exclude=LOADER_ONLY)
        if "multi" in wanted:
            both = " & ".join(shlex.join(c) for c in (grep_command(), tpch_command(db)))
            collect("multi", ["sh", "-c", f"{both} & wait"], out_dir, work, include=["/usr/include", str(db.parent)])
        if "md5grep" in wanted:
            d = md5grep_prepare(work)
            collect("md5grep", md5grep_command(d), out_dir, work, include=[str(d)])
    write_readme(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
