"""Multiaccurate proxies for downstream fairness (seed 004): Diana et al., FAccT 2022.

Public API: :func:`audit` / :func:`multiaccuracy_violation` (Definition 1), :class:`Auditor`
(heuristic CSC(H)), :class:`MultiaccurateProxy` (Algorithm 4), :class:`GeneralMultiaccurateProxy`
(Algorithm 2), :func:`multiaccuracy_floor` (LP floor of linear G), :class:`BaselineProxy`
(comparison proxies), :class:`ProxyFairClassifier` (downstream learner with soft groups) and its
constraint object :class:`ProxyParity`,
:class:`MultiaccurateProxyModel` (exportable) and the registered method ``multiaccurate_proxy``.
"""

from fairengine.methods.multiaccurate_proxy.constraints import ProxyParity
from fairengine.methods.multiaccurate_proxy.downstream import (
    ProxyFairClassifier,
    group_gaps,
    true_violation,
)
from fairengine.methods.multiaccurate_proxy.method import MULTIACCURATE_PROXY
from fairengine.methods.multiaccurate_proxy.model import MultiaccurateProxyModel
from fairengine.methods.multiaccurate_proxy.proxy import (
    PROXIES,
    Auditor,
    BaselineProxy,
    GeneralMultiaccurateProxy,
    MultiaccurateProxy,
    audit,
    class_tasks,
    group_error_rate,
    multiaccuracy_floor,
    multiaccuracy_violation,
    proxy_quality,
    ratio_violation,
)

__all__ = [
    "MULTIACCURATE_PROXY",
    "PROXIES",
    "Auditor",
    "BaselineProxy",
    "GeneralMultiaccurateProxy",
    "MultiaccurateProxy",
    "MultiaccurateProxyModel",
    "ProxyFairClassifier",
    "ProxyParity",
    "audit",
    "class_tasks",
    "group_error_rate",
    "group_gaps",
    "multiaccuracy_floor",
    "multiaccuracy_violation",
    "proxy_quality",
    "ratio_violation",
    "true_violation",
]
