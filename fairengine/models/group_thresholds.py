"""Group-specific randomized thresholds on a score (fairlearn's ThresholdOptimizer, exported).

The rule reads the **sensitive attribute at prediction time**, so the model's :attr:`features`
include the sensitive column(s). Design notes: docs/howto/export.md, "Group thresholds".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from fairengine.data.encoding import FeatureEncoder
from fairengine.models import schemas
from fairengine.models.base import Arrays, Model, State, register_model

#: Thresholds are stored in [-1, 2]: scores are probabilities, so ±inf acts the same clipped.
_LOW, _HIGH = -1.0, 2.0
RULE_FIELDS = ("p0", "op0", "t0", "p1", "op1", "t1", "p_ignore", "constant")


@dataclass(frozen=True)
class GroupRule:
    """One row per group code of each of :data:`RULE_FIELDS` (``op``: +1 for ``>``, -1 for
    ``<``)."""

    arrays: dict[str, np.ndarray]

    @classmethod
    def from_fairlearn(cls, interpolation: dict, n_groups: int) -> GroupRule:
        """The rule of a fitted ``ThresholdOptimizer.interpolated_thresholder_.interpolation_dict``
        keyed by group code 0..n_groups-1; a group it lacks keeps the plain rule score > 1/2."""
        arrays = {name: np.zeros(n_groups) for name in RULE_FIELDS}
        arrays["op0"][:] = arrays["op1"][:] = arrays["p0"][:] = 1.0
        arrays["t0"][:], arrays["t1"][:] = 0.5, _HIGH
        for code, bunch in interpolation.items():
            g = int(code)
            for k in ("0", "1"):
                operation = bunch[f"operation{k}"]
                arrays[f"p{k}"][g] = float(bunch[f"p{k}"])
                arrays[f"op{k}"][g] = 1.0 if operation.operator == ">" else -1.0
                arrays[f"t{k}"][g] = float(np.clip(operation.threshold, _LOW, _HIGH))
            if "p_ignore" in bunch:
                arrays["p_ignore"][g] = float(bunch["p_ignore"])
                arrays["constant"][g] = float(bunch["prediction_constant"])
        return cls(arrays)

    def check(self) -> None:
        """Raise ValueError unless the arrays are one finite number per group, in range."""
        sizes = {np.asarray(self.arrays[f]).shape for f in RULE_FIELDS}
        if len(sizes) != 1 or len(next(iter(sizes))) != 1:
            raise ValueError("the threshold rule's arrays are not one value per group")
        a = self.arrays
        probs = np.concatenate([a["p0"], a["p1"], a["p_ignore"], a["constant"]])
        ops = np.concatenate([a["op0"], a["op1"]])
        if not (np.all(np.isfinite(probs)) and np.all((probs >= 0) & (probs <= 1))):
            raise ValueError("the threshold rule's probabilities are not in [0, 1]")
        if not np.all(np.isin(ops, (-1.0, 1.0))):
            raise ValueError("the threshold rule's operations are not > or <")
        thresholds = np.concatenate([a["t0"], a["t1"]])
        if not np.all((thresholds >= _LOW) & (thresholds <= _HIGH)):
            raise ValueError("the threshold rule's thresholds are out of range")


def apply_rule(rule: GroupRule, scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """P(ŷ = 1) of each row under the rule of its group."""
    a = {k: v[codes] for k, v in rule.arrays.items()}
    scores = np.asarray(scores, dtype=float)
    hit0 = np.where(a["op0"] > 0, scores > a["t0"], scores < a["t0"])
    hit1 = np.where(a["op1"] > 0, scores > a["t1"], scores < a["t1"])
    p = a["p0"] * hit0 + a["p1"] * hit1
    p = a["p_ignore"] * a["constant"] + (1.0 - a["p_ignore"]) * p
    return np.clip(p, 0.0, 1.0)


@register_model
class GroupThresholdClassifier(Model):
    """Logistic-regression scores, then each group's randomized thresholds.

    Parameters
    ----------
    encoder : FeatureEncoder
        Of the (non-sensitive) features the logistic regression reads.
    linear : (coef, intercept)
        The logistic regression.
    sensitive : sequence of str
        The sensitive column(s): **required at prediction time**.
    groups : (names, values)
        Group name of each code of ``rule`` (as :attr:`fairengine.data.Task.group_names`) and
        one row of sensitive values in that group (the probe a loaded model file predicts).
    rule : GroupRule
    merged_groups : sequence of str
        Group names merged into one at training (``Task.merged_groups``).
    """

    model_type = "group_threshold_classifier"
    state_schema = schemas.GROUP_THRESHOLD_CLASSIFIER
    randomized = True  # predict draws (seeded by random_state)
    kind = "classification"

    def __init__(
        self,
        encoder: FeatureEncoder,
        linear: tuple[np.ndarray, float],
        sensitive: tuple[str, ...],
        groups: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]],
        rule: GroupRule,
        merged_groups: tuple[str, ...] = (),
    ) -> None:
        super().__init__(encoder)
        self.coef = np.asarray(linear[0], dtype=float).ravel()
        self.intercept = float(linear[1])
        self.sensitive = tuple(str(c) for c in sensitive)
        self.group_names = tuple(str(g) for g in groups[0])
        self.group_values = tuple(tuple(str(v) for v in row) for row in groups[1])
        if len(self.group_values) != len(self.group_names) or any(
            len(row) != len(self.sensitive) for row in self.group_values
        ):
            raise ValueError("a group threshold rule needs one value per sensitive column a group")
        self.merged_groups = tuple(str(g) for g in merged_groups)
        rule.check()
        if len(rule.arrays["p0"]) != len(self.group_names) or not self.sensitive:
            raise ValueError("a group threshold rule needs sensitive columns and one rule a group")
        self.rule = rule

    @property
    def features(self) -> list[str]:
        """The encoder's columns and the sensitive column(s), which the rule reads."""
        own = list(self.encoder.columns_)
        return [*own, *(c for c in self.sensitive if c not in own)]

    def probe_inputs(self) -> dict[str, str]:
        """The sensitive values of the first group (a probe row's extra columns)."""
        return dict(zip(self.sensitive, self.group_values[0], strict=True))

    def group_codes(self, X: pd.DataFrame) -> np.ndarray:
        """Each row's group code; ValueError naming a missing column or an unknown group."""
        from fairengine.data.groups import group_keys

        missing = [c for c in self.sensitive if c not in X.columns]
        if missing:
            raise ValueError(
                f"This model reads the sensitive column(s) {', '.join(missing)} at prediction "
                "time (its thresholds differ by group); add them to the input."
            )
        keys = group_keys(X, self.sensitive, self.merged_groups)
        codes = pd.Index(self.group_names).get_indexer(keys)
        if np.any(codes < 0):
            unknown = keys[codes < 0].iloc[0]
            raise ValueError(f"Group {str(unknown)[:40]!r} was not seen in training.")
        return codes

    def predict_score(self, X: pd.DataFrame) -> np.ndarray:
        """P(ŷ = 1) under the row's group rule (exact, over the rule's randomness), on the
        logistic regression's P(y = 1 | x)."""
        score = expit(self.encode(X) @ self.coef + self.intercept)
        return apply_rule(self.rule, score, self.group_codes(X))

    def metric_predictions(self, X: pd.DataFrame) -> np.ndarray:
        return self.predict_score(X)

    def predict(self, X: pd.DataFrame, random_state: int | None = 0) -> np.ndarray:
        p = self.predict_score(X)
        return (np.random.default_rng(random_state).random(len(p)) < p).astype(np.int64)

    def _state(self) -> State:
        meta = {
            "intercept": self.intercept,
            "sensitive": list(self.sensitive),
            "group_names": list(self.group_names),
            "group_values": [list(row) for row in self.group_values],
            "merged_groups": list(self.merged_groups),
        }
        return meta, {"coef": self.coef, **{f"rule_{k}": v for k, v in self.rule.arrays.items()}}

    @classmethod
    def _from_state(cls, encoder: FeatureEncoder, meta: dict[str, Any], arrays: Arrays) -> Model:
        rule = GroupRule({k: np.asarray(arrays[f"rule_{k}"], dtype=float) for k in RULE_FIELDS})
        return cls(
            encoder,
            (arrays["coef"], float(meta["intercept"])),
            tuple(meta["sensitive"]),
            (tuple(meta["group_names"]), tuple(map(tuple, meta["group_values"]))),
            rule,
            tuple(meta.get("merged_groups") or ()),
        )
