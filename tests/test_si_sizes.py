"""Decimal (SI) sizes are accepted and the command line says what they became."""

from __future__ import annotations

import json

from conftest import ROOT, bufsim_cli


def test_si_cache_size_is_noted():
    p = bufsim_cli("run", ROOT / "traces" / "grep.csv.gz", "-c", "64MB", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["cache_blocks"] == 15625
    assert "64MB is 64,000,000 bytes (decimal units), 15,625 blocks" in p.stderr and "write 64MiB" in p.stderr
    p = bufsim_cli("run", ROOT / "traces" / "grep.csv.gz", "-c", "64MiB", "--json")
    assert "note" not in p.stderr
