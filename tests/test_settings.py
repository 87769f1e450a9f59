"""Every FAIRENGINE_* variable is parsed in one place, into one frozen object; errors in words."""

from __future__ import annotations

import dataclasses

import pytest

from fairengine import settings
from fairengine.settings import Settings, SettingsError, load


def test_defaults_and_parsed_values() -> None:
    assert load({}) == Settings()
    found = load(
        {
            "FAIRENGINE_DEMO": "yes",
            "FAIRENGINE_WORKERS": "3",
            "FAIRENGINE_CLIENT_JOBS": "0",
            "FAIRENGINE_JOB_MEMORY_MB": "2048",
            "FAIRENGINE_CHEAP_SECONDS": "0.5",
            "FAIRENGINE_WORKER_GROUP": " Own ",
            "FAIRENGINE_CACHE": "/srv/cache",
            "FAIRENGINE_RUN_WAIT": "",  # set but empty: the default
            "FAIRENGINE_BENCH_BEFORE": "x",  # a benchmark's own variable: not the app's
            "PATH": "/bin",
        }
    )
    assert (found.demo, found.workers, found.client_jobs, found.job_memory_mb) == (True, 3, 0, 2048)
    assert (found.cheap_seconds, found.worker_group, found.cache) == (0.5, "own", "/srv/cache")
    assert found.run_wait == Settings().run_wait
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.workers = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("WORKERS", "0", "must be a whole number of at least 1"),
        ("WORKERS", "two", "must be a whole number of at least 1"),
        ("CLIENT_JOBS", "-1", "must be a whole number of at least 0"),
        ("WORKER_NICE", "20", "must be a whole number from 0 to 19"),
        ("RUN_WAIT", "soon", "must be a number of at least 0"),
        ("DEMO", "maybe", r"must be on or off \(1, true, yes, on / 0, false, no, off\)"),
        ("WORKER_GROUP", "mine", "must be one of server, own"),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable(name: str, value: str, words: str) -> None:
    with pytest.raises(SettingsError, match=f"FAIRENGINE_{name} {words}; got '{value}'"):
        load({f"FAIRENGINE_{name}": value})


def test_current_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRENGINE_QUEUE_LIMIT", "5")
    first = settings.current()
    assert first.queue_limit == 5 and settings.current() is first  # parsed once
    monkeypatch.setenv("FAIRENGINE_QUEUE_LIMIT", "6")
    assert settings.current().queue_limit == 6
