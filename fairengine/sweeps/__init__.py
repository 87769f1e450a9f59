"""Method-specific sweeps: a method's own grids run through :func:`fairengine.frontier.sweep`
(cached in the store) and returned as tables of points.

Design notes: docs/architecture.md, "Method-specific sweeps".
"""
