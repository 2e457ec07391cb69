"""The one tolerance policy: every numeric bound the tests use, each with the reason it holds on any CPU.

Two fp32 computations of the same score that differ only in the order of their sums — other batch padding,
other GEMM blocking, other kernels (AVX2, AVX-512, AMX, the scalar default) — do not agree bit for bit. The
bounds below come from float32 rounding, not from what passed on one machine:

* A BERTScore value is built from cosine similarities of unit vectors of width ``d``: dot products of ``d``
  terms whose partial sums stay within [-1, 1] (Cauchy–Schwarz). Each of the ``d`` roundings adds an error of
  at most ``u = 2**-24`` times a partial sum, and with the usual model of rounding errors as independent and
  uniform, one evaluation is off by a standard deviation of at most ``u·√(d/3)``. The greedy max adds no
  error (it may pick another token only when the two are within that error). The (weighted) mean over ``n``
  tokens is off by no more than its worst term, plus its own ``n`` roundings, each at most ``u`` of the
  mean. So two evaluations in different orders differ with a standard deviation of at most
  ``σ = u·√(2(d + n)/3)``.
* We allow 6σ: the chance that one value falls outside is 2e-9, so a suite that compares a few hundred
  thousand values stays green on every run. For all-MiniLM-L6-v2 (``d = 384``) and texts up to its window
  (``n = 512``) that is 8.7e-6; the raw values measured against bert-score stay far below it (about 1e-7).
* F = 2PR/(P+R) moves by at most ``2(P² + R²)/(P + R)²·max(|ΔP|, |ΔR|) ≤ 2·max(|ΔP|, |ΔR|)`` for P, R ≥ 0: F
  gets twice the bound (``assert_scores_close`` takes the factor per pair from the reference's own P and R, which
  also covers random-weight models whose P + R nears 0). Where P + R is within rounding of 0 no bound on F
  against the reference is finite, so there F is held to its own formula instead: ``2PR/(P + R)`` of the P and
  R it comes with, to the three float32 roundings of that formula (``3u`` of F), or 0 where P + R is exactly 0.
* Rescaling ``(x − b)/(1 − b)`` multiplies a difference by ``1/(1 − b)``: a rescaled value gets the raw bound
  divided by ``1 − b`` for that column's (and layer's) baseline value ``b`` (docs/reliability.md shows a machine
  where raw differences within the raw bound exceeded it once rescaled, until the bound was divided too).

Embeddings compared component by component (other batches, a cut encoder) carry the encoder's own roundings:
the same rule over the encoder's matmuls (``encoder()``).

Two devices (a GPU against the CPU, both float32 with TF32 off) run other kernels for every op of the encoder,
not only another order of the final dot products, so a score carries the encoder's differences too
(``two_devices()``). Each hidden-state component of a text differs between the devices by at most
``encoder()`` of the state's norm (the bound holds for unit vectors once normalised). A cosine ``a·b`` then moves
by ``δa·b + a·δb``: each term a sum over ``d`` components of independent differences times a unit vector's
components, so each has the standard deviation of one component's difference, and the two add in quadrature:
``√2·encoder()`` at 6σ. The greedy max and the weighted mean add no more than their worst term, and the matching's
own float32 roundings add ``fp32(width, tokens)``. Elementwise functions (exp, erf, tanh) differ by a few ulps
between the CPU's and CUDA's math libraries, far below one product's ``√d`` roundings. For MiniLM scored at layer
4 that is 5.5e-5; for a roberta-large shape at layer 17 (width 1024, feed-forward 4096), 1.7e-4. F gets the
conditioning above.

Reduced precision (bfloat16/float16 encoders) is bounded per pair by 2e-3 and in the mean by 8e-4 against
fp32, on native and emulated bfloat16 alike. Statistics computed in float64 from the same scores (Kendall τ,
Pearson, Spearman) get the same 6σ rule with ``u = 2**-53`` over the number of values, computed from the very
scores compared (scores from another pass could swap a near-tie and move τ by a whole pair). Hashes, picks (the
MBR index, the best reference) and counts are compared exactly, where a test has shown no near-tie can flip them;
a p-value from resampling may differ from sacrebleu's by the share of statistics within rounding of the threshold.

``tests/test_tolerances.py`` shows, for each kind, that a real break (scores off by 1e-4, a wrong pair, a
swapped pick) still fails these bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

U_FP32 = 2.0**-24
U_FP64 = 2.0**-53
SIGMAS = 6

#: Embedding widths of the models the CPU tests score.
MINILM_WIDTH = 384
TINY_WIDTH = 32


#: Tokens a text has at most in the tests, unless a test says more (long texts scored through windows).
WINDOW = 512


def fp32(width: int = MINILM_WIDTH, tokens: int = WINDOW) -> float:
    """Two fp32 evaluations of a P or R value over unit vectors of ``width`` dims and texts of ≤ ``tokens``."""
    return SIGMAS * U_FP32 * math.sqrt(2 * (width + tokens) / 3)


def fp64(count: int) -> float:
    """Two float64 evaluations of a statistic summed over ``count`` values of magnitude ≤ 1."""
    return SIGMAS * U_FP64 * math.sqrt(2 * max(count, 1) / 3)


def encoder(width: int = MINILM_WIDTH, layers: int = 6, ffn: int | None = None) -> float:
    """A hidden-state component from two encoder runs of other batch shapes, relative to the state's norm.

    Each layer's matmuls (Q, K, V and the attention output over ``width``, the feed-forward over ``width`` and
    ``ffn``, by default ``4·width``) round in a different order; LayerNorm keeps the scale, so their errors add
    in quadrature: the 6σ rule over ``layers·(4·width + ffn)`` terms.
    """
    return fp32(layers * (4 * width + (4 * width if ffn is None else ffn)), tokens=0)


def two_devices(width: int = MINILM_WIDTH, layers: int = 6, ffn: int | None = None, tokens: int = WINDOW) -> float:
    """A P or R value computed on two devices (a GPU and the CPU, float32 with TF32 off) by an encoder of
    ``layers`` layers of ``width`` (feed-forward ``ffn``, by default ``4·width``), over texts of ≤ ``tokens``."""
    return math.sqrt(2) * encoder(width, layers, ffn) + fp32(width, tokens)


def stored_fp32(value: float) -> float:
    """A float64 value stored in float32 (an idf weight, a baseline) is off by at most ``u`` of itself."""
    return U_FP32 * abs(value)


def unit_norm(width: int = MINILM_WIDTH) -> float:
    """The norm of a vector normalised in fp32: one sum of ``width`` squares, with the 6σ rule."""
    return fp32(width, tokens=0)


#: Reduced-precision encoders against fp32, per pair and as a mean over pairs.
REDUCED_PAIR = 2e-3
REDUCED_MEAN = 8e-4

#: A score printed with 6 decimals is off by half a unit in the last place.
PRINTED_6 = 0.5e-6


def prf_bounds(
    width: int = MINILM_WIDTH,
    baseline: Sequence[float] | torch.Tensor | None = None,
    tokens: int = WINDOW,
    raw: float | None = None,
):
    """The bounds for P, R and F (F twice P's), each divided by ``1 − b`` of its column when rescaled.

    ``raw``: the bound of a raw P or R value (default ``fp32(width, tokens)``; ``two_devices(...)`` across devices).

    ``baseline``: the rescaling values ``(b_P, b_R, b_F)``, or one row per layer (``(L + 1, 3)`` or the scorer's
    ``(L + 1, 1, 3)``) for all layers: the bound is then per layer, shaped to broadcast over ``(L + 1, N)``.
    """
    raw = fp32(width, tokens) if raw is None else raw
    bounds = [raw, raw, 2 * raw]
    if baseline is None:
        return bounds
    b = torch.as_tensor(baseline, dtype=torch.float64).reshape(-1, 3)
    return [bound / (1 - b[:, k : k + 1]) for k, bound in enumerate(bounds)]


def assert_scores_close(
    ours,
    ref,
    *,
    width: int = MINILM_WIDTH,
    baseline=None,
    tokens: int = WINDOW,
    what: str = "",
    bound: float | None = None,
) -> None:
    """P, R and F of two fp32 computations agree within the policy (rescaled ones within the rescaled bound).

    ``bound``: the raw P/R bound when it is not ``fp32(width, tokens)`` (``two_devices(...)`` across devices).

    F's bound follows from ``ref``'s own P and R: ``2(P² + R²)/(P + R)²`` times the P/R bound (at most 2 for P,
    R ≥ 0; larger where P + R nears 0, as random-weight models give).
    """
    ours, ref = list(ours), list(ref)
    assert len(ours) == len(ref) == 3, f"{what}expected (P, R, F), got {len(ours)} and {len(ref)} tensors"
    ours = [torch.as_tensor(x, dtype=torch.float64).cpu() for x in ours]
    ref = [torch.as_tensor(x, dtype=torch.float64).cpu() for x in ref]
    raw = fp32(width, tokens) if bound is None else bound
    P, R = ref[0], ref[1]
    if baseline is not None:  # F's conditioning is that of the raw values
        b = torch.as_tensor(baseline, dtype=torch.float64).reshape(-1, 3)
        P, R = P * (1 - b[:, 0:1]) + b[:, 0:1], R * (1 - b[:, 1:2]) + b[:, 1:2]
    bounds = prf_bounds(width, baseline, tokens, raw)
    bounds[2] = bounds[2] / 2 * _f_condition(P, R, raw)
    for name, a, b, limit in zip("PRF", ours, ref, bounds, strict=True):
        assert a.shape == b.shape, f"{what}{name}: shape {tuple(a.shape)} != {tuple(b.shape)}"
        assert torch.isfinite(a).all(), f"{what}{name}: not finite"
        excess = ((a - b).abs() - torch.as_tensor(limit, dtype=torch.float64)).nan_to_num(nan=-math.inf)
        worst = (a - b).abs().max().item() if a.numel() else 0.0
        assert a.numel() == 0 or excess.max().item() <= 0, (
            f"{what}{name}: max |Δ| = {worst:.3g} exceeds the fp32 bound {_describe(limit)}"
        )
    ill = torch.isinf(torch.as_tensor(bounds[2]) * torch.ones_like(ours[2])).reshape(ours[2].shape)
    if ill.any():
        assert baseline is None, (
            f"{what}F: P + R is within rounding of 0 on {int(ill.sum())} pair(s); compare raw values"
        )
        _assert_f_is_its_formula(ours, ill, what)


def _assert_f_is_its_formula(ours, where: torch.Tensor, what: str) -> None:
    """Where F cannot be compared with a reference, it must be ``2PR/(P + R)`` of its own P and R (0 where P + R
    is 0), to the three float32 roundings of the formula."""
    P, R, F = (x[where] for x in ours)
    total = P + R
    expected = torch.where(total == 0, torch.zeros_like(P), 2 * P * R / total)
    delta = (F - expected).abs()
    bound = 3 * U_FP32 * expected.abs()
    assert (delta <= bound).all(), f"{what}F: where P + R ≈ 0, max |F − 2PR/(P + R)| = {delta.max().item():.3g}"


def f_bound(P, R, width: int = MINILM_WIDTH, tokens: int = WINDOW) -> torch.Tensor:
    """The raw bound of F at these (raw) P and R."""
    P, R = torch.as_tensor(P, dtype=torch.float64), torch.as_tensor(R, dtype=torch.float64)
    raw = fp32(width, tokens)
    return raw * _f_condition(P, R, raw)


def _f_condition(P: torch.Tensor, R: torch.Tensor, raw: float) -> torch.Tensor:
    """How much F = 2PR/(P + R) magnifies a change of P or R: 2(P² + R²)/(P + R)², with P + R taken ``2·raw``
    closer to 0 (the worst case inside the bound); unbounded where P + R could be 0."""
    gap = (P + R).abs() - 2 * raw
    return torch.where(gap > 0, 2 * (P**2 + R**2) / gap.clamp_min(1e-300) ** 2, torch.full_like(gap, math.inf))


def assert_close(a, b, bound: float, what: str = "") -> None:
    """Elementwise ``|a − b| ≤ bound`` with the worst difference in the message."""
    a, b = torch.as_tensor(a).double().cpu(), torch.as_tensor(b).double().cpu()
    assert a.shape == b.shape, f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}"
    worst = (a - b).abs().max().item() if a.numel() else 0.0
    assert worst <= bound, f"{what}: max |Δ| = {worst:.3g} > {bound:.3g}"


def assert_reduced_precision_close(fast, exact, what: str = "") -> None:
    """A reduced-precision run against fp32: per pair within ``REDUCED_PAIR``, on average within ``REDUCED_MEAN``."""
    for name, a, b in zip("PRF", fast, exact, strict=True):
        delta = (torch.as_tensor(a).double().cpu() - torch.as_tensor(b).double().cpu()).abs()
        assert delta.max().item() <= REDUCED_PAIR, f"{what}{name}: max |Δ| {delta.max().item():.2e} > {REDUCED_PAIR}"
        assert delta.mean().item() <= REDUCED_MEAN, f"{what}{name}: mean |Δ| {delta.mean().item():.2e} > {REDUCED_MEAN}"


def _describe(bound) -> str:
    if isinstance(bound, torch.Tensor):
        return f"{bound.min().item():.3g}–{bound.max().item():.3g} (per layer)"
    return f"{bound:.3g}"
