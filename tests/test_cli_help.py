"""`fairengine --help` and the docs' ``list_methods()`` comment name every command and method."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from fairengine.cli import build_parser
from fairengine.methods import list_methods

ROOT = Path(__file__).resolve().parents[1]


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices)


def test_help_lists_every_command_and_method():
    parser = build_parser()
    text = " ".join(parser.format_help().split())
    commands = _commands(parser)
    assert {"run", "sweep", "export", "predict", "audit", "report", "methods"} <= set(commands)
    for command in commands:
        assert re.search(rf"(^|\s){re.escape(command)}\s", text), f"--help omits {command}"
    methods = list_methods()
    assert "threshold_optimizer" in methods
    listed = re.search(r"methods: (.*?) \(", text).group(1)
    assert listed.split(", ") == methods


def test_the_getting_started_comment_of_list_methods_is_current():
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    comment = re.search(r"^list_methods\(\)\n((?:# .*\n)+)", text, flags=re.M).group(1)
    shown = ast.literal_eval("".join(line[2:] for line in comment.splitlines()))
    assert shown == list_methods()
