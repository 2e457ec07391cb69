"""The one bucketing and the one padding: encoder batches, matching steps and all-pairs blocks are all cut and
padded here."""

from __future__ import annotations

import math
import random

import pytest
import torch

from fastbertscore.pipeline.batching import BATCH_COST_TOKENS, buckets, least_padded, pad


def tokens(n: int, padded: tuple[int, ...]) -> int:
    """An encoder batch's cost: its padded token count."""
    return n * padded[0]


@pytest.mark.parametrize("batch_size, max_tokens", [(1, 10_000), (3, 60), (64, 10_000), (3, 20)])
def test_batches_cover_every_item_once_within_both_limits(batch_size, max_tokens):
    lengths = [5, 40, 12, 12, 70, 3, 9, 33]
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches = list(buckets(order, [(length,) for length in lengths], tokens, max_tokens, batch_size))
    assert [i for b in batches for i in b] == order, "consecutive, in the order given"
    for batch in batches:
        assert len(batch) <= batch_size
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= max_tokens


def test_an_item_over_the_limit_alone_gets_a_batch_of_its_own():
    assert list(buckets([0, 1], [(50,), (2,)], tokens, limit=8, max_items=4)) == [[0], [1]]


def test_the_cost_sees_the_padded_lengths_of_every_side():
    """Matching steps pad candidates and references separately: the cost sees each side's longest."""
    sizes = [(2, 9), (9, 2), (3, 3)]
    seen = []

    def cost(n: int, padded: tuple[int, ...]) -> int:
        seen.append((n, padded))
        return n * padded[0] * padded[1]

    assert list(buckets([0, 1, 2], sizes, cost, limit=200)) == [[0, 1], [2]]
    assert (2, (9, 9)) in seen and (3, (9, 9)) in seen


def test_pad_fills_with_the_value_and_masks_real_entries():
    rows = [torch.tensor([1, 2, 3]), torch.tensor([4])]
    padded, mask = pad(rows, value=7)
    assert padded.tolist() == [[1, 2, 3], [4, 7, 7]]
    assert mask.tolist() == [[True, True, True], [True, False, False]]
    vectors, mask = pad([torch.ones(2, 4), torch.ones(1, 4)])
    assert vectors.shape == (2, 2, 4) and vectors[1, 1].abs().sum() == 0 and mask.dtype == torch.bool


def _fewest_padded_tokens(lengths: list[int], max_items: int, max_tokens: int) -> int:
    """The plain shortest path over every cut point: the least padded tokens (plus each batch's cost) possible."""
    best = [0] + [math.inf] * len(lengths)
    for end in range(1, len(lengths) + 1):
        for start in range(end):
            size = end - start
            if size == 1 or (size <= max_items and size * lengths[start] <= max_tokens):
                best[end] = min(best[end], best[start] + BATCH_COST_TOKENS + size * lengths[start])
    return int(best[-1])


@pytest.mark.parametrize("seed", range(40))
def test_least_padded_batches_cost_the_fewest_padded_tokens_within_both_limits(seed):
    """It tries only the starts of runs of equal lengths and the earliest start the limits allow: the cut still
    costs no more than the best over every cut point, and keeps every limit."""
    rng = random.Random(seed)
    top = rng.choice([3, 20, 90, 600])
    lengths = sorted((rng.randint(1, top) for _ in range(rng.randint(0, 120))), reverse=True)
    max_items, max_tokens = rng.choice([1, 2, 7, 64]), rng.choice([40, 512, 4096])
    batches = least_padded(lengths, max_items, max_tokens)
    assert [i for start, end in batches for i in range(start, end)] == list(range(len(lengths)))
    for start, end in batches:
        assert end - start == 1 or (end - start <= max_items and (end - start) * lengths[start] <= max_tokens)
    cost = sum(BATCH_COST_TOKENS + (end - start) * lengths[start] for start, end in batches)
    assert cost == _fewest_padded_tokens(lengths, max_items, max_tokens)
