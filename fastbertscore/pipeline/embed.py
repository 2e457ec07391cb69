"""Token ids → unit-norm contextual embeddings, in length-sorted batches under a token budget."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from tqdm.auto import tqdm

from fastbertscore.pipeline.encoder import Encoder
from fastbertscore.pipeline.match import normalize
from fastbertscore.pipeline.windows import WindowSpec, plan, stitch, window_ids


def pad_id_of(tokenizer) -> int:
    """The tokenizer's padding id (0 for tokenizers without one, e.g. GPT-2; padding is masked anyway)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def length_batches(
    lengths: Sequence[int], order: Sequence[int], batch_size: int, max_tokens: int
) -> Iterator[list[int]]:
    """Split ``order`` (indices sorted by decreasing length) into batches.

    A batch holds at most ``batch_size`` sequences and at most ``max_tokens`` tokens once padded to its
    longest member; a single sequence longer than the budget still gets a batch of its own.
    """
    batch: list[int] = []
    for index in order:
        longest = lengths[batch[0]] if batch else lengths[index]
        if batch and (len(batch) >= batch_size or (len(batch) + 1) * longest > max_tokens):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def embed(
    encoder: Encoder,
    ids: Sequence[list[int]],
    wanted: Sequence[int],
    *,
    pad_id: int,
    batch_size: int,
    max_tokens: int,
    progress: tqdm | None = None,
    window: WindowSpec | None = None,
) -> dict[int, torch.Tensor]:
    """Embed the sentences ``wanted`` (indices into ``ids``) on the encoder's device.

    Returns ``{index: (T, D)}`` — ``(T, L + 1, D)`` for an all-layers encoder — unit-norm per token.
    With ``window``, a sequence longer than ``window.max_length`` is run as overlapping windows (batched with
    everything else) and stitched back to one embedding per token. Longest sequences go first so that an
    out-of-memory error, if any, comes at once.
    """
    rows: list[list[int]] = []
    windowed: dict[int, tuple[list[tuple[int, int]], list[int], list[int]]] = {}
    for index in wanted:
        if window is not None and len(ids[index]) > window.max_length:
            spans, owner = plan(len(ids[index]), window)
            windowed[index] = (spans, owner, list(range(len(rows), len(rows) + len(spans))))
            rows.extend(window_ids(ids[index], window, spans))
        else:
            rows.append(ids[index])
    # Progress counts sentences: per batch when every row is a sentence, else once the windows are stitched.
    live = progress if not windowed else None
    outputs = run_batches(encoder, rows, pad_id=pad_id, batch_size=batch_size, max_tokens=max_tokens, progress=live)
    out: dict[int, torch.Tensor] = {}
    position = 0
    for index in wanted:
        if index in windowed:
            spans, owner, members = windowed[index]
            out[index] = stitch([outputs[m] for m in members], window, spans, owner)
            position += len(members)
        else:
            out[index] = outputs[position]
            position += 1
    if progress is not None and windowed:
        progress.update(len(wanted))
    return out


def run_batches(
    encoder: Encoder, rows: list[list[int]], *, pad_id: int, batch_size: int, max_tokens: int, progress: tqdm | None
) -> list[torch.Tensor]:
    """Run ``rows`` (token id lists) through the encoder in length-sorted batches; unit-norm outputs in input order.
    The one place every encoder batch is made (tests/conftest.py forces its size on the second numeric path)."""
    device = encoder.device
    lengths = [len(seq) for seq in rows]
    order = sorted(range(len(rows)), key=lambda i: -lengths[i])
    out: list[torch.Tensor | None] = [None] * len(rows)
    for batch in length_batches(lengths, order, batch_size, max_tokens):
        longest = lengths[batch[0]]
        input_ids = torch.full((len(batch), longest), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, index in enumerate(batch):
            input_ids[row, : lengths[index]] = torch.tensor(rows[index], dtype=torch.long)
            mask[row, : lengths[index]] = 1
        hidden = normalize(encoder(input_ids.to(device), mask.to(device)))
        for row, index in enumerate(batch):
            out[index] = hidden[row, : lengths[index]]
        if progress is not None:
            progress.update(len(batch))
    return out
