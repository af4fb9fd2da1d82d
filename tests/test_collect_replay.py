"""bufsim collect without strace: the line grammar and the replay of system calls on canned strace
output (unfinished/resumed pairs, -y paths with special characters, -k frames, clone with and
without CLONE_FILES, dup2, O_APPEND, files replaced under the same path). Canned lines name real
files under tmp_path, because the replay identifies files with stat."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from bufsim import strace as st
from bufsim._core import Trace
from bufsim.collect import TraceWriter, collect_from_log
from bufsim.syscalls import PathFilter, Record, TraceBuilder, context_id

T0 = 1_700_000_000


def esc(path: Path | str) -> str:
    """A path escaped the way strace -y prints it (octal with three digits when an octal digit
    follows, as strace does: "a\\0010" is bytes a, 1, "0")."""
    out = []
    raw = os.fsencode(str(path))
    for i, b in enumerate(raw):
        c = chr(b)
        next_is_digit = i + 1 < len(raw) and 48 <= raw[i + 1] <= 55
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c in "<>" or b < 32 or b >= 127:
            out.append(f"\\{b:03o}" if next_is_digit else f"\\{b:o}")
        else:
            out.append(c)
    return "".join(out)


def ts(us: int) -> str:
    return f"{T0}.{us:06d}"


def replay(text: str, **kw) -> tuple[list[Record], TraceBuilder]:
    out: list[Record] = []
    b = TraceBuilder(out.append, **kw)
    for line in text.strip("\n").split("\n"):
        b.feed(line)
    b.finish()
    return out, b


def rows(records: list[Record]) -> list[tuple]:
    return [(r.pid, r.op, r.offset, r.size) for r in records]


@pytest.fixture
def files(tmp_path):
    a = tmp_path / "a.dat"
    a.write_bytes(b"x" * 20000)
    b = tmp_path / "b.dat"
    b.write_bytes(b"y" * 100)
    return a, b


# -- grammar ----------------------------------------------------------------------------------


def test_line_kinds():
    assert st.parse_line(f'12 {ts(5)} read(3</a>, ""..., 10) = 10 <0.000010>').kind == "call"
    u = st.parse_line(f"12 {ts(5)} read(3</a>,  <unfinished ...>")
    assert (u.kind, u.name, u.text, u.time_us) == ("unfinished", "read", "read(3</a>, ", T0 * 10**6 + 5)
    r = st.parse_line(f'[pid 12] {ts(9)} <... read resumed>""..., 10) = 10 <0.000004>')
    assert (r.kind, r.pid, r.name, r.text) == ("resumed", 12, "read", '""..., 10) = 10 <0.000004>')
    e = st.parse_line(f"12 {ts(9)} +++ exited with 3 +++")
    assert (e.kind, e.status, e.signal) == ("exit", 3, None)
    k = st.parse_line(f"12 {ts(9)} +++ killed by SIGKILL (core dumped) +++")
    assert (k.kind, k.status, k.signal) == ("exit", None, "SIGKILL")
    assert st.parse_line(f"12 {ts(9)} --- SIGCHLD {{si_signo=SIGCHLD}} ---").kind == "signal"
    assert st.parse_line("strace: Process 12 attached").kind == "other"
    assert st.parse_line(f'{ts(1)} read(3, "", 1) = 0 <0.000001>').pid is None


def test_frames():
    f = st.parse_frame(" > /usr/lib/x86_64-linux-gnu/libc.so.6(pread64+0x13) [0xf63d3]")
    assert (f.module, f.symbol, f.offset) == ("/usr/lib/x86_64-linux-gnu/libc.so.6", "pread64+0x13", 0xF63D3)
    g = st.parse_frame(" > /usr/bin/cat() [0x5d26]")
    assert (g.module, g.offset) == ("/usr/bin/cat", 0x5D26)
    assert st.parse_frame(" > unexpected_backtracing_error [0x7f0011223344]").module is None
    assert st.parse_frame(" > too many stack frames").truncated


def test_y_paths_with_special_characters_unescape_to_the_real_bytes(tmp_path):
    name = tmp_path / 'we"ird>na<me,x\né.bin'
    line = f'7 {ts(1)} openat(AT_FDCWD<{esc(tmp_path)}>, "x", O_RDONLY) = 3<{esc(name)}> <0.000010>'
    assert "\\76" in line and "\\74" in line and "\\303\\251" in line
    parsed = st.parse_line(line)
    call = st.parse_call(parsed.name, parsed.text)
    assert call.ret == "3" and call.dur_us == 10 and call.args[2] == "O_RDONLY"
    assert st.unescape(call.ret_path) == os.fsencode(str(name))


def test_arguments_split_at_top_level_only():
    text = 'writev(3</a,b>, [{iov_base="x,)", iov_len=3}, {iov_base=""..., iov_len=2}], 2) = 5 <0.000001>'
    call = st.parse_call("writev", text)
    assert call.args == ["3</a,b>", '[{iov_base="x,)", iov_len=3}, {iov_base=""..., iov_len=2}]', "2"]
    assert st.fd_arg(call.args[0]) == (3, "/a,b")
    # Escaped quotes and a string ending in an escaped backslash stay inside their argument.
    tricky = st.parse_call("write", r'write(4</a>, "q\"),\\", 5) = 5 <0.000001>')
    assert tricky.args == ["4</a>", r'"q\"),\\"', "5"] and tricky.ret == "5"
    failed = st.parse_call("read", "read(3</a>, 0x7ffd, 10) = -1 EINTR (Interrupted system call) <0.000002>")
    assert failed.failed and failed.errno == "EINTR"
    restart = st.parse_call(
        "read", "read(3</a>, 0x7ffd, 10) = ? ERESTARTSYS (To be restarted if SA_RESTART is set) <0.000002>"
    )
    assert restart.failed
    assert st.bracket_int("[0] => [100]") == 0 and st.bracket_result("[0] => [100]") == 100
    assert st.flag_words("{flags=O_RDONLY|O_CLOEXEC, resolve=0}") == {"O_RDONLY", "O_CLOEXEC"}
    assert st.parse_int("~0U") == (1 << 64) - 1


# -- program contexts -------------------------------------------------------------------------


def frames(*lines: str) -> list[st.Frame]:
    return [st.parse_frame(" > " + l) for l in lines]


def test_context_skips_libc_and_loader_and_ignores_directories():
    a1 = frames(
        "/usr/lib/x86_64-linux-gnu/libc.so.6(pread64+0x13) [0xf63d3]",
        "/tmp/build1/prog(site_a+0x1a) [0x1193]",
        "/tmp/build1/prog(main+0x20) [0x11df]",
        "/usr/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x85) [0x27305]",
    )
    # Another libc version (other offsets), another build directory, the vDSO: same call site.
    a2 = frames(
        "/lib/libc.so.6(pread+0x20) [0xabcde]",
        "[vdso]() [0x99]",
        "/home/u/prog(site_a+0x1a) [0x1193]",
        "/home/u/prog(main+0x20) [0x11df]",
        "/lib64/ld-linux-x86-64.so.2(_dl_start+0x1) [0x11]",
    )
    b = frames(
        "/usr/lib/x86_64-linux-gnu/libc.so.6(read+0xd) [0xf82ad]",
        "/tmp/build1/prog(site_b+0x25) [0x11bd]",
        "/tmp/build1/prog(main+0x27) [0x11e6]",
    )
    assert context_id(a1) == context_id(a2) != context_id(b)
    assert context_id(a1) != 0
    # Only the loader and libc: no program frame left.
    assert context_id(frames("/lib64/ld-linux-x86-64.so.2(_dl_map+0x10) [0x4410]")) == 0
    # Depth 1 keeps only the innermost program frame: the caller of site_a no longer matters.
    other_caller = frames("/tmp/build1/prog(site_a+0x1a) [0x1193]", "/tmp/build1/prog(other+0x5) [0x1300]")
    assert context_id(a1, 1) == context_id(other_caller, 1)
    assert context_id(a1) != context_id(other_caller)
    # Unknown modules hash without their (randomised) absolute address.
    u1 = frames("unexpected_backtracing_error [0x7f0000001000]", "/p(f+1) [0x10]")
    u2 = frames("unexpected_backtracing_error [0x7f9999991000]", "/p(f+1) [0x10]")
    assert context_id(u1) == context_id(u2)


# -- replay -----------------------------------------------------------------------------------


def test_unfinished_resumed_and_threads_share_descriptors_and_offsets(files):
    a, _ = files
    A = esc(a)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY|O_CLOEXEC) = 3<{A}> <0.000010>
100 {ts(2)} clone3({{flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0}} => {{parent_tid=[101]}}, 88) = 101 <0.000050>
101 {ts(10)} read(3<{A}>,  <unfinished ...>
100 {ts(11)} pread64(3<{A}>, ""..., 4096, 8192) = 4096 <0.000005>
101 {ts(20)} <... read resumed>""..., 100) = 100 <0.000010>
 > /tmp/p(reader+0x1d) [0x1206]
100 {ts(30)} read(3<{A}>, ""..., 50) = 50 <0.000005>
100 {ts(31)} read(3<{A}>, 0x7ffd, 50) = -1 EINTR (Interrupted system call) <0.000005>
100 {ts(32)} read(3<{A}>, "", 50) = 0 <0.000005>
100 {ts(40)} +++ exited with 0 +++
"""
    recs, b = replay(log)
    # The thread's read (pid = its process, 100) started first, at offset 0; the process's next
    # read continues after it. The failed and the zero-byte reads leave no record.
    assert rows(recs) == [(100, "R", 8192, 4096), (100, "R", 0, 100), (100, "R", 100, 50)]
    assert recs[1].time_us == T0 * 10**6 + 10 and recs[1].dur_us == 10
    assert recs[1].ctx != 0 and recs[0].ctx == 0
    st_a = os.stat(a)
    assert recs[0].file.name == f"{st_a.st_dev:x}:{st_a.st_ino}:{a}"
    assert b.root_exit == "exited with status 0"


