"""Assembly: :class:`~fastbertscore.Settings` → a loaded :class:`~fastbertscore.pipeline.embedder.Embedder`.

The one place that gets a model and its embedding cache from :mod:`fastbertscore.models.shared` (one loaded model
per id, kept between calls, its encoders at every layer sharing its weights; bert-score reloads per call), and
that owns the dtype/hardware policy (which precision the weights are stored and run in).
Scorers, explanations and adapters get their model from here, never by loading one themselves.
"""

from __future__ import annotations

import logging
import os
from dataclasses import astuple, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import torch

from fastbertscore import exact, hardware
from fastbertscore._version import __version__
from fastbertscore.baselines.lookup import signature_model
from fastbertscore.baselines.table import read_baseline, select_layers
from fastbertscore.cache.disk import DiskCache, LayeredCache, encoder_fingerprint, weights_digest
from fastbertscore.cache.memory import EmbeddingCache
from fastbertscore.models.encoder import Encoder, max_input_length
from fastbertscore.models.shared import MODELS
from fastbertscore.pipeline.budget import MAX_TOKENS, REDUCED_PRECISION_TOKENS
from fastbertscore.pipeline.embedder import Embedder
from fastbertscore.pipeline.weights import Weights, plain_table
from fastbertscore.pipeline.windows import WindowSpec, special_layout
from fastbertscore.settings import Settings
from fastbertscore.signature import Signature, digest

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}


def clear_models() -> None:
    """Free the models and embedding caches kept between calls; the next build reloads."""
    MODELS.clear()


def build_embedder(settings: Settings) -> Embedder:
    """The loaded model for ``settings``: the shared tokenizer and encoder (loaded once), run in the resolved
    precision, with the window, the caches and the token budget these settings ask for."""
    dtype, device = settings.resolved_dtype, settings.resolved_device
    exact.check_exact_possible(dtype, device)
    stored = stored_precision(dtype, device)
    loaded = MODELS.load(
        settings.model_type_or_default,
        device=device,
        precision=stored,
        use_fast=settings.use_fast_tokenizer,
        num_layers=settings.num_layers,
        all_layers=settings.all_layers,
        layer_registry=settings.layer_registry,
    )
    tokenizer = loaded.tokenizer
    encoder = replace(loaded.encoder, autocast=DTYPES[dtype])  # the precision mode belongs to this embedder only
    max_length = max_input_length(tokenizer, encoder)
    window = _window(tokenizer, max_length, settings.window_stride)
    folder = None if settings.cache_dir is None else os.path.expanduser(settings.cache_dir)  # ~ is home, as in a shell
    disk = _disk_cache(settings, folder, encoder, window, dtype, device, loaded.facts) if folder is not None else None
    memory = _memory_cache(settings, loaded.key, stored, encoder, window)
    layers = [c for c in (memory, disk) if c is not None]  # texts seen before are not embedded again
    cache = layers[0] if len(layers) == 1 else LayeredCache(*layers) if layers else None
    plain = plain_table(len(tokenizer), (tokenizer.sep_token_id, tokenizer.cls_token_id))
    max_tokens = MAX_TOKENS * (REDUCED_PRECISION_TOKENS if dtype != "float32" else 1)
    weights = Weights(plain, plain)
    return Embedder(
        tokenizer,
        encoder,
        max_length,
        window,
        settings.long_inputs,
        cache,
        max_tokens,
        weights,
        disk,
        settings.memory_mb,
    )


def load_baseline(settings: Settings, num_layers: int, depth: int) -> tuple[torch.Tensor, tuple[str, str, str]]:
    """The rescaling baseline of these settings (a custom file, else the shipped/Hub table of lang and model): its
    row of ``num_layers`` (``(3,)``, or every row ``(L + 1, 1, 3)`` with all layers; the model has ``depth + 1``)
    and (kind, source, digest)."""
    from fastbertscore.baselines.lookup import find_baseline

    path: str | Path
    if settings.baseline_path is not None:
        path, source, kind = settings.baseline_path, settings.baseline_path, "custom"
    elif settings.lang is None:  # Settings refuses rescaling without either; a scorer built otherwise lands here
        raise ValueError("rescale_with_baseline=True needs lang= (baselines are per language) or baseline_path=")
    else:
        path, source = find_baseline(
            settings.lang,
            settings.model_type_or_default,
            repo_id=settings.baseline_repo,
            revision=settings.baseline_revision,
        )
        kind = "baseline"
    table = read_baseline(path)
    logger.info("rescaling with baseline %s", source)
    return select_layers(table, num_layers, depth, settings.all_layers, str(source)), (
        kind,
        str(source),
        digest(Path(path).read_bytes()),
    )


