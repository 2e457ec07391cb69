"""The encoder on a GPU: bert-score 0.3.13, torchmetrics and fastbertscore (fp32, bf16, fp16) side by side.

    python benchmarks/gpu.py                                  # on a CUDA machine: both shapes, 600/10k/100k pairs
    python benchmarks/gpu.py --models roberta-large --pairs 600,10000
    python benchmarks/gpu.py --device cpu --pairs 50          # dry run of the whole procedure on a CPU

Encoders are random-weight models built from real configs (nothing can be downloaded on the lent GPU machine):
a roberta-large shape (24 layers, width 1024, scored at layer 17) and a deberta-xlarge shape (48 layers, width
1024, layer 40), with a byte-level BPE tokenizer trained on the shared MT data. Every contender is loaded once,
in one process; rounds alternate the contenders. Reported: pairs/s, peak GPU memory, max |ΔF| against bert-score
and against our fp32, and the share of the GPU's dense bf16 peak that the encoder's FLOPs (counted from the real
token counts of the distinct sentences) reach in each contender's time. Writes benchmarks/gpu_results.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "human_judgments_toen.tsv"
#: Dense bf16 peak in FLOP/s by GPU name (vendor data sheets, SXM parts, without sparsity).
BF16_PEAK = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L4": 121e12, "A10": 125e12}
SHAPES = {
    "roberta-large": dict(kind="roberta", layers=24, width=1024, heads=16, layer=17),
    "deberta-xlarge": dict(kind="deberta", layers=48, width=1024, heads=16, layer=40),
}


def _rows() -> list[dict]:
    with DATA.open(encoding="utf-8", newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["candidate"].strip() and r["reference"].strip()]


def workload(n: int) -> tuple[list[str], list[str]]:
    rows = _rows()
    unique = list(dict.fromkeys((r["candidate"], r["reference"]) for r in rows))
    picked = unique[:n] if n <= len(unique) else [unique[i % len(unique)] for i in range(n)]
    return [c for c, _ in picked], [r for _, r in picked]


def build_model(name: str, root: Path) -> Path:
    """A random-weight encoder of ``name``'s shape and a byte-level BPE tokenizer trained on the shared data."""
    import torch
    import transformers
    from tokenizers import ByteLevelBPETokenizer

    shape = SHAPES[name]
    folder = root / name
    if (folder / "config.json").exists():
        return folder
    folder.mkdir(parents=True)
    texts = [r["reference"] for r in _rows()] + [r["candidate"] for r in _rows()]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts, vocab_size=8000, min_frequency=2, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )
    trained = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in trained["merges"]]
    tokenizer_class = transformers.RobertaTokenizer if shape["kind"] == "roberta" else transformers.DebertaTokenizer
    tokenizer = tokenizer_class(vocab=trained["vocab"], merges=merges, add_prefix_space=True, model_max_length=512)
    if len(tokenizer("The cat sat on the mat.")["input_ids"]) < 4:
        raise RuntimeError(f"the trained tokenizer of {name} produced no content tokens")
    # DeBERTa's tokenizer appends its own [CLS]/[SEP]/[PAD]... ids past the trained vocabulary.
    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=shape["width"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        intermediate_size=4 * shape["width"],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    if shape["kind"] == "roberta":
        config = transformers.RobertaConfig(max_position_embeddings=514, type_vocab_size=1, **common)
    else:
        config = transformers.DebertaConfig(
            max_position_embeddings=512,
            relative_attention=True,
            pos_att_type=["c2p", "p2c"],
            max_relative_positions=-1,
            position_biased_input=False,
            type_vocab_size=0,
            **common,
        )
    torch.manual_seed(0)
    transformers.AutoModel.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def encoder_flops(tokenizer, texts: list[str], layers: int, width: int) -> float:
    """Forward FLOPs of ``layers`` layers over each distinct text's real tokens: 24·n·d² for the projections and
    the 4d-wide MLP, 4·n²·d for attention scores and their use."""
    flops = 0.0
    for ids in tokenizer(sorted(set(texts)), truncation=True, max_length=512)["input_ids"]:
        n = len(ids)
        flops += layers * (24 * n * width**2 + 4 * n**2 * width)
    return flops


def contenders(folder: Path, layer: int, device: str) -> dict:
    """Each contender loaded once: name -> callable (cands, refs) -> F on the CPU."""
    import bert_score
    import torch
    from torchmetrics.text.bert import BERTScore

    import fastbertscore as fb

    out = {}
    reference = bert_score.BERTScorer(model_type=str(folder), num_layers=layer, device=device)
    out["bert-score"] = lambda c, r: reference.score(c, r)[2].cpu()
    metric = BERTScore(model_name_or_path=str(folder), num_layers=layer, device=device, max_length=512)

    def torchmetrics_f(c, r):
        metric.reset()
        metric.update(c, r)
        return torch.as_tensor(metric.compute()["f1"]).cpu()

    out["torchmetrics"] = torchmetrics_f
    dtypes = ["float32", "bfloat16", "float16"] if device.startswith("cuda") else ["float32", "auto"]
    for dtype in dtypes:
        scorer = fb.BERTScorer(model_type=str(folder), num_layers=layer, device=device, dtype=dtype)
        out[f"fastbertscore-{dtype}"] = (lambda s: lambda c, r: s.score(c, r)[2].cpu())(scorer)
    return out


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(name: str, sizes: list[int], device: str, rounds: int, root: Path) -> list[dict]:
    import torch
    from transformers import AutoTokenizer

    shape = SHAPES[name]
    folder = build_model(name, root)
    runs = contenders(folder, shape["layer"], device)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    warm_c, warm_r = workload(32)
    for run in runs.values():
        run(warm_c[::-1], warm_r)
    rows = []
    for n in sizes:
        cands, refs = workload(n)
        flops = encoder_flops(tokenizer, cands + refs, shape["layer"], shape["width"])
        times: dict[str, list[float]] = {c: [] for c in runs}
        peaks: dict[str, int] = {}
        scores = {}
        for _ in range(rounds):
            for contender, run in runs.items():
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()
                    torch.cuda.reset_peak_memory_stats()
                _sync(device)
                start = time.perf_counter()
                scores[contender] = run(cands, refs).float()
                _sync(device)
                times[contender].append(time.perf_counter() - start)
                peaks[contender] = torch.cuda.max_memory_allocated() if device.startswith("cuda") else 0
                print(f"{name} {n} {contender}: {times[contender][-1]:.2f} s", flush=True)
        base = statistics.median(times["bert-score"])
        peak = _bf16_peak(device)
        for contender in runs:
            seconds = statistics.median(times[contender])
            rows.append(
                {
                    "model": name,
                    "pairs": n,
                    "contender": contender,
                    "seconds": seconds,
                    "pairs_per_s": n / seconds,
                    "speedup": base / seconds,
                    "peak_gpu_mb": peaks[contender] / 2**20,
                    "dF_bert_score": float((scores[contender] - scores["bert-score"]).abs().max()),
                    "dF_fp32": float((scores[contender] - scores["fastbertscore-float32"]).abs().max()),
                    "peak_share": flops / seconds / peak if peak else None,
                }
            )
    return rows


def _bf16_peak(device: str) -> float | None:
    import torch

    if not device.startswith("cuda"):
        return None
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in BF16_PEAK.items() if k in name), None)


