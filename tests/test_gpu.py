"""On a CUDA GPU: parity with bert-score 0.3.13 on the same GPU, the GPU against the CPU, reduced precision,
caches, all-pairs matching and dtype="auto".

fp32 with TF32 off rounds as on a CPU: bert-score on the same GPU is held to the CPU's bound (tolerances.py); the
GPU against the CPU runs other kernels for every encoder op, so it is held to the two-device bound
(``tolerances.two_devices``). TF32 is set through torch's current API only (``exact.exact_float32``): reading
the legacy flags raises once the new API has been used.

Marked ``gpu``; skipped where torch sees no CUDA device (CI, and every CPU-only machine).
"""

from __future__ import annotations

import bert_score
import pytest
import torch
from tolerances import assert_reduced_precision_close, assert_scores_close, two_devices

import fastbertscore as fb
from fastbertscore import exact, hardware

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)"),
]

#: The default model (all-MiniLM-L6-v2) is scored at layer 3; ``num_layers=4`` below.
DEFAULT_LAYERS = 3


@pytest.fixture(autouse=True)
def no_tf32():
    """fp32 parity means real fp32 matmuls for bert-score too: TF32 would round inputs to 10 bits of mantissa."""
    with exact.exact_float32():
        yield


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
    bound = two_devices(layers=DEFAULT_LAYERS, tokens=tokens)
    assert_scores_close(on_gpu, on_cpu, tokens=tokens, bound=bound)
    rescaled = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True, device="cuda")
    on_cpu = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, lang="en", rescale_with_baseline=True, device="cpu")
    assert_scores_close(
        rescaled, on_cpu.score(cands, refs), baseline=on_cpu.baseline_vals, bound=two_devices(layers=DEFAULT_LAYERS)
    )


def test_gpu_against_cpu_within_the_two_device_bound(minilm_path, mt_pairs):
    cands, refs = mt_pairs
    on_gpu = fb.score(cands, refs, model_type=minilm_path, num_layers=4, device="cuda")
    on_cpu = fb.score(cands, refs, model_type=minilm_path, num_layers=4, device="cpu")
    assert_scores_close(on_gpu, on_cpu, bound=two_devices(layers=4))
    pairs_gpu = fb.pairwise(cands[:20], refs[:20], model_type=minilm_path, num_layers=4, device="cuda")
    pairs_cpu = fb.pairwise(cands[:20], refs[:20], model_type=minilm_path, num_layers=4, device="cpu")
    assert_scores_close(pairs_gpu, pairs_cpu, bound=two_devices(layers=4))


def test_exact_mode_ignores_the_callers_tf32(minilm_path, mt_pairs):
    cands, refs = mt_pairs[0][:20], mt_pairs[1][:20]
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda")
    exact = scorer.score(cands, refs)
    saved = torch.backends.cuda.matmul.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = "tf32"  # the current API, as a training script sets it
    try:
        again = scorer.score(cands, refs)
        assert torch.backends.cuda.matmul.fp32_precision == "tf32", "the caller's setting is back"
    finally:
        torch.backends.cuda.matmul.fp32_precision = saved
    assert all(torch.equal(a, b) for a, b in zip(again, exact, strict=True))


@pytest.mark.parametrize("cache", [{"cache_mb": 64}, {"cache_dir": "DIR"}])
def test_cached_runs_on_the_gpu_give_the_same_scores(minilm_path, mt_pairs, tmp_path, cache):
    options = {k: str(tmp_path) if v == "DIR" else v for k, v in cache.items()}
    cands, refs = mt_pairs
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda", **options)
    first = scorer.score(cands, refs)
    again = scorer.score(cands, refs)  # every text a hit: host copies handed back on the GPU
    mixed = scorer.score(cands[:30] + ["A sentence no call has seen."], refs[:30] + refs[:1])
    assert all(torch.equal(a, b) for a, b in zip(again, first, strict=True))
    assert_scores_close([x[:30] for x in mixed], [x[:30] for x in first])
    if "cache_mb" in options:
        assert scorer.cache.get(scorer.tokenizer(refs[0])["input_ids"]).device.type == "cpu", "kept on the host"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_precision_stays_within_its_bounds_with_weights_stored_in_it(mt_pairs, dtype):
    if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    cands, refs = mt_pairs
    exact = fb.score(cands, refs, model_type=fb.DEFAULT_MODEL, num_layers=6, device="cuda")
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, num_layers=6, device="cuda", dtype=dtype)
    linear = next(m for m in scorer.embedder.encoder.module.modules() if isinstance(m, torch.nn.Linear))
    assert linear.weight.dtype == getattr(torch, dtype)
    assert_reduced_precision_close(scorer.score(cands, refs), exact)


