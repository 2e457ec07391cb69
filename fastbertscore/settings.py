"""One settings type for every entry point: each option, its default, its choices and its help live here once.

``BERTScorer``, ``score``, ``compute`` (and so the evaluate module), ``explain``, the CLIs and the scale-out
entry points build a :class:`Settings` and hand it to the engine; the CLIs make their flags from its fields.
"""

from __future__ import annotations

import inspect
import os
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal, TypeVar, cast

from fastbertscore.hardware import DTYPE_CHOICES, check_device, resolve_dtype
from fastbertscore.models.defaults import model_for_lang
from fastbertscore.pipeline.weights import check_idf_mapping
from fastbertscore.signature import mapping_key
from fastbertscore.validate import (
    LONG_INPUTS,
    LongInputs,
    check_flag,
    check_options,
    check_positive_int,
)

DType = Literal["float32", "bfloat16", "float16", "auto"]
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: Options that change no number and that every path passes per call: a scorer serves any value of them.
PER_CALL = ("batch_size", "nthreads")
#: The first option that is ours: the fields before it are ``bert_score.BERTScorer``'s, in its order.
FIRST_ADDITION = "baseline_repo"
#: The line of a docstring that :func:`documenting_options` replaces with every option's help (a Google-style
#: argument itself, for readers of the source).
OPTIONS_LINE = "**options: the fields of fastbertscore.Settings, each by its name."
#: Where the options' help is wrapped in docstrings and the metric card.
DOC_WIDTH = 116
#: How the options' annotations read in a docstring.
_KINDS = {"Mapping[int, float]": "mapping", "LongInputs": "str", "DType": "str", "os.PathLike": "path"}


def _option(default: T, *flags: str, help: str, **argparse_kwargs: object) -> T:
    """A settings field, its help (written here once: the CLIs, the metric card and ``score``'s docstring show it;
    other options named in `backticks`) and how the CLIs spell it (no flags: not on the command line)."""
    return field(default=default, metadata={"flags": flags, "help": help, "argparse": argparse_kwargs})


