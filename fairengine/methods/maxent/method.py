"""The ``maxent`` Method: knobs declared once, ``run`` = fit p*, sample, evaluate against baselines.

Design notes: ``docs/methods/maxent.md``."""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairengine.lru import LRU
from fairengine.methods.base import Method, RunResult
from fairengine.methods.evidence_fits import stored_table
from fairengine.methods.maxent.checks import EVIDENCE
from fairengine.methods.maxent.knobs import KNOBS
from fairengine.methods.registry import register

if TYPE_CHECKING:  # for annotations: the algorithm loads on a run
    import pandas as pd

    from fairengine.data import Task
    from fairengine.methods.maxent.debiaser import MaxEntDebiaser
    from fairengine.methods.maxent.domain import Domain
    from fairengine.methods.maxent.evaluation import RealData

#: λ* of recent fits per (task, domain, θ choice): warm starts for sweeps over C and τ.
_WARM: LRU[np.ndarray] = LRU(64)
#: Rates rows of the C/τ-independent baselines per (train, test, domain, classifier, n_samples).
_BASELINES: LRU[dict[str, tuple[dict[str, float], dict[str, float]]]] = LRU(16)


def fit_generator(
    train: Task,
    *,
    C: float,
    tau: float,
    prior: str,
    theta: str,
    protected_share: float = 0.5,
    n_bins: int = 4,
    feature_set: str = "paper",
    real: RealData | None = None,
) -> MaxEntDebiaser:
    """Fit p* on a task, warm-started from the last fit on the same task and θ choice.

    Parameters
    ----------
    train : Task
        The training rows.
    C, tau, prior, theta, protected_share
        The prior's uniform weight, the representation rate, the prior, the target marginals
        (``protected_share`` is P(Z=1) when ``theta`` is ``"custom"``): see :data:`KNOBS`.
    n_bins, feature_set
        The coding of the rows: bins per numeric column and the domain's feature set.
    real : RealData, optional
        The task's rows already coded on ``domain_from_task(train, n_bins, feature_set=)`` (a
        run codes its training rows once, for the fit and for the evaluation).

    Returns
    -------
    MaxEntDebiaser
        The fitted generator.
    """
    from fairengine.methods.maxent.debiaser import MaxEntDebiaser
    from fairengine.methods.maxent.domain import domain_from_task, readable_rows

    domain = (
        domain_from_task(train, n_bins, feature_set=feature_set) if real is None else real.domain
    )
    key = (train.fingerprint, domain, prior, theta, protected_share)
    generator = MaxEntDebiaser(
        C=C,
        tau=tau,
        prior=prior,
        target_marginals=protected_share if theta == "custom" else theta,
        n_bins=n_bins,
        warm_start=_WARM.get(key),
    )
    generator.fit(readable_rows(train, domain) if real is None else real.codes, domain)
    _WARM.put(key, generator.lambda_)
    return generator


def sample_seeds(train: Task, n_sets: int) -> list[int]:
    """The seeds of a run's sample sets: from the training rows' fingerprint, so a run is
    reproducible (and cacheable) while another split draws other samples; the same for every
    C and τ, so a sweep's points differ by the knob and not by the draw."""
    entropy = int(hashlib.sha256(train.fingerprint.encode()).hexdigest()[:16], 16)
    return [int(s) for s in np.random.SeedSequence(entropy).generate_state(n_sets)]


def _run(train: Task, test: Task, **values: Any) -> RunResult:
    """Fit p* with the validated knob ``values`` (every knob of :data:`KNOBS`), sample, train
    the downstream classifier and score it against the baselines."""
    import pandas as pd

    from fairengine.methods.maxent.domain import paper_columns
    from fairengine.methods.maxent.evaluation import coded_splits, evaluate_sets, train_classifier
    from fairengine.methods.maxent.model import MaxEntModel

    knobs = {knob.name: values[knob.name] for knob in KNOBS}  # in their declared order
    n_bins, n_samples, classifier = knobs["n_bins"], knobs["n_samples"], knobs["classifier"]
    domain, n_sample_sets = knobs["domain"], knobs["n_sample_sets"]
    start = time.perf_counter()
    space, dropped, real_train, real_test = coded_splits(train, test, n_bins, domain)
    used = "paper" if domain == "paper" and paper_columns(train) else "all"
    fit_knobs = {k: knobs[k] for k in ("C", "tau", "prior", "theta", "protected_share")}
    generator = fit_generator(train, **fit_knobs, n_bins=n_bins, real=real_train)
    seeds = sample_seeds(train, n_sample_sets)
    samples = generator.sample_codes(n_samples, seeds[0])
    params = train_classifier(samples, space, classifier, real_train.only)
    elapsed = time.perf_counter() - start
    model = MaxEntModel(list(train.features), generator, classifier, params, dropped)

    ztrain, ztest = real_train.with_z(), real_test.with_z()  # the paper's protocol: Z an input
    sets = {
        "maxent": lambda k: samples if k == 0 else generator.sample_codes(n_samples, seeds[k]),
        "prior": lambda k: generator.sample_codes(n_samples, seeds[k], prior=True),
    }
    rows = stored_table(
        train,
        test,
        ("maxent_baselines", n_bins, domain, classifier, n_samples, tuple(seeds)),
        lambda: _baselines(train, test, space, classifier, n_samples, seeds, ztrain, ztest),
        _baseline_rows,
    )
    for name, draw in sets.items():
        rows[name] = evaluate_sets(draw, n_sample_sets, space, classifier, ztrain, ztest)
    rates = _rates_table(rows, generator)
    maxent = rows["maxent"][0]
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
        "group_rates": _group_table(space, real_train.codes, samples),
        "marginals": pd.DataFrame(
            {
                "coordinate": space.coordinate_names,
                "theta": generator.theta_,
                "achieved": generator.expected_marginals_,
                "raw": space.marginal_sums(real_train.codes) / len(real_train.codes),
            }
        ),
        "samples": space.decode(samples, categorical=True),  # same values, categorical: less memory
        # the fit's encoded real rows, scored by the shared evaluation (then dropped)
        "encoded_inputs": {"train": real_train.X, "test": real_test.X},
        "summary": _summary(generator, space, used, n_sample_sets),
        "tau": knobs["tau"],
    }
    return RunResult("maxent", knobs, metrics, model, artifacts, elapsed)


