"""Why a score is what it is: :mod:`.explanation` (which tokens, words or sentences of one side found a match on
the other, and what the candidate missed) and :mod:`.plot` (the token similarity heatmap; needs matplotlib)."""

from fastbertscore.explanations.explanation import (
    RESCALED_THRESHOLDS,
    THRESHOLDS,
    Explanation,
    Unit,
    explain,
    split_sentences,
)

__all__ = ["RESCALED_THRESHOLDS", "THRESHOLDS", "Explanation", "Unit", "explain", "split_sentences"]
