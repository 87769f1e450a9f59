"""Demo frontiers for the hosted dashboard: ``fairengine precompute``.

Each method declares a ``demo_grid`` and the bundled ``demo_tasks`` to sweep it on; the points
are written into a :class:`FrontierStore` under ``assets/frontiers/``, which the dashboard reads
(read-only) at start, so the demo shows frontiers without computing anything.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairengine.data import load_dataset
from fairengine.data.registry import assets_dir


def demo_root() -> Path:
    """Where the shipped demo frontiers live."""
    return assets_dir() / "frontiers"


def precompute(
    out: Path | None = None,
    methods: list[str] | None = None,
    *,
    quick: bool = False,
    log: Callable[[str], Any] = print,
) -> list[dict[str, Any]]:
    """Sweep every method's demo grid on its demo tasks into the store at ``out``.

    Parameters
    ----------
    out : Path, optional
        Store root (default ``assets/frontiers``).
    methods : list of str, optional
        Only these methods (default: every registered method with a demo grid).
    quick : bool
        Only the first two values of each grid knob (for tests).

    Returns
    -------
    list of dict
        One record per (method, dataset): the number of points and the task key.
    """
    from fairengine.frontier import FrontierStore, sweep, task_key
    from fairengine.methods import get_method, list_methods

    store = FrontierStore(out or demo_root())
    names = methods or [m for m in list_methods() if get_method(m).demo_grid]
    written = []
    for name in names:
        method = get_method(name)
        grid = {k: list(v[:2] if quick else v) for k, v in method.demo_grid.items()}
        if not grid:
            continue
        for dataset, sensitive in method.demo_tasks:
            task = load_dataset(dataset, sensitive=sensitive)
            if task.kind not in method.kinds:
                continue
            for seed in method.demo_seeds:
                train, test = task.split(random_state=seed)
                n_points = len(list(itertools.product(*grid.values())))
                split = f", split {seed}" if seed else ""
                log(f"{name} on {dataset} ({', '.join(task.sensitive)}{split}): {n_points} points")
                frontier = sweep(method, train, test, grid, store=store)
                written.append(
                    {
                        "method": name,
                        "dataset": dataset,
                        "sensitive": list(task.sensitive),
                        "seed": int(seed),
                        "points": int(frontier.points["point_id"].nunique()),
                        "task_key": task_key(train, test),
                    }
                )
    return written