def test_a_blocked_call_is_written_before_the_later_calls_that_finished_first(files, tmp_path):
    a, _ = files
    A = esc(a)
    log = tmp_path / "s.log"
    log.write_text(f"""100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 3<{A}> <0.000010>
100 {ts(2)} clone3({{flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}}, 88) = 101 <0.000050>
101 {ts(10)} read(3<{A}>,  <unfinished ...>
100 {ts(11)} pread64(3<{A}>, ""..., 4096, 8192) = 4096 <0.000005>
100 {ts(12)} pread64(3<{A}>, ""..., 4096, 12288) = 4096 <0.000005>
101 {ts(20)} <... read resumed>""..., 100) = 100 <0.000010>
100 {ts(30)} read(3<{A}>, ""..., 50) = 50 <0.000005>
""")
    out = tmp_path / "t.csv"
    collect_from_log(str(log), str(out))
    body = [l.split(",") for l in out.read_text().splitlines() if not l.startswith("#")][1:]
    assert [(b[0], b[6]) for b in body] == [("9", "0"), ("10", "8192"), ("11", "12288"), ("29", "100")]


def test_fork_copies_the_table_but_shares_the_description(files):
    a, bfile = files
    A, B = esc(a), esc(bfile)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 3<{A}> <0.000010>
