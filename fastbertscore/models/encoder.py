"""The encoder: a model's layer stack, cut at the chosen layer, and how long an input it can read.

A model is loaded whole (:func:`load_model`) and cut to its first ``num_layers`` layers (:func:`cut`, so the last
hidden state *is* the chosen layer, with whatever final norm the architecture applies, exactly as ``bert-score``
does); with ``all_layers`` it is kept whole and every hidden state is returned. A cut is a view: its modules are
its own, its parameters and buffers the loaded model's, so encoders of every layer share one copy of the weights.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, cast

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from fastbertscore.models.defaults import default_layer
from fastbertscore.models.loading import load_pretrained, load_weights, model_id, resolve_model_source
from fastbertscore.validate import check_num_layers

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

#: A tokenizer that reports more than this has no real limit (DeBERTa-v3, XLNet, mT5 and many others say 1e30).
UNLIMITED = 1_000_000

# Architectures whose encoder forward breaks with zero layers (transformers 5 DeBERTa-v2 reads an unset
# variable); for them layer 0 is read from the hidden states of a one-layer encoder instead.
_NO_EMPTY_ENCODER = frozenset({"deberta-v2"})
_T5_ENCODERS = {"t5": "T5EncoderModel", "mt5": "MT5EncoderModel", "umt5": "UMT5EncoderModel"}
# Families whose hidden states are not one vector per input token at every layer.
_UNSUPPORTED = {
    "funnel": "Funnel Transformer pools the sequence between its blocks, so a layer's vectors are not the text's tokens"
}
# Attention kernels for half precision on a GPU: all of torch's but cuDNN's, which builds an execution plan for each
# new (batch, length) shape; length-sorted batches bring a new shape nearly every batch, so a one-off evaluation
# paid that build on most of its batches (docs/speed.md, "On a GPU").
_HALF_ATTENTION_ON_GPU = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
# Families whose base model runs a pooler (a dense layer and tanh over the first token) unless it is None: scores read
# only hidden states, so it is dropped (at layer 0, where the encoder is the embeddings alone, it was a fifth of it).
_SKIPPABLE_POOLER = frozenset(
    {"bert", "roberta", "xlm-roberta", "camembert", "longformer", "big_bird", "mpnet", "albert"}
)
# Position schemes with no table to run past: relative (T5, XLNet; DeBERTa without position_biased_input) or rotary.
_RELATIVE_POSITIONS = frozenset({"t5", "mt5", "umt5", "xlnet", "modernbert"})


@dataclass
class Encoder:
    """A (possibly cut) encoder that maps padded token ids to the chosen hidden states.

    Calling it returns ``(B, T, D)``, or ``(B, T, L + 1, D)`` with ``all_layers``.
    """

    module: torch.nn.Module  # a transformers model
    depth: int
    num_layers: int
    all_layers: bool
    hidden_index: int | None = None  # read this hidden state instead of the last one
    autocast: torch.dtype | None = None  # run the forward pass under autocast to this dtype (bf16/fp16 modes)
    layer_from_registry: bool = False  # the user's layer registry chose num_layers (named in the signature)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Hidden states in float32 (autocast modes compute in lower precision, then widen)."""
        want_hidden = self.all_layers or self.hidden_index is not None
        device = input_ids.device.type
        half_on_gpu = device == "cuda" and self.autocast is not None
        attention = sdpa_kernel(_HALF_ATTENTION_ON_GPU) if half_on_gpu else contextlib.nullcontext()
        with torch.autocast(device, dtype=self.autocast, enabled=self.autocast is not None), attention:
            out = self.module(input_ids, attention_mask=attention_mask, output_hidden_states=want_hidden)
        if self.all_layers:
            hidden = torch.stack(out.hidden_states, dim=2)
        elif self.hidden_index is not None:
            hidden = out.hidden_states[self.hidden_index]
        else:
            hidden = out[0]
        return hidden.float()

    def cast_to(self, dtype: torch.dtype) -> None:
        """Store the weights in ``dtype`` (in place), keeping ``torch.nn.LayerNorm`` in float32.

        Under autocast alone every forward pass converts each float32 weight again; weights stored in bfloat16
        skip that, which is faster on a CPU that computes bfloat16 natively (docs/speed.md). LayerNorm keeps float32 parameters, which torch
        applies to bfloat16 inputs with float32 arithmetic; custom norms (T5's) are cast with the rest, since
        they would hand float32 to the next bfloat16 matmul. Autocast stays on around the forward pass for
        any op that still meets a mixed pair.
        """
        cast_in_place(self.module, dtype)

    @cached_property
    def device(self) -> torch.device:
        """Where the weights are (read once: a model is moved to its device when it loads, before any cut)."""
        return next(self.module.parameters()).device

    @property
    def config(self) -> PretrainedConfig:
        """The model's transformers config (torch types a module's attributes only as ``Tensor | Module``)."""
        return cast("PretrainedConfig", self.module.config)

    @cached_property
    def width(self) -> int:
        """Size of one token vector (read once from the config)."""
        config = self.config
        for name in ("hidden_size", "d_model", "dim", "emb_dim"):
            if isinstance(getattr(config, name, None), int):
                return getattr(config, name)
        return 1024


