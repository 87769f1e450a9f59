"""Max-entropy: where a run's CPU goes on the 13-column and the 113-column table.

The scaling benchmark's Adult 1× split and its wide table (Adult + 100 binned numeric columns;
``bench_scaling._tasks``). One process, single-threaded BLAS, ``time.process_time``:

- ``maxent_parts``: CPU of one run split into its parts (the four downstream trees of the paper's
  protocol, the dual's Hessians, value + gradient, coding the splits, scoring, the rest), warm
  (imports done), best of two.
- ``maxent_tree_inputs``: each of the run's four trees fitted on the same rows as a dense float32
  matrix (what the run does) and as a CSC sparse matrix, with whether the trees are identical
  (feature, threshold, value, children, impurity, node sample counts): sparse input is slower on
  these 0/1 inputs (a quarter of the cells are 1 in reference coding), so the run stays dense.
- ``maxent_hessian``: the Hessian's data term Σ r α αᵀ at λ* by the dense blocked rank-k update
  and from contingency tables of grouped level codes (``fairengine/methods/maxent/oracle.py``),
  with the largest relative difference.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

_SPEC = importlib.util.spec_from_file_location(
    "bench_scaling", Path(__file__).with_name("bench_scaling.py")
)
scaling = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(scaling)

TREE_FIELDS = ("feature", "threshold", "value", "children_left", "children_right", "impurity",
               "n_node_samples", "weighted_n_node_samples")  # fmt: skip
PARTS = {
    "trees": ("sklearn.tree._classes", "BaseDecisionTree", "_fit"),
    "hessians": ("fairengine.methods.maxent.oracle", "DualOracle", "_hessian"),
    "value+gradient": ("fairengine.methods.maxent.oracle", "DualOracle", "_evaluate"),
    "coding the splits": ("fairengine.methods.maxent.evaluation", None, "coded_splits"),
    "scoring": ("fairengine.methods.maxent.evaluation", None, "classifier_scores"),
}


def _tables() -> dict[str, tuple]:
    return {"13 columns": scaling._tasks("maxent", 1, False),
            "113 columns": scaling._tasks("maxent", 1, True)}  # fmt: skip


def _timed(spent: dict[str, float], label: str, function):
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start

    return wrapper


def _run_parts(train, test) -> tuple[float, dict[str, float]]:
    import importlib

    from fairengine.methods import get_method
    from fairengine.methods.maxent import method as maxent_method

    spent: dict[str, float] = {}
    saved = []
    for label, (module_name, owner_name, name) in PARTS.items():
        module = importlib.import_module(module_name)
        owner = getattr(module, owner_name) if owner_name else module
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, _timed(spent, label, getattr(owner, name)))
    try:
        for cache in (maxent_method._SPLITS, maxent_method._BASELINES, maxent_method._WARM):
            cache.clear()
        start = time.process_time()
        with threadpool_limits(limits=1, user_api="blas"):
            get_method("maxent").run(train, test, domain="all")
        return time.process_time() - start, spent
    finally:
        for owner, name, function in saved:
            setattr(owner, name, function)


def maxent_parts(quick: bool) -> list[dict]:
    """CPU of one run by part, 13 vs 113 columns."""
    rows, totals = [], {}
    for table, (train, test) in _tables().items():
        runs = [_run_parts(train, test) for _ in range(1 if quick else 2)]
        total, spent = min(runs, key=lambda run: run[0])
        totals[table] = total
        parts = dict(spent, rest=total - sum(spent.values()))
        rows.append({"what": f"{table}: one run (warm)", "value": round(total, 3), "unit": "s CPU",
                     "note": "; ".join(f"{k} {v:.3f} s" for k, v in parts.items())})  # fmt: skip
    rows.append({"what": "113 / 13 columns", "value": totals["113 columns"] / totals["13 columns"],
                 "unit": "x", "note": "target: ≤ 1.5x"})  # fmt: skip
    return rows


def _tree_inputs(train, test) -> list[tuple]:
    """(X, y, sample_weight) of the four trees of one run, as the run fits them."""
    from fairengine.methods import get_method
    from fairengine.methods.maxent import evaluation
    from fairengine.methods.maxent import method as maxent_method

    inputs, original = [], evaluation.fit_classifier

    def record(kind, X, y, sample_weight=None):
        inputs.append((X, y, sample_weight))
        return original(kind, X, y, sample_weight)

    evaluation.fit_classifier = record
    try:
        maxent_method._BASELINES.clear()
        get_method("maxent").run(train, test, domain="all")
    finally:
        evaluation.fit_classifier = original
    return inputs


def _fit_tree(X, y, weights):
    from sklearn.tree import DecisionTreeClassifier

    start = time.process_time()
    tree = DecisionTreeClassifier(random_state=0).fit(X, y, sample_weight=weights)
    return time.process_time() - start, tree.tree_


def maxent_tree_inputs(quick: bool) -> list[dict]:
    """The run's trees on dense vs sparse (CSC) inputs: CPU and identity."""
    rows = []
    names = ("max-ent samples", "raw data", "reweighing sample", "prior samples")  # run order
    for table, (train, test) in _tables().items():
        if quick and table == "113 columns":
            continue
        for name, (X, y, w) in zip(names, _tree_inputs(train, test), strict=True):
            dense_cpu, dense = _fit_tree(X, y, w)
            start = time.process_time()
            csc = sp.csc_matrix(X)
            convert = time.process_time() - start
            sparse_cpu, sparse = _fit_tree(csc, y, w)
            same = all(np.array_equal(getattr(dense, f), getattr(sparse, f)) for f in TREE_FIELDS)
            rows.append({
                "what": f"{table}: tree on {name} ({X.shape[0]:,} x {X.shape[1]} inputs, "
                f"{np.count_nonzero(X) / X.size:.0%} ones), CSC / dense CPU",
                "value": round(sparse_cpu / dense_cpu, 2), "unit": "x",
                "note": f"dense {dense_cpu:.3f} s, CSC {sparse_cpu:.3f} s (+{convert:.3f} s to "
                f"convert); {dense.node_count:,} nodes; trees identical: {same}",
            })  # fmt: skip
    return rows


