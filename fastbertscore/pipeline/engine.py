"""Score (candidate, reference) pairs: tokenize, weight, plan, embed and match, a step at a time.

The call is planned before anything is embedded (:mod:`.plan`): pairs that share a text are matched in the same
step, so each distinct text is embedded once whatever the order and size of the input, and the embeddings a
later step still needs are kept (:class:`~fastbertscore.cache.spill.KeptEmbeddings`: in memory up to the budget,
then on local disk). Memory stays bounded by the :class:`~.budget.Budget`: one step's texts, one matching
step's buffers and the kept embeddings, never the corpus.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence

import torch
from tqdm.auto import tqdm

from fastbertscore import exact
from fastbertscore.cache.spill import KeptEmbeddings
from fastbertscore.heap import keep_under_ceiling
from fastbertscore.phases import phase
from fastbertscore.pipeline.batching import Packed, buckets, pad, to_device
from fastbertscore.pipeline.budget import FLOAT_BYTES, MB, STEP_SHARE, Budget
from fastbertscore.pipeline.embedder import Embedder
from fastbertscore.pipeline.match import greedy_match
from fastbertscore.pipeline.plan import Schedule, plan
from fastbertscore.pipeline.prepare import Distinct, Names, Prepared, warn_empty
from fastbertscore.validate import Pairs

logger = logging.getLogger(__name__)


class _Texts:
    """The distinct texts of a batch of pairs: pair ``i`` is text ``cand[i]`` against text ``ref[i]``."""

    def __init__(self, pairs: Pairs):
        self.distinct = Distinct(pairs.cands, pairs.refs)
        self.cand, self.ref = self.distinct.columns
        self.texts = self.distinct.texts
        self.pairs = pairs

    def first_use(self, u: int) -> str:
        """Where distinct text ``u`` first appears in the caller's input (references first), for error messages."""
        column, row = self.distinct.first(u, order=(1, 0))
        return self.pairs.label(("cands", "refs")[column], row)

    def position(self, u: int) -> int:
        """Row of the first pair that uses text ``u``, for "the first offending input"."""
        return min(column.index(u) for column in self.distinct.columns if u in column)


def score_pairs(embedder: Embedder, pairs: Pairs, *, verbose: bool = False) -> torch.Tensor:
    """Raw BERTScore of each pair: ``(N, 3)`` holding P, R, F — ``(L + 1, N, 3)`` for all layers — with the
    embedder's weights, under its budget (:meth:`Embedder.for_call`).

    Pairs with an empty candidate or reference score 0 (with a warning). Texts longer than the model's window
    are cut, scored in full through windows or refused, as the embedder's ``long_inputs`` says.

    Raises:
        ValueError: the budget was given (``memory_mb``) and cannot hold the embeddings of the largest pair.
    """
    texts = _Texts(pairs)
    prepared = embedder.prepare(texts.texts, Names(texts.first_use, texts.position))
    budget = embedder.budget
    tok = prepared.tok
    warn_empty(tok, "candidate(s)", texts.cand, lambda row: pairs.label("cands", row))
    warn_empty(tok, "reference(s)", texts.ref, lambda row: pairs.label("refs", row))

    encoder, n_layers = embedder.encoder, embedder.n_layers
    out = torch.zeros((n_layers, len(pairs.cands), 3), dtype=torch.float32)
    live = [i for i in range(len(pairs.cands)) if not (tok.is_empty(texts.cand[i]) or tok.is_empty(texts.ref[i]))]
    size = (tok.packed.lengths * (FLOAT_BYTES * encoder.width * n_layers)).tolist()  # bytes of each text's embedding
    _check_budget(budget, live, texts, size)
    with phase("plan"):
        schedule = plan(texts.cand, texts.ref, live, size, budget.step_bytes)
    _run(embedder, schedule, texts, prepared, out, budget=budget, verbose=verbose)
    return out if encoder.all_layers else out[0]


def _run(
    embedder: Embedder,
    schedule: Schedule,
    texts: _Texts,
    prepared: Prepared,
    out: torch.Tensor,
    *,
    budget: Budget,
    verbose: bool,
) -> None:
    """Carry out ``schedule``: each step embeds its new texts, matches its pairs into ``out`` and keeps what later
    steps need. A text the disk lost (full, unwritable) is embedded again, never guessed."""
    encoder, n_layers, tok = embedder.encoder, embedder.n_layers, prepared.tok
    weights = prepared.token_weights
    length = tok.packed.lengths.tolist()  # tokens of each distinct text, read once for every step
    bar = tqdm(total=len(schedule.embedded), desc="embedding", unit="sent", disable=not verbose)
    kept = KeptEmbeddings(budget.kept_bytes, encoder.device)
    # Scores gather on the encoder's device and come back in one copy at the end: a copy per matching step would
    # make the host wait for the device at every step (on a CPU this is ``out`` itself).
    scores_here = out if encoder.device.type == "cpu" else torch.zeros_like(out, device=encoder.device)
    limit = budget.ceiling(lambda: kept.bytes)  # checked between steps
    within = limit if budget.explicit else None  # and within a step only where the user gave the budget
    # matching is float32 whatever TF32/bf16 switches the caller turned on (the encoder run guards itself too)
    with (
        torch.inference_mode(),
        exact.exact_float32(),
        bar,
        kept,
    ):
        for step in schedule.steps:
            fresh = set(step.embed)
            emb = {u: e for u in step.texts if u not in fresh and (e := kept.get(u)) is not None}
            missing = [u for u in step.texts if u not in emb]  # first needed here, or lost by the disk
            emb.update(embedder.embed(tok.ids, missing, progress=bar, ceiling=within))
            for groups in _match_batches(list(step.rows), texts, length, n_layers, encoder.width, budget.match_entries):
                scores = _match(groups, texts, emb, weights, encoder.all_layers, budget.match_entries)
                at = to_device(torch.tensor([row for g in groups for row in g]), scores_here.device)
                scores_here[:, at] = scores.to(torch.float32)
                keep_under_ceiling(within)
            for u in set(step.keep).intersection(missing):
                kept.put(u, emb[u])
            for u in step.release:
                kept.drop(u)
            del emb
            keep_under_ceiling(limit)  # the next step reuses this one's memory, unless the process grew past the budget
        if scores_here is not out:
            out.copy_(scores_here)  # the one wait for the device's scores