def _layer_stack(model: torch.nn.Module) -> tuple[object, str]:
    """Return (owner, attribute) of the module list holding the model's layers."""
    for path in ("encoder.layer", "encoder.block", "transformer.layer", "layer", "layers", "block"):
        owner, _, attr = path.rpartition(".")
        holder: object = model
        for part in filter(None, owner.split(".")):
            holder = getattr(holder, part, None)
        if holder is not None and isinstance(getattr(holder, attr, None), torch.nn.ModuleList):
            return holder, attr
    raise ValueError(f"cannot find the layers of {type(model).__name__}: architecture not supported")


class _CountedLayers(Protocol):
    """XLM: its depth is a plain int attribute (torch types a module's attributes only as ``Tensor | Module``)."""

    n_layers: int


def model_depth(model: torch.nn.Module) -> int:
    if hasattr(model, "n_layers"):  # XLM loops over n_layers
        return cast("_CountedLayers", model).n_layers
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "albert_layer_groups"):  # ALBERT shares weights across layers
        return encoder.config.num_hidden_layers
    holder, attr = _layer_stack(model)
    return len(getattr(holder, attr))


def _cut(model: torch.nn.Module, num_layers: int) -> None:
    """Keep only the first ``num_layers`` layers (the same cut ``bert-score`` makes)."""
    if hasattr(model, "n_layers"):
        cast("_CountedLayers", model).n_layers = num_layers
        return
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "albert_layer_groups"):
        encoder.config.num_hidden_layers = num_layers
        return
    holder, attr = _layer_stack(model)
    setattr(holder, attr, torch.nn.ModuleList(list(getattr(holder, attr))[:num_layers]))


@dataclass(frozen=True)
class LoadedModel:
    """A model as loaded, uncut: its module (in eval mode), its depth and its family (the config's model type)."""

    module: torch.nn.Module
    depth: int
    family: str


def load_model(model_type: str, num_layers: int | None = None) -> LoadedModel:
    """Load ``model_type`` whole, in fp32 and eval mode; ``num_layers`` is checked against its config first."""
    import transformers

    source = resolve_model_source(model_type)
    config = load_pretrained(transformers.AutoConfig, source, model_type, "config")
    if config.model_type in _UNSUPPORTED:
        raise ValueError(
            f"model_type={model_type!r} is a {config.model_type} model, which BERTScore cannot use: "
            f"{_UNSUPPORTED[config.model_type]} (bert-score 0.3.13 refuses it too). Use an encoder of another family."
        )
    configured = getattr(config, "num_hidden_layers", None)  # the encoder's depth, as every supported family says it
    if num_layers is not None and isinstance(configured, int) and not isinstance(configured, bool):
        check_num_layers(num_layers, configured, model_type)  # before any weights load: they may be gigabytes
    loader = getattr(transformers, _T5_ENCODERS.get(config.model_type, "AutoModel"))
    encoder_only = getattr(config, "is_encoder_decoder", False)
    model = load_weights(loader, source, model_type, config.model_type, encoder_only)
    if encoder_only and hasattr(model, "get_encoder"):
        model = model.get_encoder()
    model.eval()
    if config.model_type in _SKIPPABLE_POOLER and getattr(model, "pooler", None) is not None:
        model.register_module("pooler", None)  # every cut of this model is a view of it: none runs the pooler
    return LoadedModel(model, model_depth(model), config.model_type)


def chosen_layer(model_type: str, depth: int, num_layers: int | None, use_registry: bool) -> tuple[int, bool]:
    """The layer to cut ``model_type`` at (``num_layers``, else its default) and whether the user's layer registry
    chose it."""
    if num_layers is None:
        return default_layer(model_id(model_type), depth, use_registry)
    return num_layers, False


