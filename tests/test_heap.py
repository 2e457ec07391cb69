"""The heap ceiling a call with ``memory_mb`` runs under: freed heap goes back to the OS once the process is past
what the call accounts for, and only then.

Each case runs in a fresh Python process, which makes the heap state it starts from the same on every run: it
allocates 3,000 blocks of 64 KB with glibc's ``malloc`` (below its mmap threshold, so they live in the heap), frees
all but the last (which pins the heap's top, so ``free`` alone cannot shrink it) and reports the resident memory
before and after one :func:`keep_under_ceiling` call.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fastbertscore import heap

pytestmark = pytest.mark.skipif(not heap.can_release(), reason="needs glibc's malloc_trim (Linux)")

CHILD = """
import ctypes, ctypes.util, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("heap", sys.argv[2])  # the module alone: no torch to import
heap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heap)
keep_under_ceiling, resident_bytes = heap.keep_under_ceiling, heap.resident_bytes
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(64 << 10) for _ in range(3000)]
for block in blocks:
    ctypes.memset(block, 1, 64 << 10)  # touched, so resident
for block in blocks[:-1]:
    libc.free(block)
before = resident_bytes()
limit = {"none": None, "below": lambda: 0, "above": lambda: before + (1 << 30)}[sys.argv[1]]
keep_under_ceiling(limit)
print(json.dumps({"before": before, "after": resident_bytes()}))
"""


def run(limit: str) -> dict:
    argv = [sys.executable, "-c", CHILD, limit, heap.__file__]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_past_the_ceiling_freed_heap_goes_back_to_the_os():
    rss = run("below")
    assert rss["before"] - rss["after"] > 150 << 20  # most of the 187 MB freed


@pytest.mark.parametrize("limit", ["none", "above"])
def test_under_the_ceiling_or_without_one_nothing_is_trimmed(limit):
    rss = run(limit)
    assert abs(rss["before"] - rss["after"]) < 16 << 20


#: Frees 187 MB of heap that stays resident (the blocks' last one pins the heap's top), then runs ``work()`` and
#: reports the resident memory before and after it.
AROUND = """
import ctypes, ctypes.util, json
from fastbertscore.heap import resident_bytes
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def around(work):
    blocks = [libc.malloc(64 << 10) for _ in range(3000)]
    for block in blocks:
        ctypes.memset(block, 1, 64 << 10)
    for block in blocks[:-1]:
        libc.free(block)
    before = resident_bytes()
    work()
    print(json.dumps({"before": before, "after": resident_bytes()}))
"""


def run_around(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", AROUND + code, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_call_under_its_ceiling_leaves_the_freed_heap_to_the_next_call(minilm_path):
    # Each call trimmed at its end: datasets.map's next call faulted the same pages in again (1.1 million over the
    # WMT file, about 5% of the run); the next call reuses them, as the next step does.
    rss = run_around(
        "import sys, fastbertscore as fb\n"
        "scorer = fb.BERTScorer(model_type=sys.argv[1], num_layers=3)\n"
        "scorer.score(['The cat sat.'], ['A cat sat.'])\n"
        "around(lambda: scorer.score(['It rains today.'], ['Today it rains.']))\n",
        minilm_path,
    )
    assert rss["before"] - rss["after"] < 64 << 20  # not the 187 MB a trim hands back


def test_the_spaces_model_thread_hands_freed_heap_back_after_each_request():
    # A server's next request may be of any size, hours later: what a request freed goes back before it is answered.
    rss = run_around(
        "from fastbertscore.space.runner import Job, ModelThread\n"
        "around(lambda: ModelThread().submit(Job(lambda _: None)).result(timeout=60))\n"
    )
    assert rss["before"] - rss["after"] > 150 << 20
