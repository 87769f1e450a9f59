"""The bundled benchmark datasets: what they are and how to load them as a :class:`Task`.

The data lives in ``assets/datasets/<name>.parquet`` (written by ``tools/vendor_datasets.py``;
provenance and licences in ``assets/datasets/PROVENANCE.md``), found through
:func:`fairengine.resources.assets_dir` in a clone and in an installed package alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from fairengine.data.errors import DataError
from fairengine.resources import assets_dir

if TYPE_CHECKING:  # pandas and the Task load with the data, not for a listing
    import pandas as pd

    from fairengine.data.task import Kind, Task

_UCI = "CC BY 4.0 (UCI Machine Learning Repository)"


@dataclass(frozen=True)
class DatasetInfo:
    """One bundled dataset and its default roles.

    Attributes
    ----------
    name : str
        Registry key (``load_dataset(name)``).
    title : str
        Short human name.
    description : str
        One line for a picker.
    rows : int
        Number of rows in the vendored file.
    kind : {"classification", "regression"}
        Kind of the default task.
    target : str
        Default target column (the first of ``target_options``).
    sensitive : tuple of str
        Default sensitive column (the first of ``sensitive_options``).
    positive_label : object or None
        Value of the default target coded as 1 (None for regression).
    target_options, sensitive_options : tuple of str
        Columns that make sensible targets / sensitive attributes, defaults first.
    source, licence : str
        Where the data comes from and under which terms (details in PROVENANCE.md).
    filename : str
        File name under ``assets/datasets/`` (``<name>.parquet``).
    positive_labels : dict
        Positive value of every classification target among ``target_options``; a target option
        missing here is a regression target.
    leaks : dict
        For a column used as target or sensitive attribute, the columns that encode or leak it.
        They stay in the frame but are left out of the default features.
    """

    name: str
    title: str
    description: str
    rows: int
    kind: Kind = field(init=False)
    target: str = field(init=False)
    sensitive: tuple[str, ...] = field(init=False)
    positive_label: object = field(init=False)
    target_options: tuple[str, ...]
    sensitive_options: tuple[str, ...]
    source: str
    licence: str
    filename: str = field(init=False)
    positive_labels: dict[str, object] = field(default_factory=dict, hash=False)
    leaks: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:  # the defaults are the first options
        target = self.target_options[0]
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "sensitive", self.sensitive_options[:1])
        object.__setattr__(self, "kind", self.kind_of(target))
        object.__setattr__(self, "positive_label", self.positive_labels.get(target))
        object.__setattr__(self, "filename", f"{self.name}.parquet")

    def kind_of(self, target: str) -> Kind | None:
        """Task kind for one of ``target_options``; None for other columns (inferred later)."""
        if target in self.positive_labels:
            return "classification"
        return "regression" if target in self.target_options else None


DATASETS: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo(
            name="adult",
            title="Adult (census income)",
            description="UCI census income 1994: predict income > $50K; 48,842 people",
            rows=48_842,
            target_options=("income",),
            sensitive_options=("sex", "race"),
            source="UCI Adult (Becker & Kohavi 1996), adult.data + adult.test",
            licence=_UCI,
            positive_labels={"income": ">50K"},
        ),
        DatasetInfo(
            name="compas",
            title="COMPAS recidivism",
            description="ProPublica COMPAS, Broward County: predict re-arrest within two years; "
            "6,172 defendants",
            rows=6_172,
            target_options=("two_year_recid", "is_recid"),
            sensitive_options=("race", "sex"),
            source="ProPublica compas-analysis (Angwin et al. 2016), compas-scores-two-years.csv",
            licence="ProPublica's published data (compas-analysis repository); see PROVENANCE.md",
            positive_labels={"two_year_recid": 1, "is_recid": 1},
            leaks={
                "two_year_recid": ("is_recid", "is_violent_recid"),
                "is_recid": ("two_year_recid", "is_violent_recid"),
            },
        ),
        DatasetInfo(
            name="bank_marketing",
            title="Bank marketing",
            description="UCI Portuguese bank calls 2008-10: predict a term-deposit subscription; "
            "45,203 clients",
            rows=45_203,
            target_options=("subscription",),
            sensitive_options=("job", "age_group", "marital"),
            source="UCI Bank Marketing, bank-full (Moro, Cortez & Rita 2014), binned variant",
            licence=_UCI,
            positive_labels={"subscription": "yes"},
        ),
        DatasetInfo(
            name="german_credit",
            title="German credit",
            description="UCI Statlog German credit: predict good vs bad credit risk; 1,000 loans",
            rows=1_000,
            target_options=("credit",),
            sensitive_options=("sex", "age_group"),
            source="UCI Statlog (German Credit Data), Hofmann 1994, german.data",
            licence=_UCI,
            positive_labels={"credit": "good"},
            leaks={"sex": ("personal_status",), "age_group": ("age",)},
        ),
        DatasetInfo(
            name="default_credit",
            title="Credit card default (Taiwan)",
            description="UCI Taiwan credit cards 2005: predict default next month; 30,000 clients",
            rows=30_000,
            target_options=("default_next_month",),
            sensitive_options=("sex", "education", "marriage"),
            source="UCI Default of Credit Card Clients (Yeh & Lien 2009), UCI_Credit_Card.csv",
            licence=_UCI,
            positive_labels={"default_next_month": 1},
        ),
        DatasetInfo(
            name="law_school",
            title="Law school (LSAC)",
            description="LSAC bar passage study: predict undergraduate GPA (scaled to [0, 1]); "
            "21,789 students",
            rows=21_789,
            target_options=("ugpa_scaled", "bar_pass", "zfya"),
            sensitive_options=("race", "sex"),
            source="LSAC National Longitudinal Bar Passage Study (Wightman 1998), "
            "version of Kusner et al. 2017",
            licence="LSAC study data as redistributed by Kusner et al.; research use, "
            "see PROVENANCE.md",
            positive_labels={"bar_pass": "pass"},
        ),
        DatasetInfo(
            name="communities_crime",
            title="Communities and crime",
            description="UCI US communities 1990: predict violent crimes per capita; "
            "1,993 communities",
            rows=1_993,
            target_options=("violent_crimes_per_pop",),
            sensitive_options=("majority_white",),
            source="UCI Communities and Crime (Redmond & Baveja 2002), normalised",
            licence=_UCI,
            leaks={
                "majority_white": (
                    "race_pct_black",
                    "race_pct_white",
                    "race_pct_asian",
                    "race_pct_hisp",
                )
            },
        ),
    )
}


def list_datasets() -> list[DatasetInfo]:
    """The bundled datasets, in registry order."""
    return list(DATASETS.values())


def get_info(name: str) -> DatasetInfo:
    """Registry entry of one dataset; :class:`DataError` naming the valid ones otherwise."""
    try:
        return DATASETS[name]
    except (KeyError, TypeError):
        valid = ", ".join(DATASETS)
        raise DataError(f"Unknown dataset {name!r}. Bundled datasets: {valid}.") from None


@lru_cache(maxsize=8)
def _read(path: Path) -> pd.DataFrame:
    import pandas as pd

    return pd.read_parquet(path)


def load_frame(name: str) -> pd.DataFrame:
    """The whole table of a bundled dataset (a fresh copy; the file read is cached).

    Raises
    ------
    DataError
        If ``name`` is not a bundled dataset or its file is missing.
    """
    path = assets_dir() / "datasets" / get_info(name).filename
    if not path.is_file():
        raise DataError(
            f"Data file for dataset {name!r} not found at {path}. Reinstall fairengine, restore "
            "assets/datasets/ in a clone of its repository, or point FAIRENGINE_ASSETS at a "
            "folder that holds datasets/."
        )
    return _read(path).copy()


def default_features(
    info: DatasetInfo, frame: pd.DataFrame, target: str, sensitive: Sequence[str]
) -> tuple[str, ...]:
    """Every column but the target, the sensitive columns, the columns that leak them and the
    identifiers (:func:`fairengine.data.identifiers.find_identifiers`)."""
    from fairengine.data.identifiers import find_identifiers

    excluded = {target, *sensitive}
    for role in (target, *sensitive):
        excluded.update(info.leaks.get(role, ()))
    others = [c for c in frame.columns if c not in excluded]
    excluded.update(f.column for f in find_identifiers(frame, others))
    return tuple(c for c in others if c not in excluded)


def load_dataset(
    name: str,
    *,
    target: str | None = None,
    sensitive: str | Sequence[str] | None = None,
    features: Sequence[str] | None = None,
    kind: Kind | None = None,
) -> Task:
    """Load a bundled dataset as a :class:`~fairengine.data.task.Task`.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (see :func:`list_datasets`).
    target : str, optional
        Target column (default: the registry's). The positive label of a known classification
        target comes from the registry; for other columns ``from_frame`` chooses one.
    sensitive : str or sequence of str, optional
        Sensitive column(s) (default: the registry's).
    features : sequence of str, optional
        Feature columns. Default: every other column except those recorded as leaking the
        target or a sensitive attribute (``DatasetInfo.leaks``).
    kind : {"classification", "regression"}, optional
        Task kind (default: the registry's for a known target, else inferred).

    Returns
    -------
    Task

    Raises
    ------
    DataError
        For an unknown dataset or invalid roles.

    Examples
    --------
    >>> task = load_dataset("adult")
    >>> task.kind, task.positive_label
    ('classification', '>50K')
    """
    info = get_info(name)
    frame = load_frame(name)
    target = info.target if target is None else target
    if sensitive is None:
        sensitive = info.sensitive
    sens = (sensitive,) if isinstance(sensitive, str) else tuple(sensitive)
    kind = kind or info.kind_of(target)
    positive = info.positive_labels.get(target) if kind != "regression" else None
    leaking = tuple(c for role in (target, *sens) for c in info.leaks.get(role, ()))
    from fairengine.data.task import from_frame

    return from_frame(  # without features: every other column but identifiers and leaks
        frame,
        target=target,
        sensitive=sens,
        features=features,
        kind=kind,
        name=name,
        positive_label=positive,
        leave_out=leaking if features is None else (),
    )
