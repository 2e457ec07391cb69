"""The reference's words and the ones the candidate missed, from a token-level explanation: the Pair tab draws
the token heatmap and highlights missed words from one ``explain`` call instead of two (each embeds both texts).

Words are merged as ``explain(level="word")`` merges them; ``tests/space/test_words.py`` holds the two equal.
"""

from __future__ import annotations

from fastbertscore.explanations.explanation import RESCALED_THRESHOLDS, THRESHOLDS, Explanation, Unit, merge_words


def reference_words(tokens: Explanation, rescaled: bool) -> tuple[list[Unit], list[Unit]]:
    """``(words, missing)`` of the reference of a token-level explanation: each word's similarity is the
    weight-averaged similarity of its tokens, and a word is missing below the word-level default threshold.

    Raises:
        ValueError: the explanation is not token level.
    """
    if tokens.word_ids is None:
        raise ValueError("reference_words needs a token-level explanation: explain(..., level='token')")
    words = merge_words(tokens.reference, tokens.reference_units, tokens.word_ids[1], tokens.word_ids[0])
    threshold = (RESCALED_THRESHOLDS if rescaled else THRESHOLDS)["word"]
    return words, [u for u in words if u.similarity < threshold]
