"""Multiaccurate proxies (Diana et al. 2022), gathered in one place: the α-proxy audit, Algorithms
4 and 2, Section 5, the LP floor of linear G, and the comparison proxies.

Diana, Gill, Kearns, Kenthapadi, Roth & Sharifi-Malvajerdi, "Multiaccurate Proxies for Downstream
Fairness", FAccT 2022. The seed text is truncated and its math stripped; the formulas follow
``shared/specs/004_multiaccurate_proxies.md`` and carry its tags: [TEXT] stated in the paper,
[RECON] reconstructed by the spec, [OURS] a fairengine design choice.

Each part lives in its own module and is documented there; this one imports them all under
one name (for code written against the single module they once were):

* :mod:`~fairengine.methods.multiaccurate_proxy.auditor`: :class:`Auditor` (CSC(H) heuristics),
  :func:`audit` (Definition 1), :func:`class_tasks` (Section 5: a proxy for a whole class of
  labelling functions), :func:`proxy_quality`;
* :mod:`~fairengine.methods.multiaccurate_proxy.linear`: :class:`MultiaccurateProxy`
  (Algorithm 4, linear G, with an additive tolerance and a mean constraint);
* :mod:`~fairengine.methods.multiaccurate_proxy.general`: :class:`GeneralMultiaccurateProxy`
  (Algorithm 2, FTPL auditor + least-squares trees);
* :mod:`~fairengine.methods.multiaccurate_proxy.floor`: :func:`multiaccuracy_floor` (LP floor of
  linear G [OURS]);
* :mod:`~fairengine.methods.multiaccurate_proxy.baseline`: :class:`BaselineProxy`.
"""

from __future__ import annotations

# ruff: noqa: F401 (names re-exported for importers of this module)
from fairengine.methods.multiaccurate_proxy.auditor import (
    Auditor,
    audit,
    class_tasks,
    group_error_rate,
    proxy_quality,
    ratio_violation,
)
from fairengine.methods.multiaccurate_proxy.baseline import BASELINES, BaselineProxy
from fairengine.methods.multiaccurate_proxy.floor import multiaccuracy_floor
from fairengine.methods.multiaccurate_proxy.general import (
    LEARNERS,
    GeneralMultiaccurateProxy,
    _tree_arrays,
    predict_trees,
)
from fairengine.methods.multiaccurate_proxy.knobs import PROXIES
from fairengine.methods.multiaccurate_proxy.linear import STATUSES, MultiaccurateProxy
