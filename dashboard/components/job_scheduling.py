"""The rules of the dashboard's job pool (:mod:`.jobs`): which job runs next, which one makes
room, and where a waiting job stands, as functions of its queue and its running jobs.

A visitor's call starts from the session with the fewest calls running; background jobs run only
while no visitor's call runs or waits (:func:`preempted`); per-session, per-address and queue
limits bound the waiting jobs, a full queue making room for a lighter visitor
(:func:`bumped_for`). The functions run with the pool's lock held. This module does not import
Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dashboard.components.job_state import CLIENT_BUSY_MESSAGE, Job, ServerBusy

#: Background jobs: their nice value, how many calls run at once (only while no visitor's call
#: runs or waits), how many may wait (beyond it the oldest waiting one is dropped).
BACKGROUND_NICE = 19
BACKGROUND_WORKERS = 1
BACKGROUND_QUEUE = 8


def next_job(queue: Iterable[Job], running: Sequence[Job]) -> Job | None:
    """The job whose next call starts now: a visitor's job from the session with the fewest
    calls ``running``, its oldest first; else, if no visitor's call runs and fewer than
    :data:`BACKGROUND_WORKERS` background calls do, the oldest background job; else None."""
    per_session: dict[str, int] = {}
    for job in running:
        per_session[job.session] = per_session.get(job.session, 0) + 1
    queue = list(queue)
    best = None
    for job in queue:
        if not job._pending or job.background:
            continue
        if best is None or per_session.get(job.session, 0) < per_session.get(best.session, 0):
            best = job
    if best is not None or any(not job.background for job in running):
        return best
    if sum(job.background for job in running) >= BACKGROUND_WORKERS:
        return None
    return next((job for job in queue if job._pending and job.background), None)


def preempted(queue: Iterable[Job], running: Sequence[Job]) -> list[Job]:
    """The running background jobs to cancel: all of them once a visitor's call waits or
    runs (a visitor who took a background job over made it theirs: it is not among them)."""
    visitor = any(not job.background for job in running) or any(
        job._pending and not job.background for job in queue
    )
    return [job for job in running if job.background] if visitor else []


def to_drop(
    unfinished: Sequence[Job],
    queue: Iterable[Job],
    job: Job,
    per_session: int,
    queue_limit: int,
    per_client: int | None = None,
) -> tuple[list[Job], list[Job]]:
    """What makes room for ``job`` (not queued yet): ``(dropped, bumped)``. ``dropped`` are its
    session's oldest jobs beyond ``per_session`` (or, for a background job, the oldest waiting
    background jobs beyond :data:`BACKGROUND_QUEUE`), to cancel; ``bumped`` is at most one
    waiting job of the visitor who holds the most jobs, to end as "busy" when ``queue_limit``
    visitors' jobs already wait and ``job``'s visitor holds fewer (see :func:`bumped_for`).

    Raises :class:`ServerBusy` (nothing dropped) when the visitor's address already holds
    ``per_client`` unfinished jobs, or the queue is full and no visitor holds more than
    ``job``'s.
    """
    queue = list(queue)
    if job.background:
        waiting = [queued for queued in queue if queued.background and queued.started is None]
        return waiting[: max(0, len(waiting) - BACKGROUND_QUEUE + 1)], []
    visitors = [other for other in unfinished if not other.background]
    mine = sorted((other for other in visitors if other.session == job.session), key=lambda j: j.id)
    dropped = mine[: max(0, len(mine) - per_session + 1)]
    kept = [other for other in visitors if other not in dropped]
    if job.client and per_client:
        held = sum(1 for other in kept if other.client == job.client)
        if held >= per_client:
            raise ServerBusy(CLIENT_BUSY_MESSAGE.format(count=held))
    waiting = [other for other in queue if other in kept and other.started is None]
    if len(waiting) < queue_limit:
        return dropped, []
    bumped = bumped_for(job, kept, waiting)
    if bumped is None:
        raise ServerBusy
    return dropped, [bumped]


def bumped_for(job: Job, unfinished: Sequence[Job], waiting: Sequence[Job]) -> Job | None:
    """When the queue is full: the newest waiting job of the visitor holding the most
    unfinished jobs (waiting and running; a visitor is an address, else a session), provided
    ``job``'s visitor holds fewer; None otherwise. So a visitor with nothing queued always gets
    in, and the heaviest visitor is refused first."""
    held: dict[str, int] = {}
    for other in unfinished:
        held[other.owner] = held.get(other.owner, 0) + 1
    candidates = [other for other in waiting if other.owner != job.owner]
    if not candidates:
        return None
    heaviest = max(candidates, key=lambda other: (held[other.owner], other.id))
    return heaviest if held.get(job.owner, 0) < held[heaviest.owner] else None


def queue_position(queue: Iterable[Job], job: Job) -> int:
    """0 when ``job`` runs (or is done), else its place among the jobs not started yet (1 =
    next; background jobs come after every visitor's job)."""
    waiting = [q for q in queue if q.started is None and (job.background or not q.background)]
    return next((place for place, queued in enumerate(waiting, 1) if queued is job), 0)
