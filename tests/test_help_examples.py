"""Every command's --help ends with an example, and every example parses."""

from __future__ import annotations

import shlex

import pytest

from bufsim.cli import EXAMPLES, build_parser


def test_every_command_has_an_example():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(EXAMPLES)
    for name, parser in sub.choices.items():
        assert "Example:" in parser.format_help(), name


@pytest.mark.parametrize("line", [line for lines in EXAMPLES.values() for line in lines])
def test_examples_parse(line):
    words = shlex.split(line.split("|")[-1].split(">")[0])
    assert words[0] == "bufsim"
    args = build_parser().parse_args(words[1:])
    assert args.func is not None
