"""All-vs-all matrices and MBR: every entry equals bert-score's score of that pair and our own score();
bad groups are refused before any model work."""

from __future__ import annotations

import json
import logging

import bert_score
import pytest
import torch
from bert_score.utils import get_idf_dict
from paths import (
    MINILM,
    SHIPPED_BASELINE,
)
from tolerances import PRINTED_6, assert_close, assert_scores_close, fp32, prf_bounds

import fastbertscore as fb
from fastbertscore.cli.main import main


def _expanded(a, b):
    return [x for x in a for _ in b], [y for _ in a for y in b]


def _close(matrices, flat, shape, baseline=None, tokens=None):
    for name, m in zip("PRF", matrices, strict=True):
        assert m.shape == shape, f"{name}: {tuple(m.shape)}"
    policy = {} if tokens is None else {"tokens": tokens}
    assert_scores_close([m.reshape(*m.shape[:-2], -1) for m in matrices], flat, baseline=baseline, **policy)


@pytest.mark.parametrize("symmetric", [True, False])
def test_every_entry_equals_bert_score_per_pair(minilm_path, mt_pairs, symmetric):
    texts_a = list(dict.fromkeys(mt_pairs[0]))[:14]
    texts_b = None if symmetric else list(dict.fromkeys(mt_pairs[1]))[:9] + [""]  # an empty reference scores 0
    b = texts_a if symmetric else texts_b
    ours = fb.pairwise(texts_a, texts_b, model_type=minilm_path, num_layers=4)
    live = [t for t in b if t]
    cands, refs = _expanded(texts_a, live)
    reference = bert_score.BERTScorer(model_type=minilm_path, num_layers=4, batch_size=1).score(cands, refs)
    keep = [j for j, t in enumerate(b) if t]
    _close([m[:, keep] for m in ours], reference, (len(texts_a), len(keep)))
    if not symmetric:
        assert all(float(m[:, -1].abs().max()) == 0.0 for m in ours)


def test_entries_equal_score_with_idf_rescaling_and_all_layers(minilm_path, mt_pairs):
    texts_a, texts_b = mt_pairs[0][:7], mt_pairs[1][:5]
    idf = get_idf_dict(texts_b, bert_score.utils.get_tokenizer(minilm_path), nthreads=0)  # a defaultdict
    options = {
        "model_type": minilm_path,
        "num_layers": 4,
        "idf": idf,
        "lang": "en",
        "rescale_with_baseline": True,
        "baseline_path": str(SHIPPED_BASELINE),
    }
    for all_layers in (False, True):
        scorer = fb.BERTScorer(**options, all_layers=all_layers)
        ours = scorer.pairwise(texts_a, texts_b)
        flat = scorer.score(*_expanded(texts_a, texts_b))
        shape = (7, 5) if not all_layers else (7, 7, 5)
        _close(ours, flat, shape, baseline=scorer.baseline_vals)  # rescaled: the raw bound over 1 - b


@pytest.mark.parametrize("symmetric", [True, False])
def test_a_small_memory_budget_spills_and_changes_no_number(minilm_path, mt_pairs, symmetric, caplog):
    """All-vs-all keeps its embeddings under memory_mb as pairs do: past the budget they spill to disk, and its
    similarity blocks shrink with it; every entry stays what the default budget gives."""
    texts_a = list(dict.fromkeys(mt_pairs[0]))[:12]
    texts_b = None if symmetric else list(dict.fromkeys(mt_pairs[1]))[:7]
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=4)
    default = scorer.pairwise(texts_a, texts_b)
    small = fb.BERTScorer(model_type=minilm_path, num_layers=4, memory_mb=1)
    with caplog.at_level(logging.INFO, logger="fastbertscore.cache.spill"):
        bounded = small.pairwise(texts_a, texts_b)
        picks = small.mbr([texts_a[:5], texts_a[5:]])
    assert any("spilled to disk" in r.getMessage() for r in caplog.records), "1 MB holds 12 texts' embeddings"
    shape = tuple(default[0].shape)
    _close(bounded, tuple(m.flatten() for m in default), shape)
    assert picks.index == scorer.mbr([texts_a[:5], texts_a[5:]]).index


def test_window_mode_scores_long_texts_in_full_as_score_does(mt_pairs):
    long_text = " ".join(mt_pairs[1][:60])  # well over 512 tokens
    texts = [long_text, mt_pairs[0][0], mt_pairs[0][1]]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=2, long_inputs="window")
    tokens = len(scorer.tokenizer(long_text)["input_ids"])  # scored in full, so its mean runs over all of them
    _close(scorer.pairwise(texts), scorer.score(*_expanded(texts, texts)), (3, 3), tokens=tokens)
    with pytest.raises(ValueError, match=r"texts_a\[0\] has \d+ tokens"):
        fb.pairwise(texts, model_type=MINILM, num_layers=2, long_inputs="error")


