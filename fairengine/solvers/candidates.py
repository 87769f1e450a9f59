"""The candidates a game loop keeps for its final selection: one recorder for every loop.

Design notes: docs/architecture.md, "The candidates of a game loop".
"""

from __future__ import annotations

from typing import Any

import numpy as np


class CandidateRecorder:
    """Candidates with their numbers stacked per name (buffers grown geometrically).

    Parameters
    ----------
    every, n_steps : int
        The descent–ascent schedule: :meth:`due` at every ``every``-th of ``n_steps`` steps and
        at the last.
    tie : float or None
        With a tolerance, :meth:`keep` does not keep a candidate whose numbers all equal a kept
        one's within it (and returns that one's index); None keeps every candidate.
    """

    def __init__(self, every: int = 1, n_steps: int = 0, *, tie: float | None = None) -> None:
        self.every, self.n_steps = max(1, int(every)), int(n_steps)
        self.tie = tie
        self.candidates: list[Any] = []
        self._stacks: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.candidates)

    def due(self, t: int) -> bool:
        return t % self.every == 0 or t == self.n_steps

    def keep(self, candidate: Any, **numbers: Any) -> int:
        """Keep ``candidate`` with its ``numbers`` (each a float or a 1-d array); its index, or a
        kept duplicate's (see ``tie``)."""
        rows = {name: np.asarray(value, dtype=float) for name, value in numbers.items()}
        size = len(self.candidates)
        if self.tie is not None and size:
            same = np.ones(size, dtype=bool)
            for name, row in rows.items():
                close = np.abs(self._stacks[name][:size] - row) <= self.tie
                same &= close if close.ndim == 1 else np.all(close, axis=1)
            hit = np.flatnonzero(same)
            if hit.size:
                return int(hit[0])
        for name, row in rows.items():
            stack = self._stacks.get(name)
            if stack is None or size == len(stack):
                grown = np.empty((max(8, 2 * size), *row.shape))
                if size:
                    grown[:size] = stack[:size]
                self._stacks[name] = stack = grown
            stack[size] = row
        self.candidates.append(candidate)
        return size

    def column(self, name: str) -> np.ndarray:
        """The kept candidates' numbers ``name``, one row each (a view of the buffer)."""
        stack = self._stacks.get(name)
        return np.empty(0) if stack is None else stack[: len(self.candidates)]

    def add(self, t: int, theta: np.ndarray, state: Any, values: np.ndarray, tables: list) -> None:
        """Descent–ascent's record of step ``t``: a copy of θ with its step. Subclasses add what
        their selection reads from the game's ``state``, constraint ``values`` and the
        adversary's ``tables``."""
        self.keep(theta.copy(), step=t)

    @property
    def theta(self) -> list[np.ndarray]:
        """The recorded iterates θ (descent–ascent), in step order."""
        return self.candidates

    @property
    def step(self) -> list[int]:
        """The step of each recorded iterate (descent–ascent)."""
        return [int(t) for t in self.column("step")]
