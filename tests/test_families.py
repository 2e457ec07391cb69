"""The family matrix: every architecture family bert-score 0.3.13 supports, scored as it was published.

The fixtures (``tests/data/families``, made by ``tests/families/build_fixtures.py`` with transformers 4.57) are
scored against two references: a record of bert-score 0.3.13 on transformers 4.57.6, the last transformers 4
release (``tests/families/record_reference.py``; the JSON names every version), and bert-score live on this
transformers. Ours must equal the record everywhere, and the live run wherever the live run equals the record;
where it does not, ``LIVE_DIFFERS`` says why (docs/differences.md), and the test checks the difference is real.
"""

from __future__ import annotations

import json
import logging
import shutil
from contextlib import contextmanager
from functools import cache

import pytest
import reference
import torch
from families import cases
from tolerances import TINY_WIDTH, assert_scores_close, fp32

import fastbertscore as fb
from fastbertscore.models.loading import PREFIX_SPACE_MODEL_TYPES, published_prefix_space
from fastbertscore.pipeline.tokens import tokenize

RECORD = json.loads(cases.RECORD.read_text())
PUBLISHED = RECORD["families"]
SUPPORTED = [family for family in cases.FAMILIES if family not in cases.UNSUPPORTED]
CANDS, REFS = cases.pairs()
#: The longest input any case feeds the model (DeBERTa-v3-style and XLNet read long texts whole).
LONGEST = max(
    len(ids) for family in PUBLISHED.values() for kind in family.values() for ids in kind["tokens"].get("ids", [])
)
MATRIX = [(family, kind, use_fast) for family in SUPPORTED for kind, use_fast in cases.KINDS]
IDS = [f"{family}-{kind}" for family, kind, _ in MATRIX]
#: Tokenizers reporting no limit: bert-score passes 1e30 as max_length. On transformers 4.57 the slow ones read
#: the whole text and the fast ones raise OverflowError; we read the whole text with either.
UNLIMITED = {"deberta-v2", "xlnet", "mt5"}
#: Where bert-score on transformers 5 differs from bert-score as published, and why.
LIVE_DIFFERS = {
    **{(family, kind): "OverflowError" for family in UNLIMITED for kind in ("slow", "fast")},
    ("roberta", "slow"): "transformers 5 ignores the add_prefix_space=True bert-score passes per call",
}


def published(family: str, kind: str, name: str) -> dict:
    """The record's scores; a fast unlimited tokenizer crashed on 4.57, so its slow twin's scores stand in."""
    entry = PUBLISHED[family][kind][name]
    if "error" in entry:
        assert family in UNLIMITED and kind == "fast" and entry["error"].startswith("OverflowError"), entry
        entry = PUBLISHED[family]["slow"][name]
    return entry


def as_tensors(entry: dict) -> tuple[torch.Tensor, ...]:
    return tuple(torch.tensor(entry[key]) for key in "PRF")


@cache
def ours(family: str, use_fast: bool, name: str) -> tuple[torch.Tensor, ...]:
    options = dict(cases.OPTIONS)[name]
    return fb.score(CANDS, REFS, model_type=cases.linked(family), use_fast_tokenizer=use_fast, batch_size=16, **options)


def assert_same(a, b, what: str) -> None:
    assert_scores_close(a, b, width=TINY_WIDTH, tokens=LONGEST, what=what)


@pytest.mark.parametrize("family,kind,use_fast", MATRIX, ids=IDS)
def test_tokens_are_the_ones_bert_score_fed_its_model(family, kind, use_fast):
    """Prefix spaces, special tokens and where long texts are cut, id for id, short and long texts alike."""
    scorer = fb.BERTScorer(model_type=cases.linked(family), num_layers=1, use_fast_tokenizer=use_fast)
    record = PUBLISHED[family][kind]["tokens"]
    if "error" in record:  # the fast twin crashed in bert-score on 4.57; it must give the slow twin's ids
        assert family in UNLIMITED and record["error"].startswith("OverflowError")
        record = PUBLISHED[family]["slow"]["tokens"]
    assert tokenize(scorer.tokenizer, CANDS + REFS, scorer.token_limit).ids == record["ids"]


@pytest.mark.parametrize("family,kind,use_fast", MATRIX, ids=IDS)
def test_scores_equal_bert_score_as_published(family, kind, use_fast):
    """Layer 1, the last layer with idf, and every layer, over 24 real MT pairs and two of over 512 tokens."""
    for name, _ in cases.OPTIONS:
        assert_same(ours(family, use_fast, name), as_tensors(published(family, kind, name)), f"{family} {kind} {name}")


