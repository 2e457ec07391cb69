"""The loaded model as one frozen value: tokenizer, encoder, max length, window, caches and token budget.

:func:`fastbertscore.assembly.build_embedder` builds it from :class:`~fastbertscore.Settings`; every pipeline step
takes it, so nothing below the scorer needs a ``BERTScorer``. Beyond holding the model it does the first two steps
of every path: :meth:`Embedder.prepare` (tokenize, check lengths, weigh) and :meth:`Embedder.embed`, the one way
distinct texts become embeddings (pairs, all-pairs, explanations and ``token_embeddings`` all call it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch
from tqdm.auto import tqdm

from fastbertscore.heap import Ceiling
from fastbertscore.models.encoder import Encoder
from fastbertscore.phases import phase
from fastbertscore.pipeline.budget import BatchHook, Budget
from fastbertscore.pipeline.forward import encode, pad_id_of
from fastbertscore.pipeline.prepare import Names, Prepared, check_long, text_weights, warn_unknown
from fastbertscore.pipeline.tokens import tokenize, warn_truncated
from fastbertscore.pipeline.weights import Weights
from fastbertscore.pipeline.windows import WindowSpec
from fastbertscore.validate import LongInputs, check_positive_int

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from fastbertscore.cache.disk import DiskCache, EmbeddingStore


@dataclass(frozen=True)
class Embedder:
    """A model loaded for scoring; shared by every scorer with the same model settings, never changed after."""

    tokenizer: PreTrainedTokenizerBase
    encoder: Encoder
    max_length: int | None  # longest input in tokens, special tokens included (None: unlimited)
    window: WindowSpec | None  # how long texts are cut into windows (None without a max length)
    long_inputs: LongInputs
    cache: EmbeddingStore | None  # an embedding cache (memory, disk or both)
    max_tokens: int  # padded tokens per encoder batch
    weights: Weights  # token weights: plain as built (0 for [CLS]/[SEP]-style tokens, 1 for the others), or a call's
    disk_cache: DiskCache | None = None  # the disk layer of ``cache``, if any (its hit counts and folder)
    memory_mb: int | None = None  # what one call may hold (None: sized to the device); changes no number
    budget: Budget = field(default_factory=Budget)  # a call's budget (:meth:`for_call`); changes no number

    @property
    def plain(self) -> torch.Tensor:
        """``(vocab,)`` plain weights: 0 for [CLS]/[SEP]-style tokens, 1 for the others."""
        return self.weights.fallback

    @property
    def token_limit(self) -> int | None:
        """Where texts are cut when tokenized: the max length with ``"truncate"``, nowhere otherwise."""
        return self.max_length if self.long_inputs == "truncate" else None

    @property
    def active_window(self) -> WindowSpec | None:
        return self.window if self.long_inputs == "window" else None

    @property
    def n_layers(self) -> int:
        """Layers scored at once: ``L + 1`` with all layers, else 1."""
        return self.encoder.depth + 1 if self.encoder.all_layers else 1

    def for_call(
        self, batch_size: int | None, idf: torch.Tensor | None = None, between_batches: BatchHook = None
    ) -> Embedder:
        """This loaded model as one call uses it (caches shared): with the call's budget on its device (see
        :meth:`Budget.for_device`; ``batch_size`` None: the device's) and its token weights (``idf``: a ``(vocab,)`` idf
        table; else plain);
        ``between_batches()`` is called before each encoder batch, and an exception it raises stops the call."""
        width = self.encoder.width * self.n_layers
        budget = Budget.for_device(
            self.encoder.device,
            batch_size=None if batch_size is None else check_positive_int(batch_size, "batch_size"),
            max_tokens=self.max_tokens,
            width=width,
            memory_mb=self.memory_mb,
        )
        budget = budget if between_batches is None else replace(budget, between_batches=between_batches)
        return replace(self, budget=budget, weights=self.weighing(idf))

    def weighing(self, idf: torch.Tensor | None) -> Weights:
        """The token weights of a call that weighs by ``idf`` (``None``: plain), plain ones the fallback."""
        return Weights(self.plain if idf is None else idf, self.plain)

    def prepare(self, texts: list[str], names: Names) -> Prepared:
        """Tokenize distinct ``texts``, cut or check long ones, warn of those that are mostly the unknown token, and
        weigh their tokens by :attr:`weights`; ``names`` says how the caller names each text in errors."""
        with phase("tokenize"):
            tok = tokenize(self.tokenizer, texts, self.token_limit)
        if self.long_inputs == "truncate":
            if tok.truncated:
                warn_truncated(len(tok.truncated), len(tok.ids), self.max_length, self.tokenizer.model_max_length)
        elif self.max_length is not None:
            check_long(tok, self.max_length, self.long_inputs, names)
        warn_unknown(tok, self.tokenizer, names)
        with phase("weights"):
            return text_weights(tok, self.weights, names)

    def embed(
        self,
        ids: Sequence[list[int]],
        wanted: Sequence[int],
        *,
        progress: tqdm | None = None,
        ceiling: Ceiling = None,
    ) -> dict[int, torch.Tensor]:
        """Unit-norm embeddings ``{u: (T, D)}`` (``(T, L + 1, D)`` with all layers) of the texts ``wanted``
        (indices into ``ids``, the token ids of distinct texts) on the encoder's device, in encoder batches of
        its :attr:`budget`, the heap kept under the call's ``ceiling``; through the cache when there is one: caches keep
        host copies, and a hit is handed back on the encoder's device."""

        budget = self.budget

        def run(units: Sequence[int]) -> dict[int, torch.Tensor]:
            return encode(
                self.encoder,
                ids,
                units,
                pad_id=pad_id_of(self.tokenizer),
                batch_size=budget.batch_size,
                max_tokens=budget.max_tokens,
                window=self.active_window,
                progress=progress,
                between_batches=budget.between_batches,
                ceiling=ceiling,
            )

        if self.cache is None:
            return run(wanted)
        device = self.encoder.device
        found = {u: self.cache.get(ids[u]) for u in wanted}
        hits = {u: e.to(device) for u, e in found.items() if e is not None}
        missing = [u for u, e in found.items() if e is None]
        if progress is not None:
            progress.update(len(hits))
        fresh = run(missing)
        for u, e in fresh.items():
            self.cache.put(ids[u], e)
        return {**hits, **fresh}
