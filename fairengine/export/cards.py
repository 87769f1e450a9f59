"""Model cards (Markdown) and the metadata stored beside a model.

Dataset, file, column and group names and label values come from the user's data: each goes
into the card through :mod:`fairengine.textsafe` (``md_code`` in code spans, ``md_text``
elsewhere, shell and Python quoting in the code examples), so the card shows them as text
wherever it is rendered and no name can add a link, an image or formatting to it.
"""

from __future__ import annotations

import json
import numbers
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fairengine import __version__
from fairengine.models.columns import input_schema
from fairengine.textsafe import md_code, md_file_text, md_text

if TYPE_CHECKING:  # the methods (and the Task's pandas) are imported only when a card is written
    from fairengine.data import Task
    from fairengine.methods.base import Method, RunResult

_CAVEATS = (
    "Metrics come from one train/test split of the data named above; other populations, time "
    "periods or group definitions can behave differently.",
    "Group fairness metrics compare groups defined by the chosen sensitive attribute(s) only; "
    "they say nothing about other groups or about individuals.",
    "A randomized classifier's metrics are its expected metrics; single predictions are random.",
)


_RANDOMIZED_CLASSIFIER = (
    "`prediction` is 1 when the model predicts {target} = {positive} and 0 otherwise. The "
    "model is randomized: each row's prediction is drawn (seeded by `random_state`), and "
    "`probability` (`--proba`, `predict_proba`) is the exact probability of predicting 1, the "
    "quantity its fairness guarantees are about."
)
_CLASSIFIER = (
    "`prediction` is 1 when the model predicts {target} = {positive} and 0 otherwise; "
    "`probability` (`--proba`, `predict_proba`) is the model's score for 1."
)
_MISUSE = (
    "Do not use it for automated decisions about individuals without human review, or on a "
    "population, time period or definition of the columns other than the training data's.",
    "Do not use it to infer anyone's sensitive attribute, nor as evidence that a decision "
    "process is fair: its fairness was measured on the test split above, for the named groups "
    "and metric only.",
)


def how_to_use(
    model: Any,
    schema: dict[str, Any] | None,
    file_name: str = "model.fairmodel",
    *,
    text: Callable[[object], str] = md_text,
) -> list[str]:
    """The card's "How to use this file" section (Markdown lines)."""
    randomized = bool(getattr(type(model), "randomized", False))
    target = (schema or {}).get("target")
    target = "the target" if target is None else md_code(target)
    positive = text((schema or {}).get("positive_label") or "1")
    meaning = getattr(type(model), "card_meaning", "") or (
        _RANDOMIZED_CLASSIFIER if randomized else _CLASSIFIER
    )
    columns = input_schema(model, {"metadata": {"train": schema or {}}})
    numeric, text = columns.numeric, columns.text
    dropped = list(getattr(model.encoder, "dropped_", []))
    seed = ", random_state=0" if randomized else ""
    file_name = " ".join(file_name.split())  # one line: a code block cannot be closed from it
    lines = [
        "## How to use this file",
        "",
        f"Install fairengine {__version__} from its wheel, no repository needed "
        f"(`pip install fairengine-{__version__}-py3-none-any.whl`), then in Python:",
        "",
        "```python",
        "import pandas as pd",
        "from fairengine.export import load_model",
        "",
        f"model = load_model({json.dumps(file_name, ensure_ascii=False)})"
        "  # verifies checksums; never unpickles",
        'frame = pd.read_csv("new_rows.csv")  # raw columns, as in the training data',
        f"predictions = model.predict(frame{seed})",
        "scores = model.predict_score(frame)  # P(prediction = 1); regression: expected value",
        "```",
        "",
        "or on the command line (CSV or Parquet, streamed in chunks):",
        "",
        "```",
        f"fairengine inspect {shlex.quote(file_name)}",
        f"fairengine predict {shlex.quote(file_name)} --data new_rows.csv --out predictions.csv "
        "--proba",
        "```",
        "",
        "Add `--id-columns` and the names of input columns (e.g. a row identifier) to copy them "
        "into the output.",
        "",
        "**What the prediction means.** " + meaning.format(target=target, positive=positive),
        "",
        f"**Columns it needs** ({len(model.features)}), raw as in the training data: "
        + (f"numeric {', '.join(map(md_code, numeric))}" if numeric else "no numeric")
        + ("; text " + ", ".join(map(md_code, text)) if text else "")
        + ". Missing numbers are imputed with the training median; unseen text values count as "
        '"other". `fairengine predict` refuses input with missing, unknown or mistyped columns.',
        "",
        "**Privacy.** The file stores the encoder's statistics: medians and scales of numeric "
        "columns and the most frequent values of each text column. "
        + (
            "Identifier-like text columns were dropped, with no value stored: "
            + ", ".join(map(md_code, dropped))
            + "."
            if dropped
            else "No identifier-like text column (names, ids) was among the features; such "
            "columns are dropped, never stored."
        ),
        "",
        "**Not for.** " + " ".join(_MISUSE),
    ]
    return lines


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
    from fairengine.methods.evidence import evidence_dict

    return {
        "method": result.method,
        "knobs": dict(result.knobs),
        "metrics": result.metrics,
        "train": task_schema(train),
        "test_rows": len(test.frame),
        "test_fingerprint": test.fingerprint,
        "elapsed_seconds": round(float(result.elapsed), 3),
        # checks and baselines, so a card or a Compare point made from the file shows them
        "evidence": evidence_dict(result),
    }


