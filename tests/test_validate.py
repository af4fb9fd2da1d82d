"""The Linux 6 model (`linux` policy, `linux-6` read-ahead) and `bufsim validate`.

Hand-computed read-ahead decisions on a small trace; small validation runs against the live kernel
(a looping scan, small files, random reads under memory pressure, random reads each hinted first,
a mixed workload, rewritten and deleted files, a written file pushed out and read again) asserting
the agreement docs/validation.md reports; and the errors: no root, no tracefs, no memory controller, a failing
command. The kernel runs need root, a memory cgroup and tracefs (mounted if absent); each cgroup is
removed whatever happens."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bufsim import _core
from bufsim import validate as V
from bufsim.cli import main
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))


def write_trace(path: Path, reads: list[tuple[int, int]], name: str = "f") -> Path:
    path.write_text("op,file,offset,size\n" + "".join(f"R,{name},{o},{n}\n" for o, n in reads))
    return path


def test_sequential_one_page_reads_give_the_kernels_windows(tmp_path):
    # A 100-page file read a page at a time, read-ahead of at most 32 pages with large folios.
    # (0,4,3): the first read, get_init_ra_size(1) = 4, marker on page 1.
    # (4,8,8): the marker: the window moves to 4 and doubles; order 2.
    # (12,4,4): the marker folio at 4: next size 16, order 4 aligns the end 28 down to 16.
    # (16,8,8): at 12 (an order-2 folio): size 8, order 4 + ... aligns 24 to 16 = start: no trim.
    # (24,8,8): at the order-3 folio 16: next size 16, order 5 aligns 40 down to 32.
    t = write_trace(tmp_path / "t.csv", [(p * 4096, 4096) for p in range(100)])
    log = V.page_log(str(t), "linux", 1000, "linux-6(max=32)", [("f", 100 * 4096)], [])
    assert log["decisions"][:5] == [(0, 0, 4, 3), (0, 4, 8, 8), (0, 12, 4, 4), (0, 16, 8, 8), (0, 24, 8, 8)]
    # Everything read once, nothing evicted, every page but the first brought by read-ahead.
    assert log["misses"] == 1 and len(log["inserted"]) == 100 and len(log["evicted"]) == 0
    assert list(log["inserted"]) == list(range(100)) and list(log["inserted_prefetch"]) == [False] + [True] * 99


def test_random_reads_are_read_as_they_are(tmp_path):
    t = write_trace(tmp_path / "t.csv", [(0, 4096), (500 * 4096, 8192), (90 * 4096, 4096)])
    log = _core.page_log(str(t), "linux", 1000, "linux-6(max=32,folios=0)", [("f", 1000 * 4096)], [])
    assert log["decisions"] == [(0, 0, 4, 3), (0, 500, 2, 0), (0, 90, 1, 0)]


def test_a_file_of_its_own_gets_its_own_window(tmp_path):
    # fadvise(SEQUENTIAL) doubles a file's ra_pages: the first window of a 32-page read is then
    # get_init_ra_size(32, 64) = 64 instead of 32.
    t = write_trace(tmp_path / "t.csv", [(0, 32 * 4096)])
    log = _core.page_log(str(t), "lru", 1000, "linux-6(max=32)", [("f", 1000 * 4096)], [("f", 64)])
    assert log["decisions"][0] == (0, 0, 64, 32)


def test_the_model_is_registered():
    assert any(p["name"] == "linux" for p in _core.registry("policy"))
    assert any(p["name"] == "linux-2list" for p in _core.registry("policy"))
    names = [p["name"] for p in _core.registry("prefetch")]
    assert {"linux", "linux-ondemand", "linux-6"} <= set(names)


def test_windows_read_on_a_page_fault_are_not_compared():
    # A library the command maps: its read() of the ELF header asks for a window (compared); the
    # mmap fault that follows asks for read-around (not in the trace, so left out); a later read()
    # of the same file is compared again.
    from bufsim.ktrace import PageCacheEvent

    def ev(t, event, index, count, detail=""):
        return PageCacheEvent(t, 7, event, 1, 42, index, count, "", detail)

    rows = [
        ev(1, "lookup", 0, 1),
        ev(2, "ra_order", 0, 4, "async_size=3"),
        ev(3, "fault", 40, 1),
        ev(4, "ra_order", 24, 32, "async_size=0"),
        ev(5, "lookup", 100, 1),
        ev(6, "ra_order", 100, 8, "async_size=7"),
    ]
    assert V._kernel_decisions(rows, {(1, 42): 0}) == [(0, 0, 4, 3), (0, 100, 8, 7)]


def test_a_file_found_cached_is_left_out_of_the_read_ahead_comparison():
    # File 0 was read cold (its first lookup came after its pages were inserted: no hits);
    # file 1's first lookup found pages the run never inserted (a library other processes map).
    from bufsim.ktrace import PageCacheEvent

    rows = [
        PageCacheEvent(1, 7, "insert", 1, 42, 0, 4, None, ""),
        PageCacheEvent(2, 7, "lookup", 1, 42, 0, 1, None, ""),
        PageCacheEvent(3, 7, "lookup", 1, 43, 0, 1, 1, ""),
        PageCacheEvent(4, 7, "lookup", 1, 42, 1, 1, 1, ""),
    ]
    assert V._warm_files(rows, {(1, 42): 0, (1, 43): 1}) == {1}


def test_the_models_cache_follows_the_other_charges_over_time():
    # A 4 MiB limit (1024 pages). Non-file samples every 20 ms; untraced pages from events.
    mem = 1024 * V.PAGE
    non_file = [(0, 0), (20_000, 100 * V.PAGE), (40_000, 100 * V.PAGE), (60_000, 0)]
    untraced = [(5_000, 50), (45_000, 10)]
    times = [1_000, 6_000, 25_000, 41_000, 50_000, 70_000, 71_000]
    steps = V.cache_schedule(times, mem, non_file, untraced)
    # Request 0: samples 0 and 100 pages around it, the larger counts (1024 - 100); request 1:
    # 50 untraced pages too; 2 and 3 the same; 4: untraced down to 10 (+40 pages, a step: the
    # threshold is 16 pages); 5: the charge gone (1014).
    assert steps == [(0, 924), (1, 874), (4, 914), (5, 1014)]
    # Moves below the threshold make no step; the cache never falls below one page.
    assert V.cache_schedule([0, 100], mem, [(0, 0), (50, 10 * V.PAGE), (60, 0)], []) == [(0, 1014)]
    assert V.cache_schedule([0], mem, [(0, 2 * mem)], []) == [(0, 1)]


def test_a_sample_is_not_taken_while_the_cache_grows_under_it(tmp_path):
    # The usage and memory.stat are separate reads. A read-ahead window charged between them would
    # count as anonymous or kernel memory: 16 MiB here, which left the model a third of its cache
    # in a run on a busy machine. Such a sample is read again; one that stays torn is skipped.
    (tmp_path / "memory.stat").write_text("cache 8388608\nrss 65536\nactive_file 4194304\ninactive_file 4194304\n")
    usages = iter([8 << 20 | 1 << 20, 24 << 20, 8 << 20 | 1 << 20, 8 << 20 | 1 << 20])
    cg = object.__new__(V.MemoryCgroup)
    cg.kind, cg.path = V.CgroupKind(1, str(tmp_path)), str(tmp_path)
    cg._read = lambda name: str(next(usages)) if name.startswith("memory.usage") else Path(tmp_path, name).read_text()
    assert cg.non_file_bytes() == (1 << 20, 65536, 4 << 20, 4 << 20)
    usages = iter([0, 16 << 20] * V.SAMPLE_TRIES)
    assert cg.non_file_bytes() is None


def test_shared_memory_counts_as_a_non_file_charge(tmp_path):
    # PostgreSQL's buffer pool is shared memory, which memory.stat counts in its file cache. It is
    # no traced file's page cache, so it takes the compared files' room: 16 MiB of it left the
    # model 4,096 pages too many at 142 MiB.
    (tmp_path / "memory.stat").write_text("anon 1048576\nfile 25165824\nshmem 16777216\n")
    cg = object.__new__(V.MemoryCgroup)
    cg.kind, cg.path = V.CgroupKind(2, str(tmp_path)), str(tmp_path)
    cg._read = lambda name: str(26 << 20) if name == "memory.current" else Path(tmp_path, name).read_text()
    assert cg.non_file_bytes() == ((26 << 20) - (8 << 20), 1 << 20, 0, 0)


def test_an_eviction_in_a_traced_task_gives_the_non_file_charge_of_that_moment():
    # Reclaim in the task that charges memory means the cgroup was at its limit: everything but
    # the cached pages was non-file then. kswapd's (pid 45) and DAMON's (77) evictions say
    # nothing about the limit.
    mem = 1024 * V.PAGE
    reclaims = [(10, 7, 900), (11, 45, 900), (12, 8, 1000), (13, 77, 10), (14, 7, 2000)]
    assert V._reclaim_samples(reclaims, {7, 8}, mem) == [(10, 124 * V.PAGE), (12, 24 * V.PAGE), (14, 0)]
    # Between two 20 ms samples (0 and 100 pages) the charge is known at the reclaim at 10 ms:
    # 300 pages, which the two samples around the requests at 9 and 11 ms missed.
    non_file = sorted([(0, 0), (20_000, 100 * V.PAGE), *V._reclaim_samples([(10_000, 7, 724)], {7}, mem)])
    assert V.cache_schedule([9_000, 11_000, 30_000], mem, non_file, []) == [(0, 724), (2, 924)]


def test_only_the_reclaim_moments_a_request_can_read_are_kept():
    # Many evictions between two requests: only the first and last of each task's are kept, and
    # the schedule and the peak charge are those of keeping them all. Rows out of time order
    # (several CPUs) and moments before the first and after the last request included.
    rng = random.Random(5)
    mem = 4096 * V.PAGE
    times = sorted(rng.randrange(0, 10_000) for _ in range(300))
    rows = sorted((rng.randrange(-100, 10_100), rng.choice([3, 4, 9]), rng.randrange(1000, 4000)) for _ in range(5000))
    for i in range(0, len(rows) - 1, 97):
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    moments = V._ReclaimMoments(V._Intervals(times))
    for t, pid, cached in rows:
        moments.add(t, pid, cached)
    kept = moments.kept()
    assert len(kept) <= 2 * 3 * (len(set(times)) + 1) < len(rows)
    samples = [(0, 0), (5_000, 2000 * V.PAGE)]
    whole = V.cache_schedule(times, mem, sorted([*samples, *V._reclaim_samples(rows, {3, 4}, mem)]), [])
    assert V.cache_schedule(times, mem, sorted([*samples, *V._reclaim_samples(kept, {3, 4}, mem)]), []) == whole
    least = min(c for _, pid, c in rows if pid in (3, 4))
    assert min(moments.least_cached[3], moments.least_cached[4]) == least


def test_evicted_pages_in_common_count_repeats():
    # A page evicted three times by one and twice by the other is twice in common.
    k = np.array([5, 5, 5, 7, 9], dtype=np.uint64)
    m = np.array([5, 9, 5, 11], dtype=np.uint64)
    assert V._common_count(k, m) == 3 and V._common_count(k, m[:0]) == 0


def test_steps_reach_the_model_as_cache_steps(tmp_path):
    # The page log takes the schedule: a 4-page file read twice stays cached with 4 pages, and
    # is read again when the cache falls to 2 pages between the passes.
    t = write_trace(tmp_path / "t.csv", [(p * 4096, 4096) for p in range(4)] * 2)
    whole = V.page_log(str(t), "linux", 4, "none", [], [])
    fell = V.page_log(str(t), "linux", 4, "none", [], [], False, [(4, 2)])
    assert (len(whole["inserted"]), len(fell["inserted"])) == (4, 8)
    assert fell["evictions"] == 2 + 4


# ---------------------------------------------------------------------------------------------
# Errors


def test_validate_needs_root(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["validate", "-m", "64MiB", "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs root" in err and len(err.splitlines()) == 1


def test_validate_needs_tracefs(monkeypatch, capsys):
    from bufsim import ktrace
    from bufsim.collect import CollectError

    monkeypatch.setattr(os, "geteuid", lambda: 0)

    def no_tracefs():
        raise CollectError("no tracefs")

    monkeypatch.setattr(ktrace, "find_tracefs", no_tracefs)
    assert main(["validate", "-m", "64MiB", "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs tracefs" in err and len(err.splitlines()) == 1


def test_validate_needs_a_memory_controller(monkeypatch, capsys):
    from bufsim import ktrace

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(ktrace, "find_tracefs", lambda: "/sys/kernel/tracing")
    monkeypatch.setattr(V, "CGROUP_V1", "/nonexistent/memory")
    monkeypatch.setattr(V, "CGROUP_V2_CANDIDATES", ("/nonexistent/unified",))
    assert main(["validate", "-m", "64MiB", "--", "true"]) == 2
    err = capsys.readouterr().err.strip()
    assert "memory controller" in err and len(err.splitlines()) == 1


def test_validate_needs_a_memory_size_and_a_command(capsys):
    assert main(["validate", "--", "true"]) == 2
    assert "--memory" in capsys.readouterr().err
    assert main(["validate", "-m", "64MiB"]) == 2
    assert "command" in capsys.readouterr().err
    # The size as the user wrote it, not what is left of it in whole pages.
    assert main(["validate", "-m", "1KiB", "--", "true"]) == 2
    assert "--memory 1KiB is too small" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Against the kernel

kernel = pytest.mark.skipif(
    os.geteuid() != 0 or V.find_memory_cgroup() is None,
    reason="needs root and a cgroup memory controller (CI runs as root)",
)


def leftover_cgroups() -> list[str]:
    kind = V.find_memory_cgroup()
    return [d for d in os.listdir(kind.root) if d.startswith(V.CGROUP_PREFIX)] if kind else []


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    from validate_suite import small_cases

    before = leftover_cgroups()
    out = {}
    for name, command, mems in small_cases(tmp_path_factory.mktemp("inputs")):
        # Each run's trace is kept so that a test can compare it again with another rule.
        out[name] = V.validate(command, mems, out_dir=str(tmp_path_factory.mktemp(name)))[0]
    assert set(leftover_cgroups()) <= set(before)
    return out


@kernel
def test_the_kernel_set_beside_itself_is_counted_as_the_comparison_counts_it(small):
    # scripts/kernel_repeatability.py (docs/validation.md, "The kernel against itself") counts the
    # kernel's pages, read-ahead decisions and evictions as the comparison does, by path.
    from kernel_repeatability import KernelRun, compare

    c = small["hinted"]
    run = KernelRun(c.trace)
    assert c.kernel_evicted > 1000
    assert run.pages_read == c.kernel_pages_read
    assert sum(run.decisions.values()) == c.kernel_readahead
    assert sum(run.evicted.values()) == c.kernel_evicted
    again = compare(run, KernelRun(c.trace))
    assert (again["pages_read_diff"], again["readahead_match"], again["evicted_overlap"]) == (0.0, 1.0, 1.0)
    # Against another recording: the random reads of the mixed case share no evictions.
    other = compare(run, KernelRun(small["mixed"].trace))
    assert other["evicted_overlap"] == 0.0 and other["readahead_match"] < 0.5


@kernel
def test_a_looping_scan_matches_the_kernel(small):
    c = small["loop-scan"]
    assert c.command_status == 0 and c.kernel_pages_read > 8000 and c.kernel_readahead >= 4
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95


@kernel
def test_small_files_read_by_cat_get_the_kernels_windows(small):
    # cat asks every file for 128 KiB: the windows come from that, not from the few pages read.
    c = small["small-files"]
    assert c.command_status == 0 and c.files >= 200 and c.kernel_readahead >= 200
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95


@kernel
def test_random_reads_under_pressure_are_close(small):
    c = small["random"]
    assert c.command_status == 0 and c.kernel_pages_read > 3000
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95


@kernel
def test_hinted_pages_are_read_as_the_kernel_reads_them(small, tmp_path):
    # Each 8 KiB page asked for with fadvise(WILLNEED) before it is read: the kernel reads the
    # hinted pages at once (one page_cache_ra_unbounded each, no lookahead), and the reads find
    # them. The same recording without its hint rows leaves the model reading every random page
    # on demand: about 70% more pages and a quarter of the decisions.
    c = small["hinted"]
    assert c.command_status == 0 and c.kernel_pages_read > 5000
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95
    lines = Path(c.trace).read_text().splitlines(keepends=True)
    assert sum(",H," in line for line in lines) >= 4000
    stripped = tmp_path / "no-hints.csv"
    stripped.write_text("".join(line for line in lines if ",H," not in line))
    for ext in (".memory.csv", ".pagecache.csv"):
        Path(str(stripped) + ext).write_bytes(Path(c.trace + ext).read_bytes())
    without, _ = V.compare(str(stripped), c.memory_bytes)
    assert without.pages_read_diff > 0.3 and without.readahead_match < 0.5


@kernel
def test_a_mixed_workload_is_close(small):
    c = small["mixed"]
    assert c.command_status == 0
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95


@kernel
def test_truncated_and_deleted_files_are_dropped_as_the_kernel_drops_them(small):
    # Rewritten through O_TRUNC and removed: the kernel deletes those pages outside reclaim, the
    # trace carries the drops, and the model inserts the rewritten pages again as the kernel does
    # (without drops it found the old ones cached: about a third of the pages).
    c = small["rewrite"]
    assert c.command_status == 0 and c.kernel_pages_read > 20000
    assert c.kernel_dropped > 15000 and abs(c.model_dropped - c.kernel_dropped) <= 0.02 * c.kernel_dropped
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95


@kernel
def test_written_pages_stay_unmarked_as_in_the_kernel(small):
    # Written twice in place, read once, pushed out by a 32 MiB scan, read again: the kernel's
    # write path does not mark pages, so the last read misses them all (4096 written + 8192
    # + 4096 pages). Marking them on writes (the rule of kernels up to 3.15) keeps them
    # active, and the same recording then reads about 4096 fewer pages.
    c = small["written"]
    assert c.command_status == 0 and c.kernel_pages_read >= 16000
    assert abs(c.pages_read_diff) <= 0.02
    assert c.readahead_match >= 0.95
    marked, _ = V.compare(c.trace, c.memory_bytes, policy="linux(writes=mark)")
    assert marked.model_pages_read <= c.kernel_pages_read - 3000


@kernel
def test_cgroups_left_by_a_killed_validation_are_removed():
    # A validation killed outright (SIGKILL, the OOM killer) cannot remove its cgroup; the next
    # one removes the cgroups whose process is gone, with whatever still runs in them, and
    # leaves those of live processes alone.
    kind = V.find_memory_cgroup()
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = os.path.join(kind.root, f"{V.CGROUP_PREFIX}{dead.pid}-1")
    alive = os.path.join(kind.root, f"{V.CGROUP_PREFIX}{os.getppid()}-2")
    os.mkdir(orphan)
    os.mkdir(alive)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        with open(os.path.join(orphan, "cgroup.procs"), "w") as f:
            f.write(str(sleeper.pid))
        assert os.path.basename(orphan) in V.remove_orphans(kind)
        assert not os.path.exists(orphan) and os.path.exists(alive)
        assert sleeper.wait(timeout=10) == -9
    finally:
        sleeper.kill()
        for path in (orphan, alive):
            if os.path.exists(path):
                V.remove_cgroup(path)


@kernel
def test_a_failing_command_still_gives_its_comparison(tmp_path, capsys):
    data = tmp_path / "d.dat"
    data.write_bytes(os.urandom(1 << 20))
    before = leftover_cgroups()
    rc = main(["validate", "-m", "32MiB", "--json", "--", "sh", "-c", f"cat {data} > /dev/null; exit 3"])
    assert rc == 3
    out = capsys.readouterr().out
    import json

    c = json.loads(out.splitlines()[0])
    assert c["command_status"] == 3 and c["kernel_pages_read"] >= 256
    assert {"kernel_pages_read", "model_pages_read", "readahead_match"} <= set(c)
    assert set(leftover_cgroups()) <= set(before)


@kernel
def test_json_output_holds_only_the_json(capfd):
    # The command's own output goes to stderr: stdout parses as JSON whatever the command prints.
    import json

    before = leftover_cgroups()
    assert main(["validate", "-m", "32MiB", "--json", "--", "echo", "from the command"]) == 0
    out, err = capfd.readouterr()
    assert [json.loads(line)["command_status"] for line in out.splitlines()] == [0]
    assert "from the command" in err
    assert set(leftover_cgroups()) <= set(before)


@kernel
def test_a_command_the_memory_limit_kills_is_told_so(capfd):
    import json

    grab = "x = bytearray(256 << 20); x[::4096] = b'1' * len(x[::4096])"
    assert main(["validate", "-m", "64MiB", "--json", "--", sys.executable, "-c", grab]) == 137
    c = json.loads(capfd.readouterr().out.splitlines()[0])
    assert any("OOM killer killed" in n and "larger --memory" in n for n in c["notes"]), c["notes"]


@kernel
def test_a_validation_is_refused_while_another_one_runs(capsys):
    # Each validation drops the page cache: started beside another, it would spoil that one.
    kind = V.find_memory_cgroup()
    owner = subprocess.Popen(["sleep", "60"])
    running = os.path.join(kind.root, f"{V.CGROUP_PREFIX}{owner.pid}-1")
    os.mkdir(running)
    try:
        with open(os.path.join(running, "cgroup.procs"), "w") as f:
            f.write(str(owner.pid))
        assert main(["validate", "-m", "32MiB", "--", "true"]) == 2
        err = capsys.readouterr().err.strip()
        assert f"another bufsim validate (process {owner.pid})" in err and len(err.splitlines()) == 1
    finally:
        owner.kill()
        owner.wait()
        V.remove_cgroup(running)
    assert V.other_validation(kind) is None
