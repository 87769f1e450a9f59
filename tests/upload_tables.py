"""Tables an analyst might upload first, built here (no real data): shared by the unit,
AppTest and browser tests of the Data page's first guess."""

from __future__ import annotations

import numpy as np
import pandas as pd


def arrests_like(rows: int = 3000, seed: int = 0) -> pd.DataFrame:
    """An arrests-like table: the binary outcome ``released`` is not the last column, a
    ``colour`` column holds the protected attribute, ``sex`` and ``citizen`` are two-valued too,
    ``age`` has many values and the last column ``checks`` is a 0-6 count."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["Black", "White"], size=rows, p=[0.3, 0.7])
    employed = rng.choice(["Yes", "No"], size=rows, p=[0.8, 0.2])
    checks = np.minimum(rng.poisson(1.6, size=rows), 6)
    score = 1.8 - 0.35 * checks + 0.6 * (employed == "Yes") - 0.4 * (colour == "Black")
    released = np.where(rng.random(rows) < 1 / (1 + np.exp(-score)), "Yes", "No")
    return pd.DataFrame(
        {
            "released": released,
            "colour": colour,
            "year": rng.integers(1997, 2003, size=rows),
            "age": rng.integers(12, 67, size=rows),
            "sex": rng.choice(["Male", "Female"], size=rows, p=[0.9, 0.1]),
            "employed": employed,
            "citizen": rng.choice(["Yes", "No"], size=rows, p=[0.85, 0.15]),
            "checks": checks,
        }
    )
