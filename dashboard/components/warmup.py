"""Import the heavy modules once per server, in a daemon thread, after the first page is drawn
(a page that needs a module first imports it itself; Python's import lock makes the two safe).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading

from fairengine import settings

#: Packages whose every module is imported (the engine's methods and the pages' components).
PACKAGES = ("fairengine.methods", "fairengine.export", "dashboard.components")

_log = logging.getLogger(__name__)


def import_all(packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Import every module of ``packages``; returns the names that failed (logged, not raised)."""
    failed = []
    for package in packages:
        try:
            root = importlib.import_module(package)
        except Exception:
            failed.append(package)
            continue
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            try:
                importlib.import_module(info.name)
            except Exception:
                _log.debug("warm-up could not import %s", info.name, exc_info=True)
                failed.append(info.name)
    return failed


def start() -> threading.Thread | None:
    """Start the background imports (None when ``FAIRENGINE_WARM_UP=0``)."""
    if not settings.current().warm_up:
        return None
    thread = threading.Thread(target=import_all, name="fairengine-warm-up", daemon=True)
    thread.start()
    return thread
