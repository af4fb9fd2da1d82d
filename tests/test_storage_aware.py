"""Storage-aware caching (Forney et al., FAST '02) from Python and the command line: the
storage options, throughput, timelines, the generators of Table 1, the reproduction and its
errors. The figure shapes themselves are pinned by crates/bufsim-core/tests/storage_aware.rs."""

from __future__ import annotations

import json

import pytest

import bufsim
from bufsim.storage import PAPER_STORAGE, partition_timeline
from conftest import bufsim_cli


@pytest.fixture(scope="module")
def trace1(tmp_path_factory):
    return bufsim.generate("sa-trace1(requests=8000)", seed=1, out=tmp_path_factory.mktemp("sa") / "t1.csv")


def test_generators_write_table_1_traces(tmp_path):
    names = {g["name"] for g in bufsim.generators()}
    assert {"sa-trace1", "sa-trace2", "sa-trace3"} <= names
    p = bufsim_cli("generate", "sa-trace3(requests=500)", "--seed", "4", "-o", tmp_path / "t3.csv")
    assert p.returncode == 0, p.stderr
    lines = (tmp_path / "t3.csv").read_text().splitlines()
    assert lines[0] == "op,file,offset,size,ctx" and len(lines) == 501
    assert all(line.startswith("R,volume,") for line in lines[1:])
    again = bufsim.generate("sa-trace3(requests=500)", seed=4, out=tmp_path / "again.csv")
    assert again.read_text() == (tmp_path / "t3.csv").read_text()


