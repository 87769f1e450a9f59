"""The "How to read this page" expander of each method page: what the numbers and charts show,
in words, next to the paper they come from."""

from __future__ import annotations

import streamlit as st

from fairengine.methods import get_method

#: Per method page: what to look at first, what each chart means and where the paper's effect is.
HOW_TO_READ: dict[str, str] = {
    "balanced_filtering": """
**The question.** Can we pick a group-balanced sample from candidates whose group we may not use,
with a rule that reveals little about anyone's group?

- **Knobs.** The *disclosivity budget α* caps how much a leaf of the proxy tree may reveal about
  the group (0 = nothing beyond base rates). Larger α allows sharper proxies and a more balanced
  sample.
- **Numbers.** *Disclosivity* is what the fitted proxy reveals (≤ α); *imbalance β* is the L2
  distance between the accepted sample's group shares and the target (0 = perfectly balanced);
  the *acceptance rate* tells how many candidates you need.
- **Heat map.** Each row is a proxy leaf, each column a group: P(group | leaf). Toggle
  "A − base rates" to see how far each leaf departs from the population.
- **Bars.** Group shares before filtering, after filtering, and the target.
- **Trade-off curves.** Disclosivity (x) against imbalance (y) for the tree proxies and the
  baselines, on the training rows (left) and the test rows (right); lower-left is better. Each
  proxy has its own colour, dash and marker, so curves that coincide stay visible; the gap
  between the panels is overfitting.
""",
    "maxent": """
**The question.** Can we replace biased training data by a maximum-entropy distribution whose
group and outcome rates are fair, and train on samples from it?

- **Knobs.** *C* mixes the uniform distribution into the prior (1 = ignore the data); *τ* is the
  representation rate the reweighting aims at (1 = equal groups); *θ* chooses the target
  marginals; *Domain* 'paper' uses the paper's columns for Adult and COMPAS, 'all' every column.
- **Numbers.** As in the paper's Table 2, the classifier is trained on generated data with the
  protected attribute as an input and scored on the test rows, averaged over the sample sets
  (± standard deviation). *Statistical rate (soft)* is min/max of the mean predicted P(y = 1) per
  group, the paper's measure; *(hard)* the same from 0/1 predictions (1 = parity). *KL to the
  data* is 0 for the data itself and grows as the generated rows leave the data's support.
- **Rates chart.** Representation rate and statistical rate of the raw data, the prior, the
  Kamiran–Calders reweighting and the max-entropy distribution; the dashed line is τ.
- **Group outcomes.** P(y = 1 | group) in the real and the generated data.
- **Marginals.** The target θ against what the samples achieve, feature by feature.
""",
    "fair_regression": """
**The question.** How much accuracy does a regressor lose when its predictions must have the same
distribution in every group (statistical parity) or a bounded loss in every group?

- **Knobs.** *ε* is the allowed parity violation (or the loss bound ζ for bounded group loss);
  smaller ε = fairer, usually less accurate.
- **Numbers.** *SP disparity* is the largest Kolmogorov–Smirnov distance between a group's
  prediction distribution and everyone's (0 = parity); the losses are on the target scaled to
  [0, 1], as in the paper.
- **Frontier.** Loss (y) against disparity (x): the current randomized regressor Q (star), the
  unconstrained regression and the SEO baseline, and the sweep over ε when you run it;
  lower-left is better.
- **CDFs.** The distribution of predictions in each group: parity means the curves coincide.
- **Group losses.** Each group's loss, with the bound when one is set.
""",
    "noisy_groups": """
**The question.** If the group labels used in training are noisy, is a model that is fair on the
noisy groups also fair on the true ones? The robust approaches (DRO, soft assignments) aim to
keep the guarantee.

- **Knobs.** *Group noise* flips this share of group labels; *α* is the allowed rate gap;
  the *approach* chooses naive, DRO or soft group assignments.
- **Numbers.** Violation = the largest one-sided rate gap minus α (≤ 0 is fair). Compare the
  *noisy-group* violation (what training sees) with the *true-group* violation (what matters).
- **Rates chart.** The constrained rate (e.g. true positive rate) per group, measured on the true
  and on the noisy groups.
- **Theorem 1 table.** The true-group violation is bounded by the noisy one plus a
  total-variation term; the table shows both sides.
- **Noise sweep.** True-group violation and error as the noise grows (the paper's Figures 1–3):
  the naive approach's violation rises, the robust ones stay near α at some cost in error.
""",
    "multiaccurate_proxy": """
**The question.** Without the sensitive attribute at training time, can a *proxy* ẑ learned on a
small labelled sample stand in for it, so that a classifier made fair through ẑ is also fair on
the true groups?

- **Knobs.** *α* is the multiaccuracy tolerance of the proxy (smaller = closer to the true
  groups on the audited regions). Its slider spans what the proxy can reach on these rows, as
  the run computes it: the left end (α = 0, the default) is the lowest violation reached while
  the violation on a quarter of the proxy rows, kept out of the game, also falls (so a smaller α
  is not bought with noise of the rows it fits); the right end is the least-squares start. With
  few rows the range can shrink to one value; a check then says so. *ε* bounds the downstream gap
  measured through ẑ.
- **Numbers.** *True-group violation* is the downstream classifier's gap on the real groups (what
  matters); *violation through ẑ* is what training could see. Multiaccuracy violations are the
  auditor's findings in-sample and on held-out rows.
- **Audit heat map.** The auditor's ratio violation per group and proxy task, on the rows you
  pick; the status says which α the proxy was certified at.
- **Gap per group.** Each group's downstream gap γ_k − γ on the true groups and through ẑ: a good
  proxy makes the two bars agree.
- **Trace.** The auditor's violation round by round.
- **Frontiers.** Error (y) against true-group violation (x) for every proxy as ε sweeps: the
  paper expects the multiaccurate proxy to track the oracle (true groups) curve. Over many row
  splits the plain regression proxy often does as well; *Across row splits* shows the spread, and
  the checks above say whether the claim held on these rows.
  Next to it, how well each proxy predicts the group — which is not what makes it useful.
""",
}


def how_to_read(method_name: str) -> None:
    """A collapsed "How to read this page" expander with the method's reading guide and citation."""
    method = get_method(method_name)
    with st.expander("How to read this page", icon=":material/help:"):
        st.markdown(HOW_TO_READ[method_name].strip())
        if method.reference:
            st.caption(f"Paper: {method.reference}.")
