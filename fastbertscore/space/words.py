"""The reference's words and the ones the candidate missed, from a token-level explanation: the Pair tab draws
the token heatmap and highlights missed words from one ``explain`` call instead of two (each embeds both texts).

Words are merged as ``explain(level="word")`` merges them; ``tests/space/test_words.py`` holds the two equal.
"""

from __future__ import annotations

from fastbertscore.explanations.explanation import RESCALED_THRESHOLDS, THRESHOLDS, Explanation, Unit


def reference_words(tokens: Explanation, rescaled: bool) -> tuple[list[Unit], list[Unit]]:
    """``(words, missing)`` of the reference of a token-level explanation: each word's similarity is the
    weight-averaged similarity of its tokens, and a word is missing below the word-level default threshold.

    Raises:
        ValueError: the explanation is not token level.
    """
    if tokens.word_ids is None:
        raise ValueError("reference_words needs a token-level explanation: explain(..., level='token')")
    other_words = tokens.word_ids[0]
    order = {w: k for k, w in enumerate(dict.fromkeys(other_words))}
    groups: dict[int, list[Unit]] = {}
    for unit, word in zip(tokens.reference_units, tokens.word_ids[1]):
        groups.setdefault(word, []).append(unit)
    words = []
    for group in groups.values():
        total = sum(u.weight for u in group)
        shares = [u.weight / total for u in group] if total > 0 else [1 / len(group)] * len(group)
        similarity = sum(s * u.similarity for s, u in zip(shares, group))
        top = max(group, key=lambda u: u.similarity)
        match = order.get(other_words[top.match]) if top.match is not None else None
        start, end = min(u.start for u in group), max(u.end for u in group)
        words.append(Unit(tokens.reference[start:end], start, end, similarity, match, total))
    threshold = (RESCALED_THRESHOLDS if rescaled else THRESHOLDS)["word"]
    return words, [u for u in words if u.similarity < threshold]
