"""The metric registry: every metric name a result may report, declared once with its label,
direction, unit, task kinds, definition and the module of its implementing function (design
notes: docs/architecture.md, "Metrics")."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from fairengine.metrics import classification
from fairengine.metrics.classification import (
    accuracy,
    dp_diff,
    eo_diff,
    error,
    statistical_rate,
    tpr_diff,
)
from fairengine.metrics.dataset import data_statistical_rate, representation_rate
from fairengine.metrics.filtering import acceptance_rate, disclosivity, imbalance
from fairengine.metrics.regression import loss, max_group_loss, sp_ks

METRICS: dict[str, Callable[..., float]] = {
    f.__name__: f
    for f in (accuracy, error, loss, dp_diff, tpr_diff, eo_diff, sp_ks, max_group_loss)
    + (representation_rate, statistical_rate, data_statistical_rate)
    + (disclosivity, imbalance, acceptance_rate)
}
METRICS.update(
    (name, getattr(classification, name))
    for rate in classification.RATE_TERMS
    for name in (f"{rate}_diff", f"{rate}_ratio")
    if hasattr(classification, name)
)
"""The metrics with the shared signature ``metric(y_true, y_pred, groups, **options)``."""

CLASSIFICATION = ("classification",)
REGRESSION = ("regression",)
ANY_KIND = ("classification", "regression")
#: The modules of :mod:`fairengine.metrics` that implement declared metrics.
METRIC_MODULES = ("classification", "regression", "dataset", "filtering", "proxy")


@dataclass(frozen=True)
class MetricInfo:
    """One declared metric: the single place its name, meaning, direction and unit are defined.

    Attributes
    ----------
    name : str
        The key methods report in ``RunResult.metrics``, and the name of its function.
    label : str
        Words for people (axis titles, tables).
    lower_is_better : bool
    kinds : tuple of str
        Task kinds the metric applies to.
    definition : str
        One line: what is computed, on which rows.
    standard : bool
        Part of the shared evaluation of every predicting model of its kind (the Compare plane);
        method-specific metrics are False.
    unit : str
        What the number counts, in words (e.g. "share of rows", "rate difference").
    module : str
        The module defining the function ``name``: one of :data:`METRIC_MODULES` (a module of
        :mod:`fairengine.metrics`), or the full module path a method declares.
    """

    name: str
    label: str
    lower_is_better: bool
    kinds: tuple[str, ...]
    definition: str
    standard: bool = False
    unit: str = ""
    module: str = ""

    @property
    def module_path(self) -> str:
        """The full name of the module defining the function ``name``."""
        return self.module if "." in self.module else f"fairengine.metrics.{self.module}"

    @property
    def function(self) -> Callable[..., float]:
        """The one function computing this metric (``<module_path>.<name>``)."""
        return getattr(importlib.import_module(self.module_path), self.name)

    @property
    def direction(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"

    @property
    def with_unit(self) -> str:
        """Its label and its unit, for an axis title: ``"Error (share of rows)"``."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    @property
    def explained(self) -> str:
        """Its definition, then its unit and direction in words (a metric's help text)."""
        unit = f"Unit: {self.unit}; " if self.unit else ""
        return f"{self.definition} {unit}{self.direction}."


def _in(module: str, unit: str, *infos: MetricInfo) -> tuple[MetricInfo, ...]:
    """``infos`` implemented in ``module``, their numbers in ``unit`` unless they say otherwise."""
    if module not in METRIC_MODULES:
        raise ValueError(f"metric module {module!r} is not one of {METRIC_MODULES}")
    return tuple(replace(i, module=module, unit=i.unit or unit) for i in infos)


def _declare(*sections: tuple[MetricInfo, ...]) -> dict[str, MetricInfo]:
    out: dict[str, MetricInfo] = {}
    for info in (info for section in sections for info in section):
        if info.name in out:
            raise ValueError(f"metric {info.name!r} declared twice")
        out[info.name] = info
    return out


