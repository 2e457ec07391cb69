"""PairScorer's arguments are checked before Ray or a model is touched (no cluster needed)."""

from __future__ import annotations

import numpy as np
import pytest

from fastbertscore.scale.raydata import PairScorer


@pytest.mark.parametrize(
    ("doc_freq", "num_docs"), [(np.zeros(8, dtype=np.int64), None), (None, 5)], ids=["counts-only", "total-only"]
)
def test_document_frequencies_and_their_total_go_together(doc_freq, num_docs):
    with pytest.raises(ValueError, match=r"doc_freq= and num_docs= go together"):
        PairScorer(doc_freq=doc_freq, num_docs=num_docs, model_type="sentence-transformers/all-MiniLM-L6-v2")