def test_auto_resolves_on_the_gpu():
    expected = "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float16"
    assert hardware.auto_dtype("cuda") == expected
    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, device="cuda", dtype="auto")
    assert scorer.dtype == expected and scorer.hash.endswith(f"_dtype={expected}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_attention_builds_no_cudnn_plan_per_shape(mt_pairs, dtype):
    """cuDNN's attention builds an execution plan for each new (batch, length) shape, and length-sorted batches
    bring a new shape nearly every batch: a one-off evaluation paid that on most batches. Half precision on the GPU
    runs torch's other attention kernels."""
    from torch.profiler import ProfilerActivity, profile

    scorer = fb.BERTScorer(model_type=fb.DEFAULT_MODEL, device="cuda", dtype=dtype)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        scorer.score(*mt_pairs)
        torch.cuda.synchronize()
    names = [event.key.lower() for event in prof.key_averages()]
    assert any("attention" in name or "fmha" in name for name in names), "the profile holds the attention kernels"
    assert not [name for name in names if "cudnn" in name and ("attention" in name or "sdpa" in name)]


def test_padding_on_the_gpu_equals_the_cpus():
    """On a GPU the rows are padded by one indexed copy instead of one copy per row: the same tensors."""
    from fastbertscore.pipeline.batching import pad

    generator = torch.Generator().manual_seed(0)
    for tail in [(8,), (3, 8)]:  # one layer, and all layers
        rows = [torch.randn(n, *tail, generator=generator) for n in (5, 1, 9, 9, 2)]
        on_cpu = pad(rows)
        on_gpu = pad([row.cuda() for row in rows])
        assert all(a.device.type == "cuda" for a in on_gpu)
        assert all(torch.equal(a.cpu(), b) for a, b in zip(on_gpu, on_cpu, strict=True))


def test_a_given_budget_bounds_the_gpu_memory_of_a_call(minilm_path, mt_pairs):
    """memory_mb bounds what a call holds on the device beyond the model (its encoder batches too: they grow with
    the free memory only where no budget was given), and the scores are those of an unbounded call."""
    cands, refs = (column * 40 for column in mt_pairs)
    cands = [f"{text} ({i})" for i, text in enumerate(cands)]  # 2,400 distinct candidates: several steps of 64 MB
    free = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda").score(cands, refs)
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda", memory_mb=256)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    bounded = scorer.score(cands, refs)
    torch.cuda.synchronize()
    assert (torch.cuda.max_memory_allocated() - before) / 2**20 <= 256
    assert_scores_close(bounded, free)


def test_half_precision_batches_reuse_a_few_shapes(minilm_path, mt_pairs):
    """cuBLASLt chooses a kernel for each new matrix shape, at a cost the first time a process meets it: in half
    precision the encoder's batches are full and padded to a multiple of HALF_SHAPE_STEP tokens (or to the call's
    longest text), and score as the float32 call does within the half-precision bound."""
    from fastbertscore.pipeline.forward import HALF_SHAPE_STEP

    cands, refs = (column * 30 for column in mt_pairs)
    cands = [f"{text} ({i})" for i, text in enumerate(cands)]  # 1,800 distinct candidates: several batches
    scorer = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda", dtype="bfloat16")
    shapes: list[tuple[int, int]] = []
    hook = scorer.embedder.encoder.module.register_forward_pre_hook(lambda _, args: shapes.append(args[0].shape))
    try:
        half = scorer.score(cands, refs)
    finally:
        hook.remove()
    longest = max(len(ids) for ids in scorer.tokenizer(cands + refs)["input_ids"])
    assert len(shapes) > 3 and all(t % HALF_SHAPE_STEP == 0 or t == longest for _, t in shapes), shapes
    assert all(b == fb.default_batch_size("cuda") for b, _ in shapes[:-1]), shapes
    assert len(set(shapes)) < len(shapes), shapes
    exact = fb.BERTScorer(model_type=minilm_path, num_layers=4, device="cuda").score(cands, refs)
    assert_reduced_precision_close(half, exact)
