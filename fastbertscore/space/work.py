"""A request's work, counted on its own thread before it reaches the model thread.

Work is in tokens of the default model: the tokens of the request's distinct texts (each text once, as the engine
embeds it once, cut at the model's window), counted with the model's own tokenizer, times the model's cost per
token against the default model's (:func:`cost_per_token`: its layers and width). Counting stops as soon as the
count passes :data:`~fastbertscore.space.limits.WORK_BUDGET`, so a refusal takes the time of counting the budget,
whatever the request's size. The same pass finds the texts the tokenizer cannot read (:func:`blind_spots`).

Counting uses a tokenizer of its own per model, never the model thread's, and calls it the same way every time
(no truncation or padding switched on and off), so request threads can count at once.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastbertscore.models.defaults import DEFAULT_MODEL, MODEL2LAYERS, fallback_layer
from fastbertscore.models.encoder import UNLIMITED
from fastbertscore.models.loading import load_pretrained, load_tokenizer, resolve_model_source
from fastbertscore.pipeline.prepare import UNKNOWN_SCORES, mostly_unknown
from fastbertscore.pipeline.tokens import EMPTY_SCORES, Tokenized, tokenize
from fastbertscore.settings import Settings
from fastbertscore.space.bounded import BoundedCache
from fastbertscore.space.limits import MAX_TOKENIZERS, WORK_BUDGET
from fastbertscore.validate import check_num_layers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

#: Characters tokenized at a time: the count is checked against the budget after each slice.
SLICE_CHARS = 50_000
#: Texts of the sample a request's work is first estimated from, and the characters of each that count.
SAMPLE_TEXTS, SAMPLE_CHARS = 64, 500


@dataclass(frozen=True)
class Model:
    """What counting needs of a model: its tokenizer (a copy of its own), where texts are cut, and its size."""

    tokenizer: PreTrainedTokenizerBase
    window: int | None  # tokens a text is cut at (None: not cut)
    depth: int
    width: int
    inner: int  # the feed-forward width

    def cost(self, layer: int | None, model_id: str) -> float:
        """Multiply-adds per token of an encoder cut at ``layer`` (the tuned one when ``None``).

        Raises:
            ValueError: ``layer`` is past the model's depth.
        """
        if layer is None:
            layer = MODEL2LAYERS.get(model_id, fallback_layer(self.depth))
        check_num_layers(layer, self.depth, model_id)  # before any weights load, as the encoder checks it
        return max(layer, 1) * self.width * (4 * self.width + 2 * self.inner)


_MODELS: BoundedCache[Model] = BoundedCache(MAX_TOKENIZERS)
_loading = threading.Lock()


def counting_model(model_id: str, use_fast: bool = False) -> Model:
    """The counting copy of ``model_id``'s tokenizer and its size (from its config), loaded once (no weights)."""
    key = (model_id, use_fast)
    found = _MODELS.get(key)
    if found is not None:
        return found
    with _loading:  # two requests for a new model load it once
        found = _MODELS.get(key)
        if found is None:
            found = _load(model_id, use_fast)
            _MODELS.put(key, found)
    return found


def _load(model_id: str, use_fast: bool) -> Model:
    from transformers import AutoConfig

    tokenizer = load_tokenizer(model_id, use_fast)
    config = load_pretrained(AutoConfig, resolve_model_source(model_id), model_id, "config")
    width = int(getattr(config, "hidden_size", 0) or getattr(config, "d_model", 0) or 768)
    inner = int(getattr(config, "intermediate_size", 0) or getattr(config, "d_ff", 0) or 4 * width)
    depth = int(getattr(config, "num_hidden_layers", 0) or getattr(config, "num_layers", 0) or 12)
    limit = tokenizer.model_max_length
    window = int(limit) if limit and limit < UNLIMITED else None
    return Model(tokenizer, window, depth, width, inner)


def cost_per_token(settings: Settings) -> float:
    """The cost of a token for ``settings``' model and layer against one of the default model at its tuned layer.

    Example:
        >>> cost_per_token(Settings(model_type=DEFAULT_MODEL))  # its tuned layer is 3 of 6
        1.0
        >>> cost_per_token(Settings(model_type=DEFAULT_MODEL, num_layers=6))
        2.0
    """
    model_id = settings.model_type_or_default
    own = counting_model(model_id, settings.use_fast_tokenizer).cost(settings.num_layers, model_id)
    return own / counting_model(DEFAULT_MODEL).cost(None, DEFAULT_MODEL)


@dataclass(frozen=True)
class Work:
    """A request's counted work and the notes on texts its tokenizer cannot read."""

    tokens: int  # tokens of its distinct texts, each cut at the model's window
    cost: float  # the model's cost per token against the default model's
    notes: tuple[str, ...] = ()

    @property
    def weighed(self) -> int:
        """The work in tokens of the default model."""
        return math.ceil(self.tokens * self.cost)