def _check_budget(budget: Budget, live: list[int], texts: _Texts, size: list[int]) -> None:
    """A budget the user gave must hold the largest pair's two embeddings in one step."""
    if not budget.explicit or not live:
        return

    def need(row: int) -> int:
        return size[texts.cand[row]] + (size[texts.ref[row]] if texts.ref[row] != texts.cand[row] else 0)

    row = max(live, key=need)
    # Against the budget's own share, not the CPU's step cap (a speed setting): a pair over the cap gets a step
    # of its own, and the size this message names must be enough.
    if need(row) > budget.step_share:
        given = budget.memory_bytes / MB
        least = math.ceil(STEP_SHARE * need(row) / MB)
        raise ValueError(
            f"memory_mb={given:g} is too small: the pair at {texts.pairs.label('cands', row)} and "
            f"{texts.pairs.label('refs', row)} needs {need(row) / MB:.1f} MB of embeddings in one step, and a step "
            f"gets a quarter of the budget; give memory_mb={least} or more (or leave it unset to size it to the device)"
        )


def _match_batches(
    rows: list[int], texts: _Texts, length: list[int], n_layers: int, width: int, entries: int
) -> Iterator[list[list[int]]]:
    """Rows grouped by reference (each reference is padded and matched once, against all its candidates; a group is
    cut where it alone would pass ``entries``), the groups sorted by their number of candidates and lengths and
    batched so that one step's similarities and padded copies stay under ``entries``."""
    by_ref: dict[int, list[int]] = {}
    for row in rows:
        by_ref.setdefault(texts.ref[row], []).append(row)

    def cost(n: int, padded: tuple[int, ...]) -> int:
        k, c, r = padded
        return max(n * k * c * r * n_layers, n * (k * c + r) * n_layers * width)

    members, sizes = [], []
    for group in by_ref.values():
        c, r = max(length[texts.cand[row]] for row in group), length[texts.ref[group[0]]]
        most = max(1, entries // cost(1, (1, c, r)))  # candidates one reference may take in a step
        for start in range(0, len(group), most):
            members.append(group[start : start + most])
            sizes.append((len(members[-1]), c, r))
    order = sorted(range(len(members)), key=sizes.__getitem__)  # by candidates per reference, then lengths
    for batch in buckets(order, sizes, cost, entries):
        yield [members[g] for g in batch]


def _padded(
    units: Sequence[int | None], emb: dict[int, torch.Tensor], all_layers: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded embeddings and mask of ``units`` on the embeddings' device (None: an empty slot, all padding)."""
    some = next(iter(emb.values()))
    empty = some.new_zeros((0, *some.shape[1:]))
    vectors, mask = pad([empty if u is None else emb[u] for u in units])
    if all_layers:  # (B, T, L, D) → (L, B, T, D): layers broadcast in the matching
        vectors = vectors.permute(2, 0, 1, 3)
    return vectors, mask


def _match(
    groups: list[list[int]],
    texts: _Texts,
    emb: dict[int, torch.Tensor],
    weights: Packed,
    all_layers: bool,
    entries: int,
) -> torch.Tensor:
    """The scores of the rows of ``groups`` (rows that share a reference), in their order: ``(L or 1, rows, 3)``."""
    device = next(iter(emb.values())).device
    k = max(map(len, groups))
    slots = [g[i] if i < len(g) else None for g in groups for i in range(k)]  # K candidate slots per reference
    real = torch.tensor([s for s, row in enumerate(slots) if row is not None])
    rows = [row for row in slots if row is not None]
    with phase("pad", device):
        cand_units, ref_units = [None if r is None else texts.cand[r] for r in slots], [texts.ref[g[0]] for g in groups]
        cand, cand_mask = _padded(cand_units, emb, all_layers)
        ref, ref_mask = _padded(ref_units, emb, all_layers)
        cand, cand_mask = cand.unflatten(-3, (len(groups), k)), cand_mask.unflatten(0, (len(groups), k))
        # both sides' token weights padded on the host by one indexed copy (to the longer side), and copied once
        real_weights = weights.padded([texts.cand[r] for r in rows] + ref_units)[0]
        both = real_weights.new_zeros((len(slots) + len(groups), real_weights.shape[1]))
        both[real], both[len(slots) :] = real_weights[: len(rows)], real_weights[len(rows) :]
        both = to_device(both, device)
        cand_weights = both[: len(slots), : cand.shape[-2]].unflatten(0, (len(groups), k))
        ref_weights = both[len(slots) :, : ref.shape[-2]]
    # One pair of long documents can exceed the budget alone: then match it a block of candidate tokens at a time.
    per_cand_token = len(slots) * ref.shape[-2] * (ref.shape[0] if all_layers else 1)
    with phase("match", device):
        block = max(1, entries // max(per_cand_token, 1))
        P, R, F = greedy_match(cand, cand_mask, cand_weights, ref, ref_mask, ref_weights, block=block)
    scores = torch.stack((P, R, F), dim=-1).flatten(-3, -2)[..., to_device(real, device), :]
    return scores if all_layers else scores.unsqueeze(0)
