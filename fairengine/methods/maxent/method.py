"""The ``maxent`` Method: knobs declared once, ``run`` = fit p*, sample, evaluate against baselines.

Metrics of a run (names declared in :data:`fairengine.metrics.REGISTRY`; seed 001 §5 / spec §4.4):

- both splits: ``representation_rate`` and ``data_statistical_rate`` of the *generated* data (the
  paper's Data RR / Data SR), and ``kl_to_empirical`` of the generated data to the split's real
  rows.
- the downstream classifier (the exported model) is scored by the shared evaluation
  (:mod:`fairengine.methods.evaluation`) on the real train and held-out rows: ``accuracy``,
  ``error``, ``dp_diff``, ``eo_diff``, ``tpr_diff`` and ``statistical_rate`` (the classifier's
  hard-prediction statistical rate, Clf SR of spec §7.6).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.methods.base import Method, RunResult
from fairengine.methods.maxent.checks import EVIDENCE
from fairengine.methods.maxent.knobs import KNOBS
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run (issue 18)
    import pandas as pd

    from fairengine.data import Task
    from fairengine.methods.maxent.debiaser import MaxEntDebiaser
    from fairengine.methods.maxent.domain import Domain
    from fairengine.methods.maxent.evaluation import RealData

#: Seed of every draw of a run (samples, resampling), so a run is reproducible.
SEED = 0
#: λ* of recent fits per (task, domain, θ choice): warm starts for sweeps over C and τ.
_WARM: OrderedDict[tuple, np.ndarray] = OrderedDict()
_WARM_SIZE = 64
#: Rates rows of the C/τ-independent baselines per (train, test, domain, classifier, n_samples).
_BASELINES: OrderedDict[tuple, tuple[dict[str, float], dict[str, float]]] = OrderedDict()
_BASELINES_SIZE = 16
#: The coded splits (domain, identifier columns, real train and test rows) per (train, test,
#: n_bins): C/τ-independent too, so a sweep discretises and codes its task once (issue 18). A
#: couple of entries only: they hold the splits' compact codes and uint8 inputs.
_SPLITS: OrderedDict[tuple, tuple[Domain, list[str], RealData, RealData]] = OrderedDict()
_SPLITS_SIZE = 2


def _target(theta: str, protected_share: float) -> Any:
    return protected_share if theta == "custom" else theta


def fit_generator(
    train: Task, *, C: float, tau: float, prior: str, theta: str,  # noqa: N803
    protected_share: float = 0.5, n_bins: int = 4, real: RealData | None = None,
) -> MaxEntDebiaser:  # fmt: skip
    """Fit p* on a task, warm-started from the last fit on the same task and θ choice.

    ``real``: the task's rows already coded on ``domain_from_task(train, n_bins)`` (a run codes
    its training rows once, for the fit and for the evaluation)."""
    from fairengine.methods.maxent.debiaser import MaxEntDebiaser
    from fairengine.methods.maxent.domain import domain_from_task, readable_rows

    domain = domain_from_task(train, n_bins) if real is None else real.domain
    key = (train.fingerprint, n_bins, prior, theta, protected_share)
    generator = MaxEntDebiaser(
        C=C, tau=tau, prior=prior, target_marginals=_target(theta, protected_share),
        n_bins=n_bins, warm_start=_WARM.get(key),
    )  # fmt: skip
    generator.fit(readable_rows(train, domain) if real is None else real.codes, domain)
    _WARM[key] = generator.lambda_
    _WARM.move_to_end(key)
    while len(_WARM) > _WARM_SIZE:
        _WARM.popitem(last=False)
    return generator


def _run(
    train: Task, test: Task, *, C: float, tau: float, prior: str, theta: str,  # noqa: N803
    protected_share: float, n_bins: int, n_samples: int, classifier: str,
) -> RunResult:  # fmt: skip
    import pandas as pd

    from fairengine.methods.maxent.debiaser import group_rates
    from fairengine.methods.maxent.evaluation import evaluate_dataset
    from fairengine.methods.maxent.model import MaxEntModel

    start = time.perf_counter()
    domain, dropped, real_train, real_test = _coded_splits(train, test, n_bins)
    generator = fit_generator(
        train, C=C, tau=tau, prior=prior, theta=theta, protected_share=protected_share,
        n_bins=n_bins, real=real_train,
    )  # fmt: skip
    samples = generator.sample_codes(n_samples, SEED)
    maxent, params = evaluate_dataset(samples, domain, classifier, real_train, real_test)
    elapsed = time.perf_counter() - start
    model = MaxEntModel(list(train.features), generator, classifier, params, dropped)

    raw, reweighed = _baselines(train, test, domain, classifier, n_samples, real_train, real_test)
    rows = {
        "raw": raw,
        "prior": evaluate_dataset(
            generator.sample_codes(n_samples, SEED, prior=True),
            domain,
            classifier,
            real_train,
            real_test,
        )[0],  # fmt: skip
        "reweighing": reweighed,
        "maxent": maxent,
    }
    rates = pd.DataFrame.from_dict(rows, orient="index")
    rates.index.name = "source"
    rates["exact_rr"], rates["exact_sr"] = np.nan, np.nan
    rates.loc["prior", ["exact_rr", "exact_sr"]] = group_rates(generator.prior_joint())
    rates.loc["maxent", ["exact_rr", "exact_sr"]] = (
        generator.representation_rate_, generator.statistical_rate_,
    )  # fmt: skip

    metrics = {
        split: {
            "representation_rate": maxent["data_rr"],
            "data_statistical_rate": maxent["data_sr"],
            "kl_to_empirical": maxent[f"kl_{split}"],
        }
        for split in ("train", "test")
    }
    artifacts = {
        "rates": rates,
        "group_rates": _group_table(domain, real_train.codes, samples),
        "marginals": pd.DataFrame(
            {
                "coordinate": domain.coordinate_names,
                "theta": generator.theta_,
                "achieved": generator.expected_marginals_,
                "raw": domain.marginal_sums(real_train.codes) / len(real_train.codes),
            }
        ),
        "samples": domain.decode(samples, categorical=True),  # same values, ~10x less memory
        # the fit's encoded real rows, scored by the shared evaluation (then dropped)
        "encoded_inputs": {"train": real_train.X, "test": real_test.X},
        "summary": {
            "pi": generator.pi_,
            "kl_to_prior": generator.kl_to_prior_,
            "n_iter": generator.n_iter_,
            "d": domain.d,
            "log10_domain_size": domain.log_size / np.log(10),
            "distinct_rows": len(generator.rows_),
            "max_marginal_error": float(
                np.abs(generator.expected_marginals_ - generator.theta_).max()
            ),
        },
        "tau": tau,
    }
    knobs = {
        "C": C, "tau": tau, "prior": prior, "theta": theta, "protected_share": protected_share,
        "n_bins": n_bins, "n_samples": n_samples, "classifier": classifier,
    }  # fmt: skip
    return RunResult("maxent", knobs, metrics, model, artifacts, elapsed)


def _coded_splits(
    train: Task, test: Task, n_bins: int
) -> tuple[Domain, list[str], RealData, RealData]:
    """The domain of ``train``, its identifier-like columns and both splits coded on it, cached
    per (train, test, n_bins) across the points of a sweep (deterministic: same numbers)."""
    from fairengine.methods.maxent.domain import domain_from_task, identifier_columns
    from fairengine.methods.maxent.evaluation import RealData

    key = (train.fingerprint, test.fingerprint, n_bins)
    if key in _SPLITS:
        _SPLITS.move_to_end(key)
        return _SPLITS[key]
    dropped = identifier_columns(train)  # left out of the domain, as the encoder drops them
    domain = domain_from_task(train, n_bins, dropped=dropped)
    value = (domain, dropped, RealData(train, domain), RealData(test, domain))
    _SPLITS[key] = value
    while len(_SPLITS) > _SPLITS_SIZE:
        _SPLITS.popitem(last=False)
    return value


def _baselines(
    train: Task, test: Task, domain: Domain, classifier: str, n_samples: int,
    real_train: RealData, real_test: RealData,
) -> tuple[dict[str, float], dict[str, float]]:  # fmt: skip
    """The rates rows of the raw data and of Kamiran-Calders reweighing: they depend on neither C
    nor τ, so a sweep computes them once per task (issue 18; small dicts, an LRU of a few)."""
    from fairengine.methods.maxent.evaluation import evaluate_dataset

    key = (train.fingerprint, test.fingerprint, domain, classifier, n_samples)
    if key in _BASELINES:
        _BASELINES.move_to_end(key)
        return _BASELINES[key]
    rng = np.random.default_rng(SEED)
    # Imported here, not at the top: the baseline row is a training-time comparison, and a client
    # loading a maxent model file imports only maxent's own modules (issue 15).
    from fairengine.methods.reweighing import reweighing_weights

    kc = reweighing_weights(real_train.z, real_train.y)
    kc_rows = real_train.codes[rng.choice(len(kc), size=n_samples, p=kc / kc.sum())]
    value = (
        evaluate_dataset(
            real_train.codes, domain, classifier, real_train, real_test, inputs=real_train.X
        )[0],
        evaluate_dataset(kc_rows, domain, classifier, real_train, real_test)[0],
    )
    _BASELINES[key] = value
    while len(_BASELINES) > _BASELINES_SIZE:
        _BASELINES.popitem(last=False)
    return value


def raw_predictions(
    train: Task, test: Task, n_bins: int, classifier: str
) -> tuple[np.ndarray, np.ndarray]:
    """Hard predictions on train and test of the downstream classifier trained on the raw
    training rows (the method's unconstrained reference: the same classifier, no debiasing)."""
    from fairengine.methods.maxent.classifier import classifier_scores
    from fairengine.methods.maxent.evaluation import evaluate_dataset

    domain, _, real_train, real_test = _coded_splits(train, test, n_bins)
    params = evaluate_dataset(
        real_train.codes, domain, classifier, real_train, real_test, inputs=real_train.X
    )[1]
    return tuple(
        (classifier_scores(params, real.X) >= 0.5).astype(float) for real in (real_train, real_test)
    )  # type: ignore[return-value]


def _group_table(domain: Domain, real: np.ndarray, generated: np.ndarray) -> pd.DataFrame:
    """P(Y=1 | Z=z) and P(Z=z) per group in the real and the generated data."""
    import pandas as pd

    groups = domain.features[domain.index("protected")].levels
    iy, iz = domain.index("label"), domain.index("protected")
    records = []
    for source, codes in (("real", real), ("generated", generated)):
        for code, name in enumerate(groups):
            mask = codes[:, iz] == code
            records.append(
                {
                    "source": source,
                    "group": name,
                    "outcome_rate": float(codes[mask, iy].mean()) if mask.any() else np.nan,
                    "share": float(mask.mean()),
                }
            )
    return pd.DataFrame.from_records(records)


MAXENT = register(
    Method(
        name="maxent",
        title="Max-entropy debiasing",
        seed="001",
        kinds=("classification",),
        knobs=KNOBS,
        fairness_metric="statistical_rate",
        performance_metric="accuracy",
        run_function=_run,
        description="Pre-processing: learn the maximum-entropy distribution closest to a fair "
        "prior with prescribed marginals, sample debiased data from it, and train a classifier "
        "on the samples.",
        reference="Celis, Keswani & Vishnoi, ICML 2020",
        version="3",  # 3: identifier-like columns left out of the domain (no names in the file)
        demo_grid={"C": (0.1, 0.5, 0.9), "tau": (1.0,)},
        demo_tasks=(("adult", ("sex",)),),
        evidence=EVIDENCE,
    )
)
