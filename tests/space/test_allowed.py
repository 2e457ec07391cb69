"""fastbertscore.space.allowed: the Space loads the default model and those with a published baseline, plus what
its deployer lists in FASTBERTSCORE_SPACE_MODELS; any other id is refused before anything loads."""

from __future__ import annotations

import pytest
from paths import MINILM, REPO

from fastbertscore import space
from fastbertscore.space.allowed import PARAMETERS_M


def test_the_list_is_the_default_and_the_shipped_baselines_models():
    shipped = {
        str(p.relative_to(REPO / "baselines").with_suffix("")).split("/", 1)[1]
        for p in (REPO / "baselines").rglob("*.tsv")
    }
    assert set(space.published_baseline_models()) == shipped
    assert {MINILM, "roberta-large", "microsoft/deberta-xlarge-mnli", "allenai/scibert_scivocab_uncased"} <= shipped
    assert space.allowed_models() == {MINILM, *filter(space.fits_space, shipped)}


def test_the_default_list_holds_only_models_that_fit_the_spaces_memory(monkeypatch):
    # The list took every published baseline's model, up to deberta-xlarge-mnli's 750M parameters.
    assert set(PARAMETERS_M) == set(space.published_baseline_models())  # each one's size is known
    too_big = {m for m, millions in PARAMETERS_M.items() if millions * 1_000_000 > space.MAX_PARAMETERS}
    assert {"microsoft/deberta-xlarge-mnli", "xlm-roberta-large"} <= too_big
    assert "roberta-large" not in too_big
    assert not too_big & space.allowed_models()
    with pytest.raises(ValueError, match="of at most 500 million parameters"):
        space.check_allowed_model("microsoft/deberta-xlarge-mnli")
    monkeypatch.setenv(space.MODELS_VARIABLE, "microsoft/deberta-xlarge-mnli")  # the deployer's opt-in
    assert space.check_allowed_model("microsoft/deberta-xlarge-mnli") == "microsoft/deberta-xlarge-mnli"
    text = (REPO / "docs" / "space.md").read_text()
    assert f"`MAX_PARAMETERS` = {space.MAX_PARAMETERS:,}" in text
    assert all(f"`{model}`" in text for model in too_big)  # the page says which it leaves out


@pytest.mark.parametrize("handler", ["pair", "endpoint"])
def test_another_model_is_refused_in_one_sentence_before_any_load(handler, model_builds):
    call = {
        "pair": lambda: space.score_pair("a", "b", space.Options(model="someone/any-model")),
        "endpoint": lambda: space.score_api("a", "b", "someone/any-model"),
    }[handler]
    with pytest.raises(space.SpaceError) as raised:
        space.on_model_thread(call)()
    message = str(raised.value)
    assert message.startswith("The model 'someone/any-model' is not served here") and space.MODELS_VARIABLE in message
    assert message.count(". ") == 0 and "\n" not in message
    assert model_builds == []


def test_a_deployer_widens_the_list_and_paths_stay_refused(monkeypatch, model_builds):
    monkeypatch.setenv(space.MODELS_VARIABLE, " someone/any-model , /etc,tests")
    assert {"someone/any-model", "/etc", "tests"} <= space.allowed_models()
    # Now allowed, the id gets as far as a load: of its tokenizer, to count the request's work, which fails offline
    # naming it, on the request's thread (no weights are loaded for a model whose tokenizer cannot be).
    with pytest.raises(space.SpaceError, match="someone/any-model") as raised:
        space.on_model_thread(space.score_api)("a", "b", "someone/any-model")
    assert "not served here" not in str(raised.value) and "tokenizer" in str(raised.value)
    for path in ("/etc", "tests"):  # listed or not, a path is never loaded
        with pytest.raises(space.SpaceError, match="is not a Hugging Face Hub model id"):
            space.on_model_thread(space.score_api)("a", "b", path)
