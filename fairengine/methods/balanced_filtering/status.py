"""Why Algorithm 4 stopped growing the tree: a status for the RunResult and the page."""

from __future__ import annotations

import math

#: stop reasons of :func:`~fairengine.methods.balanced_filtering.tree.grow_tree` that mean the
#: tree reached the paper's stopping rule (dist(U, C(A)) < beta_stop); every other reason is an
#: early stop the page shows as a warning
CONVERGED = ("beta_stop", "in_hull", "held_out")


def growth_status(
    trace: list[dict],
    *,
    alpha: float,
    gamma: float,
    beta_stop: float,
    selection: dict | None = None,
) -> dict:
    """``{"code", "converged", "message"}`` from the last record of a growth trace."""
    last = trace[-1]
    code = str(last.get("stop", "beta_stop"))
    if selection is not None and code == "max_leaves":
        code = "held_out"
    dist, leaves = float(last["dist"]), int(last["n_leaves"])
    head = f"The tree stopped at {leaves} leaves with dist(U, C(A)) = {dist:.3f}"
    if code == "beta_stop":
        message = f"{head} < β_stop = {beta_stop:g} (the paper's stopping rule)."
    elif code == "in_hull":
        message = f"{head}: the target is in the hull of A (exact balance in-sample)."
    elif code == "no_progress":
        rejected = float(last.get("best_rejected", math.inf))
        nearest = (
            f"the best candidate reached {rejected:.3f}"
            if math.isfinite(rejected)
            else "no candidate stayed α-disclosive above the leaf-mass floor"
        )
        message = (
            f"{head}, above β_stop = {beta_stop:g}: no split of any leaf lowered it by the factor "
            f"1 − γ (needed ≤ {float(last['required']):.3f}; {nearest}). A smaller leaf floor "
            "(min_leaf_mass, min_leaf_rows: the defaults are the paper's, no mass floor), a "
            "smaller γ or a larger α let it grow further."
        )
    elif code == "no_splittable_leaf":
        message = (
            f"{head}, above β_stop = {beta_stop:g}: every leaf is at the depth cap or smaller "
            "than twice the leaf-mass floor."
        )
    elif code == "held_out":
        message = (
            f"{head}: the generalising protocol chose {leaves} leaves of at least "
            f"{float(selection['floor']):.1%} of the rows on held-out training rows (imbalance "
            f"{float(selection['held_out_imbalance']):.3f} there); more leaves balanced those "
            "rows less. The paper's protocol (protocol = paper) grows on to β_stop."
        )
    elif code == "max_leaves":
        message = f"{head}, above β_stop = {beta_stop:g}: the leaf cap was reached."
    else:  # alpha_zero
        message = (
            f"α = {alpha:g}: no split can keep every leaf at the base rates, so the proxy has one "
            "leaf and filtering keeps the base rates (paper Fig. 3, left)."
        )
    budget = last.get("budget")
    if budget is not None and budget < alpha - 1e-9:
        message += (
            f" [EXT budget ladder] The tree grown at the smaller budget {budget:g} ended nearer U "
            f"than the one grown at α = {alpha:g}, so it is the proxy kept."
        )
    return {"code": code, "converged": code in CONVERGED, "message": message}
