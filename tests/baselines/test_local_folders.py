"""A local folder is always a path, never a Hub id: a model saved at ./roberta-large and passed as "roberta-large"
gets no published baseline and a hash of its own, not the Hub model's."""

from __future__ import annotations

import os
import shutil

import pytest
from paths import SHIPPED_BASELINE

import fastbertscore as fb
from fastbertscore.baselines.build import build
from fastbertscore.baselines.lookup import find_baseline, signature_model
from fastbertscore.baselines.table import BaselineError
from fastbertscore.hashing import get_hash

FOLDER_ERROR = (
    r"the local folder .*roberta-large\): baselines are filed under Hub model ids, and a folder path names none"
)


@pytest.fixture
def fine_tuned(tiny_model, tmp_path, monkeypatch):
    """A model saved at ./roberta-large, a name with a published baseline (en/roberta-large.tsv is shipped)."""
    shutil.copytree(tiny_model("roberta"), tmp_path / "roberta-large")
    monkeypatch.chdir(tmp_path)
    return str(tmp_path / "roberta-large")


def test_a_local_folder_named_like_a_hub_model_gets_no_published_baseline(fine_tuned):
    assert find_baseline("en", "sentence-transformers/all-MiniLM-L6-v2")[1].startswith("shipped file")
    with pytest.raises(BaselineError, match=FOLDER_ERROR):
        find_baseline("en", "roberta-large")
    with pytest.raises(BaselineError, match=FOLDER_ERROR + r"\. Pass baseline_path="):
        fb.BERTScorer(model_type="roberta-large", num_layers=2, lang="en", rescale_with_baseline=True)
    own = fb.BERTScorer(
        model_type="roberta-large", num_layers=2, rescale_with_baseline=True, baseline_path=str(SHIPPED_BASELINE)
    )
    assert own.signature.rescale == "custom"  # a table of the user's own still rescales


def test_a_table_of_another_row_count_warns_for_one_layer_and_is_refused_for_all(fine_tuned, caplog):
    # The 4-layer model against a 7-row table: its layer-2 row serves, as in bert-score, with a warning naming it.
    with caplog.at_level("WARNING"):
        fb.BERTScorer(
            model_type="roberta-large", num_layers=2, rescale_with_baseline=True, baseline_path=str(SHIPPED_BASELINE)
        )
    assert (
        f"baseline {SHIPPED_BASELINE} has layers 0..6, but the model has layers 0..4: is it this model" in caplog.text
    )
    with pytest.raises(BaselineError, match=r"has layers 0\.\.6, but the model has layers 0\.\.4: all_layers=True"):
        fb.BERTScorer(
            model_type="roberta-large",
            num_layers=2,
            all_layers=True,
            rescale_with_baseline=True,
            baseline_path=str(SHIPPED_BASELINE),
        )


def test_a_local_folder_named_like_a_hub_model_has_its_own_hash(fine_tuned):
    scorer = fb.BERTScorer(model_type="roberta-large", num_layers=2)
    hub_hash = get_hash("roberta-large", 2, False, False, False, False)  # what the Hub model's scorer says
    assert scorer.signature.model == os.path.realpath(fine_tuned)
    assert scorer.hash.startswith(f"{os.path.realpath(fine_tuned)}_L2_no-idf_version=") and scorer.hash != hub_hash
    assert signature_model("roberta-large") == os.path.realpath(fine_tuned)
    assert signature_model("./roberta-large") == "./roberta-large"  # a path stays as the user wrote it


def test_hub_ids_and_the_embedded_folder_keep_their_names(minilm_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no folder of that name here: a Hub id
    assert signature_model("roberta-large") == "roberta-large"
    monkeypatch.chdir(os.path.dirname(minilm_path))
    name = os.path.basename(minilm_path)  # the embedded model's own folder, named relatively
    assert signature_model(name) == name
    assert find_baseline("en", name)[1].startswith("shipped file")  # maps back to its id, as before


def test_building_a_baseline_for_a_local_folder_needs_a_name(tiny_model, tmp_path, monkeypatch):
    shutil.copytree(tiny_model("roberta"), tmp_path / "tuned")  # "tuned" reads as a Hub id, and is a folder here
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat\na dog ran\nit rains today\nbirds sing\n", encoding="utf-8")
    with pytest.raises(BaselineError, match=r"the local folder .*tuned\):.*--name NAME"):
        build("tuned", "en", corpus, tmp_path / "out", pairs=4, block=4, verbose=False)
    path = build("tuned", "en", corpus, tmp_path / "out", name="acme/tuned", pairs=4, block=4, verbose=False)
    assert path == tmp_path / "out" / "en" / "acme" / "tuned.tsv"
