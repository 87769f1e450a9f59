"""Small real-data fits of every exponentiated-gradient game in the engine.

What this golden guards: the recorded Q (weights, predictions, gaps) of each game in
``tests/methods/data/game_goldens.npz`` — fair regression SP and BGL, the proxy-fair classifier,
the multiaccurate proxies — stays the same, to rounding (``golden_cases.ROUNDING``), while the
solver code around it is reorganised (``tests/methods/test_game_constraints.py``). It is not an
outside reference: the games' correctness is checked against the papers and fairlearn elsewhere.
A deliberate change of results bumps the method's ``version`` and rerecords it with
``python -m tests.methods.game_goldens`` (from the repository root).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fairengine.data import load_dataset
from fairengine.data.encoding import FeatureEncoder
from fairengine.methods.fair_regression import FairRegressor
from fairengine.methods.multiaccurate_proxy import (
    GeneralMultiaccurateProxy,
    MultiaccurateProxy,
    ProxyFairClassifier,
)
from tests.methods.test_fair_regression_game import _paper_subsample

PATH = Path(__file__).parent / "data" / "game_goldens.npz"

#: name -> FairRegressor arguments (law school, 600 rows).
REGRESSION_FITS: dict[str, dict] = {
    "sp_practical_ls": {"eps": 0.05, "n_levels": 20, "max_iter": 12},
    "sp_practical_lr": {"eps": 0.05, "n_levels": 20, "max_iter": 6, "oracle": "lr",
                        "loss": "logistic"},
    "sp_paper_ls": {"eps": 0.05, "n_levels": 20, "max_iter": 15, "mode": "paper", "nu": 0.01},
    "bgl_practical": {"constraint": "bounded_group_loss", "eps": 0.0046, "max_iter": 20},
    "bgl_paper": {"constraint": "bounded_group_loss", "eps": 0.0046, "max_iter": 20,
                  "mode": "paper", "nu": 0.0001},
    "bgl_practical_logistic": {"constraint": "bounded_group_loss", "eps": 0.05, "max_iter": 10,
                               "loss": "logistic"},
}  # fmt: skip
#: name -> ProxyFairClassifier arguments (adult, 800 rows, soft groups = one-hot race).
PROXY_FITS: dict[str, dict] = {
    "proxy_eq_regression": {"eps": 0.02, "max_iter": 25},
    "proxy_dp_regression": {"eps": 0.02, "max_iter": 25, "constraint": "demographic_parity"},
    "proxy_eq_logistic": {"eps": 0.03, "max_iter": 8, "learner": "logistic"},
}


def law_rows(n: int = 600) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's law-school subsample protocol (seed 4, 50/50 split) on ``n`` rows."""
    return _paper_subsample(load_dataset("law_school"), n)


def adult_rows(n: int = 800) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    task = load_dataset("adult", sensitive=["race"])
    frame = task.frame.sample(n, random_state=0)
    small = task.subset(np.flatnonzero(task.frame.index.isin(frame.index)))
    x = FeatureEncoder().fit_transform(small.X)
    labels, codes = np.unique(np.asarray(small.groups), return_inverse=True)
    return x, np.asarray(small.y, float), np.eye(len(labels))[codes]


def fit_all() -> dict[str, np.ndarray]:
    """Every golden array, keyed ``<fit>/<field>``."""
    out: dict[str, np.ndarray] = {}
    z, y, a = law_rows()
    for name, kwargs in REGRESSION_FITS.items():
        q = FairRegressor(**kwargs).fit(z, y, a)
        game = q.game_
        out[f"{name}/weights"] = q.weights_
        out[f"{name}/components"] = q.component_predictions(z)
        out[f"{name}/gaps"] = np.asarray(game.gaps)
        out[f"{name}/lambda_hat"] = game.lambda_hat
        out[f"{name}/counts"] = np.array([game.n_iter, game.n_oracle_calls, game.converged])
    x, yc, soft = adult_rows()
    for name, kwargs in PROXY_FITS.items():
        clf = ProxyFairClassifier(**kwargs).fit(x, yc, soft)
        out[f"{name}/weights"] = clf.weights_
        out[f"{name}/coefs"] = clf.coefs_
        out[f"{name}/intercepts"] = clf.intercepts_
        out[f"{name}/score"] = clf.predict_score(x)
        out[f"{name}/gaps"] = np.asarray(clf.game_.gaps)
        out[f"{name}/counts"] = np.array([clf.game_.n_iter, clf.game_.n_oracle_calls])
    # the least-squares kernel's other users: the multiaccurate proxies (linear auditor / ERM)
    z_race = soft[:, 0]
    tasks = np.column_stack([yc, 1 - yc])
    for name, proxy in (
        ("proxy_ma_linear", MultiaccurateProxy(alpha=0.02, n_iter=40, validation=0.0)),
        (
            "proxy_general_linear",
            GeneralMultiaccurateProxy(alpha=0.02, n_iter=15, learner="linear"),
        ),  # fmt: skip
    ):
        out[f"{name}/proba"] = proxy.fit(x, z_race, tasks).predict_proba(x)
    return out


if __name__ == "__main__":
    np.savez_compressed(PATH, **fit_all())
    print(f"wrote {PATH}")
