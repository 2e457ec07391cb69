"""Token ids → unit-norm contextual embeddings: the encoder run, in length-sorted batches under a token budget.

:func:`encode` is what :meth:`~fastbertscore.pipeline.embedder.Embedder.embed` runs for the texts its cache does
not hold; nothing else runs the encoder. Batches are cut by :func:`~.batching.buckets` and padded by
one indexed copy from the rows packed end to end (:class:`~.batching.Packed`).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from tqdm.auto import tqdm

from fastbertscore import exact
from fastbertscore.heap import Ceiling, keep_under_ceiling
from fastbertscore.models.encoder import Encoder
from fastbertscore.phases import phase
from fastbertscore.pipeline.batching import Packed, buckets, least_padded, to_device
from fastbertscore.pipeline.budget import BatchHook, forced_batch_size
from fastbertscore.pipeline.match import normalize
from fastbertscore.pipeline.windows import WindowSpec, stitch, window_ids, window_spans

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

#: On a GPU in half precision, an encoder batch's length is rounded up to a multiple of this many tokens, and
#: batches are filled to the batch size (:func:`_batches`), so that a call's batches share a few shapes: the first
#: use of a batch shape in a process costs more there, and length-sorted batches of every length made a one-off
#: bfloat16 call pay it on most of its batches (roberta-large's shape on an H200: a first call of 10k pairs 1.68 s
#: before, 1.16 s after; docs/speed.md, "On a GPU"). Padding is masked, so no real token's vector changes beyond
#: rounding, and the device has time to spare there: the host sets the pace.
HALF_SHAPE_STEP = 16


def pad_id_of(tokenizer: PreTrainedTokenizerBase) -> int:
    """The tokenizer's padding id (0 for tokenizers without one, e.g. GPT-2; padding is masked anyway)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def encode(
    encoder: Encoder,
    ids: Sequence[list[int]],
    wanted: Sequence[int],
    *,
    pad_id: int,
    batch_size: int,
    max_tokens: int,
    progress: tqdm | None = None,
    window: WindowSpec | None = None,
    between_batches: BatchHook = None,
    ceiling: Ceiling = None,
) -> dict[int, torch.Tensor]:
    """Embed the sentences ``wanted`` (indices into ``ids``) on the encoder's device.

    Returns ``{index: (T, D)}`` — ``(T, L + 1, D)`` for an all-layers encoder — unit-norm per token.
    With ``window``, a sequence longer than ``window.max_length`` is run as overlapping windows (batched with
    everything else) and stitched back to one embedding per token. Longest sequences go first so that an
    out-of-memory error, if any, comes at once. ``between_batches()`` is called before each batch: an exception it
    raises stops the run (a deadline passed, a request cancelled); after each, the heap is kept under ``ceiling``.
    """
    rows: list[list[int]] = []
    windowed: dict[int, tuple[list[tuple[int, int]], list[int], list[int]]] = {}
    for index in wanted:
        if window is not None and len(ids[index]) > window.max_length:
            spans, owner = window_spans(len(ids[index]), window)
            windowed[index] = (spans, owner, list(range(len(rows), len(rows) + len(spans))))
            rows.extend(window_ids(ids[index], window, spans))
        else:
            rows.append(ids[index])
    # Progress counts sentences: per batch when every row is a sentence, else once the windows are stitched.
    live = progress if not windowed else None
    outputs = _run_batches(
        encoder,
        rows,
        pad_id=pad_id,
        batch_size=batch_size,
        max_tokens=max_tokens,
        progress=live,
        between_batches=between_batches,
        ceiling=ceiling,
    )
    out: dict[int, torch.Tensor] = {}
    position = 0
    for index in wanted:
        if index in windowed:
            assert window is not None  # only a window makes a text windowed
            spans, owner, members = windowed[index]
            out[index] = stitch([outputs[m] for m in members], window, spans, owner)
            position += len(members)
        else:
            out[index] = outputs[position]
            position += 1
    if progress is not None and windowed:
        progress.update(len(wanted))
    return out


