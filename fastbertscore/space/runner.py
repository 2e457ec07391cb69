"""The one thread every request's model work runs on, and the one-line message a failure shows the user.

Gradio hands requests to up to 40 worker threads; when each of them ran the encoder, each got its own malloc
arena and OpenMP team, and the Space's memory kept growing. So every handler's model step runs here, on one
thread, and whatever it raises reaches the page as a :class:`SpaceError`: one line, never a stack trace. After
each request the thread hands freed heap back to the OS (:func:`~fastbertscore.heap.release_free_memory`): a
scoring call keeps it for the next one (a batch job's next call reuses it), but a server's next request may be of
any size, hours later.

The thread takes waiting requests smallest work first (then first come), at most
:data:`~fastbertscore.space.limits.JOBS_PER_SESSION` per visitor session. A request stops between two encoder
batches once it has scored for :data:`~fastbertscore.space.limits.DEADLINE_S`; and while a larger request runs, a
small one waiting on the same model (at most :data:`~fastbertscore.space.limits.SMALL_WORK`) runs between two of
its encoder batches, so one long file never holds every visitor (the time lent does not count against its deadline).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fastbertscore.heap import release_free_memory
from fastbertscore.pipeline.budget import BatchHook
from fastbertscore.space.limits import DEADLINE_S, JOBS_PER_SESSION, SMALL_WORK

logger = logging.getLogger(__name__)

Result = TypeVar("Result")


class SpaceError(Exception):
    """A failed request as its user reads it: one line that says what went wrong."""


class DeadlineExceeded(TimeoutError):
    """A request stopped between two encoder batches: it had scored for :data:`DEADLINE_S` seconds."""


#: What a visitor reads when a request of theirs ran past its deadline.
STOPPED = (
    f"This request was stopped after {DEADLINE_S} s of scoring, the Space's limit per request, and the model is "
    "free again: score fewer or shorter texts"
)
#: What a visitor reads when another request of their session is still waiting or running.
BUSY = (
    "Your previous request is still waiting or running: the Space takes one request per visitor at a time, "
    "so wait for its result before sending another"
)


@dataclass(frozen=True)
class Job(Generic[Result]):
    """A checked request's model step, the work it was counted at (tokens of the default model) and its model."""

    step: Callable[[BatchHook], Result]
    work: int = 0
    model: str | None = None

    def __call__(self, between_batches: BatchHook = None) -> Result:
        """Run the step here (``between_batches``: the hook its encoder batches call; none by default)."""
        return self.step(between_batches)


#: What a handler does with its checked model step: run it here (:func:`here`), or queue it on the model thread.
Run = Callable[[Job[Result]], Result]


def here(job: Job[Result]) -> Result:
    """Run ``job`` on this thread, with no hook between its encoder batches (a handler's default ``run``)."""
    return job()


@dataclass
class _Entry:
    job: Job[Any]
    owner: str | None
    future: Future[Any] = field(default_factory=Future)
    deadline: float | None = None  # set at the first encoder batch


class ModelThread:
    """The one model thread and its queue (see the module's description)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._waiting: list[tuple[int, int, _Entry]] = []  # a heap of (work, arrival, entry)
        self._arrivals = itertools.count()
        self._owners: Counter[str] = Counter()  # jobs waiting or running per session
        self._thread: threading.Thread | None = None

    @property
    def waiting(self) -> int:
        """How many jobs wait for the thread (the one running not counted)."""
        with self._changed:
            return len(self._waiting)

    def submit(self, job: Job[Result], owner: str | None = None) -> Future[Result]:
        """Queue ``job`` for the session ``owner`` (``None``: counted for no session).

        Raises:
            SpaceError: ``owner`` has :data:`JOBS_PER_SESSION` jobs waiting or running already.
        """
        entry = _Entry(job, owner)
        with self._changed:
            if owner is not None:
                if self._owners[owner] >= JOBS_PER_SESSION:
                    raise SpaceError(BUSY)
                self._owners[owner] += 1
            heapq.heappush(self._waiting, (job.work, next(self._arrivals), entry))
            if self._thread is None:  # started on first use: importing the Space starts no thread
                self._thread = threading.Thread(target=self._serve, name="fastbertscore-model", daemon=True)
                self._thread.start()
            self._changed.notify()
        return entry.future

    def _serve(self) -> None:
        while True:
            with self._changed:
                while not self._waiting:
                    self._changed.wait()
                entry = heapq.heappop(self._waiting)[2]
            self._run(entry, lend=True)

    def _run(self, entry: _Entry, *, lend: bool) -> None:
        try:
            if entry.future.set_running_or_notify_cancel():
                try:
                    try:
                        result = entry.job(functools.partial(self._between_batches, entry, lend))
                    finally:
                        if lend:  # a request (with the small ones lent its time) hands its freed heap back
                            release_free_memory()
                except BaseException as error:  # noqa: BLE001 - the caller's future raises it
                    entry.future.set_exception(error)
                else:
                    entry.future.set_result(result)
        finally:
            if entry.owner is not None:
                with self._changed:
                    self._owners[entry.owner] -= 1
                    if self._owners[entry.owner] <= 0:
                        del self._owners[entry.owner]

    def _between_batches(self, entry: _Entry, lend: bool) -> None:
        """The hook of ``entry``'s encoder batches: its deadline, then the small jobs waiting (when ``lend``)."""
        now = time.monotonic()
        if entry.deadline is None:
            entry.deadline = now + DEADLINE_S
        if now > entry.deadline:
            raise DeadlineExceeded(f"stopped after {DEADLINE_S} s of scoring")
        while lend and (small := self._take_small(entry.job.model)) is not None:
            self._run(small, lend=False)
        entry.deadline += time.monotonic() - now  # the time lent does not count

    def _take_small(self, model: str | None) -> _Entry | None:
        with self._changed:
            for k, (work, _, waiting) in enumerate(self._waiting):
                if work <= SMALL_WORK and waiting.job.model == model:
                    self._waiting[k] = self._waiting[-1]
                    self._waiting.pop()
                    heapq.heapify(self._waiting)
                    return waiting
        return None


