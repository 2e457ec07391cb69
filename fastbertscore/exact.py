"""Exact float32 on every device: scores are computed in full float32 whatever TF32 or bfloat16 rounding the
caller's process turned on, and a CUDA process that cannot be made exact is refused in one line."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import torch

T = TypeVar("T")


#: Set in NVIDIA's containers: cuBLAS then rounds float32 products to TF32 whatever torch's flags say.
TF32_OVERRIDE = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"


def check_exact_possible(dtype: str, device: str) -> None:
    """A ``ValueError`` where float32 cannot be exact: on a CUDA device while ``TORCH_ALLOW_TF32_CUBLAS_OVERRIDE``
    is set, which cuBLAS reads once per process and no flag of torch turns off."""
    forced = os.environ.get(TF32_OVERRIDE, "").strip().lower() in ("1", "true", "yes", "y", "on")
    if dtype == "float32" and forced and torch.device(device).type == "cuda":
        raise ValueError(
            f"dtype='float32' on {device}: {TF32_OVERRIDE}={os.environ[TF32_OVERRIDE]} makes cuBLAS round float32 "
            f"products to TF32, which cannot be turned off from inside; start Python with {TF32_OVERRIDE}=0 "
            "for exact scores, or pass dtype='bfloat16'"
        )


#: The fp32 precision switches of torch's new API (torch >= 2.9), each a backend and an op: "tf32" or "bf16" there
#: lets cuBLAS, cuDNN or oneDNN (on CPUs with AMX or AVX512-BF16) round float32 inputs to fewer mantissa bits.
_FP32_SWITCHES = (
    ("cuda", "matmul"),
    ("cudnn", "conv"),
    ("cudnn", "rnn"),
    ("mkldnn", "matmul"),
    ("mkldnn", "conv"),
    ("mkldnn", "rnn"),
)


#: Those of them this torch has, found once: module-level objects of ``torch.backends``, the same for the process.
_SWITCHES: tuple[Any, ...] = tuple(
    switch
    for switch in (getattr(getattr(torch.backends, backend, None), op, None) for backend, op in _FP32_SWITCHES)
    if hasattr(switch, "fp32_precision")
)


def _legacy(read: Callable[[], T]) -> T | None:
    """A legacy flag's value, or ``None`` where torch refuses to read it (a mix of the legacy and new APIs)."""
    try:
        return read()
    except RuntimeError:
        return None


@contextmanager
def exact_float32() -> Iterator[None]:
    """Run the block with float32 matrix products and convolutions in full float32 (IEEE), on every device.

    A process may have turned TF32 or bf16 rounding on for its own work: the HF Trainer's ``tf32=True``,
    Lightning's ``torch.set_float32_matmul_precision("high")``, ``TORCH_ALLOW_TF32_CUBLAS_OVERRIDE`` in NVIDIA's
    containers, or ``torch.backends.mkldnn.matmul.fp32_precision`` on a CPU. Our scores are computed in float32
    (the hash says so), so this turns those off for the block and restores the caller's settings afterwards.
    The legacy switches are set through their own setters first (they keep the legacy and new states in step, so
    nothing inside reads a mix), then every new-API switch is set to ``"ieee"``; on the way out the legacy values
    come back first and the new-API values last, so both read as before. Torch's settings are process-wide: a
    thread that runs float32 work of its own beside a scoring call sees full float32 meanwhile.
    """
    matmul = _legacy(torch.get_float32_matmul_precision)
    cudnn = _legacy(lambda: torch.backends.cudnn.allow_tf32)
    saved = [s.fp32_precision for s in _SWITCHES]
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    for switch in _SWITCHES:
        switch.fp32_precision = "ieee"
    try:
        yield
    finally:
        if matmul is not None:
            torch.set_float32_matmul_precision(matmul)
        if cudnn is not None:
            torch.backends.cudnn.allow_tf32 = cudnn
        for switch, value in zip(_SWITCHES, saved, strict=True):
            switch.fp32_precision = value
