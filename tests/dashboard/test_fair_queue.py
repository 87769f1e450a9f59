"""Fair share of the job pool's queue: one visitor's tabs cannot refuse another visitor's work.

The rule (:func:`dashboard.components.job_scheduling.to_drop`) is driven directly by a small
model of the pool (submissions, workers taking the oldest waiting jobs, jobs ending), then the
pool itself is flooded by six sessions of one address while a second address submits.
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import Future
from pathlib import Path

import pytest

from dashboard.components.job_scheduling import to_drop
from dashboard.components.job_state import BUSY_MESSAGE, Job, ServerBusy
from dashboard.components.jobs import JobPool

ATTACKER, VISITOR = "203.0.113.7", "198.51.100.2"


class QueueModel:
    """The pool's admission rule over plain jobs: ``workers`` of them run, the rest wait."""

    def __init__(self, workers: int, per_session: int, queue_limit: int, per_client: int | None):
        self.workers, self.limits = workers, (per_session, queue_limit, per_client)
        self.unfinished: list[Job] = []
        self.queue: deque[Job] = deque()
        self.ids = 0

    def submit(self, session: str, client: str | None) -> Job | None:
        """The job queued, or None when refused as busy; dropped and bumped jobs end."""
        self.ids += 1
        job = Job(
            self.ids,
            session,
            "fit",
            f"k{self.ids}",
            Future(),
            time.time(),
            None,
            Path("p"),
            Path("c"),
            client=client,
            _pending=deque([0]),
        )
        try:
            dropped, bumped = to_drop(self.unfinished, self.queue, job, *self.limits)
        except ServerBusy:
            return None
        for old in [*dropped, *bumped]:
            self.end(old)
        self.unfinished.append(job)
        self.queue.append(job)
        self.start()
        return job

    def start(self) -> None:
        while self.queue and sum(j.started is not None for j in self.unfinished) < self.workers:
            self.queue.popleft().started = time.time()

    def end(self, job: Job) -> None:
        self.unfinished.remove(job)
        if job in self.queue:
            self.queue.remove(job)
        self.start()

    def finish_oldest_running(self) -> None:
        running = [j for j in self.unfinished if j.started is not None]
        if running:
            self.end(running[0])


def flood(model: QueueModel, attacker: str | None, visitor: str | None, rounds: int = 31) -> int:
    """Six tabs of one visitor submit in every round (six times as often as a second visitor,
    who submits once per round); one running job ends every other round. Returns how many of
    the second visitor's submissions were refused."""
    refused = 0
    for round_ in range(rounds):
        for tab in range(6):
            model.submit(f"attacker-tab-{tab}", attacker)
        refused += model.submit("visitor", visitor) is None
        if round_ % 2:
            model.finish_oldest_running()
    return refused


@pytest.mark.parametrize("per_session", [2, 3])
def test_six_tabs_of_one_address_never_refuse_a_second_address(per_session: int) -> None:
    model = QueueModel(workers=2, per_session=per_session, queue_limit=8, per_client=4)
    refused = flood(model, ATTACKER, VISITOR)
    held = sum(j.client == ATTACKER for j in model.unfinished)
    print(f"second visitor refused {refused} of 31; the six tabs hold {held} jobs")
    assert refused == 0
    assert held <= 4  # the address's limit, all its tabs together
    assert any(j.client == VISITOR for j in model.unfinished)


def test_without_addresses_a_newcomer_still_gets_in() -> None:
    """Behind a proxy that hides addresses each session counts alone: the six tabs fill the
    queue, yet the visitor who holds fewer jobs than the heaviest tab is never refused."""
    model = QueueModel(workers=2, per_session=2, queue_limit=8, per_client=4)
    refused = flood(model, None, None)
    print(f"second visitor refused {refused} of 31 without addresses")
    assert refused == 0
    waiting = [j for j in model.unfinished if j.started is None]
    assert len(waiting) <= 8  # the global cap still holds


def test_the_global_cap_refuses_when_nobody_holds_more() -> None:
    """Eight visitors with one waiting job each: a ninth with one job already is refused (the
    last resort), a visitor with nothing queued gets in by ending the newest of the heaviest."""
    model = QueueModel(workers=1, per_session=2, queue_limit=8, per_client=None)
    model.submit("runner", "192.0.2.99")
    for i in range(8):
        assert model.submit(f"s{i}", f"192.0.2.{i}") is not None
    assert model.submit("s0", "192.0.2.0") is None  # holds one waiting, as every other
    newcomer = model.submit("new", "192.0.2.50")
    assert newcomer is not None and len(model.queue) == 8


def test_an_address_at_its_limit_is_told_in_its_own_words() -> None:
    model = QueueModel(workers=1, per_session=2, queue_limit=8, per_client=3)
    model.submit("tab-1", ATTACKER)
    model.submit("tab-1", ATTACKER)
    model.submit("tab-2", ATTACKER)
    job = Job(
        99,
        "tab-3",
        "fit",
        "k99",
        Future(),
        time.time(),
        None,
        Path("p"),
        Path("c"),
        client=ATTACKER,
    )
    with pytest.raises(ServerBusy) as busy:
        to_drop(model.unfinished, model.queue, job, *model.limits)
    assert "3 jobs" in str(busy.value) and "your tabs" in str(busy.value)


def sleeper(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


def test_the_pool_serves_a_second_address_while_six_tabs_flood_it() -> None:
    pool = JobPool(workers=1, per_session=2, warm=False, queue_limit=8, per_client=4)
    try:
        refused_tabs = 0
        for tab in range(6):
            for n in range(3):
                try:
                    pool.submit(f"tab-{tab}", "fit", f"a{tab}.{n}", sleeper, 30, client=ATTACKER)
                except ServerBusy:
                    refused_tabs += 1
        mine = [pool.submit("visitor", "fit", f"v{n}", sleeper, 30, client=VISITOR) for n in (1, 2)]
        assert refused_tabs >= 18 - 4 - 2  # a tab's third job replaces its first
        assert all(not job.done for job in mine)
        assert len([j for j in pool.active() if j.client == ATTACKER]) == 4
    finally:
        pool.shutdown()


def test_a_bumped_job_ends_as_busy_in_words() -> None:
    """The heaviest visitor's newest waiting job makes room: its page reads "busy"."""
    pool = JobPool(workers=1, per_session=9, warm=False, queue_limit=2, per_client=0)
    try:
        running = pool.submit("heavy", "fit", "h0", sleeper, 30)
        end = time.time() + 60
        while running.started is None and time.time() < end:
            time.sleep(0.05)
        first = pool.submit("heavy", "fit", "h1", sleeper, 30)
        newest = pool.submit("heavy", "fit", "h2", sleeper, 30)
        with pytest.raises(ServerBusy):
            pool.submit("heavy", "fit", "h3", sleeper, 30)
        light = pool.submit("light", "fit", "l0", sleeper, 30)
        assert not light.done and not first.done
        assert newest.outcome()[0] == "error" and str(newest.outcome()[1]) == BUSY_MESSAGE
    finally:
        pool.shutdown()