def test_a_hot_disk_and_fixed_sizes_for_figure_4(tmp_path):
    """Figure 4's lower lines: 8 KB requests, disk 0 drawn ten times as often as each other."""
    spec = "sa-trace1(requests=5000,sizes=fixed,request-size=8KB,disks=hot,hot-ratio=10)"
    path = bufsim.generate(spec, seed=2, out=tmp_path / "hot.csv")
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    assert {r[3] for r in rows} == {"8192"}
    # Disk of the first block: 16 disks of 8 KiB stripe units; 10 of every 25 requests on disk 0.
    on0 = sum((int(r[2]) // 8192) % 16 == 0 for r in rows)
    assert 1850 <= on0 <= 2150, on0
    for bad, words in (("disks=hot,hot-disk=16", "0 to 15"), ("disks=zipf", "uniform, gaussian, hot")):
        p = bufsim_cli("generate", f"sa-trace1({bad})", "-o", tmp_path / "bad.csv")
        assert p.returncode == 2 and words in p.stderr, p.stderr


def test_static_with_a_chosen_ratio(trace1):
    """`static(ratio=R)`: the slower disk's partition is R times each faster disk's (Figure 4)."""
    old = {0: "ibm-9lzx(age=2)"}
    df = partition_timeline(trace1, "static(ratio=4)", "200MB", device_for=old, **PAPER_STORAGE)
    first = df[df.time_s == df.time_s.min()].set_index("partition")["target"]
    others = first.drop("dev0")
    # Whole blocks: the apportioning's remainders go to the largest share (10,290, not 10,280).
    assert abs(first["dev0"] / others.mean() - 4) < 0.01 and others.max() - others.min() <= 1
    assert first.sum() == 48828
    same = partition_timeline(trace1, "static(ratio=4)", "200MB", **PAPER_STORAGE)
    equal = same[same.time_s == same.time_s.min()]["target"]
    assert equal.max() - equal.min() <= 1  # equal disks: none is slower
    with pytest.raises(bufsim.SpecError, match="ratio"):
        bufsim.simulate(trace1, "static(ratio=0)", "200MB", **PAPER_STORAGE)


def test_one_old_disk_and_the_storage_aware_policies(trace1):
    old = {0: "ibm-9lzx(age=10)"}
    rs = {p: bufsim.simulate(trace1, p, "200MB", device_for=old, **PAPER_STORAGE) for p in ("lru", "eager-lru")}
    new = bufsim.simulate(trace1, "lru", "200MB", **PAPER_STORAGE)
    assert rs["lru"].throughput_mb_s < 0.3 * new.throughput_mb_s
    assert rs["eager-lru"].throughput_mb_s > 1.5 * rs["lru"].throughput_mb_s
    r = rs["lru"]
    assert r.timed and r.array == "raid0(devices=16,unit=8KiB)" and r.network == "loggp" and r.closed == 64
    assert r.device_for == "0=ibm-9lzx(age=10)"
    assert len(r.devices) == 16 and "aged 10 years" in r.devices[0]["model"]
    # The old disk is waited for far longer than any other.
    waits = [d["wait_s"] for d in r.devices]
    assert waits[0] > 5 * max(waits[1:])
    # Requested bytes over execution time.
    mb = 8000 * 256_000 / 1e6  # about: sizes are random with mean 256 KB
    assert 0.9 < r.throughput_mb_s * r.exec_time_s / mb < 1.1


def test_device_for_forms_and_errors(trace1):
    r = bufsim.simulate(
        trace1, "lru", "200MB", device_for=["0-1=ibm-9lzx(age=3)", "5,7=ibm-9lzx(age=1)"], **PAPER_STORAGE
    )
    aged = [d["device"] for d in r.devices if "aged" in d["model"]]
    assert aged == [0, 1, 5, 7]
    with pytest.raises(bufsim.SpecError, match="not among the run's devices 0-15"):
        bufsim.simulate(trace1, "lru", "200MB", device_for={16: "ssd"}, **PAPER_STORAGE)
    with pytest.raises(bufsim.SpecError, match="ID=SPEC"):
        bufsim.simulate(trace1, "lru", "200MB", device_for=["ibm-9lzx"], **PAPER_STORAGE)
    with pytest.raises(bufsim.SpecError, match="only apply to timed runs"):
        bufsim.simulate(trace1, "lru", "200MB", closed=4, timing=False)


def test_one_device_makes_the_partitioned_policies_their_base_policy(trace1):
    # Without an array the trace lives on one device: one partition, so LRU's (CLOCK's) misses.
    misses = {
        p: bufsim.simulate(trace1, p, "100MB").misses
        for p in ("lru", "clock", "static", "eager-lru", "lazy-lru", "lazy-clock", "landlord(cost=model)")
    }
    assert misses["static"] == misses["eager-lru"] == misses["lazy-lru"] == misses["lru"]
    assert misses["landlord(cost=model)"] == misses["lru"]
    assert misses["lazy-clock"] == misses["clock"] != misses["lru"]


def test_count_mode_stripes_and_repartitions_by_expected_service_time(trace1):
    lru = bufsim.simulate(trace1, "lru", "200MB", array=16)
    eager = bufsim.simulate(trace1, "eager-lru", "200MB", array=16)
    assert not lru.timed and lru.array == "16"
    assert eager.policy_metrics["partitions"] == 16 and eager.policy_metrics["epochs"] > 10
    assert abs(eager.misses / lru.misses - 1) < 0.05


def test_fault_timeline_in_python_and_on_the_command_line(trace1, tmp_path):
    df = partition_timeline(trace1, "eager-lru", "200MB", faults=["device=6,at=1s,slowdown=4"], **PAPER_STORAGE)
    assert list(df.columns) == ["time_s", "partition", "target", "blocks", "wait_ms"]
    assert sorted(df.partition.unique()) == sorted(f"dev{d}" for d in range(16))
    assert (df.groupby("time_s").target.sum() == df.iloc[0:16].target.sum()).all()
    dev6 = df[df.partition == "dev6"]
    assert dev6.blocks.iloc[-1] > 1.3 * df[df.partition == "dev0"].blocks.iloc[-1]
    csv, png = tmp_path / "tl.csv", tmp_path / "tl.png"
    p = bufsim_cli(
        "timeline",
        trace1,
        "-p",
        "eager-lru",
        "-c",
        "200MB",
        "--array",
        "16",
        "--device",
        "ibm-9lzx",
        "--network",
        "loggp",
        "--closed",
        "64",
        "--faults",
        "device=6,at=1s,slowdown=4",
        "--csv",
        csv,
        "--plot",
        png,
    )
    assert p.returncode == 0, p.stderr
    assert csv.read_text().splitlines()[0] == "time_s,partition,target,blocks,wait_ms"
    assert png.stat().st_size > 10_000


def test_cli_run_prints_throughput_and_json(trace1):
    args = [
        "run",
        trace1,
        "-p",
        "lru",
        "-p",
        "lazy-clock",
        "-c",
        "200MB",
        "--array",
        "raid0(devices=16,unit=8KiB)",
        "--device",
        "ibm-9lzx",
        "--device-for",
        "3=ibm-9lzx(age=4)",
        "--network",
        "loggp",
        "--closed",
        "16",
    ]
    p = bufsim_cli(*args)
    assert p.returncode == 0, p.stderr
    assert "MB/s" in p.stdout.splitlines()[0]
    p = bufsim_cli(*args, "--json")
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["policy"] for r in rows] == ["lru", "lazy-clock"]
    assert all(r["throughput_mb_s"] > 0 and r["closed"] == 16 and r["device_for"] == "3=ibm-9lzx(age=4)" for r in rows)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--array", "raid5"], ["unknown array `raid5`"]),
        (["--array", "raid0(unit=6KiB)"], ["stripe unit", "4096-byte blocks"]),
        (["--array", "16", "--closed", "0"], ["from 1 to 1000000"]),
        (["--array", "16", "--network", "infiniband"], ["unknown network `infiniband`", "loggp"]),
        (["--array", "16", "--faults", "device=6,slowdown=2"], ["no at= time"]),
        (["--array", "16", "--faults", "device=20,at=1s,slowdown=2"], ["fault on device 20"]),
        (["--array", "16", "-p", "eager-lru(threshold=0.5)"], ["threshold", "between 1"]),
        (["--array", "16", "-p", "lazy-lru(window=0)"], ["window"]),
        (["--array", "16", "-p", "landlord(cost=free)"], ["cost", "wait, model"]),
        (["--array", "16", "-p", "static(request=big)"], ["request"]),
        (["--array", "raid0(devices=0)"], ["devices=`0`", "1 to 254"]),
        (["--array", "16", "--closed", "99999999999"], ["99999999999", "from 1 to 1000000"]),
        (["--array", "16", "--device-for", "3=nosuch"], ["device 3", "unknown device `nosuch`"]),
        (["--array", "16", "--device-for", "3-1=ssd"], ["device range `3-1`", "empty"]),
        (["--array", "16", "--device-for", "3=ibm-9lzx(age=1000)"], ["simulated time ran past its limit"]),
    ],
)
def test_bad_storage_options_get_one_line_errors(trace1, args, words):
    p = bufsim_cli("run", trace1, "-c", "200MB", *args)
    assert p.returncode == 2, p.stdout
    err = p.stderr.strip()
    assert err.startswith("bufsim: error:") and "\n" not in err, err
    for w in words:
        assert w in err, err


