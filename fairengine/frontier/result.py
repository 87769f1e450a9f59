"""The Frontier: what a sweep returns, one row per (knob setting, split)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.export import load_model
from fairengine.frontier.pareto import pareto_mask
from fairengine.methods.base import RunResult
from fairengine.metrics import is_lower_better, ordered

if TYPE_CHECKING:  # pandas loads when a table is built, not for a cache lookup
    import pandas as pd

SPLITS = ("train", "test")
_FIXED_COLUMNS = ("point_id", "split", "cached", "elapsed", "pareto")


@dataclass
class PointRecord:
    """One point of a sweep before it becomes table rows (internal to the frontier package)."""

    point_id: str
    knobs: dict[str, Any]
    metrics: dict[str, dict[str, float]]
    cached: bool
    elapsed: float
    result: RunResult | None = None
    path: Path | None = None
    #: ``{"checks": [...], "baselines": {...}}`` (JSON-able), None when unknown (a point stored
    #: before results carried evidence).
    evidence: dict[str, Any] | None = None

    @classmethod
    def from_stored(cls, key: str, knobs: dict[str, Any], stored: Any) -> PointRecord:
        """The record of a point read back from a :class:`~fairengine.frontier.FrontierStore`
        (``stored``: what its ``get`` returned) under its point ``key``."""
        return cls(
            point_id=key[:12],
            knobs=knobs,
            metrics=stored.metrics,
            cached=True,
            elapsed=stored.elapsed,
            path=stored.path,
            evidence=stored.evidence,
        )


@dataclass(eq=False)
class Frontier:
    """The points of a sweep of one method over a knob grid, with their Pareto flags.

    Attributes
    ----------
    method : str
        Method name.
    task_key : str
        :func:`fairengine.frontier.task_key` of the (train, test) pair.
    points : pandas.DataFrame
        One row per (knob setting, split), in grid order: ``point_id`` (first 12 hex characters
        of the store key), ``split`` ("train" / "test"), one column per knob, one per metric,
        ``cached`` (served from the store), ``elapsed`` (fit seconds of the original run) and
        ``pareto`` (non-dominated within its split on ``axes``).
    axes : tuple of str
        The (x, y) metrics ``pareto`` is computed on; by default the method's
        ``fairness_metric`` and ``performance_metric``.
    knob_names, metric_names : tuple of str
        Which columns are knobs and which are metrics.

    Examples
    --------
    >>> frontier = sweep("reweighing", train, test, {"strength": [0, 0.5, 1]})  # doctest: +SKIP
    >>> best = frontier.points.query("split == 'test' and pareto")  # doctest: +SKIP
    >>> model = frontier.model(best["point_id"].iloc[0])  # doctest: +SKIP
    >>> by_accuracy = frontier.with_axes("eo_diff", "accuracy")  # doctest: +SKIP
    """

    method: str
    task_key: str
    points: pd.DataFrame
    axes: tuple[str, str]
    knob_names: tuple[str, ...]
    metric_names: tuple[str, ...]
    _records: dict[str, PointRecord] = field(default_factory=dict, repr=False)
    _store: Any = field(default=None, repr=False)

    @classmethod
    def from_records(
        cls,
        method: str,
        task_key: str,
        records: Sequence[PointRecord],
        axes: tuple[str, str],
        knob_names: Sequence[str],
        *,
        store: Any = None,
    ) -> Frontier:
        """Build the table from sweep records (internal; use :func:`fairengine.frontier.sweep`)."""
        metric_names, values = _metric_values(records)
        clash = set(knob_names) & (set(metric_names) | set(_FIXED_COLUMNS))
        if clash:
            raise ValueError(f"Knob names clash with frontier columns: {sorted(clash)}.")
        rows = []
        for i, record in enumerate(records):
            for split in SPLITS:
                rows.append(
                    {
                        "point_id": record.point_id,
                        "split": split,
                        **{k: record.knobs.get(k) for k in knob_names},
                        **values[split][i],
                        "cached": bool(record.cached),
                        "elapsed": float(record.elapsed),
                    }
                )
        import pandas as pd

        columns = ["point_id", "split", *knob_names, *metric_names, "cached", "elapsed"]
        points = pd.DataFrame(rows, columns=columns)
        points["cached"] = points["cached"].astype(bool)
        points["elapsed"] = points["elapsed"].astype(float)
        frontier = cls(
            method=method,
            task_key=task_key,
            points=points,
            axes=axes,
            knob_names=tuple(knob_names),
            metric_names=tuple(metric_names),
            _records={r.point_id: r for r in records},
            _store=store,
        )
        frontier.points["pareto"] = frontier._pareto(*axes, missing_ok=True)
        return frontier

    def __len__(self) -> int:
        """Number of knob settings (each has a train and a test row)."""
        return len(self._records)

    def _pareto(self, x: str, y: str, *, missing_ok: bool = False) -> np.ndarray:
        missing = [a for a in (x, y) if a not in self.metric_names]
        if missing and not missing_ok:
            raise KeyError(
                f"{', '.join(map(repr, missing))} is not a metric of this frontier; its metrics "
                f"are {', '.join(self.metric_names)}."
            )
        if missing:
            return np.zeros(len(self.points), dtype=bool)
        return _pareto_flags(self.points["split"], self.points[x], self.points[y], (x, y))

    def with_axes(self, x: str, y: str) -> Frontier:
        """A copy with ``pareto`` recomputed (per split) on metrics ``x`` and ``y``.

        Directions come from :func:`fairengine.metrics.is_lower_better`.
        """
        points = self.points.copy()
        points["pareto"] = self._pareto(x, y)
        return dataclasses.replace(self, points=points, axes=(x, y))

    def _record(self, point_id: str) -> PointRecord:
        try:
            return self._records[point_id]
        except KeyError:
            ids = list(self._records)
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise KeyError(
                f"No point {point_id!r} in this {self.method} frontier ({len(ids)} points: "
                f"{shown})."
            ) from None

    def result(self, point_id: str) -> RunResult | None:
        """The full :class:`RunResult` of a point computed by this sweep; None for a point
        served from the store (its metrics are in ``points``, its model in :meth:`model`)."""
        return self._record(point_id).result

    def run_result(self, point_id: str, train: Any, test: Any) -> RunResult:
        """The point's :class:`RunResult`: the one computed by this sweep, or one rebuilt from its
        stored record (model, metrics and evidence, no artifacts; the evidence computed on
        ``train``/``test`` for a point stored before results carried checks)."""
        from fairengine.methods import get_method
        from fairengine.methods.base import stored_result
        from fairengine.methods.evidence import evidence_from_dict

        result = self.result(point_id)
        if result is not None:
            return result
        record = next(r for r in self.to_records() if r["point_id"] == point_id)
        knobs, values, model = record["knobs"], record["metrics"], self.model(point_id)
        if record["checks"] is None:
            return stored_result(get_method(self.method), knobs, values, model, train, test)
        checks, baselines = evidence_from_dict(record)
        return RunResult(self.method, knobs, values, model, checks=checks, baselines=baselines)

    def model(self, point_id: str) -> Any:
        """The fitted model of a point: from memory if computed here, else from the store.

        Raises
        ------
        KeyError
            For an unknown ``point_id``, or a point whose model is neither in memory nor in a
            store (a sweep without a store that was copied to another process).
        """
        record = self._record(point_id)
        if record.result is not None:
            return record.result.model
        if record.path is not None and record.path.is_file():
            return load_model(record.path)
        if self._store is not None:
            cached = self._store.get(self.task_key, self.method, record.knobs)
            model = None if cached is None else self._store.load(cached)
            if model is not None:
                return model
        raise KeyError(
            f"The model of point {point_id!r} is not available: it is not in memory and not in "
            "the store. Run the sweep again with a FrontierStore to keep models."
        )

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-able dict per knob setting, in grid order (NaN becomes None): the
        :func:`plain_records` of this frontier's sweep records on its ``axes``.

        Keys: ``point_id``, ``method``, ``knobs`` (dict), ``metrics`` (``{"train": {...},
        "test": {...}}``), ``pareto`` (``{"train": bool, "test": bool}``), ``cached``,
        ``elapsed``, ``checks`` (list of check dicts, None when unknown) and ``baselines``
        (dict or None).
        """
        return plain_records(self.method, list(self._records.values()), self.axes, self.knob_names)

    def to_json(self, **dumps: Any) -> str:
        """A JSON document: method, task key, axes, knob and metric names, and
        :meth:`to_records` under ``points``."""
        document = {
            "method": self.method,
            "task_key": self.task_key,
            "axes": list(self.axes),
            "knobs": list(self.knob_names),
            "metrics": list(self.metric_names),
            "points": self.to_records(),
        }
        return json.dumps(document, allow_nan=False, **dumps)


