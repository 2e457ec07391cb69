"""Token-, word- and sentence-level explanations: what each unit matched, and what a candidate missed.

Every unit carries character offsets into the original strings, so ``text[start:end]`` is the unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from fastbertscore import exact
from fastbertscore.baselines.table import rescale
from fastbertscore.front import resolve
from fastbertscore.pipeline.tokens import Pieces, pieces
from fastbertscore.scorer import BERTScorer

Level = Literal["token", "word", "sentence"]

#: Default ``presence_threshold`` per level, on raw cosine similarity / BERTScore: between what a kept and what an
#: omitted token, word or sentence scores on the default model (docs/explanations.md gives the ranges). Models and
#: layers differ, so pass a threshold of your own, or use rescaling, where these become RESCALED_THRESHOLDS.
THRESHOLDS: dict[str, float] = {"token": 0.5, "word": 0.5, "sentence": 0.6}
RESCALED_THRESHOLDS: dict[str, float] = {"token": 0.3, "word": 0.3, "sentence": 0.2}


@dataclass(frozen=True)
class Unit:
    """A token, word or sentence of one side, and its best match on the other side."""

    text: str
    start: int
    end: int
    similarity: float  # token/word: cosine to the best match; sentence: recall (reference) or precision (candidate)
    match: int | None  # index of the best-matching unit on the other side; None if that is a special token
    weight: float  # idf (or plain) weight; for words the sum over their tokens


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` returns. ``missing_spans`` are reference units below the threshold (what the
    candidate left out); ``extra_spans`` are candidate units below it (what it added)."""

    candidate: str
    reference: str
    level: Level
    threshold: float
    precision: float
    recall: float
    f1: float
    candidate_units: list[Unit]
    reference_units: list[Unit]
    missing_spans: list[Unit] = field(default_factory=list)
    extra_spans: list[Unit] = field(default_factory=list)
    similarity: torch.Tensor | None = None  # token level: (candidate tokens, reference tokens), no special tokens
    word_ids: tuple[list[int], list[int]] | None = None  # token level: word index of each candidate/reference unit

    def to_dict(self) -> dict[str, str | float | list[dict[str, object]]]:
        out: dict[str, str | float | list[dict[str, object]]] = {
            k: getattr(self, k) for k in ("candidate", "reference", "level", "threshold", "precision", "recall", "f1")
        }
        for name in ("candidate_units", "reference_units", "missing_spans", "extra_spans"):
            out[name] = [u.__dict__ for u in getattr(self, name)]
        return out


