"""What this machine can run, and which precision ``dtype="auto"`` picks on it.

bfloat16 pays only where the hardware computes it natively: on a CPU with AMX or AVX512-BF16 it is faster than
float32, on an AVX2-only CPU (where oneDNN emulates it) several times slower (docs/speed.md has the figures).
So "auto" asks the hardware, never guesses from the device type alone.
"""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import Literal, TypeVar

import torch

logger = logging.getLogger(__name__)

DTYPE_CHOICES = ("float32", "bfloat16", "float16", "auto")
_CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")
_logged_auto: set[str] = set()
T = TypeVar("T")


@cache
def _cpuinfo(field: str) -> str:
    """The first ``field`` line of /proc/cpuinfo (Linux); empty elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.split(":", 1)[0].strip() == field:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_capability() -> str:
    """The vector instruction set torch's CPU kernels use here: ``AVX512``, ``AVX2``, ``DEFAULT``, ..."""
    return torch.backends.cpu.get_cpu_capability()


def cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def cpu_native_bf16() -> bool:
    """Whether the CPU computes bfloat16 matrix products natively (AMX or AVX512-BF16).

    Asks torch first (``torch.cpu._is_amx_tile_supported`` and ``_is_avx512_bf16_supported``, private but
    present since torch 2.3), then the kernel's CPU flags.
    """
    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        check = getattr(torch.cpu, probe, None)
        if check is not None:
            try:
                if check():
                    return True
            except RuntimeError:
                pass
    return any(flag in cpu_flags() for flag in _CPU_BF16_FLAGS)


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as the kernel lists them (``amx_bf16``, ``avx512_bf16``, ``avx2``, ...); empty where
    /proc/cpuinfo cannot be read."""
    return frozenset(_cpuinfo("flags").split())


def cpu_bf16_gap() -> str:
    """Why bfloat16 is slow on this CPU, in words for a warning; empty where it is native."""
    if cpu_native_bf16():
        return ""
    return f"this CPU ({cpu_capability()}) has neither AMX nor AVX512-BF16, so bfloat16 is emulated"


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    return devices


def check_device(device: object) -> str:
    """``device`` as given (``None``: cuda when available, else cpu), or a ``ValueError`` naming what is available.

    Runs before any model work, so a missing GPU never surfaces as an assertion from inside torch.
    """
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    available = available_devices()
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device={device!r} is not a device name; available here: {', '.join(available)}") from None
    usable = {
        "cpu": True,
        "cuda": torch.cuda.is_available() and (parsed.index is None or parsed.index < torch.cuda.device_count()),
        "mps": "mps" in available and parsed.index in (None, 0),
    }.get(parsed.type, False)
    if not usable:
        raise ValueError(f"device={device!r} is not available on this machine; available here: {', '.join(available)}")
    return device


def auto_dtype(
    device: str, *, cpu_bf16: bool | None = None, cuda_bf16: bool | None = None
) -> Literal["float32", "bfloat16", "float16"]:
    """The fastest precision whose error bounds hold on ``device``: bfloat16 on CPUs with native bf16 and on GPUs
    that support it, float16 on CUDA GPUs without bf16, float32 otherwise (emulated bf16, MPS, anything else).

    ``cpu_bf16`` / ``cuda_bf16`` state the hardware's answer instead of asking it (for ``bertscore env`` and tests).
    """
    kind = torch.device(device).type
    if kind == "cpu":
        return "bfloat16" if (cpu_native_bf16() if cpu_bf16 is None else cpu_bf16) else "float32"
    if kind == "cuda":
        if cuda_bf16 is None:
            with torch.cuda.device(torch.device(device)):
                cuda_bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
        return "bfloat16" if cuda_bf16 else "float16"
    return "float32"


def resolve_dtype(dtype: str, device: str) -> str:
    """``dtype`` with ``"auto"`` resolved for ``device``; the choice is logged once per device per process."""
    if dtype != "auto":
        return dtype
    resolved = auto_dtype(device)
    if device not in _logged_auto:
        _logged_auto.add(device)
        why = "native bf16" if resolved == "bfloat16" else "no native bf16" if resolved == "float32" else "no bf16"
        logger.info("dtype='auto' on %s: %s (%s)", device, resolved, why)
    return resolved


def free_device_memory(device: str | torch.device) -> int:
    """Bytes free for new work on ``device``: on CUDA the device's free memory plus what torch holds cached but
    unused there; on the CPU (and any other device) the host's available RAM (``MemAvailable``, else free pages)."""
    parsed = torch.device(device)
    if parsed.type == "cuda":
        free, _ = torch.cuda.mem_get_info(parsed)
        return int(free + torch.cuda.memory_reserved(parsed) - torch.cuda.memory_allocated(parsed))
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def describe() -> dict[str, object]:
    """What a bug report needs: versions, CPU, accelerators, and what ``dtype="auto"`` resolves to on each device."""
    import tokenizers
    import transformers

    from fastbertscore._version import __version__

    info: dict[str, object] = {
        "fastbertscore": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu capability": cpu_capability(),
        "cpu native bf16": cpu_native_bf16(),
        "torch threads": torch.get_num_threads(),
        "cuda available": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        info["cuda"] = torch.version.cuda
        for i in range(torch.cuda.device_count()):
            info[f"cuda:{i}"] = torch.cuda.get_device_name(i)
    mps = getattr(torch.backends, "mps", None)
    info["mps available"] = bool(mps is not None and mps.is_available())
    for device in available_devices():
        info[f"dtype='auto' on {device}"] = auto_dtype(device)
    return info


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


def _switch(backend: str, op: str) -> object:
    return getattr(getattr(torch.backends, backend, None), op, None)


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
    switches = [s for s in (_switch(b, op) for b, op in _FP32_SWITCHES) if hasattr(s, "fp32_precision")]
    saved = [s.fp32_precision for s in switches]
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    for switch in switches:
        switch.fp32_precision = "ieee"
    try:
        yield
    finally:
        if matmul is not None:
            torch.set_float32_matmul_precision(matmul)
        if cudnn is not None:
            torch.backends.cudnn.allow_tf32 = cudnn
        for switch, value in zip(switches, saved, strict=True):
            switch.fp32_precision = value
