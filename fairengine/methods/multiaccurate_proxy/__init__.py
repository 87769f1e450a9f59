"""Multiaccurate proxies for downstream fairness: Diana et al., FAccT 2022.

Public API: :func:`audit` (Definition 1), :class:`Auditor`
(heuristic CSC(H)), :class:`MultiaccurateProxy` (Algorithm 4), :class:`GeneralMultiaccurateProxy`
(Algorithm 2), :func:`multiaccuracy_floor` (LP floor of linear G), :class:`BaselineProxy`
(comparison proxies), :class:`ProxyFairClassifier` (downstream learner with soft groups) and its
constraint object :class:`ProxyParity`,
:class:`MultiaccurateProxyModel` (exportable) and the registered method ``multiaccurate_proxy``.
Its metrics (group gaps, the multiaccuracy violation, the proxy's quality) are in
:mod:`fairengine.metrics.proxy`.
"""

from fairengine.methods.multiaccurate_proxy.method import MULTIACCURATE_PROXY
from fairengine.methods.registry import lazy_attributes

#: Names imported from their submodule on first use, so that registering the method (a listing, a
#: cached sweep) does not load the algorithm and its libraries.
_LAZY = {
    "ProxyParity": "downstream",
    "ProxyFairClassifier": "downstream",
    "MultiaccurateProxyModel": "model",
    "PROXIES": "knobs",
    "Auditor": "auditor",
    "BaselineProxy": "general",
    "GeneralMultiaccurateProxy": "general",
    "MultiaccurateProxy": "linear",
    "audit": "auditor",
    "class_tasks": "auditor",
    "group_error_rate": "auditor",
    "multiaccuracy_floor": "linear",
    "proxy_quality": "auditor",
    "ratio_violation": "auditor",
}
__all__ = ["MULTIACCURATE_PROXY", *_LAZY]


__getattr__ = lazy_attributes(__name__, _LAZY)
