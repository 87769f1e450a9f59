"""The ``fairengine`` command line (:func:`main`; ``python -m fairengine``); its modules:
docs/architecture.md, "The command line"."""

from fairengine.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
