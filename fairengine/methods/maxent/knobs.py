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
         help="τ — representation rate of Algorithm 1's weights: "
         "P(Z=0) / P(Z=1) = τ under w (§3.1)."),
    Knob("prior", "reweighted", choices=PRIORS, label="Prior q",
         help="Prior: q_C^w (Algorithm 1 weights) or "
         "q_C^d (empirical frequencies; Appendix B)."),
    Knob("theta", "reweighted", choices=TARGETS, label="Target marginals θ",
         help="θ — target marginals: θ^w (reweighted), "
         "θ^b (balanced), θ^d (data) or the data with a custom P(Z=1) (§3.2)."),
    Knob("protected_share", 0.5, 0.05, 0.95, 0.05, label="Targeted protected share P(Z=1)",
         help="P(Z=1) targeted when θ is 'custom' "
         "(Theorem 4.5 wants it in [1/2, 1/(1+τ)])."),
    Knob("n_bins", 4, 2, 10, 1, integer=True, label="Bins per numeric column",
         help="Bins per numeric column when discretising "
         "the data into the paper's finite domain (§2.1)."),
    Knob("n_samples", 5000, 500, 50000, 500, integer=True, label="Generated samples",
         help="Synthetic rows drawn from p* "
         "(the paper uses 10,000)."),
    Knob("classifier", "small_tree", choices=CLASSIFIERS, label="Downstream classifier",
         help=f"Classifier trained on the generated data: a {CLASSIFIER_WORDS['small_tree']}, "
         "logistic regression, the paper's unbounded tree ('tree', §5; it can do worse than "
         "always predicting the majority label) or Gaussian naive Bayes."),
    Knob("domain", "paper", choices=FEATURE_SETS, label="Domain",
         help="Columns the distribution is learned over: 'paper' uses the paper's columns and "
         "levels for Adult and COMPAS (|Ω| = 504 and 144) and every column for other data; "
         "'all' uses every column. Many columns that correlate with the protected attribute "
         "pull p* away from the fair prior."),
    Knob("n_sample_sets", 5, 1, 20, 1, integer=True, label="Sample sets",
         help="Independent sets of generated rows; the comparison table reports the mean and "
         "standard deviation over them (the paper repeats the sampling)."),
)  # fmt: skip
