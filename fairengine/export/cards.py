"""Model cards (Markdown) and the metadata stored beside a model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairengine.data import Task

if TYPE_CHECKING:  # the methods are imported only when a card is written
    from fairengine.methods.base import RunResult

_CAVEATS = (
    "Metrics come from one train/test split of the data named above; other populations, time "
    "periods or group definitions can behave differently.",
    "Group fairness metrics compare groups defined by the chosen sensitive attribute(s) only; "
    "they say nothing about other groups or about individuals.",
    "A randomized classifier's metrics are its expected metrics; single predictions are random.",
)


def task_schema(task: Task) -> dict[str, Any]:
    """What a model file records about the data it was fitted on."""
    return {
        "name": task.name,
        "kind": task.kind,
        "target": task.target,
        "positive_label": None if task.positive_label is None else str(task.positive_label),
        "sensitive": list(task.sensitive),
        "features": list(task.features),
        "dtypes": {c: str(task.frame[c].dtype) for c in task.features},
        "group_names": list(task.group_names),
        "rows": len(task.frame),
        "fingerprint": task.fingerprint,
    }


def result_metadata(result: RunResult, train: Task, test: Task) -> dict[str, Any]:
    """Metadata for :func:`fairengine.export.save_model` from a run."""
    return {
        "method": result.method,
        "knobs": dict(result.knobs),
        "metrics": result.metrics,
        "train": task_schema(train),
        "test_rows": len(test.frame),
        "test_fingerprint": test.fingerprint,
        "elapsed_seconds": round(float(result.elapsed), 3),
    }


def _markdown_table(table: Any) -> list[str]:
    columns = [str(c) for c in table.columns]
    rows = [
        "| group | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for index, row in table.iterrows():
        rows.append(f"| {index} | " + " | ".join(_fmt(v) for v in row.tolist()) + " |")
    return rows


def _fmt(value: float) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def model_card(
    result: RunResult,
    train: Task | None = None,
    test: Task | None = None,
    *,
    group_table: Any = None,
) -> str:
    """A Markdown model card: data, knobs, metrics (overall and per group), the paper, caveats.

    Parameters
    ----------
    result : RunResult
    train, test : Task, optional
        The data the model was fitted and tested on.
    group_table : pandas.DataFrame, optional
        Per-group metrics on the test data (``fairengine.metrics.group_table``).
    """
    from fairengine.methods import get_method

    method = get_method(result.method)
    lines = [f"# Model card: {method.title}", ""]
    lines += [method.description, ""] if method.description else []
    if method.reference:
        lines += [f"**Reference:** {method.reference}", ""]  # a citation, not a paper number
    if train is not None:
        schema = task_schema(train)
        positive = f" (1 = {schema['positive_label']})" if schema["positive_label"] else ""
        lines += [
            "## Data",
            "",
            f"- Dataset: **{schema['name']}**, {schema['kind']}",
            f"- Target: `{schema['target']}`{positive}",
            f"- Sensitive: {', '.join(f'`{c}`' for c in schema['sensitive'])} "
            f"({len(schema['group_names'])} groups: {', '.join(schema['group_names'])})",
            f"- Features ({len(schema['features'])}): {', '.join(schema['features'])}",
            f"- Training rows: {schema['rows']:,}"
            + (f"; test rows: {len(test.frame):,}" if test is not None else ""),
            f"- Data fingerprint: `{schema['fingerprint'][:16]}`",
            "",
        ]
    lines += ["## Knobs", "", "| knob | value |", "|---|---|"]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in result.knobs.items()]
    lines += ["", "## Metrics", "", "| metric | train | test |", "|---|---|---|"]
    names = list(dict.fromkeys([*result.metrics.get("train", {}), *result.metrics.get("test", {})]))
    for name in names:
        train_v = result.metrics.get("train", {}).get(name, float("nan"))
        test_v = result.metrics.get("test", {}).get(name, float("nan"))
        lines.append(f"| {name} | {_fmt(train_v)} | {_fmt(test_v)} |")
    if group_table is not None:
        lines += ["", "## Per group (test data)", "", *_markdown_table(group_table)]
    lines += ["", "## Caveats", ""] + [f"- {c}" for c in _CAVEATS] + [""]
    return "\n".join(lines)