100 {ts(2)} clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 102 <0.000050>
102 {ts(3)} read(3<{A}>, ""..., 10) = 10 <0.000005>
102 {ts(4)} close(3<{A}>) = 0 <0.000005>
102 {ts(5)} openat(AT_FDCWD</x>, "b.dat", O_RDONLY) = 3<{B}> <0.000005>
102 {ts(6)} read(3<{B}>, ""..., 5) = 5 <0.000005>
100 {ts(7)} read(3<{A}>, ""..., 10) = 10 <0.000005>
100 {ts(8)} vfork() = 103 <0.000005>
103 {ts(9)} read(3<{A}>, ""..., 7) = 7 <0.000005>
"""
    recs, _ = replay(log)
    # The child's close and new fd 3 do not touch the parent's fd 3, whose offset moved with the
    # child's read of the shared description (0 -> 10 -> 20), as did the vfork child's.
    assert [(r.pid, r.file.path == os.fsencode(str(a)), r.offset, r.size) for r in recs] == [
        (102, True, 0, 10),
        (102, False, 0, 5),
        (100, True, 10, 10),
        (103, True, 20, 7),
    ]


def test_child_seen_before_its_parents_clone_returns_is_adopted(files):
    a, _ = files
    A = esc(a)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 3<{A}> <0.000010>
100 {ts(2)} clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS <unfinished ...>
104 {ts(3)} close(3<{A}>) = 0 <0.000005>
100 {ts(4)} <... clone resumed>, parent_tid=[104], tls=0x7f, child_tidptr=0x7f) = 104 <0.000050>
100 {ts(5)} read(3<{A}>, ""..., 10) = 10 <0.000005>
"""
    recs, b = replay(log)
    # The thread closed the shared fd 3: the parent's read is on a descriptor it never saw opened,
    # adopted from the -y path at offset 0 (and the thread belongs to process 100).
    assert rows(recs) == [(100, "R", 0, 10)]
    assert b.tasks[104].tgid == 100 and b.tasks[104].table is b.tasks[100].table


