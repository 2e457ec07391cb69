"""greedy_match is pure tensor math; these pin its semantics on hand-made vectors."""

from __future__ import annotations

import torch
from tolerances import assert_close, assert_scores_close, prf_bounds

from fastbertscore.pipeline.match import greedy_match, normalize


def _one(vectors):
    emb, _ = normalize(torch.tensor([vectors], dtype=torch.float32))
    return emb, torch.ones(emb.shape[:2], dtype=torch.bool), torch.ones(emb.shape[:2])


def test_identical_sentences_score_one():
    emb, mask, w = _one([[1.0, 0.0], [0.3, 0.7], [0.0, 2.0]])
    P, R, F = greedy_match(emb, mask, w, emb, mask, w)
    assert_scores_close((P, R, F), torch.ones(3, 1), width=2, tokens=3)


def test_each_token_takes_its_best_match_and_weights_normalise():
    cand = _one([[1.0, 0.0], [0.0, 1.0]])
    ref = _one([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.0]])
    ref_w = torch.tensor([[1.0, 1.0, 2.0]])
    P, R, F = greedy_match(*cand, ref[0], ref[1], ref_w)
    s = 2**-0.5
    # [1,1] is 45° from both candidate tokens; [-1,0] is best matched by [0,1], at cos 0
    expected_P, expected_R = (1.0 + s) / 2, (1.0 + s + 2 * 0.0) / 4
    expected = [[expected_P], [expected_R], [2 * expected_P * expected_R / (expected_P + expected_R)]]
    assert_scores_close((P, R, F), expected, width=2, tokens=3)


def test_padding_never_matches_even_when_all_similarities_are_negative():
    cand, _ = normalize(torch.tensor([[[1.0, 0.0], [0.0, 0.0]]]))  # second row is padding
    cand = torch.nan_to_num(cand)
    cand_mask = torch.tensor([[True, False]])
    ref, _ = normalize(torch.tensor([[[-1.0, 0.1]]]))
    P, R, _F = greedy_match(
        cand, cand_mask, torch.tensor([[1.0, 0.0]]), ref, torch.ones(1, 1, dtype=torch.bool), torch.ones(1, 1)
    )
    assert P.item() < 0 and R.item() < 0  # bert-score would clamp these to 0 in a padded batch


def test_layers_broadcast():
    emb, mask, w = _one([[1.0, 0.0], [0.3, 0.7]])
    other, _ = normalize(torch.tensor([[[0.5, 0.5], [0.1, 0.9]]]))
    stacked = torch.stack([emb, other])  # (L=2, B=1, T, D)
    P, R, F = greedy_match(stacked, mask, w, torch.stack([other, other]), mask, w)
    single = greedy_match(emb, mask, w, other, mask, w)
    assert P.shape == (2, 1)
    assert_scores_close([x[0] for x in (P, R, F)], single, width=2, tokens=2)
    assert_close(F[1], torch.ones(1), prf_bounds(2, tokens=2)[2], "F of identical layers")
    # layers on one side only broadcast against the other side's one layer, either way round
    for one_sided in (greedy_match(stacked, mask, w, other, mask, w), greedy_match(other, mask, w, stacked, mask, w)):
        assert one_sided[0].shape == (2, 1)
        assert_close(one_sided[2][1], torch.ones(1), prf_bounds(2, tokens=2)[2], "F of identical layers")


def test_layers_on_one_side_pair_each_item_with_its_own_reference_when_layers_equal_items():
    """(L=2, B=2, Tc, D) candidates against (B=2, Tr, D) references: item b of every layer against reference b, never
    read as two candidates of one reference (a grouped input has a mask of one dimension more)."""
    torch.manual_seed(2)
    unit = lambda *shape: torch.nn.functional.normalize(torch.randn(*shape), dim=-1)
    cand, ref = unit(2, 2, 3, 4), unit(2, 5, 4)
    cand_mask, ref_mask = torch.ones(2, 3, dtype=torch.bool), torch.ones(2, 5, dtype=torch.bool)
    both = greedy_match(cand, cand_mask, cand_mask.float(), ref, ref_mask, ref_mask.float())
    for layer in range(2):
        for b in range(2):
            one = greedy_match(cand[layer, b : b + 1], cand_mask[:1], cand_mask[:1].float(), ref[b : b + 1],
                               ref_mask[:1], ref_mask[:1].float())  # fmt: skip
            assert_scores_close([x[layer, b : b + 1] for x in both], one, width=4, tokens=5)