@pytest.mark.slow
@pytest.mark.parametrize("family,kind,use_fast", MATRIX, ids=IDS)
def test_scores_equal_live_bert_score_where_it_still_behaves_as_published(family, kind, use_fast):
    for name, options in cases.OPTIONS:
        try:
            live = reference.score(
                CANDS, REFS, model_type=cases.linked(family), use_fast_tokenizer=use_fast, batch_size=1, **options
            )
        except OverflowError:
            assert LIVE_DIFFERS.get((family, kind)) == "OverflowError", f"{family} {kind}: bert-score overflowed"
            continue
        if (family, kind) in LIVE_DIFFERS:  # the difference is real: ours follows the record, not this run
            gap = max(
                (a - b).abs().max().item() for a, b in zip(live, as_tensors(published(family, kind, name)), strict=True)
            )
            assert gap > 100 * fp32(TINY_WIDTH, LONGEST), f"{family} {kind} {name}: no longer differs; drop it"
        else:
            assert_same(ours(family, use_fast, name), live, f"{family} {kind} {name} (live)")


def test_prefix_space_rule_is_the_one_of_transformers_4_57():
    assert PREFIX_SPACE_MODEL_TYPES == set(RECORD["prefix_space_model_types"])
    from transformers import AutoConfig
    from transformers.models.auto.tokenization_auto import get_tokenizer_config

    for family, kind, use_fast in MATRIX:
        record = PUBLISHED[family][kind]["tokens"]
        if "prefix_space_branch" not in record:
            continue
        path = cases.linked(family)
        named = get_tokenizer_config(path).get("tokenizer_class")
        assert (
            published_prefix_space(named, AutoConfig.from_pretrained(path).model_type, use_fast)
            is record["prefix_space_branch"]
        ), (family, kind)
    # Without a tokenizer_class, the model type decides; fast tokenizers never took the branch.
    assert published_prefix_space(None, "roberta", False) and not published_prefix_space(None, "bart", False)
    assert not published_prefix_space("RobertaTokenizer", "roberta", True)


def test_a_checkpoint_naming_a_fast_class_gets_it_without_use_fast(tmp_path):
    """transformers 4.57 loads a tokenizer_class named ...Fast as named, use_fast or not: no prefix space."""
    folder = tmp_path / "tiny-roberta-named-fast"
    shutil.copytree(cases.FIXTURES / "tiny-roberta", folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "tokenizer_class": "RobertaTokenizerFast"}))
    scorer = fb.BERTScorer(model_type=str(folder), num_layers=1)  # use_fast_tokenizer=False, the default
    ids = tokenize(scorer.tokenizer, CANDS + REFS, scorer.token_limit).ids
    assert ids == PUBLISHED["roberta"]["fast"]["tokens"]["ids"] != PUBLISHED["roberta"]["slow"]["tokens"]["ids"]


def test_funnel_is_refused_in_one_clear_error():
    assert PUBLISHED["funnel"]["slow"]["layer1"]["error"] == "ValueError: Not supported"
    with pytest.raises(ValueError, match=r"is a funnel model, which BERTScore cannot use: .*pools the sequence"):
        fb.score(CANDS[:2], REFS[:2], model_type=cases.linked("funnel"), num_layers=1)


@pytest.mark.parametrize("family", SUPPORTED)
def test_window_mode_reads_long_texts_whole_for_every_family(family):
    path = cases.linked(family)
    cut = fb.score(CANDS[-2:], REFS[-2:], model_type=path, num_layers=cases.DEPTH)
    whole = fb.score(CANDS[-2:], REFS[-2:], model_type=path, num_layers=cases.DEPTH, long_inputs="window")
    if family in UNLIMITED:  # nothing is cut: the window mode has nothing to add
        assert_same(whole, cut, family)
    else:  # the other 1,400–2,200 tokens count now
        assert all((a - b).abs().max() > 100 * fp32(TINY_WIDTH, LONGEST) for a, b in zip(whole, cut, strict=True)), (
            family
        )
        assert all(bool(((x >= -1) & (x <= 1)).all()) for x in whole)


