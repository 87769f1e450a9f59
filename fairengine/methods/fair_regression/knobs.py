"""The knobs of fair regression, declared once: the Method's sliders and the estimator's
``fit``-time validation (:attr:`FairRegressor._parameter_constraints`) both read this tuple."""

from __future__ import annotations

from fairengine.methods.base import Knob, with_advanced
from fairengine.methods.fair_regression.losses import LOSSES

CONSTRAINTS = ("statistical_parity", "bounded_group_loss")
#: The base learners' shortcut names (see :mod:`~fairengine.methods.fair_regression.learners`)
#: and the oracles (:mod:`~fairengine.methods.fair_regression.reductions`), declared here so the
#: method's declaration loads neither scikit-learn nor SciPy.
BASE_ESTIMATORS = ("linear", "gradient_boosting")
ORACLES = ("ls", "lr", "cs")

KNOBS: tuple[Knob, ...] = (
    Knob(
        "constraint",
        "statistical_parity",
        choices=CONSTRAINTS,
        label="Fairness constraint",
        help="Statistical parity "
        "(KS distance of prediction CDFs, problem (3)) or bounded group loss (problem (4)).",
    ),
    Knob(
        "eps",
        0.05,
        0.001,
        1.0,
        None,
        log=True,
        label="Fairness slack ε (bound ζ for BGL)",
        help="ε — SP slack |γ_{a,z}| ≤ ε (KS units), "
        "or ζ — the BGL bound on each group's loss ℓ (Section 4.3 / 5).",
    ),
    Knob(
        "loss_function",
        "square",
        choices=LOSSES,
        label="Loss ℓ",
        help="ℓ — square (y−u)²/2, absolute |y−u|, or scaled "
        "logistic (Examples 1–2), on targets scaled to [0, 1] (named so as not to clash "
        "with the loss metric).",
    ),
    Knob(
        "n_levels",
        40,
        10,
        100,
        5,
        integer=True,
        label="Discretisation levels N",
        demo_high=40,
        help="N — discretisation levels, α = 1/N (Section 4.1; the paper uses 40).",
    ),
    Knob(
        "oracle",
        "ls",
        choices=ORACLES,
        label="Best-response oracle",
        help="Best response: least squares (LS), logistic "
        "regression (LR) or the cost-sensitive LP (CS, linear, ≤ 2,000 rows) (Section 4.4).",
    ),
    Knob(
        "base_estimator",
        "linear",
        choices=BASE_ESTIMATORS,
        label="Model class F",
        help="F — linear models or gradient-boosted trees.",
    ),
    Knob(
        "max_iter",
        50,
        5,
        200,
        5,
        integer=True,
        label="Iterations T",
        demo_high=50,
        help="T — exponentiated-gradient iterations (the authors' code: 50).",
    ),
)
#: Pages show these in their "Advanced" expander.
KNOBS = with_advanced(KNOBS, ("max_iter",))
