"""What the dashboard's job pool (:mod:`.jobs`) keeps about one job: its calls, progress, the
processor time it got, its outcome; and the errors a page may show about it.

This module does not import Streamlit.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUSY_MESSAGE = "The server is busy; try again in a minute."
#: When one visitor (every tab from one address) already holds as many jobs as it may.
CLIENT_BUSY_MESSAGE = (
    "You already have {count} jobs waiting or running on this server (from all your tabs); "
    "wait for one to finish, or cancel one, and try again."
)
#: A job whose calls got less than this share of one core each over the last
#: :data:`SHARE_WINDOW` seconds is "getting little CPU" (the page says the server is busy).
LOW_SHARE = 0.3
#: Seconds over which :meth:`Job.cpu_share` measures (at least :data:`MIN_WINDOW` of them).
SHARE_WINDOW = 15.0
MIN_WINDOW = 4.0


class Cancelled(Exception):
    """The outcome of a job cancelled while it ran."""


class ServerBusy(RuntimeError):
    """:meth:`JobPool.submit` when the queue is full or the visitor holds as many jobs as it
    may; also the outcome of a waiting job dropped to make room for a visitor who holds fewer.
    The message is for the visitor."""

    def __init__(self, message: str = BUSY_MESSAGE) -> None:
        super().__init__(message)


class JobFailed(RuntimeError):
    """A job whose process died or ran out of memory; the message says so in words."""


def out_of_memory(memory_mb: int | None, *, killed: bool = False) -> JobFailed:
    """The error of a job that needed more memory than it may use (``killed``: the system
    stopped it, else it hit the per-job limit of ``memory_mb``)."""
    if killed:
        limit = " (the system stopped it)"
    else:
        limit = f" (the limit is {memory_mb:,} MB per job)" if memory_mb else ""
    return JobFailed(
        f"this job ran out of memory{limit}. Try fewer rows, a smaller setting of the knobs or "
        "a smaller file."
    )


@dataclass
class Job:
    """One submitted job (what a page polls): one call, or ``parts`` calls (a sweep's points).

    ``background``: a speculative job no visitor waits for yet; ``client``: the visitor's
    address (None where unknown); ``cpu_limit``: processor seconds each call may use;
    ``started``: when its first call started (None while it waits).
    """

    id: int
    session: str
    label: str
    key: str
    future: Future
    submitted: float
    estimate: float | None
    cancelled: bool = False
    pid: int | None = None
    parts: int = 0
    background: bool = False
    client: str | None = None
    cpu_limit: float | None = None
    started: float | None = None
    _pending: deque = field(default_factory=deque, repr=False)
    _values: list = field(default_factory=list, repr=False)
    _pids: dict[int, int] = field(default_factory=dict, repr=False)
    _finished_parts: int = field(default=0, repr=False)
    _cpu: float = field(default=0.0, repr=False)
    _samples: deque = field(default_factory=lambda: deque(maxlen=64), repr=False)
    _finished: float | None = field(default=None, repr=False)
    #: ``(done, total)`` as the job's call last reported it over its pipe.
    _progress: tuple[int, int] = field(default=(0, 0), repr=False)

    @property
    def done(self) -> bool:
        return self.cancelled or self.future.done()

    @property
    def owner(self) -> str:
        """Whom the job counts against when the queue is shared out: the visitor's address
        when known, else the session."""
        return f"client:{self.client}" if self.client else f"session:{self.session}"

    @property
    def running_calls(self) -> int:
        return len(self._pids)

    def progress(self) -> tuple[int, int]:
        """``(done, total)``: as the job last reported, or for a job of ``parts`` calls, how many
        of them have finished."""
        return (self._finished_parts, self.parts) if self.parts else self._progress

    def remaining(self) -> float | None:
        """Estimated seconds to go (from the points done so far, else the job's estimate)."""
        if self.started is None:
            return self.estimate
        spent = time.time() - self.started
        done, total = self.progress()
        if total and done:
            return max(0.0, spent / done * (total - done))
        return None if self.estimate is None else max(0.0, self.estimate - spent)

    def cpu_seconds(self) -> float:
        """Processor seconds this job's processes got so far (finished calls and running ones)."""
        running = (process_cpu_seconds(pid) for pid in list(self._pids.values()))
        return self._cpu + sum(value or 0.0 for value in running)

    def cpu_share(self, now: float | None = None) -> float | None:
        """Share of one core each running call got over the last :data:`SHARE_WINDOW` seconds
        (1.0: a full core each); None until :data:`MIN_WINDOW` seconds have been seen. Each call
        records a sample, so a page that polls the job measures it."""
        now = time.time() if now is None else now
        calls = self.running_calls
        if not calls:  # queued, or between two calls: nothing to measure, start afresh
            self._samples.clear()
            return None
        self._samples.append((now, self.cpu_seconds(), calls))
        with contextlib.suppress(IndexError):  # pages of several sessions may poll at once
            while len(self._samples) > 2 and now - self._samples[1][0] >= SHARE_WINDOW:
                self._samples.popleft()
        samples = [sample for sample in list(self._samples) if sample[0] <= now]
        first_time, first_cpu, _ = samples[0]
        span = now - first_time
        if span < MIN_WINDOW:
            return None
        mean_calls = max(1.0, sum(c for _, _, c in samples) / len(samples))
        return max(0.0, samples[-1][1] - first_cpu) / span / mean_calls

    def outcome(self) -> tuple[str, Any]:
        """``("pending", None)``, ``("cancelled", None)``, ``("error", exception)`` or
        ``("done", value)``."""
        if self.cancelled or self.future.cancelled():
            return "cancelled", None
        if not self.future.done():
            return "pending", None
        exc = self.future.exception()
        if isinstance(exc, Cancelled):
            return "cancelled", None
        return ("error", exc) if exc is not None else ("done", self.future.result())


def process_cpu_seconds(pid: int) -> float | None:
    """User and system seconds of process ``pid`` and its reaped children
    (``/proc/<pid>/stat``); None where it cannot be read (gone, or no ``/proc``)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # the name in parentheses may hold spaces
    try:  # fields 14-17 of proc(5): utime, stime, cutime, cstime (here from the state, 3)
        ticks = sum(int(value) for value in fields[11:15])
    except (ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")
