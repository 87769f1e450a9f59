"""Method-specific sweeps: a method's own grids run through :func:`fairengine.frontier.sweep`
(cached in the store) and returned as tables of points
(:func:`fairengine.sweeps.balanced_filtering.tradeoff_points`,
:func:`fairengine.sweeps.fair_regression.eps_points`).

They stay a package of their own, above both layers they join: the methods cannot hold them
(the frontier package imports the methods' registry, so a method importing
:mod:`fairengine.frontier` would close an import cycle), and :mod:`fairengine.frontier` is
generic (it holds no method's own code). The import graph is methods → (nothing above),
frontier → methods, sweeps → frontier + methods; ``tests/methods/test_balanced_filtering.py``
checks it.
"""
