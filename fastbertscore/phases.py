"""Where the time of a score call goes: tokenize, weights, plan, encoder, pad and match.

``with fastbertscore.phase_times() as seconds: scorer.score(cands, refs)`` fills ``seconds`` with the wall time
each phase of the pipeline took in that block (``benchmarks/host_path.py`` prints it beside the whole call). Off,
a phase costs one context-variable read. On a GPU each phase waits for the device at its end while timing, so the
phases add up to the call (and the call runs a little slower than untimed).

Example:
    >>> with phase_times() as seconds:
    ...     with phase("tokenize"):
    ...         pass
    >>> list(seconds)
    ['tokenize']
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

import torch

_SECONDS: ContextVar[dict[str, float] | None] = ContextVar("fastbertscore_phase_seconds", default=None)


@contextlib.contextmanager
def phase_times() -> Iterator[dict[str, float]]:
    """While entered, every pipeline phase adds its wall time (seconds) to the dict it yields, by name."""
    seconds: dict[str, float] = {}
    token = _SECONDS.set(seconds)
    try:
        yield seconds
    finally:
        _SECONDS.reset(token)


@contextlib.contextmanager
def phase(name: str, device: torch.device | None = None) -> Iterator[None]:
    """Time the block as phase ``name`` when :func:`phase_times` is collecting (waiting for ``device`` if CUDA)."""
    seconds = _SECONDS.get()
    if seconds is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        if device is not None and device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start
