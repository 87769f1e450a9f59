# ruff: noqa  (glue run under the TF venv: module aliasing and patches before imports, by design)
"""Builds the two processed CSVs the authors' repo ships (absent from the mirror: listed, not stored)
with THEIR preprocessing + noise functions (data.preprocess_data_adult / save_proxy_columns_adult /
preprocess_data_credit). Shims (driver-side only): local raw files instead of UCI URLs, pd.get_dummies
-> integer dummies, DataFrame.append -> pd.concat (removed in pandas 2), random.seed(0) for their
(unseeded) proxy noise generation. Their data.py imports tensorflow without using it for these
functions: a stub module stands in, so the project's Python runs this too. Also writes
credit_loaded.csv (their load_dataset_credit's feature table) for fairengine's side of the bench."""

import os, random, sys
import numpy as np
import types

sys.modules.setdefault("tensorflow", types.ModuleType("tensorflow"))
import pandas as pd

CODE = os.path.join(os.environ.get("REFRUN", "/work/refrun"), "code")
sys.path.insert(0, CODE)
os.chdir(CODE)
_get_dummies = pd.get_dummies
pd.get_dummies = lambda *a, **k: _get_dummies(*a, **{"dtype": np.int64, **k})
pd.DataFrame.append = lambda self, other, **k: pd.concat([self, other], **k)
_read_csv = pd.read_csv
LOCAL = {
    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data": "/work/shared/datasets/adult.data",
    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test": "/work/shared/datasets/adult.test",
}
pd.read_csv = lambda path, *a, **k: _read_csv(LOCAL.get(path, path), *a, **k)
import data  # noqa: E402  (their module, scratch copy)

random.seed(0)
np.random.seed(0)
data.preprocess_data_adult(os.path.join(CODE, "data"))
data.save_proxy_columns_adult(os.path.join(CODE, "data"))

# Credit: rebuild the UCI raw layout their preprocess_data_credit reads (data/credit_default.csv)
raw = _read_csv("/work/shared/datasets/UCI_Credit_Card.csv")
edu = raw[[f"EDUCATION_{i}" for i in range(7)]].to_numpy().argmax(axis=1)
mar = raw[[f"MARRIAGE_{i}" for i in range(4)]].to_numpy().argmax(axis=1)
out = raw.rename(columns={"default-payment-next-month": "default"})
out["EDUCATION"] = edu
out["MARRIAGE"] = mar
out["SEX"] = np.where(raw["SEX"] == 1, 2, 1)  # back to UCI coding (2 = female)
out.to_csv(os.path.join(CODE, "data", "credit_default.csv"), index=False)
random.seed(0)
data.preprocess_data_credit(os.path.join(CODE, "data"))
for f in ("adult_processed.csv", "credit_default_processed.csv"):
    df = _read_csv(os.path.join(CODE, "data", f))
    print(f, df.shape, [c for c in df.columns if c.startswith("PROXY_0.10")])

# The feature table their credit trainers see (data.load_dataset_credit: 4 quantiles of the
# continuous columns, one-hot of the rest), so that fairengine's side fits the same columns.
credit = data.load_dataset_credit()
credit = credit.astype({c: np.int64 for c in credit.columns if credit[c].dtype == bool})
credit.to_csv(os.path.join(CODE, "data", "credit_loaded.csv"), index=False)
print("credit_loaded.csv", credit.shape)
