"""The knobs of the max-entropy debiaser, declared once: the Method's sliders and the estimator's
``fit``-time validation (:attr:`MaxEntDebiaser._parameter_constraints`) both read this tuple."""

from __future__ import annotations

from fairengine.methods.base import Knob
from fairengine.methods.maxent.classifier import CLASSIFIER_WORDS, CLASSIFIERS
from fairengine.methods.maxent.reweighting import PRIORS, TARGETS

#: Choices of the ``domain`` knob: the paper's feature set where the dataset is one of the
#: paper's (otherwise every column), or every column of the table
#: (:func:`~fairengine.methods.maxent.domain.domain_from_task`).
FEATURE_SETS = ("paper", "all")

KNOBS: tuple[Knob, ...] = (
    Knob("C", 0.5, 0.0, 1.0, 0.05, label="Uniform weight in the prior C",
         help="C — weight of the uniform distribution in the prior "
         "q_C = C u + (1 − C) w (Eq. 1); 1 ignores the data."),
    Knob("tau", 1.0, 0.5, 1.0, 0.05, label="Representation rate τ",
         help="τ — how well the smaller group is represented in the reweighted data the prior "
         "starts from (the paper's Algorithm 1): its share divided by the larger group's; "
         "1 means equal shares."),
    Knob("prior", "reweighted", choices=PRIORS, label="Prior q",
         help="Prior: q_C^w (Algorithm 1 weights) or "
         "q_C^d (empirical frequencies; Appendix B)."),
    Knob("theta", "reweighted", choices=TARGETS, label="Target marginals θ",
         help="θ — the averages (marginals) the learned distribution must match: those of the "
         "reweighted data (the paper's θ^w), of balanced groups (θ^b), of the data itself "
         "(θ^d), or the data's with a chosen share of the protected group P(Z=1) ('custom')."),
    Knob("protected_share", 0.5, 0.05, 0.95, 0.05, label="Targeted protected share P(Z=1)",
         only_with=("theta", "custom"),
         help="P(Z=1) targeted when θ is 'custom' "
         "(Theorem 4.5 wants it in [1/2, 1/(1+τ)])."),
    Knob("n_bins", 4, 2, 10, 1, integer=True, label="Bins per numeric column", demo_high=6,
         help="Bins per numeric column: the method works on a finite set of possible rows, "
         "so each number is replaced by its bin (as in the paper)."),
    Knob("n_samples", 5000, 500, 50000, 500, integer=True, label="Generated samples",
         demo_high=10_000,
         help="Synthetic rows drawn from p* "
         "(the paper uses 10,000)."),
    Knob("classifier", "small_tree", choices=CLASSIFIERS, label="Downstream classifier",
         help=f"Classifier trained on the generated data: a {CLASSIFIER_WORDS['small_tree']}, "
         "logistic regression, the paper's unbounded decision tree ('tree', as in its "
         "experiments; it can do worse than always predicting the majority label) or Gaussian "
         "naive Bayes."),
    Knob("domain", "paper", choices=FEATURE_SETS, label="Domain",
         help="Columns the distribution is learned over: 'paper' uses the paper's columns and "
         "levels for Adult and COMPAS (|Ω| = 504 and 144) and every column for other data; "
         "'all' uses every column. Many columns that correlate with the protected attribute "
         "pull p* away from the fair prior."),
    Knob("n_sample_sets", 5, 1, 20, 1, integer=True, label="Sample sets",
         help="Independent sets of generated rows; the comparison table reports the mean and "
         "standard deviation over them (the paper repeats the sampling)."),
)  # fmt: skip
