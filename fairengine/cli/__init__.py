"""The ``fairengine`` command line (:func:`main`; ``python -m fairengine``).

:mod:`~fairengine.cli.main` builds the parser and runs ``datasets``, ``run``, ``sweep`` and
``precompute``; :mod:`~fairengine.cli.models` ``export``, ``predict`` and ``inspect``;
:mod:`~fairengine.cli.audit` ``audit``, ``report`` and ``split``; :mod:`~fairengine.cli.dashboard`
and :mod:`~fairengine.cli.methods` their commands. What they share (arguments, the usage error,
reading the task) is in :mod:`~fairengine.cli.shared`, what they print in
:mod:`~fairengine.cli.output`; each command module imports only those two.
"""

from fairengine.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
