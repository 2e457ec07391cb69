"""Embedding caches: :mod:`.memory` (a bounded LRU in this process) and :mod:`.disk` (content-addressed files
shared between runs and processes, keyed by the encoder's weights and settings). The loaded models themselves
are kept once per id by :mod:`fastbertscore.models.shared`, which keeps one in-memory embedding cache per (model,
precision, layer) beside them."""