#: The audit's rates by group (Aequitas' bias audit; fairlearn's ``MetricFrame`` metrics),
#: declared once: columns of :func:`fairengine.metrics.group_table`, computed from confusion
#: counts by :data:`fairengine.metrics.classification.RATE_TERMS` (a randomized classifier's
#: expected counts). Each has ``<rate>_diff`` (max − min over groups; ``tpr`` and
#: ``selection_rate`` have theirs as ``tpr_diff`` and ``dp_diff``) and ``<rate>_ratio`` (the
#: worst ratio to a reference group) in the registry.
GROUP_RATES: dict[str, MetricInfo] = {
    i.name: replace(i, module="classification")
    for i in (
    MetricInfo("selection_rate", "Selection rate", False, CLASSIFICATION,
               "P(ŷ = 1 | group): predicted positives over the group's rows (Aequitas' pprev, "
               "fairlearn's selection_rate).", unit="share of rows"),
    MetricInfo("tpr", "True positive rate", False, CLASSIFICATION,
               "P(ŷ = 1 | y = 1, group): TP / (TP + FN).", unit="share of positives"),
    MetricInfo("fnr", "False negative rate", True, CLASSIFICATION,
               "P(ŷ = 0 | y = 1, group): FN / (TP + FN).", unit="share of positives"),
    MetricInfo("tnr", "True negative rate", False, CLASSIFICATION,
               "P(ŷ = 0 | y = 0, group): TN / (TN + FP).", unit="share of negatives"),
    MetricInfo("fpr", "False positive rate", True, CLASSIFICATION,
               "P(ŷ = 1 | y = 0, group): FP / (TN + FP).", unit="share of negatives"),
    MetricInfo("ppv", "Precision (PPV)", False, CLASSIFICATION,
               "P(y = 1 | ŷ = 1, group): TP / (TP + FP).", unit="share of predicted positives"),
    MetricInfo("fdr", "False discovery rate", True, CLASSIFICATION,
               "P(y = 0 | ŷ = 1, group): FP / (TP + FP).", unit="share of predicted positives"),
    MetricInfo("npv", "Negative predictive value", False, CLASSIFICATION,
               "P(y = 0 | ŷ = 0, group): TN / (TN + FN).", unit="share of predicted negatives"),
    MetricInfo("for", "False omission rate", True, CLASSIFICATION,
               "P(y = 1 | ŷ = 0, group): FN / (TN + FN).", unit="share of predicted negatives"),
    )
}  # fmt: skip

#: The group table's measures of a score s ∈ [0, 1] (a predicted probability), declared once;
#: computed by :func:`fairengine.metrics.tables.group_table` when it is given ``scores``.
GROUP_SCORE_MEASURES: dict[str, MetricInfo] = {
    i.name: replace(i, module="tables")
    for i in (
    MetricInfo("auc", "AUC", False, CLASSIFICATION,
               "Area under the group's ROC curve of the score: P(s of a random positive > s of a "
               "random negative), ties counting ½ (NaN without both labels).",
               unit="probability"),
    MetricInfo("brier", "Brier score (calibration)", True, CLASSIFICATION,
               "Mean (s − y)² over the group's rows: 0 for a perfect, calibrated score; a "
               "miscalibrated score raises it by its calibration error.",
               unit="squared probability error"),
    )
}  # fmt: skip


def _disparity_metrics() -> tuple[MetricInfo, ...]:
    """``<rate>_diff`` and ``<rate>_ratio`` of each :data:`GROUP_RATES` rate that has one."""
    out = []
    for rate, info in GROUP_RATES.items():
        name = info.label[0].lower() + info.label[1:]
        if rate not in ("tpr", "selection_rate"):  # declared above as tpr_diff and dp_diff
            out.append(
                MetricInfo(
                    f"{rate}_diff",
                    f"{info.label} difference",
                    True,
                    CLASSIFICATION,
                    f"Largest minus smallest {name} over groups: {info.definition}",
                    True,
                )
            )
        out.append(
            MetricInfo(
                f"{rate}_ratio",
                f"{info.label} ratio to the reference group",
                False,
                CLASSIFICATION,
                f"Worst disparity of the {name} to the reference group (the largest group unless "
                "the caller names one): min over groups of min(r, 1/r), r = group's rate / "
                "reference's rate (Aequitas' disparity, folded so 1 is parity); the four-fifths "
                "rule passes when it is ≥ 0.8.",
                True,
                unit="ratio of rates",
            )
        )
    return tuple(out)