def test_dup2_dup3_fcntl_share_the_offset_and_close_range(files):
    a, _ = files
    A = esc(a)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 3<{A}> <0.000010>
100 {ts(2)} dup2(3<{A}>, 10) = 10<{A}> <0.000005>
100 {ts(3)} read(10<{A}>, ""..., 100) = 100 <0.000005>
100 {ts(4)} read(3<{A}>, ""..., 100) = 100 <0.000005>
100 {ts(5)} fcntl(3<{A}>, F_DUPFD_CLOEXEC, 20) = 20<{A}> <0.000005>
100 {ts(6)} lseek(20<{A}>, 5000, SEEK_SET) = 5000 <0.000005>
100 {ts(7)} read(10<{A}>, ""..., 10) = 10 <0.000005>
100 {ts(8)} close_range(3, 4294967295, 0) = 0 <0.000005>
100 {ts(9)} read(10<{A}>, ""..., 10) = 10 <0.000005>
"""
    recs, _ = replay(log)
    # After close_range every descriptor is gone: fd 10 is adopted afresh at offset 0.
    assert [(r.offset, r.size) for r in recs] == [(0, 100), (100, 100), (5000, 10), (0, 10)]


def test_exec_closes_close_on_exec_descriptors(files):
    a, _ = files
    A = esc(a)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY|O_CLOEXEC) = 3<{A}> <0.000010>
100 {ts(2)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 4<{A}> <0.000010>
100 {ts(3)} read(3<{A}>, ""..., 10) = 10 <0.000005>
100 {ts(4)} read(4<{A}>, ""..., 20) = 20 <0.000005>
100 {ts(5)} execve("/bin/x", ["x"], 0x7ff /* 3 vars */) = 0 <0.000100>
100 {ts(6)} read(4<{A}>, ""..., 20) = 20 <0.000005>
"""
    recs, b = replay(log)
    assert [(r.offset, r.size) for r in recs] == [(0, 10), (0, 20), (20, 20)]
    assert 3 not in b.tasks[100].table.fds


def test_o_append_writes_go_to_the_end(files, tmp_path):
    log_file = tmp_path / "app.log"
    log_file.write_bytes(b"z" * 10)
    L = esc(log_file)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "app.log", O_WRONLY|O_CREAT|O_APPEND, 0644) = 3<{L}> <0.000010>
100 {ts(2)} write(3<{L}>, ""..., 5) = 5 <0.000005>
100 {ts(3)} pwrite64(3<{L}>, ""..., 3, 0) = 3 <0.000005>
100 {ts(4)} lseek(3<{L}>, 0, SEEK_END) = 40 <0.000005>
100 {ts(5)} write(3<{L}>, ""..., 2) = 2 <0.000005>
100 {ts(6)} openat(AT_FDCWD</x>, "app.log", O_WRONLY) = 4<{L}> <0.000010>
100 {ts(7)} fcntl(4<{L}>, F_SETFL, O_WRONLY|O_APPEND) = 0 <0.000005>
100 {ts(8)} write(4<{L}>, ""..., 1) = 1 <0.000005>
100 {ts(9)} openat(AT_FDCWD</x>, "app.log", O_WRONLY|O_TRUNC) = 5<{L}> <0.000010>
100 {ts(10)} write(5<{L}>, ""..., 4) = 4 <0.000005>
100 {ts(11)} write(3<{L}>, ""..., 1) = 1 <0.000005>
"""
    recs, _ = replay(log)
    # Size 10 at open; pwrite on an O_APPEND descriptor appends too (pwrite(2) BUGS); a seek from
    # the end learns the size someone else grew the file to; F_SETFL can turn appending on;
    # O_TRUNC empties the file (a drop of all of it).
    assert [(r.op, r.offset, r.size) for r in recs] == [
        ("W", 10, 5),
        ("W", 15, 3),
        ("W", 40, 2),
        ("W", 42, 1),
        ("D", 0, 0),
        ("W", 0, 4),
        ("W", 4, 1),
    ]


def test_direct_io_is_left_out(files, tmp_path):
    # O_DIRECT transfers bypass the page cache: counted, not traced; the offset still moves and
    # fcntl(F_SETFL) turns O_DIRECT off.
    a, _ = files
    A = esc(a)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDWR|O_DIRECT) = 3<{A}> <0.000010>
100 {ts(2)} read(3<{A}>, ""..., 4096) = 4096 <0.000005>
100 {ts(3)} pwrite64(3<{A}>, ""..., 4096, 8192) = 4096 <0.000005>
100 {ts(4)} fcntl(3<{A}>, F_SETFL, O_RDWR) = 0 <0.000005>
100 {ts(5)} read(3<{A}>, ""..., 4096) = 4096 <0.000005>
"""
    recs, b = replay(log)
    assert [(r.op, r.offset, r.size) for r in recs] == [("R", 4096, 4096)]
    assert b.stats.direct == 2


