"""The loaded model as one frozen value: tokenizer, encoder, max length, window, caches and token budget.

:func:`fastbertscore.assembly.build_embedder` builds it from :class:`~fastbertscore.Settings`; every pipeline step
takes it, so nothing below the scorer needs a ``BERTScorer``. Its one job beyond holding the model is the shared
first step of every path: :meth:`Embedder.prepare` (tokenize, lengths, weights) and :meth:`Embedder.embed`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from fastbertscore.hardware import free_device_memory
from fastbertscore.pipeline.embed import embed, pad_id_of
from fastbertscore.pipeline.encoder import Encoder
from fastbertscore.pipeline.tokens import Tokenized, tokenize, warn_truncated
from fastbertscore.pipeline.weights import sentence_weights
from fastbertscore.pipeline.windows import WindowSpec

logger = logging.getLogger(__name__)


_MB = 1 << 20


@dataclass(frozen=True)
class Budget:
    """How much work goes into one step and how much memory one call holds; none of it changes a score.

    ``memory_bytes`` bounds what a call holds at once beyond the model and its tokenized texts: a quarter of it
    (``step_share``, at most ``step_cap``) for the texts of the step being matched, a sixteenth each for one
    matching step's similarities and padded copies, ``activation_bytes`` for the encoder's work on one batch
    (``max_tokens`` bounds it), and the rest for the embeddings that later steps need (past that, they spill to
    local disk).
    """

    batch_size: int = 64  # sentences per encoder batch at most
    max_tokens: int = 4096  # padded tokens per encoder batch at most
    memory_bytes: int = 512 * _MB  # held at once by one call: embeddings, matching buffers, a batch's work
    step_cap: int | None = 256 * _MB  # the most one step's texts take (CPU: larger steps do not pay); None: no cap
    explicit: bool = False  # the user gave memory_bytes: a pair larger than a step is then an error
    activation_bytes: int = 0  # the encoder's working memory for one batch of max_tokens

    @property
    def step_share(self) -> int:
        """A quarter of the budget: the most one step's texts may take, and what a given budget must hold for the
        largest pair (past the CPU's step cap, such a pair gets a step of its own)."""
        return self.memory_bytes // 4

    @property
    def step_bytes(self) -> int:
        """What the embeddings of one step's texts may take together."""
        return self.step_share if self.step_cap is None else min(self.step_share, self.step_cap)

    @property
    def match_entries(self) -> int:
        """fp32 entries in one matching step's similarities, and again in its padded copies: a sixteenth each."""
        return max(1, min(1 << 24, self.memory_bytes // 64))

    @property
    def kept_bytes(self) -> int:
        """What the embeddings kept for later steps may take in memory before they spill to disk."""
        return max(0, self.memory_bytes - self.step_bytes - 8 * self.match_entries - self.activation_bytes)

    def accounted_bytes(self, kept_in_memory: int) -> int:
        """What a call holds by this budget's count while ``kept_in_memory`` bytes of embeddings wait for later
        steps: the process growing past it is freed heap not handed back (see :mod:`.heap`)."""
        return self.step_bytes + 8 * self.match_entries + self.activation_bytes + kept_in_memory

    @classmethod
    def for_device(
        cls, device: torch.device, *, batch_size: int, max_tokens: int, width: int, memory_mb: int | None = None
    ) -> Budget:
        """The budget of a call on ``device``: the memory the user gave (``memory_mb``), else an eighth of the
        host's available RAM on CPU (256 MB to 4 GB) or a quarter of the free GPU memory on CUDA (256 MB to 32 GB).
        On CUDA the encoder batches and steps grow with the free memory too: ``width`` (floats per token of an
        embedding) sizes them, and the encoder's work on a batch, about eight embeddings a token in float32."""
        free = free_device_memory(device)
        on_cuda = torch.device(device).type == "cuda"
        if memory_mb is not None:
            memory = memory_mb * _MB
        elif on_cuda:
            memory = min(max(free // 4, 256 * _MB), 32 << 30)
        else:
            memory = min(max(free // 8, 256 * _MB), 4 << 30)
        if on_cuda:  # activations of a batch: ~64 floats a token per unit of width, in a quarter of what is free
            max_tokens = max(max_tokens, min(65536, (free // 4) // (64 * 4 * width)) // 1024 * 1024)
        step_cap = None if on_cuda else cls.step_cap
        return cls(batch_size, max_tokens, memory, step_cap, memory_mb is not None, max_tokens * width * 4 * 8)


@dataclass(frozen=True)
class Weights:
    """Token weights: ``table`` ``(vocab,)`` (idf or plain), ``fallback`` for texts whose weights are all 0."""

    table: torch.Tensor
    fallback: torch.Tensor


@dataclass(frozen=True)
class Prepared:
    """Distinct texts tokenized once, with each text's unnormalised token weights (empty texts: empty)."""

    tok: Tokenized
    weights: list[torch.Tensor]


@dataclass(frozen=True)
class Embedder:
    """A model loaded for scoring; shared by every scorer with the same model settings, never changed after."""

    tokenizer: Any
    encoder: Encoder
    max_length: int | None  # longest input in tokens, special tokens included (None: unlimited)
    window: WindowSpec | None  # how long texts are cut into windows (None without a max length)
    long_inputs: str  # "truncate", "window" or "error"
    cache: Any  # an embedding cache (memory, disk or both) or None
    max_tokens: int  # padded tokens per encoder batch
    plain: torch.Tensor  # (vocab,) plain weights: 0 for [CLS]/[SEP]-style tokens, 1 for the others
    disk_cache: Any = None  # the disk layer of ``cache``, if any (its hit counts and folder)
    memory_mb: int | None = None  # what one call may hold (None: sized to the device); changes no number

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

    def budget(self, batch_size: int) -> Budget:
        """The budget of one call on this model's device (see :meth:`Budget.for_device`)."""
        width = self.encoder.width * self.n_layers
        return Budget.for_device(
            self.encoder.device,
            batch_size=batch_size,
            max_tokens=self.max_tokens,
            width=width,
            memory_mb=self.memory_mb,
        )

    def prepare(
        self,
        texts: list[str],
        weights: Weights,
        label: Callable[[int], str],
        position: Callable[[int], int] | None = None,
    ) -> Prepared:
        """Tokenize distinct ``texts``, cut or check long ones, and weigh their tokens; ``label(u)`` names text ``u``
        in errors, ``position(u)`` orders them as the caller gave them (default: ``u``)."""
        tok = tokenize(self.tokenizer, texts, self.token_limit)
        if self.long_inputs == "truncate":
            warn_truncated(len(tok.truncated), len(tok.ids), self.max_length, self.tokenizer.model_max_length)
        elif self.max_length is not None:
            check_long(tok, self.max_length, self.long_inputs, label, position)
        return Prepared(tok, text_weights(tok, weights, label))

    def embed(
        self,
        ids: Sequence[list[int]],
        wanted: Sequence[int],
        *,
        batch_size: int,
        progress=None,
        budget: Budget | None = None,
    ) -> dict[int, torch.Tensor]:
        """Unit-norm embeddings of the texts ``wanted`` (indices into ``ids``) on the encoder's device, through the
        cache when there is one: caches keep host copies, and a hit is handed back on the encoder's device."""
        budget = budget or self.budget(batch_size)
        run = functools.partial(
            embed,
            self.encoder,
            ids,
            pad_id=pad_id_of(self.tokenizer),
            batch_size=budget.batch_size,
            max_tokens=budget.max_tokens,
            window=self.active_window,
            progress=progress,
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


def check_long(tok: Tokenized, max_length: int, long_inputs: str, label, position=None) -> None:
    """With ``"error"``, a ``ValueError`` naming (``label(u)``) the first text longer than ``max_length`` in input
    order (``position(u)``, default ``u``); with ``"window"``, a log line saying how many go through windows."""
    long = [u for u, ids in enumerate(tok.ids) if len(ids) > max_length]
    if long and long_inputs == "error":
        first = min(long, key=position) if position else long[0]
        raise ValueError(
            f"{label(first)} has {len(tok.ids[first])} tokens, more than the model's {max_length}; pass "
            "long_inputs='window' to score it in full or long_inputs='truncate' to cut it as bert-score does"
        )
    if long:
        logger.info(
            "%d of %d texts exceed %d tokens and are scored through sliding windows",
            len(long),
            len(tok.ids),
            max_length,
        )


def text_weights(tok: Tokenized, weights: Weights, label) -> list[torch.Tensor]:
    """Each text's unnormalised token weights (empty texts: an empty tensor); an idf table missing a token is a
    ``ValueError`` naming the text as ``label(u)`` gives it."""
    out = []
    for u, ids in enumerate(tok.ids):
        if tok.is_empty(u):
            out.append(torch.empty(0))
            continue
        try:
            out.append(sentence_weights(ids, weights.table, weights.fallback))
        except ValueError as error:
            raise ValueError(f"{label(u)}: {error}") from None
    return out
