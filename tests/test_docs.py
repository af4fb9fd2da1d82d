"""Executable docs: every ```python block of the README and docs/ runs, with TRACE bound to the
real CloudPhysics trace; every registered policy has its page under docs/policies/."""

from __future__ import annotations

import re

import pytest

import bufsim
from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [
    pytest.param(code, id=f"{path.relative_to(ROOT)}#{i}")
    for path in DOCS
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S))
]


@pytest.mark.parametrize("code", BLOCKS)
def test_python_examples_run(code, cloudphysics):
    exec(compile(code, "<doc>", "exec"), {"TRACE": str(cloudphysics)})


def test_there_are_examples():
    assert len(BLOCKS) >= 1


def test_every_policy_has_a_page():
    missing = [
        p["name"]
        for p in bufsim.policies()
        if not p["preset_of"] and not (ROOT / "docs" / "policies" / f"{p['name']}.md").exists()
    ]
    assert not missing, f"docs/policies/<name>.md missing for {missing}"
