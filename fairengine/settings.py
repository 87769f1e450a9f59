"""Every ``FAIRENGINE_*`` environment variable, read into one frozen :class:`Settings` that the
engine, the command line and the dashboard share; imports nothing of the package. What each
variable does and its default: ``docs/howto/deploy.md`` ("Environment variables").
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass

PREFIX = "FAIRENGINE_"
#: Set by ``fairengine dashboard --demo`` for the server it starts.
DEMO_ENV = PREFIX + "DEMO"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
GROUPS = ("server", "own")


class SettingsError(ValueError):
    """A ``FAIRENGINE_*`` variable whose value cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Settings:
    """The ``FAIRENGINE_*`` variables, parsed (see the module docstring); None: not set."""

    cache: str | None = None
    assets: str | None = None
    key_file: str | None = None
    demo: bool | None = None
    debug: bool = False
    warm_up: bool = True
    workers: int | None = None
    session_jobs: int = 2
    client_jobs: int = 4
    queue_limit: int | None = None
    worker_nice: int = 10
    worker_group: str = "server"
    job_memory_mb: int | None = None
    file_cpu_seconds: float = 120.0
    cheap_seconds: float = 3.0
    run_wait: float = 2.0
    prefetch: int | None = None


def _flag(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise SettingsError(
        f"{PREFIX}{name} must be on or off (1, true, yes, on / 0, false, no, off); got {text!r}."
    )


def _number(name: str, text: str, kind: type, low: float, high: float | None = None) -> float:
    try:
        value = kind(text.strip())
    except ValueError:
        value = None
    if value is None or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        noun = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{PREFIX}{name} must be {noun} {span}; got {text!r}.") from None
    return value


def load(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings ``environ`` (default: this process's environment) holds.

    Raises
    ------
    SettingsError
        A variable whose value does not parse, in words.
    """
    env = os.environ if environ is None else environ
    raw = {key[len(PREFIX) :]: value for key, value in env.items() if key.startswith(PREFIX)}
    found: dict[str, object] = {}
    for name, text in raw.items():
        if not text.strip():
            continue  # set but empty: the default
        field = name.lower()
        if name in ("CACHE", "ASSETS", "KEY_FILE"):
            found[field] = text
        elif name in ("DEMO", "DEBUG", "WARM_UP"):
            found[field] = _flag(name, text)
        elif name in ("WORKERS", "SESSION_JOBS", "QUEUE_LIMIT"):
            found[field] = _number(name, text, int, 1)
        elif name in ("CLIENT_JOBS", "JOB_MEMORY_MB", "PREFETCH"):
            found[field] = _number(name, text, int, 0)
        elif name == "WORKER_NICE":
            found[field] = _number(name, text, int, 0, 19)
        elif name in ("FILE_CPU_SECONDS", "CHEAP_SECONDS", "RUN_WAIT"):
            found[field] = _number(name, text, float, 0)
        elif name == "WORKER_GROUP":
            group = text.strip().lower()
            if group not in GROUPS:
                raise SettingsError(
                    f"{PREFIX}WORKER_GROUP must be one of {', '.join(GROUPS)}; got {text!r}."
                )
            found[field] = group
    return Settings(**found)  # type: ignore[arg-type]


def current() -> Settings:
    """This process's settings (parsed once per distinct set of ``FAIRENGINE_*`` values)."""
    return _parsed(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(PREFIX))))


@functools.lru_cache(maxsize=4)
def _parsed(items: tuple[tuple[str, str], ...]) -> Settings:
    return load(dict(items))
