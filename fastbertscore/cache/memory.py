"""An in-memory cache of sentence embeddings, so texts scored again (the references of every system in a
multi-system evaluation) are not embedded again. There is one per model, precision, layer and window (kept by
:mod:`fastbertscore.models.shared` for every scorer built on them), so a text's token ids are a complete key. Entries are kept in host memory whatever
device they were computed on; the embedder hands a hit back on its encoder's device.

It is a segmented LRU: a new text waits in a probation segment and moves to a protected one the first time it is
asked for again. Texts seen once (most candidates) leave first, so a stream of them never pushes out the texts
that recur (the references), and a cache much smaller than the corpus still holds what is scored again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import torch

#: The part of the cache that texts asked for again may take; the rest holds new texts on probation.
PROTECTED_SHARE = 0.8


class EmbeddingCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._probation: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self._protected: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()
        self._protected_bytes = 0
        self._lock = threading.Lock()  # scorers on several threads may share the cache

    def resize(self, max_bytes: int) -> None:
        """Hold up to ``max_bytes`` from now on (the least recently used texts leave if it holds more)."""
        with self._lock:
            self.max_bytes = max_bytes
            self._evict()

    def get(self, ids: list[int]) -> torch.Tensor | None:
        with self._lock:
            return self._get(tuple(ids))

    def _get(self, key: tuple[int, ...]) -> torch.Tensor | None:
        found = self._protected.get(key)
        if found is not None:
            self._protected.move_to_end(key)
        else:
            found = self._probation.pop(key, None)
            if found is None:
                self.misses += 1
                return None
            self._protect(key, found)
        self.hits += 1
        return found

    def put(self, ids: list[int], embedding: torch.Tensor) -> None:
        size = _size(embedding)
        if size > self.max_bytes:
            return
        key = tuple(ids)
        # A host copy: a GPU's memory is not spent on the cache, and a slice would keep its whole batch alive.
        copy = embedding.detach().to("cpu", copy=True)
        with self._lock:
            if key in self._probation or key in self._protected:
                return
            self._probation[key] = copy
            self.bytes += size
            self._evict()

    def _protect(self, key: tuple[int, ...], embedding: torch.Tensor) -> None:
        """Move a text asked for again to the protected segment; past its share, the protected segment's least
        recently used texts go back on probation."""
        self._protected[key] = embedding
        self._protected_bytes += _size(embedding)
        while self._protected_bytes > PROTECTED_SHARE * self.max_bytes and len(self._protected) > 1:
            old_key, old = self._protected.popitem(last=False)
            self._protected_bytes -= _size(old)
            self._probation[old_key] = old

    def _evict(self) -> None:
        while self.bytes > self.max_bytes:
            if self._probation:
                _, old = self._probation.popitem(last=False)
            else:
                _, old = self._protected.popitem(last=False)
                self._protected_bytes -= _size(old)
            self.bytes -= _size(old)

    def __len__(self) -> int:
        return len(self._probation) + len(self._protected)


def _size(embedding: torch.Tensor) -> int:
    return embedding.numel() * embedding.element_size()
