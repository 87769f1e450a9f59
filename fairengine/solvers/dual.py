"""The dual player of a Lagrangian game: online projected gradient ascent (Zinkevich 2003).

Algorithm 5 of Deng et al. 2023 with Theta = {lambda >= 0, ||lambda||_2 <= lambda_max}; the same
player serves any constrained learner written as "best response vs. no-regret multipliers".
"""

from __future__ import annotations

import numpy as np

from fairengine.solvers.projections import project_orthant_ball


class ProjectedGradientAscent:
    """No-regret multipliers: lambda_{t+1} = Proj(lambda_t + eta0 / sqrt(t) * g_t).

    Parameters
    ----------
    dim : int
        Number of constraints (multipliers).
    step : float
        eta0, the base step; the step at round t is eta0 / sqrt(t).
    radius : float
        lambda_max, the l2 radius of the multiplier set (``inf`` for the plain orthant).

    Attributes
    ----------
    lambda_ : ndarray of shape (dim,)
        Current multipliers (start at 0).
    t_ : int
        Rounds played.

    Examples
    --------
    >>> player = ProjectedGradientAscent(2, step=1.0, radius=10.0)
    >>> player.update(np.array([1.0, -1.0])).tolist()
    [1.0, 0.0]
    """

    def __init__(self, dim: int, step: float = 1.0, radius: float = np.inf) -> None:
        if step <= 0:
            raise ValueError("step must be positive")
        self.step = float(step)
        self.radius = float(radius)
        self.lambda_ = np.zeros(int(dim))
        self.t_ = 0

    def update(self, gradient: np.ndarray) -> np.ndarray:
        """Take one ascent step along ``gradient`` (the constraint values) and project."""
        self.t_ += 1
        eta = self.step / np.sqrt(self.t_)
        self.lambda_ = project_orthant_ball(
            self.lambda_ + eta * np.asarray(gradient, float), self.radius
        )
        return self.lambda_