def test_sendfile_and_copy_file_range_read_and_write(files, tmp_path):
    a, _ = files
    out = tmp_path / "out.bin"
    out.write_bytes(b"")
    A, O = esc(a), esc(out)
    log = f"""
100 {ts(1)} openat(AT_FDCWD</x>, "a.dat", O_RDONLY) = 3<{A}> <0.000010>
100 {ts(2)} openat(AT_FDCWD</x>, "out.bin", O_WRONLY) = 4<{O}> <0.000010>
100 {ts(3)} sendfile(4<{O}>, 3<{A}>, [0] => [100], 100) = 100 <0.000005>
100 {ts(4)} sendfile(4<{O}>, 3<{A}>, NULL, 50) = 50 <0.000005>
100 {ts(5)} copy_file_range(3<{A}>, [1000], 4<{O}>, NULL, 64, 0) = 64 <0.000005>
100 {ts(6)} sendfile(5<socket:[123]>, 3<{A}>, NULL, 10) = 10 <0.000005>
"""
    recs, _ = replay(log)
    assert [(r.op, r.offset, r.size) for r in recs] == [
        ("R", 0, 100),
        ("W", 0, 100),
        ("R", 0, 50),
        ("W", 100, 50),
        ("R", 1000, 64),
        ("W", 150, 64),
        ("R", 50, 10),
    ]


def test_a_file_replaced_under_the_same_path_is_another_file(tmp_path):
    p = tmp_path / "data"
    p.write_bytes(b"1" * 8192)
    P = esc(p)
    lines = [
        f'100 {ts(1)} openat(AT_FDCWD</x>, "data", O_RDONLY) = 3<{P}> <0.000010>',
        f'100 {ts(2)} read(3<{P}>, ""..., 4096) = 4096 <0.000005>',
        f"100 {ts(3)} close(3<{P}>) = 0 <0.000005>",
        f'100 {ts(4)} openat(AT_FDCWD</x>, "data", O_RDONLY) = 3<{P}> <0.000010>',
        f'100 {ts(5)} read(3<{P}>, ""..., 4096) = 4096 <0.000005>',
        f'100 {ts(6)} unlink("{P}") = 0 <0.000005>',
        f'100 {ts(7)} openat(AT_FDCWD</x>, "data", O_RDONLY) = 3<{P}> <0.000010>',
        f'100 {ts(8)} read(3<{P}>, ""..., 4096) = 4096 <0.000005>',
        f'100 {ts(9)} unlink("{P}") = 0 <0.000005>',
    ]
    out: list[Record] = []
    b = TraceBuilder(out.append, live=True)
    for i, line in enumerate(lines):
        if i == 3:  # the program's neighbour saves a new version: a new inode under the same name
            tmp = tmp_path / "data.new"
            tmp.write_bytes(b"2" * 8192)
            os.replace(tmp, p)
        b.feed(line)
    b.feed(f"100 {ts(10)} +++ exited with 0 +++")
    b.finish()
    names = [r.file.name for r in out if r.op == "R"]
    assert names[0] != names[1]
    assert names[0].split(":")[1] != names[1].split(":")[1]
    # Unlinked and created again with the same inode number (as in the replay, where the name still
    # leads to the same inode): a new generation.
    s = os.stat(p)
    assert names[1] == f"{s.st_dev:x}:{s.st_ino}:{p}"
    assert names[2] == f"{s.st_dev:x}:{s.st_ino}.2:{p}"