def table(rows: list[dict], device: str, rounds: int) -> str:
    import torch

    where = (
        torch.cuda.get_device_name(device)
        if device.startswith("cuda")
        else f"CPU ({platform.processor() or platform.machine()})"
    )
    head = (
        f"Measured on {where}, torch {torch.__version__}, median of {rounds} alternating round(s), "
        f"{time.strftime('%Y-%m-%d')}. Random-weight encoders of real shapes; real MT pairs from ../shared/data. "
        "`share`: encoder FLOPs (real tokens of the distinct sentences) per second over the GPU's dense bf16 peak.\n\n"
        "| model | pairs | contender | s | pairs/s | × bert-score | peak GPU MB | max ΔF vs bert-score | max ΔF vs fp32 | share |\n"
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    fmt = lambda v, f: "–" if v is None else format(v, f)
    return head + "".join(
        f"| {r['model']} | {r['pairs']} | {r['contender']} | {r['seconds']:.2f} | {r['pairs_per_s']:.0f} | "
        f"{r['speedup']:.2f} | {r['peak_gpu_mb']:.0f} | {r['dF_bert_score']:.1e} | {r['dF_fp32']:.1e} | "
        f"{fmt(r['peak_share'], '.1%')} |\n"
        for r in rows
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", default="roberta-large,deberta-xlarge")
    parser.add_argument("--pairs", default="600,10000,100000")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--root", type=Path, help="where the built models go (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=HERE / "gpu_results.md")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"benchmark data not found: {DATA}", file=sys.stderr)
        return 2
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    root = args.root or Path(tempfile.mkdtemp(prefix="gpu-bench-"))
    sizes = [int(x) for x in args.pairs.split(",")]
    rows = []
    for name in args.models.split(","):
        rows += measure(name, sizes, args.device, args.rounds, root)
        args.out.write_text(table(rows, args.device, args.rounds))
    print(table(rows, args.device, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
