"""What this machine can run, and which precision ``dtype="auto"`` picks on it.

bfloat16 pays only where the hardware computes it natively, and not on every such CPU: with AMX, or AVX512-BF16 on
some CPUs, its matrix products run several times as fast as float32's; on other CPUs that list AVX512-BF16 they run
at half float32's speed, and on an AVX2-only CPU (where oneDNN emulates bfloat16) several times slower
(docs/speed.md has the figures). So on a CPU "auto" measures, once per process, never guesses from the flags or
the device type alone.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from functools import cache, lru_cache
from typing import Literal, TypeVar

import torch

logger = logging.getLogger(__name__)

DTYPE_CHOICES = ("float32", "bfloat16", "float16", "auto")
#: dtype="auto" runs bfloat16 on a CPU only where its matrix products run at least this many times as fast as
#: float32's (measured by :func:`cpu_bf16_speedup`): far from what CPUs measure on either side of it.
BF16_AUTO_SPEEDUP = 1.3
#: The matrix product measured: a batch of tokens times a feed-forward weight of a small encoder.
_GEMM_SHAPE = (1024, 384, 1536)
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


@lru_cache(maxsize=1)
def cpu_bf16_speedup() -> float:
    """How many times as fast a bfloat16 matrix product of an encoder's shape runs as a float32 one on this CPU,
    with torch's threads: measured once per process (about a tenth of a second), 0 where bfloat16 is not native
    (emulated, it is several times slower: nothing to measure)."""
    if not cpu_native_bf16():
        return 0.0
    return _gemm_seconds(torch.float32) / _gemm_seconds(torch.bfloat16)


def _gemm_seconds(dtype: torch.dtype, repeats: int = 5) -> float:
    """The best of ``repeats`` timings of one :data:`_GEMM_SHAPE` matrix product in ``dtype``, after a first call
    that prepares the kernel."""
    m, k, n = _GEMM_SHAPE
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=generator).to(dtype)
    b = torch.randn(k, n, generator=generator).to(dtype)
    best = float("inf")
    with torch.inference_mode():
        torch.matmul(a, b)
        for _ in range(repeats):
            start = time.perf_counter()
            torch.matmul(a, b)
            best = min(best, time.perf_counter() - start)
    return best


def cpu_bf16_pays() -> bool:
    """Whether bfloat16 is the faster precision on this CPU (:data:`BF16_AUTO_SPEEDUP`): what ``dtype="auto"``
    asks."""
    return cpu_bf16_speedup() >= BF16_AUTO_SPEEDUP


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as the kernel lists them (``amx_bf16``, ``avx512_bf16``, ``avx2``, ...); empty where
    /proc/cpuinfo cannot be read."""
    return frozenset(_cpuinfo("flags").split())


def cpu_bf16_gap() -> str:
    """Why bfloat16 is slow on this CPU, in words for a warning; empty where it pays."""
    if cpu_bf16_pays():
        return ""
    if not cpu_native_bf16():
        return f"this CPU ({cpu_capability()}) has neither AMX nor AVX512-BF16, so bfloat16 is emulated"
    return f"bfloat16 matrix products run at {cpu_bf16_speedup():.2f}x the speed of float32 ones on this CPU (measured)"


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
    """The fastest precision whose error bounds hold on ``device``: bfloat16 on CPUs where it runs faster than
    float32 (:func:`cpu_bf16_pays`) and on GPUs that support it, float16 on CUDA GPUs without bf16, float32
    otherwise (emulated or slow bf16, MPS, anything else).

    ``cpu_bf16`` / ``cuda_bf16`` state the hardware's answer instead of asking it (for ``bertscore env`` and tests).
    """
    kind = torch.device(device).type
    if kind == "cpu":
        return "bfloat16" if (cpu_bf16_pays() if cpu_bf16 is None else cpu_bf16) else "float32"
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
        if torch.device(device).type == "cpu" and cpu_native_bf16():
            why = f"bfloat16 matrix products run at {cpu_bf16_speedup():.2f}x float32's here"
        else:
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
        "cpu bf16 flags": " ".join(f for f in _CPU_BF16_FLAGS if f in cpu_flags()) or "none",
        "cpu bf16 speed-up": f"{cpu_bf16_speedup():.2f}x float32 (measured)" if cpu_native_bf16() else "emulated",
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
