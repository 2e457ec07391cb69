"""The signature of a score: every setting that can change a number, plus library versions (as sacrebleu's).

``str(signature)`` is the long form, :meth:`Signature.short` the short one, and :attr:`Signature.hash` the
``bert-score``-compatible hash code: bert-score's own fields first, then a suffix for each of our settings
that moves a number away from what bert-score would compute (precision, window mode and its stride, an idf
mapping, the rescaling baseline's content).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from fastbertscore.hashing import get_hash


def digest(data: bytes) -> str:
    """Eight hex digits of sha256: enough to tell two tables or mappings apart in a hash code."""
    return hashlib.sha256(data).hexdigest()[:8]


def mapping_key(weights: Mapping[int, float]) -> tuple[float | None, tuple[tuple[int, float], ...]]:
    """What decides the numbers of a user's idf mapping: its default weight (a ``defaultdict``'s; ``None`` for a
    plain mapping) and its weights by token id, sorted. Mappings with equal keys weigh every token alike; a
    ``defaultdict`` and a plain mapping of the same items do not (the plain one has no weight for other tokens).
    For a mapping the settings have checked (``check_idf_mapping``): no second check, as a key is made per call."""
    factory = getattr(weights, "default_factory", None)
    default = None if factory is None else float(factory())
    return default, tuple(sorted((int(k), float(v)) for k, v in weights.items()))


def mapping_digest(weights: Mapping[int, float]) -> str:
    """The digest of an idf mapping's weights and, for a ``defaultdict``, of its default weight too."""
    default, values = mapping_key(weights)
    return digest((repr(list(values)) + ("" if default is None else f" default {default!r}")).encode())


@dataclass(frozen=True)
class Signature:
    """What a score depends on, as typed fields; :meth:`__str__`, :meth:`short` and :attr:`hash` are written from
    them and never read back."""

    model: str  # the Hub id, or a local folder's resolved path
    layer: int
    idf: Literal["no", "yes", "map"]  # none, counted over sentences, or a user's {token_id: weight} mapping
    rescale: Literal["no", "baseline", "custom"]  # none, a published table (shipped, cached or Hub), a user's file
    lang: str | None
    fast_tokenizer: bool
    long_inputs: Literal["truncate", "window", "error"]
    dtype: str  # the resolved precision, never "auto"
    version: str
    transformers: str
    torch: str
    layer_from_registry: bool = False  # the user's tuned-layer registry chose the layer
    all_layers: bool = False  # scores of every layer were returned
    idf_digest: str | None = None  # with idf="map": the mapping's digest
    baseline_digest: str | None = None  # with rescaling: the table's content digest
    baseline_source: str | None = None  # with rescaling: where the table was read (for people, not the hash)
    window_stride: int | None = None  # with long_inputs="window": tokens neighbouring windows share

    def raw(self) -> Signature:
        """The signature of the same scorer's raw (not rescaled) numbers."""
        return replace(self, rescale="no", baseline_digest=None, baseline_source=None)

    def _forms(self) -> list[tuple[str, str, str]]:
        """Each field as (long name, short name, short text); the long form adds its details in parentheses."""
        layer = str(self.layer)
        idf = f"map:{self.idf_digest}" if self.idf == "map" else self.idf
        rescale = "no" if self.rescale == "no" else f"{self.rescale}:{self.baseline_digest}"
        return [
            ("model", "m", self.model),
            ("layer", "l", layer),
            ("idf", "idf", idf),
            ("rescale", "r", rescale),
            ("lang", "lang", self.lang or "-"),
            ("tokenizer", "tok", "fast" if self.fast_tokenizer else "slow"),
            ("long_inputs", "long", self._long_inputs()),
            ("dtype", "dtype", self.dtype),
            ("version", "v", self.version),
            ("transformers", "hf", self.transformers),
            ("torch", "pt", self.torch),
        ]

    def _long_inputs(self) -> str:
        if self.long_inputs == "window" and self.window_stride is not None:
            return f"window(stride={self.window_stride})"
        return self.long_inputs

    def __str__(self) -> str:
        details = {
            "layer": " (registry)" * self.layer_from_registry + " (all layers returned)" * self.all_layers,
            "rescale": f" ({self.baseline_source})" if self.rescale != "no" and self.baseline_source else "",
        }
        return "|".join(f"{name}:{text}{details.get(name, '')}" for name, _, text in self._forms())

    def short(self) -> str:
        return "|".join(f"{short}:{text}" for _, short, text in self._forms())

    @cached_property
    def hash(self) -> str:
        """bert-score's hash code, with a suffix for each number-changing setting bert-score does not have (made on
        first use)."""
        return get_hash(
            self.model,
            self.layer,
            self.idf != "no",
            self.rescale != "no",
            self.rescale == "custom",
            self.fast_tokenizer,
            idf_map=f"map:{self.idf_digest}" if self.idf == "map" else None,
            long_inputs=self._long_inputs(),
            dtype=self.dtype,
            baseline=self.baseline_digest if self.rescale != "no" else None,
        )
