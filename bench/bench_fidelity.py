"""The fidelity matrix (see :mod:`fairengine.frontier.fidelity`).

* ``fidelity``: every method × every bundled dataset it applies to × split seeds 11, 12, 13 at
  the page defaults, plus the papers' settings where they differ (:data:`PAPER_SETTINGS`). One
  row per (method, dataset, setting): how many seeds show the effect on the test rows, how many
  are flagged (the checks that fired) and how many are silent (none, if the checks work), with
  the numbers of each seed. Summary rows count the cells. Full mode samples at most
  :data:`FULL_ROWS` training rows (all rows of the smaller tables); ``--quick`` 2,000 and seed 11.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from fairengine.frontier.fidelity import SEEDS, cells, run_cell

FULL_ROWS = 10_000
#: The papers' settings that differ from the page defaults: (method, dataset, label, knobs).
PAPER_SETTINGS = (
    ("noisy_groups", "adult", "paper: TPR, α = 0.05, noise 0.3",
     {"constraint": "tpr", "slack": 0.05, "noise": 0.3}),
    ("balanced_filtering", "adult", "paper: α = 1", {"alpha": 1.0, "protocol": "paper"}),
    ("fair_regression", "law_school", "paper: ε = 0.02", {"eps": 0.02}),
    ("maxent", "adult", "paper: C = 0.5, τ = 0.8", {"C": 0.5, "tau": 0.8}),
)  # fmt: skip


VERDICTS = ("effect", "flagged", "other", "silent", "n/a")


def fidelity(quick: bool) -> list[dict]:
    """Fidelity matrix: effect shown on test, or flagged by the relevant check, per method ×
    dataset × seed"""
    seeds = SEEDS[:1] if quick else SEEDS
    rows = 2000 if quick else FULL_ROWS
    runs = [(m, d, s, "defaults", None) for m, d, s in cells(seeds=seeds)]
    runs += [(m, d, s, label, knobs) for m, d, label, knobs in PAPER_SETTINGS for s in seeds]
    grouped: dict[tuple, list] = defaultdict(list)
    for method, dataset, seed, label, knobs in runs:
        cell = run_cell(method, dataset, seed, knobs, setting=label, rows=rows)
        grouped[(method, dataset, label)].append(cell)
    out, totals = [], Counter()
    for (method, dataset, label), group in grouped.items():
        verdicts = Counter(c.verdict for c in group)
        totals.update(verdicts)
        detail = "; ".join(
            f"s{c.seed} {c.verdict}"
            + (f" [{', '.join(c.flags)}]" if c.flags and c.verdict != "n/a" else "")
            + " " + ", ".join(f"{k}={v:.3f}" for k, v in c.numbers.items())
            for c in group
        )  # fmt: skip
        out.append({
            "what": f"{method} · {dataset} · {label}: effect / flagged / other / silent / n/a",
            "value": "/".join(str(verdicts[v]) for v in VERDICTS),
            "unit": "seeds", "note": detail,
        })  # fmt: skip
    every = [c for group in grouped.values() for c in group]
    out += _per_method(every)
    for verdict in VERDICTS:
        out.append(
            {
                "what": f"cells: {verdict}",
                "value": totals[verdict],
                "unit": "cells",
                "note": f"of {sum(totals.values())} cells, {rows:,} training rows at most",
            }
        )
    ran = [c for c in every if c.verdict != "n/a"]
    out.append({
        "what": "before checks existed: cells showing the effect / failing silently",
        "value": f"{sum(c.effect for c in ran)}/{sum(not c.effect for c in ran)}",
        "unit": "cells",
        "note": "the same cells judged by their numbers alone: without checks every cell "
                "without the effect was silent",
    })  # fmt: skip
    out += _remaining_flags(every)
    return out


def _per_method(every: list) -> list[dict]:
    """Per method: effect / flagged-relevant / flagged-other / silent, and the check that fires
    on the largest share of the cells where the effect is shown (a warning that fires on most
    of them is noise)."""
    out = []
    for method in dict.fromkeys(c.method for c in every):
        mine = [c for c in every if c.method == method]
        counts = Counter(c.verdict for c in mine)
        effect = [c for c in mine if c.verdict == "effect"]
        fired = Counter(flag.split(":", 1)[1] for c in effect for flag in set(c.flags))
        top, n = fired.most_common(1)[0] if fired else ("none", 0)
        out.append({
            "what": f"{method}: effect / flagged-relevant / flagged-other / silent",
            "value": "/".join(str(counts[v]) for v in ("effect", "flagged", "other", "silent")),
            "unit": "cells",
            "note": f"most frequent check on effect cells: {top} on {n} of {len(effect)}",
        })  # fmt: skip
    return out


def _remaining_flags(every: list) -> list[dict]:
    """The flagged cells with the checks that flagged them and their reasons (one row per
    method × check, the first cell's sentence)."""
    seen: dict[tuple[str, str], list] = defaultdict(list)
    for cell in every:
        if cell.verdict == "flagged":
            for name, sentence in cell.reasons.items():
                seen[(cell.method, name)].append((cell, sentence))
    return [
        {
            "what": f"flag: {method} · {name}",
            "value": len(found),
            "unit": "cells",
            "note": f"{', '.join(f'{c.dataset} s{c.seed}' for c, _ in found)}; e.g. {found[0][1]}",
        }
        for (method, name), found in seen.items()
    ]


def register(registry) -> None:
    registry.add(fidelity)
