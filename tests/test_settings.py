"""Settings: one checked value per run; options that would make the hash and the numbers disagree are refused."""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import fields

import pytest
import torch
from paths import MINILM, REPO
from tolerances import assert_scores_close

import fastbertscore as fb
from fastbertscore.cli.main import main as bertscore
from fastbertscore.settings import Settings


def test_an_idf_mapping_with_idf_sents_is_refused_naming_both():
    for build in (
        lambda **o: fb.score(["a cat"], ["a dog"], model_type=MINILM, **o),
        lambda **o: fb.BERTScorer(model_type=MINILM, **o),
    ):
        with pytest.raises(ValueError, match=r"idf=\{token_id: weight\} and idf_sents= .* give one"):
            build(idf={7592: 2.0}, idf_sents=["a cat sat", "it rains"])


def test_counting_idf_over_sentences_replaces_a_mapping_in_the_hash_too(mt_pairs):
    cands, refs = mt_pairs[0][:8], mt_pairs[1][:8]
    mapped = fb.BERTScorer(model_type=MINILM, idf={7592: 2.0})
    before = mapped.hash
    mapped.compute_idf(refs)  # the weights now come from these sentences: so must the hash
    counted = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=refs)
    assert mapped.hash == counted.hash != before
    assert_scores_close(mapped.score(cands, refs), counted.score(cands, refs))


def test_unknown_options_and_bad_values_are_named():
    with pytest.raises(TypeError, match="score\\(\\) got an unexpected keyword argument 'idf_weights'"):
        Settings.from_options("score()", {"idf_weights": {}})
    with pytest.raises(TypeError, match="idf must be True, False or a"):
        Settings(model_type=MINILM, idf="yes")
    with pytest.raises(ValueError, match="batch_size"):
        Settings(model_type=MINILM, batch_size=0)


@pytest.mark.parametrize("name", ["all_layers", "rescale_with_baseline", "use_fast_tokenizer", "layer_registry"])
@pytest.mark.parametrize("value", [1, "no", None])
def test_a_switch_given_something_else_than_a_bool_is_named(name, value):
    # All_layers=1 crashed inside the encoder, all_layers="no" inside transformers
    with pytest.raises(TypeError, match=f"{name} must be True or False, got {type(value).__name__}"):
        Settings(model_type=MINILM, lang="en", **{name: value})
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        fb.score(["The cat sat."], ["A cat sat."], model_type=MINILM, **{name: value})


def test_settings_hold_no_texts_and_idf_is_counted_over_the_flattened_references_only_when_idf_is_true():
    refs = ["a cat", ["it rains", "rain falls"]]
    with pytest.raises(TypeError, match="unexpected keyword argument 'idf_sents'"):
        Settings(model_type=MINILM, idf=True, idf_sents=["x"])  # type: ignore[call-arg]
    counted = fb.BERTScorer(model_type=MINILM, idf=True, idf_sents=["a cat", "it rains", "rain falls"]).weights()
    assert torch.equal(fb.cached_scorer(Settings(model_type=MINILM, idf=True), refs).weights().table, counted.table)
    assert torch.equal(fb.cached_scorer(Settings(model_type=MINILM), refs).weights().table, counted.fallback)


def test_the_scorer_key_leaves_out_only_the_per_call_options():
    base = Settings(model_type=MINILM)
    assert base.scorer_key() == base.replace(batch_size=2, nthreads=1).scorer_key()
    assert base.scorer_key() != base.replace(cache_mb=8).scorer_key()
    assert base.replace(idf={1: 2.0}).scorer_key() != base.replace(idf={1: 3.0}).scorer_key()


def _plain(text: str) -> str:
    return " ".join(text.split())


def _written_texts() -> list[str]:
    """Every string the package, the evaluate module and the Space's app write, and every Markdown page."""
    sources = [*sorted((REPO / "fastbertscore").rglob("*.py")), REPO / "bertscore.py", REPO / "app.py"]
    strings = [
        _plain(node.value)
        for path in sources
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", *sorted((REPO / "docs").glob("*.md"))]
    return strings + [_plain(page.read_text(encoding="utf-8")) for page in pages]


def test_each_options_help_is_written_once_and_shown_by_the_cli_the_card_and_score(capsys, monkeypatch):
    written = _written_texts()
    monkeypatch.setenv("COLUMNS", "10000")  # argparse wraps at the terminal's width
    with pytest.raises(SystemExit):
        bertscore(["--help"])
    cli = _plain(capsys.readouterr().out)
    spec = importlib.util.spec_from_file_location("bertscore_card", REPO / "bertscore.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    card, docstring = _plain(module.BERTScore.__doc__), _plain(fb.score.__doc__)
    for f in fields(Settings):
        help = _plain(Settings.help_of(f.name))
        assert len(help) > 20 and sum(text.count(help) for text in written) == 1, f.name
        for shown, where in ((card, "the metric card"), (docstring, "score's docstring")):
            assert re.search(rf"\b{f.name} \([a-z, ]+\): {re.escape(help)}", shown), f"{where} lacks {f.name}"
        if f.metadata["flags"]:  # on the command line, other options are named by their flags
            assert all(_plain(part) in cli for part in re.split(r"`\w+`", help)), f"bertscore --help lacks {f.name}"
    assert "neighbouring windows share when --long_inputs is window" in cli
    assert "without --lang, the embedded default model" in cli
