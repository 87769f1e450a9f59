"""Every declared metric name has exactly one function, in fairengine.metrics, and nothing else
in the engine or the dashboard defines a function of that name."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from fairengine import metrics
from fairengine.methods import list_methods
from fairengine.metrics import METRIC_MODULES, METRICS, REGISTRY

list_methods()  # every method's own metrics are declared once it registers

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fairengine" / "metrics"


def _public_functions() -> set[str]:
    return {n for n in metrics.__all__ if inspect.isfunction(getattr(metrics, n))}


def _definitions(path: Path) -> list[tuple[str, int, bool]]:
    """(name, line, is a property) of every function defined in ``path``, nested ones too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
            out.append((node.name, node.lineno, "property" in decorators))
    for node in ast.parse(path.read_text(encoding="utf-8")).body:  # a metric a factory makes
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            out += [(t.id, node.lineno, False) for t in node.targets if isinstance(t, ast.Name)]
    return out


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_declared_metric_has_its_function(name: str) -> None:
    info = REGISTRY[name]
    assert info.module in METRIC_MODULES or info.module_path.startswith("fairengine.metrics.")
    fn = info.function
    assert callable(fn) and fn.__name__ == name
    assert fn.__module__ == info.module_path
    assert getattr(metrics, name) is fn, "every metric is importable from fairengine.metrics"
    assert (fn.__doc__ or "").strip(), f"{name} needs a docstring saying what it computes"
    assert info.unit and info.direction in ("lower is better", "higher is better")
    if name in METRICS:
        assert METRICS[name] is fn


def test_each_public_name_is_defined_once_in_the_package() -> None:
    seen: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        for name, line, _ in _definitions(path):
            if not name.startswith("_"):
                seen.setdefault(name, []).append(f"{path.name}:{line}")
    for name in _public_functions():
        assert len(seen.get(name, [])) == 1, f"{name} defined at {seen.get(name)}"


def test_no_metric_function_is_defined_outside_the_package() -> None:
    """A second function named like a metric (or another public function of the package) would
    be a second definition that can drift; a property of a model (``ProxyFilter.n_leaves``,
    which the metric reads) is an attribute, not a computation."""
    names = set(REGISTRY) | _public_functions()
    found = []
    for top in ("fairengine", "dashboard"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if PACKAGE in path.parents:
                continue
            for name, line, is_property in _definitions(path):
                if name in names and not is_property:
                    found.append(f"{path.relative_to(ROOT)}:{line} {name}")
    assert not found, "defined outside fairengine.metrics: " + ", ".join(found)


def test_the_one_sided_violation_and_the_two_sided_gap_are_different_metrics() -> None:
    """``true_violation`` (noisy groups) is one-sided: a group better off than overall does not
    violate, and the slack is subtracted; ``true_group_gap`` (proxies) is two-sided, |γ_k − γ|."""
    y = np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=float)
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    pred = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=float)  # group 0 always selected
    one_sided = metrics.true_violation(y, pred, groups, constraint="dp", slack=0.1)
    two_sided = metrics.true_group_gap(np.eye(2)[groups], y, pred, "demographic_parity")
    assert one_sided == pytest.approx(0.5 - 0.0 - 0.1)  # group 1's selection rate 0 vs 0.5
    assert two_sided == pytest.approx(0.5)  # both groups are 0.5 away from the overall rate
    per_group = metrics.rate_violations(y, pred, groups, constraint="dp", slack=0.1, n_groups=2)
    gaps = metrics.group_gaps(np.eye(2)[groups], y, pred, "demographic_parity")
    assert per_group[0] == pytest.approx(0.5 - 1.0 - 0.1)  # the favoured group does not violate
    assert abs(gaps[0]) == pytest.approx(0.5)  # but is as far from the overall rate as group 1


def test_shared_signature_metrics_take_the_same_rows() -> None:
    rng = np.random.default_rng(3)
    y, pred, groups = rng.integers(0, 2, 60), rng.random(60), rng.integers(0, 3, 60)
    for name, fn in METRICS.items():
        value = fn(y.astype(float), pred, groups)
        assert np.isfinite(value), name


def test_scaled_losses_agree_with_the_shared_losses() -> None:
    """One predictor: fair regression's scaled losses are the shared ``loss`` and
    ``max_group_loss``; a mixture's is the q-weighted mean of its predictors' (an expectation
    over Q, not the loss of the averaged prediction)."""
    rng = np.random.default_rng(5)
    y, groups = rng.random(80), rng.integers(0, 3, 80)
    f, g = rng.random(80), rng.random(80)
    one = metrics.scaled_group_losses(f[:, None], np.ones(1), y, groups, "square", 3)
    assert metrics.scaled_loss(f[:, None], np.ones(1), y, groups, "square") == pytest.approx(
        metrics.loss(y, f)
    )
    assert metrics.scaled_max_group_loss(one, groups) == pytest.approx(
        metrics.max_group_loss(y, f, groups)
    )
    mix = metrics.scaled_loss(np.column_stack([f, g]), np.array([0.3, 0.7]), y, groups, "absolute")
    expected = 0.3 * metrics.loss(y, f, loss="absolute") + 0.7 * metrics.loss(y, g, loss="absolute")
    assert mix == pytest.approx(expected)
    assert mix != pytest.approx(metrics.loss(y, 0.3 * f + 0.7 * g, loss="absolute"))


def test_data_statistical_rate_reads_the_labels() -> None:
    y = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    assert metrics.data_statistical_rate(y, None, groups) == pytest.approx(0.25 / 0.5)
    assert metrics.data_statistical_rate(y, 1 - y, groups) == pytest.approx(0.5)  # ŷ ignored


def test_the_data_metrics_import_no_method_code() -> None:
    """``kl_to_empirical`` counts rows with the data-level row keys: computing it (and importing
    the metrics) loads no module of ``fairengine.methods``."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys, numpy as np\n"
        "from fairengine import metrics\n"
        "data = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])\n"
        "kl = metrics.kl_to_empirical(data[[0, 0, 1, 2]], data)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('fairengine.methods'))\n"
        "print(json.dumps([kl, loaded]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    kl, methods = json.loads(done.stdout)
    assert kl > 0 and methods == []


def test_a_method_declares_its_metrics_beside_its_code() -> None:
    """Noisy groups' violations are declared by the method (``Method.metrics``), with their
    functions in the metrics package, and are found without the method being named."""
    from fairengine.methods import get_method

    declared = {info.name for info in get_method("noisy_groups").metrics}
    assert declared == {"true_violation", "noisy_violation", "robust_violation"}
    for name in declared:
        assert REGISTRY[name] is next(
            i for i in get_method("noisy_groups").metrics if i.name == name
        )
        assert REGISTRY[name].function is getattr(metrics, name)
