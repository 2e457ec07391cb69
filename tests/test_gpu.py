"""On a CUDA GPU: parity with bert-score 0.3.13 on the same GPU, reduced-precision bounds, and dtype="auto".

fp32 with TF32 off rounds as on a CPU, so the bounds are the CPU's (tolerances.py).

Marked ``gpu``; skipped where torch sees no CUDA device (CI, and every CPU-only machine).
"""

from __future__ import annotations

import bert_score
import pytest
import torch
from tolerances import assert_reduced_precision_close, assert_scores_close

import fastbertscore as fb
from fastbertscore import hardware

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)"),
]


@pytest.fixture(autouse=True)
def no_tf32():
    """fp32 parity means real fp32 matmuls: TF32 would round inputs to 10 bits of mantissa."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.mark.parametrize("idf", [False, True])
def test_parity_with_bert_score_on_the_same_gpu(minilm_path, mt_pairs, idf):
    cands, refs = mt_pairs
    ours = fb.score(cands, refs, model_type=minilm_path, num_layers=4, idf=idf, device="cuda")
    ref = bert_score.score(cands, refs, model_type=minilm_path, num_layers=4, idf=idf, device="cuda")
    assert_scores_close(ours, ref)


def test_multi_reference_all_layers_window_and_rescaling_on_the_gpu(minilm_path, mt_pairs):
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    multi = [[refs[i], refs[(i + 3) % 20]] for i in range(20)]
    assert_scores_close(
        fb.score(cands, multi, model_type=minilm_path, num_layers=4, device="cuda"),
        bert_score.score(cands, multi, model_type=minilm_path, num_layers=4, device="cuda"),
    )
    assert_scores_close(
        fb.score(cands, refs, model_type=minilm_path, all_layers=True, num_layers=6, device="cuda"),
        bert_score.score(cands, refs, model_type=minilm_path, all_layers=True, num_layers=6, device="cuda"),
    )
    long_text = " ".join(refs) * 3
    on_gpu = fb.score([cands[0]], [long_text], model_type=fb.DEFAULT_MODEL, long_inputs="window", device="cuda")
    on_cpu = fb.score([cands[0]], [long_text], model_type=fb.DEFAULT_MODEL, long_inputs="window", device="cpu")
    tokens = len(fb.BERTScorer(model_type=fb.DEFAULT_MODEL).tokenizer(long_text)["input_ids"])
    assert_scores_close(on_gpu, on_cpu, tokens=tokens)
    rescaled = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True, device="cuda")
    on_cpu = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True, device="cpu")
    assert_scores_close(rescaled, on_cpu.score(cands, refs), baseline=on_cpu.baseline_vals)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_precision_stays_within_its_bounds(mt_pairs, dtype):
    if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    cands, refs = mt_pairs
    exact = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, num_layers=6, device="cuda")
    fast = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, num_layers=6, device="cuda", dtype=dtype)
    assert_reduced_precision_close(fast, exact)


def test_auto_resolves_on_the_gpu():
    expected = "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float16"
    assert hardware.auto_dtype("cuda") == expected
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, device="cuda", dtype="auto")
    assert scorer.dtype == expected and scorer.hash.endswith(f"_dtype={expected}")