def test_truncation_punching_and_deletion_write_drops(tmp_path):
    """O_TRUNC, ftruncate, truncate, a punched hole and fadvise(DONTNEED) drop their ranges at once;
    an unlinked file is dropped when the last descriptor holding it closes (here at exit)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"1" * 20000)
    b.write_bytes(b"2" * 8192)
    A, B = esc(a), esc(b)
    lines = [
        f'100 {ts(1)} openat(AT_FDCWD</x>, "{A}", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3<{A}> <0.000010>',
        f'100 {ts(2)} write(3<{A}>, ""..., 12288) = 12288 <0.000005>',
        f"100 {ts(3)} ftruncate(3<{A}>, 5000) = 0 <0.000005>",
        f"100 {ts(4)} fallocate(3<{A}>, FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE, 8192, 4096) = 0 <0.000005>",
        f"100 {ts(5)} fadvise64(3<{A}>, 0, 0, POSIX_FADV_DONTNEED) = 0 <0.000005>",
        f"100 {ts(6)} fadvise64(3<{A}>, 0, 0, POSIX_FADV_SEQUENTIAL) = 0 <0.000005>",
        f'100 {ts(7)} truncate("{A}", 4096) = 0 <0.000005>',
        f'100 {ts(8)} openat(AT_FDCWD</x>, "{B}", O_RDONLY) = 4<{B}> <0.000010>',
        f'100 {ts(9)} read(4<{B}>, ""..., 4096) = 4096 <0.000005>',
        f'100 {ts(10)} unlink("{B}") = 0 <0.000005>',
        f'100 {ts(11)} read(4<{B}>, ""..., 4096) = 4096 <0.000005>',
        f"100 {ts(12)} +++ exited with 0 +++",
    ]
    out, _ = replay("\n".join(lines))
    got = [(r.time_us - T0 * 1_000_000, r.op, r.file.path, r.offset, r.size) for r in out]
    pa, pb = os.fsencode(a), os.fsencode(b)
    assert got == [
        (1, "D", pa, 0, 0),
        (2, "W", pa, 0, 12288),
        (3, "D", pa, 5000, 0),
        (4, "D", pa, 8192, 4096),
        (5, "D", pa, 0, 5000),
        (7, "D", pa, 4096, 0),
        (9, "R", pb, 0, 4096),
        (11, "R", pb, 4096, 4096),
        (12, "D", pb, 0, 0),
    ]


def test_willneed_and_readahead_write_hints(tmp_path):
    """fadvise(WILLNEED) and readahead(2) become hint rows of their ranges (length 0: to the end);
    other advice writes nothing."""
    a = tmp_path / "a"
    a.write_bytes(b"1" * 20000)
    A = esc(a)
    lines = [
        f'100 {ts(1)} openat(AT_FDCWD</x>, "{A}", O_RDONLY) = 3<{A}> <0.000010>',
        f"100 {ts(2)} fadvise64(3<{A}>, 8192, 8192, POSIX_FADV_WILLNEED) = 0 <0.000005>",
        f"100 {ts(3)} fadvise64(3<{A}>, 0, 0, POSIX_FADV_RANDOM) = 0 <0.000005>",
        f"100 {ts(4)} readahead(3<{A}>, 4096, 0) = 0 <0.000005>",
        f'100 {ts(5)} read(3<{A}>, ""..., 4096) = 4096 <0.000005>',
    ]
    out, _ = replay("\n".join(lines))
    got = [(r.time_us - T0 * 1_000_000, r.op, r.offset, r.size) for r in out]
    assert got == [(2, "H", 8192, 8192), (4, "H", 4096, 0), (5, "R", 0, 4096)]


def test_path_filter_include_exclude_and_no_libs():
    from bufsim.collect import NO_LIBS_PATTERNS

    f = PathFilter(include=["/data"], exclude=["/data/tmp", "*.so*"])
    assert f.keeps(b"/data/x") and f.keeps(b"/data") and not f.keeps(b"/database/x")
    assert not f.keeps(b"/data/tmp/y") and not f.keeps(b"/data/lib.so.1") and not f.keeps(b"/other")
    libs = PathFilter(exclude=NO_LIBS_PATTERNS)
    for p in (
        b"/usr/lib/x86_64-linux-gnu/libc.so.6",
        b"/etc/ld.so.cache",
        b"/proc/self/maps",
        b"/home/u/venv/site-packages/_x.cpython-311.so",
        b"/lib/terminfo/x",
    ):
        assert not libs.keeps(p), p
    assert libs.keeps(b"/usr/include/stdio.h") and libs.keeps(b"/home/u/src/a.c")


# -- writer and end-to-end conversion ---------------------------------------------------------


def test_writer_orders_by_start_time_and_waits_for_blocked_calls(tmp_path):
    from bufsim.syscalls import FileIdentity

    path = tmp_path / "w.csv"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    w = TraceWriter(fd)
    w.t0 = 100
    f = FileIdentity("0:1:/f", b"/f", 0, 1)
    w.hold(7, 105)  # a read that started at 105 has not returned yet
    w.add(Record(110, 1, 1, 0, "R", f, 4096, 10))
    w.add(Record(108, 1, 1, 0, "R", f, 0, 10))
    w.flush()
    assert path.read_text().count("\n") == 1  # only the header: both wait behind the blocked read
    w.add(Record(105, 9, 2, 0, "R", f, 8192, 10))
    w.release(7)
    w.close(["end"])
    os.close(fd)
    body = [l for l in path.read_text().splitlines() if not l.startswith("#")][1:]
    assert [l.split(",")[0] for l in body] == ["5", "8", "10"]


def test_converting_a_log_writes_a_csv_bufsim_reads(tmp_path):
    odd = tmp_path / 'a "quoted", name.dat'
    odd.write_bytes(b"q" * 10000)
    plain = tmp_path / "plain.dat"
    plain.write_bytes(b"p" * 10000)
    O, P = esc(odd), esc(plain)
    log = tmp_path / "s.log"
    log.write_text(f"""100 {ts(1)} openat(AT_FDCWD</x>, "a", O_RDONLY) = 3<{O}> <0.000010>
