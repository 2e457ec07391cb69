"""Which models the Space loads: the default model and every model with a published rescaling baseline, and
whatever its deployer adds with :data:`MODELS_VARIABLE`. Any other id is refused before anything is loaded, so
a visitor cannot make the Space download (and keep in its Hub cache) any model on the Hub."""

from __future__ import annotations

import functools
import os

from fastbertscore.baselines.lookup import SHIPPED_DIRS
from fastbertscore.models.defaults import DEFAULT_MODEL

#: The environment variable that widens the list: Hub model ids, comma-separated.
MODELS_VARIABLE = "FASTBERTSCORE_SPACE_MODELS"


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


def allowed_models() -> frozenset[str]:
    """The model ids the Space loads: the default, the published baselines' models and :data:`MODELS_VARIABLE`'s."""
    added = [m.strip() for m in os.environ.get(MODELS_VARIABLE, "").split(",") if m.strip()]
    return frozenset({DEFAULT_MODEL, *published_baseline_models(), *added})


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
            f"The model {model_id!r} is not served here: this Space loads {DEFAULT_MODEL} and the "
            f"{len(published_baseline_models())} models with a published rescaling baseline (such as roberta-large), "
            f"and its deployer can add others with {MODELS_VARIABLE}"
        )
    return model_id
