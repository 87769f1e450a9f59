"""Method-specific sweeps: they sit above both the methods and the generic frontier layer
(:mod:`fairengine.frontier`), so no method imports the frontier layer (which imports the
methods' registry): the import graph is methods → (nothing above), frontier → methods,
sweeps → frontier + methods."""