def test_results_carry_the_timeline_in_simulated_seconds(trace1):
    r = bufsim.simulate(trace1, "eager-lru", "200MB", **PAPER_STORAGE)
    tl = r.partition_timeline
    assert tl["unit"] == "s" and {p for _, p, _ in tl["samples"]} == {f"dev{d}" for d in range(16)}
    times = [t for t, _, _ in tl["samples"]]
    assert times == sorted(times) and 0 < times[-1] <= r.exec_time_s
    count = bufsim.simulate(trace1, "eager-lru", "200MB", array=16).partition_timeline
    assert count["unit"] == "accesses" and all(isinstance(t, int) for t, _, _ in count["samples"])


def test_block_traces_of_several_devices_cannot_be_striped(tmp_path):
    t = tmp_path / "b.csv"
    t.write_text("op,device,offset,size\nR,0,0,4096\nR,3,0,4096\n")
    p = bufsim_cli("run", t, "--format", "block-csv", "--array", "16", "-c", "10blocks")
    assert p.returncode == 2 and "one logical volume" in p.stderr and "device 3" in p.stderr


def test_a_block_trace_of_one_device_other_than_0_is_striped_as_its_volume(tmp_path):
    # The volume is the trace's one device, whatever its number: device 3 alone stripes
    # exactly as device 0 alone does.
    rows = [f"R,{{d}},{b * 4096},8192" for b in (0, 5, 9, 0, 17, 5)]
    runs = {}
    for d in (0, 3):
        t = tmp_path / f"d{d}.csv"
        t.write_text("op,device,offset,size\n" + "\n".join(r.format(d=d) for r in rows) + "\n")
        runs[d] = bufsim.simulate(t, "lru", "4blocks", array="raid0(devices=4,unit=8KiB)", device="avg")
    assert runs[3].to_dict() == runs[0].to_dict()
    assert [x["device"] for x in runs[3].devices] == [0, 1, 2, 3]


