"""An on-disk cache of sentence embeddings that survives restarts.

One folder per scorer identity (a fingerprint of the encoder's weights plus every setting that changes an
embedding), one file per text inside it, named by a hash of the text's token ids. Files are written to a
temporary name and renamed into place, so a crash never leaves a half-written entry under a real name;
each file carries the sha256 of its payload, so a truncated or altered file is detected, reported, deleted
and recomputed, never used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import struct
from pathlib import Path

import torch

from fastbertscore.files import write_atomic

logger = logging.getLogger(__name__)

_MAGIC = b"FBSEMB1\n"
_HEADER_SIZE = struct.Struct("<I")


def weights_digest(module: torch.nn.Module) -> str:
    """A hash of every weight: a fine-tuned model saved at the same path gets a new folder. Computed once per
    loaded model (the scorer keeps it with the model), not per call."""
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in module.state_dict().items():
        tensor = tensor.detach().cpu().contiguous()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())  # reshape: 0-d tensors cannot be viewed
    return digest.hexdigest()


def encoder_fingerprint(weights: str, settings: dict) -> str:
    """The cache folder's name: the weights' digest and every setting that changes an embedding."""
    return hashlib.blake2b(f"{weights}|{json.dumps(settings, sort_keys=True)}".encode(), digest_size=16).hexdigest()


class DiskCache:
    """``get(ids)``/``put(ids, embedding)`` backed by files under ``root/<fingerprint>/``."""

    def __init__(self, root: str | os.PathLike, fingerprint: str, settings: dict):
        self.folder = Path(root) / fingerprint
        self.folder.mkdir(parents=True, exist_ok=True)
        about = self.folder / "settings.json"
        if not about.exists():
            write_atomic(about, json.dumps(settings, indent=1, sort_keys=True), durable=False)
        self.hits = 0
        self.misses = 0
        self.corrupted = 0
        self._write_failed = False

    def path_for(self, ids: list[int]) -> Path:
        key = hashlib.blake2b(struct.pack(f"<{len(ids)}q", *ids), digest_size=20).hexdigest()
        return self.folder / key[:2] / f"{key}.emb"

    def get(self, ids: list[int]) -> torch.Tensor | None:
        path = self.path_for(ids)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        embedding, problem = _decode(data)
        if problem is not None:
            self.corrupted += 1
            self.misses += 1
            logger.warning("embedding cache file %s is corrupted (%s); deleted it, recomputing", path, problem)
            path.unlink(missing_ok=True)
            return None
        self.hits += 1
        return embedding

    def put(self, ids: list[int], embedding: torch.Tensor) -> None:
        path = self.path_for(ids)
        if path.exists():
            return
        try:
            write_atomic(path, _encode(embedding), durable=False)  # makes the shard folder too
        except OSError as error:  # a full or read-only disk costs speed, never a score
            if not self._write_failed:
                logger.warning("cannot write to the embedding cache %s (%s); going on without it", self.folder, error)
                self._write_failed = True


def _encode(embedding: torch.Tensor) -> bytes:
    payload = embedding.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
    header = json.dumps({"shape": list(embedding.shape), "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    return _MAGIC + _HEADER_SIZE.pack(len(header)) + header + payload


def _decode(data: bytes) -> tuple[torch.Tensor | None, str | None]:
    if not data.startswith(_MAGIC):
        return None, "bad magic bytes"
    start = len(_MAGIC) + _HEADER_SIZE.size
    if len(data) < start:
        return None, "truncated header"
    (size,) = _HEADER_SIZE.unpack_from(data, len(_MAGIC))
    try:
        header = json.loads(data[start : start + size])
        shape = [int(n) for n in header["shape"]]
        checksum = str(header["sha256"])
    except (ValueError, KeyError, TypeError):
        return None, "unreadable header"
    payload = data[start + size :]
    expected = 4 * math.prod(shape)
    if len(payload) != expected:
        return None, f"payload is {len(payload)} bytes, expected {expected}"
    if hashlib.sha256(payload).hexdigest() != checksum:
        return None, "checksum mismatch"
    return torch.frombuffer(bytearray(payload), dtype=torch.float32).reshape(shape), None


class LayeredCache:
    """Memory first, then disk: a hit in a lower layer is copied up; new entries go to every layer."""

    def __init__(self, *layers):
        self.layers = [layer for layer in layers if layer is not None]

    def get(self, ids: list[int]) -> torch.Tensor | None:
        for depth, layer in enumerate(self.layers):
            found = layer.get(ids)
            if found is not None:
                for upper in self.layers[:depth]:
                    upper.put(ids, found)
                return found
        return None

    def put(self, ids: list[int], embedding: torch.Tensor) -> None:
        for layer in self.layers:
            layer.put(ids, embedding)