def cut(model: LoadedModel, model_type: str, num_layers: int, all_layers: bool = False) -> Encoder:
    """An encoder over the first ``num_layers`` layers of ``model`` (read whole with ``all_layers``): a view whose
    modules are new and whose parameters and buffers are ``model``'s own, so no weight is copied."""
    check_num_layers(num_layers, model.depth, model_type)
    if all_layers:
        return Encoder(model.module, model.depth, num_layers, all_layers)
    view = _copy_of(model.module, {id(t): t for t in (*model.module.parameters(), *model.module.buffers())})
    hidden_index = None
    if num_layers == 0 and model.family in _NO_EMPTY_ENCODER:
        _cut(view, 1)
        hidden_index = 0
    else:
        _cut(view, num_layers)
    return Encoder(view, model.depth, num_layers, all_layers, hidden_index)


def load_encoder(
    model_type: str, num_layers: int | None, all_layers: bool = False, use_registry: bool = False
) -> Encoder:
    """Load ``model_type`` in fp32 in eval mode and cut it at ``num_layers`` (unless ``all_layers``), for a caller
    that keeps its own; scorers get theirs from :mod:`fastbertscore.models.shared`, which loads a model once."""
    model = load_model(model_type, num_layers)
    layer, from_registry = chosen_layer(model_type, model.depth, num_layers, use_registry)
    encoder = cut(model, model_type, layer, all_layers)
    encoder.layer_from_registry = from_registry
    return encoder


def cast_in_place(module: torch.nn.Module, dtype: torch.dtype) -> None:
    """Store ``module``'s weights in ``dtype``, keeping ``torch.nn.LayerNorm`` in float32 (see
    :meth:`Encoder.cast_to`)."""
    module.to(dtype)
    for sub in module.modules():
        if isinstance(sub, torch.nn.LayerNorm):
            sub.float()


def converted(model: LoadedModel, dtype: torch.dtype) -> LoadedModel:
    """A copy of ``model`` stored in ``dtype``, with the very values :func:`cast_in_place` gives the loaded model,
    made without a second float32 copy: each floating-point tensor is converted on its own, the others shared."""
    memo: dict[int, object] = {}
    for buffer in model.module.buffers():
        memo[id(buffer)] = buffer.detach().to(dtype) if buffer.is_floating_point() else buffer
    for param in model.module.parameters():
        value = param.detach().to(dtype) if param.is_floating_point() else param.detach()
        memo[id(param)] = torch.nn.Parameter(value, requires_grad=param.requires_grad)
    module = _copy_of(model.module, memo)
    for sub in module.modules():
        if isinstance(sub, torch.nn.LayerNorm):
            sub.float()  # from the dtype's values, as cast_in_place does
    return LoadedModel(module, model.depth, model.family)


def _copy_of(module: torch.nn.Module, tensors: dict[int, object]) -> torch.nn.Module:
    """A copy of ``module``'s modules (and their config) whose tensors are those ``tensors`` maps them to (by id)."""
    return copy.deepcopy(module, tensors)


def max_input_length(tokenizer: PreTrainedTokenizerBase, encoder: Encoder) -> int | None:
    """Longest token sequence to feed the model, special tokens included; ``None``: no cut.

    bert-score cuts at the tokenizer's ``model_max_length``. A tokenizer that reports no limit (DeBERTa-v3, XLNet,
    mT5 say 1e30) cuts nothing there: models with relative positions read the whole text, as bert-score's do; a
    model with absolute position embeddings cannot read past them (bert-score fails there), so it is cut at them.
    A reported limit beyond the position embeddings is lowered to them too (bert-score fails there as well).
    """
    reported = tokenizer.model_max_length
    limit = int(reported) if reported and reported < UNLIMITED else None
    positions = _absolute_positions(encoder)
    if positions is not None and (limit is None or positions < limit):
        logger.info(
            "tokenizer reports max length %s; using %d, where the model's position embeddings end", reported, positions
        )
        return positions
    return limit


def _absolute_positions(encoder: Encoder) -> int | None:
    """How many positions the model's absolute position embeddings cover; ``None`` for relative positions."""
    config = encoder.config
    if config.model_type in _RELATIVE_POSITIONS or getattr(config, "position_biased_input", True) is False:
        return None
    positions = (
        getattr(config, "max_encoder_position_embeddings", None)
        or getattr(config, "max_position_embeddings", None)
        or getattr(config, "n_positions", None)
    )
    if not positions or positions <= 0:
        return None
    # RoBERTa-style embeddings number positions from padding_idx + 1, so the last slots are unreachable.
    padding_idx = getattr(getattr(encoder.module, "embeddings", None), "padding_idx", None)
    return positions - (padding_idx + 1 if padding_idx is not None else 0)
