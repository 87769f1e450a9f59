"""``fairengine methods``: the registered methods, their task kinds, plane and knobs."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_methods_parser(commands: Any) -> None:
    """Add the ``methods`` command to the command line's sub-parsers."""
    methods = commands.add_parser("methods", help="list the methods and their knobs")
    methods.add_argument("--json", action="store_true", help="machine-readable output")
    methods.set_defaults(handler=cmd_methods)


def method_rows() -> list[dict[str, Any]]:
    """One row per registered method, in listing order."""
    from fairengine.methods import get_method, list_methods

    return [
        {
            "name": m.name,
            "title": m.title,
            "kinds": list(m.kinds),
            "reference": m.reference,
            "plane": [m.performance_metric, m.fairness_metric],
            "knobs": [k.name for k in m.knobs],
        }
        for m in (get_method(name) for name in list_methods())
    ]


def cmd_methods(args: argparse.Namespace) -> int:
    rows = method_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['title']} ({', '.join(row['kinds'])})")
        print(f"{'':<{width}}  knobs: {', '.join(row['knobs'])}")
    return 0
