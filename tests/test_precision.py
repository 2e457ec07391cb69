"""Precision on every device: exact means float32, with TF32 or bf16 rounding turned on by the caller
off while we compute and the caller's settings back afterwards; reduced precision on a GPU stores its weights in
that precision.

What the encoder runs under is read inside the run (a forward pre-hook), so the test holds on any CPU: on an AMX
CPU or a GPU the flags would change the numbers, on an AVX2-only CPU they change nothing, but they are read the
same way everywhere.
"""

from __future__ import annotations

import pytest
import torch
from paths import MINILM

import fastbertscore as fb
from fastbertscore import assembly, exact

SWITCHES = [("cuda", "matmul"), ("cudnn", "conv"), ("cudnn", "rnn"), ("mkldnn", "matmul"), ("mkldnn", "conv")]


def _read(read):
    try:
        return read()
    except RuntimeError:  # torch refuses to read a legacy flag once the APIs were mixed
        return "refused"


def flags() -> dict:
    """Every fp32 precision switch as the legacy and the new API read it."""
    out = {
        "matmul precision": _read(torch.get_float32_matmul_precision),
        "cuda allow_tf32": _read(lambda: torch.backends.cuda.matmul.allow_tf32),
        "cudnn allow_tf32": _read(lambda: torch.backends.cudnn.allow_tf32),
    }
    for backend, op in SWITCHES:
        switch = getattr(getattr(torch.backends, backend), op)
        if hasattr(switch, "fp32_precision"):
            out[f"{backend}.{op}"] = switch.fp32_precision
    return out


@pytest.fixture
def caller_settings():
    """Put torch's process-wide switches back as they were before the test, whatever it set."""
    matmul, cudnn = torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32
    switches = [getattr(getattr(torch.backends, b), op) for b, op in SWITCHES]
    switches = [s for s in switches if hasattr(s, "fp32_precision")]
    saved = [s.fp32_precision for s in switches]
    yield
    torch.set_float32_matmul_precision(matmul)
    torch.backends.cudnn.allow_tf32 = cudnn
    for switch, value in zip(switches, saved, strict=True):
        switch.fp32_precision = value


def _trainer_tf32():
    """What transformers' Trainer does with ``tf32=True`` (and Lightning with ``"high"``)."""
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")


def _new_api_reduced():
    """The new API (torch >= 2.9): TF32 in cuBLAS and cuDNN, bf16 in oneDNN's CPU matmuls."""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "tf32"
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"


@pytest.mark.parametrize("turn_on", [_trainer_tf32, _new_api_reduced], ids=["trainer", "new-api"])
def test_exact_mode_runs_float32_whatever_the_caller_turned_on(mt_pairs, caller_settings, turn_on):
    if turn_on is _new_api_reduced and not hasattr(torch.backends.mkldnn.matmul, "fp32_precision"):
        pytest.skip("torch < 2.9 has no fp32_precision switches")
    cands, refs = mt_pairs[0][:12], mt_pairs[1][:12]
    scorer = fb.BERTScorer(model_type=MINILM, num_layers=4)
    exact = scorer.score(cands, refs)
    exact_pairwise = fb.pairwise(cands[:4], refs[:4], model_type=MINILM, num_layers=4)
    turn_on()
    callers = flags()
    seen: list[dict] = []
    hook = scorer.embedder.encoder.module.register_forward_pre_hook(lambda module, args: seen.append(flags()))
    try:
        scored = scorer.score(cands, refs)
        pairwise = fb.pairwise(cands[:4], refs[:4], model_type=MINILM, num_layers=4)
    finally:
        hook.remove()
    assert seen, "the encoder ran"
    for inside in seen:
        assert inside["matmul precision"] == "highest" and inside["cuda allow_tf32"] is False, inside
        assert inside["cudnn allow_tf32"] is False, inside
        assert all(inside[k] == "ieee" for k in inside if "." in k), inside
    for ours, theirs in zip([*scored, *pairwise], [*exact, *exact_pairwise], strict=True):
        assert torch.equal(ours, theirs)
    assert flags() == callers, "the caller's settings are back"


def test_a_forced_tf32_override_refuses_exact_mode_on_cuda(monkeypatch):
    monkeypatch.setenv(exact.TF32_OVERRIDE, "1")
    with pytest.raises(ValueError, match=r"dtype='float32' on cuda: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1.*=0"):
        exact.check_exact_possible("float32", "cuda")
    exact.check_exact_possible("bfloat16", "cuda")  # reduced precision does not claim float32
    exact.check_exact_possible("float32", "cpu")  # cuBLAS is not used there
    monkeypatch.setenv(exact.TF32_OVERRIDE, "0")
    exact.check_exact_possible("float32", "cuda")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_on_a_gpu_stores_its_weights_in_that_precision(dtype):
    """On CUDA the weights are stored in the run's precision, not cast from float32 on every forward pass."""
    assert assembly.stored_precision(dtype, "cuda") == dtype
    assert assembly.stored_precision(dtype, "cuda:1") == dtype
    assert assembly.stored_precision("float32", "cuda") == "float32"
