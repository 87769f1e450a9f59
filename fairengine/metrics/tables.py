"""Per-group tables and bootstrap confidence intervals of the metrics."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.metrics.classification import (
    RATE_TERMS,
    folded_ratio,
    ratios_to,
    reference_index,
    worst_ratio,
)
from fairengine.metrics.core import (
    Rows,
    as_column,
    check_unit,
    classification_rows,
    correct,
    prepare_rows,
)
from fairengine.metrics.registry import METRICS

if TYPE_CHECKING:
    import pandas as pd

    from fairengine.data import Task

_BOOT_CHUNK = 2_000_000  # resampled cells per block: bounds bootstrap memory to ~50 MB


#: The audit rates in the group table's order (the first ones as the table always had them).
_AUDIT_RATES = ("selection_rate", "tpr", "fpr", "fnr", "tnr", "ppv", "fdr", "npv", "for")
_TABLE_COLUMNS = {
    "classification": ("base_rate", "selection_rate", "accuracy", *_AUDIT_RATES[1:]),
    "regression": ("mean_target", "mean_prediction", "mse", "mae"),
}


def _table_terms(rows: Rows, kind: str, scores=None) -> tuple[np.ndarray, np.ndarray]:
    """Per-row terms (n, k): table column c = sum num[:, c] / sum den[:, c] (the Brier score
    last when ``scores`` are given)."""
    y, p, w = rows.y_true, rows.y_pred, rows.weight
    if kind == "classification":
        own = {"base_rate": (y, 1.0), "accuracy": (correct(rows), 1.0)}
        terms = [own[c] if c in own else RATE_TERMS[c](y, p) for c in _TABLE_COLUMNS[kind]]
        if scores is not None:
            terms.append(((scores - y) ** 2, 1.0))
        values, masks = zip(*terms, strict=True)
    else:
        values, masks = [y, p, (y - p) ** 2, np.abs(y - p)], [1.0] * 4
    den = np.column_stack([w * m for m in masks])
    return np.column_stack(values) * den, den


def _resample_counts(rng: np.random.Generator, starts, sizes, n: int, n_boot: int):
    """Yield blocks (b, n) of row multiplicities: each group's rows resampled with replacement.

    ``starts``/``sizes`` describe contiguous groups of a row order (one group of n rows when not
    stratified); a bootstrap resample is exactly these multiplicities used as weights.
    """
    owner_start, owner_size = np.repeat(starts, sizes), np.repeat(sizes, sizes)
    block = max(1, _BOOT_CHUNK // n)
    for lo in range(0, n_boot, block):
        b = min(block, n_boot - lo)
        picks = owner_start + (rng.random((b, n)) * owner_size).astype(np.intp)
        picks += np.arange(b)[:, None] * n
        yield np.bincount(picks.ravel(), minlength=b * n).reshape(b, n)


def _bootstrap_sums(rng: np.random.Generator, terms: np.ndarray, keys, n_boot: int) -> np.ndarray:
    """Column sums (n_boot, k) of ``terms`` over resamples of its rows with replacement.

    Rows equal in every array of ``keys`` have equal terms, so a resample matters only through
    how often each distinct row is drawn: Multinomial(n, m_j / n), exact and cheap when few
    rows are distinct (hard predictions); otherwise rows are resampled one by one.
    """
    import pandas as pd  # lazy: metric names load without pandas

    n = len(terms)
    cls = np.zeros(n, dtype=np.int64)
    for key in keys:  # class id of each row's combination of key values
        codes, uniques = pd.factorize(key)
        cls = pd.factorize(cls * len(uniques) + codes)[0]
    n_cls = int(cls.max()) + 1
    if n_cls * 8 > n:
        blocks = _resample_counts(rng, [0], [n], n, n_boot)
        return np.vstack([c.astype(float) @ terms for c in blocks])
    first = np.empty(n_cls, dtype=np.intp)
    first[cls[::-1]] = np.arange(n)[::-1]
    return rng.multinomial(n, np.bincount(cls) / n, size=n_boot).astype(float) @ terms[first]


def _percentiles(stats: np.ndarray, level: float) -> np.ndarray:
    with warnings.catch_warnings():  # an all-NaN column (rate never defined) gives NaN bounds
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanquantile(stats, [(1 - level) / 2, (1 + level) / 2], axis=0)


def group_table(
    y_true,
    y_pred,
    groups,
    *,
    group_names=None,
    kind: str = "classification",
    sample_weight=None,
    ci: float | None = None,
    scores=None,
    reference: Any = None,
    tau: float | None = None,
    n_boot: int = 200,
    random_state: Any = 0,
) -> pd.DataFrame:
    """Per-group summary, one row per group (index = group name) and an ``"overall"`` row last.

    Columns: ``n`` (rows with positive weight), ``share`` (weighted share), then for
    classification ``base_rate``, ``accuracy`` and the audit rates
    (:data:`~fairengine.metrics.registry.GROUP_RATES`; NaN for a group without rows in the
    rate's base), for regression ``mean_target``, ``mean_prediction``, ``mse``, ``mae``; each by
    the same definitions as the metrics.

    Parameters
    ----------
    y_true, y_pred, groups : array-like
        Targets, predictions and group labels, one per row.
    group_names : mapping or sequence, optional
        Label -> name (a mapping, or a sequence indexed by integer code).
    kind : {"classification", "regression"}
        Which columns the table has.
    sample_weight : array-like, optional
        Row weights.
    ci : float, optional
        The level of percentile bootstrap intervals ``<col>_low``/``<col>_high`` of each rate
        column and ``brier`` (rows resampled within each group; the overall row combines the
        same resamples); None: no intervals.
    scores : array-like, optional
        Classification: a score in [0, 1] per row, adding the columns ``auc`` and ``brier``
        (:data:`~fairengine.metrics.registry.GROUP_SCORE_MEASURES`).
    reference : optional
        The reference group's name (as in the index), or ``"largest"`` for the group of largest
        weight, adding the disparity columns of :func:`disparities`; None: none.
    tau : float, optional
        The four-fifths rule's threshold in (0, 1] (0.8).
    n_boot : int
        Bootstrap resamples (with ``ci``).
    random_state : int or numpy Generator
        Seed of the resampling (with ``ci``).
    """
    import pandas as pd  # lazy: metric names load without pandas

    if kind not in _TABLE_COLUMNS:
        raise ValueError(f"kind must be 'classification' or 'regression', got {kind!r}")
    if kind != "classification" and (scores is not None or reference is not None):
        raise ValueError("scores and reference apply to classification tables only")
    rows = (classification_rows if kind == "classification" else prepare_rows)(
        y_true, y_pred, groups, sample_weight
    )
    columns = _TABLE_COLUMNS[kind]
    if scores is not None:  # validated and filtered like y_pred
        scores = prepare_rows(None, as_column("scores", scores, None), groups, sample_weight).y_pred
        check_unit("scores", scores)
        columns = (*columns, "brier")
    num, den = _table_terms(rows, kind, scores)
    g, k = rows.n_groups, num.shape[1]
    sums = np.stack([np.bincount(rows.codes, weights=col, minlength=g) for col in (*num.T, *den.T)])
    sums = np.column_stack([sums, sums.sum(axis=1)])  # (2k, groups + overall)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = sums[:k] / sums[k:]
    names = list(rows.labels)
    if group_names is not None:
        names = [
            group_names.get(z, z) if isinstance(group_names, Mapping) else group_names[int(z)]
            for z in names
        ]
    sizes = np.bincount(rows.codes, weights=rows.weight > 0, minlength=g).astype(int)
    weights = np.bincount(rows.codes, weights=rows.weight, minlength=g)
    table = pd.DataFrame(
        {
            "n": np.append(sizes, sizes.sum()),
            "share": np.append(weights / weights.sum(), 1.0),
            **dict(zip(columns, rates, strict=True)),
        },
        index=pd.Index([*names, "overall"], name="group"),
    )
    if scores is not None:
        table.insert(table.columns.get_loc("brier"), "auc", _group_auc(rows, scores))
    if ci is not None:
        rng = np.random.default_rng(random_state)
        terms, keys = np.hstack([num, den]), () if scores is None else (scores,)
        low, high = _group_intervals(rng, rows, terms, n_boot, ci, keys)
        for j, col in enumerate(columns):
            table[f"{col}_low"], table[f"{col}_high"] = low[j], high[j]
    return table if reference is None else disparities(table, reference, tau)


def task_group_table(
    task: Task,
    pred,
    *,
    scores=None,
    ci: float | None = None,
    n_boot: int = 200,
    reference: Any = None,
    tau: float | None = None,
) -> pd.DataFrame:
    """:func:`group_table` of predictions ``pred`` on ``task``'s rows: a classifier's with its
    disparities against group ``reference`` (None: the largest) at ``tau`` and, from
    ``scores``, each group's AUC and Brier score; a regressor's without either."""
    classifier = task.kind == "classification"
    return group_table(
        task.y,
        np.asarray(pred, dtype=float),
        task.groups,
        group_names=list(task.group_names),
        kind=task.kind,
        ci=ci,
        n_boot=n_boot,
        scores=scores if classifier else None,
        reference=(reference or "largest") if classifier else None,
        tau=tau,
    )


def _group_auc(rows: Rows, scores: np.ndarray) -> np.ndarray:
    """Weighted ROC AUC of ``scores`` per group and overall; NaN without both labels."""
    from sklearn.metrics import roc_auc_score  # lazy: metric names load without scikit-learn

    out = []
    for mask in [rows.codes == z for z in range(rows.n_groups)] + [slice(None)]:
        y, w = rows.y_true[mask], rows.weight[mask]
        both = (w[y == 1].sum() > 0) and (w[y == 0].sum() > 0)
        out.append(float(roc_auc_score(y, scores[mask], sample_weight=w)) if both else np.nan)
    return np.asarray(out)


def disparities(
    table: pd.DataFrame, reference: Any = "largest", tau: float | None = None
) -> pd.DataFrame:
    """A copy of a classification :func:`group_table` (its last row the overall one) with
    Aequitas' disparity columns of each audit rate against group ``reference`` (a name in the
    index, or ``"largest"``: the group of largest share): ``<rate>_diff`` (group − reference),
    ``<rate>_ratio`` (group / reference, 0/0 = 1) and ``<rate>_pass`` (the four-fifths rule at
    ``tau``, default 0.8: τ ≤ ratio ≤ 1/τ; NA where the ratio is undefined)."""
    import pandas as pd  # lazy: metric names load without pandas

    table = table.copy()
    tau = 0.8 if tau is None else float(tau)
    if not 0 < tau <= 1:
        raise ValueError(f"tau must be in (0, 1], got {tau!r}")
    names = list(table.index[:-1])
    shares = table["share"].to_numpy(dtype=float)[:-1]
    ref = reference_index(names, shares, None if reference == "largest" else reference)
    for rate in _AUDIT_RATES:
        values = table[rate].to_numpy(dtype=float)
        ratio = ratios_to(values, ref)
        table[f"{rate}_diff"] = values - values[ref]
        table[f"{rate}_ratio"] = ratio
        verdict = pd.array(folded_ratio(ratio) >= tau - 1e-12, dtype="boolean")
        verdict[np.isnan(ratio)] = pd.NA
        table[f"{rate}_pass"] = verdict
    return table


def table_ratios(table: pd.DataFrame) -> dict[str, float]:
    """The ``<rate>_ratio`` metrics from a table with disparity columns (:func:`disparities`):
    each rate's :func:`~fairengine.metrics.classification.worst_ratio` over the groups (the
    ``overall`` row left out), equal to the metric computed on the rows with that reference."""
    ratios = table.iloc[:-1]  # the last row is "overall"
    return {
        f"{rate}_ratio": worst_ratio(ratios[f"{rate}_ratio"].to_numpy(dtype=float))
        for rate in _AUDIT_RATES
        if f"{rate}_ratio" in ratios
    }


def _group_intervals(
    rng: np.random.Generator, rows: Rows, terms: np.ndarray, n_boot: int, level: float, extra=()
) -> np.ndarray:
    """Percentile bounds (2, k, groups + overall) of the table's rates ``terms[:, :k] summed /
    terms[:, k:] summed``: rows resampled within each group, the overall column combining the
    same group resamples. ``extra`` holds any other per-row arrays the terms depend on."""
    g, k = rows.n_groups, terms.shape[1] // 2
    boot = np.zeros((n_boot, 2 * k, g + 1))
    for z in range(g):
        mask = rows.codes == z
        keys = (rows.y_true[mask], rows.y_pred[mask], rows.weight[mask], *(e[mask] for e in extra))
        boot[:, :, z] = _bootstrap_sums(rng, terms[mask], keys, n_boot)
    boot[:, :, g] = boot[:, :, :g].sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _percentiles(boot[:, :k] / boot[:, k:], level)


def bootstrap_ci(
    metric: Callable[..., float] | str,
    y_true,
    y_pred,
    groups,
    *,
    sample_weight=None,
    n_boot: int = 200,
    level: float = 0.95,
    random_state: Any = 0,
    stratify: bool = True,
    **metric_options: Any,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``metric`` (a callable or a ``METRICS`` name).

    Each resample draws rows with replacement, within each group when ``stratify`` (so no group
    vanishes), and is passed to the metric as integer multiplicities times ``sample_weight``,
    which is exactly the metric of the resampled table (``groups`` arrive as integer codes).
    Reproducible for a given ``random_state``.

    Parameters
    ----------
    metric : callable or str
        ``metric(y_true, y_pred, groups, sample_weight=..., **metric_options)`` or a ``METRICS``
        name.
    y_true, y_pred, groups : array-like
        Targets, predictions and group labels, one per row.
    sample_weight : array-like, optional
        Row weights.
    n_boot : int
        Resamples.
    level : float
        Coverage of the interval, in (0, 1).
    random_state : int or numpy Generator
        Seed of the resampling.
    stratify : bool
        Resample within each group.
    **metric_options
        Passed on to the metric (e.g. ``loss=``).

    Returns
    -------
    tuple of float
        The interval's lower and upper bounds.
    """
    fn = METRICS[metric] if isinstance(metric, str) else metric
    if not 0 < level < 1 or n_boot < 1:
        raise ValueError("level must be in (0, 1) and n_boot >= 1")
    rows = prepare_rows(y_true, y_pred, groups, sample_weight)
    n = rows.codes.size
    order = np.argsort(rows.codes, kind="stable") if stratify else np.arange(n)
    sizes = np.bincount(rows.codes) if stratify else np.array([n])
    starts = np.cumsum(sizes) - sizes
    rng = np.random.default_rng(random_state)
    stats = []
    for block in _resample_counts(rng, starts, sizes, n, n_boot):
        for counts in block:
            w = np.empty(n)
            w[order] = counts * rows.weight[order]
            stats.append(
                fn(rows.y_true, rows.y_pred, rows.codes, sample_weight=w, **metric_options)
            )
    low, high = _percentiles(np.asarray(stats, dtype=float), level)
    return float(low), float(high)