def test_sweep_takes_a_storage_table(trace1, tmp_path):
    from bufsim.sweeps import SweepSpec, run_sweep

    toml = tmp_path / "exp.toml"
    toml.write_text(f"""
traces = ["{trace1}"]
policies = ["lru", "eager-lru"]
caches = ["200MB"]
devices = ["ibm-9lzx"]
[storage]
array = "raid0(devices=16,unit=8KiB)"
network = "loggp"
closed = 64
[storage.device_for]
0 = "ibm-9lzx(age=10)"
""")
    spec = SweepSpec.from_toml(str(toml))
    assert spec.timed
    df = run_sweep(spec, str(tmp_path / "r.duckdb"), progress=False)
    assert list(df.policy) == ["lru", "eager-lru"]
    assert df.throughput_mb_s.iloc[1] > 1.5 * df.throughput_mb_s.iloc[0]
    from bufsim.sweeps import result_of_row

    r = result_of_row(df.to_dict("records")[0])
    assert r.device_for == "0=ibm-9lzx(age=10)" and r.closed == 64
    with pytest.raises(bufsim.SpecError, match="storage must be a table"):
        SweepSpec(traces=[str(trace1)], policies=["lru"], caches=["200MB"], storage=5).storage_settings()
    # The same sweep again is all cached under the same keys.
    again = run_sweep(spec, str(tmp_path / "r.duckdb"), resume=True, progress=False)
    assert list(again.key) == list(df.key)


def test_reproduction_prints_every_figure(monkeypatch, capsys, tmp_path):
    from bufsim import reproduce, reproduce_storage

    skewed = "sa-trace1(requests=6000,sizes=fixed,request-size=8KB,disks=hot,hot-ratio={})"
    small = {
        "trace1": "sa-trace1(requests=1500)",
        "trace2": "sa-trace2(requests=6000)",
        "trace3": "sa-trace3(requests=6000)",
        "skew2": skewed.format(2),
        "skew10": skewed.format(10),
        "faulty": {
            1: ["eager-lru", "landlord", "lazy-clock", "clock"],
            8: ["eager-lru", "landlord", "lazy-clock", "clock"],
        },
        "ages1": [0, 2, 10],
        "ages23": [0, 10],
        "trace2_policies": ["lru", "eager-lru", "lazy-lru"],
        "old_disks": [0, 1, 16],
        "ratios": [1, 2, 40],
    }
    monkeypatch.setattr(reproduce_storage, "_settings", lambda quick: small)
    assert reproduce.main("storage-aware", quick=True, out=str(tmp_path)) == 0
    out = capsys.readouterr().out
    for title in (
        "Figure 2 (left",
        "Figure 2 (right)",
        "Figure 4",
        "Figure 5 (left)",
        "Figure 5 (right)",
        "Figure 6 (right)",
        "Figure 7",
        "Figure 8 (right)",
        "Figure 8 (left)",
        "paper:",
        "kept at the oldest age",
    ):
        assert title in out, title
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"storage-figure{n}.png" for n in range(2, 9)]
    rows = reproduce_storage.storage_aware(quick=True)
    fig2 = {(r["policy"], r["slow_disk_age"]): r for r in rows if r["figure"] == "2"}
    assert fig2[("lru", 10)]["mb_s"] < 0.3 * fig2[("lru", 0)]["mb_s"]
    # No cache: every access goes to the disks, and the cache helps.
    assert all(fig2[("no cache", a)]["hit_ratio"] == 0 for a in (0, 2, 10))
    assert fig2[("no cache", 0)]["mb_s"] < fig2[("lru", 0)]["mb_s"]
    fig4 = {(r["trace"], r["ratio"]) for r in rows if r["figure"] == "4"}
    assert len(fig4) == 9 and ("8 KB, 10:1", 40) in fig4
    fig8 = {(r["faulty_disks"], r["policy"]) for r in rows if r["figure"] == "8"}
    assert fig8 == {(n, p) for n in (1, 8) for p in reproduce_storage.FAULT_POLICIES}
    assert any(r["figure"] == "8-timeline" and r["fault"] for r in rows)
    with pytest.raises(bufsim.SpecError, match="no reduced version"):
        reproduce.main("amp-table1", quick=True)
