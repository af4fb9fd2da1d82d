#!/usr/bin/env python3
"""Records the workload suite (python/bufsim/workloads.py) with `bufsim collect --tracer kernel`.

    .venv/bin/python scripts/record_workloads.py                  # all ten (about an hour)
    .venv/bin/python scripts/record_workloads.py --only cscope gcc

Needs root, tracefs, and the Debian packages cscope glimpse linux-source gcc postgresql
mariadb-server sqlite3 plus tpchgen-cli in .venv (`make workloads` installs them). Inputs are the Linux 6.1 sources from
/usr/src/linux-source-6.1.tar.xz, unpacked under /tmp/bufsim-workloads. Each trace is converted to
.bst and compressed with zstd into traces/kernel/NAME.bst.zst (bufsim reads it as it is); the
page-cache companion file goes beside it, gzip-compressed, when it is small enough to commit
(PAGECACHE_LIMIT), and traces/kernel/workloads.json gets the workload's entry. Every program is run
with fixed inputs (the same symbols, words, queries, random seeds), so the requests are the same
from run to run up to the kernel's and PostgreSQL's own timing-dependent behaviour.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from bufsim.ktrace import collect_kernel, pagecache_path  # noqa: E402
from bufsim.validate import EXCLUDE as LOADER_ONLY  # noqa: E402
from bufsim.validate import TRACE_BUFFER_KB  # noqa: E402
from bufsim.workloads import SUITE  # noqa: E402

OUT = ROOT / "traces" / "kernel"
WORK = Path(os.environ.get("BUFSIM_WORKLOADS_TMP", "/tmp/bufsim-workloads"))
SOURCE_TAR = Path("/usr/src/linux-source-6.1.tar.xz")
PG_BIN = Path("/usr/lib/postgresql/15/bin")
VENV_BIN = Path(sys.executable).parent
PAGECACHE_LIMIT = 8 << 20  # compressed bytes of a page-cache file worth committing
SUBTREES = ["fs", "kernel", "mm", "include", "ipc", "block"]
CSCOPE_SYMBOLS = [
    "inode_lock",
    "kmalloc",
    "spin_lock",
    "mutex_lock",
    "schedule",
    "wake_up_process",
    "copy_from_user",
    "filemap_read",
    "page_cache_sync_ra",
    "submit_bio",
    "iput",
    "dput",
    "d_alloc",
    "vfs_read",
    "vfs_write",
    "generic_file_read_iter",
    "ext4_map_blocks",
    "btrfs_search_slot",
    "xfs_iget",
    "folio_lock",
    "alloc_pages",
    "free_pages",
    "kmem_cache_alloc",
    "rcu_read_lock",
    "synchronize_rcu",
    "list_add",
    "hlist_del",
    "atomic_inc",
    "refcount_inc",
    "task_struct",
    "mm_struct",
    "vm_area_struct",
    "do_fork",
    "kernel_clone",
    "do_exit",
    "signal_wake_up",
    "send_sig",
    "hrtimer_start",
    "mod_timer",
    "queue_work",
    "flush_work",
    "blk_mq_submit_bio",
    "bio_alloc",
    "sb_bread",
    "mark_buffer_dirty",
    "writeback_inodes_sb",
    "balance_dirty_pages",
    "shrink_node",
    "lru_add_drain",
    "workingset_refault",
    "readahead_control",
    "address_space",
    "super_block",
    "dentry",
    "file_operations",
    "path_lookupat",
    "do_sys_open",
    "ksys_read",
    "fdget",
    "fput",
    "get_unused_fd_flags",
    "anon_inode_getfile",
    "seq_printf",
    "printk",
]
GLIMPSE_WORDS = [
    "spinlock",
    "mutex",
    "inode",
    "dentry",
    "folio",
    "bio",
    "superblock",
    "readahead",
    "writeback",
    "journal",
    "extent",
    "btree",
    "rcu",
    "refcount",
    "atomic",
    "schedule",
    "timer",
    "interrupt",
    "signal",
    "futex",
    "semaphore",
    "completion",
    "workqueue",
    "kthread",
    "cgroup",
    "namespace",
    "capability",
    "audit",
    "quota",
    "xattr",
    "acl",
    "checksum",
    "compression",
    "encryption",
    "deadlock",
    "overflow",
    "alignment",
    "endian",
    "barrier",
    "preempt",
    "migrate",
    "hugepage",
    "swap",
    "reclaim",
    "shrinker",
    "mmap",
    "fault",
    "truncate",
]
#: Workloads stopped after this many seconds (everything they started is killed; the trace is
#: whole up to that moment): the four-program mix would otherwise trace for a quarter of an hour.
TIMEOUTS = {"multi3": 240.0}
#: The parts of an x86_64 defconfig kernel the gcc workload compiles (the core kernel: about 1M block
#: accesses; fs/ and lib/ would add an hour of tracing on a 2-core machine).
KBUILD_DIRS = ["init/", "kernel/", "mm/", "block/", "ipc/"]
TPCH_SCALE = "0.3"
#: MyISAM reads a row with a system call of its own, so the queries make about 30 million reads at
#: scale 0.3: the kernel tracer's buffers overflow and the trace would be 200 MB. At 0.05 the
#: database is 60 MB, the size of the paper's tpc-h working set (59 MB).
TPCH_MYSQL_SCALE = "0.05"
#: Kernel trace buffer per CPU (KiB) where the default 256 MiB does not hold the events the
#: recorder has not read yet: MyISAM's reads come faster than trace_pipe is copied out
#: (`bufsim validate` asks for the same for every command).
BUFFER_KB = {"tpch-mysql": TRACE_BUFFER_KB, "multi4": TRACE_BUFFER_KB}
TPCH_TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]
# The two largest tables, which unxz reads once (the others three times).
UNXZ_ONCE = ("orders", "lineitem")


def run(cmd, **kw) -> None:
    print("+", cmd if isinstance(cmd, str) else shlex.join(map(str, cmd)), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kw)


def out(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def deb_version(pkg: str) -> str:
    return out(["dpkg-query", "-W", "-f", "${Version}", pkg])


# ---------------------------------------------------------------------------------------------
# Inputs (prepared untraced)


def sources() -> Path:
    src = WORK / "src" / "linux-source-6.1"
    if not (src / "Makefile").exists():
        (WORK / "src").mkdir(parents=True, exist_ok=True)
        run(["tar", "xf", str(SOURCE_TAR), "-C", str(WORK / "src")])
    return src


def kbuild(tag: str, config: str = "defconfig") -> Path:
    """A kernel tree of its own for each recording (``config``, ``make prepare`` done), its objects
    removed, so every run compiles them all."""
    b = (WORK / f"kbuild-{tag}").resolve()
    if not (b / "include" / "generated" / "autoconf.h").exists():
        shutil.rmtree(b, ignore_errors=True)
        b.mkdir(parents=True)
        run(["cp", "-a", str(sources()) + "/.", str(b)])
        run(["make", "-s", "-C", str(b), config])
        run(["make", "-s", "-C", str(b), "-j2", "prepare"])
    run(f"find {shlex.quote(str(b))} -name '*.o' -newer {shlex.quote(str(b / '.config'))} -delete", shell=True)
    return b


def script(name: str, body: str) -> Path:
    p = WORK / f"{name}.sh"
    p.write_text("set -e\n" + body)
    return p


def cscope_script(tag: str) -> Path:
    src = sources()
    d = WORK / f"cscope-{tag}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    files = subprocess.run(
        ["find", *SUBTREES, "-name", "*.[ch]", "-type", "f"], cwd=src, capture_output=True, text=True, check=True
    ).stdout.split()
    (d / "files.txt").write_text("\n".join(sorted(files)) + "\n")
    q = "\n".join(f"cscope -d -L -0 {s} -f {d}/cscope.out > /dev/null" for s in CSCOPE_SYMBOLS)
    return script(f"cscope-{tag}", f"cd {src}\ncscope -b -k -i {d}/files.txt -f {d}/cscope.out\n{q}\n")


def glimpse_script(tag: str) -> Path:
    src = sources()
    d = WORK / f"glimpse-{tag}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    q = "\n".join(f"glimpse -y -H {d} -c -w {w} > /dev/null || true" for w in GLIMPSE_WORDS)
    return script(f"glimpse-{tag}", f"cd {src}\nglimpseindex -H {d} -n {' '.join(SUBTREES)} > /dev/null\n{q}\n")


def gcc_script(tag: str) -> Path:
    if tag == "solo":
        b = kbuild(tag)
        return script(f"gcc-{tag}", f"make -s -C {b} -j2 {' '.join(KBUILD_DIRS)} > /dev/null 2>&1 || true\n")
    # In the mixes, a smaller build (the whole tinyconfig kernel) keeps the mix's length near cscope's.
    b = kbuild(f"tiny-{tag}", "tinyconfig")
    return script(f"gcc-{tag}", f"make -s -C {b} -j2 vmlinux > /dev/null 2>&1 || true\n")


def pg_cluster(tag: str) -> tuple[Path, Path]:
    d = WORK / f"pg-{tag}"
    shutil.rmtree(d, ignore_errors=True)
    (d / "sock").mkdir(parents=True)
    shutil.chown(d, "postgres", "postgres")
    shutil.chown(d / "sock", "postgres", "postgres")
    run(
        ["runuser", "-u", "postgres", "--", str(PG_BIN / "initdb"), "-D", str(d / "data"), "-A", "trust", "--no-sync"],
        stdout=subprocess.DEVNULL,
    )
    return d, d / "sock"


def pg_start_stop(d: Path, sock: Path) -> tuple[str, str]:
    pgctl = f"runuser -u postgres -- {PG_BIN}/pg_ctl -D {d}/data -l {d}/log -w"
    opts = f"-c shared_buffers=16MB -c listen_addresses='' -k {sock} -c fsync=on -c max_parallel_workers_per_gather=0"
    return f'{pgctl} -o "{opts}" start > /dev/null', f"{pgctl} -m fast stop > /dev/null"


def tpch_script(tag: str) -> Path:
    data = tpch_data()
    d, sock = pg_cluster(f"tpch-{tag}")
    start, stop = pg_start_stop(d, sock)
    psql = f"runuser -u postgres -- psql -q -X -h {sock} -d postgres -v ON_ERROR_STOP=0"
    copies = "\n".join(
        f"{psql} -c \"copy {t} from '{data}/{t}.csv' with (format csv, header true)\"" for t in TPCH_TABLES
    )
    schema = ROOT / "scripts" / "tpch" / "schema.sql"
    queries = ROOT / "scripts" / "tpch" / "queries.sql"
    return script(
        f"tpch-{tag}",
        f"""{start}
{psql} -f {schema} > /dev/null
{copies}
{psql} -c "create index on lineitem (l_partkey, l_suppkey)" -c "create index on orders (o_custkey)" -c "analyze"
PGOPTIONS='-c statement_timeout=120s' {psql} -f {queries} > /dev/null 2>&1 || true
{stop}
""",
    )


def tpch_data(scale: str = TPCH_SCALE) -> Path:
    data = WORK / f"tpch-data-{scale}"
    if not (data / "lineitem.csv").exists():
        data.mkdir(parents=True, exist_ok=True)
        run([str(VENV_BIN / "tpchgen-cli"), "csv", "-s", scale, f"--output-dir={data}"])
    os.chmod(WORK, 0o755)
    os.chmod(data, 0o755)
    return data


def mariadb_start_stop(d: Path) -> tuple[str, str]:
    """The server as the paper's MySQL ran it: MyISAM tables, whose rows the server reads through
    the page cache one record at a time, and the 8 MB key cache of MySQL 4.1 and 5.0's default
    (MariaDB's own default is 128 MB)."""
    start = (
        f"mariadbd --user=mysql --datadir={d}/data --socket={d}/sock --pid-file={d}/pid "
        f"--log-error={d}/err.log --skip-networking --skip-log-bin --performance-schema=OFF "
        "--default-storage-engine=MyISAM --key-buffer-size=8M --innodb-buffer-pool-size=8M "
        "--secure-file-priv='' &\n"
        f"mariadb-admin --socket={d}/sock --wait=60 ping > /dev/null"
    )
    return start, f"mariadb-admin --socket={d}/sock shutdown"


def mariadb_queries() -> Path:
    """The 22 queries of scripts/tpch/queries.sql in MariaDB's syntax: intervals as `interval N
    unit`, and Q13's derived table naming its column in the select list (MariaDB takes no column
    list after the alias)."""
    text = (ROOT / "scripts" / "tpch" / "queries.sql").read_text()
    text = re.sub(r"interval '(\d+) (day|month|year)s?'", r"interval \1 \2", text)
    text = text.replace("count(o_orderkey) from customer", "count(o_orderkey) as c_count from customer")
    text = text.replace(") as c_orders (c_custkey, c_count)", ") as c_orders")
    out = WORK / "tpch-queries-mariadb.sql"
    out.write_text(text)
    return out


def tpch_mysql_script(tag: str) -> Path:
    """TPC-H on MariaDB with MyISAM tables. The database is loaded and indexed untraced (the paper
    traced MySQL answering TPC-H's queries against a database built beforehand); the trace is the
    server starting on it, the 22 queries and the shutdown."""
    data = tpch_data(TPCH_MYSQL_SCALE)
    d = WORK / f"mysql-tpch-{tag}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    shutil.chown(d, "mysql", "mysql")
    run(
        ["mariadb-install-db", "--user=mysql", f"--datadir={d}/data", "--skip-test-db"],
        stdout=subprocess.DEVNULL,
    )
    start, stop = mariadb_start_stop(d)
    client = f"mariadb --socket={d}/sock"
    loads = "\n".join(
        f"{client} tpch -e \"load data infile '{data}/{t}.csv' into table {t} fields terminated by ',' "
        f"optionally enclosed by '\\\"' ignore 1 lines\""
        for t in TPCH_TABLES
    )
    schema = ROOT / "scripts" / "tpch" / "schema.sql"
    build = script(
        f"tpch-mysql-{tag}-load",
        f"""{start}
{client} -e "create database tpch"
{client} tpch < {schema}
{loads}
{client} tpch -e "create index l_ps on lineitem (l_partkey, l_suppkey); create index o_c on orders (o_custkey)"
{client} tpch -e "analyze table {", ".join(TPCH_TABLES)}" > /dev/null
{stop}
""",
    )
    run(["sh", str(build)])
    queries = mariadb_queries()
    return script(
        f"tpch-mysql-{tag}",
        f"""{start}
{client} tpch --init-command="set max_statement_time=120" < {queries} > /dev/null 2>&1 || true
{stop}
""",
    )


def pgbench_script(tag: str) -> Path:
    d, sock = pg_cluster(f"pgbench-{tag}")
    start, stop = pg_start_stop(d, sock)
    bench = f"runuser -u postgres -- {PG_BIN}/pgbench -h {sock} postgres"
    return script(
        f"pgbench-{tag}",
        f"""{start}
{bench} -i -s 20 -q > /dev/null 2>&1
{bench} -c 4 -j 2 -t 5000 --random-seed=42 > /dev/null 2>&1
{stop}
""",
    )


def randread_script(tag: str) -> Path:
    d = WORK / f"randread-{tag}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    rng = random.Random(42)
    n = 1_500_000
    build = d / "build.sql"
    build.write_text(
        "pragma cache_size=-1024; pragma mmap_size=0; pragma journal_mode=off;\n"
        "create table t (k integer, v text);\n"
        f"with recursive c(i) as (select 1 union all select i + 1 from c where i < {n}) "
        "insert into t select (i * 2654435761) % 4294967291, hex(randomblob(48)) from c;\n"
        "create index t_k on t (k);\n"
    )
    keys = [((rng.randrange(1, n + 1)) * 2654435761) % 4294967291 for _ in range(100_000)]
    (d / "query.sql").write_text(
        "pragma cache_size=-1024; pragma mmap_size=0;\n" + "".join(f"select v from t where k = {k};\n" for k in keys)
    )
    return script(f"randread-{tag}", f"sqlite3 {d}/db < {build}\nsqlite3 {d}/db < {d}/query.sql > /dev/null\n")


def unxz_script(tag: str) -> Path:
    """The papers' viewperf (a few large files read whole, sequentially, in small chunks, by a
    CPU-bound program): ``xz -dc`` reads 8 KiB at a time and decompresses each chunk before the
    next. Its inputs, compressed beforehand: the TPC-H tables; the source tarball as shipped."""
    data = tpch_data()
    d = WORK / f"unxz-{tag}"
    d.mkdir(parents=True, exist_ok=True)
    for t in TPCH_TABLES:
        x = d / f"{t}.csv.xz"
        if not x.exists():
            run(f"xz -1 -T1 -c {shlex.quote(str(data / f'{t}.csv'))} > {shlex.quote(str(x))}", shell=True)
    every = " ".join(shlex.quote(str(d / f"{t}.csv.xz")) for t in TPCH_TABLES)
    smaller = " ".join(shlex.quote(str(d / f"{t}.csv.xz")) for t in TPCH_TABLES if t not in UNXZ_ONCE)
    return script(
        f"unxz-{tag}",
        f"xz -dc {SOURCE_TAR} > /dev/null\nxz -dc {every} > /dev/null\n"
        f"xz -dc {smaller} > /dev/null\nxz -dc {smaller} > /dev/null\n",
    )


def together(name: str, parts: list[Path]) -> Path:
    body = "".join(f"sh {p} &\n" for p in parts) + "wait\n"
    return script(name, body)


BUILDERS = {
    "cscope": lambda: cscope_script("solo"),
    "glimpse": lambda: glimpse_script("solo"),
    "gcc": lambda: gcc_script("solo"),
    "tpch": lambda: tpch_script("solo"),
    "tpch-mysql": lambda: tpch_mysql_script("solo"),
    "pgbench": lambda: pgbench_script("solo"),
    "randread": lambda: randread_script("solo"),
    "unxz": lambda: unxz_script("solo"),
    "multi1": lambda: together("multi1", [cscope_script("m1"), gcc_script("m1")]),
    "multi2": lambda: together("multi2", [glimpse_script("m2"), tpch_script("m2")]),
    "multi3": lambda: together(
        "multi3", [cscope_script("m3"), glimpse_script("m3"), gcc_script("m3"), randread_script("m3")]
    ),
    "multi4": lambda: together("multi4", [glimpse_script("m4"), tpch_mysql_script("m4")]),
    "multi5": lambda: together("multi5", [cscope_script("m5"), gcc_script("m5"), unxz_script("m5")]),
}
PACKAGES = {
    "cscope": ["cscope", "linux-source-6.1"],
    "glimpse": ["glimpse", "linux-source-6.1"],
    "gcc": ["gcc-12", "make", "linux-source-6.1"],
    "tpch": ["postgresql-15"],
    "tpch-mysql": ["mariadb-server"],
    "pgbench": ["postgresql-15"],
    "randread": ["sqlite3"],
    "unxz": ["xz-utils", "linux-source-6.1"],
}
PACKAGES["multi1"] = sorted(set(PACKAGES["cscope"] + PACKAGES["gcc"]))
PACKAGES["multi2"] = sorted(set(PACKAGES["glimpse"] + PACKAGES["tpch"]))
PACKAGES["multi4"] = sorted(set(PACKAGES["glimpse"] + PACKAGES["tpch-mysql"]))
PACKAGES["multi5"] = sorted(set(PACKAGES["cscope"] + PACKAGES["gcc"] + PACKAGES["unxz"]))
PACKAGES["multi3"] = sorted(set(PACKAGES["cscope"] + PACKAGES["glimpse"] + PACKAGES["gcc"] + PACKAGES["randread"]))


# ---------------------------------------------------------------------------------------------
# Statistics the papers give (prefetching paper Table 4: time between I/O calls)


def call_gaps(csv_path: Path) -> tuple[float, float]:
    """Mean and standard deviation (ms) of the time between one I/O call's completion and the same
    process's next call: the think time the prefetching paper's Table 4 reports."""
    last_end: dict[str, int] = {}
    gaps: list[float] = []
    with open(csv_path) as f:
        for line in f:
            if line.startswith(("#", "time_us")):
                continue
            t, dur, pid = line.split(",", 3)[:3]
            t, dur = int(t), int(dur)
            if pid in last_end:
                gaps.append(max(0, t - last_end[pid]) / 1000)
            last_end[pid] = t + dur
    if len(gaps) < 2:
        return 0.0, 0.0
    return statistics.fmean(gaps), statistics.pstdev(gaps)


def record(name: str) -> dict:
    sh = BUILDERS[name]()
    command = ["sh", str(sh)]
    csv = WORK / f"{name}.csv"
    print(f"recording {name}: {SUITE[name]}", file=sys.stderr, flush=True)
    t = time.monotonic()
    r = collect_kernel(
        command,
        str(csv),
        exclude=LOADER_ONLY,
        stacks=False,
        buffer_kb=BUFFER_KB.get(name, 262144),
        timeout=TIMEOUTS.get(name),
    )
    traced_s = time.monotonic() - t
    print(r.summary(), file=sys.stderr, flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    bst = WORK / f"{name}.bst"
    bufsim = VENV_BIN / "bufsim"
    run([str(bufsim), "convert", str(csv), "-o", str(bst)], stdout=subprocess.DEVNULL)
    target = OUT / f"{name}.bst.zst"
    run(["zstd", "-q", "-f", "-15", "-T2", str(bst), "-o", str(target)])
    # gzip, not zstd: Python reads it without the zstd program (bufsim.ktrace.read_pagecache)
    pc_target = OUT / f"{name}.pagecache.csv.gz"
    with (
        open(pagecache_path(str(csv)), "rb") as src,
        open(pc_target, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as dst,
    ):
        shutil.copyfileobj(src, dst, 1 << 20)
    if pc_target.stat().st_size > PAGECACHE_LIMIT:
        pc_target.unlink()
    stats = json.loads(
        subprocess.run(
            [str(bufsim), "analyze", "--json", str(target)], capture_output=True, text=True, check=True
        ).stdout
    )
    mean, sd = call_gaps(csv)
    entry = {
        "name": name,
        "description": SUITE[name],
        "command": sh.read_text().replace("set -e\n", "", 1).strip().splitlines(),
        "packages": {p: deb_version(p) for p in PACKAGES[name]},
        "kernel": f"Linux {platform.release()} {platform.machine()}",
        "tracer": "bufsim collect --tracer kernel --no-stacks --exclude " + " --exclude ".join(LOADER_ONLY),
        "outcome": r.outcome,
        "lost_events": r.lost_events,
        "pagecache_totals": {
            "looked_up": r.looked_up,
            "hits": r.hits,
            "inserted": r.inserted,
            "evicted": r.evicted,
            "disk_requests": r.disk_requests,
        },
        "requests": stats["requests"]["total"],
        "reads": stats["requests"]["reads"],
        "writes": stats["requests"]["writes"],
        "block_accesses": stats["accesses"]["total"],
        "footprint_blocks": stats["footprint"]["blocks"],
        "files": stats["requests"]["files"],
        "processes": stats["requests"]["pids"],
        "consecutive": round(stats["consecutive"]["fraction"], 4),
        "working_set_blocks": stats["working_set"]["blocks"] if stats.get("working_set") else None,
        "call_gap_mean_ms": round(mean, 4),
        "call_gap_sd_ms": round(sd, 4),
        "traced_s": round(traced_s, 1),
        "path": target.name,
        "pagecache": pc_target.name if pc_target.exists() else None,
        "size_bytes": target.stat().st_size,
    }
    if name.startswith("tpch"):
        entry["packages"]["tpchgen-cli"] = out([str(VENV_BIN / "tpchgen-cli"), "--version"])
    if name == "pgbench":
        entry["packages"]["pgbench"] = out([str(PG_BIN / "pgbench"), "--version"])
    manifest = OUT / "workloads.json"
    entries = json.loads(manifest.read_text()) if manifest.exists() else []
    entries = [e for e in entries if e["name"] != name] + [entry]
    order = list(SUITE)
    entries.sort(key=lambda e: order.index(e["name"]))
    manifest.write_text(json.dumps(entries, indent=1) + "\n")
    for p in (csv, bst, Path(pagecache_path(str(csv)))):
        p.unlink(missing_ok=True)
    return entry


# The papers' statistics for the same applications (their machines, their inputs): prefetching
# paper Table 4 (references in 4 KiB blocks, data size MB, files, consecutive fraction, mean and SD
# of the time between I/O calls in ms), DULO Table 2 (block accesses in millions, aggregate file
# size MB, files, sequential references) and AMP Table 2 (total pages, unique pages).
PAPERS = {
    "cscope": ("1,119,161 refs, 260 MB, 10,635 files, 73.3%, 0.13 / 0.86 ms", "", "80,650 pages, 26,936 unique"),
    "glimpse": (
        "3,102,248 refs, 669 MB, 43,649 files, 74.8%, 0.24 / 0.31 ms",
        "3.1 M, 669 MB, 43,649 files, 74%",
        "307,324 pages, 71,868 unique",
    ),
    "gcc": (
        "965,372 refs, 163 MB, 10,834 files, 35.0%, 2.57 / 23.10 ms",
        "",
        "kernelbuild: 403,530 pages, 98,699 unique",
    ),
    "tpch": (
        "14,275,597 refs, 1,074 MB, 65 files, 53.0%, 0.08 / 1.25 ms",
        "13.5 M, 1,187 MB, 49 files, 3%",
        "dbt3 (1/7 sample): 1,035,152 pages, 84,890 unique",
    ),
    "tpch-mysql": ("14,275,597 refs, 1,074 MB, 65 files, 53.0%, 0.08 / 1.25 ms", "13.5 M, 1,187 MB, 49 files, 3%", ""),
    "pgbench": ("", "", "osdb: 9,610 pages, 3,112 unique"),
    "randread": ("", "", ""),
    "unxz": (
        "viewperf: 303,123 refs, 495 MB, 289 files, 99.2%, 1.84 / 154.98 ms",
        "viewperf: 0.3 M, 495 MB, 289 files, 99%",
        "",
    ),
    "multi1": (
        "1,278,135 refs, 297 MB, 12,246 files, 67.9%, 0.26 / 1.37 ms",
        "1.6 M, 792 MB, 12,514 files, 75% (cscope+gcc+viewperf)",
        "",
    ),
    "multi2": (
        "1,580,871 refs, 792 MB, 12,477 files, 73.6%, 0.49 / 56.36 ms",
        "16.6 M, 1,855 MB, 43,696 files, 16% (glimpse+tpc-h)",
        "",
    ),
    "multi3": ("17,383,716 refs, 1,744 MB, 43,737 files, 56.0%, 0.15 / 2.66 ms", "", ""),
    "multi4": (
        "multi3: 17,383,716 refs, 1,744 MB, 43,737 files, 56.0%, 0.15 / 2.66 ms",
        "multi2: 16.6 M, 1,855 MB, 43,696 files, 16%",
        "",
    ),
    "multi5": (
        "multi2: 1,580,871 refs, 792 MB, 12,477 files, 73.6%, 0.49 / 56.36 ms",
        "multi1: 1.6 M, 792 MB, 12,514 files, 75%",
        "",
    ),
}
README_START = "<!-- kernel workloads: written by scripts/record_workloads.py -->"
README_END = "<!-- end of kernel workloads -->"


def write_readme() -> None:
    """Rewrites the kernel-suite section of traces/README.md from traces/kernel/workloads.json."""
    manifest = OUT / "workloads.json"
    entries = json.loads(manifest.read_text()) if manifest.exists() else []
    by = {e["name"]: e for e in entries}
    lines = [
        README_START,
        "",
        "## The workload suite recorded with the kernel tracer (`traces/kernel/`)",
        "",
        "Recorded on a live kernel with `bufsim collect --tracer kernel` (docs/collect.md) by "
        "`make kernel-workloads` (`scripts/record_workloads.py`); `bufsim workloads [--json]` lists "
        "each with its command, package versions and kernel. Every trace is a zstd-compressed `.bst` "
        "that `bufsim run` and `bufsim analyze` read directly; `NAME.pagecache.csv.gz` beside it is "
        "the kernel's page-cache ground truth for the same run (`bufsim.ktrace.read_pagecache`), "
        "kept when small enough to commit.",
        "",
        "| workload | what ran | requests | block accesses | footprint (MiB) | working set (MiB) | files | "
        "consecutive | time between I/O calls, mean / SD (ms) | traced s | size (MiB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, what in SUITE.items():
        e = by.get(name)
        if e is None:
            lines.append(f"| `{name}` | {what} | not recorded | | | | | | | | |")
            continue
        lines.append(
            f"| `{name}` | {what} | {e['requests']:,} | {e['block_accesses']:,} | "
            f"{e['footprint_blocks'] * 4096 / (1 << 20):,.0f} | "
            f"{'-' if e.get('working_set_blocks') is None else format(e['working_set_blocks'] * 4096 / (1 << 20), ',.0f')} | "
            f"{e['files']:,} | {e['consecutive']:.1%} | "
            f"{e['call_gap_mean_ms']:.3f} / {e['call_gap_sd_ms']:.3f} | {e['traced_s']:.0f} | "
            f"{e['size_bytes'] / (1 << 20):.1f} |"
        )
    lines += [
        "",
        "Requests, block accesses (4 KiB blocks each request touches), footprint (distinct blocks), "
        "working set (the smallest cache in which OPT reaches 90% of its infinite-cache hit ratio, the "
        "prefetching paper's definition), files and consecutive (the fraction of block references to the same or next block of the "
        "same file as the same process's previous one, prefetching paper §6.1) are `bufsim analyze "
        "--json` of each trace; the time between I/O calls (from one call's completion to the same "
        "process's next call, the prefetching paper's Table 4 measure) is computed by the recorder "
        "from the trace's `time_us` and `dur_us`, which the kernel tracer takes from the kernel's "
        "monotonic clock without stopping the program. Traced s is the wall time of the whole "
        "recording, the replay after the command included. These traces were recorded on a 2-core "
        "machine shared with other jobs (load average 15-20; gcc, tpch, pgbench, multi1 and multi2 "
        "also beside other recordings), so the times between I/O calls include waiting for a CPU "
        "and are upper bounds for this machine. The same statistics in the papers, for the "
        "same applications on their machines and inputs:",
        "",
        "| workload | prefetching paper Table 4 | DULO Table 2 | AMP Table 2 |",
        "|---|---|---|---|",
    ]
    for name in SUITE:
        t4, d2, a2 = PAPERS[name]
        lines.append(f"| `{name}` | {t4 or '-'} | {d2 or '-'} | {a2 or '-'} |")
    lines += ["", README_END]
    readme = ROOT / "traces" / "README.md"
    text = readme.read_text() if readme.exists() else ""
    block = "\n".join(lines) + "\n"
    if README_START in text and README_END in text:
        head, rest = text.split(README_START, 1)
        tail = rest.split(README_END, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    readme.write_text(text)


def refresh(names: list[str]) -> None:
    """Recomputes each recorded workload's `bufsim analyze` statistics, working-set size included
    (prefetching paper §6.1: the smallest cache where OPT reaches 90% of its infinite-cache hit
    ratio), from its committed trace, and stores page-cache companions gzip-compressed. The manifest
    is re-read just before it is written, so recordings finishing meanwhile are kept."""
    manifest = OUT / "workloads.json"
    bufsim = VENV_BIN / "bufsim"
    updates: dict[str, dict] = {}
    for e in json.loads(manifest.read_text()):
        if e["name"] not in names:
            continue
        u: dict = {}
        pc = e.get("pagecache")
        if pc and pc.endswith(".zst"):
            gz = OUT / (pc[:-4] + ".gz")
            data = subprocess.run(["zstd", "-dc", str(OUT / pc)], capture_output=True, check=True).stdout
            with (
                open(gz, "wb") as raw,
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as dst,
            ):
                dst.write(data)
            (OUT / pc).unlink()
            u["pagecache"] = gz.name
        stats = json.loads(
            subprocess.run(
                [str(bufsim), "analyze", "--json", str(OUT / e["path"])], capture_output=True, text=True, check=True
            ).stdout
        )
        u["working_set_blocks"] = stats["working_set"]["blocks"] if stats.get("working_set") else None
        u["requests"] = stats["requests"]["total"]
        u["block_accesses"] = stats["accesses"]["total"]
        u["footprint_blocks"] = stats["footprint"]["blocks"]
        u["consecutive"] = round(stats["consecutive"]["fraction"], 4)
        updates[e["name"]] = u
        print(f"{e['name']}: working set {u['working_set_blocks']} blocks", file=sys.stderr, flush=True)
    entries = json.loads(manifest.read_text())
    for e in entries:
        e.update(updates.get(e["name"], {}))
    manifest.write_text(json.dumps(entries, indent=1) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=list(SUITE), help="record only these")
    ap.add_argument("--readme", action="store_true", help="only rewrite traces/README.md's section")
    ap.add_argument(
        "--refresh",
        action="store_true",
        help="only recompute the recorded workloads' statistics (with working sets) from their traces",
    )
    args = ap.parse_args()
    if args.refresh:
        refresh(args.only or list(SUITE))
        write_readme()
        return 0
    if args.readme:
        write_readme()
        return 0
    WORK.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.only or list(SUITE):
        try:
            e = record(name)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"{name}: not recorded: {exc}", file=sys.stderr, flush=True)
            failed.append(name)
            continue
        print(
            f"{name}: {e['requests']:,} requests, {e['block_accesses']:,} block accesses, footprint "
            f"{e['footprint_blocks']:,} blocks, {e['size_bytes'] / (1 << 20):.1f} MiB",
            file=sys.stderr,
            flush=True,
        )
    write_readme()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