def plain_records(
    method: str,
    records: Sequence[PointRecord],
    axes: tuple[str, str],
    knob_names: Sequence[str],
) -> list[dict[str, Any]]:
    """The records of :meth:`Frontier.to_records` straight from sweep records, without pandas
    (so that a fully cached ``fairengine sweep`` imports neither pandas nor a method's
    algorithm); :meth:`Frontier.to_records` builds its records here too.

    Parameters
    ----------
    method : str
        Method name.
    records : sequence of PointRecord
        One per knob setting, in grid order.
    axes : (str, str)
        The metrics the ``pareto`` flags are computed on (per split; all False when a split
        lacks one of them).
    knob_names : sequence of str
        The knob columns, in the method's order.
    """
    metric_names, values = _metric_values(records)
    x, y = axes
    rows = [row for split in SPLITS for row in values[split]]  # all train rows, then test
    pareto = np.zeros(len(rows), dtype=bool)
    if x in metric_names and y in metric_names:
        splits = np.repeat(SPLITS, len(records))
        pareto = _pareto_flags(splits, [r[x] for r in rows], [r[y] for r in rows], axes)
    out: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(records):
        if record.point_id in out:  # one entry per point id
            continue
        out[record.point_id] = {
            "point_id": record.point_id,
            "method": method,
            "knobs": {k: plain_value(record.knobs.get(k)) for k in knob_names},
            "metrics": {
                split: {m: plain_value(values[split][i][m]) for m in metric_names}
                for split in SPLITS
            },
            "pareto": {split: bool(pareto[k * len(records) + i]) for k, split in enumerate(SPLITS)},
            "cached": bool(record.cached),
            "elapsed": plain_value(float(record.elapsed)),
            **record_evidence(record),
        }
    return list(out.values())