MODEL_THREAD = ModelThread()


# An absolute path (not a URL's, not a Hub id's "org/name"), in quotes (spaces and all) or bare: a server's folder,
# never shown. POSIX ("/srv/a/b", "x:/srv/a/b"), home ("~/a/b"), Windows ("C:\\a\\b", "C:/a/b", "\\\\host\\a\\b").
_ROOT = r"(?:/|~[\w.-]*/|[A-Za-z]:[\\/]|\\\\)"
_QUOTED = re.compile(rf"(['\"]){_ROOT}(?:[^'\"]*[\\/])?([^'\"\\/]+)\1")
_BARE = re.compile(rf"(?<![\w.~/\\-]){_ROOT}(?:[^\s'\"\\/:,;()]+[\\/])+([^\s'\"\\/:,;()]+)")


def hide_paths(text: str) -> str:
    """``text`` with every absolute path shortened to its last part: a user reads the file's name, never where
    the server keeps it.

    Example:
        >>> hide_paths("cannot read '/tmp/gradio/0a1b/refs.txt' (see https://huggingface.co/roberta-large)")
        "cannot read 'refs.txt' (see https://huggingface.co/roberta-large)"
        >>> hide_paths("in '/srv/my space/a.tsv', file:/srv/b/c.json, ~/x/y.txt and C:\\\\Users\\\\me\\\\z.csv")
        "in 'a.tsv', file:c.json, y.txt and z.csv"
    """
    return _BARE.sub(r"\1", _QUOTED.sub(r"\1\2\1", text))


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (its type's name when it has none), with no server path
    (:func:`hide_paths`), capitalised where it starts with a word (never ``Dtype='float16'``).

    Example:
        >>> first_line(ValueError("the reference is empty\\nmore detail"))
        'The reference is empty'
        >>> first_line(ValueError("dtype='float16' is not supported"))
        "dtype='float16' is not supported"
    """
    text = hide_paths((str(error).strip() or type(error).__name__).splitlines()[0])
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.isalpha() else text


def failed(name: str) -> str:
    """The fixed sentence a visitor reads when ``name`` failed for a reason of the server's own (logged there)."""
    return f"{name} failed on the server; what went wrong is in its log, not shown here"


def user_errors(function: Callable[..., Result], name: str | None = None) -> Callable[..., Result]:
    """``function``, any failure of it one :class:`SpaceError`: bad input gets the check's own message (no server
    path), a request past its deadline :data:`STOPPED`, and anything else :func:`failed`'s fixed sentence, the
    detail in the server's log only."""
    shown = name or str(getattr(function, "__name__", "the request"))

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Result:
        try:
            return function(*args, **kwargs)
        except SpaceError as error:
            raise SpaceError(hide_paths(str(error))) from None
        except DeadlineExceeded:
            raise SpaceError(STOPPED) from None
        except (ValueError, TypeError) as error:
            raise SpaceError(first_line(error)) from None
        except Exception:
            logger.exception("%s failed", shown)
            raise SpaceError(failed(shown)) from None

    return run


def run_job(job: Job[Result], name: str, owner: str | None = None) -> Result:
    """Run ``job`` on the model thread for the session ``owner`` and wait for it; any failure one
    :class:`SpaceError` (:func:`user_errors`)."""
    return user_errors(lambda: MODEL_THREAD.submit(job, owner).result(), name)()


def on_model_thread(function: Callable[..., Result], name: str | None = None) -> Callable[..., Result]:
    """``function`` run on the model thread (as a job of no counted work, for no session), any failure one
    :class:`SpaceError` (:func:`user_errors`)."""

    def submit(*args: Any, **kwargs: Any) -> Result:
        return MODEL_THREAD.submit(Job(lambda _: function(*args, **kwargs))).result()

    return user_errors(functools.wraps(function)(submit), name)