def signature_of(
    settings: Settings, embedder: Embedder, idf_digest: str | None, baseline: tuple[str, str, str] | None
) -> Signature:
    """The signature of a scorer assembled from ``settings``: its model, its layer as the encoder took it, its idf
    (``idf_digest``: the mapping's digest, ``None`` when counted) and its baseline (kind, where, content digest)."""
    import transformers

    idf: Literal["no", "yes", "map"] = "no" if not settings.idf else "map" if idf_digest else "yes"
    window = embedder.window if settings.long_inputs == "window" else None
    return Signature(
        model=signature_model(settings.model_type_or_default),  # a local folder by its path, never as a Hub id
        layer=embedder.encoder.num_layers,
        idf=idf,
        rescale="no" if baseline is None else "custom" if baseline[0] == "custom" else "baseline",
        lang=settings.lang,
        fast_tokenizer=settings.use_fast_tokenizer,
        long_inputs=settings.long_inputs,
        dtype=settings.resolved_dtype,
        version=__version__,
        transformers=transformers.__version__,
        torch=torch.__version__.split("+")[0],
        layer_from_registry=embedder.encoder.layer_from_registry,
        all_layers=settings.all_layers,
        idf_digest=idf_digest if idf == "map" else None,
        baseline_digest=None if baseline is None else baseline[2],
        baseline_source=None if baseline is None else baseline[1],
        window_stride=None if window is None else window.overlap,
    )


def stored_precision(dtype: str, device: str) -> str:
    """The precision the weights are stored in for a ``dtype`` run on ``device``: the run's own on a GPU (bfloat16
    or float16, so no forward pass converts the float32 weights again), bfloat16 on a CPU that computes it natively, float32 otherwise (autocast does the rest)."""
    kind = torch.device(device).type
    if kind == "cuda" and dtype in ("bfloat16", "float16"):
        return dtype
    on_cpu = kind == "cpu"
    if dtype == "bfloat16" and on_cpu and not hardware.cpu_bf16_pays():
        logger.warning(
            "dtype='bfloat16': %s, so it gains nothing over float32 here; use dtype='auto' (float32 on this CPU) "
            "unless you need these bfloat16 numbers",
            hardware.cpu_bf16_gap(),
        )
    return "bfloat16" if dtype == "bfloat16" and on_cpu and hardware.cpu_native_bf16() else "float32"


def _memory_cache(
    settings: Settings, model: tuple[object, ...], stored: str, encoder: Encoder, window: WindowSpec | None
) -> EmbeddingCache | None:
    """The one embedding cache of the model, precision, layer and window these settings embed with (shared by every
    scorer built on them), sized ``cache_mb``; ``None`` with ``cache_mb=0``."""
    if not settings.cache_mb:
        return None
    active = astuple(window) if window is not None and settings.long_inputs == "window" else None
    layer = (encoder.num_layers, encoder.all_layers, encoder.hidden_index)
    return MODELS.embedding_cache((model, stored, settings.resolved_dtype, layer, active), settings.cache_mb << 20)


def _window(tokenizer: PreTrainedTokenizerBase, max_length: int | None, stride: int | None) -> WindowSpec | None:
    if max_length is None:
        return None
    prefix, suffix = special_layout(tokenizer)
    window = WindowSpec(max_length, prefix, suffix, stride)
    if window.capacity < 2:
        raise ValueError(f"max length {max_length} leaves no room for text between the special tokens")
    if stride is not None and stride >= window.capacity:
        raise ValueError(
            f"window_stride={stride} must be smaller than the {window.capacity} text tokens a window holds "
            f"(max length {max_length} less {prefix + suffix} special tokens)"
        )
    return window


def _disk_cache(
    settings: Settings,
    folder: str | os.PathLike[str],
    encoder: Encoder,
    window: WindowSpec | None,
    dtype: str,
    device: str,
    facts: dict[str, str],
) -> DiskCache:
    import transformers

    described = {
        "format": 1,
        "model_type": settings.model_type_or_default,
        "num_layers": encoder.num_layers,
        "all_layers": settings.all_layers,
        "hidden_index": encoder.hidden_index,
        "dtype": dtype,
        "device": torch.device(device).type,
        "window": None if window is None else list(astuple(window)),
        "versions": [__version__, torch.__version__, transformers.__version__],
    }
    if "weights" not in facts:
        facts["weights"] = weights_digest(encoder.module)
    token_shape = (encoder.depth + 1, encoder.width) if settings.all_layers else (encoder.width,)  # what entries hold
    return DiskCache(folder, encoder_fingerprint(facts["weights"], described), described, token_shape=token_shape)
