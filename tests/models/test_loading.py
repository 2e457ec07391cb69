"""Models are found offline: a local folder, the embedded copy, or the id for the Hub."""

from __future__ import annotations

from paths import MINILM

import fastbertscore as fb
from fastbertscore.models.loading import resolve_model_source


def test_the_embedded_model_is_found_in_site_packages(minilm_path):
    assert resolve_model_source(MINILM) == minilm_path
    assert resolve_model_source("all-MiniLM-L6-v2") == minilm_path


def test_roberta_prefix_space_is_applied(tiny_model):
    """bert-score asks for a prefix space per call, which transformers 5 ignores; we set it on the tokenizer."""
    from transformers import AutoTokenizer

    path = tiny_model("roberta-noprefix")
    raw = AutoTokenizer.from_pretrained(path)
    scorer = fb.BERTScorer(model_type=path, num_layers=1)
    text = "Hello world, this is a test."
    assert scorer.tokenizer(text)["input_ids"] == raw(" " + text)["input_ids"] != raw(text)["input_ids"]
