"""Sliding windows for token sequences longer than the encoder's window (``long_inputs="window"``).

A long sequence ``prefix + content + suffix`` (prefix/suffix: the tokenizer's special tokens) is cut into
overlapping windows ``prefix + content[a:b] + suffix`` that fit the model. Each content token takes its
embedding from the window where it has the most context on both sides (the rule of BERT's SQuAD code);
the prefix comes from the first window and the suffix from the last, so the stitched result has exactly one
embedding per token of the full sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class WindowSpec:
    max_length: int  # tokens per window, special tokens included
    prefix: int  # special tokens before the content
    suffix: int  # special tokens after the content
    stride: int | None = None  # tokens shared by consecutive windows; default a quarter of the window

    @property
    def capacity(self) -> int:
        return self.max_length - self.prefix - self.suffix

    @property
    def overlap(self) -> int:
        overlap = self.capacity // 4 if self.stride is None else self.stride
        return min(max(overlap, 0), self.capacity - 1)


def special_layout(tokenizer: PreTrainedTokenizerBase) -> tuple[int, int]:
    """How many special tokens the tokenizer puts before and after a text's content."""
    empty = tokenizer("", add_special_tokens=True)["input_ids"]
    one = tokenizer("a", add_special_tokens=True)["input_ids"]
    for prefix in range(len(empty) + 1):
        suffix = len(empty) - prefix
        if one[:prefix] == empty[:prefix] and (suffix == 0 or one[-suffix:] == empty[prefix:]):
            return prefix, suffix
    return 0, len(empty)


def window_spans(n_tokens: int, spec: WindowSpec) -> tuple[list[tuple[int, int]], list[int]]:
    """Content spans ``[a, b)`` of the windows, and for each content token the window it is read from."""
    n_content = n_tokens - spec.prefix - spec.suffix
    step = spec.capacity - spec.overlap
    spans = []
    start = 0
    while True:
        end = min(start + spec.capacity, n_content)
        spans.append((start, end))
        if end >= n_content:
            break
        start += step
    owner = []
    for i in range(n_content):
        best, best_score = 0, -1.0
        for w, (a, b) in enumerate(spans):
            if a <= i < b:
                score = min(i - a, b - 1 - i) + 0.01 * (b - a)
                if score > best_score:
                    best, best_score = w, score
        owner.append(best)
    return spans, owner


def window_ids(ids: list[int], spec: WindowSpec, spans: list[tuple[int, int]]) -> list[list[int]]:
    head, tail = ids[: spec.prefix], ids[len(ids) - spec.suffix :]
    content = ids[spec.prefix : len(ids) - spec.suffix]
    return [head + content[a:b] + tail for a, b in spans]


def stitch(
    outputs: list[torch.Tensor], spec: WindowSpec, spans: list[tuple[int, int]], owner: list[int]
) -> torch.Tensor:
    """One embedding per token of the full sequence from the windows' outputs ``(T_w, ...)``."""
    rows = [outputs[0][: spec.prefix]]
    for w in range(len(spans)):
        mine = torch.tensor([i for i, o in enumerate(owner) if o == w], dtype=torch.long)
        if len(mine):
            rows.append(outputs[w][spec.prefix + mine - spans[w][0]])
    last = outputs[-1]
    rows.append(last[last.shape[0] - spec.suffix :])
    return torch.cat(rows)
