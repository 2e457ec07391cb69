"""The signature of a score: every setting that can change a number, plus library versions (as sacrebleu's).

``str(signature)`` is the long form, :meth:`Signature.short` the short one, and :attr:`Signature.hash` the
``bert-score``-compatible hash code: bert-score's own fields first, then a suffix for each of our settings
that moves a number away from what bert-score would compute (precision, window mode and its stride, an idf
mapping, the rescaling baseline's content).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar

from fastbertscore.hashing import get_hash


def digest(data: bytes) -> str:
    """Eight hex digits of sha256: enough to tell two tables or mappings apart in a hash code."""
    return hashlib.sha256(data).hexdigest()[:8]


def mapping_digest(weights: Mapping[int, float]) -> str:
    return digest(repr(sorted((int(k), float(v)) for k, v in weights.items())).encode())


@dataclass(frozen=True)
class Signature:
    """What a score depends on. Every field is a string, so the forms are stable and easy to diff."""

    model: str
    layer: str  # "3"; "3 (registry)" when the user registry chose it; "(all layers returned)" with all_layers
    idf: str  # "no", "yes" (counted over sentences), "map:<digest>"
    rescale: str  # "no", "baseline:<digest> (<source>)", "custom:<digest> (<path>)"
    lang: str
    tokenizer: str  # "slow" or "fast"
    long_inputs: str  # "truncate", "window(stride=N)", "error"
    dtype: str  # the resolved precision, never "auto"
    version: str
    transformers: str
    torch: str

    _SHORT: ClassVar[dict[str, str]] = {
        "model": "m",
        "layer": "l",
        "idf": "idf",
        "rescale": "r",
        "lang": "lang",
        "tokenizer": "tok",
        "long_inputs": "long",
        "dtype": "dtype",
        "version": "v",
        "transformers": "hf",
        "torch": "pt",
    }

    def __str__(self) -> str:
        return "|".join(f"{f.name}:{getattr(self, f.name)}" for f in fields(self))

    def short(self) -> str:
        return "|".join(f"{self._SHORT[f.name]}:{getattr(self, f.name).split(' (')[0]}" for f in fields(self))

    @property
    def hash(self) -> str:
        """bert-score's hash code, with a suffix for each number-changing setting bert-score does not have."""
        rescaled = self.rescale != "no"
        return get_hash(
            self.model,
            self.layer.split()[0],
            self.idf != "no",
            rescaled,
            self.rescale.startswith("custom:"),
            self.tokenizer == "fast",
            idf_map=self.idf if self.idf.startswith("map:") else None,
            long_inputs=self.long_inputs,
            dtype=self.dtype,
            baseline=self.rescale.split(":")[1].split()[0] if rescaled else None,
        )
