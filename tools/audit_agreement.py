"""The same bias audit three ways: fairengine, fairlearn's MetricFrame, and by hand from the
confusion counts with Aequitas' definitions (disparity = group rate / reference group's rate;
the four-fifths verdict passes when τ ≤ disparity ≤ 1/τ).

A logistic regression is trained on a bundled dataset's training split and audited on its
test split; the script prints each way's numbers and the largest absolute difference between
them. Run: ``PYTHONPATH=$PWD python tools/audit_agreement.py [adult compas ...]``.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from fairengine import metrics
from fairengine.data import Task, load_dataset

RATES = ("selection_rate", "tpr", "fpr", "fnr", "tnr", "ppv", "fdr", "npv", "for")
TAU = 0.8


def trained_predictions(task: Task, *, random_state: int = 0) -> tuple[Task, np.ndarray]:
    """The test split of ``task`` and a logistic regression's 0/1 predictions on it (one-hot
    features, fitted on the training split)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, test = task.split(random_state=random_state)
    columns = pd.get_dummies(task.X, dtype=float).columns

    def encode(t: Task) -> pd.DataFrame:
        return pd.get_dummies(t.X, dtype=float).reindex(columns=columns, fill_value=0.0)

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    model.fit(encode(train), train.y)
    return test, model.predict(encode(test)).astype(float)


def by_hand(y: np.ndarray, p: np.ndarray, groups: np.ndarray) -> pd.DataFrame:
    """Each rate per group from the confusion counts TP, FP, TN, FN (NaN on a zero count)."""
    out = {}
    for z in np.unique(groups):
        yz, pz = y[groups == z], p[groups == z]
        tp, fp = np.sum((yz == 1) & (pz == 1)), np.sum((yz == 0) & (pz == 1))
        tn, fn = np.sum((yz == 0) & (pz == 0)), np.sum((yz == 1) & (pz == 0))

        def div(a: float, b: float) -> float:
            return a / b if b else np.nan

        out[z] = {
            "selection_rate": div(tp + fp, len(yz)),
            "tpr": div(tp, tp + fn), "fpr": div(fp, fp + tn), "fnr": div(fn, tp + fn),
            "tnr": div(tn, fp + tn), "ppv": div(tp, tp + fp), "fdr": div(fp, tp + fp),
            "npv": div(tn, tn + fn), "for": div(fn, tn + fn),
        }  # fmt: skip
    return pd.DataFrame(out).T[list(RATES)]


def aequitas_disparities(rates: pd.DataFrame, reference) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Aequitas' disparities (rate / reference's rate) and its four-fifths verdicts."""
    ratio = rates / rates.loc[reference]
    return ratio, (ratio >= TAU) & (ratio <= 1 / TAU)


def fairlearn_frame(y: np.ndarray, p: np.ndarray, groups: np.ndarray):
    """fairlearn's MetricFrame of the same rates (NPV, FDR and FOR from sklearn's counts)."""
    from fairlearn.metrics import (
        MetricFrame,
        false_negative_rate,
        false_positive_rate,
        selection_rate,
        true_negative_rate,
        true_positive_rate,
    )
    from sklearn.metrics import confusion_matrix, precision_score

    def counts(yt, yp):
        return confusion_matrix(yt, yp, labels=[0, 1]).ravel()  # tn, fp, fn, tp

    def npv(yt, yp):
        tn, _, fn, _ = counts(yt, yp)
        return tn / (tn + fn) if tn + fn else np.nan

    def fdr(yt, yp):
        _, fp, _, tp = counts(yt, yp)
        return fp / (tp + fp) if tp + fp else np.nan

    def false_omission(yt, yp):
        tn, _, fn, _ = counts(yt, yp)
        return fn / (tn + fn) if tn + fn else np.nan

    def ppv(yt, yp):
        return precision_score(yt, yp, zero_division=np.nan)

    fns = {
        "selection_rate": selection_rate, "tpr": true_positive_rate, "fpr": false_positive_rate,
        "fnr": false_negative_rate, "tnr": true_negative_rate, "ppv": ppv, "fdr": fdr,
        "npv": npv, "for": false_omission,
    }  # fmt: skip
    return MetricFrame(metrics=fns, y_true=y, y_pred=p, sensitive_features=groups)


def audit(name: str, *, quiet: bool = False) -> dict[str, float]:
    """Audit a logistic regression on bundled dataset ``name`` three ways; the largest absolute
    differences between fairengine and each of the others."""
    test, p = trained_predictions(load_dataset(name))
    y, groups = test.y.astype(float), np.asarray(test.groups)
    engine = metrics.group_table(y, p, groups, reference="largest", tau=TAU)
    engine = engine.drop(index="overall")
    reference = engine["share"].idxmax()
    frame = fairlearn_frame(y, p, groups)
    hand = by_hand(y, p, groups)
    hand_ratio, hand_pass = aequitas_disparities(hand, reference)
    fl_ratio = frame.by_group / frame.by_group.loc[reference]
    gaps = {
        "rates vs fairlearn by_group": _gap(engine[list(RATES)], frame.by_group[list(RATES)]),
        "rates vs hand": _gap(engine[list(RATES)], hand),
        "ratios vs hand (Aequitas)": _gap(engine[[f"{r}_ratio" for r in RATES]], hand_ratio),
        "ratios vs fairlearn by_group / reference": _gap(
            engine[[f"{r}_ratio" for r in RATES]], fl_ratio
        ),
    }
    diffs = {
        r: getattr(metrics, "dp_diff" if r == "selection_rate" else f"{r}_diff", None)
        for r in RATES
    }
    fl_diff = frame.difference()
    gaps["*_diff vs fairlearn .difference()"] = max(
        abs(fn(y, p, groups) - fl_diff[r]) for r, fn in diffs.items() if fn is not None
    )
    verdicts = engine[[f"{r}_pass" for r in RATES]].astype("boolean")
    agree = (verdicts.to_numpy() == hand_pass.to_numpy()) | hand_ratio.isna().to_numpy()
    gaps["four-fifths verdicts disagreeing"] = float((~agree).sum())
    if not quiet:
        _print(name, test, reference, engine, frame, hand, hand_ratio, gaps)
    return gaps


def _gap(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Largest |a − b| where both are defined; inf if one is NaN where the other is not."""
    a, b = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
    if (np.isnan(a) != np.isnan(b)).any():
        return float("inf")
    both = ~np.isnan(a)
    return float(np.max(np.abs(a[both] - b[both]), initial=0.0))


def _print(name, test, reference, engine, frame, hand, hand_ratio, gaps) -> None:
    names = dict(enumerate(test.group_names))
    pd.set_option("display.width", 200)
    print(f"\n=== {name}: {test.sensitive}, {len(test.y)} test rows, reference group "
          f"{names.get(reference, reference)} (largest), tau {TAU}")  # fmt: skip
    show = ["selection_rate", "fpr", "fnr", "ppv", "npv"]
    print("fairengine group_table:\n", engine[show + ["fpr_ratio", "fpr_pass"]].round(6))
    print("fairlearn MetricFrame.by_group:\n", frame.by_group[show].round(6))
    print("by hand (confusion counts):\n", hand[show].round(6))
    print("Aequitas disparity by hand (fpr / reference fpr):\n", hand_ratio["fpr"].round(6))
    print("fairlearn .difference():\n", frame.difference()[show].round(6).to_dict())
    for what, value in gaps.items():
        print(f"  max |fairengine − {what}|: {value:.3g}")


if __name__ == "__main__":
    for dataset in sys.argv[1:] or ["adult", "compas"]:
        audit(dataset)
