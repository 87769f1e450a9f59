"""Vendor the seven benchmark datasets into ``assets/datasets/<name>.parquet``.

Run from the project root::

    python tools/vendor_datasets.py [--src ../shared/datasets] [--out assets/datasets]

Each builder reads one raw file, applies the changes recorded in
``assets/datasets/PROVENANCE.md`` and returns a tidy frame: snake_case column names, coded
values decoded to readable strings, categorical columns as strings, numeric columns as int/float.
The output is deterministic: re-running writes the same content.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _decode(series: pd.Series, mapping: dict, column: str) -> pd.Series:
    """Map coded values to readable strings; fail loudly on a code the mapping lacks."""
    unknown = sorted(set(series.dropna().unique()) - set(mapping), key=str)
    if unknown:
        raise ValueError(f"{column}: undocumented codes {unknown}")
    return series.map(mapping).astype("str")


def _one_hot_to_label(frame: pd.DataFrame, prefix: str) -> pd.Series:
    """Collapse a one-hot block (exactly one 1 per row) into the suffix of the set column."""
    block = frame.filter(regex=f"^{re.escape(prefix)}")
    if not (block.sum(axis=1) == 1).all():
        raise ValueError(f"{prefix}*: not exactly one indicator set in every row")
    return block.idxmax(axis=1).str.removeprefix(prefix)


# --- adult ---------------------------------------------------------------------------------
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week",
    "native_country", "income",
]  # fmt: skip


def build_adult(src: Path) -> pd.DataFrame:
    options = dict(header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    train = pd.read_csv(src / "adult.data", **options)
    # The test file's first line is junk ("|1x3 Cross validator"); its labels end in ".".
    test = pd.read_csv(src / "adult.test", skiprows=1, **options)
    test["income"] = test["income"].str.removesuffix(".")
    return pd.concat([train, test], ignore_index=True)


# --- compas --------------------------------------------------------------------------------
COMPAS_KEEP = [
    "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
    "priors_count", "c_charge_degree", "length_of_stay", "decile_score", "score_text",
    "v_decile_score", "is_violent_recid", "is_recid", "two_year_recid",
]  # fmt: skip


def build_compas(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src / "compas-scores-two-years.csv")
    # ProPublica's filter (compas-analysis notebook): charge within 30 days of screening, known
    # recidivism status, no ordinary traffic offences, a score on file.
    keep = (
        (raw["days_b_screening_arrest"].abs() <= 30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & (raw["score_text"] != "N/A")
    )
    df = raw.loc[keep].reset_index(drop=True)
    jail_in = pd.to_datetime(df["c_jail_in"]).dt.normalize()
    jail_out = pd.to_datetime(df["c_jail_out"]).dt.normalize()
    # Calendar days, as ProPublica computes it; clock times are inconsistent in 183 rows.
    df["length_of_stay"] = (jail_out - jail_in).dt.days.astype("int64")
    df["c_charge_degree"] = _decode(
        df["c_charge_degree"], {"F": "felony", "M": "misdemeanor"}, "c_charge_degree"
    )
    out = df[COMPAS_KEEP].copy()
    for col in ("sex", "age_cat", "race", "score_text"):
        out[col] = out[col].astype("str")
    return out


# --- bank marketing ------------------------------------------------------------------------
def build_bank_marketing(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src / "bank_marketing.csv")
    raw = raw.drop(columns=["__split_groups_id__", "__Z_intersectional__"])
    return raw.rename(
        columns={
            "__y__subscription": "subscription",
            "__Z__age": "age_group",
            "__Z__marital": "marital",
        }
    )


# --- german credit -------------------------------------------------------------------------
# (column name, code table or None for numeric), in the order of german.doc's attributes 1-20.
GERMAN_ATTRIBUTES: list[tuple[str, dict[str, str] | None]] = [
    ("checking_status", {"A11": "<0 DM", "A12": "0-200 DM", "A13": ">=200 DM or salary assigned",
                         "A14": "no checking account"}),
    ("duration_months", None),
    ("credit_history", {"A30": "no credits or all paid back duly",
                        "A31": "all credits at this bank paid back duly",
                        "A32": "existing credits paid back duly so far",
                        "A33": "delay in paying off in the past",
                        "A34": "critical account or credits elsewhere"}),
    ("purpose", {"A40": "car (new)", "A41": "car (used)", "A42": "furniture/equipment",
                 "A43": "radio/television", "A44": "domestic appliances", "A45": "repairs",
                 "A46": "education", "A47": "vacation", "A48": "retraining", "A49": "business",
                 "A410": "others"}),
    ("credit_amount", None),
    ("savings", {"A61": "<100 DM", "A62": "100-500 DM", "A63": "500-1000 DM",
                 "A64": ">=1000 DM", "A65": "unknown or none"}),
    ("employment_since", {"A71": "unemployed", "A72": "<1 year", "A73": "1-4 years",
                          "A74": "4-7 years", "A75": ">=7 years"}),
    ("installment_rate", None),
    ("personal_status", {"A91": "male: divorced/separated",
                         "A92": "female: divorced/separated/married",
                         "A93": "male: single", "A94": "male: married/widowed",
                         "A95": "female: single"}),
    ("other_debtors", {"A101": "none", "A102": "co-applicant", "A103": "guarantor"}),
    ("residence_since", None),
    ("property", {"A121": "real estate", "A122": "building society savings or life insurance",
                  "A123": "car or other", "A124": "unknown or none"}),
    ("age", None),
    ("other_installment_plans", {"A141": "bank", "A142": "stores", "A143": "none"}),
    ("housing", {"A151": "rent", "A152": "own", "A153": "for free"}),
    ("existing_credits", None),
    ("job", {"A171": "unemployed or unskilled non-resident", "A172": "unskilled resident",
             "A173": "skilled employee or official",
             "A174": "management, self-employed or highly qualified"}),
    ("people_liable", None),
    ("telephone", {"A191": "none", "A192": "yes"}),
    ("foreign_worker", {"A201": "yes", "A202": "no"}),
]  # fmt: skip
GERMAN_SEX = {"A91": "male", "A92": "female", "A93": "male", "A94": "male", "A95": "female"}


def build_german_credit(src: Path) -> pd.DataFrame:
    names = [name for name, _ in GERMAN_ATTRIBUTES] + ["credit"]
    raw = pd.read_csv(src / "german.data", sep=" ", header=None, names=names)
    df = pd.DataFrame(index=raw.index)
    for name, codes in GERMAN_ATTRIBUTES:
        df[name] = raw[name].astype("int64") if codes is None else _decode(raw[name], codes, name)
    df["sex"] = _decode(raw["personal_status"], GERMAN_SEX, "personal_status")
    df["age_group"] = np.where(raw["age"] < 25, "<25", "25+")
    df["age_group"] = df["age_group"].astype("str")
    df["credit"] = _decode(raw["credit"], {1: "good", 2: "bad"}, "credit")
    return df


# --- default of credit card clients --------------------------------------------------------
# Seed 003's "Credit" groups: graduate school (1), university (2), high school/other (3-6, 0).
CREDIT_EDUCATION = {"0": "high school/other", "1": "graduate school", "2": "university",
                    "3": "high school/other", "4": "high school/other",
                    "5": "high school/other", "6": "high school/other"}  # fmt: skip
CREDIT_MARRIAGE = {"0": "unknown", "1": "married", "2": "single", "3": "other"}


def build_default_credit(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src / "UCI_Credit_Card.csv")
    df = pd.DataFrame({"limit_bal": raw["LIMIT_BAL"]})
    df["sex"] = _decode(raw["SEX"], {0: "male", 1: "female"}, "SEX")  # recoded: 1 = female
    df["education"] = _decode(_one_hot_to_label(raw, "EDUCATION_"), CREDIT_EDUCATION, "EDUCATION")
    df["marriage"] = _decode(_one_hot_to_label(raw, "MARRIAGE_"), CREDIT_MARRIAGE, "MARRIAGE")
    df["age"] = raw["AGE"]
    history = [c for c in raw.columns if re.fullmatch(r"(PAY|BILL_AMT|PAY_AMT)_?\d", c)]
    for col in history:
        df[col.lower()] = raw[col]
    df["default_next_month"] = raw["default-payment-next-month"]
    for col in df.columns:
        if df[col].dtype.kind == "f":  # amounts are whole NT dollars stored as floats
            if not (df[col] == df[col].round()).all():
                raise ValueError(f"{col}: non-integer amounts")
            df[col] = df[col].astype("int64")
    return df


# --- law school ----------------------------------------------------------------------------
def build_law_school(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src / "law.csv.zip")
    raw = raw.dropna(subset=["LSAT", "UGPA", "ZFYA"])
    raw = raw.loc[raw["UGPA"] > 0].reset_index(drop=True)  # UGPA 0.0 (2 rows) codes "unknown"
    df = pd.DataFrame(
        {
            "lsat": raw["LSAT"].astype("float64"),
            "zfya": raw["ZFYA"].astype("float64"),
            "sex": np.where(_one_hot_to_label(raw, "Sex_") == "1", "female", "male"),
            "race": np.where(_one_hot_to_label(raw, "Race_") == "White", "white", "non-white"),
            "bar_pass": np.where(_one_hot_to_label(raw, "PF_") == "1", "pass", "fail"),
            # GPA / 4 as in seed 002; 18 rows report UGPA 4.1-4.2 and are capped at 1.
            "ugpa_scaled": (raw["UGPA"] / 4.0).clip(upper=1.0),
        }
    )
    for col in ("sex", "race", "bar_pass"):
        df[col] = df[col].astype("str")
    return df


# --- communities and crime -----------------------------------------------------------------
STATE_FIPS = {
    1: "AL", 2: "AK", 4: "AZ", 5: "AR", 6: "CA", 8: "CO", 9: "CT", 10: "DE", 11: "DC", 12: "FL",
    13: "GA", 15: "HI", 16: "ID", 17: "IL", 18: "IN", 19: "IA", 20: "KS", 21: "KY", 22: "LA",
    23: "ME", 24: "MD", 25: "MA", 26: "MI", 27: "MN", 28: "MS", 29: "MO", 30: "MT", 31: "NE",
    32: "NV", 33: "NH", 34: "NJ", 35: "NM", 36: "NY", 37: "NC", 38: "ND", 39: "OH", 40: "OK",
    41: "OR", 42: "PA", 44: "RI", 45: "SC", 46: "SD", 47: "TN", 48: "TX", 49: "UT", 50: "VT",
    51: "VA", 53: "WA", 54: "WV", 55: "WI", 56: "WY",
}  # fmt: skip
CRIME_NAME_OVERRIDES = {
    "racepctblack": "race_pct_black",
    "householdsize": "household_size",
    "PctBSorMore": "pct_bs_or_more",
    "PctHousLess3BR": "pct_hous_less_3br",
}
# Seed 002's code (data_parser.majority_pop): idxmax over these, in this order (ties go first).
CRIME_RACE_SHARES = ["racepctblack", "racePctWhite", "racePctAsian", "racePctHisp"]


def _snake(name: str) -> str:
    if name in CRIME_NAME_OVERRIDES:
        return CRIME_NAME_OVERRIDES[name]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def build_communities_crime(src: Path) -> pd.DataFrame:
    raw = pd.read_csv(src / "crime.csv")
    raw = raw.drop(columns=["communityname", "fold", "high_crime", ">0.06black"])
    raw = raw.fillna(0)  # as seed 002's code does; this file has no missing values
    state_code = _one_hot_to_label(raw, "state_").astype("int64")
    raw = raw.drop(columns=[c for c in raw.columns if c.startswith("state_")])
    majority = raw[CRIME_RACE_SHARES].idxmax(axis=1) == "racePctWhite"
    df = raw.rename(columns=_snake)
    df.insert(0, "state", _decode(state_code, STATE_FIPS, "state"))
    df["majority_white"] = np.where(majority, "yes", "no")
    df["majority_white"] = df["majority_white"].astype("str")
    return df


BUILDERS: dict[str, Callable[[Path], pd.DataFrame]] = {
    "adult": build_adult,
    "compas": build_compas,
    "bank_marketing": build_bank_marketing,
    "german_credit": build_german_credit,
    "default_credit": build_default_credit,
    "law_school": build_law_school,
    "communities_crime": build_communities_crime,
}


def vendor(src: Path, out: Path, names: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """Build and write the datasets; return ``{name: (rows, columns)}``."""
    out.mkdir(parents=True, exist_ok=True)
    shapes = {}
    for name in names or list(BUILDERS):
        frame = BUILDERS[name](src)
        frame.to_parquet(out / f"{name}.parquet", engine="pyarrow", compression="zstd", index=False)
        shapes[name] = frame.shape
    return shapes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "datasets")
    parser.add_argument("names", nargs="*", help=f"datasets to build (default: {list(BUILDERS)})")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BUILDERS))
    if unknown:
        parser.error(f"unknown dataset(s) {unknown}; choose from {list(BUILDERS)}")
    for name, (rows, cols) in vendor(args.src, args.out, args.names or None).items():
        size = (args.out / f"{name}.parquet").stat().st_size
        print(f"{name:18s} {rows:6d} rows {cols:4d} columns {size / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
