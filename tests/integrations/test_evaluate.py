"""Our evaluate module where evaluate users reach it: defaults given at load time, evaluate.evaluator (which passes
no metric arguments), evaluate's own distributed mode, evaluate.combine and add_batch loops."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import datasets
import evaluate
import pytest
import torch
from paths import (
    MINILM,
    REPO,
)
from tolerances import assert_close, assert_scores_close, prf_bounds

import fastbertscore as fb

MODULE = str(REPO / "bertscore.py")


def test_load_time_keywords_are_defaults_and_compute_keywords_win(mt_pairs):
    cands, refs = mt_pairs[0][:5], mt_pairs[1][:5]
    metric = evaluate.load(MODULE, model_type=MINILM, num_layers=4)
    out = metric.compute(predictions=cands, references=refs)
    assert "_L4_" in out["hashcode"]
    assert_scores_close(
        [out[k] for k in ("precision", "recall", "f1")], fb.score(cands, refs, model_type=MINILM, num_layers=4)
    )
    assert "_L2_" in metric.compute(predictions=cands, references=refs, num_layers=2)["hashcode"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_layer'; the options are: all_layers"):
        evaluate.load(MODULE, num_layer=4)


def test_add_batch_loops_and_combine(mt_pairs):
    cands, refs = mt_pairs[0][:9], mt_pairs[1][:9]
    metric = evaluate.load(MODULE, model_type=MINILM)
    for start in range(0, 9, 4):
        metric.add_batch(predictions=cands[start : start + 4], references=refs[start : start + 4])
    out = metric.compute()
    single = fb.score(cands, refs, model_type=MINILM)
    assert_scores_close([out[k] for k in ("precision", "recall", "f1")], single)
    # Two layers side by side (every other metric module would be a download): evaluate names them apart.
    combined = evaluate.combine(
        [evaluate.load(MODULE, model_type=MINILM), evaluate.load(MODULE, model_type=MINILM, num_layers=5)]
    )
    both = combined.compute(predictions=cands, references=refs)
    assert_close(both["bert_score_0_f1"], single[2], prf_bounds()[2], "F1 through evaluate.combine")
    layer5 = fb.score(cands, refs, model_type=MINILM, num_layers=5)[2]
    assert_close(both["bert_score_1_f1"], layer5, prf_bounds()[2], "the second module's F1")
    assert "_L5_" in both["bert_score_1_hashcode"]


class Seq2SeqPipeline:
    """What evaluate's text2text, summarization and translation evaluators call: transformers 5 has no
    text2text-generation pipeline, and evaluate takes any callable with a ``task`` for one."""

    def __init__(self, path: str, task: str, key: str):
        from transformers import AutoTokenizer, T5ForConditionalGeneration

        self.tokenizer, self.model = (
            AutoTokenizer.from_pretrained(path),
            T5ForConditionalGeneration.from_pretrained(path),
        )
        self.task, self.key = task, key

    def __call__(self, inputs, truncation=True, **_):
        batch = self.tokenizer(list(inputs), return_tensors="pt", padding=True, truncation=truncation)
        with torch.inference_mode():
            special = [i for i in self.tokenizer.all_special_ids if i != self.tokenizer.eos_token_id]
            ids = self.model.generate(
                **batch, max_new_tokens=8, min_new_tokens=3, suppress_tokens=special, do_sample=False
            )  # a few real words, not the empty strings of an untrained model
        return [{self.key: t} for t in self.tokenizer.batch_decode(ids, skip_special_tokens=True)]


def _evaluator(task: str, monkeypatch):
    """``evaluate.evaluator(task)`` as it works on transformers 5. evaluate 0.4.6 (the newest) was written for
    transformers 4: its factory asks transformers' pipeline registry, which lost these tasks, and its
    ``prepare_pipeline`` names ``transformers.TFPreTrainedModel``, which is gone. Both are bridged as a user would
    (docs: "evaluate's evaluator on transformers 5"); nothing of ours is patched."""
    import transformers

    monkeypatch.setattr(transformers, "TFPreTrainedModel", type("TFPreTrainedModel", (), {}), raising=False)
    try:
        return evaluate.evaluator(task)
    except KeyError:
        return {
            "text2text-generation": evaluate.Text2TextGenerationEvaluator,
            "summarization": evaluate.SummarizationEvaluator,
            "translation": evaluate.TranslationEvaluator,
        }[task](task=task)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "key"),
    [
        ("text2text-generation", "generated_text"),
        ("summarization", "summary_text"),
        ("translation", "translation_text"),
    ],
)
def test_evaluator_scores_the_pipeline_outputs(tiny_model, mt_pairs, task, key, monkeypatch):
    pipe = Seq2SeqPipeline(tiny_model("t5-generation"), task, key)
    data = datasets.Dataset.from_dict({"source": mt_pairs[0][:6], "target": mt_pairs[1][:6]})
    metric = evaluate.load(MODULE, model_type=MINILM, num_layers=4)  # the evaluator passes no metric arguments
    results = _evaluator(task, monkeypatch).compute(
        model_or_pipeline=pipe, data=data, metric=metric, input_column="source", label_column="target"
    )
    outputs = [o[key] for o in pipe(data["source"])]
    assert sum(bool(o.strip()) for o in outputs) >= 3
    direct = fb.score(outputs, data["target"], model_type=MINILM, num_layers=4)
    assert_scores_close([results[k] for k in ("precision", "recall", "f1")], direct)
    assert "_L4_" in results["hashcode"]


_PROCESS = """
import json, sys, evaluate
i, cache, module, model = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cands, refs = json.loads(sys.argv[5]), json.loads(sys.argv[6])
metric = evaluate.load(module, num_process=2, process_id=i, experiment_id="fastbertscore-test", cache_dir=cache,
                       model_type=model)
half = slice(0, 4) if i == 0 else slice(4, None)
metric.add_batch(predictions=cands[half], references=refs[half])
out = metric.compute()
print(json.dumps(out))
"""


def _evaluate_process(i: int, cache, cands, refs) -> dict | None:
    """What process ``i`` of two computes, in this process: the same code as the child's."""
    metric = evaluate.load(
        MODULE, num_process=2, process_id=i, experiment_id="fastbertscore-test", cache_dir=str(cache), model_type=MINILM
    )
    half = slice(0, 4) if i == 0 else slice(4, None)
    metric.add_batch(predictions=cands[half], references=refs[half])
    return metric.compute()


@pytest.mark.slow
def test_evaluates_distributed_mode_gives_process_zero_the_whole_result(mt_pairs, tmp_path):
    """Process 1 is a child; process 0, which gathers, is this test's own (evaluate and the model already loaded):
    two processes meet through evaluate's lock files as two machines' would, for one interpreter less."""
    cands, refs = mt_pairs[0][:9], [[r, c] for r, c in zip(mt_pairs[1][:9], mt_pairs[0][1:10], strict=True)]
    env = {**os.environ, "HF_EVALUATE_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    argv = [str(tmp_path), MODULE, MINILM, json.dumps(cands), json.dumps(refs)]
    child = subprocess.Popen(
        [sys.executable, "-c", _PROCESS, "1", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        first = _evaluate_process(0, tmp_path, cands, refs)
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err[-2000:]
    second = json.loads(out.strip().splitlines()[-1])
    assert second is None  # evaluate gives the result to process 0 only
    assert_scores_close([first[k] for k in ("precision", "recall", "f1")], fb.score(cands, refs, model_type=MINILM))