def test_chosen_refuses_samples_with_another_number_of_groups():
    """chosen() used to zip the samples with its indices and silently drop the groups past the shorter one."""
    result = fb.MBRResult(index=[1, 0], utilities=[torch.zeros(2), torch.zeros(2)], utility="f1")
    assert result.chosen([["a", "b"], ["c", "d"]]) == ["b", "c"]
    for samples in ([["a", "b"]], [["a", "b"], ["c", "d"], ["e", "f"]]):
        with pytest.raises(ValueError, match=rf"chosen\(\) got {len(samples)} groups of samples, but this result"):
            result.chosen(samples)


def test_mbr_picks_the_sample_with_the_best_mean_utility(mt_pairs):
    pool = list(dict.fromkeys(mt_pairs[0]))
    samples = [pool[0:5], pool[5:8], pool[8:9], pool[9:13]]  # ragged, and a group of one
    result = fb.mbr(samples, model_type=MINILM, num_layers=4)
    for g, group in enumerate(samples):
        if len(group) == 1:
            assert result.index[g] == 0 and torch.isnan(result.utilities[g]).all()
            continue
        F = fb.pairwise(group, model_type=MINILM, num_layers=4)[2]
        mean = (F.sum(dim=1) - F.diagonal()) / (len(group) - 1)
        assert_close(result.utilities[g], mean, prf_bounds()[2], "utilities")
        assert result.index[g] == int(mean.argmax())
    assert result.chosen(samples) == [group[i] for group, i in zip(samples, result.index, strict=True)]
    refs = [pool[20:23], pool[23:24], pool[24:26], pool[26:29]]
    against = fb.mbr(samples, refs, utility="recall", model_type=MINILM, num_layers=4)
    for g, group in enumerate(samples):
        R = fb.pairwise(group, refs[g], model_type=MINILM, num_layers=4)[1]
        assert_close(against.utilities[g], R.mean(dim=1), fp32(), "recall utilities")


@pytest.mark.parametrize(
    ("samples", "error", "message"),
    [
        ([["a", "b"], []], ValueError, r"samples\[1\] is an empty list"),
        ([["a", "b"], ["c", None]], TypeError, r"samples\[1\]\[1\] is None"),
        ([["a"], "b"], TypeError, r"samples\[1\] must be a list of strings"),
        ("a b", TypeError, "samples must be a list of lists"),
        ({"x": ["a"]}, TypeError, "samples must be a list of lists"),  # not its keys
        ([], ValueError, "samples is empty"),
    ],
)
def test_bad_groups_are_refused_before_model_work(samples, error, message):
    with pytest.raises(error, match=message):
        fb.mbr(samples, model_type="no-such-org/no-such-model")  # never loaded: the check comes first
    with pytest.raises(ValueError, match="utility='bleu' is not one of precision, recall, f1"):
        fb.BERTScorer(model_type=MINILM).mbr([["a", "b"]], utility="bleu")
    with pytest.raises(TypeError, match=r"texts_b\[1\] is None"):
        fb.pairwise(["a"], ["b", None], model_type="no-such-org/no-such-model")


def test_pairwise_and_mbr_commands(tmp_path, capsys):
    import numpy as np

    texts = ["The cat sat on the mat.", "It is raining.", "A cat was on the mat."]
    (tmp_path / "a.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert main(["pairwise", "-a", str(tmp_path / "a.txt"), "-o", str(tmp_path / "m.npy"), "-m", MINILM]) == 0
    assert (
        main(
            [
                "pairwise",
                "-a",
                str(tmp_path / "a.txt"),
                "-r",
                str(tmp_path / "a.txt"),
                "--score",
                "precision",
                "-o",
                str(tmp_path / "m.tsv"),
                "-m",
                MINILM,
            ]
        )
        == 0
    )
    P, _, F = fb.pairwise(texts, model_type=MINILM)
    assert_close(np.load(tmp_path / "m.npy"), F, prf_bounds()[2], "F matrix")
    rows = [[float(x) for x in line.split("\t")] for line in (tmp_path / "m.tsv").read_text().splitlines()]
    assert_close(rows, P, fp32() + PRINTED_6, "P matrix as TSV")
    samples = [texts, ["Rain falls.", "It rains.", "The sun shines."], ["alone"]]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(g) + "\n" for g in samples), encoding="utf-8")
    assert main(["mbr", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "p.jsonl"), "-m", MINILM]) == 0
    picks = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    expected = fb.mbr(samples, model_type=MINILM)
    assert [p["index"] for p in picks] == expected.index and picks[2]["utilities"] == [None]
    assert [p["chosen"] for p in picks] == expected.chosen(samples)
    (tmp_path / "bad.jsonl").write_text('["a", "b"]\n[]\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["mbr", str(tmp_path / "bad.jsonl"), "-o", str(tmp_path / "x.jsonl"), "-m", MINILM]) == 2
    assert "samples[1] is an empty list" in capsys.readouterr().err


def test_mbr_takes_groups_as_any_iterable_of_texts_as_score_does():
    import numpy as np

    groups = [["a cat sat", "the cat sat"], ["it rains", "rain falls"]]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=2)
    as_lists, as_array = scorer.mbr(groups), scorer.mbr(np.array(groups))  # a Sequence check refused the array
    assert as_lists.index == as_array.index
    assert all(torch.equal(a, b) for a, b in zip(as_lists.utilities, as_array.utilities, strict=True))