def test_a_padded_batch_scores_each_pair_as_alone_when_padding_would_win():
    """Padding is zero vectors (similarity 0); pairs whose best similarities are negative, next to longer texts
    that pad them, must score as they do alone, where nothing pads them."""
    torch.manual_seed(0)
    pairs = []
    for tc, tr in [(3, 5), (6, 2), (1, 1), (4, 4), (2, 7)]:
        cand = torch.nn.functional.normalize(torch.randn(tc, 8), dim=-1)
        ref = torch.nn.functional.normalize(torch.randn(tr, 8), dim=-1)
        pairs.append((cand, -ref if tc == 3 else ref))  # the first pair: many similarities below 0
    pairs.append((pairs[0][0][:1], -pairs[0][0][:1]))  # one token against its opposite: all similarities -1

    def padded(rows):
        out = torch.zeros(len(rows), max(len(r) for r in rows), 8)
        mask = torch.zeros(out.shape[:2], dtype=torch.bool)
        for i, r in enumerate(rows):
            out[i, : len(r)], mask[i, : len(r)] = r, True
        return out, mask, mask.float()

    together = greedy_match(*padded([c for c, _ in pairs]), *padded([r for _, r in pairs]))
    for i, (c, r) in enumerate(pairs):
        alone = greedy_match(*padded([c]), *padded([r]))
        assert_scores_close([x[i : i + 1] for x in together], alone, width=8, tokens=max(len(c), len(r)))
    assert together[0][-1].item() < -0.99 and together[1][-1].item() < -0.99


def test_candidates_grouped_by_reference_score_as_each_pair_alone():
    """Each reference multiplied once against its candidate slots (``(B, K, Tc, D)`` against ``(B, Tr, D)``), with
    empty slots where a reference has fewer candidates, over two layers: every pair scores as it does alone."""
    torch.manual_seed(1)

    def unit(n):
        return torch.nn.functional.normalize(torch.randn(2, n, 8), dim=-1)  # (L=2, T, D)

    groups = [(unit(5), [unit(3), -unit(6)]), (unit(2), [unit(4)]), (-unit(7), [unit(1), unit(2)])]
    k, tc, tr = 2, 6, 7
    cand, cand_mask = torch.zeros(2, 3, k, tc, 8), torch.zeros(3, k, tc, dtype=torch.bool)
    ref, ref_mask = torch.zeros(2, 3, tr, 8), torch.zeros(3, tr, dtype=torch.bool)
    for g, (r, cs) in enumerate(groups):
        ref[:, g, : r.shape[1]], ref_mask[g, : r.shape[1]] = r, True
        for s, c in enumerate(cs):
            cand[:, g, s, : c.shape[1]], cand_mask[g, s, : c.shape[1]] = c, True
    grouped = greedy_match(cand, cand_mask, cand_mask.float(), ref, ref_mask, ref_mask.float())
    assert grouped[0].shape == (2, 3, k)
    for g, (r, cs) in enumerate(groups):
        for s, c in enumerate(cs):
            one = torch.ones(1, c.shape[1], dtype=torch.bool), torch.ones(1, r.shape[1], dtype=torch.bool)
            alone = greedy_match(c.unsqueeze(1), one[0], one[0].float(), r.unsqueeze(1), one[1], one[1].float())
            assert_scores_close([x[:, g, s] for x in grouped], [x[:, 0] for x in alone], width=8, tokens=tr)