# -- paired comparisons of two predictors on the same rows --------------------------------------


def mcnemar_midp(a_only: int, b_only: int) -> tuple[float, float]:
    """One-sided mid-p values of McNemar's exact test on paired errors.

    ``a_only`` rows are wrong for predictor A only, ``b_only`` for B only (the discordant
    pairs); under "equally good" each discordant pair is A's error with probability 1/2.
    Returns ``(p_a_better, p_a_worse)``: the mid-p that A makes fewer errors than B, and that it
    makes more. With no discordant pair neither is shown (both 1).
    """
    from scipy.stats import binom  # lazy: metric names load without scipy

    m = int(a_only) + int(b_only)
    if m == 0:
        return 1.0, 1.0
    k = int(a_only)
    better = float(binom.cdf(k, m, 0.5) - 0.5 * binom.pmf(k, m, 0.5))
    worse = float(binom.sf(k, m, 0.5) + 0.5 * binom.pmf(k, m, 0.5))
    return better, worse


def paired_bootstrap_ci(
    difference: Callable[[np.ndarray], float],
    groups,
    *,
    n_boot: int = 200,
    level: float = 0.95,
    random_state: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a paired ``difference`` of two predictors on the same
    rows: each resample draws row positions with replacement within each group (so no group
    vanishes) and ``difference(rows)`` computes both predictors' metric on those same rows."""
    codes = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    members = [np.flatnonzero(codes == g) for g in range(int(codes.max(initial=-1)) + 1)]
    rng = np.random.default_rng(random_state)
    stats = np.empty(n_boot)
    for b in range(n_boot):
        rows = np.concatenate([m[rng.integers(0, m.size, m.size)] for m in members if m.size])
        stats[b] = difference(rows)
    low, high = _percentiles(stats[np.isfinite(stats)], level)
    return float(low), float(high)
