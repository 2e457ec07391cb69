"""The scorer behind every Space request: one loaded model serves raw and rescaled requests alike.

Where the language has a baseline, the Space always scores with the rescaling scorer of the boxes' settings;
a request that asks for raw numbers reads them from the same result (rescaling comes after scoring, so the raw
numbers are there), under the raw hash. Alternating the raw ``/score`` endpoint with the rescaled Pair tab thus
keeps one scorer, one loaded model and one embedding cache, instead of building a scorer for each kind in turn.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import replace

from fastbertscore.baselines.table import BaselineError
from fastbertscore.front import cached_scorer, run
from fastbertscore.pipeline.budget import BatchHook
from fastbertscore.result import ScoreResult
from fastbertscore.scorer import BERTScorer
from fastbertscore.settings import Settings
from fastbertscore.space.bounded import BoundedCache
from fastbertscore.space.limits import MAX_NOTE_BYTES, MAX_NOTES
from fastbertscore.space.runner import SpaceError, first_line
from fastbertscore.validate import Refs, check_pairs

logger = logging.getLogger(__name__)

#: Settings without a rescaling baseline → the note a user reads (asked once, not per request); at most
#: :data:`~fastbertscore.space.limits.MAX_NOTES` of them, of :data:`~fastbertscore.space.limits.MAX_NOTE_BYTES`.
NOTES: BoundedCache[str] = BoundedCache(MAX_NOTES, MAX_NOTE_BYTES)


def note_key(settings: Settings) -> tuple:
    """What decides whether ``settings`` have a baseline: every setting but idf and those that change no number."""
    plain = replace(settings, rescale_with_baseline=True, idf=False)
    return plain.scorer_key()


def no_baseline_note(lang: str, model: str) -> str:
    """What a Space user reads when a language has no baseline for the model: what to do, in the browser.

    Example:
        >>> no_baseline_note("xx", "roberta-large")  # doctest: +NORMALIZE_WHITESPACE
        "Only raw scores: there is no rescaling baseline for language 'xx' with roberta-large. To see rescaled
        scores, choose another language (such as en), or untick 'Also show rescaled scores'."
    """
    return (
        f"Only raw scores: there is no rescaling baseline for language {lang!r} with {model}. To see rescaled "
        "scores, choose another language (such as en), or untick 'Also show rescaled scores'."
    )


def unreadable_baseline_note(lang: str, model: str) -> str:
    """What a Space user reads when the baseline lookup failed on the server (its files, the Hub): the detail is in
    the server's log, never on the page."""
    return (
        f"Only raw scores: the rescaling baseline for language {lang!r} with {model} could not be read on the server "
        "just now (its log says why); try again later for rescaled scores."
    )


def space_scorer(settings: Settings, idf_texts: Refs | None = None) -> tuple[BERTScorer, str]:
    """The scorer for ``settings`` (raw ones: ``rescale_with_baseline`` is decided here), with idf counted over
    ``idf_texts`` when the settings ask for idf, and a note.

    With a language that has a baseline, the rescaling scorer; else the raw one, and the note says why (empty
    without a language: the Space's own note asks for one). A filesystem or Hub error in the baseline lookup gives
    raw scores too, with a note, and is asked again next time (an error of the model's load is raised by the raw
    scorer's load). Use :func:`of_kind` to read raw or rescaled numbers.
    """
    if not settings.lang:
        return cached_scorer(settings, idf_texts), ""
    rescaling = replace(settings, rescale_with_baseline=True)
    key = note_key(settings)
    note = NOTES.get(key)
    if note is None:
        try:
            return cached_scorer(rescaling, idf_texts), ""
        except BaselineError:
            note = no_baseline_note(settings.lang, settings.model_type_or_default)
            NOTES.put(key, note)
        except OSError:  # the lookup's files or the Hub failed (a full disk, a permission): not kept, asked again
            logger.warning("the baseline of %s could not be read", key, exc_info=True)
            note = unreadable_baseline_note(settings.lang, settings.model_type_or_default)
    return cached_scorer(settings, idf_texts), note


def scored(scorer: BERTScorer, cands: list[str], refs: list[str] | list[list[str]], hook: BatchHook) -> ScoreResult:
    """``scorer.score_result(cands, refs)``, its encoder batches calling ``hook`` (the model thread's deadline)."""
    return run(check_pairs(cands, refs), scorer=scorer, between_batches=hook)


@contextlib.contextmanager
def loading(model_id: str) -> Iterator[None]:
    """A load of ``model_id`` (its weights, or its tokenizer to count work) failing as one line: the engine's own
    message for a setting it refuses (a layer past the depth, a family BERTScore cannot use), else a fixed sentence,
    the detail in the server's log only (no network, a full disk, a device)."""
    try:
        yield
    except (ValueError, TypeError) as error:
        message = first_line(error)
        raise SpaceError(
            message if model_id in message else f"Could not load the model {model_id!r}: {message}"
        ) from None
    except SpaceError:
        raise
    except Exception:
        logger.warning("loading %s failed", model_id, exc_info=True)
        raise SpaceError(f"Could not load the model {model_id!r} just now; the server's log says why") from None


def load_scorer(settings: Settings, idf_texts: Refs | None = None, rescaled: bool = False) -> tuple[BERTScorer, str]:
    """The Space's scorer for ``settings`` (it rescales where the language has a baseline: raw requests read the
    raw numbers of the same result; with idf, counted over ``idf_texts``, the request's references) and a note when
    rescaled numbers were asked for but cannot be shown."""
    with loading(settings.model_type_or_default):
        scorer, note = space_scorer(settings, idf_texts)
    if not rescaled:
        return scorer, ""
    return scorer, note or ("" if settings.lang else "Only raw scores: rescaling needs a language (e.g. en).")


def of_kind(result: ScoreResult, scorer: BERTScorer, rescaled: bool) -> ScoreResult:
    """``result`` as a request for ``rescaled`` numbers sees it: unchanged where it has them, else its raw
    numbers alone under the raw hash (a rescaling scorer's raw numbers are the raw scorer's)."""
    if rescaled or result.rescaled is None:
        return result
    return ScoreResult(result.raw, None, result.best_reference, raw_hash(scorer))


def raw_hash(scorer: BERTScorer) -> str:
    """The hash code of the scorer's raw numbers (the scorer's own when it does not rescale)."""
    return scorer.signature.raw().hash


def scorer_of_kind(scorer: BERTScorer, rescaled: bool, idf_texts: Refs | None = None) -> BERTScorer:
    """``scorer``, or its raw twin where raw numbers are asked of a rescaling scorer (idf counted over the same
    ``idf_texts``): for work that reads the scorer's own kind of score (``compare``), not a :class:`ScoreResult`."""
    if rescaled or not scorer.rescale_with_baseline:
        return scorer
    return cached_scorer(replace(scorer.settings, rescale_with_baseline=False), idf_texts)
