"""Group metrics shared by every method, page and benchmark: one definition of each.

:data:`REGISTRY` declares every metric name a result may report (label, direction, unit,
definition); each name is computed by one function of that name in the module of its family:
:mod:`~fairengine.metrics.classification`, :mod:`~fairengine.metrics.regression`,
:mod:`~fairengine.metrics.dataset`, :mod:`~fairengine.metrics.filtering`,
:mod:`~fairengine.metrics.noisy_groups` and :mod:`~fairengine.metrics.proxy`;
:mod:`~fairengine.metrics.tables` gives per-group tables, bootstrap intervals and paired
comparisons. Every name is importable from ``fairengine.metrics`` itself. Most metrics are
``metric(y_true, y_pred, groups, *, sample_weight=None, **options) -> float`` (:data:`METRICS`);
their shared conventions: docs/architecture.md, "Metrics".
"""

from fairengine.metrics import registry
from fairengine.metrics.classification import (
    RATE_TERMS,
    accuracy,
    audit_rates,
    dp_diff,
    eo_diff,
    error,
    fdr_diff,
    fdr_ratio,
    fnr_diff,
    fnr_ratio,
    folded_ratio,
    for_diff,
    for_ratio,
    fpr_diff,
    fpr_ratio,
    npv_diff,
    npv_ratio,
    ppv_diff,
    ppv_ratio,
    ratios_to,
    reference_index,
    selection_rate_ratio,
    statistical_rate,
    tnr_diff,
    tnr_ratio,
    tpr_diff,
    tpr_ratio,
    worst_ratio,
)
from fairengine.metrics.core import RATE_KINDS, RATE_SIGN, rate_base
from fairengine.metrics.dataset import (
    SMOOTHING,
    data_statistical_rate,
    kl_to_empirical,
    representation_rate,
)
from fairengine.metrics.filtering import (
    MISSING_GROUP_ROWS,
    acceptance_rate,
    conditional_distribution_matrix,
    count_imbalance,
    disclosivity,
    distribution_imbalance,
    group_counts,
    imbalance,
    matrix_disclosivity,
    max_imbalance,
    n_leaves,
)
from fairengine.metrics.noisy_groups import (
    RATE_FAMILIES,
    noisy_violation,
    rate_violations,
    robust_violation,
    true_violation,
)
from fairengine.metrics.proxy import (
    group_gaps,
    multiaccuracy_violation,
    multiaccuracy_violation_held_out,
    multiaccuracy_violation_in_sample,
    proxy_accuracy,
    proxy_auc,
    proxy_group_gap,
    proxy_mse,
    true_group_gap,
)
from fairengine.metrics.registry import (
    ANY_KIND,
    CLASSIFICATION,
    GROUP_RATES,
    GROUP_SCORE_MEASURES,
    METRIC_MODULES,
    METRICS,
    REGISTRY,
    REGRESSION,
    MetricInfo,
    is_lower_better,
    metric_info,
    metric_label,
    ordered,
    standard_metrics,
    undeclared,
)
from fairengine.metrics.regression import (
    LOGISTIC_C,
    LOSSES,
    OBJECTIVE_LOSS,
    ks_distance_from_cdfs,
    ks_null_quantile,
    loss,
    max_group_loss,
    prediction_cdfs,
    scaled_group_losses,
    scaled_loss,
    scaled_max_group_loss,
    sp_ks,
)
from fairengine.metrics.tables import (
    bootstrap_ci,
    disparities,
    group_table,
    mcnemar_midp,
    paired_bootstrap_ci,
    table_ratios,
    task_group_table,
)

__all__ = [
    "ALL_METRIC_NAMES", "ANY_KIND", "CLASSIFICATION", "HIGHER_IS_BETTER", "LOGISTIC_C", "LOSSES",
    "METRICS", "METRIC_MODULES", "MISSING_GROUP_ROWS", "OBJECTIVE_LOSS", "RATE_FAMILIES",
    "RATE_KINDS", "RATE_SIGN", "REGISTRY", "REGRESSION", "SMOOTHING", "MetricInfo",
    "acceptance_rate", "accuracy", "bootstrap_ci", "conditional_distribution_matrix",
    "count_imbalance", "data_statistical_rate", "disclosivity", "distribution_imbalance",
    "dp_diff", "eo_diff", "error", "group_counts", "group_gaps", "group_table", "imbalance",
    "is_lower_better", "kl_to_empirical", "ks_distance_from_cdfs", "ks_null_quantile", "loss",
    "matrix_disclosivity", "max_group_loss", "max_imbalance", "mcnemar_midp", "metric_info",
    "metric_label", "multiaccuracy_violation", "ordered",
    "multiaccuracy_violation_held_out", "multiaccuracy_violation_in_sample", "n_leaves",
    "noisy_violation", "paired_bootstrap_ci", "prediction_cdfs", "proxy_accuracy", "proxy_auc",
    "proxy_group_gap",
    "proxy_mse", "rate_base", "rate_violations", "representation_rate", "robust_violation",
    "scaled_group_losses", "scaled_loss", "scaled_max_group_loss", "sp_ks", "standard_metrics",
    "statistical_rate", "task_group_table", "tpr_diff", "true_group_gap", "true_violation",
    "undeclared",
    "GROUP_RATES", "GROUP_SCORE_MEASURES", "RATE_TERMS", "folded_ratio", "audit_rates",
    "reference_index", "ratios_to", "fpr_diff", "fnr_diff", "tnr_diff", "ppv_diff", "npv_diff",
    "fdr_diff", "for_diff", "selection_rate_ratio", "tpr_ratio", "fnr_ratio", "tnr_ratio",
    "fpr_ratio", "ppv_ratio", "fdr_ratio", "npv_ratio", "for_ratio", "worst_ratio",
    "disparities", "table_ratios",
]  # fmt: skip


def __getattr__(name: str) -> object:
    # ALL_METRIC_NAMES and HIGHER_IS_BETTER include the metrics methods declare: computed on use
    if name in ("ALL_METRIC_NAMES", "HIGHER_IS_BETTER"):
        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
