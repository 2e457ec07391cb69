"""Keep memory bounded on large corpora: give freed heap back to the OS between steps, and within a step, once the
process grows past what the call's budget accounts for; a call ends as its last step does, under its ceiling.

Each step of a call allocates and frees embeddings and encoder activations in tensors of many sizes; glibc keeps
the freed pages in fragmented arenas, so RSS can creep up with the number of steps. ``malloc_trim`` returns
them; elsewhere it is a no-op. Each trim costs the pages faulted in again, and on a CPU the next step would reuse
those pages, so a trim happens only past the call's ceiling (:func:`keep_under_ceiling`, given the call's
:data:`Ceiling`): between steps for every call, and after each encoder batch and matching step too for a call with
``memory_mb``, where the same fragmentation grows a small budget's RSS well past what the call holds. A call
does not trim at its end either: the next call reuses those pages (``datasets.map`` calls ``compute`` once per
batch, and a trim after each cost it 1.1 million page faults over the WMT file, about 5% of its time). A server
that waits between requests trims after each (the Space's model thread). docs/speed.md has the measurements.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Callable
from functools import lru_cache

#: A call's resident-memory ceiling: the bytes the process may reach, read when asked (``None``: no ceiling).
Ceiling = Callable[[], int] | None


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        return None


def can_release() -> bool:
    """Whether freed heap can be handed back to the OS here (glibc's ``malloc_trim``)."""
    return _malloc_trim() is not None


def release_free_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def resident_bytes() -> int | None:
    """The process's resident memory (Linux: ``/proc/self/statm``), or ``None`` where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def keep_under_ceiling(limit: Ceiling) -> None:
    """Called after each encoder batch and matching step with the call's ceiling: hands freed heap back to the OS
    if the process's resident memory is above ``limit()`` bytes (``None``: no ceiling, nothing done)."""
    if limit is None or not can_release():
        return
    resident = resident_bytes()
    if resident is not None and resident > limit():
        release_free_memory()