def maxent_hessian(quick: bool) -> list[dict]:
    """Σ r α αᵀ at λ*: dense blocked update vs contingency tables."""
    from fairengine.methods.maxent.evaluation import coded_splits
    from fairengine.methods.maxent.method import fit_generator
    from fairengine.methods.maxent.oracle import PairMoments

    rows = []
    for table, (train, test) in _tables().items():
        domain, _, real, _ = coded_splits(train, test, 4, "all")
        generator = fit_generator(train, C=0.5, tau=1.0, prior="reweighted", theta="reweighted",
                                  real=real)  # fmt: skip
        oracle = generator._oracle(generator.theta_)
        r = oracle(generator.lambda_, hessian=False).r
        times = {"dense": [], "tables": []}
        with threadpool_limits(limits=1, user_api="blas"):
            tables = PairMoments(generator.rows_, domain.sizes)
            for _ in range(1 if quick else 3):
                start = time.process_time()
                root, dense = np.sqrt(r), np.zeros((oracle.d, oracle.d))
                for block in oracle._blocks():
                    part = oracle._block(block) * root[block, None]
                    dense += part.T @ part
                times["dense"].append(time.process_time() - start)
                start = time.process_time()
                got = tables.second_moment(r)
                times["tables"].append(time.process_time() - start)
        gap = float(np.max(np.abs(got - dense)) / np.max(np.abs(dense)))
        rows.append({
            "what": f"{table}: Hessian data term (M={len(r):,} distinct rows, d={oracle.d}), "
            "dense / tables CPU",
            "value": round(min(times["dense"]) / min(times["tables"]), 2), "unit": "x",
            "note": f"dense blocked update {min(times['dense']) * 1e3:.1f} ms, contingency tables "
            f"{min(times['tables']) * 1e3:.1f} ms ({len(tables.codes)} groups); "
            f"largest difference {gap:.1e} of the largest entry",
        })  # fmt: skip
    return rows


def register(registry) -> None:
    registry.add(maxent_parts)
    registry.add(maxent_tree_inputs)
    registry.add(maxent_hessian)
