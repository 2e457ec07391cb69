"""One loaded model per id: the models the process keeps loaded, shared by every scorer, and their embedding caches.

A model is kept under its identity (:func:`~fastbertscore.models.loading.model_identity`: where it loads from, made
absolute, and its revision) and the device it sits on, with its weights uncut. Encoders cut at any layer are views
over them (:func:`~fastbertscore.models.encoder.cut`), so changing the layer loads nothing and copies no weight.
Each precision the weights are stored in is one copy, at most one per precision: made from the float32 copy where
there is one, else loaded (and cast in place, so a model used in bfloat16 alone is never held in float32 too).
At most :data:`MAX_MODELS` models are kept; the next one loads before the oldest is let go, so a load that fails
leaves the kept one serving.

One embedding cache is kept per model, precision, layer and window (what an embedding depends on) for every scorer
built on them, so a new scorer (other idf weights, the Space's raw twin) finds the texts it has seen embedded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch

from fastbertscore.cache.memory import EmbeddingCache
from fastbertscore.models.encoder import (
    Encoder,
    LoadedModel,
    cast_in_place,
    chosen_layer,
    converted,
    cut,
    load_model,
)
from fastbertscore.models.loading import load_tokenizer, model_identity
from fastbertscore.validate import check_num_layers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

#: Distinct models (one id or folder at one revision, on one device) kept loaded, each in at most one copy per
#: precision; past it the least recently used goes once the next has loaded. One: a process that moves on to
#: another model holds no more than bert-score's one model.
MAX_MODELS = 1
#: Embedding caches kept (one per model, precision, layer and window), least recently used first out: a layer
#: alternation keeps this many caches of up to ``cache_mb`` each, not one per layer ever asked for.
MAX_EMBEDDING_CACHES = 4

#: A model's key: (where it loads from, its revision, the device).
ModelKey = tuple[str, str | None, str]


@dataclass(frozen=True)
class ModelStats:
    """What is kept and what was done since the process started."""

    loads: int  # models whose weights were read from disk
    conversions: int  # precision copies made from a loaded float32 copy, without reading the disk
    models: int  # models kept
    copies: int  # weight copies kept (at most one per precision of a model)
    weight_bytes: int  # bytes of the parameters and buffers kept, each tensor counted once
    embedding_caches: int  # embedding caches kept


@dataclass(frozen=True)
class Loaded:
    """A model as a scorer gets it: its tokenizer, its encoder (a view cut at the layer asked for), the facts
    computed once about that cut's weights (their digest) and the model's key (for its embedding caches)."""

    tokenizer: PreTrainedTokenizerBase
    encoder: Encoder
    facts: dict[str, str]
    key: ModelKey


@dataclass
class _Model:
    """One model kept: its weight copies by precision, its tokenizers (slow, fast), its cuts and its default
    layer by the name it was asked for and whether the user's layer registry is read."""

    copies: dict[str, LoadedModel] = field(default_factory=dict)
    tokenizers: dict[bool, PreTrainedTokenizerBase] = field(default_factory=dict)
    cuts: dict[tuple[str, int, bool], tuple[Encoder, dict[str, str]]] = field(default_factory=dict)
    defaults: dict[tuple[str, bool], tuple[int, bool]] = field(default_factory=dict)


