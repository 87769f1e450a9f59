"""The server's background warm-up imports every engine and page module without an error."""

from __future__ import annotations

import sys

from dashboard.components import warmup


def test_every_module_the_warm_up_walks_imports() -> None:
    assert warmup.import_all() == []
    assert "fairengine.methods.maxent.debiaser" in sys.modules
    assert "dashboard.components.runner" in sys.modules


def test_warm_up_reports_a_broken_module_instead_of_raising() -> None:
    assert warmup.import_all(("fairengine.no_such_package",)) == ["fairengine.no_such_package"]


def test_warm_up_can_be_turned_off(monkeypatch) -> None:
    monkeypatch.setenv("FAIRENGINE_WARM_UP", "0")
    assert warmup.start() is None