def check_work(settings: Settings, texts: Sequence[str], label: Callable[[int], str]) -> Work:
    """Count the work of scoring ``texts`` (a request's candidates and references; ``label(i)`` names text ``i``
    as the page does) with ``settings``' model, on the caller's thread.

    A sample of the texts is counted first: a request that needs more than twice the budget by its estimate is
    refused at once; else the texts are counted, and counting stops as soon as the budget is passed.

    Raises:
        ValueError: more than :data:`~fastbertscore.space.limits.WORK_BUDGET`, in one sentence naming the budget
            and what the request needs (estimated where it was not counted to the end).
    """
    model = counting_model(settings.model_type_or_default, settings.use_fast_tokenizer)
    cost = cost_per_token(settings)
    first: dict[str, int] = {}  # each distinct text, at its first use
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    distinct = list(first)
    sample = [text[:SAMPLE_CHARS] for text in distinct[:: max(1, len(distinct) // SAMPLE_TEXTS)][:SAMPLE_TEXTS]]
    if (guess := _estimate(model, distinct, sample, _tokens(model, sample))) * cost > 2 * WORK_BUDGET:
        raise ValueError(_over_budget(settings, guess, cost, estimated=True))
    ids: list[list[int]] = []
    for start, end in _slices(distinct):
        ids.extend(_tokens(model, distinct[start:end]))
        counted = sum(min(len(x), model.window or len(x)) for x in ids)
        if counted * cost > WORK_BUDGET:
            rest = _estimate(model, distinct[end:], distinct[:end], ids) if end < len(distinct) else 0
            raise ValueError(_over_budget(settings, counted + rest, cost, estimated=end < len(distinct)))
    tokens = sum(min(len(x), model.window or len(x)) for x in ids)
    return Work(tokens, cost, blind_spots(model.tokenizer, ids, [label(first[text]) for text in distinct]))


def _tokens(model: Model, texts: list[str]) -> list[list[int]]:
    """Token ids of ``texts``, special tokens included, uncut: the ids the scoring embeds (:func:`tokenize`)."""
    return tokenize(model.tokenizer, texts, None).ids


def _estimate(model: Model, texts: list[str], sample: list[str], ids: list[list[int]]) -> float:
    """Tokens of ``texts``, each cut at the window, from the tokens per character of ``sample`` (tokenized: ``ids``)."""
    rate = sum(map(len, ids)) / max(1, sum(map(len, sample)))
    return sum(min(len(text) * rate, model.window or math.inf) for text in texts)


def _slices(texts: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of consecutive texts of about :data:`SLICE_CHARS` characters together."""
    slices, start, size = [], 0, 0
    for end, text in enumerate(texts, start=1):
        size += len(text)
        if size >= SLICE_CHARS:
            slices.append((start, end))
            start, size = end, 0
    return [*slices, (start, len(texts))] if start < len(texts) else slices


def _over_budget(settings: Settings, tokens: float, cost: float, estimated: bool) -> str:
    model = settings.model_type_or_default
    per_token = (
        "" if model == DEFAULT_MODEL and cost == 1 else f" ({model} costs {cost:.3g}× the default model a token)"
    )
    about = "about " if estimated else ""
    return (
        f"This request needs {about}{math.ceil(tokens * cost):,} tokens of work{per_token}; the Space does at most "
        f"{WORK_BUDGET:,} per request: score fewer or shorter texts"
        + (", or use the default model" if model != DEFAULT_MODEL or cost > 1 else "")
    )


def blind_spots(tokenizer: PreTrainedTokenizerBase, ids: list[list[int]], labels: list[str]) -> tuple[str, ...]:
    """Notes naming the texts (``labels``, one per token id list) that are empty after tokenizing, and those that
    are mostly the tokenizer's unknown token (:func:`~fastbertscore.pipeline.prepare.mostly_unknown`)."""
    special = tokenizer.num_special_tokens_to_add(pair=False)
    tok = Tokenized(ids, [max(0, len(x) - special) for x in ids], [])
    empty = [u for u in range(len(ids)) if tok.is_empty(u)]
    unknown = mostly_unknown(tok, tokenizer.unk_token_id)
    notes = []
    if empty:
        kept = "the tokenizer keeps none of its characters"
        notes.append(f"{_named(empty, labels)} empty after tokenizing ({kept}); pairs with it: {EMPTY_SCORES}.")
    if unknown:
        notes.append(f"{_named(unknown, labels)} mostly the unknown token {tokenizer.unk_token}: {UNKNOWN_SCORES}.")
    return tuple(notes)


def _named(units: list[int], labels: list[str]) -> str:
    """ "The candidate is", "3 texts (first: row 2's reference) are"."""
    if len(units) == 1:
        name = labels[units[0]]
        return f"{name[:1].upper()}{name[1:]} is"
    return f"{len(units):,} texts (first: {labels[min(units)]}) are"
