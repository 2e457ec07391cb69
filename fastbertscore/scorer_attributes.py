"""The read-only attributes ``bert_score.BERTScorer`` has, read from a scorer's settings and loaded model."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar, cast

import torch

from fastbertscore import assembly
from fastbertscore.signature import Signature

if TYPE_CHECKING:
    from fastbertscore.idf import IdfWeights
    from fastbertscore.pipeline.embedder import Embedder
    from fastbertscore.settings import Settings

T = TypeVar("T")


def _attribute(get: Callable[[ScorerAttributes], T], doc: str | None = None) -> T:
    """A read-only attribute, typed as what ``get`` reads."""
    return cast(T, property(get, doc=doc))


class ScorerAttributes:
    """What a :class:`~fastbertscore.BERTScorer` shows of its settings and model, as bert-score's scorer does."""

    settings: Settings
    embedder: Embedder
    _idf: IdfWeights | None
    #: Kept between calls for every caller of its settings (the front door sets it): ``compute_idf`` refuses.
    shared: bool = False

    def _loaded_baseline(self) -> tuple[torch.Tensor, tuple[str, str, str]]:
        raise NotImplementedError  # the scorer's: its baseline, read on first use

    lang = _attribute(lambda self: self.settings.lang)
    idf = _attribute(lambda self: self.settings.idf)
    model_type = _attribute(lambda self: self.settings.model_type_or_default)
    num_layers = _attribute(lambda self: self.embedder.encoder.num_layers)
    batch_size = _attribute(lambda self: self.settings.batch_size)
    nthreads = _attribute(lambda self: self.settings.nthreads)
    all_layers = _attribute(lambda self: self.settings.all_layers)
    device = _attribute(lambda self: self.settings.resolved_device)
    dtype = _attribute(
        lambda self: self.settings.resolved_dtype,
        doc='The precision the encoder runs in: ``dtype`` with "auto" resolved for this device (what the hash names).',
    )
    long_inputs = _attribute(lambda self: self.settings.long_inputs)
    rescale_with_baseline = _attribute(lambda self: self.settings.rescale_with_baseline)
    baseline_path = _attribute(lambda self: self.settings.baseline_path)
    use_custom_baseline = _attribute(lambda self: self.settings.baseline_path is not None)
    use_fast_tokenizer = _attribute(lambda self: self.settings.use_fast_tokenizer)
    tokenizer = _attribute(lambda self: self.embedder.tokenizer)
    max_length = _attribute(lambda self: self.embedder.max_length, doc="Longest input in tokens, specials included.")
    token_limit = _attribute(
        lambda self: self.embedder.token_limit, doc="Where texts are cut when tokenized, if at all."
    )
    cache = _attribute(lambda self: self.embedder.cache, doc="The embedding cache (memory, disk or both), if any.")
    disk_cache = _attribute(
        lambda self: self.embedder.disk_cache, doc="The embedding cache on disk, with ``cache_dir``."
    )
    baseline_vals = _attribute(lambda self: self._loaded_baseline()[0], doc="The baseline's rows (read on first use).")

    @cached_property
    def signature(self) -> Signature:
        """Every setting behind this scorer's numbers (long form ``str()``, short form ``.short()``): made on first
        use, as nothing it names changes after (:meth:`~fastbertscore.BERTScorer.compute_idf` lets it go)."""
        baseline = self._loaded_baseline()[1] if self.rescale_with_baseline else None  # its digest: read the table
        return assembly.signature_of(self.settings, self.embedder, self._idf.mapping if self._idf else None, baseline)

    @property
    def hash(self) -> str:
        """bert-score's hash code, plus a suffix for each number-changing setting bert-score lacks (see
        :class:`~fastbertscore.Signature`)."""
        return self.signature.hash

    def __repr__(self) -> str:
        return f"{type(self).__name__}(hash={self.hash}, batch_size={self.batch_size}, nthreads={self.nthreads})"
