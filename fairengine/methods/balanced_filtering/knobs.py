"""The knobs of balanced filtering, declared once: the Method's sliders and the estimator's
``fit``-time validation both read this tuple."""

from __future__ import annotations

from fairengine.methods.balanced_filtering.proxies import PROXIES
from fairengine.methods.base import Knob, with_advanced

#: How the tree is grown: leaf floor and size chosen on held-out training rows, or the paper's
#: exact setting (see :mod:`fairengine.methods.balanced_filtering.selection`).
PROTOCOLS = ("generalising", "paper")

KNOBS: tuple[Knob, ...] = (
    Knob("proxy", "ab", choices=PROXIES, label="Proxy ẑ",
         help="How the filter guesses each row's group from its features (the paper's proxy "
         "ẑ): 'ab' is the paper's (α, β) tree (its Algorithms 3 and 4); the others are the "
         "paper's baselines, a decision tree ('_dt') or a logistic regression ('_lr') that "
         "predicts the group, sampled either equally per predicted group ('naive_') or with "
         "rates from a quadratic program ('qp_')."),
    Knob("alpha", 0.2, 0.0, 1.0, 0.05, label="Disclosivity budget α",
         help="α: disclosivity budget (Def. 5), tree proxies."),
    Knob("relaxed", False, label="Relaxed (α, β) proxy",
         help="Relaxed variant: drop Σq = 1 in Alg. 1 and in the growth loop."),
    Knob("eta", 0.0, 0.0, 1.0, 0.1, label="Baseline interpolation η",
         help="η: interpolation of naive / QP proxies (App. A.1.1)."),
    Knob("gamma", 0.1, 0.01, 0.5, 0.01, label="Progress factor γ",
         help="γ: progress factor; keep splits with dist ≤ (1-γ)·dist."),
    Knob("beta_stop", 0.1, 0.0, 0.5, 0.01, label="Stopping imbalance β_stop",
         help="β_stop: stop growing once dist(U, C(A)) < β_stop."),
    Knob("max_depth", 20, 1, 20, 1, integer=True, label="Maximum tree height",
         help="Maximum tree depth (paper: height 20)."),
    Knob("epsilon", 0.01, 0.0, 0.05, 0.005, label="Game slack ε",
         help="ε: game slack; constraints use α - ε (Alg. 4)."),
    Knob("n_rounds", 100, 10, 2000, 10, integer=True, label="Game rounds T", demo_high=300,
         help="T: rounds of the splitting game (Alg. 3)."),
    Knob("step", 1.0, 0.01, 10.0, None, log=True, label="Auditor step η₀",
         help="η₀: auditor step, η_t = η₀/√t (Alg. 5)."),
    Knob("lambda_max", 100.0, 1.0, 1000.0, None, log=True, label="Multiplier radius λ_max",
         help="λ_max: multiplier radius (Alg. 3)."),
    Knob("min_leaf_mass", 0.0, 0.0, 0.1, 0.005, label="Smallest leaf (share of rows)",
         help="Not in the paper: the smallest leaf, as a share of rows; 0 = none (as in the "
         "paper)."),
    Knob("budget_step", 0.0, 0.0, 0.5, 0.05, label="Budget ladder step",
         help="Not in the paper: also grow at α − step, α − 2·step, … and keep the tree nearest "
         "the target (imbalance never rises with α on that grid); 0 = grow at α only."),
    Knob("min_leaf_rows", 5, 1, 1000, 1, integer=True, label="Smallest leaf (rows)",
         help="Not in the paper: the smallest leaf in rows (the floor is the larger of this and "
         "the share); the paper sets no floor."),
    Knob("axis_splits", 0, 0, 32, 1, integer=True, label="Extra single-feature splits",
         demo_high=8,
         help="Not in the paper: also try this many single-feature threshold splits per leaf next "
         "to the game's split; 0 = the game only (as in the paper)."),
    Knob("protocol", "generalising", choices=PROTOCOLS, label="Protocol",
         help="generalising (not in the paper, the default): leaf size and number of leaves of "
         "the (α, β) tree chosen on held-out training rows; paper: grown to β_stop as in the "
         "paper."),
    Knob("max_yield", True, label="Maximise the acceptance rate",
         help="Not in the paper: among equally balanced filters, keep the one that accepts the "
         "most rows (a linear program picks the acceptance rates q)."),
    Knob("random_state", 0, 0, 10_000, 1, integer=True, label="Random seed",
         help="Seed of the baselines and filter draws."),
)  # fmt: skip

KNOB_NAMES = tuple(k.name for k in KNOBS)

#: The paper-reproduction setting: γ = 0.1, height 20, stop below β = 0.1, no
#: leaf-mass floor and no budget ladder, grown to β_stop on all training rows (``protocol =
#: "paper"``). The paper sets no floor at all; we keep 5 rows so a leaf's row of A is not a single
#: point (our choice). With 5-row leaves the tree reaches β_stop in-sample on Adult (race) for
#: α >= 0.6, and the test split shows the overfitting (bench ``bf_paper_vs_ours``).
PAPER_SETTING: dict = {
    "protocol": "paper",
    "gamma": 0.1,
    "beta_stop": 0.1,
    "max_depth": 20,
    "min_leaf_mass": 0.0,
    "min_leaf_rows": 5,
    "budget_step": 0.0,
}

#: [EXT] The earlier generalising alternative, kept for comparison: a fixed floor of 0.5% of the
#: rows and 30 rows and the budget ladder, grown to β_stop (no held-out choice).
FLOOR_SETTING: dict = {
    "protocol": "paper",
    "min_leaf_mass": 0.005,
    "min_leaf_rows": 30,
    "budget_step": 0.2,
}

#: The page shows every knob but the budget α in its "Advanced" expander (α sits with the run).
KNOBS = with_advanced(KNOBS, tuple(knob.name for knob in KNOBS if knob.name != "alpha"))