def evidence_lines(result: RunResult, *, text: Callable[[object], str] = md_text) -> list[str]:
    """The card's "Checks" and "Baselines" sections: every check with its level first, and the
    constant and unconstrained references' metrics on train and test (plain numbers)."""
    checks = getattr(result, "checks", ()) or ()
    baselines = getattr(result, "baselines", None)
    lines = ["", "## Checks", ""]
    if not checks:
        lines.append("No checks were computed for this result.")
    lines += [f"- **{c.level.upper()}** {text(c.name)}: {text(c.sentence)}" for c in checks]
    if baselines is None:
        return lines
    lines += ["", "## Baselines (same rows, same evaluation)", ""]
    lines += ["| reference | metric | train | test |", "|---|---|---|---|"]
    for label, splits in (
        (baselines.constant_label, baselines.constant),
        (baselines.unconstrained_label, baselines.unconstrained),
    ):
        lines += [f"| {text(label)} {row}" for row in _metric_rows(splits, text)]
    return lines


def _metric_rows(splits: dict[str, dict[str, float]], text: Callable[[object], str]) -> list[str]:
    """``| name | train | test |`` per metric of either split (NaN where one lacks it)."""
    train, test = splits.get("train", {}), splits.get("test", {})
    nan = float("nan")
    return [
        f"| {text(name)} | {_fmt(train.get(name, nan), text)} | {_fmt(test.get(name, nan), text)} |"
        for name in dict.fromkeys([*train, *test])
    ]


def _fmt(value: object, text: Callable[[object], str]) -> str:
    """A table cell: a float to 4 decimals, an integer as an integer, anything else as text."""
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{int(value):d}"
    return text(value)


def model_card(
    result: RunResult,
    train: Task | None = None,
    test: Task | None = None,
    *,
    method: Method | None = None,
    group_table: Any = None,
    file_name: str = "model.fairmodel",
    for_file: bool = False,
) -> str:
    """A Markdown model card: data, knobs, metrics (overall and per group), the paper, caveats.

    Parameters
    ----------
    result : RunResult
        The run, with its checks and baselines (the card's evidence).
    train, test : Task, optional
        The data the model was fitted and tested on.
    method : Method, optional
        The method that made ``result``, passed by the caller: its title, description and
        reference head the card. Without it the card is titled with ``result.method``.
    group_table : pandas.DataFrame, optional
        Per-group metrics on the test data (``fairengine.metrics.group_table``).
    file_name : str
        The model file's name as the usage examples show it.
    for_file : bool
        False: the card for a page that renders Markdown (Streamlit, GitHub), every name from
        the data escaped (:func:`~fairengine.textsafe.md_text`). True: the card written as a
        ``.md`` file, read as text: names verbatim, no backslashes or invisible characters
        (:func:`~fairengine.textsafe.md_file_text`).
    """
    text = md_file_text if for_file else md_text
    lines = [f"# Model card: {method.title if method else text(result.method)}", ""]
    lines += [method.description, ""] if method and method.description else []
    if method and method.reference:
        lines += [f"**Reference:** {method.reference}", ""]  # a citation, not a paper number
    schema = None if train is None else task_schema(train)
    if schema is not None:
        groups = ", ".join(map(text, schema["group_names"]))
        features = ", ".join(map(text, schema["features"]))
        positive = f" (1 = {text(schema['positive_label'])})" if schema["positive_label"] else ""
        lines += [
            "## Data",
            "",
            f"- Dataset: **{text(schema['name'])}**, {schema['kind']}",
            f"- Target: {md_code(schema['target'])}{positive}",
            f"- Sensitive: {', '.join(map(md_code, schema['sensitive']))} "
            f"({len(schema['group_names'])} groups: {groups})",
            f"- Features ({len(schema['features'])}): {features}",
            "- Identifier columns (row numbers, index columns, ids), not inputs of the model: "
            + (", ".join(map(md_code, train.identifiers)) or "none found"),
            f"- Training rows: {schema['rows']:,}"
            + (f"; test rows: {len(test.frame):,}" if test is not None else ""),
            f"- Data fingerprint: `{schema['fingerprint'][:16]}`",
            "",
        ]
    lines += ["## Knobs", "", "| knob | value |", "|---|---|"]
    lines += [f"| {text(k)} | {_fmt(v, text)} |" for k, v in result.knobs.items()]
    lines += ["", "## Metrics", "", "| metric | train | test |", "|---|---|---|"]
    lines += _metric_rows(result.metrics, text)
    lines += evidence_lines(result, text=text)
    if group_table is not None:
        columns = [text(c) for c in group_table.columns]
        lines += ["", "## Per group (test data)", "", "| group | " + " | ".join(columns) + " |"]
        lines.append("|---" * (len(columns) + 1) + "|")
        for index, *values in group_table.itertuples(name=None):  # 612 stays 612, not 612.0
            lines.append(f"| {text(index)} | " + " | ".join(_fmt(v, text) for v in values) + " |")
    if result.model is not None and hasattr(result.model, "encoder"):
        lines += ["", *how_to_use(result.model, schema, file_name, text=text)]
    lines += ["", "## Caveats", ""] + [f"- {c}" for c in _CAVEATS] + [""]
    return "\n".join(lines)