def _metric_values(records: Sequence[PointRecord]) -> tuple[list[str], dict[str, list[dict]]]:
    """The metric names of ``records`` (in the registry's order) and, per split, each record's
    values of them (NaN where missing)."""
    names = ordered(
        {name for r in records for split in SPLITS for name in r.metrics.get(split, {})}
    )
    values = {
        split: [{m: _metric_float(r.metrics.get(split, {}).get(m)) for m in names} for r in records]
        for split in SPLITS
    }
    return names, values


def _pareto_flags(splits: Any, xs: Any, ys: Any, axes: tuple[str, str]) -> np.ndarray:
    """Whether each point (in split ``splits[i]``, at ``(xs[i], ys[i])``) is on the Pareto front
    of its split on the metrics ``axes``."""
    splits, xs, ys = np.asarray(splits), np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    mask = np.zeros(len(splits), dtype=bool)
    minimize = tuple(is_lower_better(a) for a in axes)
    for split in SPLITS:
        at = np.flatnonzero(splits == split)
        mask[at] = pareto_mask(xs[at], ys[at], minimize=minimize)
    return mask


def record_evidence(record: PointRecord) -> dict[str, Any]:
    """``{"checks": ..., "baselines": ...}`` of a sweep record (None values when unknown)."""
    evidence = record.evidence
    if evidence is None and record.result is not None:
        from fairengine.methods.evidence import evidence_dict

        evidence = evidence_dict(record.result)
    evidence = evidence or {}
    return {"checks": evidence.get("checks"), "baselines": evidence.get("baselines")}


def plain_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _metric_float(value: object) -> float:
    """A metric value as a float: missing, or ``null`` in a model file's JSON, is NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]
