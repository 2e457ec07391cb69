"""Which models the Space loads: the default model and every model with a published rescaling baseline that fits
its memory (:data:`MAX_PARAMETERS`), and whatever its deployer adds with :data:`MODELS_VARIABLE` (larger ones
included). Any other id is refused before anything is loaded, so a visitor cannot make the Space download (and
keep in its Hub cache) any model on the Hub."""

from __future__ import annotations

import functools
import os

from fastbertscore.baselines.lookup import SHIPPED_DIRS
from fastbertscore.models.defaults import DEFAULT_MODEL

#: The environment variable that widens the list: Hub model ids, comma-separated.
MODELS_VARIABLE = "FASTBERTSCORE_SPACE_MODELS"
#: The most parameters of a model the Space loads unless its deployer lists it: 2 GB of float32 weights, kept in
#: bfloat16 too on a CPU that computes it natively (3 GB), with the next model loading beside them while they serve
#: (up to twice its float32 size from a ``.bin`` checkpoint): 7 GB at the peak, under half of the 16 GB of a free
#: CPU Space, the rest for the app, the uploads and one request's embeddings.
MAX_PARAMETERS = 500_000_000

#: Millions of parameters of each model with a published baseline, as loaded (the encoder, no head): what
#: :data:`MAX_PARAMETERS` is held to. A new baseline's model gets its line (a test holds the two together).
PARAMETERS_M = {
    "albert-base-v1": 12,
    "albert-base-v2": 12,
    "albert-large-v1": 18,
    "albert-large-v2": 18,
    "albert-xlarge-v1": 59,
    "albert-xlarge-v2": 59,
    "albert-xxlarge-v1": 223,
    "albert-xxlarge-v2": 223,
    "allenai/scibert_scivocab_uncased": 110,
    "bert-base-cased-finetuned-mrpc": 108,
    "bert-base-chinese": 102,
    "bert-base-multilingual-cased": 178,
    "bert-base-uncased": 110,
    "bert-large-uncased": 335,
    "distilbert-base-multilingual-cased": 134,
    "distilbert-base-uncased": 66,
    "distilbert-base-uncased-distilled-squad": 66,
    "distilroberta-base": 82,
    "microsoft/deberta-base": 139,
    "microsoft/deberta-base-mnli": 139,
    "microsoft/deberta-large": 405,
    "microsoft/deberta-large-mnli": 405,
    "microsoft/deberta-xlarge": 750,
    "microsoft/deberta-xlarge-mnli": 750,
    "roberta-base": 125,
    "roberta-large": 355,
    "roberta-large-mnli": 355,
    "sentence-transformers/all-MiniLM-L6-v2": 23,
    "xlm-mlm-100-1280": 571,
    "xlm-mlm-en-2048": 667,
    "xlm-roberta-base": 278,
    "xlm-roberta-large": 560,
    "xlnet-base-cased": 117,
    "xlnet-large-cased": 360,
}


@functools.cache
def published_baseline_models() -> tuple[str, ...]:
    """The models with a published rescaling baseline, for any language: those of the shipped baseline folder
    (``<lang>/<model id>.tsv``), sorted.

    Example:
        >>> "roberta-large" in published_baseline_models()
        True
    """
    found = set()
    for folder in SHIPPED_DIRS:
        for table in folder.rglob("*.tsv") if folder.is_dir() else ():
            parts = table.relative_to(folder).with_suffix("").parts
            if len(parts) >= 2:  # <lang>/<model id, which may hold one '/'>
                found.add("/".join(parts[1:]))
    return tuple(sorted(found))


def fits_space(model_id: str) -> bool:
    """Whether ``model_id`` is one whose size the Space knows and that has at most :data:`MAX_PARAMETERS`.

    Example:
        >>> fits_space("roberta-large"), fits_space("microsoft/deberta-xlarge-mnli")
        (True, False)
    """
    return model_id in PARAMETERS_M and PARAMETERS_M[model_id] * 1_000_000 <= MAX_PARAMETERS


def allowed_models() -> frozenset[str]:
    """The model ids the Space loads: the default, the published baselines' models that fit (:func:`fits_space`)
    and :data:`MODELS_VARIABLE`'s."""
    added = [m.strip() for m in os.environ.get(MODELS_VARIABLE, "").split(",") if m.strip()]
    return frozenset({DEFAULT_MODEL, *filter(fits_space, published_baseline_models()), *added})


def check_allowed_model(model_id: str) -> str:
    """``model_id`` if the Space serves it.

    Raises:
        ValueError: any other id, in one sentence that says which models are served and how to add one.

    Example:
        >>> check_allowed_model("someone/some-model")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: The model 'someone/some-model' is not served here: this Space loads ... FASTBERTSCORE_SPACE_MODELS
    """
    if model_id not in allowed_models():
        raise ValueError(
            f"The model {model_id!r} is not served here: this Space loads {DEFAULT_MODEL} and the models with a "
            f"published rescaling baseline of at most {MAX_PARAMETERS // 1_000_000:,} million parameters (such as "
            f"roberta-large), and its deployer can add others with {MODELS_VARIABLE}"
        )
    return model_id
