"""The knobs of the multiaccurate-proxy method, declared once: the Method's sliders and the
``fit``-time validation of :class:`MultiaccurateProxy` and :class:`ProxyFairClassifier`
(their ``_parameter_constraints``) read this tuple and these choices."""

from __future__ import annotations

from fairengine.methods.base import Knob, with_advanced

#: The proxies the method compares.
PROXIES = ("multiaccurate", "multiaccurate_tree", "true", "regression", "thresholded", "constant")
#: The audited class H: halfspaces (regression heuristic) or shallow trees.
AUDITORS = ("linear", "tree")
#: Downstream fairness notions and best-response heuristics (:mod:`.downstream`).
CONSTRAINTS = ("equal_error", "demographic_parity")
DL_LEARNERS = ("regression", "logistic")
TASK_MODES = ("sampled", "class")

#: Knobs of the downstream pipeline and the page, not of a proxy estimator (its constructor
#: takes none of them, so its fit-time validation skips them).
PIPELINE_KNOBS = ("task_mode", "constraint", "eps", "n_tasks", "max_rows", "grouping",
                  "dl_learner", "dl_iter", "random_state")  # fmt: skip

KNOBS: tuple[Knob, ...] = (
    Knob("proxy", "multiaccurate", choices=PROXIES, label="Proxy ẑ",
         help="ẑ — multiaccurate linear (Alg. 4), multiaccurate trees (Alg. 2), the true groups "
         "(oracle), regression E[z|x], thresholded classifier, or constant mean(z)."),
    Knob("alpha", 0.0, 0.0, 0.5, 0.001, label="Multiaccuracy tolerance α",
         help="α — how far the proxy may miss each group's size on any region of the data the "
         "auditor checks, as a share of that group's size (the paper's multiaccuracy "
         "tolerance). On the tree proxy (Algorithm 2) α acts, in sample and on held-out rows. "
         "On the linear proxy (Algorithm 4) 0 = the lowest α it reaches while its violation on "
         "proxy rows kept out of the game falls by more than its sampling error; on the bundled "
         "data α usually has a single value there, least squares: no linear proxy does much "
         "better against the error regions found (their LP floor), and the game's in-sample "
         "gains do not hold on other rows."),
    Knob("C", 10.0, 0.1, 1000.0, None, log=True, label="Auditor multiplier bound C",
         help="C — bound on the auditor's multiplier."),
    Knob("n_iter", 200, 10, 2000, 10, integer=True, label="Proxy rounds T", demo_high=300,
         help="T — maximum rounds of Algorithm 4 (it stops early once the auditor finds no "
         "violation above α) / rounds of Algorithm 2."),
    Knob("learning_rate", 0.05, 0.0001, 1.0, None, log=True, label="Proxy step size η₀",
         help="η₀ — OGD step η₀/√t of Algorithm 4, in the metric of the proxy's values "
         "(preconditioned; 0.02–0.1 work, large steps chatter)."),
    Knob("tree_depth", 3, 1, 6, 1, integer=True, label="Regression-tree depth", demo_high=4,
         help="Depth of the regression trees G of Algorithm 2 (the 'multiaccurate_tree' proxy)."),
    Knob("auditor", "linear", choices=AUDITORS, label="Audited class H",
         help="H — the audited class: halfspaces (regression heuristic) or depth-2 trees."),
    Knob("task_mode", "sampled", choices=TASK_MODES, label="Proxy training tasks",
         help="Proxy training tasks: 'sampled' labelled tasks (the target + binarised columns), "
         "or 'class' (Section 5): no labels, multiaccuracy over the auditor's class (depth-3 "
         "trees for the tree auditor stand in for H ⊕ F)."),
    Knob("constraint", "demographic_parity", choices=CONSTRAINTS,
         label="Downstream fairness notion", help="Downstream fairness notion."),
    Knob("eps", 0.01, 0.001, 1.0, None, log=True, label="Downstream fairness bound ε",
         help="ε — downstream bound |γ_k − γ| ≤ ε measured through ẑ (the default, statistical "
         "parity at 0.01, binds on every bundled classification dataset)."),
    Knob("n_tasks", 3, 0, 10, 1, integer=True, label="Extra proxy tasks m − 1", demo_high=5,
         help="m − 1 — binarised numeric features used as "
         "extra proxy-training tasks (plus the target and f ≡ 0, the statistical-parity regions)."),
    Knob("max_rows", 2000, 200, 50000, 100, integer=True, label="Rows per learner",
         demo_high=5000,
         help="Rows for the proxy learner and for the downstream learner (each)."),
    Knob("grouping", "largest_vs_rest", choices=("largest_vs_rest", "all"), label="Groups K",
         help="K — groups: "
         "the largest group vs the rest (e.g. White vs non-White), or one column per group."),
    Knob("dl_learner", "regression", choices=DL_LEARNERS, label="Downstream best response",
         help="Downstream best response: paired-regression halfspaces (the audited class, fast) "
         "or weighted logistic regression."),
    Knob("dl_iter", 30, 2, 200, 1, integer=True, label="Downstream rounds T_DL", demo_high=50,
         help="T_DL — exponentiated-gradient rounds of the downstream learner."),
    Knob("random_state", 0, 0, 10_000, 1, integer=True, label="Random seed",
         help="Seed of the row split."),
)  # fmt: skip
#: Pages show these in their "Advanced" expander.
KNOBS = with_advanced(
    KNOBS,
    ("n_iter", "learning_rate", "tree_depth", "grouping", "dl_learner", "dl_iter", "random_state"),
)

#: The downstream ε of the frontier sweeps (page, demo, bench).
EPS_GRID = (0.005, 0.01, 0.02, 0.03, 0.05, 1.0)
#: α of the tree class's sweep (page): in-sample and held-out multiaccuracy along α.
TREE_ALPHA_GRID = (0.0, 0.05, 0.1, 0.2, 0.3)
#: Named sweeps: the downstream frontier of every proxy over ε (page and ``fairengine sweep``),
#: the hosted demo's, the tree class along α (page), and the spread of the compared pipelines
#: across row splits (page).
EPS_SWEEP = {"proxy": PROXIES, "eps": EPS_GRID}
SWEEP_GRIDS = {
    "page": EPS_SWEEP,
    "cli": EPS_SWEEP,
    "demo": {"eps": EPS_GRID, "proxy": PROXIES, "max_rows": (2000,)},
    "alpha": {"proxy": ("multiaccurate_tree",), "alpha": TREE_ALPHA_GRID},
    "spread": {
        "proxy": ("multiaccurate", "thresholded", "regression", "true"),
        "random_state": (0, 1, 2, 3, 4),
    },
}
