"""A user-level registry of tuned layers (``bertscore tune-layer --record``), used when ``num_layers`` is not
given for a model without a published layer — in place of the three-quarters-of-depth guess.

Stored as JSON at ``$FASTBERTSCORE_LAYER_REGISTRY`` or ``~/.cache/fastbertscore/layers.json``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from fastbertscore.files import write_atomic

logger = logging.getLogger(__name__)


def registry_path() -> Path:
    env = os.environ.get("FASTBERTSCORE_LAYER_REGISTRY")
    return Path(env) if env else Path.home() / ".cache" / "fastbertscore" / "layers.json"


def load() -> dict:
    path = registry_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        logger.warning("ignoring the layer registry %s: %s", path, error)
        return {}
    return data if isinstance(data, dict) else {}


def tuned_layer(model_type: str) -> int | None:
    entry = load().get(model_type)
    layer = entry.get("layer") if isinstance(entry, dict) else None
    return layer if isinstance(layer, int) and not isinstance(layer, bool) else None


def record(model_type: str, layer: int, **details) -> Path:
    data = load()
    data[model_type] = {"layer": layer, **details}
    path = registry_path()
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path
