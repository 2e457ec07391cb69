"""Embedding caches: :mod:`.memory` (a bounded LRU in this process) and :mod:`.disk` (content-addressed files
shared between runs and processes, keyed by the encoder's weights and settings). The loaded models themselves
are cached by :func:`fastbertscore.cached_scorer`."""
