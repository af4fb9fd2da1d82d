"""Inputs of the trace-reading commands (`run`, `mrc`, `analyze`, `convert`) nobody had tried:
each once gave wrong numbers or an error that did not say what was wrong."""

from __future__ import annotations

import json

import pytest
from conftest import bufsim_cli, write_csv
from test_cli import check_error

# Block 2^48 of 4 KiB blocks on device 0: its cache key is device 1's block 0.
FAR = 1 << 60


@pytest.mark.parametrize("command", [["run", "-c", "10blocks"], ["mrc"], ["analyze", "--no-working-set"]])
def test_blocks_of_several_devices_never_share_a_cache_entry(tmp_path, command):
    rows = [("R", 0, FAR, 4096), ("R", 1, 0, 4096)] * 2
    trace = write_csv(tmp_path / "dev.csv", rows, header="op,device,offset,size")
    # Once read as one block: 1 miss and 3 hits where every access but the repeats is a miss.
    check_error(
        bufsim_cli(command[0], trace, *command[1:]),
        "dev.csv:3: byte 0 (+ 4096) of device 1 joins device 0, which reached past 2^57 bytes",
        "split the trace by device",
    )


def test_one_device_still_takes_any_address(tmp_path):
    trace = write_csv(tmp_path / "one.csv", [("R", 0, FAR, 4096), ("R", 0, 0, 4096)] * 2, "op,device,offset,size")
    p = bufsim_cli("run", trace, "-c", "1blocks", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["misses"] == 4


@pytest.mark.parametrize("policy", [[], ["--policy", "arc", "--sample", "0.5"]])
def test_mrc_refuses_a_negative_thread_count_naming_it(tmp_path, policy):
    trace = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    # Once "a number is out of range (can't convert negative int to unsigned)" with a policy,
    # and silently accepted without one.
    check_error(
        bufsim_cli("mrc", trace, *policy, "-j", "-1"),
        "jobs (0: all cores) must be a whole number from 0 to 2^64 - 1, not -1",
    )


def test_an_array_refuses_a_volume_whose_members_would_share_cache_entries(tmp_path):
    # Striped over 2 devices, volume block 2^50 lands on device 0 or 1 at block 2^49: past the
    # 48 bits a key keeps of a block of device 1, where it would be device 1's block 2^49 - 2^48.
    rows = [("R", 0, (1 << 50) * 4096, 4096), ("R", 0, 4096, 4096)] * 2
    trace = write_csv(tmp_path / "vol.csv", rows, header="op,device,offset,size")
    check_error(
        bufsim_cli("run", trace, "-c", "10blocks", "--array", "2"),
        "striped over 2 devices, this trace's blocks (up to block 1125899906842624 of the volume)",
        "give a larger --block-size or more devices in --array",
    )
    # Within the members' range the same trace runs.
    rows = [("R", 0, (1 << 48) * 4096, 4096), ("R", 0, 4096, 4096)] * 2
    trace = write_csv(tmp_path / "vol2.csv", rows, header="op,device,offset,size")
    p = bufsim_cli("run", trace, "-c", "10blocks", "--array", "2", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["misses"] == 2


def test_convert_says_which_part_of_an_output_path_is_wrong(tmp_path):
    trace = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(bufsim_cli("convert", trace, "-o", ""), 'output "": an empty path')
    check_error(
        bufsim_cli("convert", trace, "-o", tmp_path / "nodir" / "x.bst"),
        f"its directory {tmp_path / 'nodir'} does not exist",
    )


def test_a_block_count_past_two_to_the_64_is_called_too_large(tmp_path):
    trace = write_csv(tmp_path / "t.csv", [("R", "f", 0, 4096)])
    check_error(bufsim_cli("run", trace, "-c", "99999999999999999999blocks"), "a block count must be below 2^64")
