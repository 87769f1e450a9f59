"""What a page says while its job waits or runs (:func:`waiting_text`, pure text from a
snapshot of the job, :class:`Waiting`), and how often the page polls it (:func:`poll_seconds`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dashboard.components.job_state import LOW_SHARE, Job
from dashboard.components.jobs import JobPool
from fairengine.textsafe import md_text

#: Poll interval (seconds) of a pending job that runs or is next in line; :data:`FIRST_POLL`
#: for its first :data:`FIRST_POLLS_FOR` seconds (a fit that outlasts the in-run wait usually
#: ends soon after it); at most :data:`MAX_POLL` far back in the queue (a poll is a fragment
#: rerun: it costs the server a little and the browser a redraw).
POLL = 1.0
FIRST_POLL = 0.25
FIRST_POLLS_FOR = 6.0
MAX_POLL = 5.0


def poll_seconds(position: int, workers: int, age: float | None = None) -> float:
    """Poll interval of a job at queue ``position`` (0 = running) submitted ``age`` seconds
    ago (see :data:`POLL`)."""
    ahead = max(0, position - 1)
    if not ahead and age is not None and age < FIRST_POLLS_FOR:
        return FIRST_POLL
    return min(MAX_POLL, POLL * (1 + ahead / max(1, workers)))


def slow_down(job: Job, every: float) -> bool:
    """Whether a job polled every ``every`` seconds is past its first polls (the page reruns
    once, to poll slower)."""
    return every < POLL and time.time() - job.submitted >= FIRST_POLLS_FOR


def seconds_left(value: float | None) -> str:
    """An estimate in words: "about 40 s", "about 3 min", "unknown time"."""
    if value is None:
        return "unknown time"
    return f"about {max(1, round(value))} s" if value < 90 else f"about {value / 60:.0f} min"


def _duration(seconds: float) -> str:
    """``seconds`` in words: "40 s", "2 min 5 s", "1 h 3 min"."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(whole, 3600)
    return f"{hours} h {rest // 60} min"


BUSY_WORDS = (
    "The server is busy: this job is getting little CPU, so it takes longer than usual. It "
    "keeps running; you can leave this page open or come back later."
)


@dataclass(frozen=True)
class Waiting:
    """What a waiting page says about its job (a snapshot; see :func:`waiting_text`)."""

    label: str
    position: int = 0
    workers: int = 1
    done: int = 0
    total: int = 0
    elapsed: float | None = None
    cpu: float = 0.0
    share: float | None = None
    remaining: float | None = None
    estimate: float | None = None


def waiting(pool: JobPool, job: Job) -> Waiting:
    """The snapshot of ``job`` a poll shows (records a CPU sample, see :meth:`Job.cpu_share`)."""
    done, total = job.progress()
    return Waiting(
        label=job.label,
        position=pool.queue_position(job),
        workers=pool.workers,
        done=done,
        total=total,
        elapsed=None if job.started is None else max(0.0, time.time() - job.started),
        cpu=job.cpu_seconds(),
        share=job.cpu_share(),
        remaining=job.remaining(),
        estimate=job.estimate,
    )


def waiting_text(w: Waiting) -> tuple[float | None, str]:
    """Progress fraction (None: unknown) and the words a waiting page shows: the queue place;
    else the points done, how long it has run, the processor time it got, what is left, and
    whether the server is too busy to give it much (:data:`BUSY_WORDS`)."""
    label = md_text(w.label)
    if w.position:
        ahead = "next in line" if w.position == 1 else f"{w.position - 1:d} jobs ahead"
        return None, f"{label}: waiting for a free worker ({ahead}; {w.workers:d} shared workers)."
    parts = []
    if w.total:
        parts.append(f"{w.done:,} of {w.total:,} points done")
    if w.elapsed is not None:
        parts.append(f"running for {_duration(w.elapsed)}")
        parts.append(f"{_duration(w.cpu)} of processor time so far")
    else:
        parts.append("starting")
    if w.remaining is not None and (w.done or w.estimate):
        parts.append(f"{seconds_left(w.remaining)} left")
    elif not w.total and not w.estimate:
        parts.append("first fit of this setting")
    text = f"{label}: {', '.join(parts)}."
    if w.share is not None and w.share < LOW_SHARE:
        text += " " + BUSY_WORDS
    if w.total:
        return w.done / w.total, text
    if w.estimate and w.elapsed is not None:
        return min(0.99, w.elapsed / w.estimate), text
    return None, text