_DECLARED: dict[str, MetricInfo] = _declare(
    # ---- the shared evaluation of classifiers (every predicting method of the kind)
    _in("classification", "rate difference",
    MetricInfo("error", "Error rate", True, CLASSIFICATION,
               "Share of rows whose prediction differs from the label (expected, for randomized "
               "classifiers).", True, unit="share of rows"),
    MetricInfo("accuracy", "Accuracy", False, CLASSIFICATION, "1 − error.", True,
               unit="share of rows"),
    MetricInfo("dp_diff", "Demographic parity difference", True, CLASSIFICATION,
               "Largest minus smallest selection rate P(ŷ = 1 | group).", True),
    MetricInfo("eo_diff", "Equalized odds difference", True, CLASSIFICATION,
               "Larger of the TPR gap and the FPR gap across groups.", True),
    MetricInfo("tpr_diff", "True positive rate difference", True, CLASSIFICATION,
               "Largest minus smallest P(ŷ = 1 | y = 1, group).", True),
    MetricInfo("statistical_rate", "Statistical rate (classifier)", False, CLASSIFICATION,
               "Smallest over largest selection rate P(ŷ = 1 | group) of the classifier.", True,
               unit="ratio of rates"),
    *_disparity_metrics(),
    ),
    # ---- the shared evaluation of regressors
    _in("regression", "squared target units",
    MetricInfo("loss", "Mean squared error", True, REGRESSION,
               "Mean (y − f(x))² in the target's own units (expected over a randomized "
               "predictor's mixture).", True),
    MetricInfo("sp_ks", "Statistical parity (KS distance)", True, REGRESSION,
               "Largest KS distance between a group's prediction CDF and the overall one.", True,
               unit="probability"),
    MetricInfo("max_group_loss", "Worst group's mean squared error", True, REGRESSION,
               "Largest per-group mean (y − f(x))², target units.", True),
    MetricInfo("scaled_loss", "Training objective's loss (target scaled to [0, 1])", True,
               REGRESSION,
               "Fair regression's chosen loss (square, absolute or logistic) on the target "
               "min–max scaled to [0, 1], expected over Q (as Agarwal et al. 2019 report it).",
               unit="loss on the [0, 1] target"),
    MetricInfo("scaled_max_group_loss", "Worst group's objective loss (scaled target)", True,
               REGRESSION, "Largest per-group scaled_loss (bounded group loss, Agarwal et al.).",
               unit="loss on the [0, 1] target"),
    ),
    # ---- data (generated or reweighted samples; Celis et al. 2020)
    _in("dataset", "ratio of rates",
    MetricInfo("representation_rate", "Representation rate (data)", False, ANY_KIND,
               "Smallest over largest group share of the (generated or reweighted) data."),
    MetricInfo("data_statistical_rate", "Statistical rate (data)", False, CLASSIFICATION,
               "Smallest over largest P(y = 1 | group) in the generated data (Celis et al. 2020)."),
    MetricInfo("kl_to_empirical", "KL divergence to the data", True, ANY_KIND,
               "KL(P_gen ‖ P_data + ε) of the generated rows' empirical distribution to the "
               "split's, with ε = 1e-7 added to every point that occurs in either and the sum "
               "renormalised (Celis et al. 2020, footnote 6, with ε on the occurring points "
               "instead of the whole domain): 0 for the data itself; a generated row absent from "
               "the data costs about log(1/ε) ≈ 16 per unit of mass.", unit="nats"),
    ),
    # ---- filtering (Deng et al. 2023)
    _in("filtering", "probability difference",
    MetricInfo("disclosivity", "Disclosivity", True, ANY_KIND,
               "max over proxy leaves and groups of |P(group | leaf) − P(group)|."),
    MetricInfo("imbalance", "Imbalance after filtering", True, ANY_KIND,
               "L2 distance of the accepted sample's group proportions to the target.",
               unit="distance between proportions"),
    MetricInfo("acceptance_rate", "Acceptance rate", False, ANY_KIND,
               "Expected share of candidates the filter keeps.", unit="share of rows"),
    MetricInfo("n_leaves", "Proxy leaves", True, ANY_KIND,
               "Number of leaves of the non-disclosive proxy tree.", unit="count"),
    ),
    # ---- multiaccurate proxies (Diana et al. 2022): two-sided group gaps of the downstream classif
    _in("proxy", "rate difference",
    MetricInfo("true_group_gap", "Fairness gap on the true groups", True, CLASSIFICATION,
               "Largest |γ_k − γ| of the downstream classifier on the true groups: a group's "
               "rate minus the overall rate for its constraint (positive rate or error rate)."),
    MetricInfo("proxy_group_gap", "Fairness gap through the proxy", True, CLASSIFICATION,
               "The same gap measured with the proxy's soft group memberships."),
    MetricInfo("multiaccuracy_violation_in_sample", "Multiaccuracy violation (proxy rows)", True,
               ANY_KIND,
               "Largest audited |E[(ẑ − z)·h(x)]| relative to the group's share, on the rows the "
               "proxy was fitted on (what Algorithm 4 certifies against α).",
               unit="relative rate difference"),
    MetricInfo("multiaccuracy_violation_held_out", "Multiaccuracy violation (held-out rows)",
               True, ANY_KIND,
               "The same audit on the split's rows, which the proxy never saw.",
               unit="relative rate difference"),
    MetricInfo("proxy_accuracy", "Proxy accuracy", False, ANY_KIND,
               "Accuracy of the proxy's thresholded prediction of the hardest group.",
               unit="share of rows"),
    MetricInfo("proxy_auc", "Proxy AUC", False, ANY_KIND,
               "Area under the ROC curve of the proxy for the hardest group.",
               unit="probability"),
    MetricInfo("proxy_mse", "Proxy squared error", True, ANY_KIND,
               "Mean (ẑ − z)² of the proxy for the hardest group.",
               unit="squared membership error"),
    ),
)  # fmt: skip
"""The metrics of the engine itself, declared once (docs/architecture.md, "Metrics")."""


