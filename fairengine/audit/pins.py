"""A pinned point of a comparison: its per-group table (with intervals) and its card."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairengine.audit.core import CI_LEVEL, N_BOOT, AuditResult, table_records
from fairengine.data.errors import DataError
from fairengine.textsafe import md_text

if TYPE_CHECKING:
    import pandas as pd

    from fairengine.data import Task


def pin_entry(
    pin: str,
    frontiers: list[Any],
    audits: list[AuditResult],
    train: Task,
    test: Task,
    *,
    reference: str | None = None,
    tau: float | None = None,
) -> dict[str, Any]:
    """``{"kind", "id", "method", "groups", "card"}`` of the point whose id starts with ``pin``
    or the outside model named ``pin`` (a point's disparities against group ``reference``, None:
    the largest, at the four-fifths threshold ``tau``)."""
    for result in audits:
        if result.name == pin:
            groups = table_records(result.groups)
            return {
                "kind": "outside",
                "id": pin,
                "method": "outside",
                "groups": groups,
                "card": outside_card(result),
            }
    for frontier in frontiers:
        for record in frontier.to_records():
            if record["point_id"].startswith(pin):
                return _point_entry(frontier, record, train, test, (reference, tau))
    raise DataError(f"No point or outside model {pin[:40]!r} to pin in this comparison.")


def _point_entry(
    frontier: Any, record: dict[str, Any], train: Task, test: Task, disparity: tuple
) -> dict:
    from fairengine.export import model_card
    from fairengine.methods import get_method

    point_id = record["point_id"]
    result = frontier.run_result(point_id, train, test)
    table = model_group_table(result.model, test, reference=disparity[0], tau=disparity[1])
    card = model_card(result, train, test, method=get_method(result.method), group_table=table)
    groups = None if table is None else table_records(table)
    return {
        "kind": "point",
        "id": point_id,
        "method": frontier.method,
        "groups": groups,
        "card": card,
    }


def model_group_table(
    model: Any, test: Task, *, reference: str | None = None, tau: float | None = None
) -> pd.DataFrame | None:
    """Per-group metrics with intervals (and a classifier's disparities against group
    ``reference``, None: the largest, at the four-fifths threshold ``tau``) of a predicting
    model on the test rows (it may read the sensitive columns too); None
    for a model that does not predict the target or cannot score the rows without inputs the
    table lacks."""

    from fairengine import metrics
    from fairengine.methods.evaluation import predicts

    if not predicts(model, test):
        return None
    try:
        pred = model.metric_predictions(test.frame.drop(columns=[test.target]))
    except (KeyError, ValueError):
        return None
    return metrics.task_group_table(
        test, pred, ci=CI_LEVEL, n_boot=N_BOOT, reference=reference, tau=tau
    )


def outside_card(result: AuditResult) -> str:
    """A short Markdown card of an audited outside model: source, threshold, metrics, checks."""
    lines = [f"# Outside model: {md_text(result.name)}", ""]
    lines += [f"- Source: {md_text(result.source or 'values given directly')}"]
    lines += [f"- Values: {result.kind}"]
    if result.threshold is not None:
        lines += [f"- Threshold: scores at or above {result.threshold:g} predict 1"]
    lines += ["", "## Metrics (test rows)", "", "| metric | value |", "|---|---|"]
    lines += [f"| {k} | {v:.4f} |" for k, v in result.metrics.get("test", {}).items()]
    lines += ["", "## Checks", ""]
    lines += [
        f"- **{c.level.upper()}** {md_text(c.name)}: {md_text(c.sentence)}" for c in result.checks
    ]
    lines += [f"- Note: {md_text(n)}" for n in result.notes]
    return "\n".join(lines) + "\n"
