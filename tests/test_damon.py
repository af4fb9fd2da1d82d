"""DAMON's pageout schemes kept off a validation's cgroup: on a tree shaped like DAMON's sysfs
(the kernel's behaviour imitated: resizing a filters directory makes fresh default filters), and
on the machine's own DAMON where one runs."""

import os

import pytest

from bufsim import validate as V
from bufsim.damon import PageoutExclusion, _read_filters, pageout_schemes

DEFAULTS = {
    "type": "anon",
    "matching": "N",
    "allow": "N",
    "memcg_path": "",
    "addr_start": "0",
    "addr_end": "0",
    "min": "0",
    "max": "0",
    "damon_target_idx": "0",
}


def _resize(d: str, n: int) -> None:
    """What the kernel does on a write of nr_filters: every filter made afresh."""
    for name in os.listdir(d):
        if name.isdigit():
            for f in os.listdir(os.path.join(d, name)):
                os.remove(os.path.join(d, name, f))
            os.rmdir(os.path.join(d, name))
    for i in range(n):
        os.mkdir(os.path.join(d, str(i)))
        for k, v in DEFAULTS.items():
            (open(os.path.join(d, str(i), k), "w")).write(v + "\n")
    open(os.path.join(d, "nr_filters"), "w").write(f"{n}\n")


def _tree(root, action: str, state: str, filters: list[dict]) -> str:
    kd = root / "0"
    scheme = kd / "contexts" / "0" / "schemes" / "0"
    (scheme / "ops_filters").mkdir(parents=True)
    (kd / "state").write_text(state + "\n")
    (kd / "contexts" / "nr_contexts").write_text("1\n")
    (kd / "contexts" / "0" / "schemes" / "nr_schemes").write_text("1\n")
    (scheme / "action").write_text(action + "\n")
    d = str(scheme / "ops_filters")
    _resize(d, len(filters))
    for i, f in enumerate(filters):
        for k, v in f.items():
            (scheme / "ops_filters" / str(i) / k).write_text(v + "\n")
    return d


ANON = {"type": "anon", "matching": "Y", "allow": "N"}
UNMAPPED = {"type": "unmapped", "matching": "Y", "allow": "Y"}


def _full(f: dict) -> dict:
    return DEFAULTS | f


def test_a_pageout_scheme_gets_a_first_filter_rejecting_the_cgroup_and_is_restored(tmp_path):
    dead = f"/{V.CGROUP_PREFIX}{2**22 + 12345}-7"  # above pid_max's default: no such process
    live = f"/{V.CGROUP_PREFIX}{os.getpid()}-8"  # another validation of a live process
    d = _tree(
        tmp_path,
        "pageout",
        "on",
        [
            ANON,
            {"type": "memcg", "matching": "Y", "allow": "N", "memcg_path": dead},
            {"type": "memcg", "matching": "Y", "allow": "N", "memcg_path": live},
            UNMAPPED,
        ],
    )
    ours = f"/{V.CGROUP_PREFIX}{os.getpid()}-9"
    ex = PageoutExclusion(ours, V.CGROUP_PREFIX, root=str(tmp_path), resize=_resize).start()
    assert ex.failure is None and len(ex.schemes) == 1
    during = _read_filters(d)
    assert during[0] == _full({"type": "memcg", "matching": "Y", "allow": "N", "memcg_path": ours})
    # The filter a killed validation left is gone; the rest keep their order.
    assert during[1:] == [
        _full(ANON),
        _full({"type": "memcg", "matching": "Y", "allow": "N", "memcg_path": live}),
        _full(UNMAPPED),
    ]
    assert (tmp_path / "0" / "state").read_text() == "commit"
    ex.stop()
    assert _read_filters(d) == during[1:]


def test_schemes_that_do_not_page_out_or_do_not_run_are_left_alone(tmp_path):
    for action, state in (("lru_prio", "on"), ("pageout", "off")):
        root = tmp_path / f"{action}-{state}"
        d = _tree(root, action, state, [ANON])
        assert pageout_schemes(str(root)) == []
        ex = PageoutExclusion("/x", V.CGROUP_PREFIX, root=str(root), resize=_resize).start()
        ex.stop()
        assert _read_filters(d) == [_full(ANON)] and (root / "0" / "state").read_text() == state + "\n"
    assert pageout_schemes(str(tmp_path / "absent")) == []


def test_a_scheme_that_cannot_take_the_filter_is_said_and_left_as_it_was(tmp_path):
    d = _tree(tmp_path, "pageout", "on", [ANON, UNMAPPED])

    def refuses(path: str, n: int) -> None:
        if n == 3:
            raise OSError(22, "Invalid argument")
        _resize(path, n)

    ex = PageoutExclusion("/x", V.CGROUP_PREFIX, root=str(tmp_path), resize=refuses).start()
    assert ex.schemes == [] and "could not be kept off" in ex.failure and "Invalid argument" in ex.failure
    assert _read_filters(d) == [_full(ANON), _full(UNMAPPED)]


@pytest.mark.skipif(
    os.geteuid() != 0 or V.find_memory_cgroup() is None or not pageout_schemes(),
    reason="needs root, a memory cgroup and a running DAMON pageout scheme",
)
def test_the_machines_damon_takes_the_filter_and_gets_its_own_back():
    kind = V.find_memory_cgroup()
    cg = V.MemoryCgroup(kind, 64 << 20)
    try:
        path = "/" + os.path.relpath(cg.path, kind.root)
        before = {d: _read_filters(d) for _, d in pageout_schemes()}
        ex = PageoutExclusion(path, V.CGROUP_PREFIX).start()
        try:
            assert ex.failure is None and len(ex.schemes) == len(before)
            for d in before:
                first = _read_filters(d)[0]
                assert {k: first[k] for k in ("type", "matching", "allow", "memcg_path")} == {
                    "type": "memcg",
                    "matching": "Y",
                    "allow": "N",
                    "memcg_path": path,
                }
        finally:
            ex.stop()
        assert {d: _read_filters(d) for d in before} == before
    finally:
        cg.remove()