REGISTRY: Mapping[str, MetricInfo] = MappingProxyType(_DECLARED)
"""Every metric declared so far: the engine's, then those of the registered methods (a method
declares its own when it registers; :func:`fairengine.methods.list_methods` registers them all)."""


def declare_metrics(infos: Iterable[MetricInfo]) -> None:
    """Add a method's own metrics (each with its full ``module`` path); declaring a name again
    with another meaning is an error."""
    for info in infos:
        known = _DECLARED.get(info.name)
        if known is not None and known != info:
            raise ValueError(f"metric {info.name!r} declared twice")
        _DECLARED[info.name] = info


def forget_metrics(names: Iterable[str]) -> None:
    """Remove metrics a method declared (when the method is unregistered)."""
    for name in names:
        _DECLARED.pop(name, None)


def __getattr__(name: str) -> object:
    # every name and the higher-is-better ones: computed when asked, after the methods declare
    if name == "ALL_METRIC_NAMES":
        return tuple(REGISTRY)
    if name == "HIGHER_IS_BETTER":
        return frozenset(n for n, info in REGISTRY.items() if not info.lower_is_better)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ordered(names: Iterable[str]) -> list[str]:
    """``names`` in declaration order, then the undeclared ones alphabetically."""
    names = set(names)
    known = [n for n in _DECLARED if n in names]
    return known + sorted(names - set(known))


def metric_info(name: str) -> MetricInfo:
    """The declaration of metric ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(REGISTRY)}") from None


def metric_label(name: str) -> str:
    """Words for people, e.g. ``dp_diff`` -> "Demographic parity difference"; unknown names as
    they are."""
    return REGISTRY[name].label if name in REGISTRY else name


def standard_metrics(kind: str) -> tuple[str, ...]:
    """The shared evaluation's metrics for a task kind, in declaration order (the engine's own
    declarations: a method's metrics are its own, never the shared evaluation)."""
    return tuple(n for n, i in _DECLARED.items() if i.standard and kind in i.kinds)


def undeclared(names) -> list[str]:
    """The names in ``names`` that the registry does not declare (should be empty)."""
    return [n for n in names if n not in REGISTRY]


def is_lower_better(name: str) -> bool:
    """Whether smaller values of metric ``name`` (any declared name) are better."""
    return metric_info(name).lower_is_better