100 {ts(2)} openat(AT_FDCWD</x>, "b", O_RDONLY) = 4<{P}> <0.000010>
100 {ts(3)} read(3<{O}>, ""..., 8192) = 8192 <0.000005>
 > /tmp/p(f+0x1) [0x1001]
100 {ts(4)} read(4<{P}>, ""..., 4096) = 4096 <0.000005>
 > /tmp/p(g+0x1) [0x2001]
100 {ts(5)} read(3<{O}>, ""..., 8192) = 1808 <0.000005>
 > /tmp/p(f+0x1) [0x1001]
100 {ts(6)} read(4<{P}>, ""...""")  # cut mid-line, as when strace is killed
    out = tmp_path / "t.csv"
    res = collect_from_log(str(log), str(out))
    assert res.stats.records == 3 and len(res.stats.contexts) == 2
    with open(out, newline="") as fh:
        body = list(csv.DictReader(l for l in fh if not l.startswith("#")))
    assert [b["offset"] for b in body] == ["0", "0", "8192"]
    assert body[0]["file"].endswith('a "quoted", name.dat') and body[0]["ctx"] == body[2]["ctx"]
    assert body[0]["time_us"] == "2" and body[1]["time_us"] == "3"  # from the first line
    assert len(Trace(str(out))) == 3
    r = Trace(str(out)).run(["lru"], ["1000blocks"])[0]
    assert r["misses"] == 4  # blocks 0,1,2 of the first file and block 0 of the second


from hypothesis import given, settings, strategies as hs  # noqa: E402 (the property tests below)


@settings(max_examples=300, deadline=None)
@given(hs.binary(min_size=1, max_size=40).filter(lambda b: b"\x00" not in b))
def test_unescape_inverts_straces_escaping(raw):
    path = os.fsdecode(b"/" + raw)
    assert st.unescape(esc(path)) == os.fsencode(path)
    # And a -y annotation holding it comes out whole, whatever the bytes.
    fd, annotated = st.fd_arg(f"3<{esc(path)}>")
    assert fd == 3 and st.unescape(annotated) == os.fsencode(path)


def test_docs_list_the_no_libs_patterns_and_the_traced_calls():
    from bufsim.collect import NO_LIBS_PATTERNS, TRACED_SYSCALLS
    from conftest import ROOT

    doc = (ROOT / "docs" / "collect.md").read_text()
    row = next(l for l in doc.splitlines() if l.startswith("| `--no-libs` |"))
    assert all(f"`{p}`" in row for p in NO_LIBS_PATTERNS), row
    assert all(f"`{n.lstrip('?')}`" in doc for n in TRACED_SYSCALLS)
