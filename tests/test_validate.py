"""Bad input: a clear TypeError/ValueError naming the argument and the index, before any model work."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import MINILM

import fastbertscore as fb

# A model that does not exist: if validation ran after loading, these tests would see a load error instead.
NO_MODEL = "/nonexistent/model"


@pytest.mark.parametrize(
    "cands, refs, error, message",
    [
        (["a", "b"], ["a"], ValueError, "differ in length (2 candidates, 1 references)"),
        ([], [], ValueError, "cands is empty"),
        (["a", None], ["a", "b"], TypeError, "cands[1] is None"),
        (["a", "b"], ["a", 3], TypeError, "refs[1] is a int"),
        (["a", "b"], [["a"], ["b", None]], TypeError, "refs[1][1] is None"),
        (["a", "b"], [["a"], []], ValueError, "refs[1] is an empty list"),
        (["a", "b"], [["a"], "b"], TypeError, "refs[1] is a string but refs[0] is a list"),
        ("a", ["a"], TypeError, "cands must be a list of strings, got str"),
        (["a"], None, TypeError, "refs must be a list of strings, got NoneType"),
        ({"a": 1}, ["x"], TypeError, "cands must be a list of strings, got dict"),  # not its keys
    ],
)
def test_bad_pairs(cands, refs, error, message):
    with pytest.raises(error) as info:
        fb.score(cands, refs, model_type=NO_MODEL)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"model_type": 3},
            "model_type must be a string (a folder too: str(path)), got a int (3)",
        ),  # not transformers'
        ({"model_type": Path(NO_MODEL)}, "model_type must be a string (a folder too: str(path)), got a PosixPath"),
        ({"model_type": MINILM, "lang": 5}, "lang must be a string, got a int (5)"),
        ({"model_type": NO_MODEL, "return_hash": "no"}, "return_hash must be True or False, got str 'no'"),
    ],
)
def test_options_of_the_wrong_type_are_named_before_any_work(options, message):
    with pytest.raises(TypeError) as info:
        fb.score(["a"], ["b"], **options)
    assert str(info.value).startswith(message)


def test_unknown_lang():
    with pytest.raises(ValueError, match="lang='english' is not a known language code"):
        fb.score(["a"], ["b"], lang="english")


def test_lang_or_model_is_needed():
    with pytest.raises(ValueError, match="give model_type= or lang="):
        fb.score(["a"], ["b"])


@pytest.mark.parametrize("model", [NO_MODEL, "./no_such_dir", "../no_such_dir", "~/no_such_dir"])
def test_a_missing_folder_is_named_as_a_folder(model):
    # Not "Repo id must be in the form 'repo_name' or 'namespace/repo_name'", transformers' word for it.
    with pytest.raises(ValueError) as info:
        fb.score(["a"], ["b"], model_type=model)
    assert str(info.value) == (
        f"could not load the tokenizer of model_type={model!r}: it names a local folder, and no folder {model} exists"
    )


def test_model_not_in_cache_offline_is_one_line():
    # One line: the Space shows the engine's message as it is (transformers' own runs over two lines).
    with pytest.raises(ValueError, match="not in the Hugging Face cache") as info:
        fb.score(["a"], ["b"], model_type="some-org/not-a-cached-model")
    assert "\n" not in str(info.value)


def test_num_layers_out_of_range(minilm_path):
    with pytest.raises(ValueError, match=r"num_layers=7 is out of range for .* \(0\.\.6"):
        fb.score(["a"], ["b"], model_type=minilm_path, num_layers=7)


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, True])
def test_bad_batch_size(minilm_path, batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        fb.BERTScorer(model_type=minilm_path, batch_size=batch_size)


def test_idf_without_weights(minilm_path):
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=2, idf=True)
    with pytest.raises(ValueError, match="idf=True but no idf weights"):
        scorer.score(["a"], ["b"])


def test_idf_mapping_without_default(minilm_path):
    with pytest.raises(ValueError, match=r"cands\[0\]: idf has no weight for token id"):
        fb.score(
            ["zebra"], ["a b"], model_type=minilm_path, num_layers=2, idf={101: 0.0, 102: 0.0, 1037: 1.0, 1038: 1.0}
        )


def test_rescale_needs_lang_or_path(minilm_path):
    with pytest.raises(ValueError, match="rescale_with_baseline=True needs lang="):
        fb.score(["a"], ["b"], model_type=minilm_path, rescale_with_baseline=True)


def test_num_layers_of_another_type_is_a_type_error_not_out_of_range():
    with pytest.raises(TypeError, match=r"num_layers must be a whole number \(0\.\.6 for .*\), got a str \('3'\)"):
        fb.score(["a cat"], ["a dog"], model_type=MINILM, num_layers="3")


def test_window_stride_is_refused_where_it_would_be_ignored_or_clamped():
    with pytest.raises(
        ValueError, match=r"window_stride=100 applies only with long_inputs='window' \(got long_inputs='truncate'\)"
    ):
        fb.BERTScorer(model_type=MINILM, window_stride=100)
    with pytest.raises(
        ValueError, match=r"window_stride=10000 must be smaller than the 510 text tokens a window holds"
    ):
        fb.BERTScorer(model_type=MINILM, long_inputs="window", window_stride=10000)
    fb.BERTScorer(model_type=MINILM, long_inputs="window", window_stride=509)  # the largest that overlaps


def test_idf_sents_without_idf_warns_that_they_weigh_nothing(caplog):
    for call in (
        lambda: fb.score(["a"], ["b"], model_type=MINILM, idf_sents=["x y"]),
        lambda: fb.BERTScorer(model_type=MINILM, idf_sents=["x y"]),
    ):
        caplog.clear()
        call()
        assert "idf_sents= is given without idf=True, so it weighs nothing" in caplog.text
    caplog.clear()
    fb.score(["a"], ["b"], model_type=MINILM, idf=True, idf_sents=["x y"])
    assert "idf_sents" not in caplog.text
    with pytest.raises(TypeError, match="idf must be True, False or a"):  # the bad option first, and alone
        fb.score(["a"], ["b"], model_type=MINILM, idf=1, idf_sents=["x y"])
    assert "idf_sents" not in caplog.text
