"""fastbertscore.space.runner: the one model thread, its queue (smallest work first, one job per visitor session,
small jobs lent time between a large one's encoder batches) and each request's deadline.

Each test holds the thread with a job that waits on an event, so what is queued meanwhile is decided before any of
it runs: no test depends on timing."""

from __future__ import annotations

import threading

import pytest

from fastbertscore.space import runner
from fastbertscore.space.limits import DEADLINE_S, SMALL_WORK
from fastbertscore.space.runner import BUSY, STOPPED, DeadlineExceeded, Job, ModelThread, SpaceError


@pytest.fixture
def held():
    """A model thread of its own, held by a job until ``release()``."""
    thread, gate, started = ModelThread(), threading.Event(), threading.Event()
    blocker = thread.submit(Job(lambda _: started.set() or gate.wait()))
    started.wait()
    yield thread, gate.set
    gate.set()
    blocker.result(timeout=60)


def test_one_job_per_visitor_session(held):
    # A visitor could queue as many requests as Gradio's queue held, each run in turn on the one model thread.
    thread, release = held
    first = thread.submit(Job(lambda _: "first"), owner="session a")
    with pytest.raises(SpaceError, match=f"^{BUSY}$"):
        thread.submit(Job(lambda _: "second"), owner="session a")
    other = thread.submit(Job(lambda _: "other"), owner="session b")
    release()
    assert (first.result(timeout=60), other.result(timeout=60)) == ("first", "other")
    assert thread.submit(Job(lambda _: "again"), owner="session a").result(timeout=60) == "again"  # freed once done


def test_the_smallest_work_goes_first_then_the_first_come(held):
    thread, release = held
    ran = []
    futures = [
        thread.submit(Job(lambda _, w=w, k=k: ran.append((w, k)), work=w)) for k, w in enumerate([900, 5, 900, 5])
    ]
    release()
    for future in futures:
        future.result(timeout=60)
    assert ran == [(5, 1), (5, 3), (900, 0), (900, 2)]


def test_a_small_job_on_the_same_model_runs_between_a_large_ones_batches():
    # One long file held every visitor's pair for as long as its encoder batches took.
    thread, order = ModelThread(), []
    waiting = {}

    def large(between_batches):
        waiting["small"] = thread.submit(Job(lambda _: order.append("small"), work=SMALL_WORK, model="m"))
        waiting["big"] = thread.submit(Job(lambda _: order.append("big"), work=SMALL_WORK + 1, model="m"))
        waiting["other"] = thread.submit(Job(lambda _: order.append("other model"), work=1, model="n"))
        order.append("batch 1")
        between_batches()  # the next encoder batch
        order.append("batch 2")

    thread.submit(Job(large, work=10**6, model="m")).result(timeout=60)
    for future in waiting.values():
        future.result(timeout=60)
    assert order[:3] == ["batch 1", "small", "batch 2"]
    assert order[3:] == ["other model", "big"]  # after it, smallest first


def test_past_its_deadline_a_job_stops_at_its_next_batch_and_frees_the_thread(monkeypatch):
    monkeypatch.setattr(runner, "DEADLINE_S", -1)  # past at the first batch, whatever the machine's speed
    thread, batches = ModelThread(), []

    def long(between_batches):
        for k in range(1000):
            between_batches()
            batches.append(k)

    with pytest.raises(DeadlineExceeded):
        thread.submit(Job(long)).result(timeout=60)
    assert batches == []
    assert thread.submit(Job(lambda _: "next")).result(timeout=60) == "next"


def test_a_request_past_its_deadline_reads_one_sentence_that_says_so(monkeypatch):
    monkeypatch.setattr(runner, "DEADLINE_S", -1)

    def long(between_batches):
        between_batches()

    with pytest.raises(SpaceError) as raised:
        runner.run_job(Job(long), "score_file", owner="a visitor")
    assert str(raised.value) == STOPPED and f"stopped after {DEADLINE_S} s of scoring" in STOPPED
    assert runner.run_job(Job(lambda _: "free"), "score_file", owner="a visitor") == "free"
