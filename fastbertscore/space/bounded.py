"""A small thread-safe cache of at most ``size`` entries (and, if given, ``max_bytes`` of them as text), the least
recently used dropped first: the Space keeps no state that grows with the number of requests it has served."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

Value = TypeVar("Value")


def weight(key: Hashable, value: object) -> int:
    """What an entry weighs against ``max_bytes``: its key and value written out (``repr``), which grows with
    whatever they hold."""
    return len(repr(key)) + len(repr(value))


class BoundedCache(Generic[Value]):
    """At most ``size`` entries, and with ``max_bytes`` at most that much of them (:func:`weight`); reading one
    makes it the most recently used.

    Example:
        >>> cache = BoundedCache(2)
        >>> cache.put("a", 1); cache.put("b", 2); cache.get("a"); cache.put("c", 3)
        1
        >>> sorted(cache), len(cache)
        (['a', 'c'], 2)
    """

    def __init__(self, size: int, max_bytes: int | None = None) -> None:
        if size < 1:
            raise ValueError(f"a bounded cache holds at least one entry; got size={size}")
        self.size, self.max_bytes = size, max_bytes
        self._entries: OrderedDict[Hashable, Value] = OrderedDict()
        self._weights: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """What the entries weigh together (:func:`weight`; counted only with ``max_bytes``)."""
        with self._lock:
            return sum(self._weights.values())

    def get(self, key: Hashable) -> Value | None:
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: Hashable, value: Value) -> None:
        """Keep ``value`` (an entry heavier than ``max_bytes`` alone is not kept)."""
        heavy = self.max_bytes is not None and weight(key, value) > self.max_bytes
        with self._lock:
            if heavy:  # kept, it would push out every other entry and itself
                self._entries.pop(key, None)
                self._weights.pop(key, None)
                return
            self._entries[key] = value
            self._entries.move_to_end(key)
            if self.max_bytes is not None:
                self._weights[key] = weight(key, value)
            while len(self._entries) > self.size or (
                self.max_bytes is not None and sum(self._weights.values()) > self.max_bytes
            ):
                old, _ = self._entries.popitem(last=False)
                self._weights.pop(old, None)

    def __iter__(self) -> Iterator[Hashable]:
        """The keys, least recently used first (a copy: the cache may change meanwhile)."""
        with self._lock:
            return iter(list(self._entries))

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