def explain(
    candidate: str,
    reference: str,
    *,
    level: Level = "token",
    presence_threshold: float | None = None,
    scorer: BERTScorer | None = None,
    rescaled: bool | None = None,
    **options: Any,
) -> Explanation:
    """Explain the BERTScore of one pair at ``level`` (see :data:`THRESHOLDS` for the defaults).

    ``options`` are the fields of :class:`~fastbertscore.Settings` (``model_type``, ``num_layers``, ``lang``,
    ``rescale_with_baseline``, ...; with ``idf=True`` idf is counted over ``reference``, as ``score`` counts it
    over its references); or pass ``scorer`` to reuse a loaded model. With rescaling, similarities
    are rescaled with the F baseline of the layer, ``(s - b) / (1 - b)``, and the threshold applies to the
    rescaled values; ``rescaled=False`` explains a rescaling scorer's raw numbers (``None``: as the scorer does). With a scorer built with ``all_layers=True``, the scorer's own layer (``num_layers``) is
    explained. ``batch_size`` (an option, or the scorer's own) sets the sentences per encoder batch.

    Raises:
        TypeError, ValueError: non-string texts, an unknown ``level`` or option, ``scorer`` with options, or
            ``rescaled=True`` with a scorer that does not rescale.

    Example:
        >>> e = explain("The cat sat.", "The cat sat on the mat.", level="word",
        ...             model_type="sentence-transformers/all-MiniLM-L6-v2")
        >>> [unit.text for unit in e.missing_spans], e.recall < e.precision
        (['on', 'mat'], True)
    """
    for name, value in (("candidate", candidate), ("reference", reference)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if level not in THRESHOLDS:
        raise ValueError(f"level={level!r} is not one of {', '.join(THRESHOLDS)}")
    scorer, batch_size = resolve(options, scorer=scorer, caller="explain()", idf_texts=[reference])
    if rescaled and not scorer.rescale_with_baseline:
        raise ValueError("rescaled=True needs a scorer that rescales (rescale_with_baseline=True)")
    view = _View(scorer, batch_size, scorer.rescale_with_baseline if rescaled is None else rescaled)
    if presence_threshold is None:
        presence_threshold = (RESCALED_THRESHOLDS if view.rescaled else THRESHOLDS)[level]
    P, R, F = (float(x[0]) for x in view.score([candidate], [reference]))
    sim: torch.Tensor | None = None  # token level only
    word_ids: tuple[list[int], list[int]] | None = None
    if level == "sentence":
        cand_units, ref_units = _sentence_units(view, candidate, reference)
    else:
        cand_units, ref_units, sim, word_ids = _token_units(view, candidate, reference, level)
    missing = [u for u in ref_units if u.similarity < presence_threshold]
    extra = [u for u in cand_units if u.similarity < presence_threshold]
    return Explanation(
        candidate, reference, level, presence_threshold, P, R, F, cand_units, ref_units, missing, extra, sim, word_ids
    )


class _View:
    """One layer of a scorer at one batch size: its scores ``(N,)`` and token embeddings ``(T, D)``; with
    ``all_layers``, those of the scorer's own layer."""

    def __init__(self, scorer: BERTScorer, batch_size: int | None, rescaled: bool):
        self.scorer, self.batch_size, self.rescaled = scorer, batch_size, rescaled
        self.layer = scorer.num_layers if scorer.all_layers else None
        self.tokenizer, self.token_limit, self.token_weights = (
            scorer.tokenizer,
            scorer.token_limit,
            scorer.token_weights,
        )

    def _pick(self, values: torch.Tensor) -> torch.Tensor:
        return values if self.layer is None else values[self.layer]

    def score(self, cands: list[str], refs: list[str]) -> tuple[torch.Tensor, ...]:
        """P, R, F (rescaled when the view rescales), each ``(N,)``."""
        result = self.scorer.score_result(cands, refs, batch_size=self.batch_size)
        return tuple(self._pick(x) for x in (result.scores if self.rescaled else result.raw))

    def token_embeddings(self, ids: list[list[int]]) -> list[torch.Tensor]:
        found = self.scorer.token_embeddings(ids, batch_size=self.batch_size)
        return found if self.layer is None else [e[:, self.layer] for e in found]

    def rescale_similarity(self, values: torch.Tensor) -> torch.Tensor:
        """Token similarities rescaled with the layer's F baseline when the view rescales."""
        if not self.rescaled:
            return values
        baseline = self.scorer.baseline_vals
        baseline = baseline if self.layer is None else baseline[self.layer].reshape(3)
        return rescale(values, float(baseline[2]))


def _token_units(
    scorer: _View, candidate: str, reference: str, level: str
) -> tuple[list[Unit], list[Unit], torch.Tensor | None, tuple[list[int], list[int]] | None]:
    cand, ref = (pieces(scorer.tokenizer, t, scorer.token_limit) for t in (candidate, reference))
    cand_emb, ref_emb = scorer.token_embeddings([cand.ids, ref.ids])
    with exact.exact_float32():  # similarities in float32 whatever the caller's TF32 switches
        full = scorer.rescale_similarity((cand_emb @ ref_emb.T).float().cpu())
    c_keep = [i for i, sp in enumerate(cand.special) if not sp]
    r_keep = [j for j, sp in enumerate(ref.special) if not sp]
    cand_units = _side_units(candidate, cand, full, r_keep, scorer, level)
    ref_units = _side_units(reference, ref, full.T, c_keep, scorer, level)
    if level == "word":
        return _words(candidate, cand_units, cand, ref), _words(reference, ref_units, ref, cand), None, None
    word_ids = (_word_ids(cand), _word_ids(ref))
    return cand_units, ref_units, full[c_keep][:, r_keep], word_ids


def _side_units(
    text: str, side: Pieces, sim: torch.Tensor, other_keep: list[int], scorer: _View, level: str
) -> list[Unit]:
    """One unit per non-special token; its best match over all tokens of the other side (as scoring does)."""
    weights = scorer.token_weights(side.ids) if side.ids else torch.zeros(0)
    best = sim.max(dim=1)
    position = {j: k for k, j in enumerate(other_keep)}
    units = []
    for i, (start, end) in enumerate(side.spans):
        if side.special[i]:
            continue
        units.append(
            Unit(
                text[start:end],
                start,
                end,
                float(best.values[i]),
                position.get(int(best.indices[i])),
                float(weights[i]),
            )
        )
    return units


def _words(text: str, units: list[Unit], side: Pieces, other: Pieces) -> list[Unit]:
    """Merge the subword units of one side into words (word ids of its and the other side's non-special tokens)."""
    return merge_words(text, units, _word_ids(side), _word_ids(other))


def _word_ids(side: Pieces) -> list[int]:
    """The word id of each non-special token, in order (the units of :func:`_side_units`)."""
    words = []
    for word, special in zip(side.words, side.special, strict=True):
        if special:
            continue
        if word is None:
            raise ValueError("the tokenizer maps a token to no word; word-level explanations need its word ids")
        words.append(word)
    return words


def merge_words(text: str, units: list[Unit], words: list[int], other_words: list[int]) -> list[Unit]:
    """Merge token units into words: spans joined, similarity the weight-averaged token similarity, the match
    the word of the best token's match. ``words[i]`` is unit ``i``'s word id, ``other_words`` the other side's
    (a token-level explanation's ``word_ids``)."""
    groups: dict[int, list[Unit]] = {}
    for unit, word in zip(units, words, strict=True):
        groups.setdefault(word, []).append(unit)
    merged = []
    order = {w: k for k, w in enumerate(dict.fromkeys(other_words))}
    for group in groups.values():
        total = sum(u.weight for u in group)
        shares = [u.weight / total for u in group] if total > 0 else [1 / len(group)] * len(group)
        sim = sum(s * u.similarity for s, u in zip(shares, group, strict=True))
        top = max(group, key=lambda u: u.similarity)
        match = order.get(other_words[top.match]) if top.match is not None else None
        start, end = min(u.start for u in group), max(u.end for u in group)
        merged.append(Unit(text[start:end], start, end, sim, match, total))
    return merged


_SENTENCE_END = re.compile(r"[^.!?。！？]+(?:[.!?。！？]+|$)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of sentences: runs ending in . ! ? (or their CJK forms), stripped of blanks."""
    spans = []
    for m in _SENTENCE_END.finditer(text):
        start, end = m.start(), m.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
    return spans


def _sentence_units(scorer: _View, candidate: str, reference: str) -> tuple[list[Unit], list[Unit]]:
    """Each sentence's score against the whole other text: already rescaled (P and R baselines) when the scorer
    rescales."""
    c_spans, r_spans = split_sentences(candidate), split_sentences(reference)
    c_sents = [candidate[a:b] for a, b in c_spans] or [""]
    r_sents = [reference[a:b] for a, b in r_spans] or [""]
    # One score call for the three views, so each sentence and both whole texts are embedded once.
    n_r, n_c = len(r_sents), len(c_sents)
    cands = [candidate] * n_r + c_sents + [c for c in c_sents for _ in r_sents]
    refs = r_sents + [reference] * n_c + [r for _ in c_sents for r in r_sents]
    P, R, F = scorer.score(cands, refs)
    recall, precision = R[:n_r], P[n_r : n_r + n_c]
    grid = F[n_r + n_c :].reshape(n_c, n_r)
    cand_units = [
        Unit(candidate[a:b], a, b, float(precision[i]), int(grid[i].argmax()), 1.0) for i, (a, b) in enumerate(c_spans)
    ]
    ref_units = [
        Unit(reference[a:b], a, b, float(recall[j]), int(grid[:, j].argmax()), 1.0) for j, (a, b) in enumerate(r_spans)
    ]
    return cand_units, ref_units


__all__ = ["RESCALED_THRESHOLDS", "THRESHOLDS", "Explanation", "Unit", "explain", "split_sentences"]