def _run_batches(
    encoder: Encoder,
    rows: list[list[int]],
    *,
    pad_id: int,
    batch_size: int,
    max_tokens: int,
    progress: tqdm | None,
    between_batches: BatchHook = None,
    ceiling: Ceiling = None,
) -> list[torch.Tensor]:
    """Run ``rows`` (token id lists) through the encoder in length-sorted batches; unit-norm outputs in input order.

    ``$FASTBERTSCORE_ENCODER_BATCH`` (:func:`~.budget.forced_batch_size`), when set, replaces ``batch_size``.
    Float32 work runs in full float32 whatever the caller set (:func:`~fastbertscore.exact.exact_float32`).
    On a GPU the batches are copied from pinned memory without waiting, and the device is waited for once, at
    the end, to check that every embedding is finite. A batch that runs out of GPU memory is halved and retried,
    and later batches keep the smaller size; one text alone that does not fit is a clear error.
    """
    device, forced = encoder.device, forced_batch_size()
    batch_size = forced or batch_size
    lengths = [len(seq) for seq in rows]
    packed = Packed.of_lists(rows)
    out: list[torch.Tensor | None] = [None] * len(rows)
    step = HALF_SHAPE_STEP if device.type == "cuda" and encoder.autocast is not None else 1
    pending, cap = deque(_batches(lengths, batch_size, max_tokens, forced=forced is not None, step=step)), batch_size
    bad = torch.zeros((), dtype=torch.long, device=device)  # texts with inf/NaN embeddings, counted on the device
    with exact.exact_float32(), torch.inference_mode():  # (normalize divides the encoder's output in place)
        while pending:
            if between_batches is not None:
                between_batches()
            batch, width = pending.popleft()
            if len(batch) > cap:
                # each part padded to its own longest row, or, where shapes are shared (``step``), to the batch's width
                keep = width if step > 1 else 0
                pending.extendleft(reversed([(batch[k : k + cap], keep) for k in range(0, len(batch), cap)]))
                continue
            try:
                with phase("encoder", device):
                    input_ids, mask = _on_device(*packed.padded(batch, pad_id, width=width), device)
                    hidden, norms = normalize(encoder(input_ids, mask))
            except torch.cuda.OutOfMemoryError:
                cap = _halved(device, len(batch), lengths[batch[0]], batch_size, first=cap == batch_size)
                pending.appendleft((batch, width))
                continue
            # An infinite, NaN or 0 norm (the norms checked, not the D times larger embeddings): no unit vector.
            unusable = (~torch.isfinite(norms) | (norms == 0)).reshape(*mask.shape, -1).any(dim=2)  # (B, T[, L + 1])
            bad += (unusable & mask.bool()).any(dim=1).sum()
            for row, index in enumerate(batch):
                out[index] = hidden[row, : lengths[index]]
            if progress is not None:
                progress.update(len(batch))
            keep_under_ceiling(ceiling)
    if rows and int(bad):  # the one wait for the device
        raise ValueError(_not_finite(encoder, int(bad), len(rows)))
    done = [e for e in out if e is not None]
    if len(done) != len(rows):
        raise RuntimeError(f"{len(rows) - len(done)} of {len(rows)} rows got no embedding")  # a bug of ours, not input
    return done


def _batches(
    lengths: list[int], batch_size: int, max_tokens: int, *, forced: bool, step: int = 1
) -> list[tuple[list[int], int]]:
    """Rows (their ``lengths``) in encoder batches, longest first, each with the length it is padded to: cut where
    they pad least, or, at a forced batch size or a shape ``step`` over 1, greedily into batches of exactly that many
    (within ``max_tokens``), each padded to its longest row's length rounded up to a multiple of ``step`` (never past
    the longest row of all).

    Example:
        >>> _batches([3, 17, 20, 9, 30], batch_size=2, max_tokens=64, forced=False, step=16)
        [([4, 2], 30), ([1, 3], 30), ([0], 16)]
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    if forced or step > 1:
        longest = max(lengths, default=0)
        sizes = [(min(-(-length // step) * step, longest),) for length in lengths]
        cut = buckets(order, sizes, lambda n, padded: n * padded[0], max_tokens, batch_size)
        return [(batch, sizes[batch[0]][0]) for batch in cut]
    cuts = least_padded([lengths[i] for i in order], batch_size, max_tokens)
    return [(order[start:end], lengths[order[start]]) for start, end in cuts]


def _halved(device: torch.device, texts: int, longest: int, batch_size: int, *, first: bool) -> int:
    """The batch size to go on with after a batch of ``texts`` (the longest ``longest`` tokens) ran out of memory on
    ``device``: half of it, said once per call (``first``); one text alone that does not fit is a clear error."""
    if texts == 1:
        raise torch.cuda.OutOfMemoryError(_too_long(device, longest, batch_size)) from None
    if first:
        logger.warning(
            "out of memory on %s with %d texts of up to %d tokens in one batch; halving the batch and going on "
            "with at most %d texts per batch (batch_size=%d)",
            device,
            texts,
            longest,
            (texts + 1) // 2,
            batch_size,
        )
    _release(device)
    return (texts + 1) // 2


def _on_device(input_ids: torch.Tensor, mask: torch.Tensor, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A padded batch's ids and attention mask on ``device``: copied from pinned memory without waiting when the
    device is a GPU."""
    return to_device(input_ids, device), to_device(mask.long(), device)


def _release(device: torch.device) -> None:
    """Hand the memory of a failed batch back to the device before the retry."""
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _too_long(device: torch.device, tokens: int, batch_size: int) -> str:
    return (
        f"out of memory on {device} embedding one text of {tokens} tokens alone (batch_size={batch_size} was halved "
        "down to 1): free memory on the device, score long texts through shorter windows or cut them "
        "(long_inputs='truncate'), use dtype='bfloat16', or device='cpu'"
    )


def _not_finite(encoder: Encoder, count: int, total: int) -> str:
    if encoder.autocast == torch.float16:
        return (
            f'dtype="float16" overflowed: the encoder gave inf/NaN hidden states for {count} of {total} texts '
            '(float16 holds values up to 65504 only); use dtype="bfloat16" (float32\'s range) or dtype="float32"'
        )
    return (
        f"the encoder gave inf/NaN hidden states for {count} of {total} texts (dtype="
        f'"{_dtype_name(encoder)}"); its weights or inputs are not usable for scoring'
    )


def _dtype_name(encoder: Encoder) -> str:
    return str(encoder.autocast or torch.float32).removeprefix("torch.")