class SharedModels:
    """Loaded models by identity, shared by every encoder and scorer of the process (:data:`MODELS`)."""

    def __init__(self, max_models: int = MAX_MODELS, max_caches: int = MAX_EMBEDDING_CACHES) -> None:
        self.max_models = max_models
        self.max_caches = max_caches
        self.loads = 0
        self.conversions = 0
        self._models: OrderedDict[ModelKey, _Model] = OrderedDict()
        self._caches: OrderedDict[tuple[object, ...], EmbeddingCache] = OrderedDict()
        self._lock = threading.Lock()  # guards the two dicts and the counters
        self._loading = threading.Lock()  # held for a whole load or conversion: two callers never load at once

    def load(
        self,
        model_type: str,
        *,
        device: str,
        precision: str,
        use_fast: bool,
        num_layers: int | None,
        all_layers: bool,
        layer_registry: bool,
    ) -> Loaded:
        """``model_type`` on ``device`` with its weights stored in ``precision`` (``"float32"``, ``"bfloat16"``,
        ``"float16"``), cut at ``num_layers`` (its default layer if ``None``): loaded only if no copy is kept."""
        key: ModelKey = (*model_identity(model_type), device)
        with self._lock:
            model = self._models.get(key)
            if model is not None:
                self._models.move_to_end(key)
        if model is None or precision not in model.copies or use_fast not in model.tokenizers:
            with self._loading:
                key, model = self._stock(key, model_type, precision, use_fast, num_layers)
        weights = model.copies[precision]
        if num_layers is not None:  # checked here too: True or 2.0 would find the cut of 1 or 2 (equal keys)
            check_num_layers(num_layers, weights.depth, model_type)
        with self._lock:  # a default layer is chosen (and any warning given) once per model, as a load did
            chosen = model.defaults.get((model_type, layer_registry)) if num_layers is None else (num_layers, False)
        if chosen is None:
            chosen = chosen_layer(model_type, weights.depth, None, layer_registry)
            with self._lock:
                model.defaults[(model_type, layer_registry)] = chosen
        layer, from_registry = chosen
        with self._lock:
            made = model.cuts.get((precision, layer, all_layers))
        if made is None:
            made = cut(weights, model_type, layer, all_layers), {}
            with self._lock:
                made = model.cuts.setdefault((precision, layer, all_layers), made)
        encoder = replace(made[0], layer_from_registry=from_registry)
        return Loaded(model.tokenizers[use_fast], encoder, made[1], key)

    def _stock(
        self, key: ModelKey, model_type: str, precision: str, use_fast: bool, num_layers: int | None
    ) -> tuple[ModelKey, _Model]:
        """The kept model of ``key`` with a ``precision`` copy and a tokenizer, loading or converting what it lacks
        (with ``_loading`` held); a model new here goes in once loaded, and the oldest past
        :data:`MAX_MODELS` goes."""
        with self._lock:
            model = self._models.get(key) or _Model()
        if use_fast not in model.tokenizers:
            tokenizer = load_tokenizer(model_type, use_fast)
            with self._lock:
                model.tokenizers[use_fast] = tokenizer
        if precision not in model.copies:
            whole = model.copies.get("float32")
            if whole is not None:
                if num_layers is not None:
                    check_num_layers(num_layers, whole.depth, model_type)  # before the copy is made
                copy = converted(whole, getattr(torch, precision))
                with self._lock:
                    self.conversions += 1
            else:
                copy = _loaded(model_type, num_layers, key[2], precision)
                with self._lock:
                    self.loads += 1
            with self._lock:
                model.copies[precision] = copy
        with self._lock:
            if key not in self._models:  # a Hub id's revision is known once it is in the cache
                key = (*model_identity(model_type), key[2])
            self._models[key] = model
            self._models.move_to_end(key)
            while len(self._models) > self.max_models:
                gone, _ = self._models.popitem(last=False)
                for cache_key in [k for k in self._caches if k[0] == gone]:
                    del self._caches[cache_key]
        return key, model

    def embedding_cache(self, key: tuple[object, ...], max_bytes: int) -> EmbeddingCache:
        """The one embedding cache of ``key`` (a model's key first, then everything else an embedding depends on),
        holding up to ``max_bytes`` (the last size asked for); at most :data:`MAX_EMBEDDING_CACHES` are kept."""
        with self._lock:
            cache = self._caches.get(key)
            if cache is None:
                cache = self._caches[key] = EmbeddingCache(max_bytes)
                while len(self._caches) > self.max_caches:
                    self._caches.popitem(last=False)
            else:
                self._caches.move_to_end(key)
                cache.resize(max_bytes)
            return cache

    def stats(self) -> ModelStats:
        with self._lock:
            copies = [copy.module for model in self._models.values() for copy in model.copies.values()]
            tensors = {t.data_ptr(): t for m in copies for t in (*m.parameters(), *m.buffers())}
            return ModelStats(
                loads=self.loads,
                conversions=self.conversions,
                models=len(self._models),
                copies=len(copies),
                weight_bytes=sum(t.numel() * t.element_size() for t in tensors.values()),
                embedding_caches=len(self._caches),
            )

    def clear(self) -> None:
        """Let every kept model and embedding cache go (scorers that hold one keep it); the next use loads."""
        with self._lock:
            self._models.clear()
            self._caches.clear()


def _loaded(model_type: str, num_layers: int | None, device: str, precision: str) -> LoadedModel:
    """``model_type`` read from disk, on ``device``, its weights cast in place to ``precision``."""
    model = load_model(model_type, num_layers)
    model.module.to(device)
    if precision != "float32":  # float32 is how the weights load
        cast_in_place(model.module, getattr(torch, precision))
    return model


#: The models of the process: :mod:`fastbertscore.assembly` gets every model from it.
MODELS = SharedModels()