def _summary(generator: MaxEntDebiaser, space: Domain, domain: str, n_sets: int) -> dict:
    return {
        "pi": generator.pi_,
        "kl_to_prior": generator.kl_to_prior_,
        "n_iter": generator.n_iter_,
        "d": space.d,
        "log10_domain_size": space.log_size / np.log(10),
        "distinct_rows": len(generator.rows_),
        "max_marginal_error": float(np.abs(generator.expected_marginals_ - generator.theta_).max()),
        "domain": domain,  # the feature set used: "paper" only for one of the paper's datasets
        "columns": [f.name for f in space.features if f.role == "feature"],
        "n_sample_sets": n_sets,
    }


def _rates_table(
    rows: dict[str, tuple[dict[str, float], dict[str, float]]], generator: MaxEntDebiaser
) -> pd.DataFrame:
    """The comparison table: one row per dataset, its means and ``*_sd`` columns, and the exact
    rates of the prior and of p*."""
    import pandas as pd

    from fairengine.methods.maxent.debiaser import group_rates

    order = ("raw", "prior", "reweighing", "maxent")
    records = {
        name: {**rows[name][0], **{f"{k}_sd": v for k, v in rows[name][1].items()}}
        for name in order
    }
    rates = pd.DataFrame.from_dict(records, orient="index")
    rates.index.name = "source"
    rates["exact_rr"], rates["exact_sr"] = np.nan, np.nan
    rates.loc["prior", ["exact_rr", "exact_sr"]] = group_rates(generator.prior_joint())
    rates.loc["maxent", ["exact_rr", "exact_sr"]] = (
        generator.representation_rate_,
        generator.statistical_rate_,
    )
    return rates


def _baseline_rows(value: object) -> bool:
    """Whether a stored value has the shape of :func:`_baselines`' rows: for "raw" and
    "reweighing", a (mean, sd) pair of {metric: number} dicts."""
    if not isinstance(value, dict) or set(value) != {"raw", "reweighing"}:
        return False
    return all(
        isinstance(row, tuple)
        and len(row) == 2
        and all(
            isinstance(part, dict)
            and all(isinstance(v, float | np.floating) for v in part.values())
            for part in row
        )
        for row in value.values()
    )


def _baselines(
    train: Task,
    test: Task,
    domain: Domain,
    classifier: str,
    n_samples: int,
    seeds: list[int],
    real_train: RealData,
    real_test: RealData,
) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """The comparison rows (mean, sd) of the raw data and of Kamiran-Calders reweighing: they
    depend on neither C nor τ, so a sweep computes them once per task (small dicts, an LRU of a
    few). The raw row is one dataset (sd 0); reweighing resamples one set per seed."""
    from fairengine.methods.maxent.evaluation import evaluate_dataset, evaluate_sets

    key = (train.fingerprint, test.fingerprint, domain, classifier, n_samples, tuple(seeds))
    if key in _BASELINES:
        return dict(_BASELINES.get(key))
    # Imported here, not at the top: the baseline row is a training-time comparison, and a client
    # loading a maxent model file imports only maxent's own modules.
    from fairengine.methods.reweighing import reweighing_weights

    kc = reweighing_weights(real_train.z, real_train.y)
    kc = kc / kc.sum()

    def resampled(k: int) -> np.ndarray:
        rng = np.random.default_rng(seeds[k])
        return real_train.codes[rng.choice(len(kc), size=n_samples, p=kc)]

    raw = evaluate_dataset(real_train.codes, domain, classifier, real_train, real_test)[0]
    value = {
        "raw": (raw, dict.fromkeys(raw, 0.0)),
        "reweighing": evaluate_sets(
            resampled, len(seeds), domain, classifier, real_train, real_test
        ),
    }
    return dict(_BASELINES.put(key, value))


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


def check_task(task: Task) -> None:
    """The method's preconditions (a binary target, exactly two groups), in
    :func:`fairengine.methods.maxent.domain.check_task`; loaded when asked."""
    from fairengine.methods.maxent.domain import check_task as check

    check(task)


#: The frontier over C of the page and of ``fairengine sweep`` (the other knobs fixed).
C_SWEEP = {"C": (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)}

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
        paper="Data preprocessing to mitigate bias: a maximum entropy based approach",
        model_types={"maxent": "fairengine.methods.maxent.model"},
        version="5",  # 5: baseline comparisons by paired tests on the test rows
        sweep_grids={
            "page": C_SWEEP,
            "cli": C_SWEEP,
            "demo": {"C": (0.1, 0.5, 0.9), "tau": (1.0,)},
        },
        task_checks=(check_task,),
        demo_tasks=(("adult", ("sex",)),),
        evidence=EVIDENCE,
        main_knob="C",
        demo_knob="C",
    )
)
