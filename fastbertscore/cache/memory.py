"""An in-memory LRU cache of sentence embeddings, so texts scored again (the references of every system in a
multi-system evaluation) are not embedded again. It belongs to one BERTScorer, whose model, layer, precision
and long-input mode are fixed, so a text's token ids are a complete key. Entries are kept in host memory whatever
device they were computed on; the embedder hands a hit back on its encoder's device."""

from __future__ import annotations

from collections import OrderedDict

import torch


class EmbeddingCache:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[tuple[int, ...], torch.Tensor] = OrderedDict()

    def get(self, ids: list[int]) -> torch.Tensor | None:
        key = tuple(ids)
        found = self._items.get(key)
        if found is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return found

    def put(self, ids: list[int], embedding: torch.Tensor) -> None:
        size = embedding.numel() * embedding.element_size()
        if size > self.max_bytes:
            return
        key = tuple(ids)
        if key in self._items:
            return
        # A host copy: a GPU's memory is not spent on the cache, and a slice would keep its whole batch alive.
        self._items[key] = embedding.detach().to("cpu", copy=True)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, old = self._items.popitem(last=False)
            self.bytes -= old.numel() * old.element_size()

    def __len__(self) -> int:
        return len(self._items)
