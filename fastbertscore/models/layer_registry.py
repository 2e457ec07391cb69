"""A user-level registry of tuned layers (``bertscore tune-layer --record``), used when ``num_layers`` is not
given for a model without a published layer — in place of the three-quarters-of-depth guess.

Stored as JSON at ``$FASTBERTSCORE_LAYER_REGISTRY`` or ``~/.cache/fastbertscore/layers.json``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from fastbertscore.files import file_lock, write_atomic

logger = logging.getLogger(__name__)


class RegistryError(ValueError):
    """The registry file exists and cannot be read; the message names it."""


def registry_path() -> Path:
    env = os.environ.get("FASTBERTSCORE_LAYER_REGISTRY")
    return Path(env) if env else Path.home() / ".cache" / "fastbertscore" / "layers.json"


def load() -> dict:
    """The registry for lookups: a missing file is empty, and an unreadable one is ignored with a warning (a
    layer lookup falls back to three quarters of the depth; :func:`record` refuses to write over it)."""
    try:
        return read()
    except RegistryError as error:
        logger.warning("ignoring %s", error)
        return {}


def read(path: Path | None = None) -> dict:
    """The registry at ``path`` (default :func:`registry_path`), strictly: what :func:`record` starts from.

    Raises:
        RegistryError: the file exists and is not a readable JSON object.
    """
    path = registry_path() if path is None else path
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RegistryError(f"the layer registry {path} cannot be read ({error}); fix or remove it") from None
    if not isinstance(data, dict):
        raise RegistryError(f"the layer registry {path} is not a JSON object; fix or remove it")
    return data


def tuned_layer(model_type: str) -> int | None:
    entry = load().get(model_type)
    layer = entry.get("layer") if isinstance(entry, dict) else None
    return layer if isinstance(layer, int) and not isinstance(layer, bool) else None


def record(model_type: str, layer: int, **details: object) -> Path:
    """Save ``layer`` as ``model_type``'s tuned layer, under a lock (two recording processes keep both entries).

    Raises:
        RegistryError: the registry exists and cannot be read; it is left as it is, never overwritten.
    """
    path = registry_path()
    with file_lock(path):
        data = read(path)
        data[model_type] = {"layer": layer, **details}
        write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path