@dataclass(frozen=True)
class Settings:
    """Every option that changes a number or a run, checked once, before any model work.

    Field order is ``bert_score.BERTScorer``'s, then our additions. Build variants with :meth:`replace`.

    Raises:
        TypeError, ValueError: an option of the wrong type or out of range, named with what is allowed.
    """

    model_type: str | None = _option(
        None,
        "-m",
        "--model",
        help="model id (Hub) or local folder, e.g. sentence-transformers/all-MiniLM-L6-v2 (embedded: works "
        "offline); default: the model of `lang`",
    )
    num_layers: int | None = _option(
        None,
        "-l",
        "--num_layers",
        type=int,
        help="the layer whose embeddings are matched; default: the model's tuned layer (3 for the embedded model), "
        "or three quarters of its depth for a model without one",
    )
    batch_size: int | None = _option(
        None,
        "-b",
        "--batch_size",
        type=int,
        help="sentences per encoder batch at most; default: 64 on a CPU (bert-score's), 256 on a GPU; changes no "
        "number beyond float32 rounding",
    )
    nthreads: int = _option(
        4, "--nthreads", type=int, help="accepted for compatibility (tokenizing is already parallel)"
    )
    all_layers: bool = _option(
        False,
        help="score with every layer: each result holds L + 1 rows of N values, one per layer (row 0: the embeddings)",
    )
    idf: bool | Mapping[int, float] = _option(
        False,
        "--idf",
        help="weight tokens by inverse document frequency, counted over the references; in Python also the weights "
        "themselves, a {token_id: weight} mapping (a collections.defaultdict for unseen tokens)",
    )
    device: str | None = _option(
        None, "--device", help="cpu, cuda, cuda:1, mps, ...; default: cuda when torch sees one, else cpu"
    )
    lang: str | None = _option(
        None,
        "--lang",
        help="language code (en, zh, de, ...): picks the default model and the baseline; needed with "
        "`rescale_with_baseline` unless `baseline_path` is given",
    )
    rescale_with_baseline: bool = _option(
        False,
        "--rescale_with_baseline",
        help="rescale with the baseline of the model and `lang`: (x - b) / (1 - b), so unrelated text scores near 0",
    )
    baseline_path: str | None = _option(None, "--baseline_path", help="a LAYER,P,R,F baseline file of your own")
    use_fast_tokenizer: bool = _option(
        False, "--use_fast_tokenizer", help="ask transformers for the model's fast tokenizer (opt-in)"
    )
    baseline_repo: str | None = _option(
        None,
        "--baseline_repo",
        help="the Hub dataset repo of baselines (default: $FASTBERTSCORE_BASELINE_REPO or fastbertscore/baselines)",
    )
    baseline_revision: str | None = _option(
        None, "--baseline_revision", help="its branch, tag or commit (default: main)"
    )
    long_inputs: LongInputs = _option(
        "truncate",
        "--long_inputs",
        choices=LONG_INPUTS,
        help="texts longer than the model's window: truncate cuts them as bert-score does (default), window scores "
        "them in full through overlapping windows, error refuses them",
    )
    window_stride: int | None = _option(
        None,
        "--window_stride",
        type=int,
        help="tokens neighbouring windows share when `long_inputs` is window (default: a quarter of the window)",
    )
    dtype: DType = _option(
        "float32",
        "--dtype",
        choices=DTYPE_CHOICES,
        help="encoder precision: float32 is exact (default); bfloat16 and float16 (GPU) are within about 2e-3 and "
        "faster only where the hardware runs them faster (several times slower on CPUs without AVX512-BF16); auto "
        "picks the fastest that holds those bounds on the device (on a CUDA GPU bfloat16 or float16, on a CPU "
        "bfloat16 only where its matrix products measure faster). The hash names the precision used",
    )
    cache_mb: int = _option(
        0,
        "--cache_mb",
        type=int,
        help="megabytes of sentence embeddings kept in memory, reused when a text comes again (0: none); changes "
        "no number",
    )
    memory_mb: int | None = _option(
        None,
        "--memory_mb",
        type=int,
        help="MB one call holds at once beyond the model and its tokens: embeddings, matching buffers and the "
        "encoder's work on a batch (default: sized to the device: host RAM on CPU, free GPU memory on CUDA); past "
        "it, embeddings later pairs need spill to a temporary folder. Changes no number beyond float32 rounding and is "
        "not in the hash",
    )
    cache_dir: str | os.PathLike | None = _option(
        None,
        "--cache_dir",
        help="keep sentence embeddings in this folder (checksummed files), reused by later runs; writable by "
        "trusted users only (anyone who writes there can change your scores); private to you unless "
        "FASTBERTSCORE_CACHE_GROUP=1",
    )
    layer_registry: bool = _option(
        False,
        "--layer_registry",
        help="for a model without a published layer, use the one `bertscore tune-layer --record` saved (the hash "
        "names it in its layer)",
    )

    def __post_init__(self) -> None:
        for name in ("all_layers", "rescale_with_baseline", "use_fast_tokenizer", "layer_registry"):
            check_flag(getattr(self, name), name)  # 1 or "no" crashed inside the encoder or transformers
        check_options(
            model_type=self.model_type,
            lang=self.lang,
            rescale_with_baseline=self.rescale_with_baseline,
            baseline_path=self.baseline_path,
            dtype=self.dtype,
            long_inputs=self.long_inputs,
            window_stride=self.window_stride,
            cache_mb=self.cache_mb,
            cache_dir=self.cache_dir,
            device=self.resolved_device,
        )
        if self.batch_size is not None:
            check_positive_int(self.batch_size, "batch_size")
        if self.memory_mb is not None:
            check_positive_int(self.memory_mb, "memory_mb")
        if not isinstance(self.idf, (bool, Mapping)):
            raise TypeError(f"idf must be True, False or a {{token_id: weight}} mapping, got {type(self.idf).__name__}")
        if isinstance(self.idf, Mapping):
            check_idf_mapping(self.idf)  # before any model work: a bad weight gave NaN or sign-flipped scores

    @cached_property
    def resolved_device(self) -> str:
        """``device``, or cuda when available else cpu; a ``ValueError`` naming what exists if it is not there.
        Resolved once, when the settings are made."""
        return check_device(self.device)

    @cached_property
    def resolved_dtype(self) -> str:
        """``dtype`` with "auto" resolved for the device: what the encoder runs in and the hash names. Resolved
        once, on first use (on a CPU "auto" measures bfloat16 once: settings made only to check a request skip it)."""
        return resolve_dtype(self.dtype, self.resolved_device)

    @cached_property
    def model_type_or_default(self) -> str:
        """``model_type``, or the default model of ``lang`` (one of the two is set: ``__post_init__`` checks it);
        read once."""
        return self.model_type if self.model_type is not None else model_for_lang(cast(str, self.lang))

    def replace(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def scorer_key(self) -> tuple[tuple[str, type, object], ...]:
        """What a scorer built from these settings is: every option but :data:`PER_CALL`, with its type (the idf
        mapping by its weights and its default weight, a path as a string); settings with equal keys build
        interchangeable scorers. The type keeps ``num_layers=True`` or ``2.0``, which the scorer's load refuses,
        from finding the scorer of ``1`` or ``2``. Made on each call: an idf mapping is the caller's, and a key
        made once would miss a change to it."""
        out = []
        for f in fields(self):
            if f.name in PER_CALL:
                continue
            value = getattr(self, f.name)
            kind = type(value)
            if isinstance(value, Mapping):  # the idf mapping, by its weights and its default
                value = mapping_key(value)
            out.append((f.name, kind, str(value) if isinstance(value, os.PathLike) else value))
        return tuple(out)

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def help_of(cls, name: str) -> str:
        """Option ``name``'s help, as written once in its field (other options named in `backticks`)."""
        return next(f.metadata["help"] for f in fields(cls) if f.name == name)

    @classmethod
    def options_doc(cls, indent: int) -> str:
        """Every option as a docstring's ``Args`` lines, ``name (kind): help`` (``extra``: not one of bert-score's),
        wrapped at :data:`DOC_WIDTH` under ``indent`` spaces: what the metric card and ``score``'s docstring show."""
        ours = cls.names().index(FIRST_ADDITION)
        lines = []
        for index, f in enumerate(fields(cls)):
            kinds = dict.fromkeys(_KINDS.get(part, part) for part in str(f.type).split(" | ") if part != "None")
            kind = " or ".join(kinds) + (", extra" if index >= ours else "")
            first = f"{' ' * indent}{f.name} ({kind}): {f.metadata['help']}."
            lines += textwrap.wrap(
                first, DOC_WIDTH, subsequent_indent=" " * (indent + 4), break_long_words=False, break_on_hyphens=False
            )
        return "\n".join(lines)

    @classmethod
    def keyword_parameters(cls) -> list[inspect.Parameter]:
        """The settings as keyword parameters, and ``idf_sents`` (the texts idf is counted over, which the front
        door takes beside them: settings hold no texts), for front doors whose signature must be explicit
        (evaluate's ``_compute``)."""
        return [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=None if f.default is MISSING else f.default
            )
            for f in fields(cls)
        ] + [inspect.Parameter("idf_sents", inspect.Parameter.KEYWORD_ONLY, default=None)]

    @classmethod
    def from_options(cls, where: str, options: Mapping[str, Any]) -> Settings:
        """Settings from keyword options; an unknown one is a ``TypeError`` that names it and ``where``."""
        unknown = [name for name in options if name not in _NAMES]
        if unknown:
            raise TypeError(
                f"{where} got an unexpected keyword argument {unknown[0]!r}; the options are: {', '.join(cls.names())}"
            )
        return cls(**options)


#: Every option's name, once (``from_options`` checks each given option against it).
_NAMES = frozenset(Settings.names())


def documenting_options(function: F) -> F:
    """``function`` with the line :data:`OPTIONS_LINE` of its docstring replaced by every option's help, at that
    line's indent (:meth:`Settings.options_doc`)."""
    if function.__doc__:  # None under python -OO
        function.__doc__ = "\n".join(
            Settings.options_doc(len(line) - len(line.lstrip())) if line.strip() == OPTIONS_LINE else line
            for line in function.__doc__.split("\n")
        )
    return function
