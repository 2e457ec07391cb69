"""Keep memory bounded on large corpora: give freed heap back to the OS, cap oneDNN's kernel cache.

Each chunk of pairs allocates and frees hundreds of MB of embeddings in tensors of many sizes; glibc keeps the
freed pages in fragmented arenas, so peak RSS crept up with the number of chunks (measured on 40k pairs in
bfloat16: 1,593 MB without trimming, 1,423 MB with it). ``malloc_trim`` returns them; elsewhere it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        return None


def release_free_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


#: Kernels oneDNN keeps per process for reduced-precision matmuls on CPU (its default is 1,024). Each new
#: (batch, length) shape adds one, so over a large corpus the cache grew by hundreds of MB; with 64 the
#: growth of peak RSS from 10k to 100k pairs in bfloat16 fell from 340 to 183 MB at the same speed (measured
#: on 2 cores; README, section Speed and memory).
ONEDNN_KERNEL_CACHE = "64"


def limit_kernel_cache() -> None:
    """Cap oneDNN's kernel cache unless the user set ``ONEDNN_PRIMITIVE_CACHE_CAPACITY``; oneDNN reads it when
    it creates its first kernel, so this only takes effect before the first reduced-precision matmul."""
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_KERNEL_CACHE)