def test_warnings_say_where_bert_score_cuts_and_where_it_would_fail(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        fb.score(CANDS[-2:], REFS[-2:], model_type=cases.linked("bert"), num_layers=1)
        fb.score(CANDS[-2:], REFS[-2:], model_type=cases.linked("deberta-v2"), num_layers=1)
    cut = [r.getMessage() for r in caplog.records if "were cut" in r.getMessage()]
    assert len(cut) == 1 and "as bert-score does (the tokenizer's limit)" in cut[0]  # DeBERTa-v3 cuts nothing
    # A BERT tokenizer saved without a limit: bert-score passes 1e30 and fails past 512 positions; we cut there.
    folder = tmp_path / "tiny-bert-nolimit"
    shutil.copytree(cases.FIXTURES / "tiny-bert", folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("model_max_length")
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        unlimited = fb.score(CANDS[-2:], REFS[-2:], model_type=str(folder), num_layers=1)
    cut = [r.getMessage() for r in caplog.records if "were cut" in r.getMessage()]
    assert len(cut) == 1 and "the tokenizer reports no limit, so bert-score cuts nothing there and fails" in cut[0]
    assert "as bert-score does" not in cut[0]
    assert_same(unlimited, fb.score(CANDS[-2:], REFS[-2:], model_type=cases.linked("bert"), num_layers=1), "bert")


@contextmanager
def messages_of(name: str):
    """What a transformers logger lets through (it does not propagate to pytest's capture)."""
    hf_logger, seen = logging.getLogger(name), []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    hf_logger.addHandler(handler)
    try:
        yield seen
    finally:
        hf_logger.removeHandler(handler)


def test_seq2seq_checkpoints_load_their_encoder_quietly(caplog):
    fb.clear_model_cache()
    with messages_of("transformers.modeling_utils") as seen, caplog.at_level(logging.INFO):
        for family in ("mt5", "t5", "mbart", "led"):
            fb.score(CANDS[:2], REFS[:2], model_type=cases.linked(family), num_layers=1)
    assert not [message for message in seen if "LOAD REPORT" in message]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "weights" in r.getMessage()]


@pytest.mark.parametrize(
    "family, module", [("longformer", "longformer.modeling_longformer"), ("led", "led.modeling_led")]
)
def test_the_attention_window_padding_notice_is_dropped_and_nothing_else(family, module):
    """Longformer and LED pad to their attention window and said so once per input length, on every call."""
    fb.score(CANDS[:2], REFS[:2], model_type=cases.linked(family), num_layers=1)
    hf_logger = logging.getLogger(f"transformers.models.{module}")
    with messages_of(hf_logger.name) as seen:
        hf_logger.warning(
            "Input ids are automatically padded from 5 to 8 to be a multiple of `config.attention_window`: 8"
        )
        hf_logger.warning("any other message")
    assert seen == ["any other message"]


def test_real_load_problems_are_still_reported(tmp_path, caplog):
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "tiny-bert-damaged"
    shutil.copytree(cases.FIXTURES / "tiny-bert", folder)
    weights = load_file(folder / "model.safetensors")
    dropped = next(key for key in weights if "encoder.layer.0.attention.self.query.weight" in key)
    del weights[dropped]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        fb.score(CANDS[:2], REFS[:2], model_type=str(folder), num_layers=1)
    missing = [r.getMessage() for r in caplog.records if "missing from the checkpoint" in r.getMessage()]
    assert len(missing) == 1 and "encoder.layer.0.attention.self.query.weight" in missing[0]


def test_the_docs_table_says_what_the_matrix_and_the_data_hold():
    """docs/families.md: one row per family, its status as tested here, its default layer and its baselines."""
    from fastbertscore.models.defaults import MODEL2LAYERS as MODEL_LAYERS

    lines = (cases.REPO / "docs" / "families.md").read_text().splitlines()
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines if line.startswith("| ")][1:]
    assert [row[0] for row in rows] == cases.FAMILIES
    for family, model, as_published, live, layer, baseline in rows:
        assert as_published.startswith("not supported" if family in cases.UNSUPPORTED else "yes"), family
        overflow = LIVE_DIFFERS.get((family, "slow")) == "OverflowError"
        assert (live == "crashes: OverflowError") is overflow, family
        assert live.startswith("differs") is ((family, "slow") in LIVE_DIFFERS and not overflow), family
        if family in cases.UNSUPPORTED:
            continue
        assert int(layer.split()[0]) == MODEL_LAYERS.get(model, int(layer.split()[0])), family
        assert ("¾" in layer) is (model not in MODEL_LAYERS), family
        shipped = sorted(lang.name for lang in (cases.REPO / "baselines").iterdir() if (lang / f"{model}.tsv").exists())
        assert baseline.split() == (shipped or ["none"]), family


def test_a_path_containing_t5_loads_the_model_it_names(tmp_path):
    """bert-score loads T5EncoderModel whenever "t5" is in model_type; we load what the config says."""
    folder = tmp_path / "t5runs" / "tiny-bart"
    folder.parent.mkdir()
    folder.symlink_to(cases.FIXTURES / "tiny-bart", target_is_directory=True)
    assert_same(
        fb.score(CANDS[:4], REFS[:4], model_type=str(folder), num_layers=1),
        as_tensors({k: v[:4] for k, v in PUBLISHED["bart"]["slow"]["layer1"].items()}),
        "bart under t5runs/",
    )


def test_a_limit_past_the_position_table_is_cut_at_the_table_and_said_so(tmp_path, caplog):
    """A tokenizer claiming 1,024 tokens for a 512-position model: bert-score cuts at 1,024 and fails; we cut at 512."""
    folder = tmp_path / "tiny-bert-overclaims"
    shutil.copytree(cases.FIXTURES / "tiny-bert", folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 1024}))
    with caplog.at_level(logging.WARNING, logger="fastbertscore"):
        scores = fb.score(CANDS[-2:], REFS[-2:], model_type=str(folder), num_layers=1)
    cut = [r.getMessage() for r in caplog.records if "were cut" in r.getMessage()]
    assert len(cut) == 1 and "the tokenizer reports 1024 tokens, so bert-score cuts there and fails" in cut[0]
    assert_same(scores, fb.score(CANDS[-2:], REFS[-2:], model_type=cases.linked("bert"), num_layers=1), "bert")
