"""A small thread-safe cache of at most ``size`` entries, the least recently used dropped first: the Space keeps
no state that grows with the number of requests it has served."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

Value = TypeVar("Value")


class BoundedCache(Generic[Value]):
    """At most ``size`` entries; reading one makes it the most recently used.

    Example:
        >>> cache = BoundedCache(2)
        >>> cache.put("a", 1); cache.put("b", 2); cache.get("a"); cache.put("c", 3)
        1
        >>> sorted(cache), len(cache)
        (['a', 'c'], 2)
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a bounded cache holds at least one entry; got size={size}")
        self.size = size
        self._entries: OrderedDict[Hashable, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Value | None:
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: Hashable, value: Value) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

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
